"""Ledger importers: scores exactly as printed, one row each, unclear cells kept as needs_review."""

from __future__ import annotations

import csv

import pytest

from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks import ledger

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
        ("71.2*", None, "needs_review", "'*' follows 71.2"),
        ("70.1 ± 0.3", None, "needs_review", "'± 0.3' follows 70.1"),
        ("n/a", None, "needs_review", "not a number: 'n/a'"),
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
    rows = ledger.import_source(path, "markdown", heading="main results", source_url="https://example.org/r",
                                ignore_columns=["Notes"])
    assert [(r.source_model, r.source_task, r.source_value, r.status) for r in rows] == [
        ("Alpha-7B", "GPQA Diamond", "**71.2**", "ok"),
        ("Alpha-7B", "MMLU-Pro", "70.1 ± 0.3", "needs_review"),
        ("Beta-13B", "GPQA Diamond", "71.2*", "needs_review"),
        ("Beta-13B", "MMLU-Pro", "n/a", "needs_review"),
        ("Gamma | chat", "GPQA Diamond", "71.2 (72.0)", "needs_review"),
        ("Gamma | chat", "MMLU-Pro", "65.40", "ok"),
    ]
    assert rows[0].source_link == "https://huggingface.co/alpha/Alpha-7B"
    assert rows[0].source_locator == "README.md:L15 (table under 'Main results') column 'GPQA Diamond'"
    assert "'± 0.3' follows 70.1" in rows[1].qualifiers
    assert all(r.source_url == "https://example.org/r" for r in rows)
    assert len({r.source_locator for r in rows}) == len(rows)


def test_markdown_needs_a_heading_when_several_tables_and_names_them(tmp_path):
    path = tmp_path / "README.md"
    path.write_text(README)
    with pytest.raises(InputError, match="2 tables found; pick one with --heading.*'Older results', 'Main results'"):
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
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"model": ["a/x", "b/y", "c/z"], "task": ["diamond", "diamond", "main"],
                      "score": [41.2, None, 0.1]})
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
    result = run_cli(["hf", "ledger", str(source), "--format", "markdown", "--heading", "Main results",
                      "--ignore-column", "Notes", "--source-url", "https://example.org/r",
                      "--out", str(tmp_path / "ledger.csv")])
    assert result.exit_code == 0, result.stderr
    assert "6 score(s) of 3 model(s), 4 need review" in result.stdout
    assert len(ledger.load(tmp_path / "ledger.csv")) == 6
    bad = run_cli(["hf", "ledger", str(tmp_path / "missing.md"), "--format", "markdown", "--out", "x.csv"])
    assert bad.exit_code == 2 and "missing.md: no such file" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.parametrize("label", ["a\x00b", "x" * 501, "bell\x07"])
def test_hostile_labels_are_refused(tmp_path, label):
    path = tmp_path / "board.csv"
    path.write_text(f"Model,Diamond\n\"{label}\",71.2\n")
    with pytest.raises(InputError, match="board.csv:L2: the model label"):
        ledger.import_source(path, "csv")
