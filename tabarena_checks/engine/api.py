"""The engines' one interface: what process hands an engine once the rules passed, and what it gets back.

``checks run process --engine NAME`` judges a run, then calls :func:`build` with a :class:`Job`
(the judged facts and the declared metadata) and an empty directory; the engine fills that
directory with the method cache TabArena 0.1.0 writes and returns a :class:`Built`. Process
alone decides where the cache goes, whether an existing one is kept, the manifest and the
swap into place, so an engine knows nothing of the gate, and a TabArena release that changes
the cache format touches this package only.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import attrs

from tabarena_checks.metadata.model import MethodMetadata

#: ``--engine`` choices -> the module whose ``build(job, out)`` implements it
ENGINES = {"native": "tabarena_checks.engine.native", "tabarena": "tabarena_checks.engine.upstream"}


@attrs.frozen
class Job:
    """An engine's inputs: one method's judged results and its declaration."""

    #: the raw index the rules judged (one method's results; ``sha256`` per file is what was judged)
    index: Any
    #: what the raw data says (:func:`tabarena_checks.raw.inference_memo.infer` of ``index``)
    inference: Any
    metadata: MethodMetadata
    #: the run's data directory (the index's paths are relative to it)
    data_dir: Path
    #: whether raw/ holds a copy of every judged results.pkl
    cache_raw: bool = True
    #: worker processes (None: one per CPU)
    workers: int | None = None
    #: ``--task-metadata``: the metadata of the run's custom tasks
    #: (:class:`~tabarena_checks.raw.task_table.TaskTable`), written as processed/task_metadata.parquet; None for a
    #: run on TabArena-v0.1 tasks only
    task_metadata: Any = None


@attrs.frozen
class Built:
    """What an engine wrote: lines for the user, and the raw copies' digests (relative path -> sha256)."""

    written: list[str]
    copied: dict[str, str] = attrs.Factory(dict)


def build(engine: str, job: Job, out: Path) -> Built:
    """Write the method cache of ``job`` into the empty directory ``out`` with ``engine`` (a key of :data:`ENGINES`).

    Raises :class:`checks.ActionFailed` for what the engine cannot build, and :class:`OSError` for a
    failed write (the caller keeps the previous cache either way).
    """
    return importlib.import_module(ENGINES[engine]).build(job, out)
