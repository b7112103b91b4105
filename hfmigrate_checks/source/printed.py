"""A printed score cell, a table as an importer read it, and the ledger row a score becomes.

A cell is a number only when it is cleanly one: emphasis, a link and footnote markers
around it are taken apart and kept, an uncertainty (``70.1 ± 0.3``, ``70.1 (±0.3)``) is
kept as the value's uncertainty, and anything else is not a score and says why. These
types are shared by the importers (:mod:`ledger`) and the judging of rows (:mod:`scores`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs

from hfmigrate_checks.source import mdtable

OK = "ok"
NEEDS_REVIEW = "needs_review"
#: the marker a sentence under a table is kept under ("[note under the table]", "[note under the table 2]")
PROSE_MARKER = "[note under the table"
#: the markers a table's surroundings are kept under ("[collapsed section] Five-shot", "[heading] Zero-shot")
CONTEXT_MARKERS = ("[collapsed section", "[heading", "[caption")
#: phrases of the reasons a row needs review; a ledger row whose qualifiers hold one stays needs_review
#: whatever its status column says (a hand edit cannot clear it)
REVIEW_SIGNS = (
    "has no footnote definition or legend line",
    "different legends near the table",
    "a reviewer must decide",
    "the model label is struck through",
    "tells the printings apart",
    "prints the same models and benchmarks",
    "a reviewer must read them",
)
#: ASCII digits only: float() would also read other scripts' digits, which no leaderboard means as a number
NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)
LEADING_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*)$", re.S | re.ASCII)
EMPHASIS = re.compile(r"^(\*\*|__|\*|_)(.+)\1$", re.S)
MD_LINK = re.compile(r"^\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)(?:\s+\"[^\"]*\")?\)$")
MAX_CELL = 500
#: an inline HTML tag in a printed value (``<u>56.9<u/>``, ``<b>``): the value is read as GitHub renders it
_INLINE_TAG = re.compile(r"</?[A-Za-z][\w-]*[^<>]*>")
_NUM = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
#: ``70.1 ± 0.3``, ``70.1 +/- 0.3``, ``70.1 (±0.3)``: a value and its printed uncertainty
UNCERTAINTY = re.compile(rf"^({_NUM})\s*(?:(?:±|\+/-|\+-)\s*({_NUM})|\(\s*(?:±|\+/-)\s*({_NUM})\s*\))$", re.ASCII)
#: what leaderboards print where a model has no score
NO_SCORE = frozenset({"-", "--", "—", "–", "n/a", "N/A", "NA", "na", "N/a", "?", "x", "✗", "TBD", "tbd"})


#: how a row says the maintainer dropped a column (--drop-column): the review bundle lists these
_DROPPED = "column {!r} dropped by the maintainer, stated not to change what was run (--drop-column)"
_DROPPED_NAME = re.compile(r"^column (?P<name>'.*'|\".*\") dropped by the maintainer, stated not")


def dropped(column: str) -> str:
    """The qualifier a row carries for a column the maintainer dropped."""
    return _DROPPED.format(column)


def dropped_columns(qualifiers: str) -> list[str]:
    """The dropped columns a row's qualifiers name, as written there (quoted)."""
    return [m.group("name") for part in qualifiers.split("; ") if (m := _DROPPED_NAME.match(part))]


@attrs.frozen
class Cell:
    """What a printed cell says: a number only if it is cleanly one, else the reason it is not."""

    value: float | None
    unit: str
    qualifiers: str
    status: str
    #: the number exactly as printed, without emphasis, link or unit
    number: str = ""
    #: footnote and symbol markers printed in the cell (their meaning lives in the row's qualifiers)
    markers: tuple[str, ...] = ()
    #: the uncertainty printed with the value (``0.3`` of ``70.1 ± 0.3``), as printed
    uncertainty: str = ""


def parse_cell(text: str) -> Cell:
    """Classify a printed score; anything but one clean number is ``needs_review``.

    Footnote and symbol markers (``81.2†``, ``81.2 [^3]``) are taken apart: the number is
    read, but the cell stays ``needs_review`` until the marker's meaning is known (the
    Markdown importer finds it in the table's footnotes and legend). Inline HTML is reduced to
    the text it renders to, the same way for a ledger value as for a table cell, so a value
    the ledger called a number is one when a draft is made from it.
    """
    text = text.strip()
    if NUMBER.match(text):  # most score cells: one clean number, nothing around it to take apart
        number = float(text)
        if abs(number) != float("inf"):
            return Cell(number, "", "", OK, text)
    text, qualifiers, html_markers = _rendered(text)
    if text is None:
        return Cell(None, "", "; ".join(qualifiers), NEEDS_REVIEW)
    inner, unwrapped, markers = _unwrapped(text)
    qualifiers += unwrapped
    markers = tuple(dict.fromkeys((*html_markers, *markers)))
    unit = ""
    if inner.endswith("%") and NUMBER.match(inner[:-1].strip()):
        unit, inner = "%", inner[:-1].strip()
    spread = UNCERTAINTY.match(inner)
    uncertainty = ""
    if spread:
        inner, uncertainty = spread.group(1), spread.group(2) or spread.group(3)
        qualifiers.append(f"uncertainty ± {uncertainty} printed with the score")
    if NUMBER.match(inner):
        number = float(inner)
        if number == number and abs(number) != float("inf"):
            if markers:
                qualifiers.append("marker(s) " + " ".join(markers) + " printed with the score")
                return Cell(number, unit, "; ".join(qualifiers), NEEDS_REVIEW, inner, markers, uncertainty)
            return Cell(number, unit, "; ".join(qualifiers), OK, inner, uncertainty=uncertainty)
    return Cell(None, unit, "; ".join([*qualifiers, _not_a_score(inner)]), NEEDS_REVIEW, markers=markers)


def _rendered(text: str) -> tuple[str | None, list[str], tuple[str, ...]]:
    """The text a value with inline HTML renders to, what its markup said, and its ``<sup>`` markers;
    ``None`` for a value struck through (``<s>``, ``<del>``, ``<strike>``)."""
    if not _INLINE_TAG.search(text):
        return text, [], ()
    shown = mdtable.render(text)
    if shown.emphasis == "~~":
        return None, ["struck through in source"], ()
    said = ["inline HTML reduced to its text"]
    said += [f"emphasis {shown.emphasis} in source"] if shown.emphasis else []
    said += [f"linked to {url}" for url in shown.links]
    return shown.text, said, shown.markers


def _unwrapped(inner: str) -> tuple[str, list[str], tuple[str, ...]]:
    """The cell's text without emphasis, link and markers around it; what each said, and the markers."""
    qualifiers: list[str] = []
    markers: list[str] = []
    while True:
        emph = EMPHASIS.match(inner)
        link = MD_LINK.match(inner)
        if emph:
            qualifiers.append(f"emphasis {emph.group(1)} in source")
            inner = emph.group(2).strip()
            continue
        if link:
            qualifiers.append(f"linked to {link.group('url')}")
            inner = link.group("text").strip()
            continue
        stripped, (before, after) = mdtable.strip_markers(inner, stars=not inner.startswith(("*", "_")))
        if stripped == inner:
            return inner, qualifiers, tuple(dict.fromkeys(markers))
        inner, markers = stripped, markers + before + after


def _not_a_score(inner: str) -> str:
    """Why the text is not one clean number."""
    if not inner:
        return "empty cell"
    if inner in NO_SCORE:
        return f"no score printed ({inner!r})"
    lead = LEADING_NUMBER.match(inner)
    if lead and lead.group(2):
        return f"not one clean number: {lead.group(2)!r} follows {lead.group(1)}"
    return f"not a number: {inner!r}"


def split_link(label: str) -> tuple[str, str]:
    match = MD_LINK.match(label.strip())
    return (match.group("text").strip(), match.group("url")) if match else (label.strip(), "")


@attrs.frozen
class Record:
    """One table row: where it is printed, its cells by column, and the group-header row above it."""

    locator: str
    cells: Mapping[str, str | mdtable.Cell]
    group: str = ""
    #: markers that qualify every score of the row (a sentence under the table naming it)
    markers: tuple[str, ...] = ()


@attrs.frozen
class Records:
    """A table read by an importer: its columns and rows (:class:`Record`).

    A cell is the text of a CSV or dataset cell, or a :class:`mdtable.Cell` for Markdown,
    which also carries the cell's footnote markers; ``notes`` gives each marker's text
    (empty: no definition or legend found; two or more: ambiguous), ``column_markers`` the
    markers printed in a column's header, which qualify every score of that column, and
    ``parts`` each column's (group, sub-column) under a two-level header.
    """

    columns: tuple[str, ...]
    rows: tuple[Record, ...]
    notes: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    column_markers: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    parts: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
    #: reasons every score of the table needs review (context around it no one can attribute)
    review: tuple[str, ...] = ()
    #: (row labels, columns, reason): the scores a sibling table also prints, when nothing run-related
    #: tells the two apart (a row label is the text of the row's first cell)
    shared: tuple[tuple[frozenset, frozenset, str], ...] = ()


@attrs.frozen
class LedgerRow:
    """One published score; ``source_value`` is the text as printed."""

    source_model: str
    source_task: str
    source_value: str
    source_locator: str
    source_variant: str = ""
    source_unit: str = ""
    source_url: str = ""
    qualifiers: str = ""
    status: str = OK
    #: a link printed with the model label (a Hub URL is a resolution candidate)
    source_link: str = ""
    #: the evaluation date, only when the source states it
    eval_date: str = ""
    #: a verifyToken supplied by the user for exactly this run (importers never fill it)
    verify_token: str = ""

    @property
    def cell(self) -> Cell:
        return parse_cell(self.source_value)

    @property
    def value(self) -> float | None:
        return self.cell.value if self.status == OK else None
