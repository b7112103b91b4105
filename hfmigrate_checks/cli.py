"""``checks hf ...``: the steps of the migration that are not gated actions.

contract and ledger prepare the inputs of ``checks run draft``; resolve and inspect show
one step of its gather for single models; validate checks a bundle.

Everything here reads; the Hub is only ever asked through the read-only client.
"""

from __future__ import annotations

import os

import click

from checks import InputError, UsageError, io
from hfmigrate_checks.drafts import validate
from hfmigrate_checks.hub import resolve, state
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.source import contract, ledger
from hfmigrate_checks.source.contract import repo_id_problem


@click.command("contract")
@click.argument("benchmark_id")
@click.option("--revision", default=None, help="Dataset revision to pin (default: the current main commit).")
@click.option(
    "--mapping",
    required=True,
    type=click.Path(dir_okay=False),
    help="YAML: metric, direction, unit, columns (source column -> task id), ignore_columns, ...",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="contract.json to write.")
@click.option("--endpoint", default=None, help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).")
def contract_cmd(benchmark_id, revision, mapping, out, endpoint):
    """Pin BENCHMARK_ID's eval.yaml, confirm it is official, and record the source -> task contract."""
    with _read_only_hub(endpoint) as hub:
        result = contract.build(hub, benchmark_id, mapping, revision)
    if not result.official:
        raise InputError(
            f"{benchmark_id} is not in the Hub's official benchmark list (benchmark:official); an eval.yaml alone "
            f"does not make a benchmark, so no contract was written"
        )
    io.write_text(out, result.to_json())
    click.echo(
        f"contract for {benchmark_id} at {result.dataset_sha}: tasks {', '.join(result.task_ids)}; "
        f"{len(result.columns)} mapped column(s) -> {out}"
    )


@click.command("ledger")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["csv", "markdown", "parquet"]),
    required=True,
    help="csv: a CSV table; markdown: a table in a README/blog; parquet: a leaderboard dataset file "
    "(.parquet, or .csv) read with DuckDB.",
)
@click.option("--heading", default=None, help="Markdown: the heading the table sits under (its text, any level).")
@click.option(
    "--table",
    "table",
    type=click.IntRange(1),
    default=None,
    help="Markdown: which of several tables under the heading (1 = the first in the file).",
)
@click.option("--source-url", default="", help="The page that publishes these numbers (becomes source.url).")
@click.option("--model-column", default=None, help="Column with the model label (default: the first).")
@click.option("--variant-column", default=None, help="Column with the run variant (tools, shots, ...), if any.")
@click.option(
    "--task-column",
    default=None,
    help="Long tables: the column naming the task of each score; with --models-as-columns: the column "
    "naming the benchmark of each row (default: the first).",
)
@click.option("--value-column", default=None, help="Long tables: the column holding the score.")
@click.option("--ignore-column", "ignore_columns", multiple=True, help="A column that is not a score; repeatable.")
@click.option(
    "--models-as-columns/--models-as-rows",
    "models_as_columns",
    default=None,
    help="Whether each column after the first is a model (a model card's table: benchmarks down the "
    "first column) or each row is; unset, a table that looks transposed is refused, not guessed.",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="ledger.csv to write.")
def ledger_cmd(
    source,
    fmt,
    heading,
    table,
    source_url,
    model_column,
    variant_column,
    task_column,
    value_column,
    ignore_columns,
    models_as_columns,
    out,
):
    """One ledger row per published score of SOURCE, exactly as printed, with a locator."""
    if source_url and not source_url.startswith(("http://", "https://")):
        raise click.BadParameter(f"must be an absolute http(s) URL (got {source_url!r})", param_hint="--source-url")
    rows = ledger.import_source(
        source,
        fmt,
        heading=heading,
        table=table,
        source_url=source_url,
        model_column=model_column,
        variant_column=variant_column,
        task_column=task_column,
        value_column=value_column,
        ignore_columns=ignore_columns,
        models_as_columns=models_as_columns,
    )
    ledger.write(out, rows)
    review = sum(r.status != ledger.OK for r in rows)
    models = len({r.source_model for r in rows})
    click.echo(f"{len(rows)} score(s) of {models} model(s), {review} need review -> {out}")


@click.command("validate")
@click.argument("bundle", type=click.Path())
@click.option("--benchmark-id", required=True, help="Exact benchmark dataset id.")
@click.option("--task-id", "task_ids", multiple=True, required=True, help="Allowed task id; repeat for several.")
def validate_cmd(bundle, benchmark_id, task_ids):
    """Validate BUNDLE/drafts/**/.eval_results/*.yaml (PASS/FAIL per file; exit 0 all passed, 1 otherwise)."""
    text, code = validate.validate_bundle(bundle, benchmark_id, task_ids)
    click.echo(text, nl=False)
    raise SystemExit(code)


def _read_only_hub(endpoint):

    return ReadOnlyHub(endpoint or os.environ.get("HF_ENDPOINT") or None, os.environ.get("HF_TOKEN") or None)


@click.command("resolve")
@click.argument("labels", nargs=-1, required=True)
@click.option("--mapping", default=None, type=click.Path(dir_okay=False), help="models.yaml: label -> repo entries.")
@click.option("--candidate", "candidates", multiple=True, help="A repo id printed next to the label; repeatable.")
@click.option("--endpoint", default=None, help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).")
def resolve_cmd(labels, mapping, candidates, endpoint):
    """Classify each source model LABEL against the Hub: exact, ambiguous, not_on_hub, mismatch, ... (read-only)."""
    entries = resolve.load_mapping(mapping) if mapping else {}
    with _read_only_hub(endpoint) as hub:
        for label in labels:
            res = resolve.resolve(
                hub, label, candidates, api_only=resolve.api_only_evidence(label) or False, mapped=entries.get(label)
            )
            click.echo(f"{label}: {res.status}" + (f" -> {res.repo_id} @ {res.sha}" if res.repo_id else ""))
            click.echo(f"  evidence: {res.evidence}")
            for checked in res.candidates_checked:
                click.echo(f"  checked: {checked}")


@click.command("inspect")
@click.argument("repo_id")
@click.option("--benchmark-id", required=True, help="The benchmark dataset id to look for.")
@click.option("--endpoint", default=None, help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).")
def inspect_cmd(repo_id, benchmark_id, endpoint):
    """What REPO_ID already holds for the benchmark on main and in pending PRs (read-only)."""
    problem = repo_id_problem(repo_id)
    if problem:
        raise UsageError(problem)
    with _read_only_hub(endpoint) as hub:
        found = state.inspect_repo(hub, repo_id, benchmark_id)
    click.echo(f"{repo_id}: {found.status} at {found.sha or 'unknown commit'} (checked {found.checked_at})")
    click.echo(f"  {found.reason}")
    for pr in found.pending_prs:
        mark = "holds the benchmark" if pr.matches_benchmark else "does not hold it"
        click.echo(f"  PR #{pr.num} by {pr.author} ({pr.status}): {mark}")


def register_commands(cli: click.Group) -> None:
    """Add the commands to the root's ``hf`` group (created here unless another HF module made it)."""
    group = cli.commands.get("hf")
    if group is None:
        group = click.Group(
            "hf", help="Hugging Face .eval_results migration (read-only): contract, ledger, resolve, inspect, validate."
        )
        cli.add_command(group)
    for command in (contract_cmd, ledger_cmd, resolve_cmd, inspect_cmd, validate_cmd):
        group.add_command(command)
