"""Markdown table cells exactly as GitHub renders them, with the markers that qualify them.

A leaderboard README is read with markdown-it-py (CommonMark plus GFM tables and
footnotes), not split on ``|`` by hand: GFM pads a row that has fewer cells than the
header and ignores the excess cells of a longer one, unescapes ``\\|``, and turns
emphasis, links, inline code and ``<br>`` into text. What a reader of the rendered page
would take as a qualifier is kept, never dropped: GFM footnote references (``[^8]``, with
the text of their ``[^8]: ...`` definition, wherever in the document it is) and symbol
markers (``*``, ``†``, ``‡``, ``§``, ``¶``, ``‖``, or ``<sup>x</sup>``) with the text of
their legend line near the table. A marker whose text cannot be found is kept with no
text, so the caller can refuse to draft from it. The tables themselves are assembled in
:mod:`hfmigrate_checks.source.document`.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import attrs

from hfmigrate_checks.source import notes

SYMBOLS = notes.SYMBOLS
_SYMBOL_RUN = re.compile(r"(\*+|" + "|".join(f"{c}+" for c in SYMBOLS) + ")")
_TRAILING_MARKS = re.compile(rf"(?:\s*(?:\\?\*|[{SYMBOLS}]))+\s*$")
_TRAILING_SYMBOLS = re.compile(rf"(?:\s*[{SYMBOLS}])+\s*$")
_INNER_SYMBOLS = re.compile(rf"\s*([{SYMBOLS}]+)\s*")
_FOOTNOTE_TEXT = re.compile(r"\s*\[\^([^\]\s]+)\]")
#: numbered notes printed as text: ``Moatless[1]``, ``71.2 [2]``, ``Sable¹``
_NUMBERED = re.compile(rf"\s*(\[\d{{1,2}}\]|(?<!\b[A-Za-z])[{notes.SUPERSCRIPT_DIGITS}]+)(?=\s|$|[^\w(])")
_SUP_MARK = re.compile(rf"^\s*(\*+|[{SYMBOLS}]+|\[\d{{1,2}}\]|[A-Za-z0-9]{{1,3}})\s*$")
_BR = re.compile(r"^<br\s*/?>$", re.I)
#: a character every marker is written with: ``[`` (``[^8]``, ``[1]``), ``*``, ``\\``, a symbol, a superscript digit
_ANY_MARK = re.compile(rf"[\[*\\{SYMBOLS}{notes.SUPERSCRIPT_DIGITS}]")
#: an inline tag: its closing slash, its name, and a self-closing slash (a malformed ``<u/>`` closes nothing)
_TAG = re.compile(r"^<(/?)([A-Za-z][\w-]*)[^<>]*?(/?)>$")
#: the HTML tags that emphasize or strike through, by the emphasis they give (only these strike through)
HTML_EMPHASIS = {"b": "strong", "strong": "strong", "i": "em", "em": "em", "s": "s", "del": "s", "strike": "s"}
_HEADING_MARKS = re.compile(r"^\s*#{1,6}\s+|\s+#+\s*$")


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


@functools.cache
def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.footnote import footnote_plugin

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).use(footnote_plugin)
    md.core.ruler.at("inline", _inline_where_read)
    return md


#: a character some inline rule starts at (emphasis, code, links, footnotes, HTML, entities, escapes,
#: strike-through); text without one parses to a single text token
_INLINE_SYNTAX = re.compile(r"[\\`*_\[\]<>&!~\n]")
#: tokens whose inline content is read: table cells, footnote definitions (between these) and headings
_READ_INSIDE = {"table_open": 1, "table_close": -1, "footnote_reference_open": 1, "footnote_reference_close": -1}


def _inline_where_read(state) -> None:
    """The parser's inline step, run only on what is read as cells: table cells, headings and footnote
    definitions (and the one line :func:`render` parses), and only on text with inline syntax. Prose is read from the source lines
    (:mod:`notes`), so a paragraph of 400,000 lines never becomes millions of tokens (it took 9 s and
    380 MB)."""
    depth, heading = 0, False
    for token in state.tokens:
        depth += _READ_INSIDE.get(token.type, 0)
        read = token.type == "inline" and (depth > 0 or heading or state.inlineMode)
        if read and _INLINE_SYNTAX.search(token.content):
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)
        # plain text is left without children: :func:`cell` reads its content as the one text token the
        # parser would make of it, and a table of 25,000 rows does not build 75,000 tokens for that
        heading = token.type == "heading_open"


def plain_heading(text: str) -> str:
    """A heading as compared: ``#`` marks, emphasis, code ticks, emoji and extra spaces removed, case folded."""
    text = _HEADING_MARKS.sub("", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = "".join(ch for ch in re.sub(r"[*_`]", "", text) if unicodedata.category(ch) != "So")  # emoji
    return " ".join(text.split()).casefold()


def cell(inline) -> Cell:
    """Render one inline token (a cell or a heading) as plain text, collecting markers and links."""
    children = inline.children or ()
    if not children and not _INLINE_SYNTAX.search(inline.content):  # plain text: no markup to render
        text = " ".join(inline.content.split())
        if not _ANY_MARK.search(text):  # most cells: no marker either
            return Cell(inline.content.strip(), text)
        text, (before, after) = strip_markers(text)
        return Cell(inline.content.strip(), text, tuple(dict.fromkeys(before + after)))
    rendered = Inline()
    for tok in children:
        rendered.feed(tok)
    text = " ".join("".join(rendered.parts).split())
    text, loose = strip_markers(text)
    markers = loose[0] + rendered.markers + loose[1]
    return Cell(
        inline.content.strip(), text, tuple(dict.fromkeys(markers)), tuple(rendered.links), rendered.emphasis(text)
    )


class Inline:
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
            self.add_text(tok.content)
        elif kind in ("softbreak", "hardbreak"):
            self.add_text(" ")
        # images, closing tags, raw HTML: not part of what the label says

    def _html(self, tag: str) -> None:
        """An inline tag as GitHub renders it: a break, a superscript, emphasis or strike-through; any
        other tag (``<u>``, ``<span>``) shows only its text."""
        found = _TAG.match(tag)
        name = found.group(2).lower() if found else ""
        closing = bool(found and found.group(1))
        if _BR.match(tag):
            self.parts.append(" ")
        elif name == "sup" and not closing:
            self.sup = []
        elif name == "sup" and self.sup is not None:
            self.close_sup("".join(self.sup))
        elif name in HTML_EMPHASIS and not found.group(3):
            self.tag(name, opening=not closing)

    def tag(self, name: str, *, opening: bool) -> None:
        """An emphasis tag opened or closed (a closing tag with no opening one changes nothing)."""
        kind = HTML_EMPHASIS[name]
        self.depth[kind] = max(0, self.depth[kind] + (1 if opening else -1))

    def close_sup(self, inner: str) -> None:
        """A superscript that is a marker (or a list of them, ``<sup>1, 2</sup>``) is one; any other is
        text, set in superscript: it is neither emphasized nor struck through."""
        marks = [_SUP_MARK.match(part) for part in inner.split(",")]
        self.sup = None
        if all(marks):
            self.markers += [notes.marker(mark.group(1)) for mark in marks]
        else:
            self.add_text(inner)

    def add_text(self, content: str) -> None:
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
        return (
            "~~"
            if self.emphasized["s"]
            else "**"
            if self.emphasized["strong"]
            else "*"
            if self.emphasized["em"]
            else ""
        )


def strip_markers(text: str, *, stars: bool = True) -> tuple[str, tuple[list[str], list[str]]]:
    """Take footnote references and symbol markers out of ``text``: (text, (markers inside, trailing markers)).

    A reference the parser left as text (``[^9]`` with no definition) is a marker too.
    ``stars=False`` leaves ``*`` alone (raw Markdown, where it may close an emphasis).
    """
    before: list[str] = []
    after: list[str] = []
    if not _ANY_MARK.search(text):  # most cells: nothing a marker is written with
        return " ".join(text.split()), (before, after)
    text = _FOOTNOTE_TEXT.sub(lambda m: before.append(f"[^{m.group(1)}]") or "", text)
    text = _NUMBERED.sub(lambda m: before.append(notes.marker(m.group(1))) or "", text)
    trailing = (_TRAILING_MARKS if stars else _TRAILING_SYMBOLS).search(text)
    if trailing and trailing.start() > 0:
        after += _SYMBOL_RUN.findall(trailing.group(0).replace("\\*", "*"))
        text = text[: trailing.start()]
    text = _INNER_SYMBOLS.sub(lambda m: before.append(m.group(1)) or " ", text)
    return " ".join(text.split()), (before, after)


def footnotes(tokens) -> dict[str, str]:
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
            texts.append(cell(tok).text)
    return out


def render(text: str) -> Cell:
    """One line of Markdown with inline HTML (a printed cell) rendered as a cell is: text, markers, emphasis."""
    tokens = _parser().parseInline(text)
    return cell(tokens[0]) if tokens else Cell(text, text)


def parse(text: str):
    """The markdown-it token stream of a document, as GitHub's GFM parser would see its blocks."""
    return _parser().parse(text)


def gfm_rows(tokens) -> list[tuple[int, list[Cell]]]:
    """Every row of one GFM table's tokens (header first) as its 1-based line and its rendered cells."""
    rows: list[tuple[int, list[Cell]]] = []
    line = tokens[0].map[0]
    for tok in tokens:
        if tok.type == "tr_open":
            line = tok.map[0] if tok.map else line
            rows.append((line + 1, []))
        elif tok.type == "inline":
            rows[-1][1].append(cell(tok))
    return rows
