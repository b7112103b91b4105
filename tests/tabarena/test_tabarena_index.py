"""The raw-data index: parallel decode, the per-file parquet cache, DuckDB access, per-method split, facts."""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import threading
import time

import pyarrow.parquet as pq
import pytest
from tests.support.tabarena_fixtures import build, make_run, write_payload

from checks import InputError
from tabarena_checks.facts.inspect import TabArenaFacts
from tabarena_checks import workers as pools
from tabarena_checks.raw import database, decode, index, inference, reader


def _bump(path, seconds=5):
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def test_second_build_decodes_nothing(tmp_path):
    data = make_run(tmp_path, folds=2)
    first = build(data)
    assert first.decoded == 6 and len(first) == 6
    assert first.cache_path == index.default_cache_dir(data) / "index.parquet" and first.cache_path.is_file()
    assert first.cache_path.is_relative_to(os.environ["CHECKS_CACHE_DIR"]), "the user's cache, never the data"
    assert not [p for p in data.rglob(".*")], "nothing is written into the data directory"
    second = build(data)
    assert second.decoded == 0
    assert second.table.equals(first.table)


def test_touched_changed_added_and_deleted_files(tmp_path):
    data = make_run(tmp_path, folds=3)
    build(data)
    files = sorted(data.rglob("results.pkl"))
    _bump(files[0])
    again = build(data)
    assert again.decoded == 1

    result = reader.load_result(files[1])
    result["metric_error"] = 0.123456
    write_payload(files[1], result)
    _bump(files[1])
    changed = build(data)
    assert changed.decoded == 1
    rel = files[1].relative_to(data).as_posix()
    assert changed.query("SELECT metric_error FROM results WHERE path = ?", [rel]) == [(0.123456,)]

    files[2].unlink()
    gone = build(data)
    assert gone.decoded == 0 and len(gone) == 8
    assert gone.query("SELECT count(*) FROM results WHERE path = ?", [files[2].relative_to(data).as_posix()]) == [(0,)]

    shutil.copy2(files[3], files[2])
    back = build(data)
    assert back.decoded == 1 and len(back) == 9


def test_the_cache_is_keyed_by_the_resolved_data_directory(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    link = tmp_path / "link"
    link.symlink_to(data, target_is_directory=True)
    assert build(data).decoded == 2
    assert build(link).decoded == 0, "the same directory through a symlink shares the cache"
    copy = tmp_path / "copy"
    shutil.copytree(data, copy)
    assert build(copy).decoded == 2, "another directory with the same files has its own"
    assert len({index.default_cache_dir(d) for d in (data, link, copy)}) == 2


def test_cache_dir_argument_and_unwritable_cache(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    cache = tmp_path / "cache"
    built = build(data, cache_dir=cache)
    assert built.cache_path == cache / "index.parquet" and not index.default_cache_dir(data).exists()
    assert build(data, cache_dir=cache).decoded == 0

    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    nowhere = build(data, cache_dir=blocker / "sub")
    assert nowhere.cache_path is None and nowhere.decoded == 2 and len(nowhere) == 2


def test_damaged_or_foreign_cache_is_ignored(tmp_path):
    data = make_run(tmp_path / "a", tasks=(363612,), folds=2)
    built = build(data)
    built.cache_path.write_bytes(b"not parquet")
    assert build(data).decoded == 2
    other = tmp_path / "b" / "data"
    shutil.copytree(data, other)
    assert build(other).decoded == 2, "a cache made for another directory must not be trusted"


def test_unreadable_files_are_errors_not_rows(tmp_path):
    data = make_run(tmp_path, folds=3, defects=("corrupt", "truncated", "zero_byte", "unsafe_pickle"))
    built = build(data)
    assert len(built) == 5
    reasons = dict(built.errors)
    assert len(reasons) == 4
    assert sorted(r.split(" ")[0] for r in reasons.values()) == ["corrupt", "file", "refused", "truncated"]
    assert all(not os.path.isabs(p) and (data / p).is_file() for p in reasons)
    assert build(data).errors == built.errors, "cached error rows come back identically"
    assert built.query("SELECT count(*) FROM unreadable") == [(4,)]


def test_parallel_build_matches_serial(tmp_path):
    data = make_run(tmp_path, configs=2, repeats=3, folds=3, defects=("corrupt",))
    serial = build(data, workers=1, cache_dir=tmp_path / "c1")
    parallel = build(data, workers=2, cache_dir=tmp_path / "c2")
    assert parallel.decoded == serial.decoded == 54
    assert parallel.table.equals(serial.table) and parallel.errors == serial.errors


def test_a_cold_build_starts_decoding_while_the_walk_lists(tmp_path, monkeypatch):
    data = make_run(tmp_path, configs=2, repeats=3, folds=3)  # 54 files: one chunk goes out before the walk ends
    listed, sent = [], []
    real_walk = index.walk

    def walk(*args, found_more=None, **kwargs):
        found = real_walk(*args, found_more=found_more, **kwargs)
        listed.append(len(found.files))
        if found_more is not None:
            sent.append(sum(count for count, _ in found_more.__self__.sent))
        return found

    monkeypatch.setattr(index, "walk", walk)
    built = build(data, workers=2, cache_dir=tmp_path / "c")
    assert listed == [54] and sent == [decode.CHUNK] and built.decoded == 54
    assert build(data, workers=2, cache_dir=tmp_path / "c").decoded == 0 and sent == [decode.CHUNK], "warm: no decoder"


def test_rows_are_sorted_by_path_whether_or_not_the_walk_met_them_in_that_order(tmp_path):
    """The walk visits directories in name order, so its rows usually arrive sorted and are kept as they are;
    ``x`` is visited before ``x-copy``, but ``x-copy/...`` sorts before ``x/...``: those rows are sorted."""
    data = make_run(tmp_path, configs=2, repeats=3, folds=3)
    config = sorted(data.iterdir())[0]
    shutil.copytree(config, config.with_name(f"{config.name}-copy"))
    for workers in (1, 2):
        built = build(data, workers=workers, cache_dir=tmp_path / f"c{workers}")
        paths = built.table["path"].to_pylist()
        assert paths == sorted(paths) and built.decoded == len(paths) == 81
        assert {column.num_chunks for column in built.table.columns} == {1}, "one chunk, not one per batch of files"
    in_order = built.table
    assert decode._sorted(in_order) is in_order, "met in order: not copied by a sort"
    reversed_rows = in_order.take(list(range(in_order.num_rows - 1, -1, -1)))
    assert decode._sorted(reversed_rows).equals(in_order)


def test_a_cold_build_opens_the_database_while_its_workers_decode(tmp_path, monkeypatch):
    """The imports and the database the first query needs are ready by the time the workers are done; a
    serial build (too few files for workers) starts no thread."""
    data = make_run(tmp_path, configs=2, repeats=3, folds=3)
    opened, real = [], database.shared
    monkeypatch.setattr(database, "shared", lambda: opened.append(threading.current_thread().name) or real())
    built = build(data, workers=2, cache_dir=tmp_path / "c")
    assert opened == ["prepare-queries"]
    assert built.query("SELECT count(*) FROM results") == [(54,)] and opened[-1] == "MainThread"
    opened.clear()
    build(data, workers=1, cache_dir=tmp_path / "serial")
    assert opened == []


class _SlowToStop:
    """A worker pool whose shutdown takes a while: what a build must wait for before it returns."""

    def __init__(self, pool):
        self.pool = pool

    def submit(self, *args, **kwargs):
        return self.pool.submit(*args, **kwargs)

    def shutdown(self, *args, **kwargs):
        time.sleep(0.3)
        self.pool.shutdown(*args, **kwargs)


def test_a_cold_build_returns_with_its_workers_gone(tmp_path, monkeypatch):
    """The workers stop while the cache is written, and the build waits for them before it returns: no worker
    or thread of it outlives the build (a process forked after it must not copy a lock one of them holds)."""
    data = make_run(tmp_path, configs=2, repeats=3, folds=3)
    real = pools.worker_pool
    monkeypatch.setattr(pools, "worker_pool", lambda count, initializer: _SlowToStop(real(count, initializer)))
    processes, threads = set(multiprocessing.active_children()), set(threading.enumerate())
    built = build(data, workers=2, cache_dir=tmp_path / "c")
    assert built.decoded == 54 and built.cache_path.is_file()
    assert set(multiprocessing.active_children()) == processes and set(threading.enumerate()) == threads


def _note_parent(parent: int) -> None:
    os.environ["CHECKS_TEST_POOL_PARENT"] = str(parent)


def _worker_state() -> tuple[int, str | None]:
    return gc.get_freeze_count(), os.environ.get("CHECKS_TEST_POOL_PARENT")


def test_pool_workers_freeze_what_they_inherit_then_run_their_initializer():
    """A worker's collector never walks the objects it inherited (walking them copies every page they sit on),
    and the pool's own initializer still runs, given this process's pid."""
    before = gc.get_freeze_count()  # 0 unless something froze this process (a fork inherits what it froze)
    with pools.worker_pool(1, _note_parent) as pool:
        frozen, parent = pool.submit(_worker_state).result()
    assert frozen > before + 1000 and parent == str(os.getpid())
    assert "CHECKS_TEST_POOL_PARENT" not in os.environ and gc.get_freeze_count() == before, "only the worker froze"


def test_a_partly_cached_build_decodes_the_changed_files_in_workers(tmp_path):
    data = make_run(tmp_path, configs=2, repeats=3, folds=3)
    build(data, workers=2, cache_dir=tmp_path / "c")
    for n, path in enumerate(sorted(data.rglob("results.pkl"))[:50]):  # 50 changed stats: enough for workers
        os.utime(path, ns=(10**18 + n, 10**18 + n))
    again = build(data, workers=2, cache_dir=tmp_path / "c")
    fresh = build(data, workers=1, cache_dir=tmp_path / "fresh")
    assert again.decoded == 50 and fresh.decoded == 54
    assert again.table.equals(fresh.table) and again.errors == fresh.errors


@pytest.mark.parametrize("make", ["missing", "empty", "no-results"])
def test_missing_or_empty_directory(tmp_path, make):
    target = tmp_path / "data"
    if make != "missing":
        target.mkdir()
    if make == "no-results":
        (target / "TA-Nori_c1_BAG_L1" / "363612" / "0_0").mkdir(parents=True)
        (target / "TA-Nori_c1_BAG_L1" / "363612" / "0_0" / "result.pkl").write_bytes(b"x")
    expected = "does not exist or is not a directory" if make == "missing" else "no results.pkl found under"
    with pytest.raises(InputError, match=expected):
        index.build_index(target)


def test_query_records_and_abspath(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=2)
    built = build(data)
    recs = built.records("SELECT path, fold FROM results WHERE fold = $f", {"f": 1})
    assert recs == [{"path": "TA-Nori_c1_default_BAG_L1/363612/0_1/results.pkl", "fold": 1}]
    assert built.abspath(recs[0]["path"]).is_file()
    assert built.table.schema.names == [n for n in index.schema().names if n != "error"]


def test_two_methods_in_one_directory_split(tmp_path):
    run = tmp_path / "run"
    make_run(run, tasks=(363612,), folds=2, configs=2)
    make_run(
        run, tasks=(363612, 363614), folds=1, name_prefix="TA-Other", ag_key="TA-OTHER", gpus=1, defects=("corrupt",)
    )
    data = make_run(run, tasks=(363612,), folds=1, kind="baseline", name_prefix="MySystem")
    parts = index.split_methods(build(data))
    assert sorted(parts) == ["MySystem_c1_default", "TA-Nori", "TA-Other"]
    nori, other, system = (inference.infer(parts[k]) for k in ("TA-Nori", "TA-Other", "MySystem_c1_default"))
    assert nori.n_results == 4 and nori.can_hpo and nori.compute == "cpu" and nori.errors == ()
    assert other.n_results == 1 and other.compute == "gpu" and other.ag_key == "TA-OTHER"
    assert [p for p, _ in other.errors] == ["TA-Other_c1_default_BAG_L1/363614/0_0/results.pkl"]
    assert system.method_type == "baseline" and system.inferred_method == "MySystem_c1_default"
    assert inference.infer(build(data)).methods == ("MySystem_c1_default", "TA-Nori", "TA-Other")


def test_one_method_keeps_the_whole_table_and_a_row_of_no_method_is_left_out(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=2, configs=2)
    built = build(data)
    (only,) = index.split_methods(built).values()
    assert only.table is built.table, "one method and every row its own: no filtered copy"
    write_payload(data / "stray" / "results.pkl", {"metric_error": 0.1})  # no framework, no config directory
    built = build(data, cache_dir=tmp_path / "c2")
    assert None in built.table["method_prefix"].to_pylist()
    (only,) = index.split_methods(built).values()
    assert only.table.num_rows == built.table.num_rows - 1 and None not in only.table["method_prefix"].to_pylist()


def test_facts_are_lazy_and_shared(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    facts = TabArenaFacts(data_dir=str(data), cache_dir=tmp_path / "cache")
    assert "index" not in facts.__dict__
    assert facts.inference.n_results == 2
    assert facts.index is facts.full_index and facts.index.decoded == 2
    assert TabArenaFacts(data_dir=data, cache_dir=tmp_path / "cache").index.decoded == 0
    assert facts.metadata is None


def test_facts_method_selection_and_missing_inputs(tmp_path):
    run = tmp_path / "run"
    make_run(run, tasks=(363612,), folds=1)
    data = make_run(run, tasks=(363612,), folds=1, name_prefix="TA-Other")
    assert TabArenaFacts(data_dir=data, method="TA-Other").inference.frameworks == ("TA-Other_c1_default_BAG_L1",)
    with pytest.raises(InputError, match=r"method 'Nope' not found .*methods found: TA-Nori, TA-Other"):
        TabArenaFacts(data_dir=data, method="Nope").index
    with pytest.raises(InputError, match="no raw data directory given"):
        TabArenaFacts().inference


def test_digests_follow_the_inputs(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    info = tmp_path / "info.py"
    info.write_text("x = 1\n")
    facts = TabArenaFacts(data_dir=data, metadata_ref=f"{info}:x")
    first = facts.digests()
    assert set(first) == {"raw_data", "method_metadata"} and first["raw_data"].startswith("sha256:")
    assert facts.digests() == first
    _bump(next(data.rglob("results.pkl")))
    info.write_text("x = 2\n")
    second = facts.digests()
    assert second["raw_data"] != first["raw_data"] and second["method_metadata"] != first["method_metadata"]
    assert "index" not in facts.__dict__, "digests read the files, not the (possibly stale) index"


def test_progress_bar_can_be_forced(tmp_path, capfd):
    data = make_run(tmp_path, tasks=(363612,), folds=2)
    assert len(build(data, progress=True, use_cache=False)) == 2
    assert "Traceback" not in capfd.readouterr().err


def test_interrupted_cache_write_keeps_the_previous_cache(tmp_path, monkeypatch):

    data = make_run(tmp_path, tasks=(363612,), folds=2)
    first = build(data)
    before = first.cache_path.read_bytes()
    files = sorted(data.rglob("results.pkl"))
    _bump(files[0])

    def dies_half_way(table, where, **kwargs):
        with open(where, "wb") as out:
            out.write(b"PAR1 half a file")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", dies_half_way)
    assert build(data).cache_path is None
    assert first.cache_path.read_bytes() == before
    assert sorted(p.name for p in first.cache_path.parent.iterdir()) == ["index.parquet"]
    monkeypatch.undo()
    assert build(data).decoded == 1, "only the touched file is decoded again"


def test_unreadable_file_of_an_unknown_directory_goes_to_every_method(tmp_path):
    run = tmp_path / "run"
    make_run(run, tasks=(363612,), folds=1)
    data = make_run(run, tasks=(363612,), folds=1, name_prefix="TA-Other")
    stray = data / "Broken_c1_BAG_L1" / "363612" / "0_0" / "results.pkl"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(b"")
    parts = index.split_methods(build(data))
    assert sorted(parts) == ["TA-Nori", "TA-Other"]
    assert all([p for p, _ in part.errors] == ["Broken_c1_BAG_L1/363612/0_0/results.pkl"] for part in parts.values())


def test_a_query_stopped_by_ctrl_c_is_a_keyboard_interrupt(tmp_path, monkeypatch):
    """DuckDB reports a query that Ctrl-C stopped as RuntimeError('Query interrupted') (when it notices the signal:
    not always, so a real signal would make this test hang now and then); the index raises KeyboardInterrupt, so
    Ctrl-C, and SIGTERM in `checks run`, ends a command as 'checks: aborted', not as an internal error."""
    built = build(make_run(tmp_path, tasks=(363612,), folds=1))

    class Stopped:
        def __init__(self, message):
            self.message = message

        def execute(self, *args):
            raise RuntimeError(self.message)

    monkeypatch.setattr(index.RawIndex, "con", property(lambda self: Stopped("Query interrupted")))
    with pytest.raises(KeyboardInterrupt):
        built.query("SELECT 1")
    with pytest.raises(KeyboardInterrupt):
        built.records("SELECT 1")
    monkeypatch.setattr(index.RawIndex, "con", property(lambda self: Stopped("Out of Memory Error")))
    with pytest.raises(RuntimeError, match="Out of Memory"):  # any other failure is left as it is
        built.query("SELECT 1")
