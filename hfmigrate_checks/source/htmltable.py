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

#: more columns than any real leaderboard: a larger span, or a row reaching past it, is cut there
MAX_SPAN = 1000
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
            self.cell = {
                "th": tag == "th",
                "span": (_span(attrs_map.get("colspan")), _span(attrs_map.get("rowspan"))),
                "ink": _Ink(),
            }

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
        if self.cell is not None:
            self.rows[-1]["cells"].append(self.cell)
            self.cell = None


def _span(value: str | None) -> int:
    try:
        return min(max(int(value or 1), 1), MAX_SPAN)
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
    for line in lines[first:]:
        reader.feed(line + "\n")
        if reader.done:
            break
    reader.close()
    if not reader.start:
        return None
    n_head = _header_count(reader.rows)
    rows = list(zip([r["line"] for r in reader.rows], _grid(reader.rows)))
    return HtmlTable(
        reader.start,
        reader.end or reader.start,
        tuple(rows[:n_head]),
        tuple(rows[n_head:]),
        _problem(reader, n_head),
        tuple(reader.inner),
    )


def _header_count(rows: list[dict]) -> int:
    """The rows of ``<thead>``, else the leading rows of ``<th>`` only, else the first row (as in GFM)."""
    heads = sum(1 for r in rows if r["head"])
    if heads:
        return heads
    leading = next((i for i, r in enumerate(rows) if not r["cells"] or not all(c["th"] for c in r["cells"])), len(rows))
    return leading or min(1, len(rows))


def _problem(reader: _Reader, n_head: int) -> str:
    if not reader.done:
        return f"the HTML <table> on line {reader.start} is never closed; add its </table>"
    if n_head > 2:
        return (
            f"the HTML <table> on line {reader.start} has {n_head} header rows; only one, or two (a group row "
            "over sub-columns), can be attributed to columns"
        )
    return ""


def _grid(rows: list[dict]) -> list[tuple[mdtable.Cell, ...]]:
    """Every row as the cells a reader sees in each column, ``colspan``/``rowspan`` expanded."""
    pending: dict[tuple[int, int], mdtable.Cell] = {}
    out = []
    for r, row in enumerate(rows):
        cells: dict[int, mdtable.Cell] = {c: cell for (rr, c), cell in pending.items() if rr == r}
        col = 0
        for item in row["cells"]:
            while col in cells:
                col += 1
            _place(item, r, col, len(rows), cells, pending)
            col += item["span"][0]
        out.append(tuple(cells.get(c, mdtable.Cell("", "")) for c in range(max(cells, default=-1) + 1)))
    width = max((len(r) for r in out), default=0)
    return [r + (mdtable.Cell("", ""),) * (width - len(r)) for r in out]


def _place(item: dict, r: int, col: int, n_rows: int, cells: dict, pending: dict) -> None:
    """Put one cell in every position it spans: this row's columns, and the rows below it."""
    rendered = item["ink"].cell()
    colspan, rowspan = item["span"]
    for dc in range(min(colspan, MAX_SPAN - col)):  # a grid wider than any leaderboard is cut, not built
        cells[col + dc] = rendered
        for dr in range(1, min(rowspan, n_rows - r)):
            pending[(r + dr, col + dc)] = rendered
