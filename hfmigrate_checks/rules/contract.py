"""HF1xx: the benchmark contract. Drafts only for official benchmarks and declared tasks.

HF102 and HF103 also gate ``precommit-eval-results`` and ``hf-validate`` (``checks hf validate``) and read only the eval-files view
(``eval_files``, ``contract``, ``task_ids``; see :mod:`hfmigrate_checks.facts.eval_files`).
Heavy modules are imported inside the checks so ``checks rules`` stays fast.
"""

from __future__ import annotations

from checks import Finding, rule
from hfmigrate_checks.facts.constants import DRAFT, EVAL_FILES


def benchmark_entries(facts):
    """(file, entry number, entry, task_id) for every entry of the contract's benchmark."""
    contract = facts.contract
    for file in facts.eval_files:
        for n, entry in file.entries():
            dataset = entry.get("dataset")
            if not isinstance(dataset, dict):
                continue
            if contract is not None and dataset.get("id") != contract.benchmark_id:
                continue
            yield file, n, entry, dataset.get("task_id")


@rule(
    "HF101",
    "benchmark-official",
    actions=DRAFT,
    why="A dataset is a Hub benchmark only once Hugging Face lists it as `benchmark:official`; a valid "
    "eval.yaml alone is not enough, and results pointing at an unlisted dataset show up nowhere.",
    example_fail="checks run draft --benchmark-id someone/my-bench ...   # not in the official list",
    example_pass="checks run draft --benchmark-id Idavidrein/gpqa ...    # listed as benchmark:official",
)
def benchmark_official(ctx):
    """The benchmark is in the Hub's official benchmark list now, and the contract was made for it."""
    facts = ctx.facts
    contract = facts.contract
    if contract.benchmark_id != facts.benchmark_id:
        yield (
            f"the contract is for {contract.benchmark_id!r}, not --benchmark-id {facts.benchmark_id!r}: "
            f"make a contract for this benchmark with `checks hf contract`"
        )
    if facts.live.error:
        yield f"could not confirm that {facts.benchmark_id!r} is an official benchmark: {facts.live.error}"
    elif not facts.live.official:
        yield (
            f"{facts.benchmark_id!r} is not in the Hub's official benchmark list (benchmark:official); "
            f"an eval.yaml alone does not make a benchmark"
        )
    if not contract.official:
        yield f"the contract records {contract.benchmark_id!r} as not official at {contract.dataset_sha}"


@rule(
    "HF102",
    "task-ids-exist",
    actions=EVAL_FILES,
    why="`dataset.task_id` must name a task of the benchmark's eval.yaml; the Hub files a result under "
    "that task's leaderboard, and a task the benchmark does not declare has no leaderboard.",
    example_fail="- dataset: {id: Idavidrein/gpqa, task_id: gpqa_diamondd}\n  value: 41.2",
    example_pass="- dataset: {id: Idavidrein/gpqa, task_id: diamond}\n  value: 41.2",
)
def task_ids_exist(ctx):
    """Every task id in the files, and every task the contract maps to, is in the current eval.yaml."""
    facts = ctx.facts
    task_ids = facts.task_ids
    if task_ids is None:
        yield "no benchmark contract was given, so task ids cannot be checked: pass the contract file"
        return
    declared = set(task_ids)
    contract = facts.contract
    if contract is not None:
        for column, task in sorted(contract.columns.items()):
            if task not in declared:
                yield (
                    f"the contract maps column {column!r} to task {task!r}, which the current eval.yaml "
                    f"no longer declares (declared: {', '.join(task_ids)}); re-run `checks hf contract`"
                )
    for file, n, _entry, task_id in benchmark_entries(facts):
        if task_id not in declared:
            yield Finding(
                f"entry {n}: task_id {task_id!r} is not declared in eval.yaml (declared: {', '.join(task_ids)})",
                path=file.path,
                **file.at(n, "dataset.task_id"),
            )


@rule(
    "HF103",
    "no-invented-task",
    actions=EVAL_FILES,
    why="Leaderboards often print an average that the benchmark does not define; filing it under an "
    "invented `overall` or `default` task publishes a number the benchmark never measured.",
    example_fail="columns: {Average: overall}   # eval.yaml declares only diamond, main",
    example_pass="columns: {Diamond: diamond}\nignore_columns: [Average]",
)
def no_invented_task(ctx):
    """No entry, and no contract column, uses an aggregate task (overall/default/...) eval.yaml does not declare."""
    from hfmigrate_checks.source.contract import AGGREGATE_TASKS  # noqa: PLC0415 - start-up: the contract's attrs classes, and the info-py hook loads no hfmigrate_checks.source module (tests/core/test_core_startup.py)

    facts = ctx.facts
    declared = set(facts.task_ids or ())
    if facts.contract is not None:
        for column, task in sorted(facts.contract.columns.items()):
            if task.lower() in AGGREGATE_TASKS and task not in declared:
                yield f"the contract maps column {column!r} to the invented aggregate task {task!r}"
    for file, n, _entry, task_id in benchmark_entries(facts):
        if isinstance(task_id, str) and task_id.lower() in AGGREGATE_TASKS and task_id not in declared:
            yield Finding(
                f"entry {n}: task_id {task_id!r} is an invented aggregate task; the benchmark does not declare it",
                path=file.path,
                **file.at(n, "dataset.task_id"),
            )


RULES = [benchmark_official, task_ids_exist, no_invented_task]
