"""The metadata of tasks outside the TabArena-v0.1 suite, as the maintainer hands it to ``checks run process``.

TabArena processes only tasks whose metadata it is given: its ``process_raw`` knows the suite's
51 tasks and drops every result of another task ("Removing file paths for task not in
task_metadata"), and a processed cache names each task's metadata in
``processed/task_metadata.parquet``. A run on custom tasks (TabArena's ``UserTask`` path: task
directories named by slugs, task ids hashed beyond int32) therefore needs that metadata from outside the
results. ``--task-metadata FILE`` takes it in the form TabArena itself writes: the one-row-per-task
frame ``TaskMetadataCollection.to_legacy_df()`` returns (parquet, or CSV), the frame TabArena's
processing writes as ``processed/task_metadata.parquet``. The UserTask cache files are not read:
they are pickles of pandas frames and TabArena objects, which the restricted reader does not build.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from checks import InputError

#: the columns every row must hold: processing and its loaders look tasks up by these
REQUIRED = ("dataset", "tid", "problem_type")
#: largest file accepted (a frame of thousands of tasks is well under a megabyte)
MAX_BYTES = 64 * 1024 * 1024
#: most rows accepted: one per task, and no benchmark has a hundred thousand (parquet compresses
#: 20,000,000 repeated rows into 436 KB, so the file's size says nothing of what it decodes to)
MAX_ROWS = 100_000
#: most bytes the decoded columns may take (Arrow's count), as for a ledger dataset
MAX_DECODED_BYTES = 64 * 1024 * 1024
#: rows decoded at a time, so a file over a limit is refused after one batch past it
BATCH_ROWS = 8192
PROBLEM_TYPES = ("binary", "multiclass", "regression")


@attrs.frozen
class TaskTable:
    """A task-metadata frame read from ``path``; ``rows`` maps each ``dataset`` to its row."""

    path: str
    table: Any = attrs.field(repr=False)
    rows: dict[str, dict[str, Any]] = attrs.field(repr=False)


def read(path: str | Path) -> TaskTable:
    """Read and check the task-metadata frame at ``path``; an :class:`InputError` names what is wrong and the fix."""
    table = _load(Path(path))
    missing = [c for c in REQUIRED if c not in table.column_names]
    if missing:
        raise InputError(
            f"{path}: task metadata has no column {', '.join(map(repr, missing))}; expected TabArena's "
            "task-metadata frame (TaskMetadataCollection.to_legacy_df(), one row per task with "
            "'dataset', 'tid' and 'problem_type')"
        )
    rows: dict[str, dict[str, Any]] = {}
    for i, row in enumerate(
        table.select(
            [c for c in ("dataset", "tid", "problem_type", "eval_metric") if c in table.column_names]
        ).to_pylist()
    ):
        _check_row(f"{path}: row {i + 1}", row, rows)
        rows[row["dataset"]] = row
    return TaskTable(str(path), table, rows)


def _check_row(where: str, row: dict[str, Any], seen: dict[str, Any]) -> None:
    """Refuse a row whose name, tid or problem type processing could not use, or a task already seen."""
    dataset, tid, problem = row["dataset"], row["tid"], row["problem_type"]
    if not isinstance(dataset, str) or not dataset:
        raise InputError(f"{where}: 'dataset' must be the task's name (got {dataset!r})")
    if type(tid) is not int:
        raise InputError(f"{where} ({dataset}): 'tid' must be an integer task id (got {tid!r})")
    if problem not in PROBLEM_TYPES:
        raise InputError(
            f"{where} ({dataset}): 'problem_type' must be one of {', '.join(PROBLEM_TYPES)} (got {problem!r})"
        )
    if dataset in seen:
        raise InputError(f"{where}: task {dataset!r} has a row already; keep one row per task")


def _load(path: Path):
    import pyarrow as pa
    import pyarrow.csv as pcsv
    import pyarrow.parquet as pq

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise InputError(f"--task-metadata {path}: cannot be read ({exc.strerror or exc})") from None
    if not path.is_file():
        raise InputError(f"--task-metadata {path}: not a file; pass the task-metadata parquet or CSV file")
    if size > MAX_BYTES:
        raise InputError(f"--task-metadata {path}: {size} bytes, over the {MAX_BYTES}-byte limit of a task table")
    try:
        if path.suffix.lower() == ".csv":
            reader = pcsv.open_csv(path, read_options=pcsv.ReadOptions(block_size=1 << 20))
            return _bounded(path, reader.schema, reader)
        parquet = pq.ParquetFile(path)
        if parquet.metadata.num_rows > MAX_ROWS:
            _too_many(path, f"{parquet.metadata.num_rows:,} rows")
        return _bounded(path, parquet.schema_arrow, parquet.iter_batches(batch_size=BATCH_ROWS))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(
            f"--task-metadata {path}: not a readable {'CSV' if path.suffix.lower() == '.csv' else 'parquet'} "
            f"file ({exc}); write it with TaskMetadataCollection.to_legacy_df().to_parquet(...)"
        ) from None


def _bounded(path: Path, schema, batches):
    """The table of ``batches``, decoded one batch at a time and refused once past :data:`MAX_ROWS` rows or
    :data:`MAX_DECODED_BYTES` bytes (a file's own row count may lie; what is decoded is counted)."""
    import pyarrow as pa

    kept, rows, size = [], 0, 0
    for batch in batches:
        rows += batch.num_rows
        size += batch.nbytes
        if rows > MAX_ROWS:
            _too_many(path, f"more than {MAX_ROWS:,} rows")
        if size > MAX_DECODED_BYTES:
            _too_many(path, f"more than {MAX_DECODED_BYTES:,} bytes once decoded")
        kept.append(batch)
    return pa.Table.from_batches(kept, schema=schema)


def _too_many(path: Path, what: str) -> None:
    raise InputError(
        f"--task-metadata {path}: {what}, over the limit of a task table ({MAX_ROWS:,} rows, "
        f"{MAX_DECODED_BYTES:,} bytes decoded); pass one row per task of the run "
        "(TaskMetadataCollection.to_legacy_df())"
    )
