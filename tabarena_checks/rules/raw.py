"""TA3xx: the quality of the raw results themselves, before anything is processed.

They read ``ctx.facts.inference`` (see :mod:`tabarena_checks.raw.inference`); the checks of each result's
fields and artifacts (group TA306) are rules of their own, generated in :mod:`tabarena_checks.rules.raw_checks`.
When the raw data cannot be indexed at all, TA302 (required) reports why and the others stay silent.
"""

from __future__ import annotations

import functools
import operator

from checks import ChecksError, Finding, Severity, needs, provides, rule
from tabarena_checks.facts.constants import PROCESS, PROCESS_UPLOAD, SIMULATED
from tabarena_checks.facts.providers import declared_metadata, engine, raw_inference, task_metadata_given

#: how many cells a finding lists before summarising the rest
_SHOWN = 20


def _more(total: int) -> str:
    return f" (and {total - _SHOWN} more; `checks inspect` lists them all)" if total > _SHOWN else ""


@rule(
    "TA301",
    "raw-files-readable",
    actions=PROCESS,
    why="An unreadable file (truncated gzip, not a pickle, a pickle that would import code the reader "
    "does not allow) is a result that silently goes missing from the method.",
    example_fail="data/TA-Nori_c1_BAG_L1/363612/0_0/results.pkl: not gzip or pickle data",
    example_pass="every results.pkl decodes to a dict of builtins and numpy arrays",
)
@needs(raw_inference)
def raw_files_readable(ctx, inference):
    """Every ``results.pkl`` must decode (safely) to a result dict."""
    for path, reason in inference.errors:
        yield Finding(f"cannot be read: {reason}", path=path)


@rule(
    "TA302",
    "single-method",
    actions=PROCESS,
    required=True,
    why="Processing renames every raw result to one method; a directory with several methods would "
    "merge them unless one is chosen (--method, or the one the declaration matches), and one with none "
    "(or that cannot be indexed) has nothing to check.",
    example_fail="data/ holds TA-Nori_c1_BAG_L1/... and TA-Other_c1_BAG_L1/...",
    example_pass="data/ holds only TA-Nori_c1_BAG_L1/, TA-Nori_r1_BAG_L1/, ...",
)
def single_method(ctx):
    """The raw data directory must hold the results of exactly one method."""
    if not provides(ctx.facts, "inference"):
        return
    try:
        inference = ctx.facts.inference
    except ChecksError as exc:
        yield str(exc)
        return
    methods = inference.methods
    if not methods:
        yield "no readable result in the raw data directory: nothing identifies a method (see TA301 for unreadable files)"
    elif len(methods) > 1:
        yield (
            f"the raw data directory holds {len(methods)} methods ({', '.join(methods)}) and the declaration "
            f"matches none of them alone (configs by ag_key, baselines by name); choose the one to process "
            f"with --method PREFIX (e.g. --method {methods[0]}); the others are left alone"
        )


@rule(
    "TA303",
    "coverage-complete",
    actions=PROCESS,
    severity=Severity.WARNING,
    why="A config missing on some task or split is imputed or dropped on the leaderboard; usually a "
    "job failed or was not collected.",
    example_fail="TA-Nori_c1_BAG_L1 has no result for task 363614 split 0_2",
    example_pass="every config has a result for every task and split in the run",
)
@needs(raw_inference)
def coverage_complete(ctx, inference):
    """Every (config, task, split) cell of the run must hold a result."""
    if not inference.missing_cells:
        return
    cells = inference.missing_cells
    shown = "; ".join(f"{config} task {task} split {split}" for config, task, split in cells[:_SHOWN])
    yield f"{len(cells)} (config, task, split) cell(s) have no result: {shown}{_more(len(cells))}"


@rule(
    "TA304",
    "no-duplicate-results",
    actions=PROCESS,
    why="Two results for the same config, task and split (e.g. a rerun copied next to the first run) "
    "make the processed tables depend on file order.",
    example_fail="TA-Nori_c1_BAG_L1 task 363612 split 0_0 in two results.pkl files",
    example_pass="one results.pkl per (config, task, split)",
)
@needs(raw_inference)
def no_duplicate_results(ctx, inference):
    """Each (config, task, split) cell must hold exactly one result."""
    for config, task, split, paths in inference.duplicates:
        yield Finding(
            f"{config} task {task} split {split} has {len(paths)} results: {', '.join(paths)}; "
            f"TabArena's processing refuses the pair: keep the one to publish and move the other(s) "
            f"out of the data directory",
            target=None,
            path=paths[0] if paths else None,
        )


@rule(
    "TA305",
    "prediction-fidelity",
    actions=PROCESS,
    severity=Severity.WARNING,
    why="TabArena rebuilds the stored predictions from the bag children on every load (test: mean of "
    "the children, rtol 5e-4; validation: out-of-fold rows, rtol 1e-5) and overwrites what differs; a "
    "large share of differing rows means the stored predictions are not what was evaluated.",
    example_fail="airfoil_self_noise split 0 TA-Nori_c1_default_BAG_L1: 4.990% of test rows not close",
    example_pass="stored test predictions equal the mean of the per-child predictions",
)
@needs(raw_inference)
def prediction_fidelity(ctx, inference):
    """Stored predictions must match the ones rebuilt from the bag children (test rtol 5e-4, val rtol 1e-5)."""
    for issue in inference.fidelity:
        pct = f"{issue.pct:.3f}% of {issue.kind} rows" if issue.pct is not None else f"some {issue.kind} rows"
        yield Finding(
            f"{issue.dataset} split {issue.split_idx} {issue.framework}: {pct} not close to the "
            f"prediction rebuilt from the bag children",
            path=issue.path,
        )


@rule(
    "TA307",
    "native-simulation-metric",
    actions=PROCESS,
    why="The native engine simulates TabArena's HPO results and trajectories with exact copies of the "
    "metrics it knows (log_loss, roc_auc, rmse as TabArena's simulation computes them; mae as AutoGluon's "
    "scorer does); ensembles scored on any other metric come from AutoGluon's scorers, which only TabArena's "
    "own code runs. Without this rule such a run passed every rule and then failed inside processing, after "
    "every file was decoded. The fix it names is one that works for this run: --engine tabarena only when "
    "TabArena can process it.",
    example_fail="checks run process data/ --method-metadata info.py:nori  # configs scored on 'balanced_accuracy'",
    example_pass="checks run process data/ --method-metadata info.py:nori --engine tabarena  # 'balanced_accuracy'",
)
def native_simulation_metric(ctx):
    """A config method processed by the native engine must be scored on a metric its simulation computes."""

    others = [m for m in _config_metrics(ctx, "native") if m not in SIMULATED]
    if others:
        fix = _other_engine(ctx, raw_inference(ctx), others, SIMULATED)
        yield (
            f"the configs are scored on {', '.join(map(repr, others))}, which the native engine cannot simulate "
            f"TabArena's HPO results for (it computes {', '.join(SIMULATED)}): {fix}"
        )


def _config_metrics(ctx, judged: str) -> tuple[str, ...]:
    """The metrics of a config method processed by the engine ``judged``, none for any other: only configs are
    simulated, and TA103 judges a declaration the results contradict."""
    meta, inference = declared_metadata(ctx), raw_inference(ctx)
    if engine(ctx) != judged or meta is None or inference is None:
        return ()
    return inference.metrics if meta.method_type == inference.method_type == "config" else ()


def _other_engine(ctx, inference, metrics: list[str], simulated: tuple[str, ...]) -> str:
    """The fix for configs the native engine cannot simulate: ``--engine tabarena`` when TabArena can process this
    run, else why it cannot and what can."""
    from tabarena_checks.raw.metric_names import tabarena_loads  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    unloadable = [m for m in metrics if not tabarena_loads(m)]
    if unloadable:
        why = (
            f"nor can TabArena 0.1.0 load results scored on {', '.join(map(repr, unloadable))} (AutoGluon records "
            "its scorer's own name beside it, and TabArena asserts the two equal)"
        )
    elif task_metadata_given(ctx) or _custom_tasks(inference):
        why = (
            "nor can --engine tabarena process it, as the run's tasks are outside the TabArena-v0.1 suite "
            "and TabArena's processing cannot take their metadata (--task-metadata)"
        )
    else:
        return "process with --engine tabarena (TabArena installed in this environment)"
    return f"{why}; rerun the configs on tasks scored by one of {', '.join(simulated)}"


def _custom_tasks(inference) -> bool:
    """Whether any task of the run is outside the TabArena-v0.1 suite (TA309 holds it to --task-metadata)."""
    from tabarena_checks.raw.suite_tasks import TABARENA_V01  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    return any(tid not in TABARENA_V01 and dataset not in _suite_names() for dataset, tid, _, _ in inference.tasks)


@rule(
    "TA308",
    "unread-classes",
    actions=PROCESS_UPLOAD,
    required=True,
    waivable=False,
    why="The reader builds only builtins, numpy arrays and the AutoGluon containers it knows, and never imports "
    "anything a file names, but the raw files are published byte for byte (raw.zip) and TabArena loads them "
    "with pickle: a class outside the reader's allow-list anywhere in a file, even in a field nothing reads "
    "(AutoGluon's model info in method_metadata.info, the runner's own kwargs), would run in whoever loads the "
    "published file. So such a file is refused for process (the run's files) and upload (the cache's raw/), "
    "and the engine and staging read it again and refuse it too: never published with a warning; inspect "
    "shows the class and its field path. "
    "A new AutoGluon or TabArena release that writes another class is taught to the reader, not waived.",
    example_fail="method_metadata.info.children_info.S1F1.hyperparameters holds a autogluon.new.ParamsView",
    example_pass="every value of every results.pkl is a builtin, a numpy array or a known AutoGluon container",
)
def unread_classes(ctx):
    """Every class a results.pkl holds must be one the reader knows, even where nothing reads it.

    Process judges the run's files (the index), upload the cache's raw/ copies it would zip (``raw_unread``).
    """
    if provides(ctx.facts, "raw_unread"):
        found = ctx.facts.raw_unread
    else:
        inference = raw_inference(ctx)
        found = inference.unread if inference is not None else ()  # TA302 (required) says why there is none
    for path, note in found:
        yield Finding(
            f"{note}: refused, since the file is published as it is and loading it with pickle would run "
            "the class; regenerate the result without it, or report the class if TabArena wrote it "
            "(docs/tabarena-data.md lists what the reader loads)",
            path=path,
        )


@rule(
    "TA309",
    "custom-task-metadata",
    actions=PROCESS,
    why="TabArena processes only tasks whose metadata it holds: a task outside the TabArena-v0.1 suite (a "
    "UserTask: its directory a slug, its tid a hash beyond int32) has its results dropped by TabArena's own processing "
    "and no row in the published task_metadata.parquet, which the loaders and leaderboards look tasks up in. "
    "With --task-metadata, every task of the run must have its row there, with the tid, problem type and metric "
    "its results record, since that row is what is published for it.",
    example_fail="task 'sk_wine-2144e56dbe05' (tid 7166390669) is not a task of the TabArena-v0.1 suite",
    example_pass="checks run process data/ --method-metadata info.py:rf --task-metadata tasks.parquet",
)
@needs(raw_inference)
def custom_task_metadata(ctx, inference):
    """Every task outside the TabArena-v0.1 suite needs its metadata (``--task-metadata``), and it must agree."""
    try:
        given = ctx.facts.task_metadata if provides(ctx.facts, "task_metadata") else None
    except ChecksError as exc:
        yield str(exc)
        return
    tabarena = engine(ctx) == "tabarena"
    for task in inference.tasks:
        problem = _task_problem(task, given, tabarena)
        if problem:
            yield problem


def _task_problem(task: tuple, given, tabarena: bool = False) -> str | None:
    """What is wrong with one (dataset, tid, problem_type, metric) of the run against the suite or ``given``
    (``tabarena``: processed by ``--engine tabarena``, which cannot take ``--task-metadata``)."""
    from tabarena_checks.raw.metric_names import same_metric  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)
    from tabarena_checks.raw.suite_tasks import TABARENA_V01  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    dataset, tid, problem_type, metric = task
    if given is None:
        if tid in TABARENA_V01 or dataset in _suite_names():
            return None  # a suite task: TA341-TA344 hold it to the suite's name, problem type and metric
        return (
            f"task {dataset!r} (tid {tid}) is not a task of the TabArena-v0.1 suite, so processing needs its "
            f"metadata: {'process with the native engine (drop --engine tabarena, which cannot take it) and ' if tabarena else ''}"
            "pass --task-metadata FILE, TabArena's task-metadata frame of the run's tasks (in "
            "TabArena's environment: TaskMetadataCollection.from_user_tasks(tasks).to_legacy_df()"
            ".to_parquet(FILE))"
        )
    row = given.rows.get(dataset)
    if row is None:
        return (
            f"task {dataset!r} (tid {tid}) has no row in {given.path} (its 'dataset' column): add the task's "
            "row, or move its results out of the data directory (TabArena drops a task its metadata lacks)"
        )
    for field, theirs, ours, agree in (
        ("tid", row["tid"], tid, operator.eq),
        ("problem_type", row["problem_type"], problem_type, operator.eq),
        ("eval_metric", row.get("eval_metric"), metric, same_metric),
    ):
        if theirs is not None and not agree(theirs, ours):
            return (
                f"task {dataset!r}: {given.path} gives {field} {theirs!r}, its results record {ours!r}; "
                "correct the task metadata (or the results) so the published row describes them"
            )
    return None


@rule(
    "TA310",
    "tabarena-engine-metric",
    actions=PROCESS,
    why="AutoGluon records its scorer's own name (simulation_artifacts.eval_metric, 'mean_absolute_error') beside "
    "the metric the task named ('mae'). TabArena 0.1.0 renames only 'root_mean_squared_error' to 'rmse' and then "
    "asserts the two equal, so its processing stops on the first config scored under any other alias, after the "
    "gate passed. The native engine knows AutoGluon's aliases.",
    example_fail="checks run process data/ --method-metadata info.py:nori --engine tabarena  # configs scored on 'mae'",
    example_pass="checks run process data/ --method-metadata info.py:nori  # configs scored on 'mae'",
)
def tabarena_engine_metric(ctx):
    """A config method processed by ``--engine tabarena`` must be scored under a name TabArena 0.1.0 can load."""
    from tabarena_checks.raw.metric_names import scorer_name, tabarena_loads  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    for metric in (m for m in _config_metrics(ctx, "tabarena") if not tabarena_loads(m)):
        fix = "process with the native engine (drop --engine tabarena)"
        if metric not in SIMULATED:
            fix = f"the native engine cannot simulate it either: rerun the configs on tasks scored by one of {', '.join(SIMULATED)}"
        yield (
            f"the configs are scored on {metric!r}, which AutoGluon records as {scorer_name(metric)!r} in "
            f"simulation_artifacts.eval_metric, and TabArena 0.1.0 cannot load such a result (it asserts the two "
            f"names equal): {fix}"
        )


@functools.cache
def _suite_names() -> frozenset[str]:
    from tabarena_checks.raw.suite_tasks import TABARENA_V01  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    return frozenset(name for name, _ in TABARENA_V01.values())


RULES = [
    raw_files_readable,
    single_method,
    coverage_complete,
    no_duplicate_results,
    prediction_fidelity,
    native_simulation_metric,
    unread_classes,
    custom_task_metadata,
    tabarena_engine_metric,
]
