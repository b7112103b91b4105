"""Runs of the model families beyond the first fixtures (LightGBM, CatBoost, XGBoost, TabArena's KNN, the torch
MLP, fastai's MLP and TabArena's RealMLP), written by TabArena 0.1.0's own runner
(tests/fixtures/tabarena_real_families, made by ``tests/real_runs/make_real_runs.py --families``), through
the whole publishing chain.

The strict reader reads every file (no class outside its allow-list anywhere, so TA308 passes), the
inference equals TabArena's ``_infer_from_raw`` and the values TabArena's own run records, processing writes
the cache TabArena's processing writes (its loaders read both alike), and the upload's dry run passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.tabarena_fixtures import build
from tests.support.parity import R2
from tests.support.parity import run_driver, process_like_tabarena, read_whole

from checks.testing import run_cli
from tabarena_checks.raw import inference
from tabarena_checks.testing.commands import upload_args

FAMILIES = Path(__file__).resolve().parents[1] / "fixtures" / "tabarena_real_families"
TASKS = FAMILIES / "tasks"
#: (run prefix, the frameworks' name prefix, AutoGluon's model key the run records, bagged, the method declared)
#: per family. TabArena's KNN is its own ``KNNNewModel`` (key ``TA-KNN``; its registered metadata says ``KNN``),
#: fitted as one child with use_child_oof (AutoGluon's KNN default), so it is no bag; TabArena's RealMLP names
#: its configs ``TA-RealMLP_...``, which processing renames to the method declared
FAMILY = [
    ("gbm", "LightGBM", "GBM", True, "LightGBM"),
    ("cat", "CatBoost", "CAT", True, "CatBoost"),
    ("xgb", "XGBoost", "XGB", True, "XGBoost"),
    ("knn", "KNeighbors", "TA-KNN", False, "KNeighbors"),
    ("nn_torch", "NeuralNetTorch", "NN_TORCH", True, "NeuralNetTorch"),
    ("fastai", "NeuralNetFastAI", "FASTAI", True, "NeuralNetFastAI"),
    ("realmlp", "TA-RealMLP", "TA-REALMLP", True, "RealMLP"),
]
#: run -> what inspect must infer: TabArena's own answer for these files (the default config alone on three
#: tasks, ``_bag``; the default and one search-space config on the multiclass task, ``_hpo``)
EXPECTED = {
    f"{prefix}_{kind}": {
        "method_type": "config",
        "inferred_method": raw,
        "ag_key": ag_key,
        "is_bag": is_bag,
        "can_hpo": kind == "hpo",
        "compute": "cpu",
        "raw_config_default": f"{raw}_c1_default_BAG_L1" if kind == "bag" else None,
        "frameworks": (f"{raw}_c1_default_BAG_L1",)
        if kind == "bag"
        else (f"{raw}_c1_default_BAG_L1", f"{raw}_r1_default_BAG_L1"),
    }
    for prefix, raw, ag_key, is_bag, _ in FAMILY
    for kind in ("bag", "hpo")
}
#: run -> the method its declaration names
METHOD = {f"{prefix}_{kind}": method for prefix, *_, method in FAMILY for kind in ("bag", "hpo")}


def _declaration(run: str) -> str:
    """The declaration a maintainer writes after ``checks inspect`` (the hpo runs pick the default config)."""
    facts, method = EXPECTED[run], METHOD[run]
    return (
        f'MethodMetadata.config(method="{method}", suite="{run.replace("_", "-")}-real", ag_key="{facts["ag_key"]}", '
        f'config_default="{method}_c1_default_BAG_L1", can_hpo={facts["can_hpo"]}, is_bag={facts["is_bag"]}, '
        'compute="cpu")'
    )


def _data(run: str) -> Path:
    return FAMILIES / "runs" / run / "data"


def test_the_fixtures_hold_every_family_run_the_script_made():
    manifest = json.loads((FAMILIES / "manifest.json").read_text())
    assert sorted(manifest["runs"]) == sorted(EXPECTED) == sorted(p.name for p in (FAMILIES / "runs").iterdir())
    assert all(r["ok"] for r in manifest["runs"].values())


@pytest.mark.parametrize("run", list(EXPECTED))
def test_the_strict_reader_reads_every_family_file_and_infers_what_tabarena_recorded(tmp_path, run):
    inf, results = read_whole(_data(run), tmp_path)
    assert {field: getattr(inf, field) for field in EXPECTED[run]} == EXPECTED[run]
    assert {r["method_metadata"]["model_type"] for r in results} == {EXPECTED[run]["ag_key"]}


@pytest.mark.parametrize("run", list(EXPECTED))
def test_family_inference_equals_tabarenas_infer_from_raw(tmp_path, run):
    run_driver("infer", str(_data(run)), str(tmp_path / "theirs.json"), log=tmp_path / "infer.log")
    theirs = json.loads((tmp_path / "theirs.json").read_text())
    ours = inference.infer(build(_data(run), cache_dir=tmp_path / "idx"))
    assert (
        theirs["inferred_method_type"],
        theirs["inferred_ag_key"],
        theirs["inferred_compute"],
        theirs["inferred_can_hpo"],
        theirs["is_bag_any"],
        theirs["inferred_config_default"],
        theirs["inferred_method"],
        theirs["frameworks"],
        theirs["config_task_counts"],
    ) == (
        ours.method_type,
        ours.ag_key,
        ours.compute,
        ours.can_hpo,
        ours.is_bag,
        ours.raw_config_default,
        ours.inferred_method,
        list(ours.frameworks),
        dict(ours.results_per_config),
    )


@pytest.mark.parametrize("run", list(EXPECTED))
def test_family_runs_process_like_tabarena_and_pass_the_upload_dry_run(tmp_path, run):
    method = METHOD[run]
    declaration = _declaration(run).replace("(", f"({R2}", 1)
    process_like_tabarena(tmp_path, _data(run), TASKS, method, declaration)
    suite = declaration.split('suite="')[1].split('"')[0]
    uploaded = run_cli(
        upload_args(tmp_path / "native", "--verified", method=method, suite=suite),
        cwd=tmp_path,
    )
    assert uploaded.exit_code == 0, uploaded.stdout + uploaded.stderr
    assert "dry run: nothing was changed" in uploaded.stdout + uploaded.stderr
