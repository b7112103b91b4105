"""``checks hf ...``: the steps of the migration that are not gated actions, declared by name.

contract and ledger prepare the inputs of ``checks run draft``; resolve and inspect show
one step of its gather for single models; validate checks a bundle. Each lives in its own
module of ``hfmigrate_checks.commands``, imported only when that command runs or shows its
help (a ``checks.LazyGroup``), so ``checks hf validate`` loads the validator and not the Hub
client or the ledger importers; ``checks hf --help`` lists them from the short help here.
"""

from __future__ import annotations


from checks import LazyGroup

#: command -> (where it lives, its short help: the first sentence of its help, held equal by tests/cli/test_cli_lazy.py)
COMMANDS = {
    "contract": (
        "hfmigrate_checks.commands.contract:contract_cmd",
        "Pin BENCHMARK_ID's eval.yaml, confirm it is official, and record the source -> task contract.",
    ),
    "ledger": (
        "hfmigrate_checks.commands.ledger:ledger_cmd",
        "One ledger row per published score of SOURCE, exactly as printed, with a locator.",
    ),
    "resolve": (
        "hfmigrate_checks.commands.resolve:resolve_cmd",
        "Classify each source model LABEL against the Hub: exact, ambiguous, not_on_hub, mismatch, ...",
    ),
    "inspect": (
        "hfmigrate_checks.commands.inspect:inspect_cmd",
        "What REPO_ID already holds for the benchmark on main and in pending PRs (read-only).",
    ),
    "validate": (
        "hfmigrate_checks.commands.validate:validate_cmd",
        "Judge BUNDLE/drafts/**/.eval_results/*.yaml for one benchmark (path:line:col: CODE message).",
    ),
}


def hf_group() -> LazyGroup:
    """The ``hf`` group, its commands declared, none imported (``plugin.py`` declares the group itself)."""
    return LazyGroup(
        "hf",
        help="Hugging Face .eval_results migration (read-only): contract, ledger, resolve, inspect, validate.",
        lazy_commands=COMMANDS,
    )
