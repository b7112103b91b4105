"""The safe results.pkl reader: nothing in a file runs, damaged files fail with one clear line, rows carry the facts."""

from __future__ import annotations

import builtins
import collections
import gzip
import json
import math
import os
import pickle
import subprocess
import sys
import tracemalloc
import zlib

import numpy as np
import pytest
from tests.support.tabarena_fixtures import Call, make_run, write_payload

from checks import InputError
from tabarena_checks.rules.raw_fields import row_problems
from tabarena_checks.raw import artifacts, reader
from tabarena_checks.synth import generate as synth


def _marker_payloads(marker):
    """Payloads that would create ``marker`` if they were ever run."""
    return {
        "os.system": Call(os.system, f"touch '{marker}'"),
        "subprocess": Call(subprocess.check_call, ["touch", str(marker)]),
        "builtins.eval": Call(builtins.eval, f"open({str(marker)!r}, 'w')"),
        "builtins.exec": Call(builtins.exec, f"open({str(marker)!r}, 'w')"),
        "numpy outside the allow-list": Call(np.savetxt, str(marker), np.arange(3)),
        "nested in the result": {
            "framework": "x",
            "simulation_artifacts": {"bag_info": [Call(os.system, f"touch '{marker}'")]},
        },
    }


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "plain"])
@pytest.mark.parametrize("name", list(_marker_payloads("m")))
def test_code_execution_payloads_are_refused_and_never_run(tmp_path, name, compress):
    marker = tmp_path / "RAN"
    path = write_payload(tmp_path / "results.pkl", _marker_payloads(marker)[name], compress=compress)
    with pytest.raises(reader.UnsafePickleError) as info:
        reader.load_result(path)
    assert not marker.exists()
    assert str(path) in str(info.value) and "refused to load '" in str(info.value)
    assert info.value.global_name.split(".")[0] in {"posix", "subprocess", "builtins", "numpy"}
    assert isinstance(info.value, InputError)


def test_refused_module_is_never_imported(tmp_path):
    path = tmp_path / "results.pkl"
    path.write_bytes(b"cevil_module_for_a1_test\nrun\n(tR.")  # protocol 0: evil_module_for_a1_test.run()
    with pytest.raises(reader.UnsafePickleError, match="evil_module_for_a1_test.run"):
        reader.load_result(path)
    assert "evil_module_for_a1_test" not in sys.modules


def test_generated_unsafe_defect_is_refused(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1, defects=("unsafe_pickle",))
    with pytest.raises(reader.UnsafePickleError, match="posix.system"):
        reader.load_result(next(data.rglob("results.pkl")))
    assert not (data / synth.UNSAFE_MARKER).exists()


def test_codecs_encode_only_rebuilds_latin1(tmp_path):
    good = write_payload(tmp_path / "a.pkl", {"b": b"\x00\xffraw"}, compress=False, protocol=2)
    assert reader.load_result(good) == {"b": b"\x00\xffraw"}
    bad = tmp_path / "b.pkl"
    bad.write_bytes(b"c_codecs\nencode\n(Vabc\nVzlib_codec\ntR.")
    with pytest.raises(reader.RawFileError, match="latin1"):
        reader.load_result(bad)


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_allowed_content_round_trips(tmp_path, protocol):
    value = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "ints": np.array([3, 1], dtype=np.int8),
        "labels": np.array(["a", None], dtype=object),
        "scalar": np.float64(0.25),
        "int": np.int64(7),
        "flag": np.bool_(True),
        "ordered": collections.OrderedDict(a=1),
        "default": collections.defaultdict(list, {"k": [1]}),
        "set": {1, 2},
        "frozen": frozenset({3}),
        "complex": 1 + 2j,
        "bytes": bytearray(b"xy"),
    }
    loaded = reader.load_result(write_payload(tmp_path / "r.pkl", value, protocol=protocol))
    assert loaded.keys() == value.keys()
    for key, expected in value.items():
        if isinstance(expected, np.ndarray):
            assert loaded[key].dtype == expected.dtype and np.array_equal(loaded[key], expected)
        else:
            assert loaded[key] == expected and type(loaded[key]) is type(expected)


def test_zero_byte_file(tmp_path):
    path = tmp_path / "results.pkl"
    path.write_bytes(b"")
    with pytest.raises(reader.RawFileError, match=r"empty \(0 bytes\)") as info:
        reader.load_result(path)
    assert info.value.path == str(path) and "\n" not in str(info.value)


def test_truncated_gzip(tmp_path):
    path = write_payload(tmp_path / "results.pkl", {"x": np.random.default_rng(0).random(5000)})
    path.write_bytes(path.read_bytes()[:-4000])
    with pytest.raises(reader.RawFileError, match="truncated gzip"):
        reader.load_result(path)


def test_truncated_plain_pickle(tmp_path):
    path = write_payload(tmp_path / "results.pkl", {"x": list(range(1000))}, compress=False)
    path.write_bytes(path.read_bytes()[:50])
    with pytest.raises(reader.RawFileError, match="not a readable pickle"):
        reader.load_result(path)


def test_corrupt_gzip_and_bad_crc(tmp_path):
    path = write_payload(tmp_path / "results.pkl", {"x": 1})
    blob = bytearray(path.read_bytes())
    blob[-8] ^= 0xFF  # the CRC32 in the trailer
    path.write_bytes(bytes(blob))
    with pytest.raises(reader.RawFileError, match="corrupt gzip"):
        reader.load_result(path)


def test_not_a_dict(tmp_path):
    with pytest.raises(reader.RawFileError, match="holds a list"):
        reader.load_result(write_payload(tmp_path / "r.pkl", [1, 2]))


def test_concatenated_gzip_members_and_trailing_garbage(tmp_path):
    blob = pickle.dumps({"k": 1})
    path = tmp_path / "r.pkl"
    path.write_bytes(gzip.compress(blob[:5]) + gzip.compress(blob[5:]) + b"\0\0")
    assert reader.load_result(path) == {"k": 1}
    path.write_bytes(gzip.compress(blob) + b"junk")
    with pytest.raises(reader.RawFileError, match="unexpected bytes after the gzip data"):
        reader.load_result(path)


def _bomb(total: int) -> bytes:
    """A small gzip stream that inflates to ``total`` zero bytes."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    parts = [comp.compress(block) for _ in range(total >> 20)]
    return b"".join(parts) + comp.flush()


@pytest.mark.parametrize(
    "blob",
    [
        pytest.param(lambda: _bomb(256 << 20), id="256-MiB-of-zeros"),  # about 250 KiB on disk
        # the first output buffer is sized from the trailer's ISIZE: one that understates the size gains nothing
        pytest.param(lambda: _bomb(64 << 20)[:-4] + (10).to_bytes(4, "little"), id="trailer-says-10-bytes"),
    ],
)
def test_gzip_bomb_is_refused_with_bounded_memory(tmp_path, blob):
    path = tmp_path / "results.pkl"
    path.write_bytes(blob())
    tracemalloc.start()
    try:
        with pytest.raises(reader.RawFileError, match="more than 1048576 bytes"):
            reader.load_result(path, max_bytes=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak} bytes while refusing a bomb with a 1 MiB cap"


def test_a_member_larger_than_the_last_trailer_says_is_read_whole(tmp_path):
    # the reader sizes its first output buffer from the last member's trailer; an earlier, larger member
    # must still be read to its end
    blob = pickle.dumps({"x": list(range(5000))})
    path = tmp_path / "r.pkl"
    path.write_bytes(gzip.compress(blob[:-1]) + gzip.compress(blob[-1:]))
    assert reader.load_result(path) == {"x": list(range(5000))}


def test_file_larger_than_the_cap_is_not_read(tmp_path):
    path = tmp_path / "results.pkl"
    path.write_bytes(b"\x80" * 2048)
    with pytest.raises(reader.RawFileError, match="over the 1024-byte limit"):
        reader.load_result(path, max_bytes=1024)


# --- rows ------------------------------------------------------------------------------------------


def _rows(data):
    return {p.relative_to(data).as_posix(): reader.decode_row(p, root=data) for p in sorted(data.rglob("results.pkl"))}


def test_row_of_a_clean_bagged_config(tmp_path):
    data = make_run(tmp_path, tasks=(363614,), folds=1, validation_protocol="8x1", gpus=1)
    ((path, row),) = _rows(data).items()
    assert path == "TA-Nori_c1_default_BAG_L1/363614/0_0/results.pkl"
    assert row["path"] == path and row["size"] == (data / path).stat().st_size and row["mtime_ns"] > 0
    assert (row["config_dir"], row["task_dir"], row["split_dir"]) == ("TA-Nori_c1_default_BAG_L1", "363614", "0_0")
    assert (row["tid"], row["dataset"], row["repeat"], row["fold"], row["split_idx"]) == (363614, "anneal", 0, 0, 0)
    assert (row["problem_type"], row["metric"]) == ("multiclass", "log_loss")
    assert row["framework"] == "TA-Nori_c1_default_BAG_L1" and row["method_prefix"] == "TA-Nori"
    assert (row["model_type"], row["ag_key"], row["name_prefix"], row["name_suffix"]) == (
        "TA-NORI",
        "TA-NORI",
        "TA-Nori",
        "_c1_default_BAG_L1",
    )
    assert row["num_gpus"] == 1.0 and row["num_cpus"] == 8 and row["disk_usage"] > 0
    assert row["has_sim_artifacts"] and row["has_method_metadata"] and not row["is_legacy_layout"]
    assert row["num_bag_children"] == 8 and row["child_oof"] is False
    assert (row["vp_key"], row["vp_flavour"], row["vp_num_bag_folds"], row["vp_num_bag_sets"]) == (
        "8x1",
        "bagged",
        8,
        1,
    )
    assert row["test_not_close_pct"] == 0.0 and row["val_not_close"] is False and row["val_not_close_pct"] == 0.0
    assert '"ag_args"' in row["hyperparameters"] and '"learning_rate"' in row["method_hyperparameters"]
    assert row_problems(row) == []
    assert all(not isinstance(v, np.ndarray) for v in row.values())


def test_regression_metric_is_normalized(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    (row,) = _rows(data).values()
    assert row["metric"] == "rmse" and row["vp_key"] is None and row["has_vp_record"] is False


def test_fidelity_drift_and_val_gap(tmp_path):
    data = make_run(tmp_path, tasks=(363619,), folds=2, defects=("fidelity_drift", "val_gap"), array_scale=0.1)
    rows = _rows(data)
    drift, gap = (
        rows["TA-Nori_c1_default_BAG_L1/363619/0_1/results.pkl"],
        rows["TA-Nori_c1_default_BAG_L1/363619/0_0/results.pkl"],
    )
    assert drift["test_not_close_pct"] == pytest.approx(100 * len(range(0, 333, 20)) / 333)
    assert drift["val_not_close"] is False
    assert gap["val_not_close"] is True and gap["val_not_close_pct"] == pytest.approx(100 / 667)
    assert gap["test_not_close_pct"] == 0.0


def test_use_child_oof_labels_are_mapped_to_positions(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1, use_child_oof=True, validation_protocol="8x1")
    (row,) = _rows(data).values()
    assert row["num_bag_children"] == 1 and row["use_child_oof"] is True and row["child_oof"] is True
    assert row["vp_child_oof"] is True and row["vp_num_bag_folds"] == 8
    assert row["val_not_close"] is False and row_problems(row) == []


def test_legacy_layout_loads(tmp_path):
    data = make_run(tmp_path, tasks=(363614,), folds=2, legacy_layout=True, validation_protocol="8x1")
    row = _rows(data)["TA-Nori_c1_default_BAG_L1/363614/0_1/results.pkl"]
    assert row["is_legacy_layout"] and not row["has_method_metadata"] and not row["has_vp_record"]
    assert (row["tid"], row["dataset"], row["fold"], row["repeat"], row["split_idx"]) == (363614, "anneal", 1, 0, 1)
    assert row["has_sim_artifacts"] and row["num_bag_children"] == 8 and row["test_not_close_pct"] == 0.0
    assert row["ag_key"] is None and row_problems(row) == []


def test_wrong_types_are_recorded_not_crashed_on(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    path = next(data.rglob("results.pkl"))
    result = reader.load_result(path)
    result["task_metadata"]["fold"] = "1"
    result["metric_error"] = float("nan")
    result["time_train_s"] = "slow"
    write_payload(path, result)
    row = reader.decode_row(path, root=data)
    assert "task_metadata.fold is not an integer (got '1')" in row_problems(row)
    assert "metric_error is NaN" in row_problems(row) and math.isnan(row["metric_error"])
    assert "time_train_s is not a number (got 'slow')" in row_problems(row)
    assert row["fold"] is None and row["tid"] == 363612

    del result["task_metadata"]
    write_payload(path, result)
    row = reader.decode_row(path, root=data)
    assert "task_metadata missing" in row_problems(row) and row["tid"] is None and row["framework"]


def _sa(result):
    return result["simulation_artifacts"]


def _bag(result):
    return _sa(result)["bag_info"]


#: (task, edit of a clean bagged result, a problem the row must then carry): each a defect that stopped
#: ``checks run process`` with a traceback (exit 3) before the reader checked what alignment reads
ARTIFACT_DEFECTS = {
    "y_test missing": (363614, lambda r: _sa(r).pop("y_test"), "simulation_artifacts.y_test is missing"),
    "y_val not an array": (
        363612,
        lambda r: _sa(r).update(y_val=b"bytes"),
        "simulation_artifacts.y_val must be a 1-D array of numbers (got a bytes)",
    ),
    "float labels in a classification": (
        363619,
        lambda r: _sa(r).update(y_val=_sa(r)["y_val"] + 0.5),
        "simulation_artifacts.y_val must hold class numbers (integers)",
    ),
    "a class beyond the predictions": (
        363614,
        lambda r: _sa(r)["y_test"].__setitem__(0, 9),
        "simulation_artifacts.y_test holds class 9 but the predictions have 5 classes",
    ),
    "no test prediction": (
        363612,
        lambda r: _sa(r).pop("pred_proba_dict_test"),
        "simulation_artifacts has no test prediction (pred_proba_dict_test or pred_test)",
    ),
    "a prediction that is a number": (
        363612,
        lambda r: _sa(r)["pred_proba_dict_val"].update({r["framework"]: 1}),
        "simulation_artifacts.pred_proba_dict_val['TA-Nori_c1_default_BAG_L1'] must be a 1-D or 2-D numeric array "
        "(got a int)",
    ),
    "prediction and labels disagree": (
        363612,
        lambda r: _sa(r).update(y_test=_sa(r)["y_test"][:-1]),
        "the test prediction has 25 rows but y_test has 24",
    ),
    "row ids of another length": (
        363612,
        lambda r: _sa(r).update(y_test_idx=_sa(r)["y_test_idx"][:3]),
        "simulation_artifacts.y_test_idx has 3 row ids but its labels have 25 rows",
    ),
    "bag without row ids": (
        363612,
        lambda r: _sa(r).pop("y_val_idx"),
        "simulation_artifacts has bag_info but no usable y_val_idx",
    ),
    "no val_idx_per_child": (
        363612,
        lambda r: _bag(r).pop("val_idx_per_child"),
        "simulation_artifacts.bag_info.val_idx_per_child must be a non-empty list of 1-D integer arrays (got nothing)",
    ),
    "float positions": (
        363612,
        lambda r: _bag(r)["val_idx_per_child"].__setitem__(2, np.zeros((0, 3))),
        "val_idx_per_child must be a non-empty list of 1-D integer arrays (got a list of 8 "
        "(1-D int64 array, 2-D float64 array))",
    ),
    "a position past the rows": (
        363612,
        lambda r: _bag(r)["val_idx_per_child"][1].__setitem__(0, 10_000),
        "bag_info.val_idx_per_child[1] holds positions outside the 50 validation rows",
    ),
    "a child predicting fewer test rows": (
        363612,
        lambda r: _bag(r)["pred_proba_test_per_child"].__setitem__(3, np.zeros(4, dtype=np.float32)),
        "bag_info.pred_proba_test_per_child: every child must predict all 25 test rows",
    ),
    "children of another width": (
        363614,
        lambda r: _bag(r)["pred_proba_test_per_child"].__setitem__(0, np.zeros(16, dtype=np.float32)),
        "pred_proba_test_per_child: the children's predictions differ in columns",
    ),
    "bag_info not a dict": (
        363612,
        lambda r: _sa(r).update(bag_info=1.5),
        "simulation_artifacts.bag_info is not a dict (got float)",
    ),
    "no label name": (
        363612,
        lambda r: _sa(r).pop("label"),
        "simulation_artifacts.label is missing: it names the label column of the split's label files",
    ),
    "a label name that is no name": (
        363614,
        lambda r: _sa(r).update(label=float("nan")),
        "simulation_artifacts.label must name the label column, a string or an integer (got a float)",
    ),
    "fewer classes than prediction columns": (
        363614,
        lambda r: _sa(r).update(ordered_class_labels_transformed=[0, 1, 2]),
        "simulation_artifacts.ordered_class_labels_transformed must list 5 classes, one per column of the "
        "predictions (two for a 1-D prediction), or be None (got a list of 3 (int))",
    ),
    "a class order that is a number": (
        363612,
        lambda r: _sa(r).update(ordered_class_labels_transformed=7),
        "ordered_class_labels_transformed must list 2 classes",
    ),
    "an infinite validation prediction": (
        363619,
        lambda r: _sa(r)["pred_proba_dict_val"][r["framework"]].__setitem__(slice(0, 2), np.inf),
        "simulation_artifacts.pred_proba_dict_val['TA-Nori_c1_default_BAG_L1'] holds 2 infinite values",
    ),
    "a stored test prediction of another shape than its children": (
        363612,
        lambda r: _sa(r)["pred_proba_dict_test"].update(
            {r["framework"]: _sa(r)["pred_proba_dict_test"][r["framework"]].reshape(-1, 1)}
        ),
        "each child's test prediction has shape (25,), but the stored test prediction has shape (25, 1)",
    ),
    "fewer validation row ids than validation rows": (
        363612,
        lambda r: _sa(r).update(y_val_idx=_sa(r)["y_val_idx"][:-2]),
        "simulation_artifacts.y_val_idx has 48 row ids but its labels have 50 rows",
    ),
    "a child predicting infinity": (
        363612,
        lambda r: _bag(r)["pred_proba_test_per_child"][2].__setitem__(0, -np.inf),
        "simulation_artifacts.bag_info.pred_proba_test_per_child[2] holds 1 infinite value: a model predicts",
    ),
}


def _problems_after(edit, path, data) -> list[str]:
    """The problems of the file at ``path`` once ``edit`` has changed its result."""
    result = reader.load_result(path)
    edit(result)
    write_payload(path, result)
    return row_problems(reader.decode_row(path, root=data))


@pytest.mark.parametrize("name", sorted(ARTIFACT_DEFECTS))
def test_what_alignment_reads_is_checked_when_the_file_is_indexed(tmp_path, name):
    task, edit, problem = ARTIFACT_DEFECTS[name]
    data = make_run(tmp_path, tasks=(task,), folds=1, array_scale=0.05)
    path = next(data.rglob("results.pkl"))
    assert row_problems(reader.decode_row(path, root=data)) == []  # must pass before the edit
    problems = _problems_after(edit, path, data)
    assert any(problem in p for p in problems), problems


#: what the reader once recorded as a decode error when it could not measure fidelity: an artifact defect
#: TA306 now names from the facts (the decode error must be gone, the gate must still block)
UNMEASURED_FIDELITY = {
    "stored test prediction": ("a stored test prediction of another shape than its children", "test prediction shape"),
    "validation rows": ("fewer validation row ids than validation rows", "validation prediction has"),
    "positions": ("a position past the rows", "val_idx_per_child holds positions outside"),
}


@pytest.mark.parametrize("name", sorted(UNMEASURED_FIDELITY))
def test_fidelity_that_cannot_be_measured_is_left_to_the_rules(tmp_path, name):
    case, old_error = UNMEASURED_FIDELITY[name]
    task, edit, problem = ARTIFACT_DEFECTS[case]
    data = make_run(tmp_path, tasks=(task,), folds=1, array_scale=0.05)
    path = next(data.rglob("results.pkl"))
    result = reader.load_result(path)
    edit(result)
    write_payload(path, result)
    row = reader.decode_row(path, root=data)
    assert not any(old_error in e for e in row["decode_errors"]), row["decode_errors"]
    assert any(problem in p for p in row_problems(row))


def test_a_single_childs_labels_missing_from_y_val_idx_block(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1, array_scale=0.05, use_child_oof=True)
    path = next(data.rglob("results.pkl"))
    row = reader.decode_row(path, root=data)
    assert row["val_labels_missing"] is False and row_problems(row) == []
    result = reader.load_result(path)
    labels = _bag(result)["val_idx_per_child"][0]
    labels[0] = _sa(result)["y_val_idx"].max() + 1_000  # a training-row label the validation rows lack
    write_payload(path, result)
    row = reader.decode_row(path, root=data)
    assert row["val_labels_missing"] is True and row["val_not_close"] is None and row["decode_errors"] == []
    assert any("of the single child holds row labels missing from y_val_idx" in p for p in row_problems(row))


def test_val_and_test_rows_are_recorded_for_the_split_check(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1, array_scale=0.05)
    (row,) = _rows(data).values()
    assert (row["val_rows"], row["test_rows"]) == (50, 25)


def test_directory_and_content_disagreements_are_problems(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1)
    src = next(data.rglob("results.pkl"))
    moved = data / "Other_c1_BAG_L1" / "363614" / "0_2" / "results.pkl"
    moved.parent.mkdir(parents=True)
    src.rename(moved)
    row = reader.decode_row(moved, root=data)
    assert "directory 'Other_c1_BAG_L1' holds framework 'TA-Nori_c1_default_BAG_L1'" in row_problems(row)
    assert "directory '363614' holds task 363612" in row_problems(row)
    assert "directory '0_2' says repeat 0 fold 2 but the result says repeat 0 fold 0" in row_problems(row)


@pytest.mark.parametrize(
    "record, key",
    [
        (None, None),
        ({}, None),
        ({"flavour": "system", "protocol": None, "key": "system"}, "system"),
        ({"flavour": "bagged", "protocol": synth.TABARENA_PROTOCOL}, "8x1"),
        ({"flavour": "bagged", "protocol": synth.BEYONDARENA_PROTOCOL}, "8x1+tiny5x5<=500+task-specific+adapt-classes"),
        ({"flavour": "bagged", "protocol": None}, "custom"),
        ({"flavour": None, "protocol": None}, "custom"),
        ({"flavour": None, "protocol": {"num_bag_folds": 3}}, "custom:3x1"),
        ({"flavour": "holdout", "protocol": synth.TABARENA_PROTOCOL}, "holdout:8x1"),
        ({"flavour": "bag-child-holdout", "protocol": synth.TABARENA_PROTOCOL}, "bag-child-holdout:8x1"),
        ({"flavour": "outer", "protocol": None, "key": "outer"}, "outer"),
        ({"flavour": "predictor", "protocol": None}, "predictor"),
    ],
)
def test_record_key(record, key):
    assert reader.record_key(record) == key


@pytest.mark.parametrize(
    "protocol, message",
    [
        ({"num_bag_folds": 1}, "'num_bag_folds' must be an integer >= 2 (got 1)"),
        ({"num_bag_sets": "2"}, "'num_bag_sets' must be an integer >= 1 (got '2')"),
        ({"tiny_num_bag_folds": 5}, "must be set together"),
    ],
)
def test_invalid_protocol_is_a_row_problem(tmp_path, protocol, message):
    with pytest.raises(ValueError, match="must be"):
        reader.record_key({"flavour": "bagged", "protocol": protocol})
    data = make_run(tmp_path, tasks=(363612,), folds=1, validation_protocol={"flavour": "bagged", "protocol": protocol})
    (row,) = _rows(data).values()
    assert any(message in p for p in row_problems(row)) and row["vp_key"] is None and row["has_vp_record"]


def test_val_rebuild_from_per_child_predictions(tmp_path):
    data = make_run(tmp_path, tasks=(363614,), folds=1, bag_children=4)
    path = next(data.rglob("results.pkl"))
    result = reader.load_result(path)
    sa = result["simulation_artifacts"]
    stored = sa["pred_proba_dict_val"][result["framework"]]
    bag = sa["bag_info"]
    bag["pred_val_per_child"] = [stored[idx].copy() for idx in bag["val_idx_per_child"]]
    write_payload(path, result)
    assert reader.decode_row(path, root=data)["val_not_close"] is False

    bag["pred_val_per_child"][0][0] += 0.5  # one child's row disagrees with the stored OOF prediction
    write_payload(path, result)
    row = reader.decode_row(path, root=data)
    assert row["val_not_close"] is True
    assert row["val_not_close_pct"] == pytest.approx(100 * stored.shape[1] / stored.size)  # the row's 5 classes


#: (edit of a clean result at repeat 2, fold 0 of a 2-fold run, a problem the row must then carry): each a
#: result processing would misfile or misname
RESULT_DEFECTS = {
    "split_idx no fold count gives": (
        lambda r: r["task_metadata"].update(split_idx=5),
        "task_metadata.split_idx is 5, which no number of folds gives for repeat 2, "
        "fold 0 (split_idx = n_folds * repeat + fold): correct it",
    ),
    "split_idx of the first repeat": (
        lambda r: r["task_metadata"].update(split_idx=0),
        "task_metadata.split_idx is 0, which no number of folds gives",
    ),
    "no method_metadata": (lambda r: r.pop("method_metadata"), "method_metadata is missing: processing renames"),
    "no name_prefix": (
        lambda r: r["method_metadata"].pop("name_prefix"),
        "method_metadata.name_prefix is missing: processing renames a config",
    ),
    "an empty name_prefix": (
        lambda r: r["method_metadata"].update(name_prefix=""),
        "method_metadata.name_prefix is empty: processing renames a config",
    ),
    "a name_prefix the framework lacks": (
        lambda r: r["method_metadata"].update(name_prefix="Other"),
        "method_metadata.name_prefix 'Other' does not start the framework 'TA-Nori_c1_default_BAG_L1'",
    ),
    "a negative test error": (
        lambda r: r.update(metric_error=-0.25),
        "metric_error is negative (got -0.25); errors, times and resources are never below 0",
    ),
    "a negative time": (lambda r: r.update(time_infer_s=-1), "time_infer_s is negative (got -1.0)"),
    "a negative cpu count": (
        lambda r: r["method_metadata"].update(num_cpus=-1),
        "method_metadata.num_cpus is negative (got -1)",
    ),
    "artifacts scored on another metric": (
        lambda r: r["simulation_artifacts"].update(eval_metric="mae"),
        "simulation_artifacts.eval_metric is 'mae' but the result's metric is "
        "'rmse': the artifacts are another task's or metric's",
    ),
    "artifacts of another problem type": (
        lambda r: r["simulation_artifacts"].update(problem_type_transform="binary"),
        "simulation_artifacts.problem_type_transform is 'binary' but the result's problem_type is 'regression'",
    ),
    "an artifact metric that is no name": (
        lambda r: r["simulation_artifacts"].update(metric=None),
        "simulation_artifacts.metric is None but the result's metric is 'rmse'",
    ),
    "no model type": (
        lambda r: r["method_metadata"].pop("model_type"),
        "method_metadata.model_type is missing: processing renames the config's model type",
    ),
    "no hyperparameters": (
        lambda r: r["method_metadata"].pop("model_hyperparameters"),
        "method_metadata.model_hyperparameters is missing: processing takes the config's",
    ),
    "hyperparameters that are no dict": (
        lambda r: r["method_metadata"].update(model_hyperparameters=7),
        "method_metadata.model_hyperparameters must be a dict of the config's hyperparameters (got 7)",
    ),
    "metric_error_val None": (
        lambda r: r.update(metric_error_val=None),
        "metric_error_val is None: record the validation error, or remove the key to have it recomputed",
    ),
}


@pytest.mark.parametrize("name", sorted(RESULT_DEFECTS))
def test_results_processing_would_misfile_are_problems(tmp_path, name):
    edit, problem = RESULT_DEFECTS[name]
    data = make_run(tmp_path, tasks=(363612,), folds=2, repeats=3, array_scale=0.05)
    path = data / "TA-Nori_c1_default_BAG_L1" / "363612" / "2_0" / "results.pkl"
    row = reader.decode_row(path, root=data)
    assert row_problems(row) == [] and row["split_idx"] == 4  # must pass before the edit
    problems = _problems_after(edit, path, data)
    assert any(problem in p for p in problems), problems


def test_artifacts_naming_the_metric_by_an_alias_pass(tmp_path):
    data = make_run(tmp_path, tasks=(363612,), folds=1, array_scale=0.05)
    path = next(data.rglob("results.pkl"))
    result = reader.load_result(path)
    result["metric"] = "rmse"  # TabArena's name, the artifacts keep AutoGluon's
    result["simulation_artifacts"].update(eval_metric="root_mean_squared_error", metric="root_mean_squared_error")
    write_payload(path, result)
    assert row_problems(reader.decode_row(path, root=data)) == []


@pytest.mark.parametrize("repeat, fold, split_idx", [(0, 0, 0), (0, 2, 2), (1, 0, 3), (2, 1, 7), (1, 1, 4)])
def test_every_split_idx_some_fold_count_gives_passes(tmp_path, repeat, fold, split_idx):
    data = make_run(tmp_path, tasks=(363612,), folds=1, array_scale=0.05)
    path = next(data.rglob("results.pkl"))
    result = reader.load_result(path)
    result["task_metadata"].update(repeat=repeat, fold=fold, split_idx=split_idx)
    moved = data / "TA-Nori_c1_default_BAG_L1" / "363612" / f"{repeat}_{fold}" / "results.pkl"
    path.unlink()
    write_payload(moved, result)
    assert row_problems(reader.decode_row(moved, root=data)) == []


def test_json_text_kept_per_value_renders_values_that_compare_equal_apart(monkeypatch):
    """1, 1.0 and True are equal keys to Python, as are 0.0 and -0.0: each keeps its own text, in any order."""
    monkeypatch.setattr(reader, "_RENDERED", {})
    values = [[1], [1.0], [True], {"a": 0.0}, {"a": -0.0}, {"a": [1, {"b": None}]}, {"a": (1,)}, ["x", 2.5]]
    for value in [*values, *reversed(values)]:
        assert reader._json(value) == json.dumps(value, sort_keys=True)
    assert len(reader._RENDERED) == len(values)  # each kept once, under its own key
    assert reader._json({2: "int key"}) == '{"2": "int key"}'  # other keys are rendered, never kept


def test_json_text_kept_only_for_small_values_and_never_past_the_cap(monkeypatch):
    """A value too large to keep is rendered each time, one too large to record is still refused, and the store
    stops growing at its size."""
    monkeypatch.setattr(reader, "_RENDERED", {})
    monkeypatch.setattr(reader, "_MEMO_SIZE", 3)
    big = {"values": list(range(reader._MEMO_VALUES + 1))}
    long_text = {"text": "x" * (reader._MEMO_TEXT + 1)}
    assert reader._json(big) == json.dumps(big) and reader._json(long_text) == json.dumps(long_text)
    assert reader._RENDERED == {}
    for n in range(5):
        reader._json({"n": n})
    assert len(reader._RENDERED) == 3
    monkeypatch.setattr(reader, "MAX_RENDERED", 4)
    row = reader._Row()
    assert reader._json({"n": list(range(9))}, "method_metadata.hyperparameters", row) is None
    assert row.decode_errors == ["method_metadata.hyperparameters is too large to record (more than 4 values)"]


def test_children_facts_count_infinite_values_per_child_whatever_their_shapes():
    """Multiclass children are 2-D; an infinite value is counted in its own child, and bounds are per child."""
    clean = [np.zeros((4, 3), np.float32), np.ones((4, 3), np.float32)]
    assert artifacts._children(clean) == {"ok": True, "shapes": [[4, 3], [4, 3]], "inf": [0, 0]}
    mixed = [np.zeros((4, 3), np.float32), np.array([[1.0, np.inf, -np.inf]] * 2, np.float64), np.zeros(5, np.int64)]
    assert artifacts._children(mixed)["inf"] == [0, 4, 0]
    positions = [np.array([3, 1, 2]), np.array([7]), np.array([5, 4])]
    assert artifacts._position_bounds(positions) == [[3, 1, 3], [1, 7, 7], [2, 4, 5]]
