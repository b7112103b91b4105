"""``checks hf inspect``: what a model repo already holds for a benchmark, one step of ``checks run draft``'s gather.

A module of its own so the other ``checks hf`` commands do not load the repo-state reader.
"""

from __future__ import annotations

import click

from checks import UsageError
from hfmigrate_checks.hub import state
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.source.contract import repo_id_problem


@click.command("inspect")
@click.argument("repo_id")
@click.option("--benchmark-id", required=True, help="The benchmark dataset id to look for.")
@click.option("--endpoint", default=None, help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).")
def inspect_cmd(repo_id, benchmark_id, endpoint):
    """What REPO_ID already holds for the benchmark on main and in pending PRs (read-only)."""
    problem = repo_id_problem(repo_id)
    if problem:
        raise UsageError(problem)
    with ReadOnlyHub.from_env(endpoint=endpoint) as hub:
        found = state.inspect_repo(hub, repo_id, benchmark_id)
    click.echo(f"{repo_id}: {found.status} at {found.sha or 'unknown commit'} (checked {found.checked_at})")
    click.echo(f"  {found.reason}")
    for pr in found.pending_prs:
        mark = "holds the benchmark" if pr.matches_benchmark else "does not hold it"
        click.echo(f"  PR #{pr.num} by {pr.author} ({pr.status}): {mark}")
