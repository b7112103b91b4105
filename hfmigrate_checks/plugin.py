"""The Hugging Face migration plugin: registered through the ``checks`` entry point like any third party.

Each workflow step lives in its own module; this file only names them. Modules keep heavy
imports (duckdb, pyarrow, huggingface_hub) inside functions so ``checks rules`` stays fast.
"""

from checks import ModuleWiring

wiring = ModuleWiring(
    "hfmigrate_checks",
    rules=("rules_contract", "rules_ledger", "rules_drafts", "rules_hub"),
    actions=("draft_action",),
    commands={"cli": ("hf",), "precommit": ("precommit",)},
)
checks_rules, checks_actions, checks_commands = wiring.hooks()
