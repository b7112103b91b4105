"""The second read of ``checks run process`` in worker processes gives what the read in one process gives.

``read_results`` with a :func:`~tabarena_checks.engine.reread.decoding_pool` decodes whole task
splits in forked workers, which also write their predictions and simulate their HPO results; the
tables' rows, the predictions files, the HPO rows and the simulation's inputs must be the same, in
the same order, and a file swapped after it was judged must still stop the read, naming it.
"""

from __future__ import annotations

import multiprocessing
import os
import signal

import numpy as np
import pytest
from tests.support.reliability_fixtures import write_info
from tests.support.tabarena_fixtures import build, make_run
from tests.support.reliability_fixtures import CONFIG, swap_same_size

from checks import ActionFailed
from tabarena_checks.engine import native
from tabarena_checks.engine.reread import decoded, decoding_pool
from tabarena_checks.metadata import load as metadata_load


def _files(root) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("reread")
    data = make_run(tmp / "run", configs=3, tasks=(363612, 363614), repeats=2, folds=2, validation_protocol="8x1")
    meta = metadata_load.load(write_info(tmp / "info", can_hpo=True))
    return tmp, data, meta


def test_workers_read_what_one_process_reads(run):
    tmp, data, meta = run
    built = build(data, use_cache=False)
    alone = native.read_results(built, meta, tmp / "alone")
    with decoding_pool(len(built), workers=2, threshold=1) as pool:
        assert pool is not None
        shared = native.read_results(built, meta, tmp / "workers", pool)
    assert len(alone.results) == len(built) == 24
    assert [r.row for r in shared.results] == [r.row for r in alone.results]
    assert [r.hyperparameters for r in shared.results] == [r.hyperparameters for r in alone.results]
    assert shared.tasks == alone.tasks and len(alone.tasks) == 8
    assert repr(shared.hpo_rows) == repr(alone.hpo_rows) and alone.hpo_rows  # NaN included
    assert [(s.dataset, s.fold, repr(s.rows), s.types) for s in shared.splits] == [
        (s.dataset, s.fold, repr(s.rows), s.types) for s in alone.splits
    ]
    assert all(
        np.array_equal(a.y_val, b.y_val) and np.array_equal(a.y_test, b.y_test)
        for a, b in zip(shared.splits, alone.splits, strict=True)
    )
    assert _files(tmp / "workers") == _files(tmp / "alone")


def test_few_files_or_one_core_start_no_workers():
    with decoding_pool(47, workers=2) as pool:
        assert pool is None
    with decoding_pool(10_000, workers=1) as pool:
        assert pool is None


def test_a_worker_refuses_a_file_changed_after_it_was_judged(run, tmp_path):
    _, data, meta = run
    built = build(data, use_cache=False)
    victim = data / CONFIG / "363614" / "1_0" / "results.pkl"
    kept = victim.read_bytes(), victim.stat()
    try:
        swap_same_size(victim, tmp_path / "ran")
        with decoding_pool(len(built), workers=2, threshold=1) as pool:
            with pytest.raises(ActionFailed, match="363614/1_0/results.pkl changed after the rules judged it"):
                native.read_results(built, meta, tmp_path / "out", pool)
    finally:
        victim.write_bytes(kept[0])
        os.utime(victim, ns=(kept[1].st_atime_ns, kept[1].st_mtime_ns))
    assert not (tmp_path / "ran").exists()


def test_workers_leave_quietly_whatever_handler_the_cli_installed():
    """The CLI stops on SIGTERM as on Ctrl-C (a KeyboardInterrupt); a forked worker must not inherit that,
    or the pool's terminate would print a traceback from each idle worker."""
    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    others = set(multiprocessing.active_children())
    try:
        with decoding_pool(100, workers=2) as pool:
            # both forked on entry, before the raw copy's threads start
            assert len(set(multiprocessing.active_children()) - others) == 2
            assert pool.submit(signal.getsignal, signal.SIGTERM).result() == signal.SIG_DFL
            assert pool.submit(signal.getsignal, signal.SIGINT).result() == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)


def _die(results, preds):
    os._exit(3)  # what the OOM killer leaves: a worker gone without a word


def test_a_killed_worker_is_a_clear_failure_not_a_hang(run):
    _, data, meta = run
    built = build(data, use_cache=False)
    groups = [[(p, str(built.abspath(p)), d) for p, d in built.query("SELECT path, sha256 FROM results ORDER BY path")]]
    with decoding_pool(len(built), workers=2, threshold=1) as pool:
        with pytest.raises(ActionFailed, match="a worker process reading the raw results died"):
            list(decoded(groups, meta, _die, pool))
