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
#: a legend's text in a sentence: up to a full stop that ends it ("GPT-3.5" goes on) or a semicolon
_TO_SENTENCE_END = r"(?:[^.;]|\.(?=\S))+"
_DENOTES = re.compile(
    rf"(?:^|[\s(])(?P<mark>{_MARK})\)?(?:[^.;:]{{0,40}}?)\s(?:denotes?|indicates?|means|marks|=)\s+(?:that\s+)?"
    rf"(?P<text>{_TO_SENTENCE_END})"
    rf"|marked (?:with|by) (?:an? )?(?:\w+ )?\(?(?P<mark2>{_MARK})\)?\s+(?:are|is|were|was)\s+"
    rf"(?P<text2>{_TO_SENTENCE_END})"
)
#: a line that opens with emphasis, not a marker: ``**Limitations:** ...``, a bold bullet ``* **Speed**: ...``
_EMPHASIS_START = re.compile(rf"^\s*(?:[-+*]\s+)?(\*{{1,3}}|_{{1,3}})(?=[^\s*_{SYMBOLS}\[\d<])[^*_]*?(?<=\S)\1")
_FOOTNOTE_DEFINITION = re.compile(r"^\s*\[\^[^\]]+\]:")
_CLOSING_TAG = re.compile(r"^\s*</\w+>\s*$")
#: lines that end a paragraph: a heading, a table row, a block-level tag, a fence
_NOT_PROSE = re.compile(r"^\s*(?:#|\||```|<(?!/?(?:sup|sub|small|em|i|b|strong|p)\b))")
#: a quote or alert prefix: "> ", "> [!NOTE]"
_QUOTE = re.compile(r"^\s*(?:>\s*)+(?:\[![A-Z]+\]\s*)?")
#: an opening or closing wrapper tag alone on its line (``<div align="center">``, ``</details>``)
_WRAPPER_TAG = re.compile(r"^\s*</?(?:div|p|center|details|summary)\b[^>]*>\s*$", re.I)
_TABLE_START = re.compile(r"^\s*(?:\||<table\b)", re.I)
#: a paragraph that is a note: "Note:", "**Notes**", "NB:", or an alert ("> [!NOTE]")
_NOTE_START = re.compile(r"^\s*(?:>\s*)*(?:\[!\w+\]|[*_]*(?:notes?|nb|remarks?)\b)", re.I)
#: words by which a sentence naming no row or column speaks of the table's results
_OF_THE_TABLE = re.compile(
    r"\b(?:tables?|above|below|results?|scores?|numbers|benchmarks?|tasks?|models?|evaluat\w*|tested|measured"
    r"|metrics?|leaderboard)\b",
    re.I,
)
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
            open_note = bool(_LEGEND.match(html.unescape(line))) and not _EMPHASIS_START.match(line)
        else:
            open_note = open_note and bool(line.strip()) and not _NOT_PROSE.match(line)
        out.append((pairs, bool(pairs) or open_note))
    return out


def _legend_pairs(line: str) -> list[tuple[str, str]]:
    line = html.unescape(line)  # "&dagger; uses tools" renders as "† uses tools"
    match = None if _EMPHASIS_START.match(line) else _LEGEND.match(line)
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


def prose_around(
    lines: Sequence[str], start: int, stop: int, names: Iterable[str]
) -> list[tuple[str, tuple[str, ...]]]:
    """Sentences of the paragraphs directly above and under a table that qualify it, with the names
    each speaks of.

    "SimpleQA and HotpotQA were run with search tools" under a table qualifies those columns
    (or rows) although it carries no marker. A sentence naming none of them counts only when it
    says how the run was done *and* speaks of the table's results ("small benchmarks are run at
    several temperature settings" qualifies the whole table, no names); a run word in a sentence
    about something else ("the code interpreter is open source") does not make it a note. A note
    paragraph ("Note: ...", an alert) that names a row or column in any sentence is kept whole,
    so what its other sentences say reaches that row. The paragraph under a table that leads
    into the next table is that table's, not this one's. ``names`` are read only when there is a
    sentence to look for them in.
    """
    index = None
    out = []
    for paragraph, note in (_paragraph_above(lines, start), _paragraph_under(lines, stop)):
        sentences = [s.strip() for s in _SENTENCE.split(paragraph) if s.strip()]
        if sentences and index is None:
            index = naming.NameIndex(names)
        named = [index.named_in(s) for s in sentences]
        if note and any(named):
            out.append((" ".join(sentences), tuple(dict.fromkeys(n for each in named for n in each))))
            continue
        out += [
            (sentence, found)
            for sentence, found in zip(sentences, named)
            if found or (qualifiers.classify(sentence) == qualifiers.RUN and _OF_THE_TABLE.search(sentence))
        ]
    return out


def _paragraph_under(lines: Sequence[str], stop: int) -> tuple[str, bool]:
    """The plain text of the paragraph under a table, legend and footnote lines left out, and whether it is
    a note; it may sit after the closing tag of a wrapper (``</div>``), in a quote or an alert (``> [!NOTE]``)
    or in ``<sup>`` small print. A paragraph followed by the next table introduces that table: ``""``."""
    n = stop
    while n < len(lines) and (not lines[n].strip() or _CLOSING_TAG.match(lines[n])):
        n += 1
    if n > stop + 3:
        return "", False
    block = list(itertools.takewhile(lambda line: line.strip() and not _NOT_PROSE.match(line), lines[n:]))
    if _leads_into_a_table(lines, n + len(block)):
        return "", False
    return _paragraph_text(block)


def _paragraph_above(lines: Sequence[str], start: int) -> tuple[str, bool]:
    """The paragraph directly above a table (``Results with 5-shot prompting:``), read like the one under it."""
    n = start
    while n > 0 and (not lines[n - 1].strip() or _WRAPPER_TAG.match(lines[n - 1])):
        n -= 1
    if n < start - 3:
        return "", False
    first = n
    while first > 0 and lines[first - 1].strip() and not _NOT_PROSE.match(lines[first - 1]):
        first -= 1
    return _paragraph_text(lines[first:n])


def _leads_into_a_table(lines: Sequence[str], n: int) -> bool:
    """Whether a table starts after line index ``n``, past blank lines and wrapper tags."""
    while n < len(lines) and (not lines[n].strip() or _WRAPPER_TAG.match(lines[n])):
        n += 1
    return n < len(lines) and bool(_TABLE_START.match(lines[n]))


def _paragraph_text(block: Sequence[str]) -> tuple[str, bool]:
    """A paragraph's prose as plain text (legend and footnote lines left out), and whether it is a note."""
    note = bool(block) and bool(_NOTE_START.match(block[0]))
    unquoted = [_QUOTE.sub("", line) for line in block]
    text = plain(" ".join(line.strip() for line, flag in zip(unquoted, _note_lines(unquoted)) if _is_prose(line, flag)))
    return text, note


def _is_prose(line: str, note: bool) -> bool:
    return bool(line.strip()) and not note and not _FOOTNOTE_DEFINITION.match(line)
