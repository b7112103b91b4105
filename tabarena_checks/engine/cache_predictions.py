"""processed/model_predictions/ and the context files that make processed/ loadable by TabArena.

TabArena's ``load_processed`` reads ``context.json`` (where everything is), ``metadata.json``
(the context frames), and per task and split ``model_predictions/<dataset>/<split>/``:
``metadata.json`` (model order and array shapes), ``pred-val.dat`` and ``pred-test.dat`` (float32,
C order, ``[models, rows(, classes)]``, binary as the positive class) and ``label-val.csv.zip`` /
``label-test.csv.zip`` (the labels indexed by row id). The predictions are the ones TabArena
keeps after aligning a result: a bagged config's test prediction is the float32 mean of its
children's, its validation prediction the average over the children that held each row out.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from checks import ActionFailed, io
from tabarena_checks.cache.names import segment_problem

PRED_FILES = ("metadata.json", "pred-test.dat", "pred-val.dat")
LABEL_FILES = ("label-test.csv.zip", "label-val.csv.zip")


@attrs.frozen
class Predictions:
    """One config's aligned predictions on one task split, and that split's labels."""

    framework: str
    pred_val: Any
    pred_test: Any
    y_val: Any
    y_test: Any
    y_val_idx: Any
    y_test_idx: Any
    label: Any


def _flat(result: dict) -> dict:
    sa = result["simulation_artifacts"]
    tm = result.get("task_metadata") or {"name": result.get("dataset"), "split_idx": result.get("fold")}
    if list(sa) == [tm["name"]]:
        sa = sa[tm["name"]][tm["split_idx"]]
    return sa


def _single(sa: dict, key: str, framework: str):
    preds = sa.get(f"pred_proba_dict_{key}")
    if isinstance(preds, dict):
        return preds[framework]
    return sa[f"pred_{key}"]


def aligned(result: dict, framework: str) -> Predictions:
    """What TabArena keeps of ``result``'s predictions (``framework`` is the renamed name)."""
    import numpy as np

    sa = _flat(result)
    raw_framework = result["framework"]
    pred_val = _single(sa, "val", raw_framework)
    pred_test = _single(sa, "test", raw_framework)
    binary = result["problem_type"] == "binary"
    if binary and pred_test.ndim > 1:
        pred_test = pred_test[:, 1]
    if binary and pred_val.ndim > 1:
        pred_val = pred_val[:, 1]
    bag = sa.get("bag_info")
    if isinstance(bag, dict):
        pred_val, pred_test = _from_children(bag, pred_val, sa["y_val_idx"], sa["y_test_idx"])
    return Predictions(
        framework=framework,
        pred_val=np.asarray(pred_val),
        pred_test=np.asarray(pred_test),
        y_val=sa["y_val"],
        y_test=sa["y_test"],
        y_val_idx=sa.get("y_val_idx"),
        y_test_idx=sa.get("y_test_idx"),
        label=sa.get("label"),
    )


def _from_children(bag: dict, pred_val, y_val_idx, y_test_idx):
    """The bag's predictions rebuilt from its children, in TabArena's arithmetic (float64 sums, float32 result)."""
    per_child_test = bag.get("pred_test_per_child", bag.get("pred_proba_test_per_child"))
    val_idx = list(bag["val_idx_per_child"])
    per_child_val = bag.get("pred_val_per_child")
    if per_child_val is None:
        val_idx, per_child_val = _children_val(val_idx, pred_val, y_val_idx)
    val = _mean_over_children(val_idx, per_child_val, len(y_val_idx))
    width = None if per_child_val[0].ndim == 1 else per_child_test[0].shape[1]
    return val, _mean_test(per_child_test, len(y_test_idx), width)


def _children_val(val_idx: list, pred_val, y_val_idx) -> tuple[list, list]:
    """Each child's validation positions and predictions, cut from the bag's out-of-fold ``pred_val``.

    Apart because a single ``use_child_oof`` child records row labels, not positions: they are
    mapped to positions in ``y_val_idx`` first, as TabArena does.
    """
    import numpy as np

    first = np.asarray(val_idx[0])
    if len(val_idx) == 1 and not np.array_equal(first, np.arange(len(y_val_idx))):
        position = {value: i for i, value in enumerate(y_val_idx)}
        val_idx = [np.array([position[v] for v in first])]
    return val_idx, [pred_val[idx] for idx in val_idx]


def _mean_over_children(val_idx: list, per_child_val: list, n_val: int):
    """Each validation row's mean over the children that predicted it (float64 sums, float32 result).

    A row no child predicted is NaN (0/0), as in TabArena: the division's warnings are silenced.
    """
    import numpy as np

    shape_val = (n_val,) if per_child_val[0].ndim == 1 else (n_val, per_child_val[0].shape[1])
    total = np.zeros(shape_val, dtype=np.float64)
    count = np.zeros(n_val, dtype=int)
    for idx, pred in zip(val_idx, per_child_val):
        count[idx] += 1
        total[idx] += pred
    with np.errstate(invalid="ignore", divide="ignore"):
        return (total / count if total.ndim == 1 else total / count[:, None]).astype(np.float32)


def _mean_test(per_child_test: list, n_test: int, width: int | None):
    """The children's test predictions averaged (float64 sum, float32 result), ``width`` classes or one column.

    The shape follows the validation predictions' (as TabArena's does), hence ``width`` passed in.
    """
    import numpy as np

    test = np.zeros((n_test,) if width is None else (n_test, width), dtype=np.float64)
    for pred in per_child_test:
        test += pred
    return (test / len(per_child_test)).astype(np.float32)


def _csv(values, index, name) -> bytes:
    """A pandas ``Series.to_csv(index=True)`` of the labels: header ``,<name>``, one ``id,value`` line per row."""
    lines = [f",{'' if name is None else name}"]
    lines += [f"{i},{v}" for i, v in zip(index.tolist() if hasattr(index, "tolist") else index, _cells(values))]
    return ("\n".join(lines) + "\n").encode("utf-8")


def _cells(values) -> list[str]:
    import numpy as np

    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return [
            "" if v != v else str(v)
            for v in (arr.astype(np.float64).tolist() if arr.dtype == np.float64 else list(arr))
        ]
    return [str(v) for v in arr.tolist()]


def _zip(path: Path, name: str, payload: bytes) -> None:
    """One deflated entry with a fixed timestamp, so the same labels always give the same bytes."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o644 << 16
    with zipfile.ZipFile(path, "w") as zf:
        io.write_zip_entry(zf, info, payload, compress_type=zipfile.ZIP_DEFLATED)


def write_task(root: Path, dataset: str, fold: int, preds: Sequence[Predictions]) -> None:
    """``model_predictions/<dataset>/<fold>/``: the models' predictions and the split's labels (from the first)."""
    import numpy as np

    problem = segment_problem(dataset)
    if problem:  # TA406 refuses such a name before processing starts; never a path outside the cache
        raise ActionFailed(f"dataset name {dataset!r} {problem}; it cannot name a model_predictions directory")
    target = root / dataset / str(fold)
    target.mkdir(parents=True, exist_ok=True)
    pred_val = np.array([p.pred_val for p in preds], dtype=np.float32)
    pred_test = np.array([p.pred_test for p in preds], dtype=np.float32)
    meta = {
        "models": [p.framework for p in preds],
        "dataset": dataset,
        "fold": int(fold),
        "pred_val_shape": list(pred_val.shape),
        "pred_test_shape": list(pred_test.shape),
        "dtype": "float32",
    }
    (target / "metadata.json").write_text(json.dumps(meta), encoding="utf-8")
    (target / "pred-val.dat").write_bytes(np.ascontiguousarray(pred_val).tobytes())
    (target / "pred-test.dat").write_bytes(np.ascontiguousarray(pred_test).tobytes())
    first = preds[0]
    _zip(target / "label-val.csv.zip", "label-val.csv", _csv(first.y_val, first.y_val_idx, first.label))
    _zip(target / "label-test.csv.zip", "label-test.csv", _csv(first.y_test, first.y_test_idx, first.label))


def context_json(tasks: Sequence[tuple[str, int]]) -> str:
    """``context.json``: where TabArena finds each file.

    TabArena records the absolute path it wrote the directory to as ``relative_path`` (and so
    publishes the uploader's local path inside processed.zip); its loader replaces the value with
    the directory it loads from, so the native cache writes null there.
    """
    tasks = sorted(set(tasks))
    pp = [f"model_predictions/{d}/{f}/{name}" for d, f in tasks for name in PRED_FILES]
    gt = [f"model_predictions/{d}/{f}/{name}" for d, f in tasks for name in LABEL_FILES]
    doc = {
        "name": None,
        "date": None,
        "description": None,
        "folds": sorted({int(f) for _, f in tasks}),
        "s3_download_map": None,
        "config_fallback": None,
        "benchmark_paths": {
            "configs": "configs.parquet",
            "baselines": "baselines.parquet",
            "task_metadata": "task_metadata.parquet",
            "metadata_join_column": "dataset",
            "path_pred_proba": "model_predictions/",
            "datasets": sorted({d for d, _ in tasks}),
            "zs_pp": pp,
            "zs_gt": gt,
            "configs_hyperparameters": ["configs_hyperparameters.json"],
            "relative_path": None,
        },
    }
    return json.dumps(doc, indent=2)


def metadata_json() -> str:
    """``processed/metadata.json``: where the context frames are."""
    return json.dumps(
        {
            "df_configs": "configs.parquet",
            "df_baselines": "baselines.parquet",
            "df_metadata": "task_metadata.parquet",
            "configs_hyperparameters": "configs_hyperparameters.json",
            "pct": False,
            "score_against_only_baselines": False,
        },
        indent=2,
    )


def task_metadata_table(rows: Sequence[dict[str, Any]], given: Any = None):
    """``task_metadata.parquet`` for the run's datasets.

    With ``given`` (the ``--task-metadata`` :class:`~tabarena_checks.raw.task_table.TaskTable`), that frame as
    it is, every row in its order: TabArena, handed those tasks, writes exactly that frame.
    Otherwise the columns the raw results determine: TabArena writes its whole bundled
    task-metadata frame (51 datasets, 45 columns of its own data); loading needs a row per dataset
    present with ``dataset`` and ``tid``, and the frame is cut to the present datasets on load.
    """
    import pyarrow as pa

    if given is not None:
        return given.table
    seen: dict[str, dict[str, Any]] = {}
    for row in rows:
        seen.setdefault(row["dataset"], row)
    datasets = sorted(seen, key=str.lower)
    problem = [seen[d]["problem_type"] for d in datasets]
    return pa.table(
        {
            "dataset": pa.array(datasets, pa.string()),
            "dataset_name": pa.array(datasets, pa.string()),
            "problem_type": pa.array(problem, pa.string()),
            "is_classification": pa.array([p in ("binary", "multiclass") for p in problem], pa.bool_()),
            "eval_metric": pa.array([seen[d]["metric"] for d in datasets], pa.string()),
            "tabarena_task_name": pa.array(datasets, pa.string()),
            "tid": pa.array([seen[d].get("tid") for d in datasets], pa.int64()),
            "name": pa.array(datasets, pa.string()),
        }
    )
