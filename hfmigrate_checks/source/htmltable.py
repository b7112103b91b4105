"""HTML ``<table>`` blocks inside a README, read with the standard library's HTML parser.

Many READMEs publish results as raw HTML because GFM tables have no spans. GitHub renders
such a block as HTML, so it is read as HTML (never with regular expressions): header rows
are the rows of ``<thead>``, else the leading rows made only of ``<th>`` cells; ``colspan``
and ``rowspan`` are expanded so every grid position holds the cell a reader sees there; a
cell's text, links, emphasis, strike-through and ``<sup>`` markers are rendered like a
Markdown cell's (:class:`~hfmigrate_checks.source.mdtable.Cell`).
"""

from __future__ import annotations

from html.parser import HTMLParser

import attrs

from hfmigrate_checks.source import mdtable

#: more columns or rows than any real leaderboard spans: a larger ``colspan`` or ``rowspan`` is refused
MAX_SPAN = 1000
#: grid positions of one table once its spans are expanded (rows x columns): more is refused, so a
#: few bytes of spans (``<td colspan=1000 rowspan=1000>``) cannot grow into gigabytes
MAX_CELLS = 100_000
_EMPHASIS = mdtable.HTML_EMPHASIS


@attrs.frozen
class HtmlTable:
    """One top-level ``<table>``: 1-based lines of ``<table>`` and ``</table>``, header and body grids."""

    line: int
    end_line: int
    header: tuple[tuple[int, tuple[mdtable.Cell, ...]], ...]
    body: tuple[tuple[int, tuple[mdtable.Cell, ...]], ...]
    problem: str = ""
    #: 1-based lines of the tables inside its cells: a layout table sets results side by side
    inner: tuple[int, ...] = ()


class _Reader(HTMLParser):
    """Collects the rows of the first top-level table; nested tables are text of their cell."""

    def __init__(self, first_line: int) -> None:
        super().__init__(convert_charrefs=True)
        self.first_line = first_line
        self.depth = 0
        self.done = False
        self.start = self.end = 0
        self.in_head = False
        self.rows: list[dict] = []
        self.cell: dict | None = None
        self.inner: list[int] = []
        #: why the table is not read further ("" while it is): a span or the cell count over its limit
        self.over = ""
        self.n_cells = 0

    def _line(self) -> int:
        return self.first_line + self.getpos()[0] - 1

    def handle_starttag(self, tag, attrs_list):
        if self.done:
            return
        if tag == "table":
            self._open_table()
        elif self.depth != 1:
            return
        elif tag == "thead":
            self.in_head = True
        elif tag in ("tr", "td", "th"):
            self._open_row_or_cell(tag, dict(attrs_list))
        elif self.cell is not None:
            self.cell["ink"].open(tag, dict(attrs_list))

    def _open_table(self) -> None:
        self.depth += 1
        if self.depth == 1:
            self.start = self._line()
        elif self.depth == 2:
            self.inner.append(self._line())

    def _open_row_or_cell(self, tag: str, attrs_map: dict) -> None:
        self._close_cell()
        if tag == "tr" or not self.rows:
            self.rows.append({"line": self._line(), "head": self.in_head, "cells": []})
        if tag != "tr":
            span = (_span(attrs_map.get("colspan")), _span(attrs_map.get("rowspan")))
            self.cell = {"th": tag == "th", "span": span, "ink": _Ink()}
            self.n_cells += 1
            if max(span) > MAX_SPAN or self.n_cells > MAX_CELLS:
                self._stop(span)

    def _stop(self, span: tuple[int, int]) -> None:
        """Stop reading a table over a limit, saying which and where."""
        where = f"the HTML <table> on line {self.start}"
        if max(span) > MAX_SPAN:
            kind = "colspan" if span[0] > MAX_SPAN else "rowspan"
            self.over = (
                f"{where}: a cell on line {self._line()} has a {kind} over {MAX_SPAN:,}, the limit; split the table"
            )
        else:
            self.over = f"{where} has more than {MAX_CELLS:,} cells (line {self._line()}), the limit; split the table"
        self.cell = None
        self.done = True

    def handle_startendtag(self, tag, attrs_list):
        if self.cell is not None and self.depth == 1:
            self.cell["ink"].open(tag, dict(attrs_list))

    def handle_endtag(self, tag):
        if self.done:
            return
        if tag == "table":
            if self.depth == 1:
                self._close_cell()
                self.end = self._line()
                self.done = True
            self.depth = max(0, self.depth - 1)
        elif self.depth == 1 and tag == "thead":
            self.in_head = False
        elif self.depth == 1 and tag in ("td", "th", "tr"):
            self._close_cell()
        elif self.cell is not None and self.depth == 1:
            self.cell["ink"].close(tag)

    def handle_data(self, data):
        if self.cell is not None and not self.done and self.depth == 1:
            self.cell["ink"].text(data)

    def _close_cell(self) -> None:
        """Keep the closed cell as rendered; its renderer (far larger) is dropped."""
        if self.cell is not None:
            self.cell["ink"] = self.cell["ink"].cell()
            self.rows[-1]["cells"].append(self.cell)
            self.cell = None


def _span(value: str | None) -> int:
    """A span as a browser reads it: a positive integer, else 1; a longer number than any limit is past it."""
    text = (value or "").strip()
    if text.isdigit() and len(text) > 7:
        return MAX_SPAN + 1
    try:
        return max(int(text or 1), 1)
    except ValueError:
        return 1


class _Ink:
    """What one HTML cell renders to: text, the markers of its ``<sup>``, links and emphasis."""

    def __init__(self) -> None:
        self.inline = mdtable.Inline()
        self.raw: list[str] = []

    def open(self, tag: str, attrs_map: dict) -> None:
        if tag == "br":
            self.inline.parts.append(" ")
        elif tag == "sup":
            self.inline.sup = []
        elif tag == "a":
            self.inline.links.append(attrs_map.get("href") or "")
        elif tag in _EMPHASIS:
            self.inline.tag(tag, opening=True)

    def close(self, tag: str) -> None:
        if tag == "sup" and self.inline.sup is not None:
            self.inline.close_sup("".join(self.inline.sup))
        elif tag in _EMPHASIS:
            self.inline.tag(tag, opening=False)

    def text(self, data: str) -> None:
        self.raw.append(data)
        self.inline.add_text(data)

    def cell(self) -> mdtable.Cell:
        text = " ".join("".join(self.inline.parts).split())
        text, loose = mdtable.strip_markers(text)
        markers = tuple(dict.fromkeys(loose[0] + self.inline.markers + loose[1]))
        emphasis = self.inline.emphasis(text)
        raw = " ".join("".join(self.raw).split())
        raw = f"{emphasis}{raw}{emphasis}" if emphasis and raw else raw
        return mdtable.Cell(raw, text, markers, tuple(self.inline.links), emphasis)


def read(lines: list[str], first: int) -> HtmlTable | None:
    """The table whose ``<table>`` tag is on or after line index ``first``, with its spans expanded."""
    reader = _Reader(first + 1)
    for n in range(first, len(lines)):
        reader.feed(lines[n] + "\n")
        if reader.done:
            break
    reader.close()
    if not reader.start:
        return None
    grid, over = _grid(reader.rows, reader.start) if not reader.over else ([], reader.over)
    if over:  # nothing of a table over a limit is read
        return HtmlTable(reader.start, reader.end or reader.start, (), (), over, tuple(reader.inner))
    n_head = _header_count(reader.rows)
    rows = list(zip([r["line"] for r in reader.rows], grid))
    return HtmlTable(
        reader.start,
        reader.end or reader.start,
        tuple(rows[:n_head]),
        tuple(rows[n_head:]),
        _problem(reader),
        tuple(reader.inner),
    )


def _header_count(rows: list[dict]) -> int:
    """The rows of ``<thead>``, else the leading rows of ``<th>`` only, else the first row (as in GFM);
    without ``<thead>``, a header cell whose ``rowspan`` reaches into the rows below makes them header
    rows too (a header of bold ``<td>`` cells, ``<td rowspan=3><b>Model</b></td>``, is read as drawn)."""
    heads = sum(1 for r in rows if r["head"])
    if heads:
        return heads
    leading = next((i for i, r in enumerate(rows) if not r["cells"] or not all(c["th"] for c in r["cells"])), len(rows))
    count = leading or min(1, len(rows))
    n = 0
    while n < count < len(rows):
        count = max(count, *(n + c["span"][1] for c in rows[n]["cells"]), n + 1)
        n += 1
    return min(count, len(rows))


def _problem(reader: _Reader) -> str:
    if not reader.done:
        return f"the HTML <table> on line {reader.start} is never closed; add its </table>"
    return ""


_EMPTY = mdtable.Cell("", "")


def _grid(rows: list[dict], start: int) -> tuple[list[tuple[mdtable.Cell, ...]], str]:
    """Every row as the cells a reader sees in each column, ``colspan``/``rowspan`` expanded, or why
    not: the expanded grid would pass :data:`MAX_CELLS` (checked as it grows, so it never does)."""
    below: dict[int, dict[int, mdtable.Cell]] = {}  # row -> column -> a cell spanning down into it
    out = []
    budget = MAX_CELLS
    for r, row in enumerate(rows):
        cells = below.pop(r, {})
        col = 0
        for item in row["cells"]:
            while col in cells:
                col += 1
            colspan, rowspan = item["span"]
            depth = min(rowspan, len(rows) - r)
            budget -= colspan * depth
            if budget < 0:
                return [], _too_many(start, row["line"])
            for c in range(col, col + colspan):
                cells[c] = item["ink"]
                for dr in range(1, depth):
                    below.setdefault(r + dr, {})[c] = item["ink"]
            col += colspan
        out.append(tuple(cells.get(c, _EMPTY) for c in range(max(cells, default=-1) + 1)))
    width = max((len(r) for r in out), default=0)
    if width * len(out) > MAX_CELLS:
        return [], _too_many(start, rows[-1]["line"])
    return [r + (_EMPTY,) * (width - len(r)) for r in out], ""


def _too_many(start: int, line: int) -> str:
    return (
        f"the HTML <table> on line {start} spans more than {MAX_CELLS:,} cells once its "
        f"colspan/rowspan are expanded (line {line}), the limit; split the table"
    )
