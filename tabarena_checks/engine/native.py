"""The native engine: the method cache from the judged raw results, as TabArena 0.1.0 writes it.

The rules judged every file through the DuckDB index; this engine reads every file once more
(its bytes checked against the judged digest) to build TabArena's tables from the raw values,
their types included, which the index normalises. Task splits are read and finished (their
predictions written, their HPO results simulated) in worker processes, a few at a time, while
the raw copy runs in threads (:mod:`tabarena_checks.engine.raw_copy`).
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import Any

import attrs

from checks import ActionFailed, progress
from tabarena_checks.cache.layout import render_metadata_yaml
from tabarena_checks.engine import cache_tables as ct
from tabarena_checks.engine.api import Built, Job
from tabarena_checks.engine.cache_hpo import (
    Split,
    hpo_results_table,
    read_back,
    split_results,
    trajectories_table,
    trajectory_rows,
)
from tabarena_checks.engine.cache_predictions import context_json, metadata_json, task_metadata_table, write_task
from tabarena_checks.engine.cache_tables import configs_hyperparameters, json_value, task_groups
from tabarena_checks.engine.raw_copy import copying_raw
from tabarena_checks.engine.reread import decoded, decoding_pool
from tabarena_checks.metadata.model import MethodMetadata


@attrs.define
class Read:
    """What one pass over the raw results gives: the renamed results in TabArena's order, the task
    splits whose predictions were written, and for a config method the simulation's inputs and
    per-split HPO rows."""

    results: list = attrs.Factory(list)
    tasks: list = attrs.Factory(list)
    splits: list = attrs.Factory(list)
    hpo_rows: list = attrs.Factory(list)


def read_results(index, meta: MethodMetadata, predictions_dir: Path | None = None, pool=None) -> Read:
    """Every result of the index, decoded again (restricted unpickler; only bytes with the digest the rules
    judged) and renamed, in TabArena's order; with ``predictions_dir``, each task split's config
    predictions are written there as it is read, and for a config method its HPO results simulated.

    With ``pool`` (:func:`~tabarena_checks.engine.reread.decoding_pool`), worker processes read and
    finish whole task splits; a few task splits are in memory at a time, as in TabArena's per-task processing.
    """

    digests = dict(index.query("SELECT path, sha256 FROM results"))
    groups = [[(path, str(index.abspath(path)), digests[path]) for path in group] for group in task_groups(digests)]
    finish = None if predictions_dir is None else partial(_finish_split, predictions_dir, meta)
    out = Read()
    for results, part in progress.counted(
        decoded(groups, meta, finish, pool),
        "process",
        len(digests),
        unit="results.pkl",
        weight=lambda split: len(split[0]),
    ):
        out.results += results
        if part is not None:
            out.tasks += part.tasks
            out.splits += part.splits
            out.hpo_rows += part.hpo_rows
    return out


def _finish_split(predictions_dir: Path, meta: MethodMetadata, results: list, preds: list) -> Read | None:
    """Write one task split's predictions and, for a config method, simulate its HPO results (in a
    worker process when there are any); what it adds to the whole read, or None without config predictions."""
    if not preds:
        return None

    part = Read()
    dataset, split = results[-1].row["dataset"], results[-1].row["fold"]
    write_task(predictions_dir, dataset, split, preds)
    part.tasks.append((dataset, split))
    if meta.method_type == "config":
        _simulate_split(part, results, preds, meta)
    return part


def _simulate_split(out: Read, results: list, preds: list, meta: MethodMetadata) -> None:
    """The split's inputs to the trajectories, and its hpo_results rows (TabArena's per-task simulation)."""

    configs = [r for r in results if r.is_config]
    row = configs[0].row
    keys = ("metric_error", "metric_error_val", "time_train_s", "time_infer_s")
    split = Split(
        dataset=row["dataset"],
        fold=row["fold"],
        metric=row["metric"],
        problem_type=row["problem_type"],
        rows={r.row["framework"]: {k: r.row.get(k, math.nan) for k in keys} for r in configs},
        types={r.row["framework"]: r.config_type for r in configs},
        y_val=read_back(preds[0].y_val),
        y_test=read_back(preds[0].y_test),
    )
    out.splits.append(split)
    try:
        out.hpo_rows += split_results(split, preds, preds[0].y_val, preds[0].y_test, meta.effective_can_hpo)
    except ValueError as exc:  # a metric the simulation does not compute, a split without results
        raise ActionFailed(
            f"cannot simulate TabArena's HPO results for {split.dataset} split {split.fold}: {exc}; "
            "nothing was written (TA307, ignored in this run, names what can process it)"
        ) from None


def build_tables(results: list, meta: MethodMetadata) -> dict[str, Any]:
    """The processed and results tables (pyarrow), as TabArena 0.1.0 writes them."""
    return {
        "configs": ct.configs_table(results),
        "baselines": ct.baselines_table(results),
        "model_results": ct.model_results_table(results, meta),
    }


def build(job: Job, out: Path) -> Built:
    """Write the whole method cache into ``out`` (:func:`tabarena_checks.engine.api.build`)."""
    meta, index, inference = job.metadata, job.index, job.inference
    if meta.method_type not in ("config", "baseline"):
        raise ActionFailed(
            f"method_type {meta.method_type!r}: only configs and baselines are processed from raw results"
        )
    # worker processes fork while no other thread runs (a lock another thread held at that moment would
    # stay held in the worker): the decoding workers before the raw copy's threads start (see
    # decoding_pool), the HPO simulation's once those threads and the decoding pool have ended
    copied = None
    with decoding_pool(len(index), job.workers) as pool:
        if not job.cache_raw:
            read, written = _tables(index, inference, meta, out, pool, job.task_metadata)
        else:
            with copying_raw(index, inference, meta, out / "raw") as copied:
                read, written = _tables(index, inference, meta, out, pool, job.task_metadata)
    simulated = _hpo_files(read, meta, out)
    if copied is None:
        return Built([*simulated, *written])
    return Built([*simulated, *written, f"raw/ ({len(copied)} results.pkl)"], copied)


def _tables(index, inference, meta: MethodMetadata, out: Path, pool=None, task_metadata=None) -> tuple[Read, list[str]]:
    """metadata.yaml, processed/ and results/ but for the HPO files: the read (for :func:`_hpo_files`) and
    what was written (``task_metadata``: the ``--task-metadata`` table, see :class:`~.api.Job`)."""
    import pyarrow.parquet as pq

    (out / "processed").mkdir(parents=True)
    (out / "results").mkdir()
    read = read_results(index, meta, out / "processed" / "model_predictions", pool)
    if pool is not None:
        pool.shutdown()  # the read's workers leave now: the memory they hold is the tables' to use
    results, tasks = read.results, read.tasks
    tables = build_tables(results, meta)
    pq.write_table(
        task_metadata_table([r.row for r in results], task_metadata), out / "processed" / "task_metadata.parquet"
    )
    pq.write_table(tables["configs"], out / "processed" / "configs.parquet")
    pq.write_table(tables["baselines"], out / "processed" / "baselines.parquet")
    pq.write_table(tables["model_results"], out / "results" / "model_results.parquet")
    hps = configs_hyperparameters(results)
    # json.dump(indent=2) in insertion order, no final newline: TabArena's writer, so the files diff cleanly
    (out / "processed" / "configs_hyperparameters.json").write_text(
        json.dumps(json_value(hps), indent=2), encoding="utf-8"
    )
    (out / "processed" / "metadata.json").write_text(metadata_json(), encoding="utf-8")
    (out / "processed" / "context.json").write_text(context_json(tasks), encoding="utf-8")
    (out / "metadata.yaml").write_text(render_metadata_yaml(meta, inference.validation_protocol), encoding="utf-8")
    return read, [
        f"metadata.yaml (validation_protocol={inference.validation_protocol!r})",
        f"processed/model_predictions/ ({len(tasks)} task splits), processed/context.json, processed/metadata.json",
        f"processed/configs.parquet ({tables['configs'].num_rows} rows)",
        f"processed/baselines.parquet ({tables['baselines'].num_rows} rows)",
        f"processed/configs_hyperparameters.json ({len(hps)} configs)",
        f"results/model_results.parquet ({tables['model_results'].num_rows} rows)",
    ]


def _hpo_files(read: Read, meta: MethodMetadata, out: Path) -> list[str]:
    """results/hpo_results.parquet and results/hpo_trajectories.parquet of a config method.

    The trajectories always include the declared default config; without ``config_default``
    TabArena's own processing stops with an assertion, the native one leaves the file out and
    says so (upload then publishes no trajectories).
    """
    import pyarrow.parquet as pq

    if meta.method_type != "config" or not read.splits:
        return []
    pq.write_table(hpo_results_table(read.hpo_rows, meta), out / "results" / "hpo_results.parquet")
    written = [f"results/hpo_results.parquet ({len(read.hpo_rows)} rows)"]
    default = meta.config_default
    configs = sorted({name for split in read.splits for name in split.rows})
    if default is None:
        return [
            *written,
            "no results/hpo_trajectories.parquet: config_default is not declared (the trajectories "
            "always include the default config; TabArena's own processing stops here)",
        ]
    if default not in configs:
        raise ActionFailed(
            f"config_default {default!r} names no config of the processed results "
            f"({', '.join(configs[:5])}); fix config_default in the method's info.py"
        )
    try:
        rows = trajectory_rows(
            read.splits,
            out / "processed" / "model_predictions",
            configs,
            default,
            f"{meta.effective_model_key}{meta.name_suffix or ''}",
        )
    except ValueError as exc:
        raise ActionFailed(f"cannot simulate TabArena's HPO trajectories: {exc}; nothing was written") from None
    pq.write_table(trajectories_table(rows, meta), out / "results" / "hpo_trajectories.parquet")
    return [*written, f"results/hpo_trajectories.parquet ({len(rows)} rows)"]
