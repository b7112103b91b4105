"""Markdown tables exactly as GitHub renders them, with the footnotes that qualify their cells.

A leaderboard README is read with markdown-it-py (CommonMark plus GFM tables and
footnotes), not split on ``|`` by hand: GFM pads a row that has fewer cells than the
header and ignores the excess cells of a longer one, unescapes ``\\|``, and turns
emphasis, links, inline code and ``<br>`` into text. What a reader of the rendered page
would take as a qualifier is kept, never dropped: GFM footnote references (``[^8]``, with
the text of their ``[^8]: ...`` definition, wherever in the document it is) and symbol
markers (``*``, ``†``, ``‡``, ``§``, ``¶``, ``‖``, or ``<sup>x</sup>``) with the text of
their legend line near the table. A marker whose text cannot be found is kept with no
text, so the caller can refuse to draft from it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

#: symbol markers a leaderboard prints after a label, a header or a score
SYMBOLS = "†‡§¶‖☆★✝⋆♠♣♦♥"
_SYMBOL_RUN = re.compile(r"(\*+|" + "|".join(f"{c}+" for c in SYMBOLS) + ")")
_TRAILING_MARKS = re.compile(rf"(?:\s*(?:\\?\*|[{SYMBOLS}]))+\s*$")
_TRAILING_SYMBOLS = re.compile(rf"(?:\s*[{SYMBOLS}])+\s*$")
_INNER_SYMBOLS = re.compile(rf"\s*([{SYMBOLS}]+)\s*")
_FOOTNOTE_TEXT = re.compile(r"\s*\[\^([^\]\s]+)\]")
_SUP_MARK = re.compile(rf"^\s*(\*+|[{SYMBOLS}]+|[A-Za-z0-9]{{1,3}})\s*$")
_BR = re.compile(r"^<br\s*/?>$", re.I)
_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s+|\s+#+\s*$")
#: a legend line: an optional list bullet, the marker (maybe in <sup> or emphasis), a separator, the text
_LEGEND = re.compile(
    r"^\s*(?:[-+]\s+)?(?:[*_]{1,2}(?=\S))?(?:<sup>\s*(?P<sup>[^<]{1,3}?)\s*</sup>|(?P<mark>\\\*{1,3}|\*{1,3}|[" + SYMBOLS + "]+))"
    r"(?:[*_]{1,2})?\s*[:=)\-–—]?\s*(?P<text>\S.*?)\s*$"
)
#: "† denotes results with tools", "the asterisk (☆) ... indicates that ...", "marked with * are ..." in a line
_MARK = rf"\\?\*{{1,3}}|[{SYMBOLS}]+"
_DENOTES = re.compile(
    rf"(?:^|[\s(])(?P<mark>{_MARK})\)?(?:[^.;:]{{0,40}}?)\s(?:denotes?|indicates?|means|marks|=)\s+(?:that\s+)?"
    rf"(?P<text>[^.;]+)"
    rf"|marked (?:with|by) (?:an? )?(?:\w+ )?\(?(?P<mark2>{_MARK})\)?\s+(?:are|is|were|was)\s+(?P<text2>[^.;]+)"
)


@attrs.frozen
class Cell:
    """One table cell: ``raw`` as written in the source, ``text`` as a reader sees it, markers apart."""

    raw: str
    text: str
    #: qualifier markers in order: ``[^8]``, ``†``, ``*``, ``<sup>a</sup>``
    markers: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    #: ``**``/``*`` when the whole cell is emphasized, ``~~`` when struck through
    emphasis: str = ""


@attrs.frozen
class Row:
    line: int
    cells: tuple[Cell, ...]
    #: the bold group-header row above it, if any ("Open models")
    group: str = ""


@attrs.frozen
class Table:
    """A GFM table: ``headings`` are its enclosing headings, innermost last."""

    headings: tuple[str, ...]
    line: int
    header: tuple[Cell, ...]
    rows: tuple[Row, ...]
    #: marker -> text of its footnote definition or legend line (``None``: none found)
    notes: dict[str, str | None]

    @property
    def heading(self) -> str:
        return self.headings[-1] if self.headings else ""


def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(footnote_plugin)


def plain_heading(text: str) -> str:
    """A heading as compared: ``#`` marks, emphasis, code ticks and extra spaces removed, case folded."""
    text = _HEADING_MARKS.sub("", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(re.sub(r"[*_`]", "", text).split()).casefold()


def _cell(inline) -> Cell:
    """Render one inline token (a cell or a heading) as plain text, collecting markers and links."""
    rendered = _Inline()
    for tok in inline.children or ():
        rendered.feed(tok)
    text = " ".join("".join(rendered.parts).split())
    text, loose = strip_markers(text)
    markers = loose[0] + rendered.markers + loose[1]
    return Cell(inline.content.strip(), text, tuple(dict.fromkeys(markers)), tuple(rendered.links),
                rendered.emphasis(text))


class _Inline:
    """What one inline token renders to so far: text parts, markers, links, the emphasis every word
    carried, and the text of a ``<sup>`` still open."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.markers: list[str] = []
        self.links: list[str] = []
        self.depth = {"strong": 0, "em": 0, "s": 0}
        self.emphasized = {"strong": True, "em": True, "s": True}
        self.sup: list[str] | None = None

    def feed(self, tok) -> None:
        kind = tok.type
        if kind in ("strong_open", "em_open", "s_open"):
            self.depth[kind[:-5]] += 1
        elif kind in ("strong_close", "em_close", "s_close"):
            self.depth[kind[:-6]] -= 1
        elif kind == "footnote_ref":
            self.markers.append(f"[^{tok.meta['label']}]")
        elif kind == "link_open":
            self.links.append(tok.attrs.get("href", ""))
        elif kind == "html_inline":
            self._html(tok.content.strip())
        elif kind in ("text", "code_inline"):
            self._text(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            self._text(" ")
        # images, closing tags, raw HTML: not part of what the label says

    def _html(self, tag: str) -> None:
        if _BR.match(tag):
            self.parts.append(" ")
        elif tag.lower() == "<sup>":
            self.sup = []
        elif tag.lower() == "</sup>" and self.sup is not None:
            self._close_sup("".join(self.sup))

    def _close_sup(self, inner: str) -> None:
        """A superscript that is a marker is one; any other is text."""
        mark = _SUP_MARK.match(inner)
        if mark:
            self.markers.append(mark.group(1) if _SYMBOL_RUN.fullmatch(mark.group(1)) else f"<sup>{mark.group(1)}</sup>")
        else:
            self.parts.append(inner)
        self.sup = None

    def _text(self, content: str) -> None:
        if self.sup is not None:
            self.sup.append(content)
            return
        self.parts.append(content)
        if content.strip():
            for name in self.emphasized:
                self.emphasized[name] = self.emphasized[name] and self.depth[name] > 0

    def emphasis(self, text: str) -> str:
        """The emphasis every word of a non-empty text carried: ``~~``, ``**``, ``*`` or none."""
        if not text:
            return ""
        return "~~" if self.emphasized["s"] else "**" if self.emphasized["strong"] else "*" if self.emphasized["em"] else ""


def strip_markers(text: str, *, stars: bool = True) -> tuple[str, tuple[list[str], list[str]]]:
    """Take footnote references and symbol markers out of ``text``: (text, (markers inside, trailing markers)).

    A reference the parser left as text (``[^9]`` with no definition) is a marker too.
    ``stars=False`` leaves ``*`` alone (raw Markdown, where it may close an emphasis).
    """
    before: list[str] = []
    after: list[str] = []
    text = _FOOTNOTE_TEXT.sub(lambda m: before.append(f"[^{m.group(1)}]") or "", text)
    trailing = (_TRAILING_MARKS if stars else _TRAILING_SYMBOLS).search(text)
    if trailing and trailing.start() > 0:
        after += _SYMBOL_RUN.findall(trailing.group(0).replace("\\*", "*"))
        text = text[: trailing.start()]
    text = _INNER_SYMBOLS.sub(lambda m: before.append(m.group(1)) or " ", text)
    return " ".join(text.split()), (before, after)


def _legends(lines: Sequence[str]) -> dict[str, str]:
    """Symbol marker -> legend text, from the lines around a table (first legend of a marker wins)."""
    found: dict[str, str] = {}
    for line in lines:
        match = _LEGEND.match(line)
        if match:
            mark = match.group("mark")
            mark = mark.replace("\\", "") if mark else f"<sup>{match.group('sup')}</sup>"
            if match.group("sup") and _SYMBOL_RUN.fullmatch(match.group("sup")):
                mark = match.group("sup")
            found.setdefault(mark, _plain(match.group("text")))
            continue
        for match in _DENOTES.finditer(line):
            mark = (match.group("mark") or match.group("mark2")).replace("\\", "")
            found.setdefault(mark, _plain(match.group("text") or match.group("text2")))
    return found


def _plain(text: str) -> str:
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    return " ".join(re.sub(r"(\*\*|__|`)", "", text).split()).strip(" *_")


def _footnotes(tokens) -> dict[str, str]:
    """``[^label]: text`` definitions, wherever they are in the document."""
    out: dict[str, str] = {}
    label = None
    texts: list[str] = []
    for tok in tokens:
        if tok.type == "footnote_open":
            label, texts = tok.meta.get("label") or str(tok.meta.get("id")), []
        elif tok.type == "footnote_close" and label is not None:
            out[f"[^{label}]"] = " ".join(" ".join(texts).split())
            label = None
        elif label is not None and tok.type == "inline":
            texts.append(_cell(tok).text)
    return out


def tables(text: str) -> list[Table]:
    """Every GFM table of ``text`` with its enclosing headings, group rows and qualifier notes."""
    tokens = _parser().parse(text)
    lines = text.splitlines()
    definitions = _footnotes(tokens)
    # heading positions, to bound the lines a table's legend may be on
    heading_lines = [tok.map[0] for tok in tokens if tok.type == "heading_open" and tok.map]
    found: list[Table] = []
    stack: list[tuple[int, str]] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.type == "heading_open":
            stack = _enter_heading(stack, int(tok.tag[1:]), _cell(tokens[i + 1]).text)
        elif tok.type == "table_open":
            end = next(j for j in range(i, len(tokens)) if tokens[j].type == "table_close")
            found.append(_table(tokens[i:end + 1], tuple(t for _, t in stack), lines, heading_lines, definitions))
            i = end
        i += 1
    return found


def _enter_heading(stack: list[tuple[int, str]], level: int, text: str) -> list[tuple[int, str]]:
    """The enclosing headings after a heading of ``level``: it replaces those at its level or deeper."""
    return [(lv, t) for lv, t in stack if lv < level] + [(level, text)]


def _table(tokens, headings, lines, heading_lines, definitions) -> Table:
    start, stop = tokens[0].map
    rows = _rows(tokens, start)
    header, body = rows[0], rows[1:]
    # legend lines: from the heading above the table to the next heading below it
    above = max([h for h in heading_lines if h < start], default=-1) + 1
    below = min([h for h in heading_lines if h >= stop], default=len(lines))
    legends = _legends([*lines[above:start], *lines[stop:below]])
    out_rows = _grouped(body)
    notes: dict[str, str | None] = {}
    for cell in (*header[1], *(c for r in out_rows for c in r.cells)):
        for mark in cell.markers:
            notes.setdefault(mark, definitions.get(mark) if mark.startswith("[^") else legends.get(mark))
    return Table(headings, header[0], tuple(header[1]), tuple(out_rows), notes)


def _rows(tokens, start: int) -> list[tuple[int, list[Cell]]]:
    """Every table row (header first) as its 1-based line and its rendered cells."""
    rows: list[tuple[int, list[Cell]]] = []
    line = start
    for tok in tokens:
        if tok.type == "tr_open":
            line = tok.map[0] if tok.map else line
            rows.append((line + 1, []))
        elif tok.type == "inline":
            rows[-1][1].append(_cell(tok))
    return rows


def _grouped(body: list[tuple[int, list[Cell]]]) -> list[Row]:
    """The body rows with data, each in the group its last group row (one emphasised cell alone) opened."""
    out_rows: list[Row] = []
    group = ""
    for number, cells in body:
        filled = [c for c in cells if c.text or c.markers]
        if not filled:
            continue
        if len(filled) == 1 and filled[0].emphasis in ("**", "*") and not filled[0].markers:
            group = filled[0].text
            continue
        out_rows.append(Row(number, tuple(cells), group))
    return out_rows


