"""Make small real TabArena runs, offline, with TabArena 0.1.0's own experiment runner.

Run with the TabArena side environment (never the project's own):

    /work/main/.venv-tabarena/bin/python tests/real_runs/make_real_runs.py [OUT_DIR] [--only NAME ...]

OUT_DIR defaults to tests/fixtures/tabarena_real. What it writes there:

- ``runs/<run>/data/<framework>/<task slug>/<repeat>_<fold>/results.pkl``: what the runner
  wrote, untouched (gzip pickles), one run directory per shape below;
- ``tasks/<slug>.pkl``: each UserTask cache file as ``UserTask.save_task`` wrote it (a pickle
  of the dataset frame, the splits and the ``TabArenaTaskMetadata``), which is what TabArena
  loads a custom task from (``<openml cache>/tabarena_tasks/<slug>.pkl``);
- ``tasks/task_metadata.json``: the same tasks' metadata as plain JSON
  (``TabArenaTaskMetadata.to_dict()``) and ``tasks/task_metadata_legacy.parquet``: the legacy
  one-row-per-dataset frame (``to_legacy_task_metadata``), the ``task_metadata.parquet`` TabArena's
  processing writes for these tasks;
- ``manifest.json``: the versions, the runs made, the shapes tried and why some cannot be made.

``--families`` (``--tasks families``) makes one small run per model family TabArena's bundle
names and AutoGluon fits with an optional library (default OUT_DIR
tests/fixtures/tabarena_real_families): LightGBM (GBM), CatBoost (CAT), XGBoost (XGB), KNN
(TabArena's KNN, TA-KNN), the torch MLP (NN_TORCH), fastai's MLP (FASTAI) and RealMLP
(TabArena's, on pytabkit): each the default config as the v0.1 bundle runs it on the three
tasks, split r0f0 (``<family>_bag``), and the default with the first config of TabArena's
search space on the multiclass task (``<family>_hpo``). It needs an environment holding those libraries besides TabArena (lightgbm,
catboost, xgboost, torch, fastai, pytabkit): the fixtures README says which.

``--tasks mae`` makes the runs on a regression task scored by ``mae`` instead (default OUT_DIR
tests/fixtures/tabarena_real_mae): AutoGluon records its scorer's own name
(``mean_absolute_error``) in the simulation artifacts beside the task's ``mae``, which TabArena
0.1.0 cannot process and the native engine must.

Everything runs in a temporary directory (OpenML cache, model artifacts) and nothing touches
the network: the tasks come from scikit-learn's bundled datasets through TabArena's custom-data
path (``UserTask.create_task`` + ``save_task``). Seeds are fixed everywhere TabArena and
AutoGluon take one, and the script runs itself under ``PYTHONHASHSEED=0``; times and memory
figures still differ from run to run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from importlib.metadata import version
from pathlib import Path

import openml

if __name__ == "__main__" and os.environ.get("PYTHONHASHSEED") != "0":
    # AutoGluon orders some feature lists through sets of strings, whose order follows the
    # per-process hash seed: fix it, or method_metadata.info.features changes from run to run.
    os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})

# Offline before anything imports openml/huggingface.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPENML_OFFLINE", "1")
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.model_selection import RepeatedKFold, RepeatedStratifiedKFold

SEED = 0
N_REPEATS = 2
N_FOLDS = 2
TIME_LIMIT = 60  # seconds per model fit; the fits here take a few seconds
FAMILY_TIME_LIMIT = 600  # seconds per bag of --families (see run_shapes)
ALL_SPLITS = [f"r{r}f{f}" for r in range(N_REPEATS) for f in range(N_FOLDS)]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DEFAULT_OUT = FIXTURES / "tabarena_real"


# ----------------------------------------------------------------------------- tasks
def _frame(loader, n_rows: int | None) -> pd.DataFrame:
    bunch = loader(as_frame=True)
    df = bunch.frame.rename(columns=lambda c: str(c).replace(" ", "_"))
    if n_rows is not None and len(df) > n_rows:
        df = df.sample(n=n_rows, random_state=SEED).reset_index(drop=True)
    return df


def _task_specs() -> list[dict]:
    """The three tasks: binary, multiclass, regression, each 2 repeats x 2 folds."""
    bc = _frame(load_breast_cancer, 160)
    bc["target"] = bc["target"].map({0: "malignant", 1: "benign"})
    wine = _frame(load_wine, None)
    wine["target"] = wine["target"].map({0: "class_0", 1: "class_1", 2: "class_2"})
    # 8 columns are enough and keep the files small.
    wine = wine[[*wine.columns[:8], "target"]]
    diab = _frame(load_diabetes, 160)
    return [
        {"name": "sk_breast_cancer", "df": bc, "problem_type": "classification", "stratify": True},
        {"name": "sk_wine", "df": wine, "problem_type": "classification", "stratify": True},
        {"name": "sk_diabetes", "df": diab, "problem_type": "regression", "stratify": False},
    ]


def _mae_task_specs() -> list[dict]:
    """One regression task scored by ``mae``, AutoGluon's alias of ``mean_absolute_error``."""
    diab = _frame(load_diabetes, 160)
    return [
        {"name": "sk_diabetes_mae", "df": diab, "problem_type": "regression", "stratify": False, "eval_metric": "mae"}
    ]


#: the model families of ``--families``: run name prefix -> TabArena's model name in its experiment bundles.
#: ``<prefix>_bag`` is the default config on the three tasks; ``<prefix>_hpo`` the default and the first
#: config sampled from TabArena's search space, on the multiclass task only.
FAMILIES = {
    "gbm": "LightGBM",
    "cat": "CatBoost",
    "xgb": "XGBoost",
    "knn": "KNN",
    "nn_torch": "TorchMLP",
    "fastai": "FastaiMLP",
    "realmlp": "RealMLP",
}
FAMILY_SHAPES = tuple(f"{prefix}_{kind}" for prefix in FAMILIES for kind in ("bag", "hpo"))

#: --tasks NAME -> (the task specs, the default output directory, the shapes made on them)
TASK_SETS = {
    "default": (_task_specs, DEFAULT_OUT, None),
    "mae": (_mae_task_specs, FIXTURES / "tabarena_real_mae", ("lr_bag_mae",)),
    "families": (_task_specs, FIXTURES / "tabarena_real_families", FAMILY_SHAPES),
}


def make_tasks(specs: list[dict]):
    from tabarena.benchmark.task import UserTask
    from tabarena.benchmark.task.user_task import from_sklearn_splits_to_user_task_splits

    tasks, metas = [], []
    for spec in specs:
        df = spec["df"]
        splitter_cls = RepeatedStratifiedKFold if spec["stratify"] else RepeatedKFold
        splitter = splitter_cls(n_splits=N_FOLDS, n_repeats=N_REPEATS, random_state=SEED)
        splits = from_sklearn_splits_to_user_task_splits(
            splitter.split(df.drop(columns="target"), df["target"]), n_splits=N_FOLDS
        )
        # A standardized UserTask (no explicit path): its task_id_str carries no machine path,
        # and it is cached under <openml cache root>/tabarena_tasks/<slug>.pkl.
        task = UserTask(task_name=spec["name"])
        wrapper = task.create_task(
            dataset=df,
            target_feature="target",
            problem_type=spec["problem_type"],
            splits=splits,
            eval_metric=spec.get("eval_metric"),
        )
        task.save_task(wrapper)
        tasks.append(task)
        metas.append(wrapper.metadata)
    return tasks, metas


# ----------------------------------------------------------------------------- runs
def _bundle(**kwargs):
    from tabarena.benchmark.experiment import TabArenaV0pt1ExperimentBundle

    kwargs.setdefault("verbosity", 0)
    kwargs.setdefault("model_verbosity", None)
    return TabArenaV0pt1ExperimentBundle(**kwargs)


def _experiments(bundle, artifacts: Path, time_limit: int = TIME_LIMIT):
    bundle.model_artifacts_base_path = str(artifacts)
    return bundle.build_experiments(time_limit=time_limit, num_cpus=1, num_gpus=0, memory_limit=4)


def run_shapes():
    """name -> (what it is, a function building its experiments, the job filter).

    The filter goes to ``build_jobs``: ``split_indices`` (``r<repeat>f<fold>``) and, for the
    slower shapes, ``dataset_names``.
    """
    from tabarena.utils.config_utils import CustomAGConfigGenerator, SystemConfigGenerator

    def rf_bag(art):
        # The default config (_c1_) and the first two random configs (_r1_, _r2_) of TabArena's
        # RandomForest search space, bagged 8 folds (the v0.1 protocol).
        return _experiments(_bundle(models=[("RandomForest", 2)]), art)

    def lr_holdout(art):
        return _experiments(_bundle(models=[("Linear", 0)], holdout_experiments=True), art)

    def lr_outer(art):
        return _experiments(_bundle(models=[("Linear", 0)], outer_experiments=True), art)

    def xt_child_oof(art):
        # TabArena's own ExtraTrees configs pin use_child_oof=False; a generator without that
        # pin leaves AutoGluon's default for XT (use_child_oof=True): one child, OOF from the trees.
        from autogluon.tabular.models import XTModel

        gen = CustomAGConfigGenerator(model_cls=XTModel, search_space_func=None, manual_configs=[{}])
        return _experiments(_bundle(models=[(gen, 0)]), art)

    def ag_system(art):
        # TabArena's AutoGluon system wrapper (a baseline), on a small preset and time limit.
        from tabarena.systems.autogluon.system import AutoGluonSystemModel

        gen = SystemConfigGenerator(
            model_cls=AutoGluonSystemModel, name="AutoGluonSystem", manual_configs=[{"preset": "medium_quality"}]
        )
        return _experiments(_bundle(models=[(gen, 0)], system_experiments=True), art, time_limit=30)

    def ag_experiment(art):
        # A whole TabularPredictor fit as one experiment (AGExperiment, the AutoGluon baseline path).
        kwargs = {"fit_kwargs": {"presets": "medium_quality", "hyperparameters": {"LR": {}, "RF": {}}}}
        return _experiments(_bundle(models=[("AutoGluon_mini", kwargs)]), art, time_limit=30)

    def rf_bag_current(art):
        # The current (non-v0.1) bundle defaults: features shuffled, the validation protocol adapted
        # to the task at run time, folds adapted to the number of classes.
        from tabarena.benchmark.experiment import TabArenaExperimentBundle

        bundle = TabArenaExperimentBundle(
            models=[("RandomForest", 0)],
            n_random_configs=0,
            preprocessing_pipelines=["default"],
            text_cache_mode="off",
            verbosity=0,
            model_verbosity=None,
        )
        return _experiments(bundle, art)

    def rf_bag_beyond(art):
        # BeyondArena's bundle: TabArena's own preprocessing pipeline ("tabarena_default").
        from tabarena.benchmark.experiment import BeyondArenaExperimentBundle

        bundle = BeyondArenaExperimentBundle(
            models=[("RandomForest", 0)], text_cache_mode="off", verbosity=0, model_verbosity=None
        )
        return _experiments(bundle, art)

    def lr_bag_mae(art):
        # LinearModel's default and first random config, 8-fold bagged, on the mae-scored task.
        return _experiments(_bundle(models=[("Linear", 1)]), art)

    def family(model, n_random):
        # The model's configs through TabArena's own registry name, as the v0.1 bundle runs them.
        # 600 s, not 60: a bag's limit is shared by its 8 folds, and on a loaded machine the torch MLP gave up
        # a fold (TimeLimitExceeded) when importing torch took 60% of the fold's share, XGBoost when the
        # out-of-fold prediction came after the fold's share.
        return lambda art: _experiments(_bundle(models=[(model, n_random)]), art, time_limit=FAMILY_TIME_LIMIT)

    # dataset_names filters on the dataset name UserTask.create_task gives ("Dataset-<task name>").
    one = {"split_indices": ["r0f0"], "dataset_names": ["Dataset-sk_breast_cancer"]}
    wine = {"split_indices": ["r0f0"], "dataset_names": ["Dataset-sk_wine"]}
    families = {}
    for prefix, model in FAMILIES.items():
        families[f"{prefix}_bag"] = (
            f"{model}, default config, v0.1 bundle",
            family(model, 0),
            {"split_indices": ["r0f0"]},
        )
        families[f"{prefix}_hpo"] = (f"{model}, default + 1 search-space config, v0.1 bundle", family(model, 1), wine)
    return {
        **families,
        "rf_bag": (
            "RandomForest, 8-fold bagged, default + 2 random configs",
            rf_bag,
            {"split_indices": ["r0f0", "r0f1"]},
        ),
        "lr_holdout": ("LinearModel, holdout, default config, 2 repeats", lr_holdout, {"split_indices": ALL_SPLITS}),
        "lr_outer": ("LinearModel, outer fit (no validation), default config", lr_outer, {"split_indices": ["r0f0"]}),
        "xt_child_oof": (
            "ExtraTrees, bagged with AutoGluon's use_child_oof",
            xt_child_oof,
            {"split_indices": ["r0f0"]},
        ),
        "rf_bag_current": (
            "RandomForest, bagged, TabArenaExperimentBundle defaults (dynamic protocol)",
            rf_bag_current,
            {"split_indices": ["r0f0"]},
        ),
        "rf_bag_beyond": (
            "RandomForest, bagged, BeyondArenaExperimentBundle (tabarena_default pipeline)",
            rf_bag_beyond,
            {"split_indices": ["r0f0"]},
        ),
        "ag_system": ("AutoGluon as a system (AutoGluonSystemModel, medium_quality, 30 s)", ag_system, one),
        "ag_experiment": ("AutoGluon TabularPredictor as one experiment (AGExperiment, LR+RF)", ag_experiment, one),
        "lr_bag_mae": (
            "LinearModel, 8-fold bagged, default + 1 random config, on a task scored by mae",
            lr_bag_mae,
            {"split_indices": ["r0f0", "r0f1"]},
        ),
    }


def run_one(name, build, job_filter, *, tasks, collection, work: Path, out: Path) -> dict:
    from tabarena.contexts import AbstractArenaContext

    artifacts = work / "artifacts" / name
    artifacts.mkdir(parents=True, exist_ok=True)
    experiments = build(artifacts)
    context = AbstractArenaContext(task_metadata=collection, methods=[], backend="native")
    expdir = work / "runs" / name
    if "dataset_names" in job_filter:
        # The runner refuses a registered user task that the (filtered) jobs do not cover.
        tasks = [t for t in tasks if t.get_dataset_name() in job_filter["dataset_names"]]
    t0 = time.monotonic()
    context.build_and_run_jobs(
        experiments,
        expname=str(expdir),
        user_tasks=tasks,
        register=False,
        build_kwargs=job_filter,
        debug_mode=True,
    )
    elapsed = time.monotonic() - t0
    dest = out / "runs" / name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(expdir / "data", dest / "data")
    files = sorted(str(p.relative_to(dest)) for p in dest.rglob("results.pkl"))
    return {"experiments": [e.name for e in experiments], "files": len(files), "seconds": round(elapsed, 1)}


# ----------------------------------------------------------------------------- outputs
def save_task_files(tasks, metas, out: Path) -> None:
    from tabarena.benchmark.task.metadata.schema import to_legacy_task_metadata

    tdir = out / "tasks"
    if tdir.exists():
        shutil.rmtree(tdir)
    tdir.mkdir(parents=True)
    for task in tasks:
        shutil.copy2(task.task_path, tdir / task.task_path.name)
    payload = [
        {
            "task_name": t.task_name,
            "slug": t.slug,
            "task_id": t.task_id,
            "task_id_str": t.task_id_str,
            "metadata": m.to_dict(),
        }
        for t, m in zip(tasks, metas)
    ]
    (tdir / "task_metadata.json").write_text(json.dumps(payload, indent=1, sort_keys=True, default=str) + "\n")
    to_legacy_task_metadata(list(metas)).to_parquet(tdir / "task_metadata_legacy.parquet", index=False)


def versions(extra: tuple[str, ...] = ()) -> dict:
    """The versions of what made the runs; ``extra`` names the model libraries of ``--families``."""
    return {
        "python": platform.python_version(),
        **{
            pkg: version(pkg)
            for pkg in (
                "tabarena",
                "autogluon.core",
                "autogluon.tabular",
                "numpy",
                "pandas",
                "scikit-learn",
                "ConfigSpace",
                *extra,
            )
        },
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", type=Path, default=None)
    parser.add_argument("--tasks", choices=sorted(TASK_SETS), default="default", help="the tasks to run on")
    parser.add_argument("--families", action="store_true", help="the model-family runs (the same as --tasks families)")
    parser.add_argument("--only", nargs="*", default=None, help="run only these shapes")
    parser.add_argument("--keep-work", action="store_true", help="keep the temporary directory")
    parser.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "tabarena-real-runs-work",
        help="work directory (emptied first; its path is recorded in the results)",
    )
    args = parser.parse_args(argv)
    if args.families:
        args.tasks = "families"
    specs, default_out, task_shapes = TASK_SETS[args.tasks]
    out: Path = (args.out or default_out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    # A fixed work directory: its path is recorded in the results (default_base_path), so a
    # random one would make every run differ.
    work: Path = args.work.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # Every cache TabArena/OpenML/HF would touch lives in the temporary directory.

    openml.config.set_root_cache_directory(str(work / "openml"))
    os.environ["TABARENA_CACHE"] = str(work / "tabarena-cache")
    np.random.seed(SEED)
    t_start = time.monotonic()
    tasks, metas = make_tasks(specs())
    save_task_files(tasks, metas, out)
    from tabarena.benchmark.task.metadata import TaskMetadataCollection

    collection = TaskMetadataCollection.from_source(list(metas))
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    manifest.setdefault("runs", {})
    shapes = run_shapes()
    claimed = {n for _, _, names in TASK_SETS.values() for n in names or ()}
    for name, (what, build, job_filter) in shapes.items():
        if name not in (task_shapes or set(shapes) - claimed) or (args.only and name not in args.only):
            continue
        print(f"=== {name}: {what}", flush=True)
        try:
            info = run_one(name, build, job_filter, tasks=tasks, collection=collection, work=work, out=out)
            manifest["runs"][name] = {"what": what, "ok": True, **info}
        except Exception as exc:  # record what the runner cannot make, and go on
            traceback.print_exc()
            manifest["runs"][name] = {"what": what, "ok": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
    family_libraries = (
        ("lightgbm", "catboost", "xgboost", "torch", "fastai", "pytabkit") if args.tasks == "families" else ()
    )
    manifest["versions"] = versions(family_libraries)
    python = sys.executable if family_libraries else "/work/main/.venv-tabarena/bin/python"
    manifest["command"] = " ".join([python, "tests/real_runs/make_real_runs.py", *sys.argv[1:]])
    manifest["seconds_total_last_invocation"] = round(time.monotonic() - t_start, 1)
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if not args.keep_work:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"work directory kept: {work}")
    return 0 if all(r.get("ok") for r in manifest["runs"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
