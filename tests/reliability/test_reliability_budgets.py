"""Size and time are bounded for any input, and one odd file is that file's finding.

Hostile entries in a run's directory (devices, FIFOs, link cycles and DAGs, unlistable
directories, dangling links, directories named results.pkl), results whose fields have types or
sizes no result has, and tiny pickles that expand without bound: `checks inspect` reports each
against its file and field, `checks run process` is blocked, and nothing hangs, crashes or
exhausts memory. Commands that could hang run in child processes with a deadline.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle

from tests.support import hostile_pickles
import numpy as np
import pytest
from tests.support.reliability_fixtures import measured, process_json, write_info
from tests.support.tabarena_fixtures import make_run

from tabarena_checks.testing.commands import process_args

CONFIG = "TA-Nori_c1_default_BAG_L1"


def _hostile_entries(data, tmp_path) -> dict[str, str]:
    """Plant every kind of entry a walk must not follow or read; returns relative path -> words of its reason."""

    def at(*parts):
        path = data.joinpath(CONFIG, *parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    at("363614", "0_0", "results.pkl").symlink_to("/dev/zero")
    os.mkfifo(at("363614", "0_1", "results.pkl"))
    at("363614", "0_2", "results.pkl").mkdir()
    at("363619", "0_0", "results.pkl").symlink_to(tmp_path / "gone.pkl")
    loop = at("363619", "0_1", "results.pkl")
    loop.symlink_to(loop)  # ELOOP
    at("363619", "0_2").mkdir(parents=True)
    (data / CONFIG / "363619" / "0_2" / "again").symlink_to(data / CONFIG)  # a directory link cycle
    # a DAG of links 30 levels deep: followed, the walk would visit 2^30 directories
    dag = tmp_path / "dag"
    for level in range(30):
        (dag / str(level)).mkdir(parents=True)
    for level in range(29):
        for branch in "ab":
            (dag / str(level) / branch).symlink_to(dag / str(level + 1))
    (data / "TA-Nori_c2_default_BAG_L1").symlink_to(dag / "0")
    return {
        f"{CONFIG}/363614/0_0/results.pkl": "not a regular file",
        f"{CONFIG}/363614/0_1/results.pkl": "not a regular file",
        f"{CONFIG}/363614/0_2/results.pkl": "is a directory",
        f"{CONFIG}/363619/0_0/results.pkl": "dangling",
        f"{CONFIG}/363619/0_1/results.pkl": "symbolic link",
        f"{CONFIG}/363619/0_2/again": "symbolic link to a directory, not followed",
        "TA-Nori_c2_default_BAG_L1": "symbolic link to a directory, not followed",
    }


def test_hostile_entries_are_reported_not_followed(tmp_path):
    """Fault: entries of a run that are not results: results.pkl -> /dev/zero (size 0, never ends), a FIFO named
    results.pkl (reading waits forever), a directory named results.pkl, a dangling link, a results.pkl linked to itself
    (ELOOP), a directory link cycle, and a DAG of directory links 30 levels deep (2^30 paths)

    Must: the walk follows no directory link and reads only regular files: `checks inspect` lists each entry as
    unreadable with its reason (exit 0) and `checks run process` is blocked by TA301 naming them (exit 1); measured:
    inspect exits 0 in 1.4 s with a peak RSS of 183 MiB
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    expected = _hostile_entries(data, tmp_path)
    code, out, err, peak, seconds = measured(
        ["inspect", data, "--format", "json", "--cache-dir", tmp_path / "i"], tmp_path
    )
    assert code == 0, err[-2000:]
    (method,) = json.loads(out)["methods"]
    unreadable = {u["path"]: u["reason"] for u in method["unreadable"]}
    for path, words in expected.items():
        assert words in unreadable.get(path, ""), (path, unreadable)
    assert method["counts"]["results"] == 2
    assert peak < 1024, peak
    ref = write_info(tmp_path / "info")
    code, out, err, _, _ = measured(
        process_args(data, ref, tmp_path / "cache", "--format", "json"),
        tmp_path,
    )
    assert code == 1, err[-2000:]
    ta301 = {v["code"]: v for v in json.loads(out)["verdicts"]}["TA301"]
    assert ta301["outcome"] == "failed" and all(path in ta301["message"] for path in expected)
    assert not (tmp_path / "cache" / "artifacts").exists()


def test_unlistable_directory_blocks_process(tmp_path, monkeypatch):
    """Fault: a task directory that cannot be listed (scandir refuses it: EACCES) in a run of 18 results

    Must: reported as unreadable with the directory and the reason, so process is blocked (exit 1) instead of passing
    with 12 of 18 results
    """
    data = make_run(tmp_path / "run", tasks=(363612, 363614, 363619), folds=3, configs=2, validation_protocol="8x1")
    hidden = data / CONFIG / "363614"
    real = os.scandir

    def refusing(path="."):  # root reads every directory, so the refusal is simulated for this one
        if os.fspath(path) == os.fspath(hidden):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", refusing)
    res = process_json(data, tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    ta301 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA301"]
    assert f"{CONFIG}/363614" in ta301["message"] and "cannot be listed (Permission denied)" in ta301["message"]


def _odd(data, field, value, rel="363612/0_1"):
    path = data / CONFIG / rel / "results.pkl"
    result = pickle.loads(gzip.decompress(path.read_bytes()))
    *parents, last = field.split(".")
    node = result
    for key in parents:
        node = node[key]
    node[last] = value(node[last]) if callable(value) else value
    path.write_bytes(gzip.compress(pickle.dumps(result, protocol=4)))
    return path.relative_to(data).as_posix()


ODD = {
    "0-d-val-prediction": (
        "simulation_artifacts.pred_proba_dict_val",
        lambda p: {k: np.array(0.5) for k in p},
        "simulation_artifacts",
    ),
    "y_val_idx-an-int": ("simulation_artifacts.y_val_idx", 5, "simulation_artifacts"),
    "string-dtype-predictions": (
        "simulation_artifacts.bag_info.pred_proba_test_per_child",
        lambda c: [np.array(["x"] * len(c[0]))] * len(c),
        "pred_proba_test_per_child must be a non-empty list of 1-D or 2-D numeric arrays",
    ),
    "self-containing-list": (
        "method_metadata.model_hyperparameters.max_depth",
        hostile_pickles.self_containing(),
        "contains itself",
    ),
    "metric_error-10**400": ("metric_error", 10**400, "metric_error is too large for a float"),
    "num_cpus-2**70": ("method_metadata.num_cpus", 2**70, "method_metadata.num_cpus is out of range"),
    "tid--2**64": ("task_metadata.tid", -(2**64), "task_metadata.tid is out of range"),
    "lone-surrogate-dataset": ("task_metadata.name", "airfoil\udc80", "task_metadata.name is not valid text"),
    "billion-laughs-in-hyperparameters": (
        "method_metadata.model_hyperparameters.max_depth",
        hostile_pickles.shared_lists(40, 10),
        "billion laughs",
    ),
    "billion-laughs-in-fold": ("task_metadata.fold", hostile_pickles.shared_lists(40, 10), "billion laughs"),
}


@pytest.mark.parametrize("kind", list(ODD))
def test_one_odd_field_is_that_files_finding(tmp_path, kind):
    """Fault: one field of one result with a type or size no result has: a 0-d validation prediction, y_val_idx = 5,
    string-dtype predictions, a self-containing list, metric_error = 10**400, num_cpus = 2**70, tid = -2**64, a lone
    surrogate in the dataset name, a 5 KB 'billion laughs' (lists 40 deep, 10^40 when expanded) in the hyperparameters
    or in task_metadata.fold

    Must: `checks run process` is blocked (exit 1, never 3) by one finding naming the file and the field; no
    traceback, the other rules still run; measured: process exits 1 in 1.3-1.7 s with a peak RSS of 177-187 MiB (the
    billion laughs used to take 3 min and 5.7 GB, or hang)
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    field, value, words = ODD[kind]
    rel = _odd(data, field, value)
    ref = write_info(tmp_path / "info")
    code, out, err, peak, _ = measured(
        process_args(data, ref, tmp_path / "cache", "--format", "json"),
        tmp_path,
        timeout=60,
    )
    assert code == 1, (code, err[-3000:])
    assert "Traceback" not in out + err
    verdicts = json.loads(out)["verdicts"]
    failed = [v for v in verdicts if v["outcome"] == "failed" and rel in v["message"]]
    assert any(words in v["message"] for v in failed), [v["message"] for v in failed]
    assert not [v for v in verdicts if v["outcome"] == "crashed"]
    assert peak < 1024, peak


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_info_py_that_is_not_a_file_is_refused(tmp_path, kind):
    """Fault: the --method-metadata info.py is a link to /dev/zero (3.8 GB read before) or a FIFO nobody writes (the
    read waited forever)

    Must: process is refused before any rule runs (exit 2, an input that cannot be read) naming the file as not a
    regular file within seconds, nothing read from it
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    info = tmp_path / "info.py"
    if kind == "dev-zero":
        info.symlink_to("/dev/zero")
    else:
        os.mkfifo(info)
    code, out, err, peak, seconds = measured(
        process_args(data, f"{info}:nori", tmp_path / "cache", "--format", "json"),
        tmp_path,
        timeout=60,
    )
    assert code == 2 and out == "", (code, out, err[-2000:])
    assert "--method-metadata" in err and "not a regular file" in err, err
    assert "Traceback" not in err + out and peak < 512, peak
