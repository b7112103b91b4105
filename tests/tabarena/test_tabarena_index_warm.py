"""The warm path of the index: directories whose mtime did not change are not listed again,
and the inference of an unchanged cached index comes from its memo, not from queries."""

from __future__ import annotations

import json
import os
import shutil
import time

import pytest
from tests.support.tabarena_fixtures import build, make_run

from tabarena_checks.raw import index, index_cache, inference, inference_memo
from tabarena_checks.raw import walk as raw_walk
from tabarena_checks.facts.inspect import TabArenaFacts


def _age(data, seconds=60):
    """Move every directory's mtime into the past, beyond the racy window, like a run written earlier."""
    past = time.time_ns() - seconds * 1_000_000_000
    for folder in [data, *[p for p in data.rglob("*") if p.is_dir()]]:
        os.utime(folder, ns=(past, past))


@pytest.fixture
def listings(monkeypatch):
    """The directories os.scandir was asked to list."""
    seen = []
    real = os.scandir

    def counting(path="."):
        seen.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    return seen


def _cached(data):
    return index_cache.read_cache(index.default_cache_dir(data) / index_cache.CACHE_FILE, data)


def test_unchanged_directories_are_not_listed_again(tmp_path, listings):
    data = make_run(tmp_path, folds=2)
    _age(data)
    folders = 1 + sum(p.is_dir() for p in data.rglob("*"))
    listings.clear()
    cold = build(data, cache_dir=tmp_path / "cache")
    assert len(listings) == folders, "cold: the data directory, configs, tasks and splits are listed"
    listings.clear()
    warm = build(data, cache_dir=tmp_path / "cache")
    assert listings == [] and warm.decoded == 0 and len(warm) == len(cold) > 0
    build(data)
    listings.clear()
    build(data)
    assert listings == [], "the default cache lives in the user's cache directory: data/ itself is unchanged"


def test_warm_walk_finds_what_a_full_scan_finds(tmp_path, listings):
    data = make_run(tmp_path, folds=2)
    (data / "TA-Nori_c1_default_BAG_L1" / "363612" / "7_0").mkdir()  # an empty split directory
    _age(data)
    first = build(data)
    files = sorted(data.rglob("results.pkl"))

    rewritten = files[0]  # rewritten in place: the directory's mtime stays, the file's changes
    payload = rewritten.read_bytes()
    rewritten.write_bytes(payload)
    os.utime(rewritten, ns=(time.time_ns(), rewritten.stat().st_mtime_ns + 10**9))
    shutil.copy2(files[1], data / "TA-Nori_c1_default_BAG_L1" / "363612" / "7_0" / "results.pkl")
    new_split = files[2].parent.parent / "5_1"
    new_split.mkdir()
    shutil.copy2(files[2], new_split / "results.pkl")
    files[3].unlink()
    expected = index.scan(data)
    listings.clear()

    again = build(data)
    assert len(listings) <= 5, f"only the changed directories are listed: {listings}"
    assert again.decoded == 3, "the rewritten file and the two new ones"
    assert len(again) + len(again.errors) == len(first) + 1
    assert sorted(again.table["path"].to_pylist() + [p for p, _ in again.errors]) == [f.path for f in expected]
    cached = _cached(data)
    assert raw_walk.walk(data, cached.dirs, frozenset(cached.table["path"].to_pylist()))[0] == expected


def test_directories_changed_just_now_are_never_trusted(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    build(data)
    assert set(_cached(data).dirs.values()) == {raw_walk.UNTRUSTED}, "everything was written within the racy window"
    split = next(data.rglob("results.pkl")).parent
    before = split.stat()
    shutil.copy2(split / "results.pkl", split / "spare")
    (split / "deeper").mkdir()
    shutil.copy2(split / "results.pkl", split / "deeper" / "results.pkl")
    os.utime(split, ns=(before.st_atime_ns, before.st_mtime_ns))  # same mtime as recorded
    assert any(
        f.path.endswith("deeper/results.pkl")
        for f in raw_walk.walk(data, _cached(data).dirs, frozenset(_cached(data).table["path"].to_pylist()))[0]
    )


def test_hidden_directories_stay_skipped_on_the_warm_path(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    hidden = data / ".trash" / "x" / "0_0"
    hidden.mkdir(parents=True)
    shutil.copy2(next(data.rglob("results.pkl")), hidden / "results.pkl")
    _age(data)
    build(data)
    assert ".trash" not in _cached(data).dirs
    assert len(build(data)) == 1


def test_memo_answers_an_unchanged_index_without_queries(tmp_path, monkeypatch):
    data = make_run(tmp_path / "run", folds=2)
    cache = tmp_path / "cache"
    first = TabArenaFacts(data_dir=data, cache_dir=cache).inference
    assert first == inference.infer(build(data, use_cache=False))
    assert (cache / inference_memo.MEMO_FILE).is_file()

    def no_queries(idx):
        raise AssertionError("the memo should have answered")

    monkeypatch.setattr(inference, "infer", no_queries)
    assert TabArenaFacts(data_dir=data, cache_dir=cache).inference == first
    monkeypatch.undo()

    calls = []
    real = inference.infer
    monkeypatch.setattr(inference, "infer", lambda idx: calls.append(idx) or real(idx))
    victim = next(data.rglob("results.pkl"))
    os.utime(victim, ns=(time.time_ns(), victim.stat().st_mtime_ns + 10**9))
    assert TabArenaFacts(data_dir=data, cache_dir=cache).inference == first, "same content, new mtime"
    assert len(calls) == 1, "a changed file changes the fingerprint: the inference is computed again"
    victim.unlink()
    assert TabArenaFacts(data_dir=data, cache_dir=cache).inference.n_results == first.n_results - 1


def test_memo_keeps_one_entry_per_method_and_survives_damage(tmp_path, monkeypatch):
    run = tmp_path / "run"
    make_run(run, tasks=(363612,), folds=1)
    data = make_run(run, tasks=(363612,), folds=1, name_prefix="TA-Other")
    nori = TabArenaFacts(data_dir=data, method="TA-Nori").inference
    other = TabArenaFacts(data_dir=data, method="TA-Other").inference
    memo_file = index.default_cache_dir(data) / inference_memo.MEMO_FILE
    assert set(json.loads(memo_file.read_text())["methods"]) == {"TA-Nori", "TA-Other"}
    assert nori.frameworks != other.frameworks

    memo = json.loads(memo_file.read_text())
    memo["methods"]["TA-Nori"]["n_results"] = "many"  # damaged (or forged) entry
    memo_file.write_text(json.dumps(memo))
    assert TabArenaFacts(data_dir=data, method="TA-Nori").inference == nori
    memo_file.write_text("{not json")
    assert TabArenaFacts(data_dir=data, method="TA-Other").inference == other
    assert json.loads(memo_file.read_text())["methods"]["TA-Other"]["n_results"] == other.n_results

    memo = json.loads(memo_file.read_text())
    memo["key"]["code"] = "older code"
    memo["methods"]["TA-Other"]["n_results"] = 999
    memo_file.write_text(json.dumps(memo))
    assert TabArenaFacts(data_dir=data, method="TA-Other").inference.n_results == other.n_results


def test_no_memo_without_an_index_cache(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    built = build(data, use_cache=False)
    assert built.fingerprint is None
    assert inference_memo.infer(built) == inference.infer(built)
    assert not index.default_cache_dir(data).exists()
