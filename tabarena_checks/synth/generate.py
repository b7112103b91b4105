"""Write realistic synthetic TabArena runs, so every check can be exercised on real files.

The files follow the runner's layout and keys (``<run>/data/<framework>/<tid>/<repeat>_<fold>/
results.pkl``, gzip-compressed pickles of plain dicts and numpy arrays) for three
TabArena-v0.1 tasks of each problem type. Bagged configs get one test prediction per child
with the stored prediction equal to their float32 mean, and out-of-fold validation
predictions whose children partition the training rows, so a clean run passes TabArena's
own "Not close" checks. ``defects`` plants the faults the rules must catch.
"""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from checks import io, progress
from tabarena_checks.raw.suite_tasks import TABARENA_V01
from tabarena_checks.workers import quiet_pool


@attrs.frozen
class Task:
    tid: int
    name: str
    problem_type: str
    n_train: int
    n_test: int
    num_classes: int | None
    #: what the runner writes; TabArena normalizes ``root_mean_squared_error`` to ``rmse``
    metric: str


#: TabArena-v0.1 tasks bundled with TabArena's task metadata (unknown tids trigger a live OpenML fetch there),
#: named and typed as the suite's table has them
TASKS: dict[int, Task] = {
    363612: Task(363612, *TABARENA_V01[363612], 1002, 501, None, "root_mean_squared_error"),
    363614: Task(363614, *TABARENA_V01[363614], 598, 300, 5, "log_loss"),
    363619: Task(363619, *TABARENA_V01[363619], 6667, 3333, 2, "roc_auc"),
}
TABARENA_PROTOCOL = {
    "num_bag_folds": 8,
    "num_bag_sets": 1,
    "tiny_num_bag_folds": None,
    "tiny_num_bag_sets": None,
    "tiny_max_group_instances": None,
    "task_specific_validation": False,
    "adapt_num_folds_to_n_classes": False,
    "name": "TabArena-v0.1",
    "arena": "TabArena",
    "enforced": True,
}
BEYONDARENA_PROTOCOL = {
    **TABARENA_PROTOCOL,
    "tiny_num_bag_folds": 5,
    "tiny_num_bag_sets": 5,
    "tiny_max_group_instances": 500,
    "task_specific_validation": True,
    "adapt_num_folds_to_n_classes": True,
    "name": "BeyondArena",
    "arena": "BeyondArena",
}
#: preset names accepted for ``validation_protocol`` (besides ``None``, ``"<F>x<S>"`` and a record dict)
PROTOCOL_PRESETS = ("8x1", "beyondarena", "holdout", "outer", "system", "custom")
DEFECTS = (
    "corrupt",
    "truncated",
    "zero_byte",
    "missing_split",
    "fidelity_drift",
    "val_gap",
    "duplicate",
    "unsafe_pickle",
    "plain_pickle",
    "bad_fields",
)
KINDS = ("config", "baseline", "system")
#: the marker an ``unsafe_pickle`` defect would create if anything ever ran it
UNSAFE_MARKER = "UNSAFE_PICKLE_RAN"


def _custom_protocol(folds: int, sets: int) -> dict:
    return {
        **TABARENA_PROTOCOL,
        "num_bag_folds": folds,
        "num_bag_sets": sets,
        "name": f"custom-{folds}x{sets}",
        "arena": None,
        "enforced": None,
    }


def protocol_record(spec: str | Mapping | None, *, children: int, use_child_oof: bool) -> dict | None:
    """The ``results["validation_protocol"]`` record a run under ``spec`` carries (None: no record)."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        return dict(spec)
    if spec in ("outer", "system"):
        return {"flavour": spec, "protocol": None, "key": spec}
    flavour, protocol, fitted = _protocol_fit(spec, children=children, use_child_oof=use_child_oof)
    key = "x".join(str(protocol[k]) for k in ("num_bag_folds", "num_bag_sets"))
    return {
        "flavour": flavour,
        "protocol": dict(protocol),
        "key": key,
        "regime": "default",
        "num_group_instances": None,
        "num_bag_folds_nominal": protocol["num_bag_folds"],
        "num_bag_sets_nominal": protocol["num_bag_sets"],
        "clamps": [],
        "custom_splits": False,
        **fitted,
    }


def _protocol_fit(spec: str, *, children: int, use_child_oof: bool) -> tuple[str | None, Mapping, dict[str, Any]]:
    """The flavour, the nominal protocol and the fitted fields of a preset or ``'<folds>x<sets>'`` spec."""
    if spec in ("8x1", "beyondarena") or (isinstance(spec, str) and "x" in spec and spec.replace("x", "").isdigit()):
        protocol = _bagged_protocol(spec)
        return (
            "bagged",
            protocol,
            {
                "num_bag_folds_fitted": protocol["num_bag_folds"],
                "num_bag_sets_fitted": protocol["num_bag_sets"],
                "num_child_models": 1 if use_child_oof else children,
                "child_oof": use_child_oof,
            },
        )
    if spec == "holdout":
        return "holdout", TABARENA_PROTOCOL, {"num_child_models": 1, "child_oof": False}
    if spec == "custom":
        return None, _custom_protocol(3, 1), {}
    raise ValueError(
        f"validation_protocol must be None, one of {', '.join(PROTOCOL_PRESETS)}, '<folds>x<sets>' or a "
        f"record dict (got {spec!r})"
    )


def _bagged_protocol(spec: str) -> Mapping:
    """TabArena's 8x1, BeyondArena's, or a custom ``'<folds>x<sets>'`` protocol."""
    if spec == "8x1":
        return TABARENA_PROTOCOL
    if spec == "beyondarena":
        return BEYONDARENA_PROTOCOL
    folds, sets = (int(p) for p in spec.split("x"))
    return _custom_protocol(folds, sets)


@attrs.frozen
class RunSpec:
    """Everything that decides the content of one generated file."""

    method: str
    name_prefix: str
    ag_key: str
    kind: str
    bag_children: int
    validation_protocol: Any
    use_child_oof: bool
    gpus: float
    legacy_layout: bool
    array_scale: float
    folds: int
    #: the run's seed: with the task and split it draws the split's labels and row ids, which all its configs share
    seed: int = 0


def framework_names(name_prefix: str, configs: int, *, kind: str, validation_protocol: Any) -> list[str]:
    """Config names ``{ag_name}{_c1|_r<i>}_default{_BAG_L1|_HOLDOUT|''}``; baselines and systems carry no suffix."""
    if kind == "config":
        suffix = {"holdout": "_HOLDOUT", "outer": ""}.get(
            validation_protocol if isinstance(validation_protocol, str) else "", "_BAG_L1"
        )
    else:
        suffix = ""
    return [f"{name_prefix}_{'c1' if i == 0 else f'r{i}'}_default{suffix}" for i in range(configs)]


def _rows(n: int, scale: float) -> int:
    return max(16, int(round(n * scale)))


def _predictions(rng, task: Task, n: int):
    import numpy as np

    if task.problem_type == "regression":
        return rng.normal(0.0, 1.0, size=n).astype(np.float32)
    if task.problem_type == "binary":
        return rng.random(n).astype(np.float32)
    logits = rng.normal(size=(n, task.num_classes))
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    return proba.astype(np.float32)


def _labels(rng, task: Task, n: int):
    import numpy as np

    if task.problem_type == "regression":
        return rng.normal(10.0, 3.0, size=n)
    return rng.integers(0, task.num_classes, size=n).astype(np.int8)


def make_result(spec: RunSpec, framework: str, task: Task, repeat: int, fold: int, seed: int) -> dict:
    """One result dict in the runner's format (before TabArena's alignment).

    The random draws happen in one fixed order (the helpers are called in it), so a seed
    always gives the same bytes.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    metric_error = float(rng.uniform(0.05, 0.4))
    result: dict[str, Any] = {
        "framework": framework,
        "task_metadata": {
            "tid": task.tid,
            "name": task.name,
            "fold": fold,
            "repeat": repeat,
            "sample": 0,
            "split_idx": spec.folds * repeat + fold,
        },
        "problem_type": task.problem_type,
        "metric": task.metric,
        "metric_error": metric_error,
        "time_train_s": float(rng.uniform(5, 120)),
        "time_infer_s": float(rng.uniform(0.05, 2.0)),
        "memory_usage": {
            "peak_mem_cpu": float(rng.uniform(1e8, 4e9)),
            "peak_mem_gpu": 0.0,
            "gpu_tracking_enabled": bool(spec.gpus),
        },
        "experiment_metadata": {
            "experiment_cls": "AGModelBagExperiment",
            "method_cls": "AGSingleBagWrapper",
            "time_start": 1.7e9 + seed,
            "total_duration": 130.0,
            "time_warmup_s": 0.5,
        },
    }
    record = protocol_record(spec.validation_protocol, children=spec.bag_children, use_child_oof=spec.use_child_oof)
    if record is not None:
        result["validation_protocol"] = record
    if spec.kind != "config":
        if spec.kind == "system":
            result["experiment_metadata"]["experiment_cls"] = "SystemExperiment"
        return _legacy(result) if spec.legacy_layout else result
    children = 1 if spec.use_child_oof or spec.validation_protocol == "holdout" else spec.bag_children
    result["metric_error_val"] = float(metric_error * rng.uniform(0.9, 1.1))
    result["method_metadata"] = _method_metadata(rng, spec, framework, seed, children)
    split = np.random.default_rng([spec.seed, task.tid, repeat, fold])
    result["simulation_artifacts"] = _simulation_artifacts(rng, split, spec, framework, task, children)
    return _legacy(result) if spec.legacy_layout else result


def _method_metadata(rng, spec: RunSpec, framework: str, seed: int, children: int) -> dict[str, Any]:
    """A config's method_metadata record (AutoGluon's model and bag settings)."""
    ensemble = {"fold_fitting_strategy": "sequential_local", "seed": seed % 1000}
    if spec.use_child_oof:
        ensemble["use_child_oof"] = True
    return {
        "model_cls": f"{spec.method}Model",
        "model_type": spec.ag_key,
        "name_prefix": spec.name_prefix,
        "hyperparameters": {"learning_rate": 0.05, "max_depth": 6},
        "model_hyperparameters": {
            "learning_rate": 0.05,
            "max_depth": 6,
            "ag_args": {"name_suffix": framework[len(spec.name_prefix) :]},
            "ag_args_ensemble": ensemble,
        },
        "info": {"num_models": children},
        "disk_usage": int(rng.integers(10_000, 5_000_000)),
        "num_cpus": 8,
        "num_gpus": spec.gpus,
    }


def _simulation_artifacts(rng, split, spec: RunSpec, framework: str, task: Task, children: int) -> dict[str, Any]:
    """A config's simulation artifacts: validation and test predictions (drawn by ``rng``), labels and row ids
    (drawn by ``split``: every config of a task split is fit and scored on the same rows), and each bag child's share."""
    import numpy as np

    n_train, n_test = _rows(task.n_train, spec.array_scale), _rows(task.n_test, spec.array_scale)
    row_ids = split.permutation(n_train + n_test)
    y_val, y_test = _labels(split, task, n_train), _labels(split, task, n_test)
    y_val_idx, y_test_idx = row_ids[:n_train], row_ids[n_train:]
    base_test = _predictions(rng, task, n_test)
    per_child = [(base_test + 0.01 * _predictions(rng, task, n_test)).astype(np.float32) for _ in range(children)]
    pred_test = (np.sum(np.stack(per_child).astype(np.float64), axis=0) / children).astype(np.float32)
    pred_val = _predictions(rng, task, n_train)
    if children == 1:
        val_idx_per_child = [y_val_idx.copy()]  # AutoGluon records row labels for a single child
    else:
        order = rng.permutation(n_train)
        val_idx_per_child = [np.sort(part) for part in np.array_split(order, children)]
    classes = list(range(task.num_classes)) if task.num_classes else None
    return {
        "pred_proba_dict_val": {framework: pred_val},
        "pred_proba_dict_test": {framework: pred_test},
        "y_val": y_val,
        "y_test": y_test,
        "y_val_idx": y_val_idx,
        "y_test_idx": y_test_idx,
        "eval_metric": task.metric,
        "problem_type": task.problem_type,
        "problem_type_transform": task.problem_type,
        "ordered_class_labels": classes,
        "ordered_class_labels_transformed": classes,
        "num_classes": task.num_classes,
        "label": "target",
        "metric": task.metric,
        "bag_info": {"pred_proba_test_per_child": per_child, "val_idx_per_child": val_idx_per_child},
    }


def _legacy(result: dict) -> dict:
    """The older layout: top-level dataset/fold/tid, artifacts nested by dataset and fold, no newer records."""
    tm = result.pop("task_metadata")
    result.pop("method_metadata", None)
    result.pop("validation_protocol", None)
    result.update(dataset=tm["name"], fold=tm["split_idx"], tid=tm["tid"])
    if "simulation_artifacts" in result:
        result["simulation_artifacts"] = {tm["name"]: {tm["split_idx"]: result["simulation_artifacts"]}}
    return result


def write_result(path: Path, result: dict, *, compress: bool = True) -> None:
    """Write like the runner: a gzip-compressed pickle (plain when ``compress`` is False)."""
    payload = pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    if compress:
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    io.write_bytes(path, payload)


def _write_one(job: tuple) -> None:
    spec, framework, task, repeat, fold, seed, path = job
    write_result(path, make_result(spec, framework, task, repeat, fold, seed))


def generate_run(
    out_dir: str | os.PathLike,
    *,
    configs: int = 1,
    repeats: int = 1,
    folds: int = 3,
    tasks: Iterable[int] = (363612, 363614, 363619),
    method: str = "Nori",
    name_prefix: str = "TA-Nori",
    ag_key: str = "TA-NORI",
    bag_children: int = 8,
    validation_protocol: str | Mapping | None = None,
    use_child_oof: bool = False,
    gpus: float = 0,
    kind: str = "config",
    legacy_layout: bool = False,
    defects: Iterable[str] = (),
    array_scale: float = 1.0,
    seed: int = 0,
    workers: int | None = None,
) -> Path:
    """Write a run under ``out_dir`` and return its data directory (``out_dir/data``)."""
    defects = tuple(defects)
    _check_request(defects, kind, tasks, configs, repeats, folds, bag_children)
    protocol_record(validation_protocol, children=bag_children, use_child_oof=use_child_oof)  # validates
    spec = RunSpec(
        method=method,
        name_prefix=name_prefix,
        ag_key=ag_key,
        kind=kind,
        bag_children=bag_children,
        validation_protocol=validation_protocol,
        use_child_oof=use_child_oof,
        gpus=gpus,
        legacy_layout=legacy_layout,
        array_scale=array_scale,
        folds=folds,
        seed=seed,
    )
    data = Path(out_dir) / "data"
    names = framework_names(name_prefix, configs, kind=kind, validation_protocol=validation_protocol)
    jobs = [
        (
            spec,
            framework,
            TASKS[tid],
            r,
            f,
            seed * 1_000_003 + ((c * 1000 + t) * 100 + r) * 100 + f,
            data / framework / str(tid) / f"{r}_{f}" / "results.pkl",
        )
        for c, framework in enumerate(names)
        for t, tid in enumerate(tasks)
        for r in range(repeats)
        for f in range(folds)
    ]
    _write_all(jobs, workers)
    _plant(data, jobs, defects, spec)
    return data


def _check_request(
    defects: tuple[str, ...], kind: str, tasks: Iterable[int], configs: int, repeats: int, folds: int, bag_children: int
) -> None:
    unknown = [d for d in defects if d not in DEFECTS]
    if unknown:
        raise ValueError(f"unknown defect(s) {', '.join(map(repr, unknown))}: choose from {', '.join(DEFECTS)}")
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)} (got {kind!r})")
    bad_tasks = [t for t in tasks if t not in TASKS]
    if bad_tasks:
        raise ValueError(f"unknown task id(s) {bad_tasks}: the generator knows {', '.join(map(str, TASKS))}")
    if min(configs, repeats, folds, bag_children) < 1:
        raise ValueError("configs, repeats, folds and bag_children must be at least 1")


def _write_all(jobs: list[tuple], workers: int | None) -> None:
    """Write every results.pkl, on a process pool for a large run (``workers`` None: decided by its size).

    The pool is started before the progress bar's thread (:func:`~tabarena_checks.workers.quiet_pool`).
    """
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if len(jobs) > 200 else 1
    with quiet_pool(workers) as pool, progress.bar("synth", total=len(jobs), unit="results.pkl") as advance:
        if pool is not None:
            for _ in pool.map(_write_one, jobs, chunksize=32):
                advance(1)
        else:
            for job in jobs:
                _write_one(job)
                advance(1)


def _plant(data: Path, jobs: list[tuple], defects: tuple[str, ...], spec: RunSpec) -> None:
    """Damage the generated run the way real runs go wrong, each defect on its own file."""
    paths = [job[-1] for job in jobs]
    # each defect takes a different file, counted from the end so the first file stays clean
    victims = iter(reversed(paths))
    for defect in defects:
        if defect == "duplicate":
            rel = paths[0].relative_to(data)
            dst = data / (rel.parts[0] + "-rerun") / Path(*rel.parts[1:])
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(paths[0], dst)
            continue
        path = next(victims)
        _damage(defect, path, jobs[paths.index(path)], data, spec)


def _damage(defect: str, path: Path, job: tuple, data: Path, spec: RunSpec) -> None:
    """Plant one defect in the result at ``path`` (written from ``job``)."""
    if defect == "corrupt":
        path.write_bytes(b"\x1f\x8b\x08\x00" + bytes(range(256)) * 4)
    elif defect == "truncated":
        blob = path.read_bytes()
        path.write_bytes(blob[: len(blob) // 2])
    elif defect == "zero_byte":
        path.write_bytes(b"")
    elif defect == "missing_split":
        path.unlink()
    elif defect == "plain_pickle":
        write_result(path, make_result(*job[:-1]), compress=False)
    elif defect == "unsafe_pickle":
        path.write_bytes(gzip.compress(_unsafe_payload(data / UNSAFE_MARKER)))
    elif defect == "bad_fields":
        result = make_result(*job[:-1])
        result["task_metadata"]["fold"] = str(result["task_metadata"]["fold"])
        result["metric_error"] = float("nan")
        write_result(path, result)
    elif defect in ("fidelity_drift", "val_gap"):
        write_result(path, _drifted(defect, job, spec))


def _drifted(defect: str, job: tuple, spec: RunSpec) -> dict:
    """The job's result with test predictions that drift from the children's (``fidelity_drift``) or a bag
    child that leaves a validation row out (``val_gap``)."""
    import numpy as np

    if spec.kind != "config":
        raise ValueError(f"defect {defect!r} needs kind='config' (baselines carry no predictions)")
    result = make_result(*job[:-1])
    sa = result["simulation_artifacts"]
    framework = result["framework"]
    if spec.legacy_layout:
        sa = next(iter(next(iter(sa.values())).values()))
    if defect == "fidelity_drift":
        pred = sa["pred_proba_dict_test"][framework]
        rows = np.arange(0, len(pred), 20)  # 5% of the rows drift well past rtol 5e-4
        pred[rows] = pred[rows] * 1.01 + 0.01
    else:
        sa["bag_info"]["val_idx_per_child"][-1] = sa["bag_info"]["val_idx_per_child"][-1][1:]
    return result


class _Reduce:
    """Pickles as a call: what a malicious results.pkl would contain."""

    def __init__(self, fn, args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def _unsafe_payload(marker: Path) -> bytes:
    """A pickle that would create ``marker`` through os.system if it were ever loaded with plain pickle."""
    return pickle.dumps({"framework": "x", "payload": _Reduce(os.system, (f"touch '{marker}'",))}, protocol=4)
