"""Every inference field on generated runs, and the ``checks tabarena synth`` command."""

from __future__ import annotations

import pytest
from tests.support.tabarena_fixtures import build, field_problems, infer_run, make_run, write_payload

from checks.testing import run_cli
from tabarena_checks.raw import inference, reader
from tabarena_checks.synth import generate as synth


def test_single_bagged_config(tmp_path):
    inf = infer_run(tmp_path, validation_protocol="8x1", folds=3)
    assert inf.methods == ("TA-Nori",)
    assert (inf.method_type, inf.ag_key, inf.compute, inf.is_bag, inf.can_hpo) == (
        "config",
        "TA-NORI",
        "cpu",
        True,
        False,
    )
    assert inf.frameworks == ("TA-Nori_c1_default_BAG_L1",) and inf.raw_config_default == inf.frameworks[0]
    assert inf.name_prefix == "TA-Nori" and inf.inferred_method == "TA-Nori"
    assert inf.config_default_for("Nori") == "Nori_c1_default_BAG_L1"
    assert inf.renamed_framework("TA-Nori_r7_default_BAG_L1", "Nori") == "Nori_r7_default_BAG_L1"
    assert (inf.validation_protocol, inf.validation_protocol_keys, inf.validation_flavours) == (
        "8x1",
        ("8x1",),
        ("bagged",),
    )
    assert inf.fold_histogram == (("8x1", 9),) and inf.n_without_protocol == 0
    assert (inf.n_results, inf.n_tasks) == (9, 3)
    assert inf.datasets == ("Bank_Customer_Churn", "airfoil_self_noise", "anneal")
    assert inf.splits == ((0, 0), (0, 1), (0, 2))
    assert inf.problem_types == ("binary", "multiclass", "regression")
    assert inf.metrics == ("log_loss", "rmse", "roc_auc")
    assert inf.results_per_config == {"TA-Nori_c1_default_BAG_L1": 9}
    assert (inf.missing_cells, inf.duplicates, inf.fidelity, inf.errors) == ((), (), (), ())
    assert field_problems(tmp_path / "data") == ()


def test_several_configs(tmp_path):
    inf = infer_run(tmp_path, configs=3, tasks=(363612,), folds=2)
    assert inf.can_hpo and inf.raw_config_default is None and inf.config_default_for("Nori") is None
    assert inf.frameworks == ("TA-Nori_c1_default_BAG_L1", "TA-Nori_r1_default_BAG_L1", "TA-Nori_r2_default_BAG_L1")
    assert inf.inferred_method == "TA-Nori" and inf.results_per_config == dict.fromkeys(inf.frameworks, 2)


def test_baseline(tmp_path):
    inf = infer_run(tmp_path, kind="baseline", name_prefix="MySystem", tasks=(363612,), folds=2, gpus=1)
    assert inf.method_type == "baseline" and inf.methods == ("MySystem_c1_default",)
    assert inf.ag_key is None and inf.name_prefix is None and not inf.is_bag
    assert inf.compute == "cpu", "baselines record no num_gpus, like TabArena's inference"
    assert inf.inferred_method == "MySystem_c1_default" and inf.fidelity == ()
    assert inf.config_default_for("MySystem") == "MySystem"


def test_mixed_configs_and_baselines(tmp_path):
    make_run(tmp_path, tasks=(363612,), folds=1)
    data = make_run(tmp_path, tasks=(363612,), folds=1, kind="baseline", name_prefix="MySystem")
    inf = inference.infer(build(data))
    assert inf.method_type == "mixed" and inf.inferred_method is None


@pytest.mark.parametrize("gpus, compute", [(0, "cpu"), (1, "gpu"), (0.5, "gpu")])
def test_compute(tmp_path, gpus, compute):
    assert infer_run(tmp_path, gpus=gpus, tasks=(363612,), folds=1).compute == compute


def test_use_child_oof_is_not_bagged(tmp_path):
    inf = infer_run(tmp_path, use_child_oof=True, validation_protocol="8x1", tasks=(363612,), folds=2)
    assert not inf.is_bag
    assert inf.fold_histogram == (("8x1 requested; 1 child via use_child_oof", 2),)
    assert inf.fidelity == ()


@pytest.mark.parametrize(
    "spec, kind, key, flavour, histogram",
    [
        ("8x1", "config", "8x1", "bagged", (("8x1", 2),)),
        ("beyondarena", "config", "8x1+tiny5x5<=500+task-specific+adapt-classes", "bagged", (("8x1", 2),)),
        ("3x2", "config", "3x2", "bagged", (("3x2", 2),)),
        ("holdout", "config", "holdout:8x1", "holdout", ()),
        ("outer", "config", "outer", "outer", ()),
        ("system", "system", "system", "system", ()),
        ("custom", "config", "custom:3x1", None, ()),
    ],
)
def test_validation_protocol_keys(tmp_path, spec, kind, key, flavour, histogram):
    inf = infer_run(tmp_path, validation_protocol=spec, kind=kind, tasks=(363612,), folds=2)
    assert inf.validation_protocol == key and inf.validation_protocol_keys == (key,)
    assert inf.validation_flavours == ((flavour,) if flavour else ())
    assert inf.fold_histogram == histogram


def test_holdout_config_naming_and_bagging(tmp_path):
    inf = infer_run(tmp_path, validation_protocol="holdout", tasks=(363612,), folds=1)
    assert inf.frameworks == ("TA-Nori_c1_default_HOLDOUT",) and not inf.is_bag


@pytest.mark.parametrize("legacy", [False, True], ids=["no-record", "legacy-layout"])
def test_no_protocol_record_is_none(tmp_path, legacy):
    inf = infer_run(
        tmp_path, legacy_layout=legacy, validation_protocol="8x1" if legacy else None, tasks=(363612,), folds=2
    )
    assert inf.validation_protocol is None and inf.validation_protocol_keys == ()
    assert inf.n_without_protocol == 2 and inf.fold_histogram == ()
    assert inf.n_results == 2 and inf.is_bag


def test_mixed_protocols_have_no_single_key(tmp_path):
    make_run(tmp_path, tasks=(363612,), folds=1, validation_protocol="8x1")
    data = make_run(tmp_path, tasks=(363614,), folds=1, validation_protocol="3x1")
    inf = inference.infer(build(data))
    assert inf.validation_protocol is None and inf.validation_protocol_keys == ("3x1", "8x1")


def test_missing_cell_duplicate_and_fidelity(tmp_path):
    inf = infer_run(
        tmp_path,
        configs=2,
        tasks=(363612, 363619),
        folds=3,
        array_scale=0.1,
        defects=("missing_split", "fidelity_drift", "val_gap", "duplicate"),
    )
    assert inf.missing_cells == (("TA-Nori_r1_default_BAG_L1", "363619", "0_2"),)
    (dup,) = inf.duplicates
    assert dup[:3] == ("TA-Nori_c1_default_BAG_L1", "363612", "0_0")
    assert dup[3] == (
        "TA-Nori_c1_default_BAG_L1-rerun/363612/0_0/results.pkl",
        "TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl",
    )
    test_issue, val_issue = sorted(inf.fidelity, key=lambda f: f.kind)
    assert (test_issue.kind, test_issue.dataset, test_issue.split_idx, test_issue.framework) == (
        "test",
        "Bank_Customer_Churn",
        1,
        "TA-Nori_r1_default_BAG_L1",
    )
    assert test_issue.pct == pytest.approx(100 * 17 / 333)
    assert (val_issue.kind, val_issue.split_idx) == ("val", 0) and val_issue.pct == pytest.approx(100 / 667)
    assert any("holds framework" in message for _, message in field_problems(tmp_path / "data"))


def test_unreadable_files_count_as_missing_and_are_listed(tmp_path):
    inf = infer_run(tmp_path, tasks=(363612, 363614), folds=1, defects=("truncated",))
    assert inf.missing_cells == (("TA-Nori_c1_default_BAG_L1", "363614", "0_0"),)
    assert [p for p, _ in inf.errors] == ["TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl"]


def test_bad_fields_are_problems(tmp_path):
    inf = infer_run(tmp_path, tasks=(363612,), folds=2, defects=("bad_fields",))
    messages = {m for _, m in field_problems(tmp_path / "data")}
    assert {"task_metadata.fold is not an integer (got '1')", "metric_error is NaN"} <= messages
    assert inf.missing_cells == () and inf.n_results == 2


def test_synth_command(tmp_path):
    out = tmp_path / "run"
    result = run_cli(
        [
            "tabarena",
            "synth",
            str(out),
            "--tasks",
            "363612,363614",
            "--folds",
            "2",
            "--configs",
            "2",
            "--validation-protocol",
            "8x1",
            "--array-scale",
            "0.05",
            "--defect",
            "missing_split",
        ]
    )
    assert result.exit_code == 0, result.stderr
    assert f"wrote 7 results.pkl under {out / 'data'}" in result.stdout
    inf = inference.infer(build(out / "data"))
    assert inf.can_hpo and inf.validation_protocol == "8x1" and len(inf.missing_cells) == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--defect", "melted"], "Invalid value for '--defect'"),
        (["--tasks", "abc"], "task ids are integers"),
        (["--tasks", "1"], "unknown task id(s) [1]"),
        (["--validation-protocol", "9y9"], "validation_protocol must be None"),
    ],
)
def test_synth_command_rejects_bad_input(tmp_path, args, message):
    result = run_cli(["tabarena", "synth", str(tmp_path / "x"), *args])
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.stderr


def test_generator_rejects_unknown_defect(tmp_path):
    with pytest.raises(ValueError, match="unknown defect"):
        synth.generate_run(tmp_path, defects=("nope",))


def test_tasks_may_have_different_repeats_but_a_repeat_needs_every_fold(tmp_path):
    make_run(tmp_path, configs=2, tasks=(363612,), repeats=2, folds=3)
    data = make_run(tmp_path, configs=2, tasks=(363614,), repeats=1, folds=3)
    complete = inference.infer(build(data))
    assert complete.missing_cells == (), "a task run with fewer repeats (a large dataset) is not incomplete"
    (data / "TA-Nori_c1_default_BAG_L1" / "363612" / "1_2" / "results.pkl").unlink()
    (data / "TA-Nori_r1_default_BAG_L1" / "363614").rename(tmp_path / "gone")
    holes = inference.infer(build(data, use_cache=False)).missing_cells
    assert holes == (
        ("TA-Nori_c1_default_BAG_L1", "363612", "1_2"),
        ("TA-Nori_r1_default_BAG_L1", "363614", "0_0"),
        ("TA-Nori_r1_default_BAG_L1", "363614", "0_1"),
        ("TA-Nori_r1_default_BAG_L1", "363614", "0_2"),
    )


def _edit(path, top=None, **task_metadata):

    result = reader.load_result(path)
    result["task_metadata"].update(task_metadata)
    result.update(top or {})
    write_payload(path, result)


def test_a_split_whose_configs_name_or_file_it_differently_is_a_problem(tmp_path):
    data = make_run(tmp_path, configs=2, tasks=(363612,), folds=2, array_scale=0.05)
    assert field_problems(data) == ()  # must pass before the edits
    _edit(data / "TA-Nori_r1_default_BAG_L1" / "363612" / "0_0" / "results.pkl", name="renamed")
    _edit(data / "TA-Nori_r1_default_BAG_L1" / "363612" / "0_1" / "results.pkl", split_idx=3)
    problems = field_problems(data, use_cache=False)
    assert (
        "TA-Nori_r1_default_BAG_L1/363612/0_0/results.pkl",
        "task_metadata.name is 'renamed', but TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl of the same task "
        "says 'airfoil_self_noise'; every result of a task must have the same task_metadata.name (TabArena looks "
        "the task up by that name and files its predictions under it): correct task_metadata.name",
    ) in problems
    assert any(
        path == "TA-Nori_r1_default_BAG_L1/363612/0_1/results.pkl"
        and problem.startswith(
            "task_metadata.split_idx is '3', but TA-Nori_c1_default_BAG_L1/363612/0_1/results.pkl of the same task "
            "split says '1';"
        )
        for path, problem in problems
    ), problems


def test_two_splits_of_a_task_under_one_split_idx_is_a_problem(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=3, repeats=2, array_scale=0.05)
    assert field_problems(data) == ()  # must pass before the edit
    # 2 is what a 2-fold run gives repeat 1, fold 0 (this run has 3 folds: 3), and what repeat 0, fold 2 has
    _edit(data / "TA-Nori_c1_default_BAG_L1" / "363612" / "1_0" / "results.pkl", split_idx=2)
    ((path, problem),) = field_problems(data, use_cache=False)
    assert path == "TA-Nori_c1_default_BAG_L1/363612/1_0/results.pkl"
    assert problem == (
        "task_metadata.split_idx is 2 for repeat 1, fold 0, but "
        "TA-Nori_c1_default_BAG_L1/363612/0_2/results.pkl of the same task is repeat 0, fold 2 under "
        "the same split_idx; its predictions would overwrite the other split's: correct "
        "task_metadata.split_idx"
    )


def test_configs_of_a_method_named_with_another_prefix_are_a_problem(tmp_path):

    data = make_run(tmp_path, configs=2, tasks=(363612,), folds=1, array_scale=0.05)
    path = data / "TA-Nori_r1_default_BAG_L1" / "363612" / "0_0" / "results.pkl"
    result = reader.load_result(path)
    result["method_metadata"]["name_prefix"] = "TA-Nori_r1"  # starts the framework, unlike the method's other
    write_payload(path, result)
    ((where, problem),) = field_problems(data)
    assert where == "TA-Nori_r1_default_BAG_L1/363612/0_0/results.pkl"
    assert problem == (
        "method_metadata.name_prefix is 'TA-Nori_r1', but TA-Nori_c1_default_BAG_L1/363612/0_0/"
        "results.pkl of the same method says 'TA-Nori'; processing renames every config of a method "
        "by what follows one name prefix: record the prefix the method's configs were named with"
    )


@pytest.mark.parametrize(
    "field, value, first", [("metric", "roc_auc", "rmse"), ("problem_type", "binary", "regression")]
)
def test_a_split_whose_configs_are_scored_differently_is_a_problem(tmp_path, field, value, first):
    data = make_run(tmp_path, configs=2, tasks=(363612,), folds=1, array_scale=0.05)
    _edit(data / "TA-Nori_r1_default_BAG_L1" / "363612" / "0_0" / "results.pkl", {field: value})
    problems = field_problems(data)  # a binary problem_type also makes the float labels wrong
    assert any(
        path == "TA-Nori_r1_default_BAG_L1/363612/0_0/results.pkl"
        and problem.startswith(
            f"{field} is '{value}', but TA-Nori_c1_default_BAG_L1/363612/0_0/results.pkl of the same task says "
            f"'{first}'; every result of a task must have the same {field}"
        )
        for path, problem in problems
    ), problems


@pytest.mark.parametrize(
    "edit, problem",
    [
        (
            dict(top={"metric": "log_loss"}),
            "metric is 'log_loss', but Nori_c1_default/363619/0_0/results.pkl of the "
            "same task says 'roc_auc'; every result of a task must have the same metric",
        ),
        (
            dict(name="another_name"),
            "task_metadata.name is 'another_name', but Nori_c1_default/363619/0_0/results.pkl of "
            "the same task says 'Bank_Customer_Churn'",
        ),
    ],
)
def test_the_splits_of_a_task_must_agree_on_its_name_and_metric(tmp_path, edit, problem):
    data = make_run(tmp_path, kind="baseline", method="Nori", name_prefix="Nori", tasks=(363619,), folds=2)
    assert field_problems(data) == ()  # must pass before the edit
    _edit(data / "Nori_c1_default" / "363619" / "0_1" / "results.pkl", **edit)
    ((path, found),) = field_problems(data, use_cache=False)
    assert path == "Nori_c1_default/363619/0_1/results.pkl" and found.startswith(problem), found


def _retask(data, task, **task_metadata):
    """Every result below the ``task`` directories edited to carry ``task_metadata`` (another name or tid; a new
    tid renames the directories, as a run of that task has them)."""
    for path in sorted(data.rglob(f"{task}/*/results.pkl")):
        _edit(path, **task_metadata)
    for where in sorted(data.glob(f"*/{task}")) if "tid" in task_metadata else ():
        where.rename(where.with_name(str(task_metadata["tid"])))


@pytest.mark.parametrize("kind", ["config", "baseline"])
def test_a_task_of_the_suite_under_another_name_is_a_problem(tmp_path, kind):
    data = make_run(tmp_path, kind=kind, method="Nori", name_prefix="Nori", tasks=(363612, 363614), folds=2)
    assert field_problems(data) == ()  # must pass before the edit
    _retask(data, 363612, name="airfoil")  # TabArena 0.1.0 stops with a KeyError on this run
    problems = field_problems(data, use_cache=False)
    assert [p for p, _ in problems] == sorted(str(p.relative_to(data)) for p in data.rglob("363612/*/results.pkl"))
    assert {m for _, m in problems} == {
        "task_metadata.name is 'airfoil', but TabArena-v0.1 names task 363612 'airfoil_self_noise'; TabArena looks "
        "the task's results up by that name and stops on any other: record task_metadata.name 'airfoil_self_noise' "
        "(or the tid of the task these results are for)"
    }


def test_a_name_of_the_suite_under_another_task_id_is_a_problem(tmp_path):
    data = make_run(tmp_path, configs=1, tasks=(363612, 363614), folds=1)
    _retask(data, 363614, tid=990001)  # still named 'anneal', TabArena-v0.1's task 363614
    ((path, problem),) = field_problems(data)
    assert path == "TA-Nori_c1_default_BAG_L1/990001/0_0/results.pkl"
    assert problem.startswith("task_metadata.tid is 990001, but 'anneal' is TabArena-v0.1's task 363614; ")
    assert problem.endswith("record task_metadata.tid 363614 (or the name of the dataset these results are for)")


def test_two_tasks_of_a_method_under_one_name_are_a_problem(tmp_path):
    data = make_run(tmp_path, configs=2, tasks=(363612, 363614), folds=1)
    _retask(data, 363612, tid=990001, name="my_data")
    _retask(data, 363614, tid=990002, name="my_data")  # native's simulation stopped on this run (exit 4)
    problems = field_problems(data)
    assert [p for p, _ in problems] == [
        "TA-Nori_c1_default_BAG_L1/990002/0_0/results.pkl",
        "TA-Nori_r1_default_BAG_L1/990002/0_0/results.pkl",
    ]
    assert problems[0][1] == (
        "task_metadata.name is 'my_data' for task 990002, but TA-Nori_c1_default_BAG_L1/990001/0_0/results.pkl of "
        "the same method names task 990001 so; a task's results and predictions are filed under its name, so the "
        "two tasks would be mixed: give each task its own task_metadata.name"
    )


@pytest.mark.parametrize(
    "edit, problem",
    [
        pytest.param(
            dict(problem_type="binary", metric="roc_auc"),
            "problem_type is 'binary', but TabArena-v0.1's task "
            "363612 (airfoil_self_noise) is 'regression', scored with 'rmse'; every method on the task is "
            "compared in those",
            id="problem type",
        ),
        pytest.param(
            dict(metric="mae"),
            "metric is 'mae', but TabArena-v0.1 scores task 363612 (airfoil_self_noise) "
            "with 'rmse'; every method's metric_error on the task is compared with the others'",
            id="metric",
        ),
    ],
)
def test_a_task_of_the_suite_scored_otherwise_is_a_problem(tmp_path, edit, problem):
    # a baseline carries no artifacts that would tell; TabArena 0.1.0 published both runs beside the suite's scores
    data = make_run(tmp_path, kind="baseline", method="Nori", name_prefix="Nori", tasks=(363612, 363614), folds=2)
    for path in data.rglob("363612/*/results.pkl"):
        _edit(path, top=edit)
    problems = field_problems(data)
    assert [p for p, _ in problems] == sorted(str(p.relative_to(data)) for p in data.rglob("363612/*/results.pkl"))
    assert all(m.startswith(problem) for _, m in problems), problems


def test_tasks_outside_the_suite_with_names_of_their_own_pass(tmp_path):
    data = make_run(tmp_path, configs=2, tasks=(363612, 363614), folds=1)
    _retask(data, 363612, tid=990001, name="my_data")
    _retask(data, 363614, tid=990002, name="my_other_data")
    assert field_problems(data) == ()


def _edit_artifacts(path, change):

    result = reader.load_result(path)
    change(result["simulation_artifacts"])
    write_payload(path, result)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda sa: sa.update(y_val=sa["y_val"] + 1.0), id="other label values"),
        pytest.param(lambda sa: sa.update(y_test_idx=sa["y_test_idx"][::-1].copy()), id="row ids in another order"),
        pytest.param(lambda sa: sa.update(label="another_target"), id="another label name"),
    ],
)
def test_a_split_whose_configs_hold_other_labels_is_a_problem(tmp_path, change):
    data = make_run(tmp_path, configs=2, tasks=(363612,), folds=1, array_scale=0.05)
    assert field_problems(data) == ()  # must pass before the edit
    _edit_artifacts(data / "TA-Nori_r1_default_BAG_L1" / "363612" / "0_0" / "results.pkl", change)
    ((path, problem),) = field_problems(data, use_cache=False)
    assert path == "TA-Nori_r1_default_BAG_L1/363612/0_0/results.pkl"
    assert problem.startswith(
        "simulation_artifacts holds other labels than TA-Nori_c1_default_BAG_L1/363612/0_0/"
        "results.pkl of the same task split"
    )


def test_labels_stored_in_another_dtype_are_the_same_labels(tmp_path):
    data = make_run(tmp_path, configs=2, tasks=(363614,), folds=1, array_scale=0.05)
    _edit_artifacts(
        data / "TA-Nori_r1_default_BAG_L1" / "363614" / "0_0" / "results.pkl",
        lambda sa: sa.update(y_val=sa["y_val"].astype("int64"), y_val_idx=sa["y_val_idx"].astype("int32")),
    )
    assert field_problems(data) == ()
