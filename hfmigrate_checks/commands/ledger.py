"""``checks hf ledger``: import a leaderboard's published scores into a ledger file, one row per score.

It prepares the ledger ``checks run draft`` reads; a module of its own because the importers
(CSV, markdown and HTML tables, DuckDB for parquet) are the heaviest part of ``checks hf``.
"""

from __future__ import annotations

import click

from checks.visible import safe_lines
from hfmigrate_checks.source import ledger, uncertainty


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
    "--drop-column",
    "drop_columns",
    multiple=True,
    help="A column left out of the ledger, stating that it does not change what was run (the review "
    "bundle lists it); repeatable. An ignored column's cells still qualify the row's scores.",
)
@click.option(
    "--uncertainty-column",
    "uncertainty_columns",
    multiple=True,
    help="SCORE=COLUMN: COLUMN holds the uncertainty (stderr, CI) of the scores in SCORE; repeatable. "
    "Columns named like stderr, std, se or ci are paired by name; the pairings are printed.",
)
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
    drop_columns,
    uncertainty_columns,
    models_as_columns,
    out,
):
    """One ledger row per published score of SOURCE, exactly as printed, with a locator."""
    if source_url and not source_url.startswith(("http://", "https://")):
        raise click.BadParameter(f"must be an absolute http(s) URL (got {source_url!r})", param_hint="--source-url")
    notices: list[str] = []
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
        drop_columns=drop_columns,
        uncertainty_columns=uncertainty.parse_option(uncertainty_columns),
        models_as_columns=models_as_columns,
        notices=notices,
    )
    for notice in notices:
        click.echo(safe_lines(notice), err=True)
    ledger.write(out, rows)
    for pairing in uncertainty.pairings(rows):
        click.echo(f"uncertainty column paired with its score column: {pairing}")
    review = sum(r.status != ledger.OK for r in rows)
    models = len({r.source_model for r in rows})
    click.echo(f"{len(rows)} score(s) of {models} model(s), {review} need review -> {out}")
