"""The second read of a run's raw results by ``checks run process``: each task split's files decoded again,
checked against the digests the rules judged, and turned into table rows and aligned predictions.

The rules judged every file through the index, so this read only proves it sees the same bytes
(sha256) and builds what the cache needs. Decoding is the restricted unpickler, pure Python, so it
scales with processes, not threads: with enough files, worker processes each take a whole task split,
decode it and finish it (process writes its predictions and simulates its HPO results there), while
the caller collects the splits in order. At most
:data:`AHEAD` splits are decoded ahead of the caller, so memory stays a few task splits
per process, as in TabArena's per-task processing.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from checks import ActionFailed
from checks.io import sha256
from tabarena_checks.engine.cache_predictions import aligned
from tabarena_checks.engine.cache_tables import from_raw
from tabarena_checks.raw import reader
from tabarena_checks.workers import PARALLEL_THRESHOLD, quiet_pool, worker_count

#: task splits decoded ahead of the caller (two per worker on two cores)
AHEAD = 4

#: one file to read: (path relative to the data directory, absolute path, sha256 the rules judged)
Job = tuple[str, str, str]


def decode_group(jobs: Sequence[Job], meta, finish: Callable[[list, list], Any] | None = None) -> tuple[list, Any]:
    """The table results of one task split's files, in order, and ``finish(results, predictions)``: what the
    caller does with the split's aligned config predictions (None: they are not aligned).

    Runs in a worker process or in the caller; a file whose bytes are not the judged ones, or that
    cannot be read any more, stops the read with :class:`ActionFailed` naming it.
    """
    results, preds = [], []
    for rel, where, digest in jobs:
        try:
            data = reader.read_raw(where)
            if sha256(data) != digest:
                raise ActionFailed(
                    f"{rel} changed after the rules judged it (its sha256 differs from the one "
                    "recorded when it was decoded); nothing was written: run the command again "
                    "to judge the new content"
                )
            raw = reader.unpickle(where, reader.unpack(where, data))
        except reader.RawFileError as exc:
            raise ActionFailed(f"{exc}; nothing was written: run the command again to judge it") from None
        result = from_raw(raw, rel.split("/"), meta)
        results.append(result)
        if finish is not None and result.is_config:
            try:
                preds.append(aligned(raw, result.row["framework"]))
            except (AttributeError, IndexError, KeyError, TypeError, ValueError) as exc:
                # the rules check what alignment reads (raw.artifacts); a shape they let through still ends here
                raise ActionFailed(
                    f"{rel}: its simulation artifacts cannot be aligned as TabArena aligns them "
                    f"({type(exc).__name__}: {exc}); nothing was written: fix or remove the file, "
                    "and please report it, as the rules should have caught it"
                ) from exc
    return results, (finish(results, preds) if finish is not None else None)


@contextmanager
def decoding_pool(files: int, workers: int | None = None, threshold: int = PARALLEL_THRESHOLD):
    """Worker processes for :func:`decoded`, or None when ``files`` are too few (or one core).

    Opened before any other thread of the action starts (the raw copy's): a fork copies only the
    forking thread, and a lock another thread held at that moment would stay held in the worker.
    """
    with quiet_pool(worker_count(workers) if files >= threshold else 1) as pool:
        yield pool


def decoded(
    groups: Iterable[Sequence[Job]], meta, finish: Callable[[list, list], Any] | None = None, pool=None
) -> Iterator[tuple[list, Any]]:
    """:func:`decode_group` of each group, in order; in ``pool``'s workers when given, a few groups ahead
    (``finish`` then runs in the workers too: a module-level function, its result sent back)."""
    if pool is None:
        for group in groups:
            yield decode_group(group, meta, finish)
        return

    todo = iter(groups)
    pending: collections.deque = collections.deque()

    def submit() -> None:
        group = next(todo, None)
        if group is not None:
            pending.append(pool.submit(decode_group, group, meta, finish))

    for _ in range(AHEAD):
        submit()
    while pending:
        try:
            done = pending.popleft().result()
        except BrokenProcessPool:  # a worker was killed (the OOM killer, a signal): said plainly, never a hang
            raise ActionFailed(
                "a worker process reading the raw results died (killed, or out of memory); nothing "
                "was written: free memory and run the command again"
            ) from None
        submit()
        yield done
