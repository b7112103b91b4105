"""The native cache tables follow TabArena 0.1.0's renames, column types and row order (unit level).

The same behaviour is checked against TabArena itself in test_tabarena_parity.py; these tests pin
each rule on hand-made results, so a regression names the rule it broke.
"""

from __future__ import annotations

import json
import zipfile

import attrs
import numpy as np
import pyarrow as pa
import pytest

from tabarena_checks.engine import cache_tables as ct
from tabarena_checks.engine.cache_predictions import aligned, write_task
from tabarena_checks.metadata import compare
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.raw.index import build_index
from tabarena_checks.raw.inference import infer
from tabarena_checks.synth.generate import TASKS, RunSpec, generate_run, make_result

SPEC = RunSpec(
    method="Nori",
    name_prefix="TA-Nori",
    ag_key="TA-NORI",
    kind="config",
    bag_children=2,
    validation_protocol=None,
    use_child_oof=False,
    gpus=0,
    legacy_layout=False,
    array_scale=0.02,
    folds=3,
)
NORI = MethodMetadata(method="Nori", ag_key="TA-NORI", constructor="config")


def _result(framework="TA-Nori_c1_default_BAG_L1", tid=363612, repeat=0, fold=0, spec=SPEC, seed=1):
    return make_result(spec, framework, TASKS[tid], repeat, fold, seed)


def _parts(result):
    tm = result["task_metadata"]
    return (result["framework"], str(tm["tid"]), f"{tm['repeat']}_{tm['fold']}", "results.pkl")


def test_name_suffix_goes_after_the_method_and_onto_the_model_key():
    meta = MethodMetadata(method="Nori", ag_key="TA-NORI", model_key="NORI-KEY", name_suffix="_v2")
    r = ct.from_raw(_result(), _parts(_result()), meta)
    assert r.row["framework"] == "Nori_v2_c1_default_BAG_L1"
    assert r.config_type == "NORI-KEY_v2"
    assert r.hyperparameters["name_prefix"] == "Nori_v2" and r.hyperparameters["model_type"] == "NORI-KEY_v2"
    assert r.hyperparameters["ag_key"] == "TA-NORI", "ag_key is the raw one, model_type the renamed one"


def test_baseline_rows_carry_the_name_when_set():
    spec = attrs.evolve(SPEC, kind="system")
    raw = _result("MySys_c1_default", spec=spec)
    named = MethodMetadata(method="MySys", method_type="baseline", method_class="system", name="My System")
    assert ct.from_raw(raw, _parts(raw), named).row["framework"] == "My System"
    unnamed = MethodMetadata(method="MySys", method_type="baseline")
    assert ct.from_raw(raw, _parts(raw), unnamed).row["framework"] == "MySys"


def test_column_types_follow_pandas_concat():
    rows = [{"a": 1, "b": np.float32(0.5), "c": 1, "d": "x"}, {"a": 2, "b": np.float32(0.25), "d": "y"}]
    table = ct.frame(rows)
    assert table.schema.field("a").type == pa.int64(), "an int column stays int64"
    assert table.schema.field("b").type == pa.float32(), "a float32 raw field keeps its type"
    assert table.schema.field("c").type == pa.float64(), "an int column with a gap becomes float64 (NaN)"
    assert table.column("c").to_pylist() == [1.0, None]
    assert table.schema.field("d").type == pa.string()
    mixed = ct.frame([{"a": 1}, {"a": 2.5}, {"a": np.int32(3)}])
    assert mixed.schema.field("a").type == pa.float64()


@pytest.mark.parametrize(
    "values, expected",
    [
        ([1, None], pa.int64()),  # pandas keeps an object column; Arrow reads it as int64 with a null
        ([np.int32(3), None], pa.int64()),
        ([1.5, None], pa.float64()),  # the None row is left out of the common dtype, and NaN fits a float
        ([np.float32(1.5), None], pa.float32()),
        ([True, None], pa.bool_()),
        ([None, None], pa.null()),
        ([True, 1], pa.int64()),
        ([True, 1.5], pa.float64()),
    ],
)
def test_a_none_in_a_column_types_it_as_pandas_and_its_parquet_writer_do(values, expected):
    # before, any None made the column Arrow's null type and the value beside it failed the write
    table = ct.frame([{"a": v} for v in values])
    assert table.schema.field("a").type == expected
    assert table.column("a").to_pylist() == [
        None if v is None else (int(v) if isinstance(v, bool) and expected != pa.bool_() else v) for v in values
    ]


def test_hardware_fields_missing_everywhere_are_no_columns():
    raw = _result()
    for key in ("num_cpus", "num_gpus", "disk_usage"):
        del raw["method_metadata"][key]
    table = ct.configs_table([ct.from_raw(raw, _parts(raw), NORI)])
    assert not {"num_cpus", "num_gpus", "disk_usage"} & set(table.column_names)
    assert table.column_names[-1] == "task"


def test_float32_metric_error_is_kept_and_val_error_becomes_float64():
    raw = _result()
    raw["metric_error"] = np.float32(0.25)
    raw["metric_error_val"] = np.float32(0.5)
    table = ct.configs_table([ct.from_raw(raw, _parts(raw), NORI)])
    assert table.schema.field("metric_error").type == pa.float32()
    assert table.schema.field("metric_error_val").type == pa.float64(), "TabArena casts it with float()"


def test_rows_follow_tabarenas_processing_order():
    paths = [
        f"{framework}/{tid}/{split}/results.pkl"
        for framework in ("TA-Nori_r1_default_BAG_L1", "TA-Nori_c1-x", "TA-Nori_c1")
        for tid in ("363619", "363612")
        for split in ("0_0", "10_0", "2_0")
    ]
    groups = ct.task_groups(reversed(paths))
    # paths sorted part by part ('10_0' < '2_0'; 'TA-Nori_c1' < 'TA-Nori_c1-x', unlike whole strings),
    # grouped by task/split in order of first appearance, path order within a group
    assert [g[0].split("/")[1:3] for g in groups][:3] == [["363612", "0_0"], ["363612", "10_0"], ["363612", "2_0"]]
    assert [p.split("/")[0] for p in groups[0]] == ["TA-Nori_c1", "TA-Nori_c1-x", "TA-Nori_r1_default_BAG_L1"]
    assert len(groups) == 6 and all(len(g) == 3 for g in groups)


def test_numpy_hyperparameters_keep_their_value():
    """TabArena writes the type name ("int64") for a numpy value; the native cache keeps the value."""
    hps = {"max_depth": np.int64(6), "lr": np.float32(0.5), "grid": [np.int64(1), 2], "arr": np.arange(2)}
    assert json.loads(json.dumps(ct.json_value(hps))) == {"max_depth": 6, "lr": 0.5, "grid": [1, 2], "arr": [0, 1]}
    assert ct.json_value({"f": object()}) == {"f": "object"}, "anything else: its type name, as TabArena writes it"


def test_config_default_with_name_suffix_names_the_processed_config(tmp_path):
    """TA108 expects the name the cache holds (TabArena's own verification leaves the suffix out)."""
    data = generate_run(tmp_path / "run", configs=1, folds=1, tasks=(363612,), array_scale=0.02, workers=1)
    inference = infer(build_index(data, write_cache=False))
    suffixed = MethodMetadata(
        method="Nori", ag_key="TA-NORI", name_suffix="_v2", is_bag=True, config_default="Nori_v2_c1_default_BAG_L1"
    )
    assert compare.row_for(suffixed, inference, "config_default").matches
    unsuffixed = attrs.evolve(suffixed, config_default="Nori_c1_default_BAG_L1")
    row = compare.row_for(unsuffixed, inference, "config_default")
    assert not row.matches and row.inferred == "Nori_v2_c1_default_BAG_L1"


def test_predictions_are_rebuilt_from_the_children_and_written_as_tabarena_lays_them_out(tmp_path):

    raw = _result(tid=363614)  # multiclass, 2 children
    sa = raw["simulation_artifacts"]
    sa["pred_proba_dict_test"]["TA-Nori_c1_default_BAG_L1"] = (
        sa["pred_proba_dict_test"]["TA-Nori_c1_default_BAG_L1"] + 1
    )
    preds = aligned(raw, "Nori_c1_default_BAG_L1")
    children = sa["bag_info"]["pred_proba_test_per_child"]
    expected = ((children[0].astype(np.float64) + children[1]) / 2).astype(np.float32)
    assert np.array_equal(preds.pred_test, expected), "the stored test prediction is replaced by the children's mean"
    write_task(tmp_path, "anneal", 4, [preds, preds])
    meta = json.loads((tmp_path / "anneal/4/metadata.json").read_text())
    n_val, n_test = len(sa["y_val"]), len(sa["y_test"])
    assert meta == {
        "models": ["Nori_c1_default_BAG_L1"] * 2,
        "dataset": "anneal",
        "fold": 4,
        "pred_val_shape": [2, n_val, 5],
        "pred_test_shape": [2, n_test, 5],
        "dtype": "float32",
    }
    stored = np.fromfile(tmp_path / "anneal/4/pred-test.dat", dtype=np.float32).reshape(2, n_test, 5)
    assert np.array_equal(stored[1], expected)
    with zipfile.ZipFile(tmp_path / "anneal/4/label-val.csv.zip") as zf:
        lines = zf.read("label-val.csv").decode().splitlines()
    assert lines[0] == ",target" and lines[1] == f"{sa['y_val_idx'][0]},{sa['y_val'][0]}" and len(lines) == n_val + 1


def test_binary_keeps_the_positive_class_and_a_single_oof_child_maps_labels_to_positions():

    spec = attrs.evolve(SPEC, use_child_oof=True)
    raw = _result(tid=363619, spec=spec)
    preds = aligned(raw, "x")
    stored = raw["simulation_artifacts"]["pred_proba_dict_val"]["TA-Nori_c1_default_BAG_L1"]
    assert preds.pred_val.ndim == 1 and np.array_equal(preds.pred_val, stored), "every row held out by the one child"
