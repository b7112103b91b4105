"""Each rule generated from the table of raw checks (TA320-TA389, group TA306) fails on its example and
passes on its near miss, both written as real results.pkl files, read by the reader, indexed and judged in
the one pass every rule shares; the failing example's message is the one the table shows (``checks rule``).
"""

from __future__ import annotations

import ast
import gzip
import pickle
import re
import shutil
import types
from pathlib import Path

import numpy as np
import pytest

from checks.model import Outcome
from checks.testing import evaluate_rules
from tabarena_checks.rules import raw_artifacts, raw_checks, raw_fields
from tests.support.tabarena_fixtures import build, make_run

C1, R1 = "TA-Nori_c1_default_BAG_L1", "TA-Nori_r1_default_BAG_L1"
#: the file most examples change: config c1 on anneal (multiclass, log_loss), split 0_0
VICTIM = f"{C1}/363614/0_0/results.pkl"


def _edit(data: Path, rel: str, change) -> None:
    """Rewrite the result at ``rel`` after ``change(result)``; a change that returns a str moves the file there."""
    path = data / rel
    result = pickle.loads(gzip.decompress(path.read_bytes()))
    moved = change(result)
    if isinstance(moved, str):
        path.unlink()
        path = data / moved
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(gzip.compress(pickle.dumps(result, protocol=4)))


def _each(data: Path, task: str, change) -> None:
    for config in (C1, R1):
        _edit(data, f"{config}/{task}/0_0/results.pkl", change)


def _sa(change):
    """A change of the victim's simulation_artifacts (what ``change`` returns is dropped: it never moves the file)."""

    def edit(result):
        change(result["simulation_artifacts"])

    return lambda data: _edit(data, VICTIM, edit)


def _at(keys, act):
    """A change of the victim: ``act(node, last key)`` on the dict that ``keys`` (but the last) lead to."""

    def change(result):
        node = result
        for key in keys[:-1]:
            node = node[key]
        act(node, keys[-1])

    return lambda data: _edit(data, VICTIM, change)


def _set(*path_value):
    """Set ``result[k1][k2]... = value`` in the victim."""
    *keys, value = path_value
    return _at(keys, lambda node, key: node.__setitem__(key, value))


def _delete(*keys):
    return _at(keys, lambda node, key: node.__delitem__(key))


def _test_pred(value):
    return _sa(lambda sa: sa["pred_proba_dict_test"].__setitem__(C1, value(sa["pred_proba_dict_test"][C1])))


def _children(value):
    return _sa(lambda sa: sa["bag_info"].__setitem__("pred_proba_test_per_child", value(sa["bag_info"])))


def _renamed_task(tid_name_of):
    """Every result of tasks 363612 and 363619 under the tid and name ``tid_name_of`` gives."""

    def change(data):
        for task in ("363612", "363619"):
            tid, name = tid_name_of[task]
            _each(data, task, lambda r, tid=tid, name=name: r["task_metadata"].update(tid=tid, name=name))

    return change


def _unchanged(data):
    return None


def _keyed(keys):
    return _sa(lambda sa: sa.update(pred_proba_dict_test={k: sa["pred_proba_dict_test"][C1] for k in keys}))


#: code -> (the change that fails it, the near miss that passes it); "oof" runs on a use_child_oof run
EXAMPLES = {
    "TA320": (_set("task_metadata", "fold", "0"), _set("task_metadata", "fold", 0)),
    "TA321": (_set("method_metadata", "model_cls", "Nori\udc80"), _set("method_metadata", "model_cls", "Nori")),
    "TA322": (_set("metric_error", float("nan")), _set("metric_error", 0.0)),
    "TA323": (_set("time_train_s", -0.5), _set("time_train_s", 0.0)),
    "TA324": (_set("task_metadata", "tid", 363619), _unchanged),
    "TA325": (lambda d: _edit(d, VICTIM, lambda r: f"{C1}/363614/fold0/results.pkl"), _unchanged),
    "TA326": (lambda d: _edit(d, VICTIM, lambda r: f"{C1}/363614/0_1/results.pkl"), _unchanged),
    "TA327": (lambda d: _edit(d, VICTIM, lambda r: f"{C1}/363614/results.pkl"), _unchanged),
    "TA328": (_set("task_metadata", "split_idx", 5), _set("task_metadata", "split_idx", 0)),
    "TA329": (_delete("task_metadata", "split_idx"), _unchanged),
    "TA330": (_delete("method_metadata", "model_type"), _unchanged),
    "TA331": (
        _delete("method_metadata", "model_hyperparameters"),
        _set("method_metadata", "model_hyperparameters", {}),
    ),
    "TA332": (
        _set("method_metadata", "model_hyperparameters", [1, 2]),
        _set("method_metadata", "model_hyperparameters", {}),
    ),
    "TA333": ("oof", "oof"),
    "TA334": (_set("metric_error_val", None), _delete("metric_error_val")),
    "TA335": (
        lambda d: _each(d, "363614", lambda r: (r.update(metric="accuracy"), r.pop("metric_error_val"))),
        lambda d: _each(d, "363614", lambda r: r.pop("metric_error_val")),
    ),
    "TA336": (_set("framework", "TA-Nori_c2_default_BAG_L1"), _unchanged),
    "TA337": (_set("method_metadata", "name_prefix", "Other"), _set("method_metadata", "name_prefix", "TA-Nori_c1")),
    "TA340": (
        lambda d: _edit(
            d, f"{R1}/363614/0_0/results.pkl", lambda r: r["method_metadata"].update(name_prefix="TA-Nori_")
        ),
        _unchanged,
    ),
    "TA341": (lambda d: _each(d, "363614", lambda r: r["task_metadata"].update(name="anneal2")), _unchanged),
    "TA342": (lambda d: _each(d, "363614", lambda r: r["task_metadata"].update(tid=1)), _unchanged),
    "TA343": (lambda d: _each(d, "363614", lambda r: r.update(problem_type="binary")), _unchanged),
    "TA344": (lambda d: _each(d, "363614", lambda r: r.update(metric="accuracy")), _unchanged),
    "TA345": (
        _renamed_task({"363612": (1, "mine"), "363619": (2, "mine")}),
        _renamed_task({"363612": (1, "mine"), "363619": (2, "yours")}),
    ),
    "TA346": ("folds", "folds"),
    "TA347": (
        lambda d: _edit(d, f"{R1}/363614/0_0/results.pkl", lambda r: r["task_metadata"].update(split_idx=3)),
        _unchanged,
    ),
    "TA348": (
        lambda d: _edit(d, f"{R1}/363614/0_0/results.pkl", lambda r: r["task_metadata"].update(name="anneal2")),
        _unchanged,
    ),
    "TA349": (lambda d: _edit(d, f"{R1}/363614/0_0/results.pkl", lambda r: r.update(metric="accuracy")), _unchanged),
    "TA350": (
        lambda d: _edit(d, f"{R1}/363614/0_0/results.pkl", lambda r: r.update(problem_type="binary")),
        _unchanged,
    ),
    "TA351": (_sa(lambda sa: sa.update(y_test=sa["y_test"][:-1], y_test_idx=sa["y_test_idx"][:-1])), _unchanged),
    "TA352": (_sa(lambda sa: sa.update(y_test_idx=sa["y_test_idx"][::-1].copy())), _unchanged),
    "TA360": (_sa(lambda sa: sa.pop("label")), _sa(lambda sa: sa.update(label=0))),
    "TA361": (_sa(lambda sa: sa.update(label=1.5)), _sa(lambda sa: sa.update(label=0))),
    "TA362": (
        _sa(lambda sa: sa.update(ordered_class_labels_transformed=[0, 1, 2])),
        _sa(lambda sa: sa.update(ordered_class_labels_transformed=None)),
    ),
    "TA363": (_test_pred(lambda p: p[:-1]), _unchanged),
    "TA364": (_sa(lambda sa: sa.update(pred_proba_dict_test=[1])), _unchanged),
    "TA365": (
        _sa(lambda sa: sa.pop("pred_proba_dict_test")),
        _sa(lambda sa: sa.update(pred_test=sa.pop("pred_proba_dict_test")[C1])),
    ),
    "TA366": (_test_pred(lambda p: "0.5"), _test_pred(lambda p: p.astype(np.float64))),
    "TA367": (_test_pred(lambda p: np.where(np.arange(p.size).reshape(p.shape) == 0, np.inf, p)), _unchanged),
    "TA368": (_test_pred(lambda p: p[:, 0].copy()), _unchanged),
    "TA369": (_test_pred(lambda p: p[:, :1].copy()), _unchanged),
    "TA370": (_sa(lambda sa: sa.pop("y_test")), _unchanged),
    "TA371": (_sa(lambda sa: sa.update(y_test=sa["y_test"].reshape(-1, 1))), _unchanged),
    "TA372": (
        _sa(lambda sa: sa.update(y_test=sa["y_test"].astype(np.float64))),
        _sa(lambda sa: sa.update(y_test=sa["y_test"].astype(np.int64))),
    ),
    "TA373": (_sa(lambda sa: sa["y_test"].__setitem__(0, 7)), _sa(lambda sa: sa["y_test"].__setitem__(0, 4))),
    "TA374": (_sa(lambda sa: sa.update(y_test_idx=sa["y_test_idx"].reshape(-1, 1))), _unchanged),
    "TA375": (_sa(lambda sa: sa.update(y_test_idx=sa["y_test_idx"][:-1])), _unchanged),
    "TA376": (_sa(lambda sa: sa.pop("y_val_idx")), _unchanged),
    "TA377": (_sa(lambda sa: sa["bag_info"].update(val_idx_per_child="x")), _unchanged),
    "TA378": (_children(lambda bag: [c[:, :4].copy() for c in bag["pred_proba_test_per_child"]]), _unchanged),
    "TA379": (_sa(lambda sa: sa["bag_info"].update(pred_val_per_child=[sa["pred_proba_dict_val"][C1]])), _unchanged),
    "TA380": (_children(lambda bag: "x"), _unchanged),
    "TA381": (
        _children(lambda bag: [bag["pred_proba_test_per_child"][0], bag["pred_proba_test_per_child"][1][:, :4].copy()]),
        _unchanged,
    ),
    "TA382": (_children(lambda bag: [c[:-1] for c in bag["pred_proba_test_per_child"]]), _unchanged),
    "TA383": (_sa(lambda sa: sa["bag_info"]["val_idx_per_child"][1].__setitem__(0, len(sa["y_val"]))), _unchanged),
    "TA384": (_sa(lambda sa: sa["bag_info"].pop("pred_proba_test_per_child")), _unchanged),
    "TA385": (_keyed(["other"]), _unchanged),
    "TA386": (_keyed(["one", "two"]), _keyed([C1, "two"])),
    "TA387": (_test_pred(lambda p: p[:, :4].copy()), _unchanged),
    "TA388": (_sa(lambda sa: sa.update(eval_metric="roc_auc")), _sa(lambda sa: sa.update(eval_metric="nll"))),
    "TA389": (_sa(lambda sa: sa.update(bag_info=[1])), _unchanged),
}


def _oof(data: Path, fail: bool) -> None:
    """A single use_child_oof child records training-row labels, looked up in y_val_idx."""

    def change(sa):
        labels = sa["y_val_idx"][:3].copy()
        if fail:
            labels[0] = sa["y_val_idx"].max() + 1000
        sa["bag_info"]["val_idx_per_child"] = [labels]

    _sa(change)(data)


def _two_folds(data: Path, fail: bool) -> None:
    """Two splits of a task: the second filed under the first's split_idx, or under its own."""
    _edit(data, f"{C1}/363614/0_1/results.pkl", lambda r: r["task_metadata"].update(split_idx=0 if fail else 1))


_SPECIAL = {"oof": (dict(use_child_oof=True, bag_children=1), _oof), "folds": (dict(folds=2), _two_folds)}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Clean runs to copy: the usual one (two configs on three tasks, one split), and the special ones."""
    root = tmp_path_factory.mktemp("runs")
    out = {"": make_run(root / "plain", folds=1, configs=2, bag_children=2)}
    for name, (kwargs, _) in _SPECIAL.items():
        out[name] = make_run(root / name, **{"folds": 1, "configs": 2, "bag_children": 2, **kwargs})
    return out


def _judged(runs, tmp_path, change) -> dict:
    special = change if isinstance(change, str) else ""
    data = tmp_path / "data"
    shutil.copytree(runs[special], data)
    if special:
        _SPECIAL[special][1](data, fail=tmp_path.name.endswith("fail"))
    else:
        change(data)
    index = build(data, use_cache=False, write_cache=False)
    return evaluate_rules(raw_checks.RULES, types.SimpleNamespace(index=index), action="process")


def test_every_check_of_the_table_has_its_examples():
    assert set(EXAMPLES) == {check.code for check in raw_checks.TABLE}


@pytest.mark.parametrize("check", raw_checks.TABLE, ids=lambda c: f"{c.code}-{c.name}")
def test_each_check_fails_on_its_example_and_passes_its_near_miss(runs, tmp_path, check):
    fail, near_miss = EXAMPLES[check.code]
    failed = _judged(runs, tmp_path / "fail", fail)[check.code]
    assert failed.outcome is Outcome.FAILED, failed
    shown = check.example_fail.removesuffix(" ...")
    assert any(shown in f.message for f in failed.findings), (shown, failed.message)
    passed = _judged(runs, tmp_path / "pass", near_miss)[check.code]
    assert passed.outcome is Outcome.PASSED, passed.message


def test_a_check_no_rule_names_still_blocks(runs, tmp_path, monkeypatch):
    # a check added to the pass without its row in the table: TA320 reports its problems (fail closed)
    monkeypatch.setitem(raw_fields.ROW_CHECKS, "brand-new-check", ("fold = 0", "'fold 0 is new'"))
    verdicts = _judged(runs, tmp_path / "fail", _unchanged)
    assert verdicts["TA320"].outcome is Outcome.FAILED
    assert {f.message for f in verdicts["TA320"].findings} == {"fold 0 is new"}
    assert len(verdicts["TA320"].findings) == 6  # every result of the run holds fold 0


def _names_in_the_pass() -> set[str]:
    """Every check name the pass can tag a problem with, read from its code."""
    names = {raw_fields.DECODED, raw_fields.VALID_TEXT}
    names |= {raw_fields.check_name(key) for key in (*raw_fields.ROW_CHECKS, *raw_fields.WORDED_CHECKS)}
    names |= {check for check, *_ in (*raw_fields._TASK_SHARES.values(), *raw_fields._SPLIT_SHARES.values())}
    for sql in (raw_fields._SPLIT_DIFFERS, raw_fields._PREFIX_DIFFERS, raw_fields._SUITE_DIFFERS):
        names |= set(re.findall(r"SELECT path, '([a-z0-9-]+)', ", sql))
    tree = ast.parse(Path(raw_artifacts.__file__).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "append":
            (problem,) = node.args
            names.add(problem.elts[0].value)
    return names


def test_the_table_names_every_check_of_the_pass_and_no_other():
    assert _names_in_the_pass() == set(raw_checks.NAMES)
