"""Progress bars for steps that can take over a second, on a terminal only.

``with progress.bar("decode", total=n, unit="files") as advance: ... advance(1)`` shows a rich
bar on stderr when stderr is a terminal and the command was not given ``-q`` (a plugin's own
command takes it with :func:`quiet_option`); otherwise ``advance`` does nothing.
``CHECKS_PROGRESS=never`` turns bars off, ``always`` draws them even off a terminal (CI logs, tests). ``advance`` is cheap enough for a per-file or per-chunk call
from worker threads: it adds to a counter and hands the sum to rich at most ten times a
second; rich redraws from its own thread, so the work never waits on the terminal. Bars open
at the same time (process copies raw/ while it writes the tables) share one live display,
since a terminal holds only one.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import click

ENV = "CHECKS_PROGRESS"
#: seconds between two hand-overs of the counted work to rich
INTERVAL = 0.1

T = TypeVar("T")


#: where ``-q`` is kept in the click context (``checks.reporting`` keeps the output options there too)
META_KEY = "checks.output"


def _quiet() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.meta.get(META_KEY, {}).get("quiet"))


def quiet_option(help: str = "Draw no progress bar.") -> Callable:  # noqa: A002 - click's name
    """``@progress.quiet_option()``: ``-q``/``--quiet`` for a command that draws bars but judges nothing.

    ``checks run`` and ``checks precommit`` take ``-q`` with their output options; a report or
    tool command (``checks inspect``, ``checks tabarena synth``) takes this one, so ``-q`` stops
    its bars the same way, on a terminal too. The flag is kept in the click context, not passed
    to the command.
    """

    def store(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        if value:
            ctx.meta.setdefault(META_KEY, {})["quiet"] = True
        return value

    return click.option("-q", "--quiet", is_flag=True, expose_value=False, callback=store, help=help)


def enabled() -> bool:
    """Whether a bar would be drawn now: a terminal (or ``always``), no ``-q``, not ``never``, and rich
    installed (it comes with the workflows' extras; the core install, which the pre-commit hooks get,
    draws no bar and carries no terminal library)."""
    mode = os.environ.get(ENV, "").strip().lower()
    if mode == "never" or _quiet():
        return False
    return (mode == "always" or sys.stderr.isatty()) and _have_rich()


@functools.cache
def _have_rich() -> bool:

    return importlib.util.find_spec("rich") is not None


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


def _new_progress():
    """A rich Progress on stderr whose count column reads each task's unit (bytes: size and speed)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.text import Text

    class Counted(ProgressColumn):
        """``3/8 files``, or for bytes ``1.2/4.0 MB 3.1 MB/s``."""

        def __init__(self) -> None:
            super().__init__()
            self._size, self._speed, self._count = DownloadColumn(), TransferSpeedColumn(), MofNCompleteColumn()

        def render(self, task) -> Text:
            unit = task.fields.get("unit", "")
            if unit == "bytes":
                return Text.assemble(self._size.render(task), " ", self._speed.render(task))
            return Text.assemble(self._count.render(task), f" {unit}")

    console = Console(file=sys.stderr, force_terminal=os.environ.get(ENV, "").lower() == "always" or None)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        Counted(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        refresh_per_second=8,
    )


_live_lock = threading.Lock()
_live: list = []  # [progress, number of open bars] while a bar is open


@contextlib.contextmanager
def _shared() -> Iterator:
    """The live Progress, started by the first open bar and stopped when the last one closes."""
    with _live_lock:
        if not _live:
            progress = _new_progress()
            progress.start()
            _live[:] = [progress, 0]
        _live[1] += 1
        progress = _live[0]
    try:
        yield progress
    finally:
        with _live_lock:
            _live[1] -= 1
            if _live[1] == 0:
                _live.clear()
                progress.stop()


@contextlib.contextmanager
def bar(
    description: str, total: float | None, *, unit: str = "files", show: bool | None = None
) -> Iterator[Callable[[float], None]]:
    """A bar for ``total`` units (``bytes`` shows sizes and speed); yields ``advance(amount=1)``.

    ``show`` overrides :func:`enabled` (a library caller that was told to draw, or not).
    """
    if not (enabled() if show is None else show):
        yield _nothing
        return
    with _shared() as progress:
        task = progress.add_task(description, total=total, unit=unit)
        counter = _Counter(progress, task)
        try:
            yield counter
        finally:
            counter.flush()
            progress.refresh()


def counted(
    items: Iterable[T],
    description: str,
    total: float | None,
    *,
    unit: str = "files",
    weight: Callable[[T], float] = lambda item: 1,
) -> Iterator[T]:
    """``items`` with a bar advanced by ``weight(item)`` once the loop body is done with each item."""
    with bar(description, total, unit=unit) as advance:
        for item in items:
            yield item
            advance(weight(item))
