"""Watching a batch as it runs: a live table on a terminal, one line per event anywhere else.

On a terminal (stderr) rich redraws one row per method: its step, what the step said last and
how long it has run. Elsewhere (a CI log, a file, a pipe) each step that starts or ends is one
line on stderr (``START Nori process``, ``DONE Nori process 41 s``, ``FAILED Foo upload: ...``),
so a log can be grepped and a tail shows where the batch is.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator

from checks import progress
from checks.visible import guarded, visible
from tabarena_checks.publish.batch_plan import Plan
from tabarena_checks.publish.batch_report import event_line
from tabarena_checks.publish.batch_steps import StepResult


class EventLines:
    """One line per event on a stream; lines from several lanes never interleave."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self._lock = threading.Lock()

    def _write(self, line: str) -> None:
        with self._lock:
            self.stream.write(line + "\n")
            self.stream.flush()

    def started(self, method: str, step: str) -> None:
        self._write(guarded(visible(f"START {method} {step}")))

    def said(self, method: str, step: str, line: str) -> None:
        """What a step prints is its own business: only the watchdog and the live view read it."""

    def finished(self, method: str, result: StepResult) -> None:
        self._write(event_line(method, result))


class LiveView:
    """A rich table, one row per method, redrawn by rich's own thread."""

    def __init__(self, plan: Plan):
        self.rows = {m.name: ["waiting", "", 0.0, ""] for m in plan.methods}
        self._lock = threading.Lock()

    def started(self, method: str, step: str) -> None:
        with self._lock:
            self.rows[method] = [step, "running", time.monotonic(), ""]

    def said(self, method: str, step: str, line: str) -> None:
        with self._lock:
            if method in self.rows:
                self.rows[method][3] = line

    def finished(self, method: str, result: StepResult) -> None:
        with self._lock:
            row = self.rows.setdefault(method, [result.step, "", 0.0, ""])
            row[:] = [result.step, result.status, 0.0, result.detail]

    def __rich__(self):
        from rich.table import Table

        table = Table("method", "step", "state", "elapsed", "last said", expand=True)
        with self._lock:
            for method, (step, state, since, said) in self.rows.items():
                elapsed = f"{time.monotonic() - since:.0f} s" if state == "running" else ""
                table.add_row(visible(method), step, state, elapsed, visible(said)[-80:])
        return table


@contextlib.contextmanager
def watcher(plan: Plan) -> Iterator:
    """The live view when stderr is a terminal that bars may be drawn on (``progress.enabled``), else event lines."""
    if not progress.enabled():
        yield EventLines()
        return
    from rich.console import Console
    from rich.live import Live

    view = LiveView(plan)
    with Live(view, console=Console(stderr=True), refresh_per_second=4, transient=False):
        yield view
