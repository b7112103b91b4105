"""The batch's step server: a process that forks a child for each step.

A step run as a fresh ``python -m checks run ...`` pays the interpreter's start-up and the heavy
imports (pyarrow, numpy, DuckDB) every time: on small methods that is most of a step. One
interpreter kept for every step pays them once but keeps what each step left behind (the S3 client
and botocore's models, DuckDB's buffers) beside the next processing. So the batch imports what the
steps share (:data:`PRELOAD`) once, then forks the server, before it starts a thread of its own;
the server forks each step from there. The batch, the server and every step share those pages (the
kernel copies only the pages a process writes), a step runs the single command,
:func:`checks.main` on the command's own arguments (the same gate, rules, waivers, exit codes and
decision record), and its memory goes with it. The server runs no step itself and stays single
threaded, so forking from it is safe while the batch's threads run. boto3 is not preloaded:
processing never holds it, and an upload imports it in its own child.

Each child starts a session of its own, so the batch watches and stops a step (with the index
workers processing forks) as one process group, and a Ctrl-C at the terminal reaches the batch
alone, which stops its steps itself.

The protocol, one message per datagram on a ``SOCK_SEQPACKET`` pair:

- batch to server: ``{"id", "args", "cwd", "env"}`` (JSON) with two descriptors, where the child
  writes its reply and where its stderr (and stdout) go;
- server to batch: ``{"id", "pid"}`` once forked (``{"id", "error"}`` when it could not fork), then
  ``{"pid", "code"}`` when that child ended (its exit code, ``-N`` killed by signal N);
- a child writes ``{"exit_code", "stdout"}`` (what the command printed on stdout, its ``--format
  json`` report) on its reply descriptor and ends. Stopped (SIGTERM, SIGINT), the command unwinds
  as the single command does and the child ends without a reply.

End of input (the batch closed its end, or died) ends the server; a running step ends on its own.
"""

from __future__ import annotations

import faulthandler
import gc
import importlib
import io
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path

import attrs

import checks

#: a step's command: ``checks ARGS`` in the child, its stdout captured (tests give a stand-in)
Runner = Callable[[list[str]], int]
#: what every step imports: the actions and processing's engine and libraries (the plugins come by entry point)
PRELOAD = (
    "checks.cli",
    "tabarena_checks.publish.process",
    "tabarena_checks.publish.upload",
    "tabarena_checks.publish.register",
    "tabarena_checks.publish.benchmark_log",
    "tabarena_checks.engine.native",
    "pyarrow.parquet",
    "duckdb",
    "numpy",
)
#: the largest request (arguments and environment) the batch sends
MAX_MESSAGE = 1 << 20
#: exit code of a child whose command was stopped, or that could not start it (the reply says nothing)
STOPPED, BROKEN = 2, 70


class ServerGone(OSError):
    """The step server ended (killed, out of memory): nothing more can be forked from it."""


def _preload() -> None:
    """Import what the steps share; a module that cannot be imported is left to the step, which says why."""
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the step that needs it reports the error as the single command does
            continue
    for ep in entry_points(group="checks"):
        try:
            ep.load()
        except Exception:  # noqa: BLE001 - the same: the step's plugin loading names it
            continue


def _captured(runner: Runner, args: list[str]) -> tuple[int, str]:
    """``runner(args)``: its exit code and what it printed on stdout."""
    captured = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved, sys.stdout = sys.stdout, captured
    try:
        code = runner(args)
    finally:
        sys.stdout = saved
    return code, captured.buffer.getvalue().decode("utf-8", "replace")


def _name(name: str) -> None:
    """This process's name in the process list (``top``, ``ps -o comm``), such as ``checks upload``."""
    try:
        Path("/proc/self/comm").write_text(name[:15])
    except OSError:  # not Linux: the name is a convenience
        pass


def _step(request: dict, reply_fd: int, err_fd: int, runner: Runner) -> int:
    """In a forked child: run one command with the request's folder, environment and descriptors; its exit code."""
    stopped: list[int] = []

    def stop(signum, frame) -> None:
        stopped.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    os.setsid()
    args = [str(a) for a in request["args"]]
    _name(f"checks {args[args.index('run') + 1] if 'run' in args[:-1] else 'step'}")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(err_fd, 2)
    os.dup2(err_fd, 1)
    for fd in (null, err_fd):
        os.close(fd)
    # new stream objects: the server's may hold a lock taken by a thread of the batch at the fork
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - they live as long as the child
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr
    faulthandler.enable(sys.stderr)  # a step that crashes says where, as its last words
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        code, out = _captured(runner, args)
    except KeyboardInterrupt:  # stopped before the command could catch it
        return STOPPED
    if stopped:  # the command unwound and said "checks: aborted": no reply, as a stopped single command
        return STOPPED
    sys.stderr.flush()
    try:
        with open(reply_fd, "wb", closefd=False) as reply:
            reply.write(json.dumps({"exit_code": code, "stdout": out}).encode())
    except BrokenPipeError:  # the batch is gone: nobody reads the reply, the command's work is done
        pass
    return 0


def _child(server: socket.socket, wakeup: Sequence[int], request: dict, fds: list[int], runner: Runner) -> None:
    """The forked child's whole life: it never returns into the server's loop."""
    code = BROKEN
    try:
        server.close()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # processing waits for its own index workers
        for fd in wakeup:
            os.close(fd)
        code = _step(request, fds[0], fds[1], runner)
    except BaseException:  # noqa: BLE001 - a broken request or set-up: said on the step's stderr, not the server's
        traceback.print_exc()
    finally:
        try:
            sys.stderr.flush()
        finally:
            os._exit(code)


def _reap(sock: socket.socket, running: set[int]) -> None:
    """Say the exit code of every child that ended."""
    while running:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if not pid:
            return
        running.discard(pid)
        sock.send(json.dumps({"pid": pid, "code": os.waitstatus_to_exitcode(status)}).encode())


def _fork(sock: socket.socket, wakeup: Sequence[int], request: dict, fds: list[int], runner: Runner) -> int | None:
    """Fork the request's child and say its pid (or why there is none); the pid."""
    try:
        pid = os.fork()
    except OSError as exc:
        sock.send(json.dumps({"id": request["id"], "error": str(exc)}).encode())
        return None
    if pid == 0:
        _child(sock, wakeup, request, fds, runner)
    sock.send(json.dumps({"id": request["id"], "pid": pid}).encode())
    return pid


def serve(sock: socket.socket, runner: Runner) -> None:
    """The server's loop: fork a child per request, say its pid, and say its exit code when it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the terminal's Ctrl-C is the batch's to act on
    _name("checks server")
    wakeup = os.pipe()
    os.set_blocking(wakeup[1], False)
    signal.set_wakeup_fd(wakeup[1])
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # a child ended: the wakeup descriptor says so
    running: set[int] = set()
    while True:
        ready, _, _ = select.select([sock, wakeup[0]], [], [])
        if wakeup[0] in ready:
            os.read(wakeup[0], 512)
        _reap(sock, running)
        if sock not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 2)
        try:
            if not data:  # the batch closed its end, or died
                return
            pid = _fork(sock, wakeup, json.loads(data), fds, runner)
            if pid is not None:
                running.add(pid)
        finally:
            for fd in fds:
                os.close(fd)


@attrs.frozen
class Spawned:
    """A step's child as the batch sees it: its pid (and process group), its reply and its stderr to read."""

    pid: int
    reply: int
    stderr: int


def alone() -> bool:
    """Whether this process runs a single thread (Linux's task list): nothing it forks can then inherit a lock,
    a thread pool or a database whose threads it does not have. Unknown (no /proc) counts as not alone."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def runner_of(spec: str | None) -> Runner:
    """The runner named ``module:function`` (None: :func:`checks.main`)."""
    if spec is None:
        return checks.main
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _ready(spec: str | None) -> Runner:
    """What the server's children run, with what they share imported (:func:`checks.main`: :data:`PRELOAD`) and
    frozen, so no collection writes to it once forked (the batch's pages, the server's, a step's)."""
    if spec is None:
        _preload()
    runner = runner_of(spec)
    gc.freeze()
    return runner


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tabarena_checks.publish.batch_fork FD [RUNNER]``: a server started afresh, on the socket FD."""
    args = list(sys.argv[1:] if argv is None else argv)
    sock = socket.socket(fileno=int(args[0]))
    serve(sock, _ready(args[1] if len(args) > 1 else None))


class StepServer:
    """The batch's handle on its step server: :meth:`spawn` a step, :meth:`ended` its exit code, :meth:`close`.

    Forked from the batch when the batch runs a single thread (so steps share its pages, :func:`alone`);
    otherwise (a caller that already runs threads: an embedded S3 server, a database, a thread pool) started
    as a fresh interpreter, which imports for itself: a fork would copy locks that nobody will release.
    """

    #: seconds the server may take to fork a step (a fresh one imports first)
    ANSWER_WITHIN = 120.0

    def __init__(self, runner: str | None = None, *, fork: bool | None = None) -> None:
        """Start the server. ``runner``: ``module:function`` a step runs instead of :func:`checks.main` (nothing
        is preloaded then); ``fork``: True or False chooses how, None forks when :func:`alone`."""
        forking = alone() if fork is None else fork
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._proc: subprocess.Popen | None = None
        if forking:
            self.pid = self._fork(ours, theirs, runner)
        else:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", __name__, str(theirs.fileno()), *([runner] if runner else [])],
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},  # the batch's modules
            )
            self.pid = self._proc.pid
        theirs.close()
        self._sock = ours
        self._changed = threading.Condition()
        self._answers: dict[int, dict] = {}
        self._codes: dict[int, int] = {}
        self._next = 0
        self.gone = False
        self._reader = threading.Thread(target=self._read, name="step-server", daemon=True)
        self._reader.start()

    @staticmethod
    def _fork(ours: socket.socket, theirs: socket.socket, runner: str | None) -> int:
        serving = _ready(runner)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                ours.close()  # so the batch's end closing (or the batch dying) is the server's end of input
                serve(theirs, serving)
            except BaseException:  # noqa: BLE001 - the batch sees the server gone and says so for each step
                code = BROKEN
            finally:
                os._exit(code)
        return pid

    def _read(self) -> None:
        while True:
            try:
                data = self._sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self.gone = True
                    self._changed.notify_all()
                    return
                message = json.loads(data)
                if "id" in message:
                    self._answers[message["id"]] = message
                else:
                    self._codes[message["pid"]] = message["code"]
                self._changed.notify_all()

    def spawn(self, args: Sequence[str], *, cwd: str, env: dict[str, str]) -> Spawned:
        """Fork a child running ``checks ARGS`` in ``cwd`` with ``env``; raises :class:`ServerGone` when it cannot."""
        reply_r, reply_w = os.pipe()
        err_r, err_w = os.pipe()
        with self._changed:
            self._next += 1
            key = self._next
        request = json.dumps({"id": key, "args": list(args), "cwd": cwd, "env": env}).encode()
        try:
            socket.send_fds(self._sock, [request], [reply_w, err_w])
            with self._changed:
                answered = self._changed.wait_for(lambda: key in self._answers or self.gone, self.ANSWER_WITHIN)
                answer = self._answers.pop(key, None)
        except OSError as exc:
            answered, answer = True, {"error": str(exc)}
        finally:
            os.close(reply_w)
            os.close(err_w)
        if answer is None or "pid" not in answer:
            os.close(reply_r)
            os.close(err_r)
            why = (answer or {}).get("error") or ("it ended" if answered else "it did not answer")
            raise ServerGone(f"the batch's step server could not start the step: {why}")
        return Spawned(answer["pid"], reply_r, err_r)

    def ended(self, pid: int, timeout: float = 0.0) -> int | None:
        """The exit code of the step ``pid`` once it ended (waiting at most ``timeout``), else None."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self._codes or self.gone, timeout)
            return self._codes.get(pid)

    def close(self, grace: float) -> None:
        """No more steps: the server ends (a step still running ends on its own); killed if it does not."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        deadline = time.monotonic() + grace
        while not self._reaped():
            if time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                deadline = float("inf")
            time.sleep(0.01)
        self._reader.join(grace)
        self._sock.close()
        gc.unfreeze()  # the batch's own objects are collected again

    def _reaped(self) -> bool:
        if self._proc is not None:
            return self._proc.poll() is not None
        try:
            return os.waitpid(self.pid, os.WNOHANG)[0] != 0
        except ChildProcessError:
            return True


if __name__ == "__main__":
    main()
