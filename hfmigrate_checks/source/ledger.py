"""The source ledger: one row per published score, exactly as printed, with where it was printed.

Importers read a CSV file, a GFM or HTML table of a README or model card (picked by the
heading above it) or a leaderboard dataset file through DuckDB, into records that
:mod:`~hfmigrate_checks.source.scores` turns into rows, whichever way the table runs. None
of them averages, converts, picks a best run or drops a footnote: a cell that is not
cleanly one number keeps its text and its qualifier and is marked ``needs_review``, and
nothing is drafted from it. The ledger file is written and read back here.
"""

from __future__ import annotations

import contextlib
import csv
import gc
import io
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from checks import InputError
from checks.io import csv_text, interrupted_query_aborts, read_text, spreadsheet_value, write_text
from hfmigrate_checks.evalresults.evalfile import date_problem
from hfmigrate_checks.source import context, document, mdtable, scores
from hfmigrate_checks.source.printed import (
    NEEDS_REVIEW,
    NUMBER,
    OK,
    PROSE_MARKER,
    REVIEW_SIGNS,
    Cell,
    LedgerRow,
    Record,
    Records,
    parse_cell,
)

__all__ = [
    "COLUMNS",
    "NEEDS_REVIEW",
    "NUMBER",
    "OK",
    "Cell",
    "LedgerRow",
    "import_source",
    "load",
    "parse_cell",
    "write",
]
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
MAX_LEDGER_BYTES = 64 * 1024 * 1024
#: a README or model card is read whole as GitHub renders it; the largest public ones are a few hundred KB,
#: and past this size rendering alone takes seconds (an 8 MB page of one legend took 9 s)
MAX_PAGE_BYTES = 2 * 1024 * 1024


def csv_records(path: Path, notices: list[str] | None = None) -> Records:
    """Records of a CSV file with a header row; locators are ``file:Lnnn``. A pandas index column is
    left out or named (see :func:`_index_column`)."""
    text = _read_text(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(f"{path}: empty CSV file; expected a header row") from None
    lines = []
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise InputError(f"{path}: line {reader.line_num}: {len(row)} cells, but the header has {len(header)}")
        lines.append((reader.line_num, row))
    skip, header = _index_column(path, header, [row[0] for _, row in lines], notices)
    _check_header(header, path)
    out = [
        Record(f"{path.name}:L{number}", dict(zip(header, row[skip:])))
        for number, row in lines
        if any(cell.strip() for cell in row[skip:])
    ]
    return Records(tuple(header), tuple(out), column_markers=_header_markers(header))


#: the names pandas gives its index column: an empty header cell (``to_csv``), the name ``read_csv`` gives
#: that cell back, and the column ``to_parquet`` stores the index in
INDEX_NAMES = ("", "Unnamed: 0", "__index_level_0__")
_ROW_NUMBER = re.compile(r"^\s*\d+\s*$")


def _index_column(
    path: Path, header: Sequence[str], values: Sequence[str], notices: list[str] | None
) -> tuple[int, list[str]]:
    """(how many leading columns to leave out, the names of the others) for a table whose first column may
    be the index pandas wrote, telling ``notices`` what was done: the same in every format.

    An index of row numbers is no label and no score: read as the model column it would make ``0``,
    ``1``, ... models, so it is left out. An index of labels (pandas keeps the model names there, as
    AlpacaEval's leaderboards do) holds the labels: an empty name becomes ``column 1``, as in a Markdown
    table, and the column is read."""
    first = str(header[0]).strip() if header else "-"
    if len(header) < 2 or first not in INDEX_NAMES:
        return 0, list(header)
    if all(_ROW_NUMBER.match(str(v)) for v in values):
        _tell(
            notices,
            f"{path}: the first column {first!r} is a row index (as pandas writes it), not a label "
            "or a score; it is ignored",
        )
        return 1, list(header[1:])
    name = first or "column 1"
    _tell(
        notices,
        f"{path}: the first column {first!r} is a pandas index holding the row labels; it is read "
        f"as the labels, named {name!r}",
    )
    return 0, [name, *header[1:]]


def _tell(notices: list[str] | None, notice: str) -> None:
    if notices is not None:
        notices.append(notice)


def _header_markers(header: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The markers printed in plain-text column names (``MMLU†``): a CSV or dataset file has no legend,
    so each makes its column's scores need review."""
    out = {}
    for name in header:
        _, (before, after) = mdtable.strip_markers(str(name))
        if before or after:
            out[name] = tuple(dict.fromkeys(before + after))
    return out


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
            raise InputError(
                f"{path}: --table {table_number}, but there are {len(candidates)} table(s) {where} ({listed})"
            )
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
    table, found = _the_table(path, heading, table_number)
    header = [cell.text or f"column {n}" for n, cell in enumerate(table.header, 1)]
    _check_header(header, path, f"the table header on line {table.line}")
    column_markers = {name: cell.markers for name, cell in zip(header, table.header) if cell.markers}
    table_notes, row_markers, unread = _prose(table, header, column_markers)
    attributed, shared = context.around(table, found)
    for key, text in attributed.items():
        table_notes[key] = (text,)
        for name in header:
            column_markers[name] = (*column_markers.get(name, ()), key)
    rows = []
    for row in table.rows:
        group = f", group {row.group!r})" if row.group else ")"
        where = f"{path.name}:L{row.line} (table under {table.heading!r}{group}"
        names = document.row_names(row) if row_markers else ()
        marks = dict.fromkeys(m for name in names for m in row_markers.get(name, ()))
        rows.append(Record(where, dict(zip(header, row.cells)), row.group, tuple(marks)))
    return Records(
        tuple(header),
        tuple(rows),
        table_notes,
        column_markers,
        dict(zip(header, table.parts)),
        tuple(unread),
        tuple(shared),
    )


def _the_table(path: Path, heading: str | None, table_number: int | None) -> tuple[document.Table, list]:
    """The one table asked for; a file with none, or a table that cannot be attributed, is refused."""
    found = document.tables(read_text(path, limit=MAX_PAGE_BYTES, what="a Markdown page", encoding="utf-8-sig"))
    if not found:
        raise InputError(
            f"{path}: no table found (a GFM table or an HTML <table>); expected the results table the --heading names"
        )
    candidates, where = _under_heading(found, heading, path)
    table = _pick_table(candidates, where, heading, table_number, path)
    if table.problem:
        raise InputError(f"{path}: {table.problem}")
    return table, found


#: notes around a table that speak of all of its scores are copied into every row: past these bounds (a
#: hostile page: thousands of sentences, one sentence of megabytes) the rest is not copied, and every
#: score needs review, so the ledger stays linear in the page and nothing unread is drafted
MAX_TABLE_NOTES = 12
MAX_NOTE_CHARS = 2000


def _prose(table: document.Table, header: list[str], column_markers: dict) -> tuple[dict, dict, list[str]]:
    """The table's notes with each sentence around it as a marker of the columns it names (all of them when
    it names none), which ``column_markers`` gains, the row labels it names -> its markers, and the
    reasons to review the whole table (notes past :data:`MAX_TABLE_NOTES` or :data:`MAX_NOTE_CHARS`)."""
    table_notes = dict(table.notes)
    row_markers: dict[str, list[str]] = {}
    review: list[str] = []
    whole = 0
    for n, (sentence, names) in enumerate(table.prose, 1):
        whole += not names
        if whole > MAX_TABLE_NOTES or len(sentence) > MAX_NOTE_CHARS:
            review.append(_unread(table, sentence))
            continue
        key = PROSE_MARKER + ("]" if len(table.prose) == 1 else f" {n}]")
        table_notes[key] = (sentence,)
        for name in names or header:
            if name in header:
                column_markers[name] = (*column_markers.get(name, ()), key)
            else:
                row_markers.setdefault(name, []).append(key)
    return table_notes, row_markers, review[:1]


def _unread(table: document.Table, sentence: str) -> str:
    return (
        f"the notes around the table on line {table.line} are more than {MAX_TABLE_NOTES} sentences about all "
        f"its scores or longer than {MAX_NOTE_CHARS:,} characters (from {sentence[:80]!r}); a reviewer must "
        "read them"
    )


#: a dataset file decompresses to far more than its size (30 KB of parquet held 4M repeated rows): its rows
#: are capped, and the text they print to under MAX_LEDGER_BYTES like the other formats
MAX_DATASET_ROWS = 200_000


def dataset_records(path: Path, notices: list[str] | None = None) -> Records:
    """Records of a leaderboard dataset file (parquet, or CSV) read through DuckDB, within
    :data:`MAX_LEDGER_BYTES` on disk and once printed, and :data:`MAX_DATASET_ROWS` rows; an index
    column is left out as in :func:`csv_records` (DuckDB names a CSV's empty header cell ``column0``,
    so a CSV's own first header line decides)."""
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
    first = _first_header_cell(path) if path.suffix.lower() == ".csv" else columns[0] if columns else ""
    skip, columns = _index_column(path, [first, *columns[1:]], [_as_text(row[0]) for row in rows], notices)
    _check_header(columns, path)
    return Records(
        tuple(columns),
        tuple(
            Record(f"{path.name} row {n}", {c: _as_text(v) for c, v in zip(columns, row[skip:])})
            for n, row in enumerate(rows, 1)
        ),
        column_markers=_header_markers(columns),
    )


def _first_header_cell(path: Path) -> str:
    """The first cell of a CSV file's header line as written (bounded: one line of at most 64 KB)."""
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        line = handle.readline(64 * 1024)
    return next(csv.reader([line]), [""])[0] if line.strip() else ""


def _bounded_rows(cursor, path: Path) -> list[tuple]:
    """The cursor's rows, fetched in batches; refused past :data:`MAX_DATASET_ROWS` rows or
    :data:`MAX_LEDGER_BYTES` of printed text, naming the limit."""
    rows: list[tuple] = []
    size = 0
    while batch := cursor.fetchmany(4096):
        rows.extend(batch)
        size += sum(len(_as_text(v)) + 1 for row in batch for v in row)
        if len(rows) > MAX_DATASET_ROWS:
            raise InputError(
                f"{path}: more than {MAX_DATASET_ROWS:,} rows, the limit of a ledger dataset; "
                "import the leaderboard's own rows (filter or deduplicate the file first)"
            )
        if size > MAX_LEDGER_BYTES:
            raise InputError(
                f"{path}: its cells print to more than {MAX_LEDGER_BYTES:,} bytes, the limit of a "
                "ledger; import a smaller file"
            )
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
    notices: list[str] | None = None,
    **columns,
) -> list[LedgerRow]:
    """Read ``path`` in format ``csv``, ``markdown`` or ``parquet`` into ledger rows (options: see
    :func:`hfmigrate_checks.source.scores.rows_from_records`); what was left out and why (an index
    column) is appended to ``notices``."""

    with _collector_paused():
        return _import(Path(path), fmt, heading, table, source_url, notices, columns)


@contextlib.contextmanager
def _collector_paused():
    """Pause the cyclic garbage collector while a table is read and judged: the parser and the rows
    allocate hundreds of thousands of objects that hold no cycles, and collecting over them took a
    third of the time of a 1 MB page (every input is bounded, so its memory is too)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _import(path: Path, fmt: str, heading, table, source_url: str, notices, columns: dict) -> list[LedgerRow]:
    if fmt == "csv":
        records = csv_records(path, notices)
    elif fmt == "markdown":
        records = markdown_records(path, heading, table)
    elif fmt == "parquet":
        records = dataset_records(path, notices)
    else:
        raise InputError(f"unknown ledger format {fmt!r}: use csv, markdown or parquet")
    return scores.rows_from_records(records, source_url=source_url, where=str(path), **columns)


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
            + "; ".join(
                filter(
                    None,
                    [
                        missing and f"missing column(s) {', '.join(missing)}",
                        unknown and f"unknown column(s) {', '.join(unknown)}",
                    ],
                )
            )
        )


def _check_row(values: dict[str, str], where: str) -> None:
    """The cells every score needs, a known status and a real date."""
    for column in ("source_model", "source_task", "source_locator"):
        if not values[column].strip():
            raise InputError(f"{where}: '{column}' is empty; every score needs it")
    if values["status"] not in ("", OK, NEEDS_REVIEW):
        raise InputError(f"{where}: 'status' must be {OK} or {NEEDS_REVIEW} (got {values['status']!r})")
    if values["eval_date"] and date_problem({"date": values["eval_date"]}):
        raise InputError(
            f"{where}: 'eval_date' must be a real ISO-8601 date like "
            f"2025-01-15 (got {values['eval_date']!r}); leave it empty when the source states none"
        )


def _judged(values: dict[str, str]) -> dict[str, str]:
    """The row's values with its status judged again from the cell and the reasons in its qualifiers: a
    marker nothing explains, or a reason to review written at import, keeps the row needs_review."""
    cell = parse_cell(values["source_value"])
    if cell.status == NEEDS_REVIEW and not _explained(cell, values["qualifiers"].split("; ")):
        values["status"] = NEEDS_REVIEW
        values["qualifiers"] = values["qualifiers"] or cell.qualifiers
    if any(sign in values["qualifiers"] for sign in REVIEW_SIGNS):
        values["status"] = NEEDS_REVIEW
    values["status"] = values["status"] or OK
    return values


def _explained(cell: Cell, parts: list[str]) -> bool:
    """A clean number whose every marker has its text among the row's qualifiers."""
    known = [
        p
        for p in parts
        if not p.startswith(tuple(f"{m} {why}" for m in cell.markers for why in ("(no footnote", "(ambiguous")))
    ]
    return cell.value is not None and all(any(p.startswith(f"{m} ") for p in known) for m in cell.markers)
