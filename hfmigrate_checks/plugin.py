"""The Hugging Face migration plugin: registered through the ``checks`` entry point like any third party.

Each workflow step lives in its own sub-package (source, hub, drafts, rules); this file only names
the modules that hold rules, actions and commands. Modules keep heavy
imports (duckdb, pyarrow, huggingface_hub) inside functions so ``checks rules`` stays fast.
"""

from checks import ModuleWiring
from hfmigrate_checks.facts.constants import DRAFT_ACTION, PRECOMMIT_ACTION, VALIDATE_ACTION

wiring = ModuleWiring(
    "hfmigrate_checks",
    rules=("rules.contract", "rules.ledger", "rules.drafts", "rules.hub"),
    actions={"drafts.action": (DRAFT_ACTION,)},
    commands={
        "hf": (
            "cli:hf_group",
            "Hugging Face .eval_results migration (read-only): contract, ledger, resolve, inspect, validate.",
        )
    },
    hooks=(PRECOMMIT_ACTION, VALIDATE_ACTION),
    precommit={
        "eval-results": (
            "drafts.precommit:eval_results_command",
            "Check .eval_results/*.yaml FILES offline (read-only; path:line:col: CODE message).",
        ),
    },
)
checks_rules, checks_actions, checks_commands = wiring.hooks()
checks_gates = wiring.checks_gates
