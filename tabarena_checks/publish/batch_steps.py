"""One step of a batch: ``checks run ACTION ...`` in a child of the step server, watched for a stall.

Each step is the single command itself, run in a process forked from the batch's step server
(:mod:`.batch_fork`) on the command's own arguments, so it goes through the same gate, waivers and
decision record as when a user types it. The child's own session makes its process group (with
processing's index workers) the unit that is watched and stopped; a step that hangs is stopped
without touching the others.

A step makes progress while its process group prints, reads or writes (sockets included: Linux
counts them in ``/proc/PID/io``) or uses CPU, beyond a small floor (:data:`MIN_TICKS`,
:data:`MIN_BYTES`); a step that does none of these for the stall timeout is stopped (SIGTERM, then
SIGKILL) and reported STALLED with the last thing it said.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from tabarena_checks.publish.batch_fork import ServerGone, StepServer

#: what a step ended as; "skipped" (done in an earlier run) and "not-run" are decided without a child
DONE, SKIPPED, BLOCKED, FAILED, STALLED, NOT_RUN = "done", "skipped", "blocked", "failed", "stalled", "not-run"
#: seconds between two looks at a running step
POLL = 0.25
#: seconds a stopped step gets to end on SIGTERM before SIGKILL
GRACE = 5.0
#: what counts as progress since the last: a tenth of a second of CPU (in clock ticks), or 64 KiB read or written
MIN_TICKS = os.sysconf("SC_CLK_TCK") // 10 if hasattr(os, "sysconf") else 10
MIN_BYTES = 64 * 1024
#: characters of a blocking verdict's message that a step's one-line detail shows
DETAIL_CHARS = 300


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


@attrs.frozen
class Answer:
    """What one command's step said: its exit code (None when it was stopped or gave no answer, ``status``
    saying which), what it printed on stdout, and its last line on stderr (or why there is no answer)."""

    status: str
    code: int | None
    stdout: str
    last_line: str


def step_env() -> dict[str, str]:
    """The environment of every step: this one, credentials included, without progress bars (nobody sees them)."""
    return {**os.environ, "CHECKS_PROGRESS": "never"}


def checks_args(root_args: Sequence[str], action: str, args: Sequence[str]) -> list[str]:
    """A step's command line after ``checks``: ``ROOT_ARGS run ACTION ARGS --format json``."""
    return [*root_args, "run", action, *args, "--format", "json"]


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


class _Step:
    """A running step: a child of the step server, its reply and its stderr read by two threads, and the moment
    it last made progress."""

    def __init__(self, server: StepServer, args: Sequence[str], *, cwd: Path, env: dict[str, str], on_line):
        self.server = server
        spawned = server.spawn(args, cwd=str(cwd), env=env)
        self.pid = spawned.pid
        self.reply = b""
        self.last_line = ""
        self._on_line = on_line
        self.counters, self.last_progress = _group_counters(self.pid), time.monotonic()
        #: set once the child's reply descriptor is closed (it answered, or ended without an answer)
        self.answered = threading.Event()
        self._readers = [
            threading.Thread(target=self._read_reply, args=(spawned.reply,), daemon=True),
            threading.Thread(target=self._read_lines, args=(spawned.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read_reply(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            self.reply = stream.read()
        self.last_progress = time.monotonic()
        self.answered.set()

    def _read_lines(self, fd: int) -> None:
        with os.fdopen(fd, "rb") as stream:
            for raw in iter(stream.readline, b""):
                self.last_progress = time.monotonic()
                line = raw.decode("utf-8", "replace").strip()
                if line:
                    self.last_line = line
                    self._on_line(line)

    def said_all(self) -> None:
        """Wait (at most :data:`GRACE`) until every line the step printed is read: its stderr is closed."""
        self._readers[1].join(GRACE)

    def progressed(self) -> None:
        """Move the progress mark when the group used enough CPU or moved enough bytes since the last one.

        A floor, not any change: a hung upload still renews its lock every few minutes (a few hundred
        bytes, a tick of CPU), and that must not keep it alive forever.
        """
        counters = _group_counters(self.pid)
        ticks, read, written = (now - then for now, then in zip(counters, self.counters))
        if min(ticks, read, written) < 0 or ticks >= MIN_TICKS or read + written >= MIN_BYTES:
            self.counters, self.last_progress = counters, time.monotonic()  # (a process of the group ended: < 0)

    def stop(self) -> None:
        """SIGTERM the whole group (the single commands end cleanly on it), SIGKILL what is left after GRACE."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if self.server.ended(self.pid) is not None:
                break
            try:
                os.killpg(self.pid, sig)
            except ProcessLookupError:
                break
            if self.server.ended(self.pid, GRACE) is not None:
                break
        for reader in self._readers:
            reader.join(GRACE)


class Children:
    """The batch's steps, each a child forked from one step server (:mod:`.batch_fork`) that imported what
    they share, so a step starts in milliseconds and ends with its memory. A step that stalls is stopped
    without touching the others. An interrupted batch stops them all (they run in sessions of their own,
    which a Ctrl-C at the terminal does not reach) and starts no other step. A server that ended (killed,
    out of memory) fails the step that wanted it and is started again for the next."""

    def __init__(self, runner: str | None = None, *, fork: bool | None = None) -> None:
        #: ``module:function`` a step's child runs instead of :func:`checks.main` (tests); None: the single commands
        self.runner = runner
        #: how the server starts (:class:`StepServer`): None forks it when this process runs a single thread
        self.fork = fork
        self._lock = threading.Lock()
        self._server: StepServer | None = None
        self._running: set[_Step] = set()
        self.cancelled = threading.Event()

    def start(self) -> None:
        """Start the step server now, before the batch starts threads of its own (see :mod:`.batch_fork`)."""
        self._live_server()

    def _live_server(self) -> StepServer:
        with self._lock:
            if self._server is None or self._server.gone:
                if self._server is not None:
                    self._server.close(GRACE)
                self._server = StepServer(self.runner, fork=self.fork)
            return self._server

    def stop_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            steps = list(self._running)
        for step in steps:
            step.stop()

    def close(self) -> None:
        """End the step server once the batch has no more steps for it."""
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            server.close(GRACE)

    def run(self, step: str, args: Sequence[str], **how: Any) -> StepResult:
        """Run one step's ``checks`` command (``args``) to its end, or stop it once it made no progress for
        ``stall_after`` seconds (``how``: :meth:`command`'s keywords)."""
        if self.cancelled.is_set():
            return StepResult(step, NOT_RUN, detail="the batch was interrupted before this step")
        started = time.monotonic()
        answer = self.command(args, **how)
        seconds = time.monotonic() - started
        if answer.code is None:
            return StepResult(step, answer.status, seconds, None, answer.last_line)
        try:
            report = json.loads(answer.stdout or "null")
        except ValueError:
            report = None
        report = report if isinstance(report, dict) else None
        if self.cancelled.is_set() and answer.code != 0:
            return StepResult(step, FAILED, seconds, None, "interrupted: the step was stopped")
        return judged(step, answer.code, report, answer.last_line, seconds)

    def command(
        self,
        args: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        stall_after: float,
        on_line: Callable[[str], None] = lambda line: None,
    ) -> Answer:
        """``checks ARGS`` run as a step: its exit code, what it printed and the last line it said; no exit code
        (STALLED or FAILED, with why as the last line) when it was stopped or ended without answering."""
        try:
            step = _Step(self._live_server(), args, cwd=cwd, env=env, on_line=on_line)
        except ServerGone as exc:
            return Answer(FAILED, None, "", str(exc))
        with self._lock:
            self._running.add(step)
        try:
            return self._watch(step, stall_after)
        finally:
            with self._lock:
                self._running.discard(step)

    def _watch(self, step: _Step, stall_after: float) -> Answer:
        while not step.answered.wait(POLL):
            step.progressed()
            idle = time.monotonic() - step.last_progress
            if idle > stall_after:
                said = f"its last words: {step.last_line}" if step.last_line else "it had printed nothing"
                step.stop()
                return Answer(STALLED, None, "", f"no progress for {idle:.0f} s, stopped ({said})")
        step.said_all()  # its last lines are read before the step is judged
        if not step.reply:
            code = step.server.ended(step.pid, GRACE)
            if self.cancelled.is_set():
                return Answer(FAILED, None, "", "interrupted: the step was stopped")
            said = f"its process ended (exit {'unknown' if code is None else code})"
            said += f"; its last words: {step.last_line}" if step.last_line else ""
            return Answer(FAILED, None, "", said)
        try:
            reply = json.loads(step.reply)
            return Answer(DONE, int(reply["exit_code"]), str(reply["stdout"]), step.last_line)
        except (ValueError, TypeError, KeyError):
            return Answer(FAILED, None, "", f"the step answered {step.reply[:200]!r}")


def judged(step: str, code: int, report: dict | None, last_line: str, seconds: float) -> StepResult:
    """The step's result from the child's exit code and JSON report: 0 done, 1 blocked, anything else failed."""
    if code == 0:
        return StepResult(step, DONE, seconds, code, _done_detail(report))
    if code == 1 and report is not None:
        blocking = [v for v in report.get("verdicts", []) if v.get("blocks")]
        codes = tuple(v.get("code", "") for v in blocking)
        detail = "; ".join(_blocking_line(v) for v in blocking[:3])
        return StepResult(step, BLOCKED, seconds, code, detail or "blocked", codes)
    error = (report or {}).get("error") or last_line or f"exit {code}"
    return StepResult(step, FAILED, seconds, code, str(error).splitlines()[0])


def _blocking_line(verdict: dict) -> str:
    """A blocking verdict in a step's one-line detail: its code and message, cut at :data:`DETAIL_CHARS` (a
    rule may find a problem in each of a thousand files; the step's decision record keeps the message whole)
    and the number of its findings when there are several."""
    text = f"{verdict.get('code')} {verdict.get('message', '')}".strip()
    if len(text) > DETAIL_CHARS:
        text = text[:DETAIL_CHARS].rstrip() + "..."
    findings = len(verdict.get("findings") or ())
    return f"{text} [{findings} findings]" if findings > 1 else text


def _done_detail(report: dict | None) -> str:
    if not report:
        return ""
    text = report.get("summary") or "\n".join(report.get("plan") or [])
    return text.splitlines()[0] if text else ""
