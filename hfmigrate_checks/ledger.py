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
from checks.io import read_text, write_text
from hfmigrate_checks.validate import date_problem

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


@attrs.frozen
class Cell:
    """What a printed cell says: a number only if it is cleanly one, else the reason it is not."""

    value: float | None
    unit: str
    qualifiers: str
    status: str
    #: the number exactly as printed, without emphasis, link or unit
    number: str = ""


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
    """Classify a printed score; anything but one clean number is ``needs_review``."""
    raw = text.strip()
    qualifiers = []
    inner = raw
    while True:
        emph = EMPHASIS.match(inner)
        link = MD_LINK.match(inner)
        if emph:
            qualifiers.append(f"emphasis {emph.group(1)} in source")
            inner = emph.group(2).strip()
        elif link:
            qualifiers.append(f"linked to {link.group('url')}")
            inner = link.group("text").strip()
        else:
            break
    unit = ""
    if inner.endswith("%") and NUMBER.match(inner[:-1].strip()):
        unit, inner = "%", inner[:-1].strip()
    if NUMBER.match(inner):
        number = float(inner)
        if number == number and abs(number) != float("inf"):
            return Cell(number, unit, "; ".join(qualifiers), OK, inner)
    if not inner:
        reason = "empty cell"
    else:
        lead = LEADING_NUMBER.match(inner)
        reason = f"not one clean number: {lead.group(2)!r} follows {lead.group(1)}" if lead and lead.group(2) else (
            f"not a number: {inner!r}"
        )
    return Cell(None, unit, "; ".join([*qualifiers, reason]), NEEDS_REVIEW)


def _split_link(label: str) -> tuple[str, str]:
    match = MD_LINK.match(label.strip())
    return (match.group("text").strip(), match.group("url")) if match else (label.strip(), "")


def rows_from_records(
    records: Iterable[tuple[str, Mapping[str, str]]],
    *,
    model_column: str | None = None,
    variant_column: str | None = None,
    task_column: str | None = None,
    value_column: str | None = None,
    ignore_columns: Sequence[str] = (),
    source_url: str = "",
    where: str = "source",
) -> list[LedgerRow]:
    """Turn table records (locator, column -> cell text) into ledger rows.

    Wide tables give one row per score column; with ``task_column`` and ``value_column``
    the table is already long (one score per record).
    """
    records = list(records)
    if not records:
        raise InputError(f"{where}: the table has no data rows")
    columns = list(records[0][1])
    model_column = model_column or columns[0]
    named = [model_column, variant_column, task_column, value_column, *ignore_columns]
    for name in filter(None, named):
        if name not in columns:
            raise InputError(f"{where}: no column {name!r}; the columns are {', '.join(map(repr, columns))}")
    if (task_column is None) != (value_column is None):
        raise InputError(f"{where}: give both --task-column and --value-column for a long table, or neither")
    skip = {model_column, variant_column, *ignore_columns}
    out = []
    for locator, record in records:
        label, link = _split_link(record.get(model_column) or "")
        if not label:
            raise InputError(f"{where}: {locator}: empty model label in column {model_column!r}")
        if len(label) > MAX_CELL or not label.isprintable():
            raise InputError(f"{where}: {locator}: the model label in column {model_column!r} is longer than "
                             f"{MAX_CELL} characters or holds control characters; fix the source table")
        variant = (record.get(variant_column) or "").strip() if variant_column else ""
        if task_column:
            pairs = [(str(record.get(task_column) or "").strip(), record.get(value_column) or "")]
        else:
            pairs = [(column, record.get(column) or "") for column in columns if column not in skip]
        for task, text in pairs:
            text = text.strip()
            if len(text) > MAX_CELL:
                raise InputError(f"{where}: {locator}: cell in column {task!r} is longer than {MAX_CELL} characters")
            cell = parse_cell(text)
            out.append(
                LedgerRow(
                    source_model=label,
                    source_variant=variant,
                    source_task=task,
                    source_value=text,
                    source_unit=cell.unit,
                    source_url=source_url,
                    source_locator=f"{locator} column {task!r}" if not task_column else locator,
                    qualifiers=cell.qualifiers,
                    status=cell.status,
                    source_link=link,
                )
            )
    return out


def csv_records(path: Path) -> list[tuple[str, dict[str, str]]]:
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
        out.append((f"{path.name}:L{reader.line_num}", dict(zip(header, row))))
    return out


def markdown_records(path: Path, heading: str | None) -> list[tuple[str, dict[str, str]]]:
    """Records of the first table under ``heading`` (or of the only table when no heading is given)."""
    lines = _read_text(path).splitlines()
    tables = _markdown_tables(lines)
    if not tables:
        raise InputError(f"{path}: no Markdown table found")
    if heading is None:
        if len(tables) > 1:
            names = ", ".join(repr(h) for h, _, _ in tables)
            raise InputError(f"{path}: {len(tables)} tables found; pick one with --heading (headings: {names})")
        chosen = tables[0]
    else:
        wanted = _plain(heading).casefold()
        matches = [t for t in tables if _plain(t[0]).casefold() == wanted]
        if not matches:
            names = ", ".join(repr(h) for h, _, _ in tables)
            raise InputError(f"{path}: no table under a heading {heading!r}; headings with tables: {names}")
        chosen = matches[0]
    title, start, rows = chosen
    header = rows[0][1]
    _check_header(header, path)
    out = []
    for line_no, cells in rows[1:]:
        if len(cells) != len(header):
            raise InputError(f"{path}: line {line_no}: {len(cells)} cells, but the table header has {len(header)}")
        out.append((f"{path.name}:L{line_no} (table under {title!r})", dict(zip(header, cells))))
    return out


def _markdown_tables(lines: list[str]) -> list[tuple[str, int, list[tuple[int, list[str]]]]]:
    """(heading, first line, [(line number, cells)]) for each table; the delimiter row is dropped."""
    tables = []
    heading, i = "", 0
    fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if fence:
            i += 1
            continue
        atx = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if atx:
            heading = atx.group(1)
        elif "|" in line and i + 1 < len(lines) and _is_delimiter(lines[i + 1]):
            rows = [(i + 1, _cells(line))]
            i += 2
            while i < len(lines) and "|" in lines[i] and lines[i].strip():
                rows.append((i + 1, _cells(lines[i])))
                i += 1
            tables.append((heading, rows[0][0], rows))
            continue
        i += 1
    return tables


def _is_delimiter(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-{1,}:?", c.strip()) for c in cells)


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    parts = re.split(r"(?<!\\)\|", line)
    return [p.strip().replace("\\|", "|") for p in parts]


def _plain(text: str) -> str:
    return re.sub(r"[*_`]", "", text).strip()


def dataset_records(path: Path) -> list[tuple[str, dict[str, str]]]:
    """Records of a leaderboard dataset file (parquet, or CSV) read through DuckDB."""
    import duckdb

    if not path.is_file():
        raise InputError(f"{path}: no such file")
    reader = "read_parquet(?)" if path.suffix.lower() != ".csv" else "read_csv(?, all_varchar = true, header = true)"
    con = duckdb.connect()
    try:
        con.execute("SET preserve_insertion_order = true")
        cursor = con.execute(f"SELECT * FROM {reader}", [str(path)])
        columns = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
    except duckdb.Error as exc:
        raise InputError(f"{path}: DuckDB cannot read it as {path.suffix.lstrip('.') or 'parquet'}: {exc}") from None
    finally:
        con.close()
    _check_header(columns, path)
    return [(f"{path.name} row {n}", {c: _as_text(v) for c, v in zip(columns, row)}) for n, row in enumerate(rows, 1)]


def _as_text(value) -> str:
    """A typed dataset value as it would be printed: floats in their shortest round-trip form."""
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _check_header(header: Sequence[str], path: Path) -> None:
    seen = set()
    for name in header:
        if not str(name).strip():
            raise InputError(f"{path}: the header has an empty column name")
        if name in seen:
            raise InputError(f"{path}: column {name!r} appears twice in the header")
        seen.add(name)


def _read_text(path: Path) -> str:
    return read_text(path, limit=MAX_LEDGER_BYTES, what="a ledger", encoding="utf-8-sig")


def import_source(
    path: str | Path,
    fmt: str,
    *,
    heading: str | None = None,
    source_url: str = "",
    **columns,
) -> list[LedgerRow]:
    """Read ``path`` in format ``csv``, ``markdown`` or ``parquet`` into ledger rows."""
    path = Path(path)
    if fmt == "csv":
        records = csv_records(path)
    elif fmt == "markdown":
        records = markdown_records(path, heading)
    elif fmt == "parquet":
        records = dataset_records(path)
    else:
        raise InputError(f"unknown ledger format {fmt!r}: use csv, markdown or parquet")
    return rows_from_records(records, source_url=source_url, where=str(path), **columns)


def dumps(rows: Iterable[LedgerRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in rows:
        writer.writerow([getattr(row, c) for c in COLUMNS])
    return buf.getvalue()


def write(path: str | Path, rows: Iterable[LedgerRow]) -> None:
    write_text(path, dumps(rows))


def load(path: str | Path) -> list[LedgerRow]:
    """Read a ledger CSV; a cell that is not one clean number stays ``needs_review`` whatever its status says."""
    path = Path(path)
    text = _read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown:
        raise InputError(
            f"{path}: not a ledger made by `checks hf ledger`: "
            + "; ".join(filter(None, [missing and f"missing column(s) {', '.join(missing)}",
                                      unknown and f"unknown column(s) {', '.join(unknown)}"]))
        )
    rows = []
    for record in reader:
        if None in record:
            raise InputError(f"{path}: line {reader.line_num}: more cells than header columns")
        values = {c: (record.get(c) or "") for c in COLUMNS}
        for column in ("source_model", "source_task", "source_locator"):
            if not values[column].strip():
                raise InputError(f"{path}: line {reader.line_num}: '{column}' is empty; every score needs it")
        if values["status"] not in ("", OK, NEEDS_REVIEW):
            raise InputError(
                f"{path}: line {reader.line_num}: 'status' must be {OK} or {NEEDS_REVIEW} (got {values['status']!r})"
            )
        if values["eval_date"] and date_problem({"date": values["eval_date"]}):
            raise InputError(f"{path}: line {reader.line_num}: 'eval_date' must be a real ISO-8601 date like "
                             f"2025-01-15 (got {values['eval_date']!r}); leave it empty when the source states none")
        cell = parse_cell(values["source_value"])
        if cell.status == NEEDS_REVIEW:
            values["status"] = NEEDS_REVIEW
            values["qualifiers"] = values["qualifiers"] or cell.qualifiers
        values["status"] = values["status"] or OK
        rows.append(LedgerRow(**values))
    return rows
