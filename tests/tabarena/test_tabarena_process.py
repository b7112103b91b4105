"""checks run process (native engine) on generated runs: the cache layout, renames, gating and atomicity."""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from checks.testing import run_cli
from tabarena_checks.engine import raw_copy
from tabarena_checks.facts.inspect import raw_digest
from tabarena_checks.facts.process import ProcessFacts
from tabarena_checks.raw import index, reader
from tabarena_checks.rules import raw_artifacts
from tabarena_checks.rules.raw_fields import row_problems
from tabarena_checks.synth.generate import generate_run, write_result
from tabarena_checks.testing.commands import process_args

INFO = """from tabarena.models._method_metadata import MethodMetadata

nori = MethodMetadata.config(method="Nori", suite="nori-2026-11", ag_key="TA-NORI", is_bag=True,
                             validation_protocol="8x1", cache_kwargs={"bucket": "tabarena", "prefix": "cache"})
wrong_key = MethodMetadata.config(method="Nori", suite="nori-2026-11", ag_key="TA-OTHER", is_bag=True,
                                  validation_protocol="8x1")
system = MethodMetadata.system(method="MySystem", name="My System", suite="mysystem-2026-11", tags=[],
                               validation_protocol="system")
"""
CACHE = "artifacts/nori-2026-11/methods/Nori"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    small = dict(tasks=(363612, 363614), bag_children=2, array_scale=0.05, workers=1)
    generate_run(root / "configs", configs=2, repeats=2, folds=2, validation_protocol="8x1", **small)
    generate_run(
        root / "system",
        configs=1,
        repeats=1,
        folds=2,
        kind="system",
        method="MySystem",
        name_prefix="MySystem",
        validation_protocol="system",
        **small,
    )
    generate_run(
        root / "corrupt", configs=1, repeats=1, folds=2, validation_protocol="8x1", defects=("corrupt",), **small
    )
    (root / "info.py").write_text(INFO)
    return root


def process(tmp_path, runs, run="configs", var="nori", *extra, env=None):
    data = tmp_path / run
    if not data.exists():
        shutil.copytree(runs / run / "data", data)
    args = process_args(data, f"{runs / 'info.py'}:{var}", tmp_path / "cache", *extra)
    return run_cli(args, cwd=tmp_path, env=env)


#: the columns TabArena 0.1.0 puts first in both processed tables, in its order
RESULT_COLUMNS = ("dataset", "fold", "framework", "metric_error", "metric", "time_train_s", "time_infer_s")


def test_configs_cache_layout_columns_and_renames(tmp_path, runs):
    result = process(tmp_path, runs)
    assert result.exit_code == 0, result.stdout + result.stderr
    cache = tmp_path / "cache" / CACHE
    meta = yaml.safe_load((cache / "metadata.yaml").read_text())
    assert list(meta) == sorted(meta) and "cache_root" not in meta and "artifact_dir" not in meta
    assert meta["validation_protocol"] == "8x1" and meta["method"] == "Nori" and meta["model_key"] == "TA-NORI"
    assert meta["suite"] == "nori-2026-11" and meta["display_name"] == "TA-NORI" and meta["cache_type"] == "r2"
    configs = pq.read_table(cache / "processed/configs.parquet")
    assert configs.column_names == [
        *RESULT_COLUMNS,
        "problem_type",
        "metric_error_val",
        "tid",
        "num_cpus",
        "num_gpus",
        "disk_usage",
        "task",
    ]
    assert str(configs.schema.field("fold").type) == "int64"
    rows = configs.to_pylist()
    assert len(rows) == 2 * 2 * 4  # configs x tasks x (2 repeats x 2 folds)
    assert sorted({r["fold"] for r in rows}) == [0, 1, 2, 3], "fold is the split index repeat*n_folds+fold"
    assert {r["framework"] for r in rows} == {"Nori_c1_default_BAG_L1", "Nori_r1_default_BAG_L1"}
    assert all(r["task"] == f"{r['tid']}_{r['fold']}" for r in rows)
    assert {r["metric"] for r in rows} == {"rmse", "log_loss"}
    baselines = pq.read_table(cache / "processed/baselines.parquet")
    # TabArena 0.1.0's empty baselines frame: untyped columns except tid, problem_type and task behind it
    assert baselines.num_rows == 0 and baselines.column_names == [
        *RESULT_COLUMNS,
        "tid",
        "problem_type",
        "task",
    ]
    assert str(baselines.schema.field("tid").type) == "int64" and str(baselines.schema.field("task").type) == "null"
    assert str(configs.schema.field("disk_usage").type) == "int64", "TabArena keeps an int field int64"
    results = pq.read_table(cache / "results/model_results.parquet").to_pylist()
    assert len(results) == len(rows)
    assert {(r["method_type"], r["config_type"], r["ta_name"], r["ta_suite"]) for r in results} == {
        ("config", "TA-NORI", "Nori", "nori-2026-11")
    }
    hps = json.loads((cache / "processed/configs_hyperparameters.json").read_text())
    assert sorted(hps) == ["Nori_c1_default_BAG_L1", "Nori_r1_default_BAG_L1"]
    entry = hps["Nori_c1_default_BAG_L1"]
    assert entry["name_prefix"] == "Nori" and entry["model_type"] == "TA-NORI" and entry["ag_key"] == "TA-NORI"
    assert entry["hyperparameters"]["ag_args"]["name_suffix"] == "_c1_default_BAG_L1"
    source = json.loads((cache / ".checks-source.json").read_text())
    assert source["raw_data"].startswith("sha256:") and source["cache_raw"] is True


def test_raw_copy_is_laid_out_by_renamed_framework_and_split(tmp_path, runs):
    assert process(tmp_path, runs).exit_code == 0
    raw = tmp_path / "cache" / CACHE / "raw"
    files = sorted(p.relative_to(raw).as_posix() for p in raw.rglob("results.pkl"))
    assert len(files) == 16 and "Nori_c1_default_BAG_L1/363612/1_1/results.pkl" in files
    source = tmp_path / "configs" / "TA-Nori_r1_default_BAG_L1" / "363614" / "1_0" / "results.pkl"
    copied = raw / "Nori_r1_default_BAG_L1/363614/1_0/results.pkl"
    assert copied.read_bytes() == source.read_bytes(), "the raw copy holds the run's own file, byte for byte"
    assert not copied.samefile(source)
    result = reader.load_result(copied)
    assert result["method_metadata"]["name_prefix"] == "TA-Nori", "TabArena renames by this prefix when loading"


def test_system_baseline_is_renamed_to_its_name(tmp_path, runs):
    result = process(tmp_path, runs, "system", "system")
    assert result.exit_code == 0, result.stdout
    cache = tmp_path / "cache/artifacts/mysystem-2026-11/methods/MySystem"
    assert pq.read_table(cache / "processed/configs.parquet").num_rows == 0
    baselines = pq.read_table(cache / "processed/baselines.parquet").to_pylist()
    # TabArena names a baseline's rows after its `name` when set (the cache directory stays the method)
    assert len(baselines) == 4 and {b["framework"] for b in baselines} == {"My System"}
    results = pq.read_table(cache / "results/model_results.parquet")
    assert "config_type" not in results.column_names
    assert set(results.column("method").to_pylist()) == {"My System"}
    assert set(results.column("ta_name").to_pylist()) == {"MySystem"}
    assert results.column("metric_error_val").null_count == 4, "TabArena's metrics table always has the column"
    assert set(results.column("method_type").to_pylist()) == {"baseline"}
    assert json.loads((cache / "processed/configs_hyperparameters.json").read_text()) == {}
    assert {p.parent.parent.parent.name for p in (cache / "raw").rglob("results.pkl")} == {"MySystem"}


def test_an_error_verdict_writes_nothing(tmp_path, runs):
    result = process(tmp_path, runs, "corrupt")
    assert result.exit_code == 1 and "TA301" in result.stdout
    assert not (tmp_path / "cache").exists()


def test_ignore_metadata_mismatch_waives_and_records(tmp_path, runs):
    blocked = process(tmp_path, runs, "configs", "wrong_key")
    assert blocked.exit_code == 1 and "TA104" in blocked.stdout
    assert not (tmp_path / "cache").exists()
    waived = process(tmp_path, runs, "configs", "wrong_key", "--ignore-metadata-mismatch", "-v")  # waived shown
    assert waived.exit_code == 0, waived.stdout
    assert "waived TA104" in waived.stdout.replace("  ", " ").replace("  ", " ")
    record = json.loads((tmp_path / ".checks/decisions.jsonl").read_text().splitlines()[-1])
    assert "TA104:*" in record["waivers_used"]
    options = record["options"]  # every option of ProcessOptions, as the command line gave them
    assert options["ignore_metadata_mismatch"] is True and options["engine"] == "native" and options["force"] is False
    assert options["method_metadata"].endswith("info.py:wrong_key") and options["html"] is None


def test_existing_cache_is_kept_refused_or_replaced_whole(tmp_path, runs):
    assert process(tmp_path, runs).exit_code == 0
    cache = tmp_path / "cache" / CACHE
    kept = process(tmp_path, runs)
    assert kept.exit_code == 0 and "kept unchanged" in kept.stdout
    pkl = next((tmp_path / "configs").rglob("results.pkl"))
    pkl.write_bytes(pkl.read_bytes())  # same content, new mtime: the raw inputs changed
    (cache / "stray.txt").write_text("from an older run")
    refused = process(tmp_path, runs)
    assert refused.exit_code == 4 and "--force" in refused.stdout
    assert (cache / "stray.txt").exists()
    forced = process(tmp_path, runs, "configs", "nori", "--force")
    assert forced.exit_code == 0 and "replaced" in forced.stdout
    assert not (cache / "stray.txt").exists()
    assert [p.name for p in cache.parent.iterdir()] == ["Nori"]


def test_failure_mid_build_leaves_the_previous_cache_intact(tmp_path, runs, monkeypatch):

    assert process(tmp_path, runs).exit_code == 0
    cache = tmp_path / "cache" / CACHE
    before = sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*"))

    real, calls = raw_copy.write_new, []

    def fills_up(dest, data):  # the disk fills up after two files of raw/, while the tables are written
        calls.append(dest)
        if len(calls) > 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(dest))
        return real(dest, data)

    monkeypatch.setattr(raw_copy, "write_new", fills_up)
    failed = process(tmp_path, runs, "configs", "nori", "--force")
    assert failed.exit_code == 4, failed.stdout
    assert "cannot write the cache: No space left on device" in failed.stdout
    assert "the previous cache is kept" in failed.stdout and "Traceback" not in failed.stdout
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == before
    assert [p.name for p in cache.parent.iterdir()] == ["Nori"]


def test_no_cache_raw_and_cache_root_from_environment(tmp_path, runs):
    data = _copied(tmp_path, runs)
    args = ["run", "process", str(data), "--method-metadata", f"{runs / 'info.py'}:nori", "--no-cache-raw"]
    result = run_cli(args, cwd=tmp_path, env={"TABARENA_CACHE": str(tmp_path / "envcache")})
    assert result.exit_code == 0, result.stdout
    cache = tmp_path / "envcache" / CACHE
    assert (cache / "results/model_results.parquet").is_file() and not (cache / "raw").exists()


def test_engine_tabarena_without_tabarena_is_a_clear_error(tmp_path, runs):

    if importlib.util.find_spec("tabarena") is not None:
        pytest.skip("TabArena is installed here; the parity test covers --engine tabarena")
    result = process(tmp_path, runs, "configs", "nori", "--engine", "tabarena")
    assert result.exit_code == 2
    assert "--engine tabarena needs TabArena importable" in result.stderr


def test_dry_run_plans_without_writing(tmp_path, runs):
    result = process(tmp_path, runs, "configs", "nori", "--dry-run")
    assert result.exit_code == 0 and "would write" in result.stdout
    assert not (tmp_path / "cache").exists()


def test_expected_protocol_is_enforced(tmp_path, runs):
    blocked = process(tmp_path, runs, "configs", "nori", "--expect-validation-protocol", "3x1")
    assert blocked.exit_code == 1 and "TA202" in blocked.stdout
    assert not (tmp_path / "cache").exists()
    assert process(tmp_path, runs, "configs", "nori", "--expect-validation-protocol", "tabarena").exit_code == 0


def test_process_writes_nothing_but_the_method_cache(tmp_path, runs):
    assert process(tmp_path, runs, "corrupt").exit_code == 1
    assert not (tmp_path / "cache").exists() and not index.default_cache_dir(tmp_path / "corrupt").exists()
    assert process(tmp_path, runs).exit_code == 0
    assert not index.default_cache_dir(tmp_path / "configs").exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["artifacts"]


def test_unsafe_method_name_is_blocked_by_ta406(tmp_path, runs):
    (tmp_path / "info.py").write_text(
        INFO.replace('method="Nori", suite="nori-2026-11"', 'method="../../escaped", suite="nori-2026-11"', 1)
    )
    data = _copied(tmp_path, runs)
    result = run_cli(
        process_args(data, f"{tmp_path / 'info.py'}:nori", tmp_path / "cache"),
        cwd=tmp_path,
    )
    assert result.exit_code == 1 and "TA406" in result.stdout and "plain directory name" in result.stdout
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "cache" / "artifacts").exists()


def test_rerun_cleans_up_after_a_killed_run(tmp_path, runs):
    assert process(tmp_path, runs).exit_code == 0
    cache = tmp_path / "cache" / CACHE
    methods = cache.parent
    # killed between moving the old cache aside and moving the new one in (pid 999998 is long gone)
    os.rename(cache, methods / ".Nori.checks-old-999998")
    (methods / ".Nori.checks-tmp-999998" / "raw").mkdir(parents=True)
    (methods / ".Nori.checks-tmp-999998.root").mkdir()
    (methods / f".Nori.checks-tmp-{os.getpid()}-not-a-pid").mkdir()
    result = process(tmp_path, runs)
    assert result.exit_code == 0, result.stdout
    assert "restored the previous Nori from .Nori.checks-old-999998" in result.stdout
    assert "kept unchanged" in result.stdout
    assert sorted(p.name for p in methods.iterdir()) == [f".Nori.checks-tmp-{os.getpid()}-not-a-pid", "Nori"]
    assert (cache / "metadata.yaml").is_file()


FAKE_TABARENA = {
    "tabarena/__init__.py": "",
    "tabarena/models/__init__.py": "from tabarena.models._method_metadata import MethodMetadata\n",
    "tabarena/tools/__init__.py": "",
    "tabarena/models/_method_metadata.py": """
import dataclasses

@dataclasses.dataclass
class MethodMetadata:
    method: str
    suite: str = None
    method_type: str = "config"
    method_class: str = "model"
    ag_key: str = None
    is_bag: bool = False
    tags: list = dataclasses.field(default_factory=list)
    cache_kwargs: dict = None
    verified: bool = True
    cache_root: str = None
""",
    "tabarena/tools/process_local_raw_data.py": """
import dataclasses, json, pathlib

@dataclasses.dataclass
class RawMethod:
    path_raw: pathlib.Path
    method_metadata: object = None

def process_raw(method, *, cache_raw, cache_hpo_trajectories, backend, file_paths):
    m = method.method_metadata
    (pathlib.Path(m.cache_root) / "given_paths.json").parent.mkdir(parents=True, exist_ok=True)
    (pathlib.Path(m.cache_root) / "given_paths.json").write_text(json.dumps([str(p) for p in file_paths]))
    if m.method == "Broken":
        raise ValueError("task metadata for tid 363612 is missing")
    out = pathlib.Path(m.cache_root) / "artifacts" / m.suite / "methods" / m.method
    (out / "results").mkdir(parents=True)
    (out / "results" / "model_results.parquet").write_text("tables")
    (out / "metadata.yaml").write_text(json.dumps(dataclasses.asdict(m), sort_keys=True))
    if cache_raw:
        (out / "raw").mkdir()
        first = sorted(file_paths)[0]
        (out / "raw" / "results.pkl").write_bytes(first.read_bytes())
        (out / "backend").write_text(backend)
""",
}


def test_engine_tabarena_glue_with_a_stand_in_package(tmp_path, runs, monkeypatch):
    """Only the glue around TabArena's processing: what it is given, where its output goes, how it fails.

    The real comparison of both engines is tests/tabarena/test_tabarena_parity.py (where TabArena is installed).
    """
    fake = tmp_path / "fake"
    for rel, text in FAKE_TABARENA.items():
        (fake / rel).parent.mkdir(parents=True, exist_ok=True)
        (fake / rel).write_text(text)
    monkeypatch.syspath_prepend(str(fake))
    for name in [n for n in sys.modules if n == "tabarena" or n.startswith("tabarena.")]:
        monkeypatch.delitem(sys.modules, name)
    try:
        _glue_checks(tmp_path, runs)
    finally:  # the stand-in's modules leave with it: a later test in this process imports the real TabArena
        for name in [n for n in sys.modules if n == "tabarena" or n.startswith("tabarena.")]:
            del sys.modules[name]


def _glue_checks(tmp_path, runs):
    result = process(tmp_path, runs, "configs", "nori", "--engine", "tabarena")
    assert result.exit_code == 0, result.stdout + result.stderr
    cache = tmp_path / "cache" / CACHE
    given = json.loads((cache / "metadata.yaml").read_text())
    assert given["method"] == "Nori" and given["suite"] == "nori-2026-11" and given["ag_key"] == "TA-NORI"
    assert given["cache_root"].endswith(".root") and given["verified"] is True
    assert (cache / "backend").read_text() == "native"
    assert (cache / "raw" / "results.pkl").read_bytes() == sorted((tmp_path / "configs").rglob("results.pkl"))[
        0
    ].read_bytes()
    assert json.loads((cache / ".checks-source.json").read_text())["engine"] == "tabarena"
    assert [p.name for p in cache.parent.iterdir()] == ["Nori"]
    (tmp_path / "info.py").write_text(
        INFO.replace('method="Nori", suite="nori-2026-11"', 'method="Broken", suite="nori-2026-11"', 1)
    )
    broken = run_cli(
        process_args(
            tmp_path / "configs",
            f"{tmp_path / 'info.py'}:nori",
            tmp_path / "cache",
            "--engine",
            "tabarena",
            "--ignore-metadata-mismatch",
        ),
        cwd=tmp_path,
    )
    assert broken.exit_code == 4, broken.stdout
    assert "TabArena's processing failed: ValueError: task metadata for tid 363612 is missing" in broken.stdout
    assert [p.name for p in cache.parent.iterdir()] == ["Nori"]


def test_process_after_inspect_reads_its_cache_and_leaves_it_as_it_was(tmp_path, runs):

    data = _copied(tmp_path, runs)
    assert run_cli(["inspect", str(data)], cwd=tmp_path).exit_code == 0
    kept = index.default_cache_dir(data)
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in kept.iterdir()}
    assert "index.parquet" in before

    facts = ProcessFacts(data_dir=data)
    assert facts.full_index.decoded == 0, "every file was decoded by inspect already"
    assert facts.full_index.cache_path is None and facts.full_index.fingerprint is None
    assert facts.inference.n_results == len(facts.full_index) > 0
    assert process(tmp_path, runs).exit_code == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in kept.iterdir()} == before

    victim = next(data.rglob("results.pkl"))
    os.utime(victim, ns=(victim.stat().st_atime_ns, victim.stat().st_mtime_ns + 10**9))
    assert ProcessFacts(data_dir=data).full_index.decoded == 1, "a file changed since inspect is decoded again"
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in kept.iterdir()} == before


def test_decision_digest_of_the_raw_data_is_that_of_the_files_judged(tmp_path, runs):

    data = runs / "configs" / "data"
    facts = ProcessFacts(data_dir=data)
    assert facts.full_index.files and facts.digests()["raw_data"] == raw_digest(data)


def _copied(tmp_path, runs):
    """The configs run copied into ``tmp_path/configs``: a test damages its copy, never the module's run."""
    data = tmp_path / "configs"
    shutil.copytree(runs / "configs" / "data", data)
    return data


def _edit(path: Path, change) -> None:
    """Rewrite the result at ``path`` after ``change(result)`` edited it in place."""
    result = reader.load_result(path)
    change(result)
    write_result(path, result)


def _drop(part: str, key: str):
    """A change for ``_edit`` that deletes ``result[part][key]``."""
    return lambda result: result[part].pop(key)


def _merge_run(data, where, **options) -> None:
    """A small run of two configs on one task generated in ``where``, its config folders moved into ``data``."""
    generate_run(
        where,
        configs=2,
        repeats=1,
        folds=1,
        tasks=(363612,),
        validation_protocol="8x1",
        array_scale=0.05,
        workers=1,
        **options,
    )
    for d in (where / "data").iterdir():
        d.rename(data / d.name)


def _shared_dir(tmp_path, runs):
    """The configs run plus another method (its own ag_key) and a system, in one data directory."""
    data = tmp_path / "shared"
    shutil.copytree(runs / "configs" / "data", data)
    _merge_run(data, tmp_path / "other", name_prefix="TA-Other", method="Other", ag_key="TA-OTHER")
    shutil.copytree(runs / "system" / "data" / "MySystem_c1_default", data / "MySystem_c1_default")
    return data


def test_shared_directory_processes_only_the_declared_method(tmp_path, runs):
    data = _shared_dir(tmp_path, runs)
    args = process_args(data, f"{runs / 'info.py'}:nori", tmp_path / "cache")
    result = run_cli(args, cwd=tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "not processed: MySystem_c1_default (4 results), TA-Other (2 results)" in result.stdout
    cache = tmp_path / "cache" / CACHE
    frameworks = set(pq.read_table(cache / "processed/configs.parquet").column("framework").to_pylist())
    assert frameworks == {"Nori_c1_default_BAG_L1", "Nori_r1_default_BAG_L1"}, "nothing of another method"
    assert {p.parts[-4] for p in (cache / "raw").rglob("results.pkl")} == frameworks
    system = run_cli(
        process_args(data, f"{runs / 'info.py'}:system", tmp_path / "cache"),
        cwd=tmp_path,
    )
    assert system.exit_code == 0, system.stdout
    rows = pq.read_table(tmp_path / "cache/artifacts/mysystem-2026-11/methods/MySystem/processed/baselines.parquet")
    assert rows.num_rows == 4 and set(rows.column("framework").to_pylist()) == {"My System"}


def test_shared_directory_with_no_single_match_needs_method(tmp_path, runs):
    data = _shared_dir(tmp_path, runs)
    _merge_run(data, tmp_path / "rerun", name_prefix="TA-Nori2")  # the same model again: same ag_key, another prefix
    args = process_args(data, f"{runs / 'info.py'}:nori", tmp_path / "cache")
    blocked = run_cli(args, cwd=tmp_path)
    assert blocked.exit_code == 1 and "choose the one to process with --method PREFIX" in blocked.stdout
    assert not (tmp_path / "cache").exists()
    chosen = run_cli([*args, "--method", "TA-Nori2"], cwd=tmp_path)
    assert chosen.exit_code == 0, chosen.stdout
    assert "not processed: MySystem_c1_default (4 results), TA-Nori (16 results), TA-Other (2 results)" in chosen.stdout
    configs = pq.read_table(tmp_path / "cache" / CACHE / "processed/configs.parquet")
    assert configs.column("framework").to_pylist() == ["Nori_c1_default_BAG_L1", "Nori_r1_default_BAG_L1"]
    bad = run_cli([*args, "--method", "TA-Nope"], cwd=tmp_path)
    assert bad.exit_code == 1 and "--method 'TA-Nope' matches none" in bad.stdout


def test_missing_split_idx_and_duplicates_block_with_the_file_and_the_fix(tmp_path, runs):
    data = _copied(tmp_path, runs)
    _edit(data / "TA-Nori_r1_default_BAG_L1" / "363614" / "1_0" / "results.pkl", _drop("task_metadata", "split_idx"))
    twin = data / "TA-Nori_c1_default_BAG_L1-rerun" / "363612" / "0_0" / "results.pkl"
    twin.parent.mkdir(parents=True)
    shutil.copy(data / "TA-Nori_c1_default_BAG_L1" / "363612" / "0_0" / "results.pkl", twin)
    out = process(tmp_path, runs)
    assert out.exit_code == 1
    assert (
        "TA-Nori_r1_default_BAG_L1/363614/1_0/results.pkl:1:1: task_metadata.split_idx is missing" in out.stdout
        and "add split_idx = n_folds * repeat + fold (repeat 1, fold 0)" in out.stdout
    )
    assert "has 2 results" in out.stdout and "move the other(s) out of the data directory" in out.stdout
    assert not (tmp_path / "cache").exists(), "nothing is written"


def test_damaged_artifacts_and_a_split_of_other_rows_block_with_the_file_instead_of_crashing(tmp_path, runs):
    # each stopped processing halfway with a traceback (exit 3) before the reader checked them

    data = _copied(tmp_path, runs)
    _edit(
        data / "TA-Nori_c1_default_BAG_L1" / "363614" / "0_0" / "results.pkl", _drop("simulation_artifacts", "y_test")
    )
    other_rows = data / "TA-Nori_r1_default_BAG_L1" / "363612" / "1_1" / "results.pkl"

    def two_validation_rows_fewer(result):
        sa = result["simulation_artifacts"]
        keep = slice(0, len(sa["y_val"]) - 2)  # consistently within the file
        sa["y_val"], sa["y_val_idx"] = sa["y_val"][keep], sa["y_val_idx"][keep]
        sa["pred_proba_dict_val"] = {k: v[keep] for k, v in sa["pred_proba_dict_val"].items()}
        sa["bag_info"]["val_idx_per_child"] = [idx[idx < keep.stop] for idx in sa["bag_info"]["val_idx_per_child"]]

    _edit(other_rows, two_validation_rows_fewer)
    assert row_problems(reader.decode_row(other_rows, root=data)) == [], "the file alone is sound"
    out = process(tmp_path, runs)
    assert out.exit_code == 1, out.stdout + out.stderr
    assert "TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl:1:1: simulation_artifacts.y_test is missing" in out.stdout
    assert (
        "TA-Nori_r1_default_BAG_L1/363612/1_1/results.pkl:1:1: simulation_artifacts holds 48 validation and "
        "25 test labels, but TA-Nori_c1_default_BAG_L1/363612/1_1/results.pkl of the same task split holds "
        "50 and 25" in out.stdout
    )
    assert "Traceback" not in out.stderr and not (tmp_path / "cache").exists(), "nothing is written"


def test_artifacts_the_rules_let_through_still_end_as_a_clear_failure(tmp_path, runs, monkeypatch):

    monkeypatch.setattr(raw_artifacts, "problems", lambda *args: [])  # a defect no check foresaw
    data = _copied(tmp_path, runs)
    _edit(
        data / "TA-Nori_c1_default_BAG_L1" / "363614" / "0_0" / "results.pkl", _drop("simulation_artifacts", "y_test")
    )
    out = process(tmp_path, runs, "configs", "nori", env={"CHECKS_CACHE_DIR": str(tmp_path / "index-cache")})
    assert out.exit_code == 4, out.stdout + out.stderr
    assert (
        "TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl: its simulation artifacts cannot be aligned as "
        "TabArena aligns them (KeyError: 'y_test'); nothing was written" in out.stdout + out.stderr
    )
    assert "Traceback" not in out.stderr and not (tmp_path / "cache" / CACHE).exists()


def test_a_validation_row_no_child_predicted_ends_the_simulation_with_the_reason(tmp_path, runs):
    # TabArena 0.1.0 stops here too, with numpy's "'a' cannot be empty unless no samples are taken"

    data = _copied(tmp_path, runs)

    def no_child_predicts_row_0(result):  # validation row 0: predicted by no child, NaN
        children = result["simulation_artifacts"]["bag_info"]["val_idx_per_child"]
        children[:] = [idx[idx != 0] for idx in children]

    _edit(data / "TA-Nori_c1_default_BAG_L1" / "363612" / "0_0" / "results.pkl", no_child_predicts_row_0)
    info = tmp_path / "info.py"
    info.write_text(INFO.replace("is_bag=True,\n", 'is_bag=True, config_default="Nori_c1_default_BAG_L1",\n', 1))
    out = run_cli(
        process_args(data, f"{info}:nori", tmp_path / "cache"),
        cwd=tmp_path,
    )
    assert out.exit_code == 4, out.stdout + out.stderr
    assert "TA305" in out.stdout and (
        "cannot simulate TabArena's HPO trajectories: every candidate ensemble scored "
        "NaN at step 1 of a greedy search" in out.stdout + out.stderr
    )
    assert "Warning" not in out.stderr and not (tmp_path / "cache" / CACHE).exists()
