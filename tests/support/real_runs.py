"""The runs TabArena 0.1.0's own experiment runner wrote (tests/fixtures/tabarena_real, made by
tests/real_runs/make_real_runs.py), with the declaration a maintainer writes for each: read by the real-runs
tests and published together by the real batch's test."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import FIXTURES

REAL = FIXTURES / "tabarena_real"
TASKS = REAL / "tasks"
TASK_TABLE = TASKS / "task_metadata_legacy.parquet"
#: run -> (method, its declaration as a maintainer writes it after `checks inspect`)
RUNS = {
    "rf_bag": (
        "RandomForest",
        'MethodMetadata.config(method="RandomForest", suite="rf-real", ag_key="RF", '
        'config_default="RandomForest_c1_default_BAG_L1", can_hpo=True, is_bag=True, compute="cpu")',
    ),
    "lr_holdout": (
        "LinearModel",
        'MethodMetadata.config(method="LinearModel", suite="lr-real", ag_key="LR", '
        'config_default="LinearModel_c1_default_HOLDOUT", can_hpo=False, is_bag=False, compute="cpu")',
    ),
    "xt_child_oof": (
        "ExtraTrees",
        'MethodMetadata.config(method="ExtraTrees", suite="xt-real", ag_key="XT", '
        'config_default="ExtraTrees_c1_default_BAG_L1", can_hpo=False, is_bag=False, compute="cpu")',
    ),
    "rf_bag_current": (
        "RandomForest",
        'MethodMetadata.config(method="RandomForest", suite="rf-current", '
        'ag_key="RF", config_default="RandomForest_c1_default_BAG_L1", can_hpo=False, is_bag=True, '
        'compute="cpu")',
    ),
    "lr_outer": (
        "LinearModel_c1_default",
        'MethodMetadata.baseline(method="LinearModel_c1_default", '
        'suite="lr-outer", name="LinearModel_c1_default", compute="cpu")',
    ),
    "ag_system": (
        "AutoGluonSystem_c1_default",
        'MethodMetadata.baseline(method="AutoGluonSystem_c1_default", '
        'suite="ag-system", name="AutoGluonSystem_c1_default", compute="cpu")',
    ),
    "ag_experiment": (
        "AutoGluon_mini",
        'MethodMetadata.baseline(method="AutoGluon_mini", suite="ag-mini", name="AutoGluon_mini", compute="cpu")',
    ),
}
#: runs with a class the reader does not build in a field processing reads: every file is refused, naming it
REFUSED = {
    "rf_bag_beyond": (
        "method_metadata.model_hyperparameters.ag.model_specific_feature_generator_kwargs",
        "tabarena.benchmark.preprocessing.model_specific_default_preprocessing.ModelSpecificFeatureGenerator",
    )
}


def run_data(run: str) -> Path:
    """The data directory of the real run ``run``."""
    return REAL / "runs" / run / "data"
