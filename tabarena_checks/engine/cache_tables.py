"""The tables of a method cache, built from the raw results the way TabArena 0.1.0 builds them.

TabArena turns every result into a one-row pandas frame and concatenates them, so a column's
type is what pandas makes of the raw values: a float32 stays float32, an int becomes int64, an
int column with a gap becomes float64, and a field no result carries is no column at all. The
rows follow the order TabArena processes the files in: the results.pkl paths sorted by their
parts, grouped by ``<task>/<split>`` directory in order of first appearance. This module
reproduces both from the raw values (decoded again with the restricted unpickler, since the
index keeps only normalised numbers), and applies TabArena's renaming: the method name for
configs' name prefix and baselines' framework, ``name`` for baselines, ``name_suffix`` after
the prefix, ``model_key`` (+ suffix) as every config's model type.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import attrs

from tabarena_checks.engine.cache_hpo_metrics import recomputed_val_error as compute
from tabarena_checks.engine.cache_hpo_metrics import stored_val_prediction
from tabarena_checks.engine.cache_predictions import _flat
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.raw.metric_names import tabarena_name

#: the required fields of a result row, in TabArena's order (``compute_df_result``)
REQUIRED = ("framework", "metric_error", "metric", "time_train_s", "time_infer_s", "problem_type")
#: fields of ``method_metadata`` that become columns when a result carries them
HARDWARE = ("num_cpus", "num_gpus", "disk_usage")


@attrs.frozen
class Result:
    """What the tables need of one results.pkl, renamed as TabArena renames it."""

    group: str
    is_config: bool
    row: dict[str, Any]
    config_type: str | None
    hyperparameters: dict[str, Any] | None


def _task_metadata(result: dict) -> dict:
    tm = result.get("task_metadata")
    if isinstance(tm, dict):
        return tm
    return {
        "fold": result.get("fold"),
        "repeat": 0,
        "sample": 0,
        "split_idx": result.get("fold"),
        "tid": result.get("tid"),
        "name": result.get("dataset"),
    }


def _is_config(result: dict) -> bool:
    return result.get("simulation_artifacts") is not None


def renamed(result: dict, meta: MethodMetadata) -> tuple[str, dict]:
    """(framework, method_metadata) after TabArena's renames, without touching ``result``.

    ``process_raw`` renames every result to ``meta.method`` (configs keep what follows their
    raw name prefix) and sets the model type to ``model_key``; building the repo then applies
    a baseline's ``name`` and a config's ``name_suffix``.
    """
    framework = result["framework"]
    mm = dict(result.get("method_metadata") or {})
    if _is_config(result):
        if not mm:
            mm = {"model_type": framework, "model_hyperparameters": {}, "name_prefix": framework}
        prefix = mm.get("name_prefix")
        suffix = framework.removeprefix(prefix) if isinstance(prefix, str) else framework
        framework, mm["name_prefix"] = f"{meta.method}{suffix}", meta.method
        model_key = meta.effective_model_key
        if model_key is not None:
            mm.setdefault("ag_key", mm.get("model_type"))
            mm["model_type"] = model_key
        if meta.name_suffix is not None:
            framework = f"{meta.method}{meta.name_suffix}{suffix}"
            mm["name_prefix"] = f"{meta.method}{meta.name_suffix}"
            mm.setdefault("ag_key", mm.get("model_type"))
            mm["model_type"] = f"{mm.get('model_type')}{meta.name_suffix}"
    else:
        framework = meta.name if meta.name is not None else meta.method
    return framework, mm


def table_row(result: dict, framework: str, mm: dict) -> dict[str, Any]:
    """One row as TabArena's ``compute_df_result`` makes it (keys in its order, values raw)."""
    tm = _task_metadata(result)
    row: dict[str, Any] = {"dataset": tm.get("name"), "fold": tm.get("split_idx")}
    for key in REQUIRED:
        row[key] = result.get(key)
    row["framework"] = framework
    row["metric"] = tabarena_name(row["metric"])
    if "metric_error_val" in result:
        row["metric_error_val"] = float(result["metric_error_val"])
    elif _is_config(result):
        recomputed = recomputed_val_error(result)
        if recomputed is not None:
            row["metric_error_val"] = recomputed
    if "tid" in tm:
        row["tid"] = tm["tid"]
    if result.get("method_metadata") is not None:
        for key in HARDWARE:
            if key in mm:
                row[key] = mm[key]
    return row


def recomputed_val_error(result: dict) -> float | None:
    """A config result's missing ``metric_error_val``, recomputed from its stored validation
    prediction as TabArena does when it loads the result (None without labels or prediction)."""

    sa = _flat(result)
    y_val, pred = sa.get("y_val"), stored_val_prediction(sa, result["framework"])
    if y_val is None or pred is None:
        return None
    metric = tabarena_name(result["metric"])
    return compute(metric, result["problem_type"], y_val, pred)


def hyperparameters_record(mm: dict) -> dict[str, Any]:
    """A config's entry of configs_hyperparameters.json (``ConfigResult.hyperparameters``)."""
    if "model_hyperparameters" not in mm:
        return {"model_cls": None, "model_type": None, "ag_key": None, "name_prefix": None, "hyperparameters": {}}
    model_type = mm.get("model_type")
    return {
        "model_cls": mm.get("model_cls"),
        "model_type": model_type,
        "ag_key": mm.get("ag_key", model_type),
        "name_prefix": mm.get("name_prefix"),
        "hyperparameters": mm["model_hyperparameters"],
    }


def from_raw(result: dict, rel_parts: Sequence[str], meta: MethodMetadata) -> Result:
    framework, mm = renamed(result, meta)
    is_config = _is_config(result)
    return Result(
        group="/".join(rel_parts[-3:-1]),
        is_config=is_config,
        row=table_row(result, framework, mm),
        config_type=mm.get("model_type") if is_config else None,
        hyperparameters=hyperparameters_record(mm) if is_config else None,
    )


def task_groups(paths: Iterable[str]) -> list[list[str]]:
    """Relative results.pkl paths in TabArena's processing order, one list per ``<task>/<split>`` directory."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for path in sorted(paths, key=lambda p: p.split("/")):
        groups.setdefault(tuple(path.split("/")[-3:-1]), []).append(path)
    return list(groups.values())


# --------------------------------------------------------------------------- pandas' column types


def _kind(value: Any) -> str:
    """The numpy dtype name pandas gives a one-row column holding ``value`` ("missing" for None)."""
    import numpy as np

    if value is None:
        return "object"
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.generic):
        return value.dtype.name
    if isinstance(value, int):
        return "int64"
    if isinstance(value, float):
        return "float64"
    return "object"


def _object_type(given: list[Any]):
    """An object column: strings when every value given is one, else null (pandas keeps objects; Arrow cannot)."""
    import pyarrow as pa

    return pa.string() if given and all(isinstance(v, str) for v in given) else pa.null()


def column_type(values: Sequence[Any], present: Sequence[bool]):
    """The Arrow type pandas' concat, then its parquet writer, give a column (``present`` False: that row's
    frame lacks it).

    pandas (2.x) leaves the one-row frames that hold None out when it finds the common dtype. A float
    column holds their NaN; an int or bool column cannot, so it stays an object column, which
    Arrow types from its values (int64, bool). A row without the column at all turns an int column
    into float64. A bool mixed with numbers takes their type (True as 1).
    """
    import pyarrow as pa

    given = _given(values, present)
    kinds = {_kind(v) for v in given}
    if "object" in kinds or not kinds:
        return _object_type(given)
    if kinds == {"bool"}:
        return pa.bool_()
    return _numeric_type(kinds, gaps=not all(present), nulls=len(given) < sum(present))


def _given(values: Sequence[Any], present: Sequence[bool]) -> list[Any]:
    """The values of the rows that have the column and hold something in it."""
    return [v for v, p in zip(values, present) if p and v is not None]


def _numeric_type(kinds: set[str], gaps: bool, nulls: bool):
    """numpy's common type of the kinds, where an int column with a gap is float64 and one holding None int64."""
    import numpy as np
    import pyarrow as pa

    dtype = np.result_type(*[np.dtype(k) for k in sorted(kinds)])
    if dtype.kind in "iu" and gaps:
        dtype = np.dtype("float64")
    elif dtype.kind in "iu" and nulls:
        return pa.int64()
    return pa.from_numpy_dtype(dtype)


def frame(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None):
    """The Arrow table pandas would make of one-row frames ``rows`` concatenated: ``columns`` in that order,
    by default every key in order of first appearance."""
    import pyarrow as pa

    columns = columns or dict.fromkeys(key for row in rows for key in row)
    arrays, fields = [], []
    for name in columns:
        array = _column(rows, name)
        arrays.append(array)
        fields.append(pa.field(name, array.type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields)) if fields else pa.table({})


def _column(rows: Sequence[dict[str, Any]], name: str):
    """One column of the concatenated frame: its values typed as pandas would type them (see :func:`column_type`).

    A float column's NaN becomes a null, because pandas writes a missing float as a null to parquet.
    """
    import pyarrow as pa

    present = [name in row for row in rows]
    values = [row.get(name) for row in rows]
    typ = column_type(values, present)
    if pa.types.is_floating(typ):  # pandas writes NaN as a null
        values = [None if v is None or v != v else v for v in values]
    numeric = pa.types.is_integer(typ) or pa.types.is_floating(typ)
    return pa.array([_plain(v, numeric) for v in values], type=typ)


def _plain(value: Any, numeric: bool = False) -> Any:
    """``value`` as Arrow takes it: a numpy scalar as its Python value, a bool in a number column as 0 or 1."""
    import numpy as np

    value = value.item() if isinstance(value, np.generic) else value
    return int(value) if numeric and isinstance(value, bool) else value


# --------------------------------------------------------------------------- the tables


def _task(row: dict[str, Any]) -> str:
    return f"{row['tid']}_{row['fold']}"


def _split_frames_order(rows: Sequence[dict[str, Any]], after: Sequence[str] = ()) -> list[str]:
    """The columns of TabArena's frame of ``rows``, a frame per task split (its rows' keys in order of first
    appearance, then ``task``, which it sets on each) concatenated, and then the ``after`` columns: a key
    that only a later split has comes after ``task`` (``rows`` hold ``task``; a split's rows are consecutive)."""
    keys = []
    for _, split in itertools.groupby(rows, key=lambda row: row["task"]):
        keys += [key for row in split for key in row if key != "task" and key not in after]
        keys.append("task")
    return [*dict.fromkeys(keys), *after]


def configs_table(results: Sequence[Result]):
    rows = [{**r.row, "task": _task(r.row)} for r in results if r.is_config]
    if not rows:
        return empty_table(EMPTY_CONFIGS)
    return frame(rows, _split_frames_order(rows))


def baselines_table(results: Sequence[Result]):
    """TabArena re-derives ``tid`` and ``problem_type`` per dataset, so they move behind ``task``."""
    rows = []
    for r in results:
        if r.is_config:
            continue
        row = {k: v for k, v in r.row.items() if k not in ("tid", "problem_type")}
        row["task"] = _task(r.row)
        row["tid"] = r.row.get("tid")
        row["problem_type"] = r.row["problem_type"]
        rows.append(row)
    if not rows:
        return empty_table(EMPTY_BASELINES)
    return frame(rows, _split_frames_order(rows, after=("tid", "problem_type")))


def model_results_table(results: Sequence[Result], meta: MethodMetadata):
    """results/model_results.parquet: TabArena's metrics table per task (sorted by framework within
    a task), ``metric_error_val`` NaN where a result has none."""
    rows = []
    for r in _by_framework_within_group(results):
        row = {k: r.row[k] for k in ("dataset", "fold")}
        row["method"] = r.row["framework"]
        for key in ("metric_error", "time_train_s", "time_infer_s", "metric", "problem_type"):
            row[key] = r.row[key]
        row["metric_error_val"] = r.row.get("metric_error_val", math.nan)
        row["method_type"] = "config" if r.is_config else "baseline"
        if r.is_config:
            row["config_type"] = r.config_type
        row["ta_name"] = meta.method
        row["ta_suite"] = meta.effective_suite
        rows.append(row)
    return frame(rows)


def _by_framework_within_group(results: Sequence[Result]) -> list[Result]:
    first: dict[str, int] = {}
    for i, r in enumerate(results):
        first.setdefault(r.group, i)
    return sorted(results, key=lambda r: (first[r.group], r.row["framework"]))


def configs_hyperparameters(results: Sequence[Result]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in results:
        if r.is_config:
            out.setdefault(r.row["framework"], r.hyperparameters)
    return out


#: the columns of TabArena's empty baselines and configs frames after its merges, in its order: ``tid`` is int64,
#: every other column of type null (nothing was ever put in it)
EMPTY_BASELINES = (
    "dataset", "fold", "framework", "metric_error", "metric", "time_train_s", "time_infer_s", "tid", "problem_type",
    "task",
)  # fmt: skip
EMPTY_CONFIGS = (
    "dataset", "fold", "framework", "metric_error", "metric_error_val", "metric", "problem_type", "time_train_s",
    "time_infer_s", "tid", "task",
)  # fmt: skip


def empty_table(columns: Sequence[str]):
    """baselines.parquet of a run without baselines, or configs.parquet of one without configs (``columns``)."""
    import pyarrow as pa

    return pa.schema([(c, pa.int64() if c == "tid" else pa.null()) for c in columns]).empty_table()


def json_value(value: Any) -> Any:
    """A hyperparameter value as JSON: numpy numbers and arrays as plain numbers and lists.

    TabArena writes the type name instead (``"int64"``) of anything ``json`` cannot encode;
    the native cache keeps the value (docs/tabarena-data.md lists this deviation).
    """
    import numpy as np

    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, np.ndarray):
        return [json_value(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return type(value).__name__
    return value
