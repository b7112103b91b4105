"""Progress bars for steps that can take over a second, on a terminal only.

``with progress.bar("decode", total=n, unit="files") as advance: ... advance(1)`` shows a rich
bar on stderr when stderr is a terminal and the command was not given ``-q``; otherwise
``advance`` does nothing. ``CHECKS_PROGRESS=never`` turns bars off, ``always`` draws them even
off a terminal (CI logs, tests). ``advance`` is cheap enough for a per-file or per-chunk call
from worker threads: it adds to a counter and hands the sum to rich at most ten times a
second; rich redraws from its own thread, so the work never waits on the terminal.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

ENV = "CHECKS_PROGRESS"
#: seconds between two hand-overs of the counted work to rich
INTERVAL = 0.1


def _quiet() -> bool:
    try:
        import click
    except ImportError:  # pragma: no cover - click is a core dependency
        return False
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get("checks.output", {}).get("quiet"))


def enabled() -> bool:
    """Whether a bar would be drawn now: a terminal (or ``always``), no ``-q``, not ``never``."""
    mode = os.environ.get(ENV, "").strip().lower()
    if mode == "never" or _quiet():
        return False
    return mode == "always" or sys.stderr.isatty()


class _Counter:
    """Sums ``advance`` calls and forwards them to rich at most every :data:`INTERVAL` seconds."""

    def __init__(self, progress, task) -> None:
        self._progress, self._task = progress, task
        self._pending = 0
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def __call__(self, amount: float = 1) -> None:
        with self._lock:
            self._pending += amount
            now = time.monotonic()
            if now - self._last < INTERVAL:
                return
            pending, self._pending, self._last = self._pending, 0, now
        self._progress.advance(self._task, pending)

    def flush(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, 0
        if pending:
            self._progress.advance(self._task, pending)


def _nothing(amount: float = 1) -> None:
    return None


@contextlib.contextmanager
def bar(description: str, total: float | None, *, unit: str = "files") -> Iterator[Callable[[float], None]]:
    """A bar for ``total`` units (``bytes`` shows sizes and speed); yields ``advance(amount=1)``."""
    if not enabled():
        yield _nothing
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    console = Console(file=sys.stderr, force_terminal=os.environ.get(ENV, "").lower() == "always" or None)
    counted = [DownloadColumn(), TransferSpeedColumn()] if unit == "bytes" else [MofNCompleteColumn(),
                                                                                  TextColumn(unit)]
    progress = Progress(TextColumn("{task.description}"), BarColumn(), *counted, TimeRemainingColumn(),
                        console=console, transient=False, refresh_per_second=8)
    with progress:
        task = progress.add_task(description, total=total)
        counter = _Counter(progress, task)
        try:
            yield counter
        finally:
            counter.flush()
