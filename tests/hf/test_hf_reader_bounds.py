"""The table readers end fast and small on any page: hostile inputs of issue 39 and a 1 MB README.

Each page is read in a fresh interpreter that reports the CPU time and the memory the import
took (``resource``: process CPU time, so eight builds sharing two cores do not fail a budget a
quiet machine keeps; the peak RSS the read added over the interpreter with its imports loaded, since
the imports alone come near 200 MB and do not grow with the page). Budgets: 2 s and 200 MB.
"""

from __future__ import annotations

import pytest

from hfmigrate_checks.source import htmltable
from hfmigrate_checks.testing.pages import (
    one_table_readme,
    read_in_fresh_interpreter,
    scores_of_one_table,
    sectioned_readme,
)

BUDGET_SECONDS = 2.0
BUDGET_MB = 200


def measure(tmp_path, text: str, **options) -> dict:
    path = tmp_path / "README.md"
    path.write_text(text)
    return read_in_fresh_interpreter(path, options)


def _table(rows: int) -> str:
    return "| Model | A |\n|---|---|\n" + "".join(f"| mod{i} | {i} |\n" for i in range(rows))


HOSTILE = {
    # 200 rows of one cell spanning 1000 x 1000 (9.7 KB): 10.4 GB and 93 s before
    "spans": ("<table>\n" + "<tr><td colspan=1000 rowspan=1000>x</td></tr>\n" * 200 + "</table>\n", "the limit"),
    # 50,000 rows under a colspan=1000 header (1.7 MB): a MemoryError traceback before (at 100,000)
    "wide": (
        "<table>\n<tr><th colspan=1000>h</th></tr>\n" + "<tr><td>m</td><td>1</td></tr>\n" * 50_000 + "</table>\n",
        f"more than {htmltable.MAX_CELLS:,} cells",
    ),
    # 5,000 unclosed <table> blocks (90 KB): each re-read to the end of the page before
    "unclosed": ("<table><tr><td>x\n\n" * 5000, "is never closed"),
    # 3,000 rows under 3,000 sentences naming one row each (110 KB): 26 s before
    "named sentences": (
        _table(3000) + "\n" + " ".join(f"Mod{i} was run with tools." for i in range(3000)),
        "3000 rows",
    ),
    # 3,000 sentences about all of the table's scores: every score would carry all of them; past the bound
    # they are not copied and every score needs review
    "table sentences": (
        _table(3000) + "\n" + " ".join(f"Run {i} of the table used tools." for i in range(3000)),
        "3000 rows",
    ),
    # one legend followed by 65,000 continuation lines (1 MB): 8 MB took 9 s before
    "legend": (_table(1).replace("mod0", "mod0†") + "\n† with tools\n" + "and more words\n" * 65_000, "1 rows"),
    # a page over the limit is refused before it is rendered
    "8 MB page": (_table(1) + "\n" + "and more words here\n" * 400_000, "more than the 2097152-byte limit"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_page_ends_within_the_budgets(tmp_path, name):
    text, expected = HOSTILE[name]
    got = measure(tmp_path, text)
    assert expected in got["outcome"], got
    assert got["seconds"] <= BUDGET_SECONDS and got["mb"] <= BUDGET_MB, got


def test_three_thousand_tables_under_their_own_headings_are_read_in_linear_time(tmp_path):
    page = "".join(
        f"## h{i}\n\n<table><tr><th>M</th><th>A</th></tr><tr><td>m</td><td>1</td></tr></table>\n\n" for i in range(3000)
    )
    got = measure(tmp_path, page, heading="h2999")
    assert got["outcome"] == "1 rows" and got["seconds"] <= BUDGET_SECONDS, got


def test_the_ledger_of_a_one_megabyte_readme_takes_at_most_two_seconds(tmp_path):
    got = measure(tmp_path, sectioned_readme(1_000_000), heading="Section 400")
    assert got["outcome"] == "90 rows" and got["seconds"] <= BUDGET_SECONDS and got["mb"] <= BUDGET_MB, got


def test_the_ledger_of_a_one_megabyte_table_takes_at_most_two_seconds(tmp_path):
    # one table of about 25,000 rows (50,000 scores): 2.3 s of CPU before its cells were read once each
    text = one_table_readme(1_000_000)
    got = measure(tmp_path, text)
    assert got["outcome"] == f"{scores_of_one_table(text)} rows", got
    assert got["seconds"] <= BUDGET_SECONDS and got["mb"] <= BUDGET_MB, got
