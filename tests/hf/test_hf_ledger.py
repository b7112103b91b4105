"""Ledger importers: scores exactly as printed, one row each, unclear cells kept as needs_review."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.support.hf_fixtures import README_MODELS
from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks.source import ledger, qualifiers

README = """# My model zoo

Some intro text | with a pipe that is not a table.

## Older results

| Model | GPQA |
|---|---|
| old-model | 10.0 |

## Main results

| Model | GPQA Diamond | MMLU-Pro | Notes |
|:------|-------------:|---------:|-------|
| [Alpha-7B](https://huggingface.co/alpha/Alpha-7B) | **71.2** | 70.1 ± 0.3 | base |
| Beta-13B | 71.2* | n/a | footnote |
| Gamma \\| chat | 71.2 (72.0) | 65.40 | |

```
| Model | not | a table |
|---|---|---|
```
"""


@pytest.mark.parametrize(
    "text, value, status, qualifier",
    [
        ("71.2", 71.2, "ok", ""),
        ("65.40", 65.4, "ok", ""),
        ("-3", -3.0, "ok", ""),
        ("71.2*", 71.2, "needs_review", "marker(s) * printed with the score"),
        ("81.2†", 81.2, "needs_review", "marker(s) † printed with the score"),
        ("*81.2* [^3]", 81.2, "needs_review", "emphasis * in source; marker(s) [^3] printed with the score"),
        ("-", None, "needs_review", "no score printed ('-')"),
        ("70.1 ± 0.3", 70.1, "ok", "uncertainty ± 0.3 printed with the score"),
        ("70.1 (±0.3)", 70.1, "ok", "uncertainty ± 0.3 printed with the score"),
        ("70.1 +/- 0.25", 70.1, "ok", "uncertainty ± 0.25 printed with the score"),
        ("70.1 ± n/a", None, "needs_review", "'± n/a' follows 70.1"),
        ("n/a", None, "needs_review", "no score printed ('n/a')"),
        ("71.2 (72.0)", None, "needs_review", "'(72.0)' follows 71.2"),
        ("1,234", None, "needs_review", "',234' follows 1"),
        ("", None, "needs_review", "empty cell"),
        ("nan", None, "needs_review", "not a number"),
        ("inf", None, "needs_review", "not a number"),
        ("**71.2**", 71.2, "ok", "emphasis ** in source"),
    ],
)
def test_cells_are_numbers_only_when_clean(text, value, status, qualifier):
    cell = ledger.parse_cell(text)
    assert (cell.value, cell.status) == (value, status)
    assert qualifier in cell.qualifiers


def test_percent_is_recorded_as_unit_not_converted():
    cell = ledger.parse_cell("71.2%")
    assert (cell.value, cell.unit, cell.number) == (71.2, "%", "71.2")


def test_markdown_table_is_picked_by_heading_and_keeps_printed_text(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(README)
    rows = ledger.import_source(
        path, "markdown", heading="main results", source_url="https://example.org/r", ignore_columns=["Notes"]
    )
    assert [(r.source_model, r.source_task, r.source_value, r.status) for r in rows] == [
        ("Alpha-7B", "GPQA Diamond", "**71.2**", "ok"),
        ("Alpha-7B", "MMLU-Pro", "70.1 ± 0.3", "ok"),
        ("Beta-13B", "GPQA Diamond", "71.2*", "needs_review"),
        ("Beta-13B", "MMLU-Pro", "n/a", "needs_review"),
        ("Gamma | chat", "GPQA Diamond", "71.2 (72.0)", "needs_review"),
        ("Gamma | chat", "MMLU-Pro", "65.40", "ok"),
    ]
    assert rows[0].source_link == "https://huggingface.co/alpha/Alpha-7B"
    assert rows[0].source_locator == "README.md:L15 (table under 'Main results') column 'GPQA Diamond'"
    assert "uncertainty ± 0.3 printed with the score" in rows[1].qualifiers and rows[1].cell.uncertainty == "0.3"
    assert all(r.source_url == "https://example.org/r" for r in rows)
    assert len({r.source_locator for r in rows}) == len(rows)


def test_markdown_needs_a_heading_when_several_tables_and_names_them(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(README)
    with pytest.raises(
        InputError,
        match=r"2 tables in the file; pick one with --heading \(or --table N\): "
        r"1 on line 7 under 'Older results', 2 on line 13 under 'Main results'",
    ):
        ledger.import_source(path, "markdown")
    with pytest.raises(InputError, match="no table under a heading 'Results'"):
        ledger.import_source(path, "markdown", heading="Results")


def test_csv_importer_one_row_per_score_with_line_locators(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("Model,Variant,Diamond,Main\nA-1,tools,41.20,30\nA-1,no tools,39.9,\n\nB-2,,0.5e1,x\n")
    rows = ledger.import_source(path, "csv", variant_column="Variant")
    assert [(r.source_model, r.source_variant, r.source_task, r.source_value, r.status) for r in rows] == [
        ("A-1", "tools", "Diamond", "41.20", "ok"),
        ("A-1", "tools", "Main", "30", "ok"),
        ("A-1", "no tools", "Diamond", "39.9", "ok"),
        ("A-1", "no tools", "Main", "", "needs_review"),
        ("B-2", "", "Diamond", "0.5e1", "ok"),
        ("B-2", "", "Main", "x", "needs_review"),
    ]
    assert rows[4].source_locator == "board.csv:L5 column 'Diamond'"


def test_csv_errors_name_file_and_line(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("Model,A\nm,1,2\n")
    with pytest.raises(InputError, match=r"bad.csv: line 2: 3 cells, but the header has 2"):
        ledger.import_source(path, "csv")
    path.write_text("Model,A,A\nm,1,2\n")
    with pytest.raises(InputError, match="column 'A' appears twice"):
        ledger.import_source(path, "csv")
    path.write_text("Model,A\nm,1\n")
    with pytest.raises(InputError, match="no column 'Nope'; the columns are 'Model', 'A'"):
        ledger.import_source(path, "csv", model_column="Nope")


def test_parquet_through_duckdb_keeps_typed_values_and_nulls(tmp_path):

    table = pa.table(
        {"model": ["a/x", "b/y", "c/z"], "task": ["diamond", "diamond", "main"], "score": [41.2, None, 0.1]}
    )
    path = tmp_path / "board.parquet"
    pq.write_table(table, path)
    rows = ledger.import_source(path, "parquet", task_column="task", value_column="score")
    assert [(r.source_model, r.source_task, r.source_value, r.status, r.source_locator) for r in rows] == [
        ("a/x", "diamond", "41.2", "ok", "board.parquet row 1"),
        ("b/y", "diamond", "", "needs_review", "board.parquet row 2"),
        ("c/z", "main", "0.1", "ok", "board.parquet row 3"),
    ]


def test_dataset_csv_through_duckdb_keeps_text(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("model,Diamond\nm1,71.20\nm2,71.2*\n")
    rows = ledger.import_source(path, "parquet")
    assert [(r.source_value, r.status) for r in rows] == [("71.20", "ok"), ("71.2*", "needs_review")]


def test_broken_parquet_is_a_clear_error(tmp_path):
    path = tmp_path / "board.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError, match="board.parquet: DuckDB cannot read it"):
        ledger.import_source(path, "parquet")


def test_a_dataset_read_stopped_by_ctrl_c_is_an_abort_not_an_unreadable_file(tmp_path, monkeypatch):
    """DuckDB reports a read that Ctrl-C (or SIGTERM, taken as Ctrl-C) stopped as RuntimeError('Query interrupted'):
    the import raises KeyboardInterrupt, so the command ends as 'checks: aborted'; DuckDB's own errors stay a
    clear refusal naming the file."""
    path = tmp_path / "board.csv"
    path.write_text("model,Diamond\nm1,71.20\n")

    class Stopped:
        def __init__(self, error):
            self.error = error

        def execute(self, *args):
            raise self.error

        def close(self):
            pass

    monkeypatch.setattr(duckdb, "connect", lambda: Stopped(RuntimeError("Query interrupted")))
    with pytest.raises(KeyboardInterrupt):
        ledger.import_source(path, "parquet")
    monkeypatch.setattr(duckdb, "connect", lambda: Stopped(duckdb.IOException("cannot open")))
    with pytest.raises(InputError, match="board.csv: DuckDB cannot read it as csv: cannot open"):
        ledger.import_source(path, "parquet")
    monkeypatch.setattr(duckdb, "connect", lambda: Stopped(RuntimeError("something else")))
    with pytest.raises(RuntimeError, match="something else"):  # a bug stays a bug
        ledger.import_source(path, "parquet")


def test_ledger_round_trip_and_hand_edited_status_cannot_hide_a_qualifier(tmp_path):
    path = tmp_path / "board.csv"
    path.write_text("Model,Diamond\nm1,71.2\nm2,71.2*\n")
    out = tmp_path / "ledger.csv"
    ledger.write(out, ledger.import_source(path, "csv"))
    assert ledger.load(out) == ledger.import_source(path, "csv")
    records = list(csv.DictReader(out.open()))
    records[1]["status"] = "ok"
    with out.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=ledger.COLUMNS)
        writer.writeheader()
        writer.writerows(records)
    reloaded = ledger.load(out)
    assert reloaded[1].status == "needs_review" and reloaded[1].value is None


def test_a_cell_with_a_bare_carriage_return_survives_the_ledger_file(tmp_path):
    # csv.writer left such a cell unquoted, and the reread ledger had a row with no source_locator
    path = tmp_path / "board.csv"
    path.write_text('Model,Diamond,Hard\r\nm1,71.2,"0\r0"\r\n', newline="")
    rows = ledger.import_source(path, "csv")
    assert [r.source_value for r in rows] == ["71.2", "0\r0"] and rows[1].status == "needs_review"
    out = tmp_path / "ledger.csv"
    ledger.write(out, rows)
    assert ledger.load(out) == rows


def test_ledger_eval_date_must_be_a_real_date(tmp_path):
    out = tmp_path / "ledger.csv"
    ledger.write(out, [ledger.LedgerRow("m", "Diamond", "71.2", "b.csv:L2", eval_date="2025-02-30")])
    with pytest.raises(InputError, match=r"line 2: 'eval_date' must be a real ISO-8601 date .*got '2025-02-30'"):
        ledger.load(out)
    ledger.write(out, [ledger.LedgerRow("m", "Diamond", "71.2", "b.csv:L2", eval_date="2025-02-28")])
    assert ledger.load(out)[0].eval_date == "2025-02-28"


def test_ledger_load_refuses_foreign_csv(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="missing column"):
        ledger.load(path)


def test_ledger_command_writes_csv_and_counts(tmp_path):
    source = tmp_path / "README.md"
    source.write_text(README)
    result = run_cli(
        [
            "hf",
            "ledger",
            str(source),
            "--format",
            "markdown",
            "--heading",
            "Main results",
            "--ignore-column",
            "Notes",
            "--source-url",
            "https://example.org/r",
            "--out",
            str(tmp_path / "ledger.csv"),
        ]
    )
    assert result.exit_code == 0, result.stderr
    assert "6 score(s) of 3 model(s), 3 need review" in result.stdout
    assert len(ledger.load(tmp_path / "ledger.csv")) == 6
    bad = run_cli(["hf", "ledger", str(tmp_path / "missing.md"), "--format", "markdown", "--out", "x.csv"])
    assert bad.exit_code == 2 and "missing.md: no such file" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("label", ["a\x00b", "x" * 501, "bell\x07"])
def test_hostile_labels_are_refused(tmp_path, label):
    path = tmp_path / "board.csv"
    path.write_text(f'Model,Diamond\n"{label}",71.2\n')
    with pytest.raises(InputError, match="board.csv:L2: the model label"):
        ledger.import_source(path, "csv")


# ---------------------------------------------------------------- Markdown as GitHub renders it

LEADERBOARD = Path(__file__).parents[1] / "fixtures" / "leaderboard_readme.md"


#: the paragraph directly above the table: it says how every score was run, so every variant carries it
PASS_AT_1 = "All numbers are pass@1 unless a footnote says otherwise."


def _without_table_note(variant: str) -> str:
    return "; ".join(part for part in variant.split("; ") if part != PASS_AT_1)


@pytest.fixture(scope="module")
def board():
    rows = ledger.import_source(LEADERBOARD, "markdown", heading="## Benchmark Results", ignore_columns=["Avg"])
    return {(r.source_model, r.source_task, _without_table_note(r.source_variant)): r for r in rows}, rows


def test_gfm_rows_headers_and_cells_read_as_github_renders_them(board):
    by_key, rows = board
    assert (
        list(dict.fromkeys(r.source_model for r in rows)) == README_MODELS
    )  # group-header rows ("**Open-weight models**") are not models; the code span and escaped pipe are text
    assert {r.source_task for r in rows} == {"Main", "Hard (multi-step)"}  # <br> is a space, [^main] is gone
    gamma = [r for r in rows if r.source_model == "Gamma | chat"]
    assert [r.source_value for r in gamma] == ["60.2", "30.1"]  # the row's excess cell (99.9) is ignored
    zeta = [r for r in rows if r.source_model == "Zeta-13B"]
    assert len(zeta) == 2 and zeta[1].source_value == "29.0"  # the short row is padded: Avg is empty
    beta = by_key["Beta 7B Instruct", "Main", "The main split, 0-shot."]
    assert (beta.source_value, beta.value, beta.status) == ("**07.6**", 7.6, "ok")
    alpha = by_key["acme/Alpha-7B", "Hard (multi-step)", ""]
    assert alpha.source_link == "https://huggingface.co/acme/Alpha-7B"
    assert alpha.source_locator == (
        "leaderboard_readme.md:L27 (table under 'Benchmark Results', "
        "group 'Open-weight models') column 'Hard (multi-step)'"
    )
    assert "in the group 'Open-weight models' of the table" in alpha.qualifiers


def test_footnotes_and_legends_become_qualifiers_with_their_text(board):
    by_key, rows = board
    # a symbol on the label, with its legend line under the table: a run qualifier, so it is the variant (notes)
    wren = by_key["Wren-3B", "Hard (multi-step)", "with tools (a Python interpreter)."]
    assert wren.status == "ok" and wren.qualifiers.startswith("† with tools (a Python interpreter).")
    # the paragraph above the table names no column but speaks of every score's run: the whole table's
    assert all(PASS_AT_1 in r.source_variant for r in rows if r.status == "ok")
    # the footnote on a column header qualifies every score of that column, with its definition's text
    mains = [r for r in rows if r.source_task == "Main"]
    assert all("[^main] The main split, 0-shot." in r.qualifiers for r in mains)
    assert all("The main split, 0-shot." in r.source_variant for r in mains)
    # provenance only ("taken from the model card", "reported by the authors"): kept, not a variant
    zeta = by_key["Zeta-13B", "Hard (multi-step)", ""]
    assert zeta.status == "ok" and "* Results taken from the model card." in zeta.qualifiers
    omicron = by_key["Omicron 7B", "Main", "The main split, 0-shot."]
    assert omicron.status == "ok" and "[^card] Reported by the model authors." in omicron.qualifiers
    nimbus = by_key["Nimbus-Pro", "Hard (multi-step)", "majority vote over 16 samples."]
    assert nimbus.status == "ok"
    # two printings of one model are two variants, never merged into one
    assert ("Sable-22B", "Hard (multi-step)", "with tools (a Python interpreter).") in by_key
    assert ("Sable-22B", "Hard (multi-step)", "") in by_key


def test_cells_that_are_no_clean_score_need_review(board):
    by_key, rows = board
    omicron = [r for r in rows if r.source_model == "Omicron 7B" and r.source_task == "Hard (multi-step)"][0]
    assert omicron.status == "needs_review" and "no score printed ('n/a')" in omicron.qualifiers
    retracted = [r for r in rows if r.source_model == "Retracted-7B"]
    assert {r.status for r in retracted} == {"needs_review"}
    assert "struck through in source" in retracted[0].qualifiers


@pytest.mark.parametrize(
    "markers, legend, status, variant, qualifier",
    [
        ("†", "† with tools", "ok", "with tools", "† with tools"),
        ("†", "†: majority vote @64", "ok", "majority vote @64", "† majority vote @64"),
        ("†", "- † 5-shot chain-of-thought", "ok", "5-shot chain-of-thought", "† 5-shot chain-of-thought"),
        ("<sup>†</sup>", "<sup>†</sup> uses web search", "ok", "uses web search", "† uses web search"),
        ("*", "Scores marked with an asterisk (*) are from the paper.", "ok", "", "* from the paper"),
        (
            "‡",
            "Note: ‡ denotes a thinking budget of 32k tokens.",
            "ok",
            "a thinking budget of 32k tokens",
            "‡ a thinking budget",
        ),
        ("†", "† evaluated in March", "needs_review", "", "footnote † ('evaluated in March') may change what was run"),
        ("†", "", "needs_review", "", "marker † has no footnote definition or legend line"),
        (" [^7]", "[^7]: With tools.", "ok", "With tools.", "[^7] With tools."),
        (" [^7]", "", "needs_review", "", "marker [^7] has no footnote definition"),
    ],
)
def test_marker_forms_and_what_they_decide(tmp_path, markers, legend, status, variant, qualifier):
    path = tmp_path / "README.md"
    path.write_text(f"### Results ###\n\n| Model | Score |\n|---|---|\n| Sable-22B{markers} | 80.1 |\n\n{legend}\n")
    [row] = ledger.import_source(path, "markdown", heading="results")
    assert (row.source_model, row.status, row.source_variant) == ("Sable-22B", status, variant)
    assert qualifier in row.qualifiers


def test_a_marker_on_a_score_and_the_round_trip_through_the_ledger_file(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(
        "## Results\n\n| Model | Score |\n|---|---|\n| A-1 | *81.2*† |\n| B-2 | 70.0† |\n"
        "| C-3 | 60.0‡ |\n\n† with tools\n"
    )
    rows = ledger.import_source(path, "markdown")
    assert [(r.source_value, r.value, r.status, r.source_variant) for r in rows] == [
        ("*81.2*†", 81.2, "ok", "with tools"),
        ("70.0†", 70.0, "ok", "with tools"),
        ("60.0‡", None, "needs_review", ""),
    ]
    out = tmp_path / "ledger.csv"
    ledger.write(out, rows)
    assert ledger.load(out) == rows  # an explained marker keeps its row; an unexplained one stays needs_review


@pytest.mark.parametrize(
    "heading", ["Benchmark Results", "## Benchmark Results", "benchmark results", "#### **Benchmark results**"]
)
def test_headings_match_by_text_whatever_their_level(heading):
    rows = ledger.import_source(LEADERBOARD, "markdown", heading=heading)
    assert rows[0].source_model == "acme/Alpha-7B"


def test_enclosing_heading_picks_its_only_table_and_html_tables_are_read(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(
        "# Evaluation\n\n## Math\n\n| Model | A |\n|---|---|\n| m | 1 |\n\n# Other\n\n| x | y |\n|---|---|\n| 1 | 2 |\n"
    )
    assert ledger.import_source(path, "markdown", heading="# Evaluation")[0].source_model == "m"
    path.write_text(
        "# Results\n\n<table>\n<tr><th>Model</th><th>A</th></tr>\n<tr><td>m</td><td>1</td></tr>\n</table>\n"
    )
    [row] = ledger.import_source(path, "markdown")
    assert (row.source_model, row.source_task, row.source_value, row.source_locator) == (
        "m",
        "A",
        "1",
        "README.md:L5 (table under 'Results') column 'A'",
    )
    path.write_text("# Results\n\nNo table here.\n")
    with pytest.raises(InputError, match="no table found .a GFM table or an HTML <table>."):
        ledger.import_source(path, "markdown")


def test_an_empty_header_cell_gets_a_name(tmp_path):
    path = tmp_path / "README.md"
    path.write_text("| | Score |\n|---|---|\n| m | 1 |\n")
    [row] = ledger.import_source(path, "markdown")
    assert (row.source_model, row.source_task) == ("m", "Score")
    path.write_text("| Model | A | A[^1] |\n|---|---|---|\n| m | 1 | 2 |\n\n[^1]: x\n")
    with pytest.raises(InputError, match="column 'A' appears twice in the table header on line 1"):
        ledger.import_source(path, "markdown")


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("with tools (a Python interpreter)", "run"),
        ("majority vote over 16 samples", "run"),
        ("5-shot, chain-of-thought", "run"),
        ("pass@1 averaged over 8 runs", "run"),
        ("a thinking budget of 32k tokens", "run"),
        ("from the paper, 5-shot", "run"),  # a run word wins over a source word
        ("Reported by the model authors.", "provenance"),
        ("directly from the model's tech report or blog", "provenance"),
        ("evaluated in March", "unknown"),
        ("this model supports TPU training", "unknown"),
    ],
)
def test_footnote_texts_are_sorted_by_what_they_say(text, kind):

    assert qualifiers.classify(text) == kind


def test_two_tables_under_one_heading_are_never_picked_silently(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(
        "## Open Images\n\n| Model | mAP[^2] |\n|---|---|\n| a | 37 |\n\n| Model | mAP[^4] |\n|---|---|\n"
        "| b | 54 |\n\n[^2]: V2 metric.\n[^4]: Challenge metric.\n"
    )
    with pytest.raises(
        InputError,
        match="2 tables under 'Open Images'; pick one with --table N: 1 on line 3 under "
        "'Open Images', 2 on line 7 under 'Open Images'",
    ):
        ledger.import_source(path, "markdown", heading="Open Images")
    second = ledger.import_source(path, "markdown", heading="Open Images", table=2)
    assert [(r.source_model, r.source_value) for r in second] == [("b", "54")]
    assert second[0].qualifiers.startswith("[^4] Challenge metric.")
    with pytest.raises(InputError, match="--table 3, but there are 2 table"):
        ledger.import_source(path, "markdown", heading="Open Images", table=3)
