"""The worker pools raw/ and engine/ share (tabarena_checks/workers.py): how many, when none, and what leaving
one does with queued work. The workers' freeze, parent-death and shutdown under a real build are tested
where they matter (tests/tabarena/test_tabarena_index.py, tests/reliability/test_reliability_crash.py, tests/tabarena/test_tabarena_reread.py).
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time

import pytest

from tabarena_checks import workers


def test_the_worker_count_is_what_was_asked_else_one_per_cpu_and_never_more_than_the_tasks(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert workers.worker_count(None) == 6 and workers.worker_count(3) == 3
    assert workers.worker_count(None, 4) == 4 and workers.worker_count(2, 40) == 2
    assert workers.worker_count(None, 0) == 1, "no tasks still means one worker, never zero"
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert workers.worker_count(None) == 1


def test_one_worker_is_no_pool():
    """A single worker only adds the cost of sending it the work: the caller runs it."""
    with workers.quiet_pool(1) as pool:
        assert pool is None


def _handlers() -> tuple[object, object]:
    return signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


def _sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def test_a_quiet_pool_leaves_ctrl_c_to_its_caller_and_drops_queued_work_when_left_on_an_error():
    """Its workers ignore SIGINT (the caller handles Ctrl-C) and stop on SIGTERM as the default does; leaving the
    pool on an error cancels what is queued instead of running it to the end, and every worker is gone."""
    processes, threads = set(multiprocessing.active_children()), set(threading.enumerate())
    with pytest.raises(KeyboardInterrupt), workers.quiet_pool(2) as pool:
        assert pool.submit(_handlers).result() == (signal.SIG_IGN, signal.SIG_DFL)
        queued = [pool.submit(_sleep, 0.2) for _ in range(20)]
        raise KeyboardInterrupt
    assert sum(f.cancelled() for f in queued) >= 15, "the queued tasks were run instead of dropped"
    assert set(multiprocessing.active_children()) == processes, "a worker outlived the pool"
    assert set(threading.enumerate()) <= threads
