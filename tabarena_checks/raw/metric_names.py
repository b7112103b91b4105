"""The names a metric goes by, so one metric written under two of its names is judged as one.

A config result names its metric twice: the runner writes the task's ``metric`` as the task spells
it (``mae``), and AutoGluon writes its scorer's own name in ``simulation_artifacts.eval_metric``
(``mean_absolute_error``). AutoGluon registers some scorers under a second name (an alias); the
two names mean one scorer. TabArena 0.1.0 knows one of them (``root_mean_squared_error`` is its
``rmse``), renames the result's metric by it, and asserts the artifacts' names equal to the
result's afterwards, so a run on a task scored by any other alias cannot be loaded by TabArena
at all. The rules and the native engine compare names by the scorer they name instead.

Light on purpose (no import): the rules that compare names read it when they run.
"""

from __future__ import annotations

#: TabArena's own renaming of a metric when it loads a result: the name processing writes in the
#: ``metric`` column (and the only alias TabArena 0.1.0 accepts in the simulation artifacts)
METRIC_ALIASES = {"root_mean_squared_error": "rmse"}

#: AutoGluon's second names for its scorers (``Scorer.add_alias`` in autogluon.core.metrics,
#: AutoGluon 1.6): alias -> the scorer's own name, the one AutoGluon writes as ``eval_metric``
AUTOGLUON_ALIASES = {
    "rmse": "root_mean_squared_error",
    "mse": "mean_squared_error",
    "mae": "mean_absolute_error",
    "mape": "mean_absolute_percentage_error",
    "smape": "symmetric_mean_absolute_percentage_error",
    "pinball": "pinball_loss",
    "acc": "accuracy",
    "nll": "log_loss",
    "pac_score": "pac",
    "roc_auc_ovo_macro": "roc_auc_ovo",
    "roc_auc_ovr_macro": "roc_auc_ovr",
}


def tabarena_name(name: str) -> str:
    """``name`` as TabArena 0.1.0 records it once loaded (``root_mean_squared_error`` becomes ``rmse``)."""
    return METRIC_ALIASES.get(name, name)


def scorer_name(name: str) -> str:
    """The AutoGluon scorer ``name`` stands for: its own name for an alias, ``name`` otherwise."""
    return AUTOGLUON_ALIASES.get(name, name)


def same_metric(a: str, b: str) -> bool:
    """Whether two metric names name one AutoGluon scorer (``mae`` and ``mean_absolute_error`` do)."""
    return scorer_name(a) == scorer_name(b)


def tabarena_loads(metric: str) -> bool:
    """Whether TabArena 0.1.0 can load a config result scored on ``metric``: AutoGluon writes its scorer's own
    name beside it (``simulation_artifacts.eval_metric``), which TabArena asserts equal to ``metric`` after its
    own renaming, so any alias but ``rmse`` fails (``mae`` beside ``mean_absolute_error``)."""
    return tabarena_name(scorer_name(metric)) == tabarena_name(metric)
