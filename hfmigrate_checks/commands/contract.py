"""``checks hf contract``: pin a benchmark's eval.yaml and record which source column is which task.

It prepares the contract ``checks run draft`` reads; a module of its own so the other
``checks hf`` commands do not load the contract builder.
"""

from __future__ import annotations

import click

from checks import InputError, io
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.source import contract


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
    with ReadOnlyHub.from_env(endpoint=endpoint) as hub:
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
