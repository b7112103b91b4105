"""One step of a batch: ``checks run ACTION ...`` in a child process, watched for a stall.

Each step is the single command itself, run as a child (``python -m checks run ...``), so it goes
through the same gate, waivers and decision record as when a user types it, and a step that hangs
can be stopped without touching the others. The child's own session makes its process group the
unit that is watched and stopped (process' index workers included).

A step makes progress while its process group prints, reads or writes (sockets included: Linux
counts them in ``/proc/PID/io``) or uses CPU, beyond a small floor (:data:`MIN_TICKS`,
:data:`MIN_BYTES`); a step that does none of these for the stall timeout is stopped (SIGTERM, then SIGKILL) and reported STALLED with the last thing it said.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

#: what a step ended as; "skipped" (done in an earlier run) and "not-run" are decided without a child
DONE, SKIPPED, BLOCKED, FAILED, STALLED, NOT_RUN = "done", "skipped", "blocked", "failed", "stalled", "not-run"
#: seconds between two looks at a running step
POLL = 0.25
#: seconds a stopped step gets to end on SIGTERM before SIGKILL
GRACE = 5.0
#: what counts as progress since the last: a tenth of a second of CPU (in clock ticks), or 64 KiB read or written
MIN_TICKS = os.sysconf("SC_CLK_TCK") // 10 if hasattr(os, "sysconf") else 10
MIN_BYTES = 64 * 1024


@attrs.frozen
class StepResult:
    """What one step of one method ended as, with the one line that says why."""

    step: str
    status: str
    seconds: float = 0.0
    exit_code: int | None = None
    detail: str = ""
    #: the blocking rule codes (for SARIF and the GitHub annotations)
    codes: tuple[str, ...] = ()


def checks_argv(root_args: Sequence[str], action: str, args: Sequence[str]) -> list[str]:
    """The child's command line: this interpreter's ``checks run ACTION ARGS --format json``."""
    return [sys.executable, "-m", "checks", *root_args, "run", action, *args, "--format", "json"]


def _group_counters(pgid: int) -> tuple[int, ...]:
    """CPU ticks and bytes read and written by every process of the group (zeros off Linux)."""
    ticks = rchar = wchar = 0
    proc = Path("/proc")
    if not proc.is_dir():
        return (0, 0, 0)
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[2]) != pgid:  # the fields after the name: state, ppid, pgrp, ...
                continue
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
            for line in (entry / "io").read_text().splitlines():
                name, _, value = line.partition(":")
                if name == "rchar":
                    rchar += int(value)
                elif name == "wchar":
                    wchar += int(value)
        except (OSError, ValueError, IndexError):  # the process ended meanwhile, or /proc/PID/io is not ours
            continue
    return (ticks, rchar, wchar)


class _Watched:
    """A running child: its output read by two threads, and the moment it last made progress."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: dict[str, str], on_line: Callable[[str], None]):
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.out: list[bytes] = []
        self.last_line = ""
        self.last_progress = time.monotonic()
        self.counters = _group_counters(self.proc.pid)
        self._on_line = on_line
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, keep: bool) -> None:
        for raw in iter(stream.readline, b""):
            self.last_progress = time.monotonic()
            if keep:
                self.out.append(raw)
                continue
            line = raw.decode("utf-8", "replace").strip()
            if line:
                self.last_line = line
                self._on_line(line)
        stream.close()

    def progressed(self) -> None:
        """Move the progress mark when the group used enough CPU or moved enough bytes since the last one.

        A floor, not any change: a hung upload still renews its lock every few minutes (a few hundred
        bytes, a tick of CPU), and that must not keep it alive forever.
        """
        counters = _group_counters(self.proc.pid)
        ticks, read, written = (now - then for now, then in zip(counters, self.counters))
        if min(ticks, read, written) < 0 or ticks >= MIN_TICKS or read + written >= MIN_BYTES:
            self.counters, self.last_progress = counters, time.monotonic()  # (a process of the group ended: < 0)

    def stop(self) -> None:
        """SIGTERM the whole group (the single commands end cleanly on it), SIGKILL what is left after GRACE."""
        for sig, wait in ((signal.SIGTERM, GRACE), (signal.SIGKILL, GRACE)):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
                break
            except subprocess.TimeoutExpired:
                continue

    def finish(self) -> dict | None:
        """The child's JSON report once it ended (None when it printed none: a usage error, a kill)."""
        for reader in self._readers:
            reader.join(GRACE)
        try:
            report = json.loads(b"".join(self.out) or b"null")
        except ValueError:
            return None
        return report if isinstance(report, dict) else None


class Children:
    """The steps running now, so an interrupted batch stops them all (they run in sessions of their own,
    which a Ctrl-C at the terminal does not reach) and starts no other."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[_Watched] = set()
        self.cancelled = threading.Event()

    def stop_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            running = list(self._running)
        for child in running:
            child.stop()

    def run(
        self,
        step: str,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        stall_after: float,
        on_line: Callable[[str], None] = lambda line: None,
    ) -> StepResult:
        """Run one step's command to its end, or stop it once it made no progress for ``stall_after`` seconds."""
        if self.cancelled.is_set():
            return StepResult(step, NOT_RUN, detail="the batch was interrupted before this step")
        started = time.monotonic()
        child = _Watched(argv, cwd=cwd, env=env, on_line=on_line)
        with self._lock:
            self._running.add(child)
        try:
            return self._watch(step, child, started, stall_after)
        finally:
            with self._lock:
                self._running.discard(child)

    def _watch(self, step: str, child: _Watched, started: float, stall_after: float) -> StepResult:
        while True:
            try:
                child.proc.wait(POLL)  # returns the moment the step ends: the next one starts without delay
                break
            except subprocess.TimeoutExpired:
                pass
            child.progressed()
            idle = time.monotonic() - child.last_progress
            if idle > stall_after:
                said = f"its last words: {child.last_line}" if child.last_line else "it had printed nothing"
                child.stop()
                child.finish()
                detail = f"no progress for {idle:.0f} s, stopped ({said})"
                return StepResult(step, STALLED, time.monotonic() - started, None, detail)
        report = child.finish()
        if self.cancelled.is_set() and child.proc.returncode != 0:
            return StepResult(step, FAILED, time.monotonic() - started, None, "interrupted: the step was stopped")
        return judged(step, child.proc.returncode, report, child.last_line, time.monotonic() - started)


def judged(step: str, code: int, report: dict | None, last_line: str, seconds: float) -> StepResult:
    """The step's result from the child's exit code and JSON report: 0 done, 1 blocked, anything else failed."""
    if code == 0:
        return StepResult(step, DONE, seconds, code, _done_detail(report))
    if code == 1 and report is not None:
        blocking = [v for v in report.get("verdicts", []) if v.get("blocks")]
        codes = tuple(v.get("code", "") for v in blocking)
        detail = "; ".join(f"{v.get('code')} {v.get('message', '')}".strip() for v in blocking[:3])
        return StepResult(step, BLOCKED, seconds, code, detail or "blocked", codes)
    error = (report or {}).get("error") or last_line or f"exit {code}"
    return StepResult(step, FAILED, seconds, code, str(error).splitlines()[0])


def _done_detail(report: dict | None) -> str:
    if not report:
        return ""
    text = report.get("summary") or "\n".join(report.get("plan") or [])
    return text.splitlines()[0] if text else ""
