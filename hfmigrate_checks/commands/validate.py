"""``checks hf validate``: judge a review bundle's drafts for one benchmark, offline, like every other checker.

The drafts are judged by the rules bound to ``hf-validate``: the eval-results hook's (HF102, HF103,
HF201, HF501, HF502, HF503, HF506) under a contract that knows only ``--benchmark-id`` and the
``--task-id`` values, and HF507 (every entry is of that benchmark); so the command prints
``path:line:col: CODE message``, takes ``--format``, the selection and rules.toml, and exits as
docs/cli.md says (a missing bundle or a draft that cannot be parsed: 2). The bundle's own
``validation.txt`` keeps the public skill's PASS/FAIL text (:mod:`hfmigrate_checks.drafts.validate`).
A module of its own so validating a bundle loads neither the Hub client nor the ledger importers.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from checks import UsageError, filecheck, suggest
from checks.io import closest_path
from hfmigrate_checks.facts.constants import VALIDATE_ACTION
from hfmigrate_checks.drafts import precommit

ACTION = VALIDATE_ACTION


def bundle_drafts(bundle: str) -> list[str]:
    """Every ``BUNDLE/drafts/**/.eval_results/*.yaml``, found by the hooks' walk (rules.toml's excludes and git's
    ignores apply; ``--show-files`` lists them), shown relative to the working directory. A bundle without
    ``drafts/``, or without one draft, is the command line's mistake: nothing to judge must not pass."""
    drafts = Path(bundle, "drafts")
    if not drafts.is_dir():
        hint = suggest.hint([closest_path(bundle) if not Path(bundle).exists() else None], show=str)
        raise UsageError(
            f"{drafts}: no such directory{hint} (give the directory `checks run draft --out DIR` wrote, which "
            f"holds drafts/)"
        )
    return filecheck.expand([os.path.relpath(drafts)], precommit.is_draft, "drafts/**/.eval_results/*.yaml")


@filecheck.judging
@click.command("validate")
@click.argument("bundle", type=click.Path())
@click.option("--benchmark-id", required=True, help="Exact benchmark dataset id every entry must name.")
@click.option("--task-id", "task_ids", multiple=True, required=True, help="Allowed task id; repeat for several.")
def validate_cmd(bundle, benchmark_id, task_ids):
    """Judge BUNDLE/drafts/**/.eval_results/*.yaml for one benchmark (path:line:col: CODE message)."""
    contract = precommit.offline_contract(benchmark_id, task_ids)
    paths = bundle_drafts(bundle)
    judged = [s for group in filecheck.by_configuration(paths) for s in precommit.subjects(group, [contract])]
    filecheck.run_command(ACTION, judged)
