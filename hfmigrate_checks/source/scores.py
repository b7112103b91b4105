"""Table records to ledger rows: one row per score, every qualifier of it judged.

A score is qualified by everything a reader connects to it: the markers on its cell, its
model label, its column header and the row's other text cells (the variant, an ignored
"LLM" or "framework" column), a sentence under the table naming its column or row, and
run details in parentheses inside a label (``Chinchilla (70B, few-shot)``). Each lands in
the row's ``qualifiers`` with its text; one that changes what was run becomes the row's
variant (the draft's ``notes``); a marker whose text is unknown, ambiguous or missing makes
the row ``needs_review`` (a sentence of prose or an ignored cell that names no run is
commentary, kept in ``qualifiers``). Nothing is dropped, so nothing is drafted without its
qualifier.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import attrs

from checks import InputError
from hfmigrate_checks.source import mdtable, orientation, qualifiers, uncertainty
from hfmigrate_checks.source.printed import (
    MAX_CELL,
    NEEDS_REVIEW,
    NO_SCORE,
    OK,
    CONTEXT_MARKERS,
    PROSE_MARKER,
    Cell,
    dropped,
    LedgerRow,
    Records,
    parse_cell,
    split_link,
)


@attrs.define
class _Site:
    """One score before it is judged: who, which task, the printed cell, and what qualifies it (built and
    read within one table's import; 50,000 of them for a large README, so not frozen, which costs a
    guarded set per field)."""

    label: mdtable.Cell
    variant: str
    task: str
    cell: mdtable.Cell
    #: the score cell's rendered text as read (:func:`parse_cell`), read once with its row
    read: Cell
    markers: tuple[str, ...]
    #: run details taken from labels ("few-shot" of "Chinchilla (few-shot)")
    details: tuple[str, ...]
    context: tuple[str, ...]
    locator: str
    where: str
    #: the record's other text cells, to tell apart two printings of one model
    others: Mapping[str, str]
    record: int
    #: what the row's ignored columns say ("# Shots: 5", "Prompt: assistant", "Avg: 55.9")
    described: tuple[str, ...] = ()
    #: the score's uncertainty from its paired column, and the columns the maintainer dropped
    spread: tuple[str, ...] = ()
    #: the header column the score is printed in
    column: str = ""


def printed(cell: str | mdtable.Cell | None) -> mdtable.Cell:
    """A cell as printed: a Markdown/HTML cell as rendered, a CSV or dataset text with its markers apart."""
    if isinstance(cell, mdtable.Cell):
        return cell
    text = (cell or "").strip()
    label, link = split_link(text)
    stripped, (before, after) = mdtable.strip_markers(label)
    markers = tuple(dict.fromkeys(before + after)) if stripped else ()
    return mdtable.Cell(text, stripped if markers else label, markers, (link,) if link else ())


def _score(cell: mdtable.Cell, found: Cell) -> Cell:
    """The score of one printed cell, ``found`` its rendered text as read; a Markdown cell is judged on
    that text, with what its markup said."""
    if cell.raw == cell.text and not cell.markers:
        return found
    extra = [f"linked to {url}" for url in cell.links]
    if cell.emphasis == "~~":
        return Cell(
            None, found.unit, "; ".join(["struck through in source", found.qualifiers]).strip("; "), NEEDS_REVIEW
        )
    if cell.emphasis:
        extra.insert(0, f"emphasis {cell.emphasis} in source")
    return attrs.evolve(found, qualifiers="; ".join([*extra, *filter(None, [found.qualifiers])]))


def _qualify(markers: Sequence[str], notes: Mapping[str, tuple[str, ...]]) -> tuple[list[str], list[str], list[str]]:
    """(qualifier texts, run variants, reasons to review) for the markers that apply to one score."""
    shown, variants, review = [], [], []
    for mark in markers:
        texts = tuple(notes.get(mark) or ())
        if not texts:
            shown.append(f"{mark} (no footnote definition or legend found)")
            review.append(f"marker {mark} has no footnote definition or legend line, so what it qualifies is unknown")
            continue
        if len(texts) > 1:
            both = " and ".join(map(repr, texts))
            shown.append(f"{mark} (ambiguous: {both})")
            review.append(
                f"marker {mark} has {len(texts)} different legends near the table, {both}; a reviewer must "
                "say which one applies"
            )
            continue
        shown.append(f"{mark} {texts[0]}")
        kind = qualifiers.classify(texts[0])
        if kind == qualifiers.RUN:
            variants.append(texts[0])
        elif kind == qualifiers.UNKNOWN and not mark.startswith((PROSE_MARKER, *CONTEXT_MARKERS)):  # commentary
            review.append(f"footnote {mark} ({texts[0]!r}) may change what was run; a reviewer must decide")
    return shown, variants, review


def rows_from_records(
    records: Records,
    *,
    model_column: str | None = None,
    variant_column: str | None = None,
    task_column: str | None = None,
    value_column: str | None = None,
    ignore_columns: Sequence[str] = (),
    drop_columns: Sequence[str] = (),
    uncertainty_columns: Mapping[str, str] | None = None,
    models_as_columns: bool | None = None,
    source_url: str = "",
    where: str = "source",
) -> list[LedgerRow]:
    """Turn table records into ledger rows.

    Wide tables give one row per score column; with ``task_column`` and ``value_column``
    the table is already long (one score per record); with ``models_as_columns`` every
    column but the first is a model and the first column names the tasks. When that is not
    said (``None``) and the table looks transposed, it is refused rather than guessed.
    An ignored column's cell qualifies every score of its row; a dropped one is left out
    with the maintainer's statement that it does not change what was run; an uncertainty
    column (``uncertainty_columns``: score -> column, else found by name) qualifies its score.
    """
    named = dict(uncertainty_columns or {})
    _check_options(
        records,
        [model_column, variant_column, task_column, value_column, *ignore_columns, *drop_columns, *named.items()],
        models_as_columns,
        where,
    )
    columns = list(records.columns)
    if models_as_columns:
        if named:
            raise InputError(f"{where}: --uncertainty-column pairs columns of a table whose rows are models")
        sites = _column_sites(records, task_column or columns[0], set(ignore_columns), set(drop_columns), where)
    else:
        model_column = model_column or columns[0]
        text_columns = _text_columns(records, model_column)
        if models_as_columns is None and task_column is None and model_column == columns[0]:
            skip = {model_column, variant_column, *ignore_columns, *drop_columns}
            _refuse_if_transposed(records, skip, text_columns, where)
        kept = [c for c in columns if c not in (model_column, variant_column, task_column, *drop_columns)]
        scores = [value_column] if value_column else [c for c in kept if c not in ignore_columns]
        spread = uncertainty.pairs(kept, scores, named, where)
        sites = _row_sites(
            records,
            (model_column, variant_column, task_column, value_column),
            (set(ignore_columns), tuple(drop_columns), spread),
            text_columns,
            where,
        )
    rows = [_row(records, site, source_url) for site in sites]
    return _distinct(rows, sites)


def _check_options(records: Records, named: list, models_as_columns: bool | None, where: str) -> None:
    """Rows to read, columns that exist, and options that fit the table's orientation; a pair
    (score, uncertainty column) names two columns."""
    if not records.rows:
        raise InputError(f"{where}: the table has no data rows")
    _check_columns(list(records.columns), [c for n in named for c in (n if isinstance(n, tuple) else (n,))], where)
    model_column, variant_column, task_column, value_column = named[:4]
    if models_as_columns and (model_column or variant_column or value_column):
        raise InputError(
            f"{where}: --models-as-columns reads every column but the task column (--task-column, "
            "default the first) and the ignored ones as a model; drop --model-column, "
            "--variant-column and --value-column, or drop --models-as-columns"
        )
    if not models_as_columns and (task_column is None) != (value_column is None):
        raise InputError(f"{where}: give both --task-column and --value-column for a long table, or neither")


def _refuse_if_transposed(records: Records, skip: set, text_columns: frozenset, where: str) -> None:
    scores = [c for c in records.columns if c not in skip and c not in text_columns]
    first = records.columns[0]

    def labels() -> dict[str, list[str]]:
        return {
            c: [printed(r.cells.get(c)).text for r in records.rows]
            for c in records.columns
            if c == first or c in text_columns
        }

    evidence, column = orientation.transposed_evidence(scores, labels)
    if not evidence:
        evidence, column = orientation.grouped_evidence(records.parts), first
    if evidence:
        task = "" if column == first else f" --task-column {column!r}"
        raise InputError(
            f"{where}: {evidence}, so the models may be the columns and the benchmarks the rows; "
            f"this is not guessed: pass --models-as-columns{task} to read every other column as a "
            "model (--ignore-column for the columns that describe a row), or --models-as-rows to read "
            "each row as a model, as printed"
        )


def _check_columns(columns: list[str], named: list[str | None], where: str) -> None:
    for name in filter(None, named):
        if name not in columns:
            raise InputError(f"{where}: no column {name!r}; the columns are {', '.join(map(repr, columns))}")


def _label(cell: mdtable.Cell, column: str, locator: str, where: str) -> tuple[mdtable.Cell, tuple[str, ...]]:
    """A model label without its run details, and those details; an empty, overlong or unprintable one is refused."""
    label = cell.text
    if not label:
        raise InputError(
            f"{where}: {locator}: empty model label in column {column!r}; a row needs a model name "
            "(a table with models as columns needs --models-as-columns)"
        )
    if len(label) > MAX_CELL or not label.isprintable():
        raise InputError(
            f"{where}: {locator}: the model label in column {column!r} is longer than "
            f"{MAX_CELL} characters or holds control characters; fix the source table"
        )
    name, details = qualifiers.run_details(label)
    return (cell if name == label else attrs.evolve(cell, text=name)), tuple(details)


def _read_row(record, columns: Sequence[str], text_columns: frozenset) -> tuple[dict, dict[str, Cell]]:
    """The record's cells among ``columns`` as printed, and each one that may hold a score as read
    (:func:`parse_cell`); a cell of a column that prints no score in any row is not read again. Every
    cell is printed and read once, whatever its score, text cell or marker says later."""
    shown = {column: printed(record.get(column)) for column in columns}
    read = {column: parse_cell(cell.text) for column, cell in shown.items() if column not in text_columns}
    return shown, read


def _no_score(column: str, read: Mapping[str, Cell]) -> bool:
    """Whether the row's cell in ``column`` reads as no number (a column left unread prints none)."""
    return column not in read or read[column].value is None


def _text_cells(shown: Mapping[str, mdtable.Cell], read: Mapping[str, Cell], columns: Sequence[str]) -> dict[str, str]:
    """The row's non-score text cells among ``columns``: what may tell two printings apart."""
    texts = {}
    for column in columns:
        text = shown[column].text
        if text and text not in NO_SCORE and _no_score(column, read):
            texts[column] = text
    return texts


# shape: one loop builds every site of a row; its locals are the row's shared context
def _row_sites(records, named: tuple, left: tuple, text_columns: frozenset, where) -> list[_Site]:  # noqa: PLR0914
    """Sites of a table whose rows are models; ``named`` the model, variant, task and value columns,
    ``left`` the ignored columns, the dropped ones and the uncertainty columns (-> their score column).
    What depends only on a column (its markers, the run details its name prints) is found once."""
    model_column, variant_column, task_column, value_column = named
    ignore, drop, spread = left
    columns = [c for c in records.columns if c not in drop and c not in spread]
    skip = {model_column, variant_column, *ignore}
    ignored = sorted(ignore - set(spread))
    wanted = [c for c in dict.fromkeys([model_column, *columns, variant_column, task_column, *ignored]) if c]
    unread = text_columns | {model_column}
    by_score: dict[str, list[str]] = defaultdict(list)
    for column, score in spread.items():
        by_score[score].append(column)
    task_details: dict[str, tuple[str, ...]] = {}
    sites = []
    for n, item in enumerate(records.rows):
        shown, read = _read_row(item.cells, wanted, unread)
        label, details = _label(shown[model_column], model_column, item.locator, where)
        variant = shown[variant_column].text if variant_column else ""
        pairs, others = _pairs(shown, columns, skip, model_column, task_column, value_column)
        all_texts, all_marks = _text_cells(shown, read, others), _marked(shown, read, others, text_columns)
        described = _described(shown, ignored)
        context, row_where = _context(item, label), f"{where}: {item.locator}"
        for task, column in pairs:
            score_column = value_column or task
            if task not in task_details:
                task_details[task] = tuple(_task_details(task, records.parts.get(task, ("", ""))[1]))
            texts = {c: t for c, t in all_texts.items() if c != task} if task in all_texts else all_texts
            side = [m for c, marks in all_marks.items() if c != task for m in marks]
            markers = (*label.markers, *records.column_markers.get(score_column, ()), *side, *item.markers)
            locator = f"{item.locator} column {task!r}" if not task_column else item.locator
            cell = shown[column]
            sites.append(
                _Site(
                    label,
                    variant,
                    task,
                    cell,
                    read[column] if column in read else parse_cell(cell.text),
                    markers,
                    (*details, *task_details[task]),
                    context,
                    locator,
                    row_where,
                    texts,
                    n,
                    described,
                    _spread(item.cells, by_score.get(score_column, ()), drop),
                    score_column,
                )
            )
    return sites


def _spread(record, columns: Sequence[str], drop: Sequence[str]) -> tuple[str, ...]:
    """The score's uncertainty from its paired columns (where printed), and the maintainer's dropped columns."""
    if not columns and not drop:
        return ()
    texts = {column: printed(record.get(column)).text for column in columns}
    shown = [uncertainty.qualifier(c, t) for c, t in texts.items() if t and t not in NO_SCORE]
    return (*shown, *map(dropped, drop))


def _pairs(
    shown: Mapping[str, mdtable.Cell],
    columns: list[str],
    skip: set,
    model_column: str,
    task_column: str | None,
    value_column: str | None,
) -> tuple[list[tuple[str, str]], list[str]]:
    """(task, column of its cell) of each score of a row, and its other columns: one per score column of
    a wide table, the one of a long table."""
    if task_column:
        return (
            [(shown[task_column].text, value_column)],
            [c for c in columns if c not in (model_column, task_column, value_column)],
        )
    return [(c, c) for c in columns if c not in skip], [c for c in columns if c != model_column]


def _marked(shown, read, columns, text_columns=frozenset()) -> dict[str, tuple[str, ...]]:
    """Column -> the markers of the row's text cell there (an "LLM" cell ``GPT-4o[^2]``, a "Prompt" cell
    ``n/a [^7]``): they qualify every score of the row. A no-score cell of a score column (``n/a†``
    among numbers) qualifies only itself, so it is left to that column."""
    out = {}
    for column in filter(None, columns):
        cell = shown[column]
        if cell.markers and _no_score(column, read) and (cell.text not in NO_SCORE or column in text_columns):
            out[column] = cell.markers
    return out


def _text_columns(records: Records, labels: str) -> frozenset:
    """Columns that print no score in any row (a "Prompt" or "Authors" column), among those but the
    ``labels`` column, which is read as labels whatever it prints."""
    return frozenset(
        c
        for c in records.columns
        if c != labels and all(parse_cell(printed(r.cells.get(c)).text).value is None for r in records.rows)
    )


def _column_sites(records: Records, task_column: str, ignore: set, drop: set, where: str) -> list[_Site]:
    """Sites of a table whose columns are models and whose ``task_column`` names the task of each row.

    An empty task cell continues the task of the row above, as a reader of a model card
    takes it (``MMLU`` over its language rows); the score says so in its qualifiers. Each
    model column's header is read once, when the first row reaches it.
    """
    models = [c for c in records.columns if c != task_column and c not in ignore and c not in drop]
    ignored = sorted(ignore)
    heads: dict[str, tuple[mdtable.Cell, tuple[str, ...], str]] = {}
    sites = []
    above = None
    for n, item in enumerate(records.rows):
        row_label, continued = _task_label(
            printed(item.cells.get(task_column)), above, task_column, f"{where}: {item.locator}"
        )
        above = row_label
        shown, read = _read_row(item.cells, [*models, *ignored], frozenset())
        texts = _text_cells(shown, read, ignored)
        side = [m for marks in _marked(shown, read, ignored, frozenset(ignore)).values() for m in marks]
        described = _described(shown, ignored)
        for column in models:
            if column not in heads:
                heads[column] = _model_header(records, column, where)
            label, details, sub = heads[column]
            task = f"{row_label.text} / {sub}" if sub else row_label.text
            markers = (*label.markers, *row_label.markers, *side, *item.markers)
            sites.append(
                _Site(
                    label,
                    "",
                    task,
                    shown[column],
                    read[column],
                    markers,
                    (*details, *_task_details(row_label.text, sub)),
                    (*_context(item, label), *continued),
                    f"{item.locator} column {column!r}",
                    f"{where}: {item.locator}",
                    texts,
                    n,
                    described,
                    tuple(map(dropped, sorted(drop))),
                    column,
                )
            )
    return sites


def _model_header(records: Records, column: str, where: str) -> tuple[mdtable.Cell, tuple[str, ...], str]:
    """A model column's label with the markers its header prints, the run details in it, and its sub-column."""
    group, sub = records.parts.get(column, (column, ""))
    name = printed(group)  # a CSV header keeps its markers in its name
    header = attrs.evolve(name, markers=(*records.column_markers.get(column, ()), *name.markers))
    label, details = _label(header, column, f"header column {column!r}", where)
    return label, details, sub


def _task_label(
    cell: mdtable.Cell, above: mdtable.Cell | None, column: str, where: str
) -> tuple[mdtable.Cell, list[str]]:
    """A row's task label, and what to say when its empty cell continues the label above."""
    if cell.text:
        return cell, []
    if above is None:
        raise InputError(
            f"{where}: empty task label in column {column!r}; with --models-as-columns that column "
            "names the benchmark of each row (pick it with --task-column)"
        )
    return above, [f"task {above.text!r} continued from the row above (its cell is empty)"]


def _described(shown: Mapping[str, mdtable.Cell], columns: Sequence[str]) -> tuple[str, ...]:
    """``column: text`` of the row's ignored cells: what they say qualifies every score of the row.

    Every ignored cell is kept, numbers included (an ignored ``Avg`` or ``# Shots`` may say how
    the row was run); only a column the maintainer drops is left out (:func:`printed.dropped`).
    """
    out = []
    for column in columns:
        text = shown[column].text
        if text and text not in NO_SCORE:
            out.append(f"{column}: {text}")
    return tuple(out)


def _task_details(task: str, sub: str) -> list[str]:
    """Run details a task's name prints: ``GSM8K (CoT)``, or a sub-column ``5-shot`` under ``MMLU``."""
    details = qualifiers.run_details(task)[1]
    return [*details, sub] if sub and qualifiers.classify(sub) == qualifiers.RUN else details


def _context(item, label: mdtable.Cell) -> tuple[str, ...]:
    group = [f"in the group {item.group!r} of the table"] if item.group else []
    struck = ["the model label is struck through in the source"] if label.emphasis == "~~" else []
    return (*group, *struck)


def _row(records: Records, site: _Site, source_url: str) -> LedgerRow:
    """One score of one model: its value as printed, and every qualifier of it judged."""
    cell = site.cell
    if len(cell.raw) > MAX_CELL:
        raise InputError(f"{site.where}: cell in column {site.task!r} is longer than {MAX_CELL} characters")
    score = _score(cell, site.read)
    shown, variants, review = _qualify(
        list(dict.fromkeys([*site.markers, *cell.markers, *score.markers])), records.notes
    )
    struck = [c for c in site.context if c.startswith("the model label is struck")]
    review = [*struck, *review, *records.review, *_shared(records, site)]
    kept = _without_markers(score) if score.markers else score.qualifiers
    context = [c for c in site.context if c not in struck]
    quals = [
        *shown,
        *(f"run detail ({d}) printed in the label" for d in site.details),
        *site.described,
        *site.spread,
        *context,
        kept,
    ]
    return LedgerRow(
        source_model=site.label.text,
        source_variant=_variant(site, variants),
        source_task=site.task,
        source_value=cell.raw,
        source_unit=score.unit,
        source_url=source_url,
        source_locator=site.locator,
        qualifiers="; ".join(filter(None, [*quals, *review])),
        status=_status(score, review),
        source_link=site.label.links[0] if site.label.links else "",
    )


def _shared(records: Records, site: _Site) -> list[str]:
    """Why a score a sibling table also prints needs review (see :mod:`context`)."""
    if not records.shared:
        return []
    first = printed(records.rows[site.record].cells.get(records.columns[0])).text
    return [reason for labels, columns, reason in records.shared if first in labels and site.column in columns]


def _variant(site: _Site, variants: list[str]) -> str:
    """What the draft's notes say: the variant cell, run details of labels and ignored cells, footnotes."""
    run = [d for d in site.described if qualifiers.classify(d) == qualifiers.RUN]
    return "; ".join(dict.fromkeys(filter(None, [site.variant, *site.details, *run, *variants])))


def _status(score: Cell, review: list[str]) -> str:
    """``ok`` for one clean number with nothing to review; a cell's markers were judged with the rest."""
    if review:
        return NEEDS_REVIEW
    clean_but_marked = score.status == NEEDS_REVIEW and score.markers and score.value is not None
    return OK if clean_but_marked else score.status


def _without_markers(score: Cell) -> str:
    return "; ".join(q for q in score.qualifiers.split("; ") if not q.startswith("marker(s) "))


def _distinct(rows: list[LedgerRow], sites: list[_Site]) -> list[LedgerRow]:
    """Rows of different table rows that read as one (model, variant, task) are told apart.

    Two printings of one agent that differ only in a column the ledger does not map (a time
    budget, a framework) get that column into their variant ("Budget: 24 h"); when no text
    cell tells them apart they are ``needs_review`` with the reason, never merged.
    """
    groups: dict[tuple, list[int]] = defaultdict(list)
    for n, row in enumerate(rows):
        groups[(row.source_model, row.source_variant, row.source_task)].append(n)
    out = list(rows)
    for members in groups.values():
        if len(members) < 2 or len({sites[n].record for n in members}) < 2:
            continue
        telling = _telling_columns([sites[n].others for n in members])
        where = _printings([sites[m].locator.split(" column ")[0] for m in members])
        for n in members:
            row = out[n]
            if telling:
                extra = "; ".join(f"{c}: {sites[n].others[c]}" for c in telling)
                out[n] = attrs.evolve(
                    row,
                    source_variant="; ".join(filter(None, [row.source_variant, extra])),
                    qualifiers="; ".join(
                        filter(None, [row.qualifiers, f"told apart from the model's other printing by {extra}"])
                    ),
                )
            else:
                reason = (
                    f"{row.source_model!r} is printed {len(members)} times for {row.source_task!r} ({where}) "
                    "and no text column tells the printings apart"
                )
                out[n] = attrs.evolve(
                    row, status=NEEDS_REVIEW, qualifiers="; ".join(filter(None, [row.qualifiers, reason]))
                )
    return out


def _printings(locators: list[str], shown: int = 5) -> str:
    """Where a model is printed, the first few named: every row naming every printing grows as their square."""
    rest = f", and {len(locators) - shown} more" if len(locators) > shown else ""
    return ", ".join(locators[:shown]) + rest


def _telling_columns(others: list[Mapping[str, str]]) -> list[str]:
    """Columns with a text cell in every printing whose texts all differ."""
    shared = set.intersection(*(set(o) for o in others))
    return [c for c in sorted(shared) if len({o[c] for o in others}) == len(others)]
