"""The context around a table and the markup inside its cells, read as a reader of the page reads them.

Each case is a small table written for this test with the shape of a real one: superscript
and strike-through markup, malformed inline HTML, bold bullets and bold paragraphs near a
legend, run words in sentences about something else, and paragraphs between two tables.
"""

from __future__ import annotations

import pytest

from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks.drafts.bundle import Header, review_md
from hfmigrate_checks.drafts.decide import ModelDecision, Proposal
from hfmigrate_checks.source import ledger
from hfmigrate_checks.source.contract import Contract
from tests.support.ledgers import by, read


# ---------------------------------------------------------------- markup inside a cell


@pytest.mark.parametrize(
    "table",
    [
        "| Model | MMLU |\n|---|---|\n| <sup>Wren-7B</sup> | <sup>61.2</sup> |\n",
        "<table>\n<tr><th>Model</th><th>MMLU</th></tr>\n<tr><td><sup>Wren-7B</sup></td><td><sup>61.2</sup></td></tr>\n"
        "</table>\n",
    ],
    ids=["gfm", "html"],
)
def test_superscript_text_is_not_struck_through(tmp_path, table):
    [row] = read(tmp_path, table)
    assert (row.source_model, row.status, row.value) == ("Wren-7B", "ok", 61.2)
    assert "struck" not in row.qualifiers


@pytest.mark.parametrize("value", ["<s>61.2</s>", "<del>61.2</del>", "<strike>61.2</strike>", "~~61.2~~"])
def test_only_strike_tags_and_tildes_strike_a_value_through(tmp_path, value):
    [row] = read(tmp_path, f"| Model | MMLU |\n|---|---|\n| Wren-7B | {value} |\n")
    assert row.status == "needs_review" and "struck through in source" in row.qualifiers


@pytest.mark.parametrize("value", ["<u>56.9<u/>", "<u>56.9</u>", '<span style="color:red">56.9</span>'])
def test_inline_html_in_a_value_reads_the_same_in_the_ledger_and_at_draft_time(tmp_path, value):
    [row] = read(tmp_path, f"| Model | MMLU |\n|---|---|\n| Wren-7B | {value} |\n")
    assert (row.source_value, row.status, row.value) == (value, "ok", 56.9)
    out = tmp_path / "ledger.csv"
    ledger.write(out, [row])
    [back] = ledger.load(out)
    assert (back.status, back.value) == ("ok", 56.9)  # the draft step reads this value


def test_a_struck_value_in_a_csv_stays_out_of_the_drafts(tmp_path):
    [row] = read(tmp_path, "Model,MMLU\nWren-7B,<del>56.9</del>\n", fmt="csv", name="board.csv")
    assert (row.status, row.value) == ("needs_review", None)


# ---------------------------------------------------------------- legends


BULLETS = """## Results

| Model | MMLU |
|---|---|
| Wren-7B* | 61.2 |
| Kite-3B | 50.0 |

\\* with a 32k-token context window and tools, measured by the authors on the
full test split.

* **Speed**: the models run on one GPU.
* **Licence**: Apache 2.0.

**Limitations:** the numbers may not transfer to other domains.
"""


def test_bold_bullets_and_a_bold_paragraph_are_not_legends(tmp_path):
    wren, kite = read(tmp_path, BULLETS)
    assert wren.status == "ok" and "ambiguous" not in wren.qualifiers
    assert wren.source_variant == (
        "with a 32k-token context window and tools, measured by the authors on the full test split."
    )
    assert "Speed" not in wren.qualifiers and "Limitations" not in wren.qualifiers
    assert (kite.status, kite.source_variant) == ("ok", "")


IN_A_SENTENCE = (
    "| Model | MT-Bench |\n|---|---|\n| Wren-7B† | 7.1 |\n\nScores: † denotes judging by GPT-3.5 with tools. "
)


def test_a_legend_in_a_sentence_is_read_to_the_end_of_the_sentence(tmp_path):
    [row] = read(tmp_path, IN_A_SENTENCE + "Other rows are ours.\n")
    assert row.source_variant == "judging by GPT-3.5 with tools"


# ---------------------------------------------------------------- prose around the table


def test_a_run_word_in_a_sentence_about_something_else_is_not_a_note(tmp_path):
    [row] = read(
        tmp_path,
        "| Model | MMLU |\n|---|---|\n| Wren-7B | 61.2 |\n\nOur agent framework and its prompts are open source.\n",
    )
    assert (row.status, row.source_variant, row.qualifiers) == ("ok", "", "")


def test_a_sentence_about_the_results_that_names_a_run_qualifies_the_whole_table(tmp_path):
    [row] = read(
        tmp_path,
        "| Model | MMLU |\n|---|---|\n| Wren-7B | 61.2 |\n\nAll results use greedy decoding.\n",
    )
    assert row.source_variant == "All results use greedy decoding."


TWO_TABLES = """## Results

| Model | MMLU |
|---|---|
| Wren-7B | 61.2 |

The results below are with a code interpreter:

| Model | MMLU |
|---|---|
| Kite-3B | 70.4 |
"""


def test_the_paragraph_leading_into_the_next_table_is_that_table_s_not_the_previous_one_s(tmp_path):
    [first] = read(tmp_path, TWO_TABLES, heading="Results", table=1)
    assert (first.status, first.source_variant, first.qualifiers) == ("ok", "", "")
    [second] = read(tmp_path, TWO_TABLES, heading="Results", table=2)
    assert second.source_variant == "The results below are with a code interpreter:"


def test_a_note_paragraph_naming_a_row_in_a_later_sentence_is_kept_whole_for_that_row(tmp_path):
    rows = read(
        tmp_path,
        "| Model | RefCOCO |\n|---|---|\n| Wren-7B | 61.2 |\n| Kite-3B | 70.4 |\n\n"
        "Note: masks come from a separate segmenter at test time. Kite-3B is supported by SAM.\n",
    )
    wren, kite = rows
    assert "Note: masks come from a separate segmenter at test time. Kite-3B is supported by SAM." in (
        kite.source_variant
    )
    assert (wren.source_variant, wren.qualifiers) == ("", "")


# ---------------------------------------------------------------- ignored, dropped and uncertainty columns

SE_BOARD = "Model,Score,stderr,Avg,Date\nWren-7B,41.5,0.8,55.9,2026-01-02\nKite-3B,39.0,1.1,50.1,2026-01-05\n"


def test_every_ignored_column_reaches_the_qualifiers_numbers_included(tmp_path):
    wren, _kite = read(tmp_path, SE_BOARD, fmt="csv", name="board.csv", ignore_columns=["Avg", "Date"])
    assert (wren.source_task, wren.status) == ("Score", "ok")
    assert "Avg: 55.9" in wren.qualifiers and "Date: 2026-01-02" in wren.qualifiers


def test_a_dropped_column_is_left_out_with_the_maintainer_s_statement(tmp_path):
    wren, _kite = read(tmp_path, SE_BOARD, fmt="csv", name="board.csv", ignore_columns=["Date"], drop_columns=["Avg"])
    assert [wren.source_task, "Avg" not in wren.qualifiers.split(": ")[0]] == ["Score", True]
    assert "55.9" not in wren.qualifiers
    assert "column 'Avg' dropped by the maintainer, stated not to change what was run" in wren.qualifiers


def test_an_uncertainty_column_found_by_name_qualifies_its_score_and_reaches_the_notes(tmp_path):
    rows = read(tmp_path, SE_BOARD, fmt="csv", name="board.csv", ignore_columns=["Avg", "Date", "stderr"])
    assert [r.source_task for r in rows] == ["Score", "Score"]  # the stderr column is no score of its own
    wren = rows[0]
    assert "uncertainty in column 'stderr': ± 0.8" in wren.qualifiers and wren.status == "ok"
    assert "stderr: 0.8" not in wren.qualifiers  # ignored too, it is said once, as the uncertainty
    out = tmp_path / "ledger.csv"
    ledger.write(out, rows)
    [back, _] = ledger.load(out)
    entry = Proposal("main", back).entry(_contract())
    assert str(entry["value"]) == "41.5" and entry["notes"] == "uncertainty in column 'stderr': ± 0.8"


def test_uncertainty_columns_pair_by_the_rest_of_their_name_or_by_the_option(tmp_path):
    board = 'Model,acc,acc_stderr,f1,f1 (95% CI),spread\nWren-7B,41.5,0.8,60.1,"(-1.88, +1.97)",3.3\n'
    rows = by(read(tmp_path, board, fmt="csv", name="board.csv", uncertainty_columns={"f1": "spread"}))
    assert set(rows) == {("Wren-7B", "acc"), ("Wren-7B", "f1")}
    assert "uncertainty in column 'acc_stderr': ± 0.8" in rows["Wren-7B", "acc"].qualifiers
    f1 = rows["Wren-7B", "f1"].qualifiers
    assert "uncertainty in column 'f1 (95% CI)': (-1.88, +1.97)" in f1 and "column 'spread': ± 3.3" in f1


def test_an_uncertainty_column_that_pairs_with_nothing_is_refused_naming_the_options(tmp_path):
    with pytest.raises(InputError, match=r"column 'stderr' looks like an uncertainty .* --uncertainty-column"):
        read(tmp_path, "Model,stderr,Score\nWren-7B,0.8,41.5\n", fmt="csv", name="board.csv")


def test_the_ledger_command_prints_the_pairing_and_the_bundle_lists_dropped_columns(tmp_path):
    (tmp_path / "board.csv").write_text(SE_BOARD)
    out = tmp_path / "ledger.csv"
    args = ["hf", "ledger", str(tmp_path / "board.csv"), "--format", "csv", "--out", str(out)]
    result = run_cli([*args, "--ignore-column", "Date", "--drop-column", "Avg"])
    assert result.exit_code == 0, result.stderr
    assert "uncertainty column paired with its score column: 'stderr' -> 'Score'" in result.stdout
    bad = run_cli([*args, "--uncertainty-column", "Score"])
    assert bad.exit_code == 2 and "expected SCORE=COLUMN" in bad.stderr and "Traceback" not in bad.stderr
    (tmp_path / "lone.csv").write_text("Model,stderr,Score\nWren-7B,0.8,41.5\n")
    lone = run_cli(["hf", "ledger", str(tmp_path / "lone.csv"), "--format", "csv", "--out", str(out)])
    assert lone.exit_code == 2 and "lone.csv: column 'stderr' looks like an uncertainty" in lone.stderr
    text = review_md(
        _contract(),
        [ModelDecision("Wren-7B", tuple(ledger.load(out)[:1]), None, None, "needs_review", "not resolved")],
        Header("me", "now", "a" * 40),
    )
    assert "dropped by the maintainer (`--drop-column`), stated not to change what was run: 'Avg'." in text


def _contract():
    where = {"benchmark_id": "org/b", "dataset_sha": "a" * 40, "eval_yaml_url": "https://x/eval.yaml"}
    claim = {"metric": "acc", "direction": "higher_is_better", "unit": "percent", "task_ids": ("main",)}
    mapping = {"columns": {"Score": "main"}, "ignore_columns": ("Date",)}
    return Contract(official=True, name="B", evaluation_framework="", **where, **claim, **mapping)


# ---------------------------------------------------------------- sibling tables and collapsed sections

COLLAPSED = """## Results

<details><summary>Five-shot</summary>

| Model | MMLU | ARC |
|---|---|---|
| Wren-7B | 61.2 | 50.1 |

</details>

<details>
<summary><b>Zero-shot</b></summary>

<table><tr><th>Model</th><th>MMLU</th><th>ARC</th></tr>
<tr><td>Wren-7B</td><td>55.0</td><td>47.3</td></tr></table>
</details>
"""


@pytest.mark.parametrize("number, value, variant", [(1, "61.2", "Five-shot"), (2, "55.0", "Zero-shot")])
def test_sibling_tables_in_collapsed_sections_carry_their_summary(tmp_path, number, value, variant):
    mmlu = by(read(tmp_path, COLLAPSED, heading="Results", table=number))["Wren-7B", "MMLU"]
    assert (mmlu.source_value, mmlu.status, mmlu.source_variant) == (value, "ok", variant)
    assert f"[collapsed section] {variant}" in mmlu.qualifiers


HEADINGS = """# Results

## Base models

| Model | MMLU |
|---|---|
| Wren-7B | 61.2 |

## {second}

| Model | MMLU |
|---|---|
| Wren-7B | 55.0 |
"""


def test_siblings_told_apart_by_a_run_heading_carry_it_as_their_variant(tmp_path):
    [row] = read(tmp_path, HEADINGS.format(second="Zero-shot"), heading="Zero-shot")
    assert (row.status, row.source_variant) == ("ok", "Zero-shot")
    [row] = read(tmp_path, HEADINGS.format(second="Zero-shot"), heading="Base models")
    assert row.status == "needs_review"
    assert "only the heading 'Base models' tells this one apart" in row.qualifiers


def test_siblings_nothing_tells_apart_need_review_and_stay_so_in_the_ledger(tmp_path):
    text = HEADINGS.replace("## {second}\n\n", "")
    rows = [read(tmp_path, text, heading="Base models", table=n)[0] for n in (1, 2)]
    assert {r.status for r in rows} == {"needs_review"}
    assert "nothing around the two tables tells them apart" in rows[0].qualifiers
    out = tmp_path / "ledger.csv"
    ledger.write(out, rows)
    assert {r.status for r in ledger.load(out)} == {"needs_review"}


def test_a_table_with_no_sibling_keeps_its_summary_as_commentary(tmp_path):
    [row] = read(tmp_path, "<details><summary>Click to expand</summary>\n\n| Model | MMLU |\n|---|---|\n| A | 1.0 |\n")
    assert (row.status, row.source_variant) == ("ok", "")
    assert "[collapsed section] Click to expand" in row.qualifiers


def test_an_html_caption_qualifies_every_score_of_its_table(tmp_path):
    [row] = read(
        tmp_path,
        "<table>\n<caption>Results with <b>chain-of-thought</b> prompting</caption>\n"
        "<tr><th>Model</th><th>GSM8K</th></tr>\n<tr><td>Wren-7B</td><td>61.2</td></tr>\n</table>\n",
    )
    assert (row.status, row.source_variant) == ("ok", "Results with chain-of-thought prompting")
    assert "[caption] Results with chain-of-thought prompting" in row.qualifiers


def test_notes_past_the_bound_are_not_copied_into_every_row_and_the_rows_need_review(tmp_path):
    rows = "".join(f"| m-{n} | {n} |\n" for n in range(300))
    notes = " ".join(f"All results of run {n} use greedy decoding." for n in range(300))
    found = read(tmp_path, f"| Model | A |\n|---|---|\n{rows}\n{notes}\n")
    assert len(found) == 300 and {r.status for r in found} == {"needs_review"}
    assert all(r.qualifiers.count("[note under the table") == 12 for r in found)  # the first twelve only
    assert "are more than 12 sentences about all its scores" in found[0].qualifiers


def test_only_the_scores_a_sibling_also_prints_need_review(tmp_path):
    text = "## Math\n\n| Model | GSM8K | Avg |\n|---|---|---|\n| Wren-7B | 61.2 | 55.0 |\n\n"
    text += "## Code\n\n| Model | HumanEval | Avg |\n|---|---|---|\n| Wren-7B | 40.1 | 38.0 |\n"
    rows = by(read(tmp_path, text, heading="Math"))
    assert rows["Wren-7B", "GSM8K"].status == "ok"
    assert rows["Wren-7B", "Avg"].status == "needs_review"
    assert "only the heading 'Math' tells this one apart" in rows["Wren-7B", "Avg"].qualifiers
