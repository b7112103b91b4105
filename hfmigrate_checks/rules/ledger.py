"""HF2xx: values and their trace to the source ledger.

HF201 also gates ``precommit-eval-results`` and ``hf-validate`` (``checks hf validate``) and reads only ``eval_files``.
"""

from __future__ import annotations

from checks import Finding, rule
from hfmigrate_checks.facts.constants import DRAFT, EVAL_FILES, REVIEW_MD, SOURCE_LEDGER


@rule(
    "HF201",
    "values-numeric-finite",
    actions=EVAL_FILES,
    why="The Hub ranks results by `value`; a string, a boolean, NaN or infinity cannot be ranked and "
    "usually means a qualifier such as '71.2*' or 'n/a' was pasted in place of a number.",
    example_fail='- dataset: {id: Idavidrein/gpqa, task_id: diamond}\n  value: "71.2*"',
    example_pass="- dataset: {id: Idavidrein/gpqa, task_id: diamond}\n  value: 71.2",
)
def values_numeric_finite(ctx):
    """Every entry's ``value`` is a finite number (not a string, a boolean, NaN or infinity)."""
    from hfmigrate_checks.drafts.validate import value_problem  # noqa: PLC0415 - start-up: the validator loads the draft models, and `checks rules` loads no hfmigrate_checks.drafts module (tests/core/test_core_startup.py)

    from hfmigrate_checks.evalresults.evalfile import entry_findings  # noqa: PLC0415 - start-up: the info-py hook loads no hfmigrate_checks.evalresults module (tests/core/test_core_startup.py)

    yield from entry_findings(ctx.facts.eval_files, value_problem, "value", unparsed=True)


def traced_rows(facts, label: str, task_id: str, value) -> list:
    """The ledger rows of ``label`` that print ``value`` for a column mapped to ``task_id``."""
    return [
        row
        for row in facts.rows
        if row.source_model == label
        and facts.contract.columns.get(row.source_task) == task_id
        and row.value is not None
        and isinstance(value, (int, float))
        and not isinstance(value, bool)
        and row.value == float(value)
    ]


@rule(
    "HF202",
    "value-traced-to-ledger",
    actions=DRAFT,
    why="A reviewer must be able to find every proposed number where it was published; a value with "
    "no ledger row, or with two candidate rows, cannot be checked against its source.",
    example_fail="value 71.2 for diamond, but the ledger prints 71.2 twice for that model (two variants)",
    example_pass="value 71.2 for diamond <- ledger row 'README.md:L12 column Diamond'",
)
def value_traced_to_ledger(ctx):
    """Every value a draft adds comes from exactly one clean ledger row of that model, with a locator."""
    facts = ctx.facts
    for decision, _proposal, entry in facts.planned_additions:
        dataset = entry.get("dataset") or {}
        task_id, value = dataset.get("task_id"), entry.get("value")
        rows = traced_rows(facts, decision.label, task_id, value)
        where = f"{decision.draft.path}: task {task_id!r} value {value!r}"
        if len(rows) != 1:
            yield Finding(
                f"{where} matches {len(rows)} ledger rows of {decision.label!r} (exactly one needed)",
                target=decision.label,
                path=decision.draft.path,
            )
        elif not rows[0].source_locator.strip():
            yield Finding(f"{where}: its ledger row has no locator", target=decision.label, path=decision.draft.path)


@rule(
    "HF203",
    "every-source-model-in-ledger",
    actions=DRAFT,
    why="A bundle that lists only the drafted models hides the ones that were skipped; every source "
    "model needs a row that says what happened to it and why.",
    example_fail="models.yaml maps 'Foo-7B', but the ledger has no row for it",
    example_pass="every label of the source appears in source-ledger.csv and in one review.md table",
)
def every_source_model_in_ledger(ctx):
    """Every source model (and every model the mapping names) has ledger rows and a row in review.md."""
    facts = ctx.facts
    labels = {row.source_model for row in facts.rows}
    for label in facts.mapped_labels:
        if label not in labels:
            yield Finding(f"the model mapping names {label!r}, which has no row in the ledger", target=label)
    decided = {d.label for d in facts.decisions}
    for label in sorted(labels - decided):
        yield Finding(f"{label!r} is in the ledger but the bundle says nothing about it", target=label)
    review = facts.output_files.get(REVIEW_MD, "")
    ledger_csv = facts.output_files.get(SOURCE_LEDGER, "")
    if ledger_csv.count("\n") - 1 < len(facts.rows):
        yield f"source-ledger.csv has fewer rows than the ledger ({len(facts.rows)})"
    from hfmigrate_checks.drafts.markdown import md_cell  # noqa: PLC0415 - start-up: `checks rules` loads no hfmigrate_checks.drafts module (tests/core/test_core_startup.py)

    for decision in facts.decisions:
        if f"| {md_cell(decision.label)} |" not in review:
            yield Finding(f"review.md has no row for {decision.label!r}", target=decision.label)


@rule(
    "HF204",
    "ledger-columns-mapped",
    actions=DRAFT,
    why="A source column the contract neither maps nor ignores is a score nobody decided about; "
    "mapping it later would silently change what the bundle proposes.",
    example_fail="ledger column 'MMLU-Pro (5-shot)'; contract columns: {Diamond: diamond}",
    example_pass="contract columns: {Diamond: diamond}\nignore_columns: ['MMLU-Pro (5-shot)']",
)
def ledger_columns_mapped(ctx):
    """Every ledger column is either mapped to a task in the contract or listed in its ignore_columns."""
    first_rows: dict = {}  # each undecided column where it is first printed
    for row in ctx.facts.rows:
        if ctx.facts.contract.undecided(row.source_task):
            first_rows.setdefault(row.source_task, row)
    for column, row in first_rows.items():
        yield (
            f"ledger column {column!r} (first at {row.source_locator}) is not in the contract: map it to a "
            f"task id under 'columns' or list it under 'ignore_columns', then re-run `checks hf contract`"
        )


RULES = [values_numeric_finite, value_traced_to_ledger, every_source_model_in_ledger, ledger_columns_mapped]
