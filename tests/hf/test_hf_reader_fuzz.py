"""Property test: the Markdown and HTML table readers end fast and small on any page built of table parts.

Hypothesis assembles pages from the pieces the readers act on (pipes, delimiter rows, HTML
tags with spans, headings, markers and legends, sentences naming rows) and repeats them, so a
page holds many tables, deep spans and long notes. Every page must end with tables or the
project's own error, within a CPU-time budget and a traced-memory budget per page; the
hostile pages of issue 39 at full size are in tests/hf/test_hf_reader_bounds.py.
"""

from __future__ import annotations

import re
import time
import tracemalloc

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checks import ChecksError
from hfmigrate_checks.source import document, ledger, mdtable

#: per page: the pages are at most 60 KB, so a linear reader stays far inside both
BUDGET_SECONDS = 2.0
BUDGET_BYTES = 200 * 1024 * 1024

_SPAN = st.sampled_from(
    ["", ' colspan="2"', ' rowspan="3"', " colspan=1000", " rowspan=1000 colspan=50", ' colspan="x"']
)
_WORD = st.sampled_from(["Model", "MMLU", "Wren-7B", "5-shot", "61.2", "**70.1**", "-", "~~9.9~~", "x†", "y[^1]", ""])
_PIECES = st.one_of(
    st.builds(lambda cells: "| " + " | ".join(cells) + " |\n", st.lists(_WORD, min_size=1, max_size=6)),
    st.sampled_from(["|---|---|\n", "|:-:|--|---|\n", "\n", "## Results\n", "# Top\n", "<details>\n", "</details>\n"]),
    st.sampled_from(["<table>", "</table>\n", "<thead>", "</thead>", "<tr>", "</tr>\n", "<sup>*</sup>", "<b>", "</b>"]),
    st.builds(lambda tag, span, word: f"<{tag}{span}>{word}</{tag}>", st.sampled_from(["td", "th"]), _SPAN, _WORD),
    st.sampled_from(["† with tools\n", "[^1]: 0-shot\n", "* scores marked with an asterisk (*) are ours\n"]),
    st.sampled_from(["Wren-7B was run with tools. ", "MMLU used 5-shot prompts. ", "and more words\n"]),
)


@st.composite
def pages(draw):
    """A page of table pieces; a drawn piece may repeat up to 1,000 times (pages up to 60 KB)."""
    parts = []
    for piece, times in draw(st.lists(st.tuples(_PIECES, st.integers(1, 1000)), min_size=1, max_size=12)):
        parts.append(piece * times)
    return "".join(parts)[:60_000]


def _within_budgets(read) -> None:
    """Time one read untraced (tracing slows it several times), then trace a second one's memory."""
    for traced in (False, True):
        if traced:
            tracemalloc.start()
        start = time.process_time()
        try:
            read()
        except ChecksError:
            pass  # the project's own error: a clear message, no traceback
        finally:
            seconds = time.process_time() - start
            peak = tracemalloc.get_traced_memory()[1] if traced else 0
            tracemalloc.stop()
        assert traced or seconds <= BUDGET_SECONDS, f"{seconds:.2f} s"
        assert peak <= BUDGET_BYTES, f"{peak / 2**20:.0f} MB"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pages())
def test_every_table_of_any_page_is_found_within_the_budgets(page):
    _within_budgets(lambda: document.tables(page))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pages(), st.booleans())
def test_a_ledger_of_any_page_ends_with_rows_or_a_clear_error_within_the_budgets(tmp_path_factory, page, columns):
    path = tmp_path_factory.mktemp("page") / "README.md"
    path.write_text(page)
    _within_budgets(lambda: ledger.import_source(path, "markdown", table=1, models_as_columns=columns))


_CELL_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(
    lambda t: t.replace("|", " ")
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_CELL_TEXT, min_size=2, max_size=3), min_size=1, max_size=4))
def test_cells_read_without_the_inline_parser_read_as_the_parser_reads_them(rows):
    page = "| Model | A | B |\n|---|---|---|\n" + "".join("| " + " | ".join(r) + " |\n" for r in rows)
    shortcut = document.tables(page)
    always = mdtable._INLINE_SYNTAX
    mdtable._INLINE_SYNTAX = re.compile("")  # every cell through markdown-it's inline parser
    try:
        assert document.tables(page) == shortcut
    finally:
        mdtable._INLINE_SYNTAX = always
