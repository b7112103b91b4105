"""Every table shape a model card or README uses, and every place it puts a qualifier.

The fixtures are small tables written for these tests; each has the shape of a real one
(see tests/hf/test_hf_real_tables.py for the scored suite).
"""

from __future__ import annotations

import attrs
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks.drafts.decide import Proposal
from hfmigrate_checks.source import ledger
from hfmigrate_checks.source.contract import Contract
from hfmigrate_checks.source.htmltable import MAX_SPAN
from tests.support.ledgers import by, read


# ---------------------------------------------------------------- models as columns

CARD = """## Instruction-tuned models

| Benchmark | Llama 3.2 1B bf16 | Llama 3.2 3B bf16 | Qwen2.5 7B Instruct |
|---|---|---|---|
| MMLU (5-shot) | 49.3 | 63.4 | 74.2 |
| GSM8K (CoT) | 44.4 | 77.7 | 91.6 |
| MATH (maj@32) | 30.6 | 48.0 | - |
"""


def test_a_transposed_table_is_refused_with_the_reason_and_the_option(tmp_path):
    (tmp_path / "card.md").write_text(CARD)
    result = run_cli(
        ["hf", "ledger", str(tmp_path / "card.md"), "--format", "markdown", "--out", str(tmp_path / "l.csv")]
    )
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert "the header names models ('Llama 3.2 1B bf16'" in result.stderr
    assert "the column 'Benchmark' names benchmarks ('MMLU (5-shot)'" in result.stderr
    assert "pass --models-as-columns" in result.stderr and "--models-as-rows" in result.stderr
    assert not (tmp_path / "l.csv").exists()


def test_models_as_columns_attributes_each_score_to_its_column_and_keeps_label_details(tmp_path):
    rows = read(tmp_path, CARD, models_as_columns=True)
    assert len(rows) == 9 and {r.source_model for r in rows} == {
        "Llama 3.2 1B bf16",
        "Llama 3.2 3B bf16",
        "Qwen2.5 7B Instruct",
    }
    cot = by(rows)["Llama 3.2 3B bf16", "GSM8K (CoT)"]
    assert (cot.source_value, cot.status, cot.source_variant) == ("77.7", "ok", "CoT")
    assert "run detail (CoT) printed in the label" in cot.qualifiers
    assert cot.source_locator == "README.md:L6 (table under 'Instruction-tuned models') column 'Llama 3.2 3B bf16'"
    assert by(rows)["Llama 3.2 1B bf16", "MATH (maj@32)"].source_variant == "maj@32"
    assert by(rows)["Qwen2.5 7B Instruct", "MATH (maj@32)"].status == "needs_review"


def test_models_as_rows_reads_the_table_as_printed_and_the_option_excludes_row_options(tmp_path):
    rows = read(tmp_path, CARD, models_as_columns=False)
    assert rows[0].source_model == "MMLU" and rows[0].source_task == "Llama 3.2 1B bf16"
    with pytest.raises(InputError, match="--models-as-columns reads every column but the task column"):
        read(tmp_path, CARD, models_as_columns=True, variant_column="Llama 3.2 1B bf16")


def test_a_card_whose_benchmarks_follow_a_category_column_names_that_column(tmp_path):
    card = (
        "| Category | Benchmark | Metric | Lark 1B | Lark 3B |\n|---|---|---|---|---|\n"
        "| General | MMLU | acc | 31.0 | 57.5 |\n| | ARC-Challenge | acc | 30.1 | 68.8 |\n"
        "| Math | GSM8K (CoT) | em | 40.0 | 70.1 |\n"
    )
    with pytest.raises(
        InputError,
        match=r"the column 'Benchmark' names benchmarks .* pass --models-as-columns "
        r"--task-column 'Benchmark'",
    ):
        read(tmp_path, card)
    rows = read(tmp_path, card, models_as_columns=True, task_column="Benchmark", ignore_columns=["Category", "Metric"])
    assert by(rows)["Lark 3B", "ARC-Challenge"].source_value == "68.8"


def test_a_transposed_csv_is_refused_too(tmp_path):
    with pytest.raises(
        InputError, match=r"b.csv: the header names models \('Lark 1B', 'Lark 3B'\) and the column 'Benchmark'"
    ):
        read(tmp_path, "Benchmark,Lark 1B,Lark 3B\nMMLU,31.0,57.5\nGSM8K,40.0,70.1\n", fmt="csv", name="b.csv")


def test_a_usual_leaderboard_is_not_taken_for_a_transposed_one(tmp_path):
    rows = read(
        tmp_path,
        "| Model | MMLU | GSM8K |\n|---|---|---|\n| Llama 3 8B | 66.6 | 79.6 |\n| Qwen2.5 7B | 74.2 | 91.6 |\n",
    )
    assert [r.source_model for r in rows] == ["Llama 3 8B", "Llama 3 8B", "Qwen2.5 7B", "Qwen2.5 7B"]


# ---------------------------------------------------------------- numbered notes and legends


@pytest.mark.parametrize(
    "label, note",
    [
        ("Moatless[1]", "[1] Moatless v0.0.3, max_iterations=30, no retries"),
        ("Moatless<sup>[1]</sup>", "[1] Moatless v0.0.3, max_iterations=30, no retries"),
        ("Moatless<sup>1</sup>", "<sup>1</sup> Moatless v0.0.3, max_iterations=30, no retries"),
        ("Moatless¹", "¹ Moatless v0.0.3, max_iterations=30, no retries"),
    ],
)
def test_numbered_notes_reach_the_row_and_its_variant(tmp_path, label, note):
    [row] = read(tmp_path, f"## Board\n\n| Agent | Resolved |\n|---|---|\n| {label} | 38.3 |\n\n{note}\n")
    assert (row.source_model, row.status) == ("Moatless", "ok")
    assert row.qualifiers.startswith("[1] Moatless v0.0.3, max_iterations=30, no retries")
    assert row.source_variant == "Moatless v0.0.3, max_iterations=30, no retries"


def test_a_superscript_list_and_a_numbered_list_of_notes(tmp_path):
    [row] = read(
        tmp_path,
        "| Agent | Resolved |\n|---|---|\n| Kite<sup>1, 2</sup> | 38.3 |\n\n"
        "1. with a 30-step budget\n2. reported by the authors\n",
    )
    assert (row.source_model, row.status, row.source_variant) == ("Kite", "ok", "with a 30-step budget")
    assert "[2] reported by the authors" in row.qualifiers


def test_a_note_paragraph_over_several_lines_is_read_whole(tmp_path):
    [row] = read(
        tmp_path,
        "| Agent | Resolved |\n|---|---|\n| Moatless[1] | 38.3 |\n\n[1] Moatless v0.0.3,\n"
        "  max_iterations=30, no retries\n[2] another note\n\nUnrelated paragraph.\n",
    )
    assert row.source_variant == "Moatless v0.0.3, max_iterations=30, no retries"


def test_a_numbered_marker_without_its_note_needs_review(tmp_path):
    [row] = read(tmp_path, "| Agent | Resolved |\n|---|---|\n| Moatless[2] | 38.3 |\n\n[1] another note\n")
    assert row.status == "needs_review" and "marker [2] has no footnote definition or legend line" in row.qualifiers


def test_escaped_markdown_legends_are_read(tmp_path):
    rows = read(
        tmp_path,
        "## Board\n\n| Model | Score |\n|---|---|\n| A-1\\*\\* | 60.0 |\n| B-2\\* | 61.0 |\n\n"
        "\\*\\*for comparison purposes only\n\n\\* 5-shot\n",
    )
    a, b = rows
    assert (a.source_model, a.status) == ("A-1", "needs_review")  # an unknown legend, read but judged unknown
    assert "** for comparison purposes only" in a.qualifiers
    assert (b.source_model, b.status, b.source_variant) == ("B-2", "ok", "5-shot")


LEGEND_SCOPE = """# Results

\\* zero-shot, greedy decoding

## Math

| Model | GSM8K |
|---|---|
| A-1* | 50.0 |

## Code

| Model | HumanEval |
|---|---|
| B-2* | 40.0 |

\\* with a code interpreter
"""


def test_a_legend_comes_from_the_table_s_section_or_the_section_above_never_from_another(tmp_path):
    [math] = read(tmp_path, LEGEND_SCOPE, heading="Math")
    assert math.status == "ok" and math.source_variant == "zero-shot, greedy decoding"
    [code] = read(tmp_path, LEGEND_SCOPE, heading="Code")
    assert code.source_variant == "with a code interpreter"
    alone = LEGEND_SCOPE.replace("\\* zero-shot, greedy decoding\n", "")
    [math] = read(tmp_path, alone, heading="Math")  # the Code section's legend is not borrowed
    assert math.status == "needs_review" and "* (no footnote definition or legend found)" in math.qualifiers


def test_two_legends_for_one_symbol_make_the_row_need_review_naming_both(tmp_path):
    [row] = read(
        tmp_path,
        "## Board\n\n† with tools\n\n| Model | Score |\n|---|---|\n| A-1† | 60.0 |\n\n† majority vote over 8 samples\n",
    )
    assert row.status == "needs_review"
    assert "'with tools' and 'majority vote over 8 samples'" in row.qualifiers
    out = tmp_path / "ledger.csv"
    ledger.write(out, [row])
    assert ledger.load(out)[0].status == "needs_review"


# ---------------------------------------------------------------- labels, prose, uncertainty


def test_run_details_in_a_label_leave_the_label_and_reach_the_variant(tmp_path):
    rows = read(
        tmp_path,
        "| Model | MMLU |\n|---|---|\n| [Chinchilla](https://example.org/c) (70B, few-shot) | 67.5 |\n"
        "| Acme-GPT (API) | 80.0 |\n| Gopher (280B) | 60.0 |\n",
    )
    chin, api, gopher = rows
    assert (chin.source_model, chin.source_variant, chin.status) == ("Chinchilla", "70B, few-shot", "ok")
    assert "run detail (70B, few-shot) printed in the label" in chin.qualifiers
    assert chin.source_link == "https://example.org/c"
    assert (api.source_model, api.source_variant) == ("Acme-GPT (API)", "")  # not a run detail
    assert (gopher.source_model, gopher.source_variant) == ("Gopher (280B)", "")


def test_a_sentence_under_the_table_qualifies_the_columns_and_rows_it_names(tmp_path):
    rows = read(
        tmp_path,
        "## Search\n\n| Model | SimpleQA | HotpotQA | MMLU |\n|---|---|---|---|\n"
        "| Alpha-7B | 10.1 | 20.2 | 30.3 |\n| Beta-9B | 11.0 | 22.0 | 33.0 |\n\n"
        "SimpleQA and HotpotQA were run with search and click tools. Beta-9B was trained on "
        "a private mix.\n",
    )
    table = by(rows)
    simple = table["Alpha-7B", "SimpleQA"]
    assert (
        simple.status == "ok" and simple.source_variant == "SimpleQA and HotpotQA were run with search and click tools."
    )
    assert "[note under the table 1] SimpleQA and HotpotQA" in simple.qualifiers
    assert table["Alpha-7B", "MMLU"].qualifiers == "" and table["Alpha-7B", "MMLU"].status == "ok"
    beta = table["Beta-9B", "MMLU"]  # a sentence that names no run is commentary: kept, not a reason to stop
    assert (beta.status, beta.source_variant) == ("ok", "")
    assert "[note under the table 2] Beta-9B was trained on a private mix." in beta.qualifiers


def test_a_sentence_naming_benchmark_rows_of_a_model_card_qualifies_those_rows(tmp_path):
    rows = read(
        tmp_path,
        "| Category | Benchmark | Lark 1B | Lark 3B |\n|---|---|---|---|\n"
        "| Knowledge | SimpleQA | 10.1 | 20.2 |\n| | MMLU | 30.3 | 40.4 |\n\n"
        "SimpleQA was run with search and click tools.\n",
        models_as_columns=True,
        task_column="Benchmark",
        ignore_columns=["Category"],
    )
    table = by(rows)
    assert table["Lark 3B", "SimpleQA"].source_variant == "SimpleQA was run with search and click tools."
    assert table["Lark 3B", "MMLU"].source_variant == ""


def test_a_sentence_naming_no_column_that_says_how_the_run_was_done_qualifies_the_whole_table(tmp_path):
    rows = read(
        tmp_path,
        '## Chat\n\n<div align="center">\n\n| Model | MMLU |\n|---|---|\n| Alpha-7B | 70.1 |\n\n</div>\n\n'
        "> [!NOTE]\n> Best results are in bold. Small benchmarks are run at several temperature "
        "settings.\n",
    )
    [row] = rows
    assert row.source_variant == "Small benchmarks are run at several temperature settings."
    assert "Best results" not in row.qualifiers


def test_uncertainty_is_kept_and_a_footnote_on_the_variant_cell_is_not_lost(tmp_path):
    rows = read(
        tmp_path,
        "| Agent | LLM | Score |\n|---|---|---|\n| Kestrel | GPT-4o[^2] | 41.5 ± 0.8 |\n\n"
        "[^2]: with light assistance from an ensemble of models\n",
        variant_column="LLM",
    )
    [row] = rows
    assert (row.status, row.value, row.cell.uncertainty) == ("ok", 41.5, "0.8")
    assert row.source_variant == "GPT-4o; with light assistance from an ensemble of models"
    contract = Contract(
        benchmark_id="org/b",
        dataset_sha="a" * 40,
        eval_yaml_url="https://x/eval.yaml",
        official=True,
        name="B",
        evaluation_framework="",
        task_ids=("main",),
        metric="acc",
        direction="higher_is_better",
        unit="percent",
        columns={"Score": "main"},
    )
    entry = Proposal("main", row).entry(contract)
    assert entry["notes"] == ("GPT-4o; with light assistance from an ensemble of models; printed as 41.5 ± 0.8")


# ---------------------------------------------------------------- rows that read as one


def test_rows_differing_only_in_another_column_stay_distinct(tmp_path):
    rows = read(
        tmp_path,
        "| Agent | Budget | Score |\n|---|---|---|\n| Kestrel | 24 h | 41.5 |\n| Kestrel | 12 h | 38.0 |\n",
        ignore_columns=["Budget"],
    )
    assert [(r.source_variant, r.source_value, r.status) for r in rows] == [
        ("Budget: 24 h", "41.5", "ok"),
        ("Budget: 12 h", "38.0", "ok"),
    ]
    twins = read(tmp_path, "| Agent | Score |\n|---|---|\n| Kestrel | 41.5 |\n| Kestrel | 38.0 |\n")
    assert {r.status for r in twins} == {"needs_review"}
    assert "'Kestrel' is printed 2 times for 'Score' (README.md:L3 (table under '')" in twins[0].qualifiers


# ---------------------------------------------------------------- CSV and dataset files have no legend


def test_a_marker_in_a_csv_or_dataset_file_always_needs_review(tmp_path):
    rows = read(tmp_path, "Model,Score,MMLU†\nSable-22B†,80.1,70.0\nWren-3B,60.0,50.0\n", fmt="csv", name="b.csv")
    table = by(rows)
    sable = table["Sable-22B", "Score"]
    assert sable.status == "needs_review" and "marker † has no footnote definition" in sable.qualifiers
    assert table["Wren-3B", "Score"].status == "ok"
    assert table["Wren-3B", "MMLU†"].status == "needs_review"  # the header's marker qualifies its column

    out = tmp_path / "ledger.csv"  # a hand edit of the status cannot clear the label's marker
    ledger.write(out, [attrs.evolve(sable, status="ok")])
    assert ledger.load(out)[0].status == "needs_review"
    pq.write_table(pa.table({"model": ["Sable-22B[1]", "Wren-3B"], "score": [80.1, 60.0]}), tmp_path / "b.parquet")
    parquet = ledger.import_source(tmp_path / "b.parquet", "parquet")
    assert [(r.source_model, r.status) for r in parquet] == [("Sable-22B", "needs_review"), ("Wren-3B", "ok")]


# ---------------------------------------------------------------- HTML tables and two-level headers

HTML = """## Function calling

<table>
  <thead>
    <tr><th rowspan="2">Benchmark</th><th colspan="3">Model A</th><th colspan="3">Model B&dagger;</th></tr>
    <tr><th>func</th><th>param</th><th>value</th><th>func</th><th>param</th><th>value</th></tr>
  </thead>
  <tbody>
    <tr><td colspan="7"><b>Single turn</b></td></tr>
    <tr><td>BFCL</td><td>90.1</td><td><b>80.2</b></td><td>70.3</td><td>60.1</td><td>50.2</td><td>40.3</td></tr>

    <tr><td>Nexus</td><td>1.5</td><td>2.5</td><td>3.5</td><td>4.5</td><td>5.5<sup>*</sup></td><td>-</td></tr>
  </tbody>
</table>

&dagger; uses a tool-calling scaffold
"""


def test_an_html_table_with_spans_is_read_like_github_renders_it(tmp_path):
    rows = read(tmp_path, HTML, models_as_columns=True)
    assert len(rows) == 12
    table = by(rows)
    param = table["Model A", "BFCL / param"]
    assert (param.source_value, param.value, param.status) == ("**80.2**", 80.2, "ok")
    assert (
        param.source_locator == "README.md:L10 (table under 'Function calling', group 'Single turn') column "
        "'Model A / param'"
    )
    b = table["Model B", "BFCL / value"]
    assert (b.source_value, b.source_variant, b.status) == ("40.3", "uses a tool-calling scaffold", "ok")
    starred = table["Model B", "Nexus / param"]
    assert starred.status == "needs_review" and "marker * has no footnote definition" in starred.qualifiers
    assert table["Model B", "Nexus / value"].status == "needs_review"


#: HTML with its </table> missing
UNCLOSED = HTML.replace("</table>", "")
#: HTML with a header cell spanning 5,000 columns
WIDE = HTML.replace('<th colspan="3">Model A', '<th colspan="5000">Model A')


@pytest.mark.parametrize(
    "broken, message",
    [
        (UNCLOSED, "the HTML <table> on line 3 is never closed"),
        (WIDE, "the HTML <table> on line 3: a cell on line 5 has a colspan over 1,000, the limit"),
    ],
)
def test_an_html_table_that_cannot_be_attributed_is_refused_naming_its_line(tmp_path, broken, message):
    with pytest.raises(InputError, match=message):
        read(tmp_path, broken, models_as_columns=True)


SUBHEADER = """## Tool use

| Benchmark | | Model A | | | Model B | |
|---|---|---|---|---|---|---|
| | func | param | value | func | param | value |
| BFCL | 90.1 | 80.2 | 70.3 | 60.1 | 50.2 | 40.3 |
"""

#: SUBHEADER with a setting in the first header row, so the columns 2-4 belong to no model clearly
UNCLEAR = SUBHEADER.replace("| Benchmark | | Model A |", "| Benchmark | A | Model A |")


def test_the_markdown_sub_header_convention_groups_columns_under_their_model(tmp_path):
    rows = read(tmp_path, SUBHEADER, models_as_columns=True)
    assert [(r.source_model, r.source_task, r.source_value) for r in rows] == [
        ("Model A", "BFCL / func", "90.1"),
        ("Model A", "BFCL / param", "80.2"),
        ("Model A", "BFCL / value", "70.3"),
        ("Model B", "BFCL / func", "60.1"),
        ("Model B", "BFCL / param", "50.2"),
        ("Model B", "BFCL / value", "40.3"),
    ]
    with pytest.raises(
        InputError,
        match=r"the two-level header on line 3: the columns 2-4 .* have group names "
        r"'A', 'Model A'; expected exactly one per group",
    ):
        read(tmp_path, UNCLEAR, models_as_columns=True)


def test_a_two_level_header_with_models_as_rows_names_columns_group_slash_sub(tmp_path):
    rows = read(
        tmp_path,
        "| Model | MMLU | | GSM8K | |\n|---|---|---|---|---|\n| | 0-shot | 5-shot | 0-shot | 5-shot |\n"
        "| Alpha-7B | 60.1 | 62.0 | 40.0 | 45.5 |\n",
    )
    assert [(r.source_model, r.source_task, r.source_variant) for r in rows] == [
        ("Alpha-7B", "MMLU / 0-shot", "0-shot"),
        ("Alpha-7B", "MMLU / 5-shot", "5-shot"),
        ("Alpha-7B", "GSM8K / 0-shot", "0-shot"),
        ("Alpha-7B", "GSM8K / 5-shot", "5-shot"),
    ]


def test_tables_set_side_by_side_in_a_layout_table_are_read_each_on_its_own(tmp_path):
    text = """## Results

<table><tr>
<td>
<table>
<tr><th colspan="2">lark</th></tr>
<tr><th>method</th><th>humaneval</th></tr>
<tr><td>Base</td><td>0.60</td></tr>
</table>
</td>
<td>
<table>
<tr><th colspan="2">wren</th></tr>
<tr><th>method</th><th>humaneval</th></tr>
<tr><td>Base</td><td><b>0.85</b></td></tr>
</table>
</td>
</tr></table>
"""
    with pytest.raises(InputError, match="2 tables under 'Results'; pick one with --table N: 1 on line 6"):
        read(tmp_path, text, heading="Results")
    [row] = read(tmp_path, text, heading="Results", table=2)
    assert (row.source_model, row.source_task, row.source_value) == ("Base", "wren / humaneval", "**0.85**")


def test_a_hostile_html_span_is_refused_naming_its_line_and_the_limit(tmp_path):
    cells = '<td colspan="100000">x</td>' * 50
    text = f"<table><tr><th>Model</th><th>A</th></tr>\n<tr><td>m</td><td>1</td>{cells}</tr></table>\n"
    with pytest.raises(InputError, match=f"a cell on line 2 has a colspan over {MAX_SPAN:,}, the limit"):
        read(tmp_path, text)


@pytest.mark.parametrize(
    "text, message",
    [
        (UNCLOSED, "README.md: the HTML <table> on line 3 is never closed; add its </table>"),
        (UNCLEAR, "README.md: the two-level header on line 3: the columns 2-4"),
    ],
)
def test_an_unreadable_table_ends_the_command_with_exit_2_naming_the_line(tmp_path, text, message):
    (tmp_path / "README.md").write_text(text)
    result = run_cli(
        [
            "hf",
            "ledger",
            str(tmp_path / "README.md"),
            "--format",
            "markdown",
            "--models-as-columns",
            "--out",
            str(tmp_path / "l.csv"),
        ]
    )
    assert result.exit_code == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "l.csv").exists()
