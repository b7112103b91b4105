"""The context around a table and the markup inside its cells, read as a reader of the page reads them.

Each case is a small table written for this test with the shape of a real one: superscript
and strike-through markup, malformed inline HTML, bold bullets and bold paragraphs near a
legend, run words in sentences about something else, and paragraphs between two tables.
"""

from __future__ import annotations

import pytest

from hfmigrate_checks.source import ledger
from tests.test_hf_table_shapes import read


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
