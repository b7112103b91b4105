"""One step of a batch: ``checks run ACTION ...`` in a worker process, watched for a stall.

Each step is the single command itself, run by a worker process (:mod:`.batch_worker`) on the
command's own arguments, so it goes through the same gate, waivers and decision record as when a
user types it. A worker runs one step at a time and stays for the next (the interpreter's start-up
and heavy imports are paid once per worker, not per step); a step that hangs is stopped by
stopping its worker, without touching the others, and the next step gets a new worker. The
worker's own session makes its process group the unit that is watched and stopped (process'
index workers included).

A step makes progress while its worker's process group prints, reads or writes (sockets
included: Linux counts them in ``/proc/PID/io``) or uses CPU, beyond a small floor
(:data:`MIN_TICKS`, :data:`MIN_BYTES`); a step that does none of these for the stall timeout is
stopped (SIGTERM, then SIGKILL) and reported STALLED with the last thing it said.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from tabarena_checks.publish.batch_worker import END

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
    """What a worker said to one command: its exit code (None when it was stopped or gave no answer, ``status``
    saying which), what it printed on stdout, and its last line on stderr (or why there is no answer)."""

    status: str
    code: int | None
    stdout: str
    last_line: str


def step_env() -> dict[str, str]:
    """The environment of every worker: this one, credentials included, without progress bars (nobody sees them)."""
    return {**os.environ, "CHECKS_PROGRESS": "never"}


def checks_args(root_args: Sequence[str], action: str, args: Sequence[str]) -> list[str]:
    """A step's command line after ``checks``: ``ROOT_ARGS run ACTION ARGS --format json``."""
    return [*root_args, "run", action, *args, "--format", "json"]


def worker_argv(cwd: Path) -> list[str]:
    """The command that starts a worker for a batch run in ``cwd`` (named, so the process list shows it)."""
    return [sys.executable, "-m", "tabarena_checks.publish.batch_worker", str(cwd)]


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


class _Worker:
    """A running worker: its replies and its stderr read by two threads, and the moment it last made progress."""

    def __init__(self, argv: Sequence[str], *, cwd: Path, env: dict[str, str]):
        self.key = (str(cwd), tuple(sorted(env.items())))
        self.proc = subprocess.Popen(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.replies: queue.Queue[bytes] = queue.Queue()
        #: set once the worker said all a command printed on stderr (its END line)
        self.said_all = threading.Event()
        self.last_line = ""
        self.last_progress = time.monotonic()
        self.counters = (0, 0, 0)
        self._on_line: Callable[[str], None] = lambda line: None
        self._readers = [
            threading.Thread(target=self._read, args=(self.proc.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(self.proc.stderr, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, stream, replies: bool) -> None:
        for raw in iter(stream.readline, b""):
            self.last_progress = time.monotonic()
            if replies:
                self.replies.put(raw)
                continue
            line = raw.decode("utf-8", "replace").strip()
            if line == END:
                self.said_all.set()
            elif line:
                self.last_line = line
                self._on_line(line)
        stream.close()

    def ask(self, args: Sequence[str], on_line: Callable[[str], None]) -> None:
        """Hand the worker one command; its progress is counted from now."""
        self._on_line, self.last_line = on_line, ""
        self.said_all.clear()
        self.counters, self.last_progress = _group_counters(self.proc.pid), time.monotonic()
        self.proc.stdin.write(json.dumps(list(args)).encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self) -> bytes | None:
        """The command's reply, waiting at most :data:`POLL`; None while it runs, or once the worker ended
        without one."""
        try:
            return self.replies.get(timeout=POLL)
        except queue.Empty:
            if self.proc.poll() is None:
                return None
        self._readers[0].join(GRACE)  # the worker ended: a reply it wrote last is read by now
        try:
            return self.replies.get_nowait()
        except queue.Empty:
            return None

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
        self._closed()

    def close(self) -> None:
        """End an idle worker: no more commands (end of input), then wait for it (stop it if it does not end)."""
        try:
            self.proc.stdin.close()
        except OSError:  # it is gone already
            pass
        try:
            self.proc.wait(GRACE)
        except subprocess.TimeoutExpired:
            self.stop()
            return
        self._closed()

    def _closed(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        for reader in self._readers:
            reader.join(GRACE)


class Children:
    """The batch's worker processes: each runs one step at a time and is kept for the next; one whose step
    stalled, failed to answer or was interrupted is stopped and replaced by a new one for the steps that
    follow. An interrupted batch stops them all (they run in sessions of their own, which a Ctrl-C at the
    terminal does not reach) and starts no other step."""

    def __init__(self, worker: Callable[[Path], Sequence[str]] = worker_argv) -> None:
        self.worker = worker
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._all: set[_Worker] = set()
        self.cancelled = threading.Event()

    def stop_all(self) -> None:
        self.cancelled.set()
        with self._lock:
            workers, self._idle = list(self._all), []
        for worker in workers:
            worker.stop()

    def close(self) -> None:
        """End the idle workers once the batch has no more steps for them."""
        with self._lock:
            idle, self._idle = self._idle, []
            self._all.difference_update(idle)
        for worker in idle:
            worker.close()

    def _take(self, cwd: Path, env: dict[str, str]) -> _Worker:
        key = (str(cwd), tuple(sorted(env.items())))
        with self._lock:
            for worker in self._idle:
                if worker.key == key and worker.proc.poll() is None:
                    self._idle.remove(worker)
                    return worker
        worker = _Worker(self.worker(cwd), cwd=cwd, env=env)
        with self._lock:
            self._all.add(worker)
        return worker

    def _give_back(self, worker: _Worker, keep: bool) -> None:
        with self._lock:
            if keep and not self.cancelled.is_set():
                self._idle.append(worker)
                return
            self._all.discard(worker)
        worker.stop()

    def run(self, step: str, args: Sequence[str], **how: Any) -> StepResult:
        """Run one step's ``checks`` command (``args``) to its end in a worker, or stop it once it made no
        progress for ``stall_after`` seconds (``how``: :meth:`command`'s keywords)."""
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
        """``checks ARGS`` run by a worker: its exit code, what it printed and the last line it said; no exit code
        (STALLED or FAILED, with why as the last line) when it was stopped or its worker ended without answering."""
        worker = self._take(cwd, env)
        answer = None
        try:
            answer = self._watch(worker, args, stall_after, on_line)
            return answer
        finally:  # a worker that answered is kept; one stopped, dead or interrupted is replaced
            self._give_back(worker, keep=answer is not None and answer.code is not None)

    def _watch(self, worker: _Worker, args: Sequence[str], stall_after: float, on_line) -> Answer:
        try:
            worker.ask(args, on_line)
        except OSError:  # it died before the question: said as the step's failure, and replaced
            return Answer(FAILED, None, "", "the worker process ended")
        while (raw := worker.reply()) is None:
            if worker.proc.poll() is not None:
                said = f"its worker process ended (exit {worker.proc.returncode})"
                said += f"; its last words: {worker.last_line}" if worker.last_line else ""
                return Answer(
                    FAILED, None, "", "interrupted: the step was stopped" if self.cancelled.is_set() else said
                )
            worker.progressed()
            idle = time.monotonic() - worker.last_progress
            if idle > stall_after:
                said = f"its last words: {worker.last_line}" if worker.last_line else "it had printed nothing"
                worker.stop()
                return Answer(STALLED, None, "", f"no progress for {idle:.0f} s, stopped ({said})")
        worker.said_all.wait(GRACE)  # its last lines are read before the next command is asked
        try:
            reply = json.loads(raw)
            return Answer(DONE, int(reply["exit_code"]), str(reply["stdout"]), worker.last_line)
        except (ValueError, TypeError, KeyError):
            return Answer(FAILED, None, "", f"the worker answered {raw[:200]!r}")


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
