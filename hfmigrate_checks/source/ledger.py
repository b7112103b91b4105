"""The source ledger: one row per published score, exactly as printed, with where it was printed.

Importers read a CSV file, a Markdown table (picked by the heading above it) or a
leaderboard dataset file through DuckDB. None of them averages, converts, picks a best
run or drops a footnote: a cell that is not cleanly one number keeps its text and its
qualifier and is marked ``needs_review``, and nothing is drafted from it.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import attrs

from checks import InputError
from checks.io import csv_text, interrupted_query_aborts, read_text, spreadsheet_value, write_text
from hfmigrate_checks.source import mdtable, qualifiers
from hfmigrate_checks.evalresults.evalfile import date_problem

OK = "ok"
NEEDS_REVIEW = "needs_review"
COLUMNS = (
    "source_model",
    "source_variant",
    "source_task",
    "source_value",
    "source_unit",
    "source_url",
    "source_locator",
    "qualifiers",
    "status",
    "source_link",
    "eval_date",
    "verify_token",
)
REQUIRED_COLUMNS = ("source_model", "source_task", "source_value", "source_locator")
#: ASCII digits only: float() would also read other scripts' digits, which no leaderboard means as a number
NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)
LEADING_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*(.*)$", re.S | re.ASCII)
EMPHASIS = re.compile(r"^(\*\*|__|\*|_)(.+)\1$", re.S)
MD_LINK = re.compile(r"^\[(?P<text>[^\]]*)\]\((?P<url>[^)\s]+)(?:\s+\"[^\"]*\")?\)$")
MAX_CELL = 500
#: a leaderboard table or README: the largest real ones are a few MB
MAX_LEDGER_BYTES = 64 * 1024 * 1024
#: what leaderboards print where a model has no score
NO_SCORE = frozenset({"-", "--", "—", "–", "n/a", "N/A", "NA", "na", "N/a", "?", "x", "✗", "TBD", "tbd"})


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


def parse_cell(text: str) -> Cell:
    """Classify a printed score; anything but one clean number is ``needs_review``.

    Footnote and symbol markers (``81.2†``, ``81.2 [^3]``) are taken apart: the number is
    read, but the cell stays ``needs_review`` until the marker's meaning is known (the
    Markdown importer finds it in the table's footnotes and legend).
    """
    inner, qualifiers, markers = _unwrapped(text.strip())
    unit = ""
    if inner.endswith("%") and NUMBER.match(inner[:-1].strip()):
        unit, inner = "%", inner[:-1].strip()
    if NUMBER.match(inner):
        number = float(inner)
        if number == number and abs(number) != float("inf"):
            if markers:
                qualifiers.append("marker(s) " + " ".join(markers) + " printed with the score")
                return Cell(number, unit, "; ".join(qualifiers), NEEDS_REVIEW, inner, markers)
            return Cell(number, unit, "; ".join(qualifiers), OK, inner)
    return Cell(None, unit, "; ".join([*qualifiers, _not_a_score(inner)]), NEEDS_REVIEW, markers=markers)


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


def _split_link(label: str) -> tuple[str, str]:
    match = MD_LINK.match(label.strip())
    return (match.group("text").strip(), match.group("url")) if match else (label.strip(), "")


@attrs.frozen
class Record:
    """One table row: where it is printed, its cells by column, and the group-header row above it."""

    locator: str
    cells: Mapping[str, str | mdtable.Cell]
    group: str = ""


@attrs.frozen
class Records:
    """A table read by an importer: its columns and rows (:class:`Record`).

    A cell is the text of a CSV or dataset cell, or a :class:`mdtable.Cell` for Markdown,
    which also carries the cell's footnote markers; ``notes`` gives each marker's text
    (``None``: no definition or legend found) and ``column_markers`` the markers printed
    in a column's header, which qualify every score of that column.
    """

    columns: tuple[str, ...]
    rows: tuple[Record, ...]
    notes: Mapping[str, str | None] = attrs.field(factory=dict)
    column_markers: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)


def _printed(cell: str | mdtable.Cell | None) -> mdtable.Cell:
    if isinstance(cell, mdtable.Cell):
        return cell
    text = (cell or "").strip()
    label, link = _split_link(text)
    return mdtable.Cell(text, label, (), (link,) if link else ())


def _score(cell: mdtable.Cell) -> Cell:
    """The score of one printed cell; a Markdown cell is judged on its rendered text."""
    if not isinstance(cell.raw, str) or cell.raw == cell.text and not cell.markers:
        return parse_cell(cell.raw)
    found = parse_cell(cell.text)
    extra = [f"linked to {url}" for url in cell.links]
    if cell.emphasis == "~~":
        return Cell(None, found.unit, "; ".join(["struck through in source", found.qualifiers]).strip("; "),
                    NEEDS_REVIEW)
    if cell.emphasis:
        extra.insert(0, f"emphasis {cell.emphasis} in source")
    return attrs.evolve(found, qualifiers="; ".join([*extra, *filter(None, [found.qualifiers])]))


def _qualify(markers: Sequence[str], notes: Mapping[str, str | None]) -> tuple[list[str], list[str], list[str]]:
    """(qualifier texts, run variants, reasons to review) for the markers that apply to one score."""
    shown, variants, review = [], [], []
    for mark in markers:
        text = notes.get(mark)
        if not text:
            shown.append(f"{mark} (no footnote definition or legend found)")
            review.append(f"marker {mark} has no footnote definition or legend line, so what it qualifies is unknown")
            continue
        shown.append(f"{mark} {text}")
        kind = qualifiers.classify(text)
        if kind == qualifiers.RUN:
            variants.append(text)
        elif kind == qualifiers.UNKNOWN:
            review.append(f"footnote {mark} ({text!r}) may change what was run; a reviewer must decide")
    return shown, variants, review


def rows_from_records(
    records: Records,
    *,
    model_column: str | None = None,
    variant_column: str | None = None,
    task_column: str | None = None,
    value_column: str | None = None,
    ignore_columns: Sequence[str] = (),
    source_url: str = "",
    where: str = "source",
) -> list[LedgerRow]:
    """Turn table records into ledger rows.

    Wide tables give one row per score column; with ``task_column`` and ``value_column``
    the table is already long (one score per record). Markers on the label, the column
    header and the cell all qualify a score: a footnote that changes what was run becomes
    the row's variant (the draft's ``notes``), one whose meaning is unknown makes the row
    ``needs_review``; every one is kept in ``qualifiers`` with its text.
    """
    if not records.rows:
        raise InputError(f"{where}: the table has no data rows")
    columns = list(records.columns)
    model_column = model_column or columns[0]
    _check_columns(columns, [model_column, variant_column, task_column, value_column, *ignore_columns], where)
    if (task_column is None) != (value_column is None):
        raise InputError(f"{where}: give both --task-column and --value-column for a long table, or neither")
    skip = {model_column, variant_column, *ignore_columns}
    out = []
    for item in records.rows:
        record = item.cells
        label_cell = _label_cell(record.get(model_column), model_column, item.locator, where)
        variant = _printed(record.get(variant_column)).text if variant_column else ""
        pairs = _task_cells(record, columns, skip, task_column, value_column)
        context = [f"in the group {item.group!r} of the table"] if item.group else []
        struck = ["the model label is struck through in the source"] if label_cell.emphasis == "~~" else []
        for task, cell in pairs:
            locator = f"{item.locator} column {task!r}" if not task_column else item.locator
            out.append(_row(records, label_cell, variant, task, cell, context, struck, source_url, locator,
                            f"{where}: {item.locator}"))
    return out


def _task_cells(record: dict, columns: list[str], skip: set, task_column: str | None,
                value_column: str | None) -> list:
    """(task, printed cell) pairs of one record: one per score column of a wide table, the one of a long table."""
    if task_column:
        return [(_printed(record.get(task_column)).text, _printed(record.get(value_column)))]
    return [(column, _printed(record.get(column))) for column in columns if column not in skip]


def _check_columns(columns: list[str], named: list[str | None], where: str) -> None:
    for name in filter(None, named):
        if name not in columns:
            raise InputError(f"{where}: no column {name!r}; the columns are {', '.join(map(repr, columns))}")


def _label_cell(value: object, model_column: str, locator: str, where: str) -> mdtable.Cell:
    """The record's model label, printed; an empty, overlong or unprintable one is refused."""
    label_cell = _printed(value)
    label = label_cell.text
    if not label:
        raise InputError(f"{where}: {locator}: empty model label in column {model_column!r}")
    if len(label) > MAX_CELL or not label.isprintable():
        raise InputError(f"{where}: {locator}: the model label in column {model_column!r} is longer than "
                         f"{MAX_CELL} characters or holds control characters; fix the source table")
    return label_cell


def _row(records: Records, label_cell: mdtable.Cell, variant: str, task: str, cell: mdtable.Cell, context: list[str],
         struck: list[str], source_url: str, locator: str, where: str) -> LedgerRow:
    """One score of one model: its value as printed, and every marker on label, header and cell judged."""
    if len(cell.raw) > MAX_CELL:
        raise InputError(f"{where}: cell in column {task!r} is longer than {MAX_CELL} characters")
    score = _score(cell)
    markers = list(dict.fromkeys([*label_cell.markers, *records.column_markers.get(task, ()),
                                  *cell.markers, *score.markers]))
    shown, variants, review = _qualify(markers, records.notes)
    status = score.status
    if score.status == NEEDS_REVIEW and score.markers and score.value is not None:
        status = OK  # the cell is one clean number; its markers are judged just below
    review = [*struck, *review]
    if review:
        status = NEEDS_REVIEW
    quals = [q for q in [*shown, *context, score.qualifiers if not score.markers else _without_markers(score)] if q]
    return LedgerRow(
        source_model=label_cell.text,
        source_variant="; ".join(filter(None, [variant, *variants])),
        source_task=task,
        source_value=cell.raw,
        source_unit=score.unit,
        source_url=source_url,
        source_locator=locator,
        qualifiers="; ".join([*quals, *review]),
        status=status,
        source_link=label_cell.links[0] if label_cell.links else "",
    )


def _without_markers(score: Cell) -> str:
    return "; ".join(q for q in score.qualifiers.split("; ") if not q.startswith("marker(s) "))


def csv_records(path: Path) -> Records:
    """Records of a CSV file with a header row; locators are ``file:Lnnn``."""
    text = _read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{path}: empty CSV file; expected a header row") from None
    _check_header(header, path)
    out = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(f"{path}: line {reader.line_num}: {len(row)} cells, but the header has {len(header)}")
        out.append(Record(f"{path.name}:L{reader.line_num}", dict(zip(header, row))))
    return Records(tuple(header), tuple(out))


def _under_heading(found: list, heading: str | None, path: Path) -> tuple[list, str]:
    """The tables under ``heading`` (its nearest tables, else those of an enclosing section), and where that is."""
    if heading is None:
        return found, "in the file"
    wanted = mdtable.plain_heading(heading)
    nearest = [t for t in found if mdtable.plain_heading(t.heading) == wanted]
    candidates = nearest or [t for t in found if wanted in map(mdtable.plain_heading, t.headings)]
    if not candidates:
        names = ", ".join(repr(t.heading) for t in found)
        raise InputError(f"{path}: no table under a heading {heading!r}; headings with tables: {names}")
    return candidates, f"under {heading!r}"


def _pick_table(candidates: list, where: str, heading: str | None, table_number: int | None, path: Path):
    """The one table meant: ``table_number`` (1-based) among several, never a silent first pick."""
    listed = ", ".join(f"{n} on line {t.line} under {t.heading!r}" for n, t in enumerate(candidates, 1))
    if table_number is not None:
        if not 1 <= table_number <= len(candidates):
            raise InputError(f"{path}: --table {table_number}, but there are {len(candidates)} table(s) {where} "
                             f"({listed})")
        return candidates[table_number - 1]
    if len(candidates) > 1:
        hint = "--table N" if heading is not None else "--heading (or --table N)"
        raise InputError(f"{path}: {len(candidates)} tables {where}; pick one with {hint}: {listed}")
    return candidates[0]


def markdown_records(path: Path, heading: str | None, table_number: int | None = None) -> Records:
    """Records of the table under ``heading`` (or of the only table when no heading is given), as GitHub renders it.

    The heading is matched by its text, whatever its ``#`` level or emphasis; a table sits
    under its nearest heading, and under an enclosing one when that section holds only it.
    When several tables qualify, ``table_number`` (1-based, in file order) picks one;
    without it that is an error naming their lines, never a silent first pick.
    """
    text = _read_text(path)
    found = mdtable.tables(text)
    if not found:
        html = re.search(r"<table\b", text, re.I)
        hint = (f"; line {text.count(chr(10), 0, html.start()) + 1} starts an HTML <table>, which is not read: "
                "export it as CSV and use --format csv") if html else ""
        raise InputError(f"{path}: no Markdown (GFM) table found{hint}")
    candidates, where = _under_heading(found, heading, path)
    table = _pick_table(candidates, where, heading, table_number, path)
    header = []
    for n, cell in enumerate(table.header, 1):
        header.append(cell.text or f"column {n}")
    _check_header(header, path, f"the table header on line {table.line}")
    title = table.heading
    rows = []
    for row in table.rows:
        where = f"{path.name}:L{row.line} (table under {title!r}" + (f", group {row.group!r})" if row.group else ")")
        rows.append(Record(where, dict(zip(header, row.cells)), row.group))
    markers = {name: cell.markers for name, cell in zip(header, table.header) if cell.markers}
    return Records(tuple(header), tuple(rows), dict(table.notes), markers)


#: a dataset file decompresses to far more than its size (30 KB of parquet held 4M repeated rows): its rows
#: are capped, and the text they print to under MAX_LEDGER_BYTES like the other formats
MAX_DATASET_ROWS = 200_000


def dataset_records(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Records of a leaderboard dataset file (parquet, or CSV) read through DuckDB, within
    :data:`MAX_LEDGER_BYTES` on disk and once printed, and :data:`MAX_DATASET_ROWS` rows."""
    import duckdb

    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if path.stat().st_size > MAX_LEDGER_BYTES:
        raise InputError(f"{path}: larger than the {MAX_LEDGER_BYTES:,}-byte limit of a ledger; import a smaller file")
    reader = "read_parquet(?)" if path.suffix.lower() != ".csv" else "read_csv(?, all_varchar = true, header = true)"
    con = duckdb.connect()
    try:
        with interrupted_query_aborts():
            con.execute("SET preserve_insertion_order = true")
            cursor = con.execute(f"SELECT * FROM {reader} LIMIT {MAX_DATASET_ROWS + 1}", [str(path)])
            columns = [d[0] for d in cursor.description]
            rows = _bounded_rows(cursor, path)
    except duckdb.Error as exc:
        raise InputError(f"{path}: DuckDB cannot read it as {path.suffix.lstrip('.') or 'parquet'}: {exc}") from None
    finally:
        con.close()
    _check_header(columns, path)
    return Records(tuple(columns), tuple(Record(f"{path.name} row {n}", {c: _as_text(v) for c, v in zip(columns, row)})
                                         for n, row in enumerate(rows, 1)))


def _bounded_rows(cursor, path: Path) -> list[tuple]:
    """The cursor's rows, fetched in batches; refused past :data:`MAX_DATASET_ROWS` rows or
    :data:`MAX_LEDGER_BYTES` of printed text, naming the limit."""
    rows: list[tuple] = []
    size = 0
    while batch := cursor.fetchmany(4096):
        rows.extend(batch)
        size += sum(len(_as_text(v)) + 1 for row in batch for v in row)
        if len(rows) > MAX_DATASET_ROWS:
            raise InputError(f"{path}: more than {MAX_DATASET_ROWS:,} rows, the limit of a ledger dataset; "
                             "import the leaderboard's own rows (filter or deduplicate the file first)")
        if size > MAX_LEDGER_BYTES:
            raise InputError(f"{path}: its cells print to more than {MAX_LEDGER_BYTES:,} bytes, the limit of a "
                             "ledger; import a smaller file")
    return rows


def _as_text(value) -> str:
    """A typed dataset value as it would be printed: floats in their shortest round-trip form."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _check_header(header: Sequence[str], path: Path, what: str = "the header") -> None:
    seen = set()
    for name in header:
        if not str(name).strip():
            raise InputError(f"{path}: {what} has an empty column name")
        if name in seen:
            raise InputError(f"{path}: column {name!r} appears twice in {what}")
        seen.add(name)


def _read_text(path: Path) -> str:
    return read_text(path, limit=MAX_LEDGER_BYTES, what="a ledger", encoding="utf-8-sig")


def import_source(
    path: str | Path,
    fmt: str,
    *,
    heading: str | None = None,
    table: int | None = None,
    source_url: str = "",
    **columns,
) -> list[LedgerRow]:
    """Read ``path`` in format ``csv``, ``markdown`` or ``parquet`` into ledger rows."""
    path = Path(path)
    if fmt == "csv":
        records = csv_records(path)
    elif fmt == "markdown":
        records = markdown_records(path, heading, table)
    elif fmt == "parquet":
        records = dataset_records(path)
    else:
        raise InputError(f"unknown ledger format {fmt!r}: use csv, markdown or parquet")
    return rows_from_records(records, source_url=source_url, where=str(path), **columns)


def dumps(rows: Iterable[LedgerRow]) -> str:
    """The ledger as CSV; cells that would run as spreadsheet formulas are neutralised (:func:`load` undoes it)."""
    return csv_text(COLUMNS, ([getattr(row, c) for c in COLUMNS] for row in rows), neutralise=True)


def write(path: str | Path, rows: Iterable[LedgerRow]) -> None:
    write_text(path, dumps(rows))


def load(path: str | Path) -> list[LedgerRow]:
    """Read a ledger CSV; a cell that is not one clean number stays ``needs_review`` whatever its status says."""
    path = Path(path)
    text = _read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    _check_ledger_columns(reader.fieldnames or [], path)
    rows = []
    for record in reader:
        where = f"{path}: line {reader.line_num}"
        if None in record:
            raise InputError(f"{where}: more cells than header columns")
        values = {c: spreadsheet_value(record.get(c) or "") for c in COLUMNS}
        _check_row(values, where)
        rows.append(LedgerRow(**_judged(values)))
    return rows


def _check_ledger_columns(header: list[str], path: Path) -> None:
    """A ledger has every required column and no unknown one: a CSV made by hand or another tool is refused."""
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown:
        raise InputError(
            f"{path}: not a ledger made by `checks hf ledger`: "
            + "; ".join(filter(None, [missing and f"missing column(s) {', '.join(missing)}",
                                      unknown and f"unknown column(s) {', '.join(unknown)}"]))
        )


def _check_row(values: dict[str, str], where: str) -> None:
    """The cells every score needs, a known status and a real date."""
    for column in ("source_model", "source_task", "source_locator"):
        if not values[column].strip():
            raise InputError(f"{where}: '{column}' is empty; every score needs it")
    if values["status"] not in ("", OK, NEEDS_REVIEW):
        raise InputError(f"{where}: 'status' must be {OK} or {NEEDS_REVIEW} (got {values['status']!r})")
    if values["eval_date"] and date_problem({"date": values["eval_date"]}):
        raise InputError(f"{where}: 'eval_date' must be a real ISO-8601 date like "
                         f"2025-01-15 (got {values['eval_date']!r}); leave it empty when the source states none")


def _judged(values: dict[str, str]) -> dict[str, str]:
    """The row's values with its status judged again from the cell: a marker nothing explains needs review."""
    cell = parse_cell(values["source_value"])
    parts = values["qualifiers"].split("; ")
    explained = cell.value is not None and all(
        any(p.startswith(f"{m} ") and not p.startswith(f"{m} (no footnote") for p in parts) for m in cell.markers)
    if cell.status == NEEDS_REVIEW and not explained:
        values["status"] = NEEDS_REVIEW
        values["qualifiers"] = values["qualifiers"] or cell.qualifiers
    values["status"] = values["status"] or OK
    return values
