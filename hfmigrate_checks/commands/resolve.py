"""``checks hf resolve``: which Hub repo each source model label names, one step of ``checks run draft``'s gather.

A module of its own so the other ``checks hf`` commands do not load the resolver.
"""

from __future__ import annotations

import click

from hfmigrate_checks.hub import resolve
from hfmigrate_checks.hub.client import ReadOnlyHub


@click.command("resolve")
@click.argument("labels", nargs=-1, required=True)
@click.option("--mapping", default=None, type=click.Path(dir_okay=False), help="models.yaml: label -> repo entries.")
@click.option("--candidate", "candidates", multiple=True, help="A repo id printed next to the label; repeatable.")
@click.option("--endpoint", default=None, help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).")
def resolve_cmd(labels, mapping, candidates, endpoint):
    """Classify each source model LABEL against the Hub: exact, ambiguous, not_on_hub, mismatch, ... (read-only)."""
    entries = resolve.load_mapping(mapping) if mapping else {}
    with ReadOnlyHub.from_env(endpoint=endpoint) as hub:
        for label in labels:
            res = resolve.resolve(
                hub, label, candidates, api_only=resolve.api_only_evidence(label) or False, mapped=entries.get(label)
            )
            click.echo(f"{label}: {res.status}" + (f" -> {res.repo_id} @ {res.sha}" if res.repo_id else ""))
            click.echo(f"  evidence: {res.evidence}")
            for checked in res.candidates_checked:
                click.echo(f"  checked: {checked}")
