"""Where a README explains the markers of a table, and what prose under a table says about it.

A marker's meaning is read only from text a reader of the rendered page would connect to
the table: the text between the table and its neighbours in the same section (the nearest
heading or table above and below), and, for a marker still unexplained, the opening text
of an enclosing section before its first sub-heading. Another section's legend is never
borrowed. Two different legends for one marker in that scope are kept both, so the caller
can say the marker is ambiguous instead of picking one.

Legend lines take the forms maintainers write: ``† with tools``, ``\\*\\* for comparison
only`` (escaped Markdown), ``[1] Moatless v0.0.3 ...``, ``¹ ...``, ``<sup>[1]</sup> ...``,
``1. ...`` (a numbered list), ``Note: ‡ denotes ...`` and ``scores marked with an asterisk (*)
are ...``; a note line takes the lines that continue it.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Callable, Iterable, Sequence

from hfmigrate_checks.source import naming, qualifiers

SYMBOLS = "†‡§¶‖☆★✝⋆♠♣♦♥"
SUPERSCRIPT_DIGITS = "⁰¹²³⁴⁵⁶⁷⁸⁹"
_TO_DIGITS = str.maketrans(SUPERSCRIPT_DIGITS, "0123456789")
#: a marker as written in a legend line
_MARK = rf"(?:\\\*){{1,3}}|\*{{1,3}}|\[\d{{1,2}}\]|[{SUPERSCRIPT_DIGITS}]+|[{SYMBOLS}]+"
_LEGEND = re.compile(
    r"^\s*(?:[-+]\s+)?(?:[*_]{1,2}(?=\S))?(?:<sup>\s*(?P<sup>[^<]{1,4}?)\s*</sup>|(?P<mark>" + _MARK + ")"
    r"|(?P<item>\d{1,2})\.(?=\s))"
    r"(?:[*_]{1,2})?\s*[:=)\-–—]?\s*(?P<text>\S.*?)\s*$"
)
_DENOTES = re.compile(
    rf"(?:^|[\s(])(?P<mark>{_MARK})\)?(?:[^.;:]{{0,40}}?)\s(?:denotes?|indicates?|means|marks|=)\s+(?:that\s+)?"
    rf"(?P<text>[^.;]+)"
    rf"|marked (?:with|by) (?:an? )?(?:\w+ )?\(?(?P<mark2>{_MARK})\)?\s+(?:are|is|were|was)\s+(?P<text2>[^.;]+)"
)
_FOOTNOTE_DEFINITION = re.compile(r"^\s*\[\^[^\]]+\]:")
_CLOSING_TAG = re.compile(r"^\s*</\w+>\s*$")
#: lines that end a paragraph: a heading, a table row, a block-level tag, a fence
_NOT_PROSE = re.compile(r"^\s*(?:#|\||```|<(?!/?(?:sup|sub|small|em|i|b|strong|p)\b))")
#: a quote or alert prefix: "> ", "> [!NOTE]"
_QUOTE = re.compile(r"^\s*(?:>\s*)+(?:\[![A-Z]+\]\s*)?")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9*†‡])")


def marker(written: str) -> str:
    """One spelling per marker: ``\\*`` is ``*``, ``¹`` and ``<sup>1</sup>`` and ``[1]`` are ``[1]``."""
    text = written.replace("\\", "").strip()
    digits = text.translate(_TO_DIGITS).strip("[]")
    if digits.isdigit() and len(digits) <= 2:
        return f"[{int(digits)}]"
    if re.fullmatch(rf"\*+|[{SYMBOLS}]+", text):
        return text
    return f"<sup>{text}</sup>"


def legends(lines: Iterable[str]) -> dict[str, list[str]]:
    """Marker -> every different legend text found in ``lines``, in order. A note that goes on over
    the next lines (``[1] Moatless v0.0.3, ...`` wrapped) is read to the end of its paragraph."""
    found: dict[str, list[str]] = {}
    for mark, text in _notes(lines):
        texts = found.setdefault(mark, [])
        if text and text not in texts:
            texts.append(text)
    return found


def _notes(lines: Iterable[str]) -> list[tuple[str, str]]:
    """(marker, text) of every legend, a note line joined with the lines that continue it."""
    lines = list(lines)
    out: list[tuple[str, list[str]]] = []  # a note's text in parts, joined once (joining per line is quadratic)
    for line, (pairs, is_note) in zip(lines, _scan(lines)):
        if pairs:
            out += [(mark, [text]) for mark, text in pairs]
        elif is_note:
            out[-1][1].append(plain(line))
    return [(mark, " ".join(parts)) for mark, parts in out]


def _note_lines(lines: Sequence[str]) -> list[bool]:
    """Per line: whether it is a legend, or continues the note of a legend line above it."""
    return [is_note for _, is_note in _scan(lines)]


def _scan(lines: Sequence[str]) -> list[tuple[list[tuple[str, str]], bool]]:
    """Per line: its legends, and whether it is a legend or continues the note of a legend line above it."""
    out, open_note = [], False
    for line in lines:
        pairs = _legend_pairs(line)
        if pairs:
            open_note = bool(_LEGEND.match(html.unescape(line)))
        else:
            open_note = open_note and bool(line.strip()) and not _NOT_PROSE.match(line)
        out.append((pairs, bool(pairs) or open_note))
    return out


def _legend_pairs(line: str) -> list[tuple[str, str]]:
    line = html.unescape(line)  # "&dagger; uses tools" renders as "† uses tools"
    match = _LEGEND.match(line)
    if match:
        written = match.group("sup") or match.group("mark") or match.group("item")
        return [(marker(written), plain(match.group("text")))]
    return [
        (marker(m.group("mark") or m.group("mark2")), plain(m.group("text") or m.group("text2")))
        for m in _DENOTES.finditer(line)
    ]


def plain(text: str) -> str:
    """Legend text as read: links as their text, no tags, no emphasis marks or escapes."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", " ", text)
    text = text.replace("\\", "")
    return " ".join(re.sub(r"(\*\*|__|`)", "", text).split()).strip(" *_")


def table_notes(
    markers: Iterable[str], own: Sequence[str], outer: Callable[[str], list[str]], definitions: dict[str, str]
) -> dict[str, tuple[str, ...]]:
    """Marker -> its texts: a ``[^x]`` definition, else the legends of the table's own text, else of
    its enclosing sections' opening text (``outer``, see :mod:`scopes`); ``()`` when none is found."""
    mine = legends(own)
    notes: dict[str, tuple[str, ...]] = {}
    for mark in markers:
        if mark.startswith("[^"):
            notes[mark] = (definitions[mark],) if mark in definitions else ()
        else:
            notes[mark] = tuple(mine.get(mark) or outer(mark))
    return notes


def prose_under(lines: Sequence[str], stop: int, names: Iterable[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Sentences of the paragraph directly under a table that qualify it, with the names each speaks of.

    "SimpleQA and HotpotQA were run with search tools" under a table qualifies those columns
    (or rows) although it carries no marker; a sentence naming none that says how the run was
    done ("tested at varying temperature settings") qualifies the whole table (no names).
    """
    out = []
    sentences = list(filter(None, _SENTENCE.split(_paragraph_under(lines, stop))))
    index = naming.NameIndex(names if sentences else ())
    for sentence in sentences:
        named = index.named_in(sentence)
        if named or qualifiers.classify(sentence) == qualifiers.RUN:
            out.append((sentence.strip(), named))
    return out


def _paragraph_under(lines: Sequence[str], stop: int) -> str:
    """The plain text of the paragraph under a table, legend and footnote lines left out; it may sit
    after the closing tag of a wrapper (``</div>``), in a quote or an alert (``> [!NOTE]``) or in
    ``<sup>`` small print."""
    n = stop
    while n < len(lines) and (not lines[n].strip() or _CLOSING_TAG.match(lines[n])):
        n += 1
    if n > stop + 3:
        return ""
    block = itertools.takewhile(lambda line: line.strip() and not _NOT_PROSE.match(line), lines[n:])
    unquoted = [_QUOTE.sub("", line) for line in block]
    return plain(" ".join(line.strip() for line, note in zip(unquoted, _note_lines(unquoted)) if _is_prose(line, note)))


def _is_prose(line: str, note: bool) -> bool:
    return bool(line.strip()) and not note and not _FOOTNOTE_DEFINITION.match(line)
