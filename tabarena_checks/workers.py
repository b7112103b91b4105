"""Worker processes for the work that scales with cores: the raw index's decoding (``raw/``), the native
engine's second read and HPO simulation (``engine/``) and the synthetic runs' writing (``synth/``).

Decoding a results.pkl is the restricted unpickler, pure Python, so it scales with processes, not
threads. Every pool needs the same care, kept here once: workers forked where the platform can (they
start in milliseconds and never re-import the caller's ``__main__``), the objects they inherit set
aside from their collector, their death with the process that started them (even by SIGKILL), how
many to start, and a shutdown that drops queued work on an error or Ctrl-C. This module knows no
workflow step: the pools' callers decide what runs in them.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

#: below this many results.pkl to decode, starting worker processes costs more than it saves
PARALLEL_THRESHOLD = 48

#: prctl's option to have the kernel signal this process when its parent dies (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def worker_count(requested: int | None, tasks: int | None = None) -> int:
    """How many workers to start: ``requested``, else one per CPU; never more than ``tasks`` (at least one)."""
    count = requested or os.cpu_count() or 1
    return count if tasks is None else min(count, max(tasks, 1))


def worker_pool(count: int, initializer: Callable[[int], None]) -> ProcessPoolExecutor:
    """A pool of ``count`` worker processes, each started with ``initializer(<this process's pid>)``.

    Forked where the platform can, spawned elsewhere.
    """
    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    return ProcessPoolExecutor(count, mp_context=ctx, initializer=_started, initargs=(initializer, os.getpid()))


def _started(initializer: Callable[[int], None], parent: int) -> None:
    """Every pool worker's first step: set aside the objects it inherited, then ``initializer(parent)``.

    A forked worker holds a copy of its parent's objects, which it never frees. The collector would
    still walk them all at each full collection, writing to every page they sit on, so the kernel
    copies those pages, a cost each worker pays again (benchmarks/README.md). Frozen (gc.freeze),
    they are out of its reach. A spawned worker has few objects to freeze.
    """
    gc.freeze()
    initializer(parent)


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the process that started it dies, even by SIGKILL.

    A killed parent never tells its pool to stop, and a forked worker holds the write end of its
    own task pipe, so it would wait for work forever. On Linux the kernel sends SIGKILL on the
    parent's death (PR_SET_PDEATHSIG); elsewhere a thread polls the parent pid.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def quiet_worker(parent: int) -> None:
    """Worker initializer for the pools of ``checks run process``: stopped quietly, and only by its pool.

    The CLI's SIGTERM handler (stop as Ctrl-C does, so ``finally`` blocks run) is inherited by fork
    and would print a KeyboardInterrupt traceback from each worker the pool terminates (it does when
    another worker died). Ctrl-C is the main process's to handle: it shuts the pool down, cancelling
    what is queued (:func:`stop`).
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


def stop(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool``'s workers once their current tasks end, dropping what is queued (on an error or Ctrl-C
    nobody will read it, and workers started with :func:`quiet_worker` would not be interrupted)."""
    pool.shutdown(wait=True, cancel_futures=True)


def stopping(pool: ProcessPoolExecutor) -> threading.Thread:
    """A started thread that waits for ``pool``'s workers to exit while the caller goes on with
    the results it already has; join it before returning, so no worker outlives the caller's step."""
    thread = threading.Thread(target=pool.shutdown, name="stop-workers", daemon=True)
    thread.start()
    return thread


@contextmanager
def quiet_pool(count: int) -> Iterator[ProcessPoolExecutor | None]:
    """``count`` worker processes started with :func:`quiet_worker`, every one forked now, or None below two
    (one worker only adds the cost of sending it the work).

    Call it before any other thread starts: a process forked beside another thread keeps, held for good,
    any lock that thread held. On leaving, the queued tasks are dropped and the workers stopped.
    """
    if count < 2:
        yield None
        return
    pool = worker_pool(count, quiet_worker)
    try:
        pool.submit(int).result()  # fork starts every worker at the first task
        yield pool
    finally:
        stop(pool)
