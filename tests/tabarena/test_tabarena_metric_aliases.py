"""AutoGluon's metric aliases: a run on a task scored by ``mae`` (AutoGluon records ``mean_absolute_error``
beside it) is judged and processed natively, and the engine advice of TA307, TA309 and TA310 names a
command that works for the run at hand.

The real run (tests/fixtures/tabarena_real_mae, made by ``tests/real_runs/make_real_runs.py --tasks mae``)
is one TabArena 0.1.0 itself cannot process; with its alias table taught ``mean_absolute_error`` (nothing
else changed) it processes it to the very cache the native engine writes.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import attrs
import pyarrow.parquet as pq
import pytest
from tests.support.tabarena_fixtures import build
from tests.support.parity import DRIVER, DRIVER_TIMEOUT, HEADER, tabarena_python, compare_caches, compare_loaded
from tests.support.tabarena_rule_facts import GOOD, facts, options_of

from checks.model import Outcome
from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli
from tabarena_checks.engine.cache_hpo_metrics import Metric
from tabarena_checks.raw import inference
from tabarena_checks.raw.metric_names import same_metric, scorer_name, tabarena_loads
from tabarena_checks.rules import raw as rules_raw
from tabarena_checks.rules import raw_fields

MAE = Path(__file__).resolve().parents[1] / "fixtures" / "tabarena_real_mae"
DATA = MAE / "runs" / "lr_bag_mae" / "data"
TASK_TABLE = MAE / "tasks" / "task_metadata_legacy.parquet"
DECLARATION = (
    'MethodMetadata.config(method="LinearModel", suite="lr-mae", ag_key="LR", '
    'config_default="LinearModel_c1_default_BAG_L1", can_hpo=True, is_bag=True, compute="cpu")'
)
REL = Path("artifacts") / "lr-mae" / "methods" / "LinearModel"
#: runs tabarena_driver.py with TabArena's alias table taught AutoGluon's name for mae, and nothing else
TAUGHT = """import runpy, sys
from tabarena.benchmark.task import metrics
metrics.EVAL_METRIC_ALIASES["mean_absolute_error"] = "mae"
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
#: a task of the TabArena-v0.1 suite, so that TA309 asks for no task metadata
SUITE_TASK = (("airfoil_self_noise", 363612, "regression", "rmse"),)
BY_CODE = {r.code: r for r in rules_raw.RULES}


def _rule(code: str, inferred: dict, **options):
    return evaluate_rules(
        [BY_CODE[code]], facts(**inferred), action="process", options=options_of("process", **options)
    )


# ----------------------------------------------------------------------------- the names


def test_a_scorer_and_its_alias_are_one_metric_and_tabarena_knows_only_rmse():
    assert same_metric("mae", "mean_absolute_error") and same_metric("rmse", "root_mean_squared_error")
    assert same_metric("acc", "accuracy") and same_metric("nll", "log_loss")
    assert not same_metric("mae", "rmse") and not same_metric("mse", "mean_absolute_error")
    assert scorer_name("balanced_accuracy") == "balanced_accuracy"
    assert tabarena_loads("rmse") and tabarena_loads("roc_auc") and tabarena_loads("mean_absolute_error")
    assert not tabarena_loads("mae") and not tabarena_loads("mse") and not tabarena_loads("acc")


def test_the_native_mae_is_the_mean_of_absolute_differences():
    metric = Metric("mae")
    y, preds = metric.prepare([1.0, 2.0, 4.0], [[1.5, 2.0, 1.0], [1.0, 2.0, 4.0]])
    assert metric.errors(y, preds) == [pytest.approx(3.5 / 3), 0.0]
    assert metric.error(y, preds[0]) == metric.errors(y, preds)[0]
    assert list(metric.scores(y, preds)) == metric.errors(y, preds)


# ----------------------------------------------------------------------------- the real run


def _process(tmp_path: Path, *extra: str):
    (tmp_path / "info.py").write_text(f"{HEADER}m = {DECLARATION}\n")
    args = ["run", "process", str(DATA), "--method-metadata", f"{tmp_path / 'info.py'}:m"]
    return run_cli([*args, "--cache-root", str(tmp_path / "native"), "--format", "json", *extra], cwd=tmp_path)


def _verdict(result, code: str) -> dict:
    return next(v for v in json.loads(result.stdout)["verdicts"] if v["code"] == code)


def test_the_real_mae_run_records_both_names_and_every_check_passes(tmp_path):
    index = build(DATA, cache_dir=tmp_path / "idx")
    assert len(index) == 4 and index.errors == ()
    names = {tuple(r) for r in index.query("SELECT DISTINCT metric, artifact_facts FROM results")}
    assert {metric for metric, _ in names} == {"mae"}
    assert all('"mean_absolute_error"' in facts_json for _, facts_json in names)
    assert raw_fields.problems(index) == ()
    assert inference.infer(index).metrics == ("mae",)


def test_the_native_engine_processes_the_mae_run(tmp_path):
    result = _process(tmp_path, "--task-metadata", str(TASK_TABLE))
    assert result.exit_code == 0, result.stdout + result.stderr
    hpo = pq.read_table(tmp_path / "native" / REL / "results" / "hpo_results.parquet").to_pylist()
    assert {row["metric"] for row in hpo} == {"mae"}
    assert {row["method_subtype"] for row in hpo} == {"default", "tuned", "tuned_ensemble"}
    assert (tmp_path / "native" / REL / "results" / "hpo_trajectories.parquet").exists()


def _driver(python_args: list[str], log: Path) -> int:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TABARENA_CACHE": str(log.parent / "ta-default-cache")}
    with open(log, "wb") as out:
        return subprocess.run(
            [tabarena_python(), *python_args], stdout=out, stderr=subprocess.STDOUT, env=env, timeout=DRIVER_TIMEOUT
        ).returncode


def test_tabarena_fails_on_the_mae_run_and_once_taught_the_alias_writes_the_native_cache(tmp_path):
    assert _process(tmp_path, "--task-metadata", str(TASK_TABLE)).exit_code == 0
    ref = f"{tmp_path / 'info.py'}:m"
    process = ["process", str(DATA), ref, str(tmp_path / "untaught"), "--user-tasks", str(MAE / "tasks")]
    assert _driver([str(DRIVER), *process], tmp_path / "untaught.log") != 0
    assert "AssertionError" in (tmp_path / "untaught.log").read_text()

    (tmp_path / "taught.py").write_text(TAUGHT)
    process[3] = str(tmp_path / "tabarena")
    rc = _driver([str(tmp_path / "taught.py"), str(DRIVER), *process], tmp_path / "taught.log")
    assert rc == 0, (tmp_path / "taught.log").read_text()[-4000:]
    native, theirs = tmp_path / "native" / REL, tmp_path / "tabarena" / REL
    assert compare_caches(native, theirs) == []
    for side in ("native", "tabarena"):
        load = ["load", str(tmp_path / side), "LinearModel", "lr-mae", str(tmp_path / f"loaded-{side}")]
        assert _driver([str(DRIVER), *load], tmp_path / f"load-{side}.log") == 0
    assert compare_loaded(tmp_path / "loaded-native", tmp_path / "loaded-tabarena") == []


def test_the_tabarena_engine_on_the_mae_run_is_refused_with_advice_that_works(tmp_path, monkeypatch):
    # --engine tabarena needs the name importable; the gate refuses before anything of it is imported
    (tmp_path / "site" / "tabarena").mkdir(parents=True)
    (tmp_path / "site" / "tabarena" / "__init__.py").write_text("raise ImportError('not to be imported here')\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    result = _process(tmp_path, "--engine", "tabarena")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "drop --engine tabarena" in _verdict(result, "TA310")["message"]
    ta309 = _verdict(result, "TA309")["message"]
    assert "process with the native engine (drop --engine tabarena" in ta309 and "--task-metadata FILE" in ta309
    # the advice, followed: the native engine with the task metadata
    assert _process(tmp_path, "--task-metadata", str(TASK_TABLE)).exit_code == 0


# ----------------------------------------------------------------------------- the rules' advice


def test_ta307_advises_the_tabarena_engine_only_where_it_can_process_the_run():
    suite = dict(metrics=("balanced_accuracy",), tasks=SUITE_TASK)
    v = assert_fails(_rule("TA307", suite), "TA307", "'balanced_accuracy'")
    assert "process with --engine tabarena" in v.message
    for inferred, options, words in [
        (suite, {"task_metadata": "tasks.parquet"}, "cannot take their metadata (--task-metadata)"),
        (
            dict(metrics=("balanced_accuracy",), tasks=(("sk_x-1", 7166390669, "binary", "balanced_accuracy"),)),
            {},
            "outside",
        ),
        (dict(metrics=("mse",), tasks=SUITE_TASK), {}, "nor can TabArena 0.1.0 load results scored on 'mse'"),
    ]:
        v = assert_fails(_rule("TA307", inferred, **options), "TA307", words)
        assert "--engine tabarena (" not in v.message and "rerun the configs on tasks scored by one of" in v.message
    assert_passes(_rule("TA307", dict(metrics=("mae",))), "TA307")


def test_ta310_refuses_the_tabarena_engine_on_an_alias_it_cannot_load():
    v = assert_fails(_rule("TA310", dict(metrics=("mae",)), engine="tabarena"), "TA310", "'mean_absolute_error'")
    assert "process with the native engine (drop --engine tabarena)" in v.message
    v = assert_fails(_rule("TA310", dict(metrics=("mse",)), engine="tabarena"), "TA310", "'mse'")
    assert "native engine cannot simulate it either" in v.message and "drop --engine" not in v.message
    for inferred, options in [
        (dict(metrics=("rmse", "balanced_accuracy")), {"engine": "tabarena"}),
        (dict(metrics=("mae",)), {}),
        (dict(metrics=("mae",), method_type="baseline"), {"engine": "tabarena"}),
    ]:
        assert_passes(_rule("TA310", inferred, **options), "TA310")
    baseline = evaluate_rules(
        [BY_CODE["TA310"]],
        facts(metadata=attrs.evolve(GOOD, method_type="baseline"), metrics=("mae",)),
        action="process",
        options=options_of("process", engine="tabarena"),
    )
    assert baseline["TA310"].outcome is Outcome.PASSED
