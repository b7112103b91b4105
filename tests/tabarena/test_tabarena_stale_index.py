"""An index cannot outlive the checks (issue 29): it stores facts, and TA306 judges them when the gate runs.

The reproduced bug: TA306's checks ran while each file was indexed and their messages were stored in
the index, so an index warmed by the code before a check existed let ``checks run process --dry-run``
pass a run the check blocks. Here the index holds no verdict, a check added after the index was built
judges it without re-indexing, and any change to the code that builds the index changes its key.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from tests.support.tabarena_fixtures import SCALE

from checks.testing import run_cli
from tabarena_checks.raw import index as index_mod, index_cache, reader
from tabarena_checks.report import inspect_cli
from tabarena_checks.rules import raw_fields
from tabarena_checks.synth.generate import generate_run, write_result
from tabarena_checks.testing.commands import process_args

INFO = """from tabarena.models._method_metadata import MethodMetadata

nori = MethodMetadata.config(method="Nori", suite="nori-2026-11", ag_key="TA-NORI", is_bag=True,
                             validation_protocol="8x1")
"""
#: the result whose method_metadata lacks model_type
DAMAGED = "TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl"
#: TA306's message for it (a check a commit added; TabArena's renaming stops without the key)
MESSAGE = "method_metadata.model_type is missing"


@pytest.fixture
def run(tmp_path):
    """A clean run of two configs but for one result without ``method_metadata.model_type``; its data dir."""
    data = generate_run(
        tmp_path / "run",
        configs=2,
        tasks=(363612,),
        folds=2,
        bag_children=2,
        validation_protocol="8x1",
        array_scale=SCALE,
        workers=1,
    )
    result = reader.load_result(data / DAMAGED)
    del result["method_metadata"]["model_type"]
    write_result(data / DAMAGED, result)
    (tmp_path / "info.py").write_text(INFO)
    return data


def test_the_index_holds_facts_and_no_verdict(run, tmp_path):
    built = index_mod.build_index(run, cache_dir=tmp_path / "idx", workers=1, progress=False)
    assert "problems" not in built.table.column_names
    (row,) = [r for r in built.table.to_pylist() if r["path"] == DAMAGED]
    assert row["has_model_type_key"] is False and row["model_hyperparameters_kind"] == "dict"
    assert row["decode_errors"] == [] and row["invalid_text"] == []
    # neither the index nor its cache file holds the judged message anywhere; the rule finds it
    for table in (built.table, pq.read_table(built.cache_path)):
        assert MESSAGE not in json.dumps(table.to_pylist(), default=str)
    assert raw_fields.problems(built) == ((DAMAGED, MESSAGE + _REST),)


_REST = ": processing renames the config's model type from it; record the model's ag_key"


def test_a_check_added_after_the_index_was_built_blocks_without_reindexing(run, tmp_path, monkeypatch):
    env = {"CHECKS_CACHE_DIR": str(tmp_path / "user-cache")}
    info = f"{tmp_path / 'info.py'}:nori"
    process = process_args(run, info, tmp_path / "out")
    with monkeypatch.context() as before:  # the code before the check: the index is warmed, the gate passes
        before.delitem(raw_fields.ROW_CHECKS, "model-type-present")
        assert run_cli(["inspect", str(run)], env=env).exit_code == 0
        old = run_cli([*process, "--dry-run"], env=env)
        assert old.exit_code == 0 and MESSAGE not in old.stdout, old.stdout + old.stderr
    (cached,) = (tmp_path / "user-cache").rglob(index_cache.CACHE_FILE)
    stamp = (cached.stat().st_mtime_ns, cached.read_bytes())

    new = run_cli([*process, "--dry-run"], env=env)  # the code after it, on the same index
    assert new.exit_code == 1, new.stdout + new.stderr
    assert f"{DAMAGED}:1:1: {MESSAGE}" in new.stdout and "TA330" in new.stdout  # a whole file: 1:1
    assert (cached.stat().st_mtime_ns, cached.read_bytes()) == stamp, "the index was not rebuilt"
    reused = index_mod.build_index(run, cache_dir=cached.parent, write_cache=False, workers=1, progress=False)
    assert reused.decoded == 0, "the cached index is still the one the rule judged"


def test_any_change_to_the_raw_code_changes_the_index_key(tmp_path):
    package = tmp_path / "raw"
    shutil.copytree(Path(index_mod.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    digest = index_cache.digest_of_modules(package)
    assert digest == index_mod.code_digest()
    for module in sorted(package.glob("*.py")):
        original = module.read_bytes()
        module.write_bytes(original + b"# one line apart\n")
        assert index_cache.digest_of_modules(package) != digest, module.name
        module.write_bytes(original)
    assert index_cache.digest_of_modules(package) == digest


def test_an_index_built_by_other_code_is_decoded_again(run, tmp_path, monkeypatch):
    cache = tmp_path / "idx"
    first = index_mod.build_index(run, cache_dir=cache, workers=1, progress=False)
    assert first.decoded == len(first) and index_mod.build_index(run, cache_dir=cache, workers=1).decoded == 0
    monkeypatch.setattr(index_cache, "code_digest", lambda: "sha256:" + "0" * 64)  # the raw code, changed
    again = index_mod.build_index(run, cache_dir=cache, workers=1, progress=False)
    assert again.decoded == len(first)


def test_inspect_keeps_the_problems_only_under_the_code_that_judged_them(run, tmp_path, monkeypatch):
    built = index_mod.build_index(run, cache_dir=tmp_path / "idx", workers=1, progress=False)
    first = inspect_cli.field_problems(built)
    assert first == raw_fields.problems(built) and (tmp_path / "idx" / inspect_cli.MEMO_FILE).is_file()
    monkeypatch.delitem(raw_fields.ROW_CHECKS, "model-type-present")  # the same files: the memo answers
    assert inspect_cli.field_problems(built) == first
    monkeypatch.setattr(raw_fields, "code_digest", lambda: "sha256:" + "1" * 64)  # other code: judged again
    assert inspect_cli.field_problems(built) == ()
