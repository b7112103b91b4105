"""Run TabArena 0.1.0's own processing and loading, for the parity tests (runs in the TabArena environment).

The test suite runs in the project's environment, which never installs TabArena; the parity and
round-trip tests start this script with the side environment's python (``.venv-tabarena``, built
by ``make test``) and compare what it writes with the native cache. It imports nothing from the
project, so it works with TabArena alone.

    python tabarena_driver.py process DATA_DIR INFO_PY:VARIABLE CACHE_ROOT [--prefix P] [--no-trajectories]
                                      [--user-tasks DIR]
    python tabarena_driver.py infer DATA_DIR OUT_JSON
    python tabarena_driver.py load CACHE_ROOT METHOD SUITE OUT_DIR
    python tabarena_driver.py each JOBS_JSON

``process`` processes the results.pkl files below DATA_DIR (only the experiment directories
starting with ``--prefix`` when given) as ``scripts/run_process_method.py --process --backend
native`` does after its verification, with the defaults of ``process_method`` (raw copy and HPO
trajectories on). With ``--user-tasks DIR`` (a directory of UserTask caches, ``<slug>.pkl`` as
``UserTask.save_task`` writes them) it hands TabArena those tasks' metadata, as a maintainer of a
run on custom tasks must (``process_raw`` alone drops every task outside the suite). ``infer``
writes what ``_infer_from_raw`` (TabArena's inspect) infers from DATA_DIR as JSON. ``load`` reads a cache as a TabArena user does (``MethodMetadata.from_yaml``,
``load_results``, ``load_processed``) and writes what it read to OUT_DIR: ``results.parquet``
(``results.error`` when a results file is missing; ``processed.error`` when the processed tier
does not load, as for any baseline in TabArena 0.1.0),
``configs.parquet``, ``baselines.parquet``, ``configs_hyperparameters.json``, and one
``predictions.npz`` with every config's validation and test predictions and labels per task.
``each`` runs the commands JOBS_JSON lists (a JSON list of argument lists, each starting with the
command) one after another in this one interpreter, so TabArena's import is paid once for several.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import pickle
import sys
from pathlib import Path

import numpy as np


def _metadata(ref: str, cache_root: str):
    path, _, variable = ref.rpartition(":")
    spec = importlib.util.spec_from_file_location("parity_info", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dataclasses.replace(getattr(module, variable), cache_root=cache_root)


def process(args: list[str]) -> None:
    from tabarena.tools.process_local_raw_data import RawMethod, process_raw

    data_dir, ref, cache_root, *flags = args
    prefix = flags[flags.index("--prefix") + 1] if "--prefix" in flags else None
    meta = _metadata(ref, cache_root)
    paths = sorted(Path(data_dir).rglob("results.pkl"))
    if prefix is not None:
        paths = [p for p in paths if p.relative_to(data_dir).parts[0].startswith(prefix)]
    method = RawMethod(path_raw=Path(data_dir), method_metadata=meta)
    if "--user-tasks" not in flags:
        process_raw(
            method,
            cache_raw=True,
            cache_hpo_trajectories="--no-trajectories" not in flags,
            backend="native",
            file_paths=paths,
        )
        return
    from tabarena.end_to_end.end_to_end import EndToEnd

    # process_raw's own call, plus the tasks' metadata it cannot be given
    EndToEnd.from_path_raw(
        path_raw=method.path_raw,
        method_metadata=meta,
        task_metadata=_user_tasks(Path(flags[flags.index("--user-tasks") + 1])),
        name=method.resolved_name,
        model_key=method.resolved_model_key,
        suite=method.resolved_suite,
        file_paths=paths,
        cache=True,
        cache_raw=True,
        cache_processed=True,
        cache_hpo_trajectories="--no-trajectories" not in flags,
        backend="native",
    )


def _user_tasks(directory: Path):
    """The task-metadata collection of the UserTask caches in ``directory``, in the order its task_metadata.json
    lists them (the order a maintainer hands them over, which TabArena keeps in what it writes)."""
    from tabarena.benchmark.task.metadata.collection import TaskMetadataCollection
    from tabarena.benchmark.task.user_task import UserTask

    tasks = []
    for entry in json.loads((directory / "task_metadata.json").read_text()):
        cache = directory / f"{entry['slug']}.pkl"
        with cache.open("rb") as fh:
            name = pickle.load(fh)["metadata"].dataset_name  # our own fixtures: trusted, plain pickle is fine
        task = UserTask(task_name=name.removeprefix("Dataset-"), task_cache_path=directory)
        assert task.task_path == cache, (task.task_path, cache)
        tasks.append(task)
    return TaskMetadataCollection.from_user_tasks(tasks)


def infer(args: list[str]) -> None:
    from tabarena.tools.process_local_raw_data import RawMethod, _infer_from_raw

    data_dir, out = args
    inferred = _infer_from_raw(RawMethod(path_raw=Path(data_dir)), engine="sequential")
    counts = inferred.pop("config_task_counts")
    inferred["config_task_counts"] = None if counts is None else {str(k): int(v) for k, v in counts.items()}
    Path(out).write_text(json.dumps(inferred, default=lambda v: v.item() if hasattr(v, "item") else str(v)))


def load(args: list[str]) -> None:
    from tabarena.models import MethodMetadata

    cache_root, method, suite, out = args
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    meta = MethodMetadata.from_yaml(method=method, suite=suite, cache_root=cache_root)
    try:
        meta.load_results().to_parquet(out / "results.parquet")
    except FileNotFoundError as exc:  # recorded: the test says which caches must have it
        (out / "results.error").write_text(f"{type(exc).__name__}: {exc}")
    try:
        repo = meta.load_processed()
    except ValueError as exc:  # TabArena 0.1.0 cannot load the processed tier of a baseline (no predictions)
        (out / "processed.error").write_text(f"{type(exc).__name__}: {exc}")
        (out / "configs_hyperparameters.json").write_text(json.dumps(meta.load_configs_hyperparameters()))
        return
    context = repo._zeroshot_context
    for name, frame in (("configs", context.df_configs), ("baselines", context.df_baselines)):
        if frame is not None:
            frame.to_parquet(out / f"{name}.parquet")
    (out / "configs_hyperparameters.json").write_text(json.dumps(meta.load_configs_hyperparameters(), sort_keys=True))
    arrays = {}
    configs = repo.configs()
    for dataset in repo.datasets():
        for fold in repo.dataset_to_folds(dataset=dataset):
            if not configs:
                continue
            key = f"{dataset}/{fold}"
            arrays[f"{key}/val"] = repo.predict_val_multi(dataset=dataset, fold=fold, configs=configs)
            arrays[f"{key}/test"] = repo.predict_test_multi(dataset=dataset, fold=fold, configs=configs)
            arrays[f"{key}/label-val"] = np.asarray(repo.labels_val(dataset=dataset, fold=fold))
            arrays[f"{key}/label-test"] = np.asarray(repo.labels_test(dataset=dataset, fold=fold))
    np.savez(out / "predictions.npz", **arrays)
    (out / "summary.json").write_text(
        json.dumps(
            {
                "configs": configs,
                "datasets": repo.datasets(),
                "method_type": meta.method_type,
                "display_name": meta.display_name,
            }
        )
    )


def each(args: list[str]) -> None:
    (jobs,) = args
    for job in json.loads(Path(jobs).read_text()):
        COMMANDS[job[0]](job[1:])


COMMANDS = {"process": process, "load": load, "infer": infer, "each": each}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](sys.argv[2:])
