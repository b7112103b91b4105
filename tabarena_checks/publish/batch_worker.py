"""A batch's worker process: several ``checks`` commands run one after another in one interpreter.

A step run as a fresh ``python -m checks run ...`` pays the interpreter's start-up and the heavy
imports (pyarrow, numpy, DuckDB, boto3) every time: on small methods that is most of a step. A
worker pays them once and then runs each step the batch hands it as the single command itself,
:func:`checks.main` on the same arguments, so the same gate, rules, waivers, exit codes and
decision records apply. It runs one command at a time, in its main thread (processing forks its
index workers from a process with no other thread running, as in the single command), in a
session of its own, which the batch watches and stops as a whole (:mod:`.batch_steps`).

The protocol: one JSON list of arguments per line on stdin; for each, one JSON line on stdout,
``{"exit_code": N, "stdout": "..."}`` (what the command printed, its ``--format json`` report);
what it prints on stderr passes through line by line (the batch's progress and last words), and
:data:`END` on a line of its own says that all of it is written, so the batch never gives a line
of one step to the next. Anything else that writes to the real stdout goes to stderr, and a
command reads an empty stdin, so the requests and replies stay whole. End of input ends the worker; SIGTERM stops the running command as Ctrl-C does (its ``finally`` blocks
run, as under the single command's SIGTERM) and ends the worker.

    python -m tabarena_checks.publish.batch_worker [FOLDER]

``FOLDER`` (the batch's working directory) is not read: it names, in the process list, the
batch a worker serves.
"""

from __future__ import annotations

import io
import json
import os
import signal
import sys

import checks

#: the line on stderr after a command's last (control characters: no command prints it, checks.visible escapes them)
END = "\x02checks batch worker: said all\x03"


def _channels():
    """The requests and the replies on descriptors of their own; stdin is then empty and stdout goes to stderr."""
    requests = os.fdopen(os.dup(0), "r", encoding="utf-8", closefd=True)
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8", closefd=True)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - it lives as long as the process
    sys.stdout = sys.stderr
    return requests, replies


def _run(args: list[str]) -> tuple[int, str]:
    """``checks ARGS`` in this interpreter; its exit code and what it printed on stdout."""
    captured = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    saved, sys.stdout = sys.stdout, captured
    try:
        code = checks.main(args)
    finally:
        sys.stdout = saved
    return code, captured.buffer.getvalue().decode("utf-8", "replace")


def main() -> None:
    stopped: list[int] = []

    def stop(signum, frame) -> None:
        stopped.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    requests, replies = _channels()
    try:
        for line in iter(requests.readline, ""):
            code, out = _run([str(a) for a in json.loads(line)])
            if stopped:  # the command unwound and said "checks: aborted"; the worker ends with it
                raise SystemExit(2)
            sys.stderr.write(END + "\n")
            sys.stderr.flush()
            replies.write(json.dumps({"exit_code": code, "stdout": out}) + "\n")
            replies.flush()
    except KeyboardInterrupt:  # stopped between two commands: nothing to unwind
        raise SystemExit(2) from None
    except BrokenPipeError:  # the batch is gone (killed): nobody reads the replies, so nothing more is asked
        raise SystemExit(0) from None


if __name__ == "__main__":
    main()
