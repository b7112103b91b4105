"""Every results table of a README as a reader of the rendered page sees it.

GFM tables and HTML ``<table>`` blocks are found in document order under their headings;
each gets one header per column (header levels flattened to ``group / sub``, see
:mod:`~hfmigrate_checks.source.headers`), its body rows in their group-header groups, the
text of every marker it prints (:mod:`~hfmigrate_checks.source.notes`), and the sentences
under it that speak of its columns or rows. A table that cannot be attributed keeps the
reason in ``problem``, raised only when that table is the one asked for.
"""

from __future__ import annotations

import functools
import itertools
import re

import attrs

from hfmigrate_checks.source import headers, htmltable, mdtable, notes, scopes
from hfmigrate_checks.source.mdtable import Cell

_HTML_TABLE = re.compile(r"<table\b", re.I)
#: a caption or summary is short; the bound keeps an unclosed tag from making each search scan the rest of the page
_CAPTION = re.compile(r"<caption\b[^>]*>(.{0,500}?)</caption\s*>", re.I | re.S)
_DETAILS = re.compile(
    r"<details\b[^>]*>|</details\s*>|<summary\b[^>]*>(?P<summary>.{0,500}?)</summary\s*>", re.I | re.S
)
_NAME = re.compile(r"[^\W\d_]{2}")
_SCORE = re.compile(r"^[+-]?[\d.]+")


@attrs.frozen
class Row:
    line: int
    cells: tuple[Cell, ...]
    #: the bold group-header row above it, if any ("Open models")
    group: str = ""


@attrs.frozen
class Table:
    """A table: ``headings`` are its enclosing headings, innermost last."""

    headings: tuple[str, ...]
    line: int
    header: tuple[Cell, ...]
    rows: tuple[Row, ...]
    #: marker -> the texts of its footnote definition or legend lines (empty: none found; two: ambiguous)
    notes: dict[str, tuple[str, ...]]
    #: per column, (group, sub-column) of a two-level header; (name, "") for one level
    parts: tuple[tuple[str, str], ...] = ()
    #: sentences directly under the table and the column or row names each speaks of
    prose: tuple[tuple[str, tuple[str, ...]], ...] = ()
    kind: str = "GFM"
    #: why the table cannot be read as asked ("" when it can)
    problem: str = ""
    #: the summaries of the collapsed sections (``<details>``) around it, outermost first
    summaries: tuple[str, ...] = ()
    #: an HTML table's ``<caption>``
    caption: str = ""

    @property
    def heading(self) -> str:
        return self.headings[-1] if self.headings else ""


@attrs.frozen
class _Found:
    start: int  # 0-based first line
    stop: int  # 0-based line after the table
    headings: tuple[str, ...]
    header: tuple[tuple[int, tuple[Cell, ...]], ...]
    body: tuple[tuple[int, tuple[Cell, ...]], ...]
    kind: str
    problem: str = ""
    summaries: tuple[str, ...] = ()
    caption: str = ""


def tables(text: str) -> list[Table]:
    """Every GFM and HTML table of ``text`` with its headings, groups, notes and prose."""
    tokens = mdtable.parse(text)
    lines = text.splitlines()
    definitions = mdtable.footnotes(tokens)
    heading_lines = [(tok.map[0], int(tok.tag[1:])) for tok in tokens if tok.type == "heading_open" and tok.map]
    found = _find(tokens, lines)
    where = scopes.Scopes(lines, heading_lines, [(f.start, f.stop) for f in found])
    return [_assemble(f, lines, where, definitions) for f in found]


def _find(tokens, lines: list[str]) -> list[_Found]:
    """The tables in document order, each with its enclosing headings and ``<details>`` summaries."""
    found: list[_Found] = []
    stack: list[tuple[int, str]] = []
    summaries: list[str] = []
    i, html_until = 0, -1
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            stack = [(lv, t) for lv, t in stack if lv < level] + [(level, mdtable.cell(tokens[i + 1]).text)]
        elif tok.type == "table_open":
            end = next(j for j in range(i, len(tokens)) if tokens[j].type == "table_close")
            found.append(attrs.evolve(_gfm(tokens[i : end + 1], _titles(stack)), summaries=_shown(summaries)))
            i = end
        elif tok.type == "html_block":
            html, html_until = _html_block(tok, lines, _titles(stack), html_until, summaries)
            found += html
        i += 1
    return found


def _html_block(tok, lines, headings, html_until: int, summaries: list[str]) -> tuple[list[_Found], int]:
    """The tables an HTML block starts, and the ``<details>`` it opens or closes around them."""
    table_at = _HTML_TABLE.search(tok.content) if _html_table_block(tok, html_until) else None
    if not table_at:
        _details(tok.content, summaries)
        return [], html_until
    _details(tok.content[: table_at.start()], summaries)
    html, html_until = _html(lines, tok.map[0], headings, html_until)
    html = [attrs.evolve(f, summaries=_shown(summaries)) for f in html]
    _details(tok.content[tok.content.lower().rfind("</table") :], summaries)
    return html, html_until


def _details(html: str, summaries: list[str]) -> None:
    """Open and close the collapsed sections ``html`` holds: each ``<details>`` pushes its summary."""
    for match in _DETAILS.finditer(html):
        tag = match.group(0)[:9].lower()
        if tag.startswith("</details"):
            if summaries:
                summaries.pop()
        elif tag.startswith("<details"):
            summaries.append("")
        elif summaries and not summaries[-1]:
            summaries[-1] = notes.plain(match.group("summary"))


def _shown(summaries: list[str]) -> tuple[str, ...]:
    return tuple(s for s in summaries if s)


def _titles(stack: list[tuple[int, str]]) -> tuple[str, ...]:
    return tuple(title for _, title in stack)


def _html_table_block(tok, html_until: int) -> bool:
    """An HTML block holding a ``<table>`` that no table already read covers."""
    return (
        tok.type == "html_block" and bool(tok.map) and tok.map[0] > html_until and bool(_HTML_TABLE.search(tok.content))
    )


def _gfm(tokens, headings: tuple[str, ...]) -> _Found:
    rows = mdtable.gfm_rows(tokens)
    return _Found(tokens[0].map[0], tokens[0].map[1], headings, (_row(rows[0]),), tuple(map(_row, rows[1:])), "GFM")


def _html(lines: list[str], first: int, headings: tuple[str, ...], until: int) -> tuple[list[_Found], int]:
    """The HTML table starting in the block at line index ``first``, and the line index it ends on; a
    layout table's cells hold the results tables, so those are read instead, each on its own."""
    offset = next(n for n in range(first, len(lines)) if _HTML_TABLE.search(lines[n]))
    table = htmltable.read(lines, offset)
    if table is None:
        return [], until
    tables = [htmltable.read(lines, line - 1) for line in table.inner] if table.inner else [table]
    # a table never closed was read to the end of the page: reading it again from each later block
    # would be quadratic, and a reader of the page sees everything after it inside it
    end = table.end_line - 1 if table.end_line > table.line or not table.problem else len(lines)
    return [
        _Found(t.line - 1, t.end_line, headings, t.header, t.body, "HTML", t.problem, caption=_caption(lines, t))
        for t in tables
        if t is not None
    ], end


def _caption(lines: list[str], table: htmltable.HtmlTable) -> str:
    """The text of the table's ``<caption>`` before its first row, as rendered ("" when it has none)."""
    head = "\n".join(lines[table.line - 1 : table.header[0][0] if table.header else table.end_line])
    found = _CAPTION.search(head)
    return notes.plain(found.group(1)) if found else ""


def _row(row: tuple[int, list[Cell]]) -> tuple[int, tuple[Cell, ...]]:
    return row[0], tuple(row[1])


def _assemble(found: _Found, lines, where: scopes.Scopes, definitions) -> Table:
    line, header, parts, body, problem = _header(found)
    rows = _grouped(body)
    own = where.own(found.start, found.stop)
    markers = dict.fromkeys(m for c in (*header, *(c for r in rows for c in r.cells)) for m in c.markers)
    names = itertools.chain((c.text for c in header[1:]), (name for r in rows for name in row_names(r)))
    prose = notes.prose_around(lines, found.start, found.stop, names)
    return Table(
        found.headings,
        line,
        tuple(header),
        tuple(rows),
        notes.table_notes(markers, own, functools.partial(where.outer, found.start), definitions),
        tuple(parts),
        tuple(prose),
        found.kind,
        problem,
        found.summaries,
        found.caption,
    )


def _header(found: _Found) -> tuple[int, list[Cell], list[tuple[str, str]], list, str]:
    """(header line, one header cell per column, their (group, sub) parts, body rows, problem); a GFM
    table's sub-header row (see :mod:`headers`) moves from the body to the header."""
    header_rows, body = list(found.header), list(found.body)
    line = header_rows[0][0] if header_rows else found.start + 1
    if found.kind == "GFM" and body and headers.is_subheader(header_rows[0][1], body[0][1]):
        number, cells = body.pop(0)
        header_rows.append((number, tuple(headers.settings(cells))))
    if len(header_rows) == 2:
        header, parts, problem = headers.flatten(header_rows[0][1], header_rows[1][1], line)
        return line, header, parts, body, found.problem or problem
    if len(header_rows) > 2:
        header, parts = headers.stack([cells for _, cells in header_rows])
        return line, header, parts, body, found.problem
    header = list(header_rows[0][1]) if header_rows else []
    return line, header, [(c.text, "") for c in header], body, found.problem


def row_names(row: Row) -> list[str]:
    """What names a row: its text cells that are words, not scores (a model label, a benchmark name)."""
    return [c.text for c in row.cells if _NAME.search(c.text) and not _SCORE.match(c.text)]


def _grouped(body) -> list[Row]:
    """The body rows with data, each in the group its last group row (one emphasised cell alone) opened."""
    out_rows: list[Row] = []
    group = ""
    for number, cells in body:
        filled = [c for c in cells if c.text or c.markers]
        if not filled:
            continue
        first = filled[0]
        # one cell spread by an HTML colspan is one cell
        if all(c is first for c in filled) and first.emphasis in ("**", "*") and not first.markers:
            group = first.text
            continue
        out_rows.append(Row(number, tuple(cells), group))
    return out_rows
