"""``checks hf validate``: check a review bundle's drafts, file by file, without the Hub.

A module of its own so validating a bundle loads the validator only, not the Hub client or
the ledger importers of the other ``checks hf`` commands.
"""

from __future__ import annotations

import click

from hfmigrate_checks.drafts import validate


@click.command("validate")
@click.argument("bundle", type=click.Path())
@click.option("--benchmark-id", required=True, help="Exact benchmark dataset id.")
@click.option("--task-id", "task_ids", multiple=True, required=True, help="Allowed task id; repeat for several.")
def validate_cmd(bundle, benchmark_id, task_ids):
    """Validate BUNDLE/drafts/**/.eval_results/*.yaml (PASS/FAIL per file; exit 0 all passed, 1 otherwise)."""
    text, code = validate.validate_bundle(bundle, benchmark_id, task_ids)
    click.echo(text, nl=False)
    raise SystemExit(code)
