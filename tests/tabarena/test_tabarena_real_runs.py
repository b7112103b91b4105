"""Runs TabArena 0.1.0's own experiment runner wrote (tests/fixtures/tabarena_real, made by
tests/real_runs/make_real_runs.py): every file is read, the inference equals TabArena's
``_infer_from_raw``, and processing them (custom tasks, so with their task metadata) writes the
cache TabArena's own processing writes, which TabArena's loaders read alike.

The TabArena side runs in its own environment through tests/support/tabarena_driver.py, as the parity
tests do (a missing environment is a skip by hand and a failure under ``make test``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.support.tabarena_fixtures import build
from tests.support.parity import HEADER, process_like_tabarena, read_whole, run_driver
from tests.support.real_runs import REAL, REFUSED, RUNS, TASK_TABLE, TASKS, run_data

from checks.testing import run_cli
from tabarena_checks.raw import inference
from tabarena_checks.testing.commands import process_args


def test_the_fixtures_hold_every_run_the_script_made():
    assert sorted(p.name for p in (REAL / "runs").iterdir()) == sorted([*RUNS, *REFUSED])


@pytest.mark.parametrize("run", list(RUNS))
def test_every_real_file_is_read_with_nothing_left_out(tmp_path, run):
    for result in read_whole(run_data(run), tmp_path)[1]:  # traits of real files the imitations never had
        assert result["task_metadata"]["tid"] > 2**31 and "validation_protocol" not in result
        if result.get("method_metadata"):
            info = result["method_metadata"]["info"]
            assert type(info["ag_args_fit"]) is dict  # AutoGluon 1.6's ParamsAuxDict, rebuilt plain


@pytest.mark.parametrize("run", list(REFUSED))
def test_a_class_in_a_field_processing_reads_refuses_the_file_naming_both(tmp_path, run):
    field, name = REFUSED[run]
    index = build(run_data(run), cache_dir=tmp_path / "idx")
    assert len(index) == 0 and len(index.errors) == len(list(run_data(run).rglob("results.pkl")))
    for _, reason in index.errors:
        assert f"refused to load '{name}' in {field}" in reason and "processing reads this field" in reason


@pytest.mark.parametrize("run", list(RUNS))
def test_inference_equals_tabarenas_infer_from_raw(tmp_path, run):
    run_driver("infer", str(run_data(run)), str(tmp_path / "theirs.json"), log=tmp_path / "infer.log")
    theirs = json.loads((tmp_path / "theirs.json").read_text())
    ours = inference.infer(build(run_data(run), cache_dir=tmp_path / "idx"))
    assert theirs["n_results"] == ours.n_results
    assert theirs["inferred_method_type"] == ours.method_type
    assert theirs["inferred_ag_key"] == ours.ag_key
    assert theirs["inferred_compute"] == ours.compute
    assert theirs["inferred_can_hpo"] == ours.can_hpo
    assert theirs["is_bag_any"] == ours.is_bag
    assert theirs["inferred_config_default"] == ours.raw_config_default
    assert theirs["inferred_method"] == ours.inferred_method
    assert theirs["frameworks"] == list(ours.frameworks)
    assert theirs["problem_types"] == list(ours.problem_types)
    assert theirs["metrics"] == list(ours.metrics)
    assert theirs["n_datasets"] == len(ours.datasets)
    assert theirs["config_task_counts"] == dict(ours.results_per_config)


@pytest.mark.parametrize("run", list(RUNS))
def test_processing_real_custom_task_runs_equals_tabarenas_and_loads_alike(tmp_path, run):
    method, declaration = RUNS[run]
    process_like_tabarena(tmp_path, run_data(run), TASKS, method, declaration)


def _process(tmp_path: Path, *extra: str):
    (tmp_path / "info.py").write_text(f"{HEADER}m = {RUNS['lr_holdout'][1]}\n")
    return run_cli(
        process_args(
            run_data("lr_holdout"), f"{tmp_path / 'info.py'}:m", tmp_path / "cache", "--format", "json", *extra
        ),
        cwd=tmp_path,
    )


def _ta309(result) -> dict:
    return next(v for v in json.loads(result.stdout)["verdicts"] if v["code"] == "TA309")


def test_a_run_on_custom_tasks_without_their_metadata_is_refused_naming_the_option(tmp_path):
    result = _process(tmp_path)
    assert result.exit_code == 1, result.stderr
    verdict = _ta309(result)
    assert verdict["outcome"] == "failed"
    assert "'sk_wine-2144e56dbe05' (tid 7166390669) is not a task of the TabArena-v0.1 suite" in verdict["message"]
    assert "--task-metadata FILE" in verdict["message"]
    assert not (tmp_path / "cache").exists()


def test_task_metadata_that_disagrees_with_the_results_is_refused(tmp_path):
    table = pq.read_table(TASK_TABLE)
    problem = table.column("problem_type").to_pylist()
    wine = table.column("dataset").to_pylist().index("sk_wine-2144e56dbe05")
    problem[wine] = "binary"
    wrong = table.set_column(table.column_names.index("problem_type"), "problem_type", pa.array(problem))
    pq.write_table(wrong, tmp_path / "wrong.parquet")
    verdict = _ta309(_process(tmp_path, "--task-metadata", str(tmp_path / "wrong.parquet")))
    assert verdict["outcome"] == "failed"
    assert "task 'sk_wine-2144e56dbe05'" in verdict["message"]
    assert "gives problem_type 'binary', its results record 'multiclass'" in verdict["message"]

    pq.write_table(table.slice(0, 2), tmp_path / "short.parquet")
    verdict = _ta309(_process(tmp_path, "--task-metadata", str(tmp_path / "short.parquet")))
    assert verdict["outcome"] == "failed" and "has no row in" in verdict["message"]

    result = _process(tmp_path, "--task-metadata", str(TASK_TABLE))
    assert result.exit_code == 0 and _ta309(result)["outcome"] == "passed"


@pytest.mark.parametrize(
    "content, words",
    [
        (None, "cannot be read"),
        (b"not parquet", "not a readable parquet file"),
        (pa.table({"dataset": ["a"]}), "no column 'tid', 'problem_type'"),
        (pa.table({"dataset": ["a"], "tid": [1], "problem_type": ["ranking"]}), "'problem_type' must be one of"),
    ],
)
def test_an_unusable_task_metadata_file_is_one_clear_finding(tmp_path, content, words):
    path = tmp_path / "tasks.parquet"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        pq.write_table(content, path)
    result = _process(tmp_path, "--task-metadata", str(path))
    assert result.exit_code == 1 and "Traceback" not in result.stdout + result.stderr
    verdict = _ta309(result)
    assert verdict["outcome"] == "failed" and words in verdict["message"] and str(path) in verdict["message"]


def test_the_tabarena_engine_cannot_take_task_metadata(tmp_path):
    result = _process(tmp_path, "--engine", "tabarena", "--task-metadata", str(TASK_TABLE))
    assert result.exit_code == 2 and "--engine tabarena cannot take --task-metadata" in result.stdout + result.stderr
