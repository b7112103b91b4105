"""The Hugging Face migration plugin: registered through the ``checks`` entry point like any third party.

Each workflow step lives in its own module; this file only wires their contributions
into the hooks. Modules are imported when a hook is called, never at import time of
``checks`` itself, and they keep heavy imports (duckdb, pyarrow, huggingface_hub) inside
functions so ``checks rules`` stays fast.
"""

from __future__ import annotations

import importlib

from checks import hookimpl

#: modules that define a module-level ``RULES`` list
RULE_MODULES: tuple[str, ...] = ("rules_contract", "rules_ledger", "rules_drafts", "rules_hub")
#: modules that define a module-level ``ACTIONS`` list
ACTION_MODULES: tuple[str, ...] = ("draft_action",)
#: modules that define ``register_commands(cli)``
COMMAND_MODULES: tuple[str, ...] = ("cli", "precommit")


def _modules(names: tuple[str, ...]):
    return [importlib.import_module(f"hfmigrate_checks.{name}") for name in names]


@hookimpl
def checks_rules():
    return [rule for module in _modules(RULE_MODULES) for rule in module.RULES]


@hookimpl
def checks_actions():
    return [action for module in _modules(ACTION_MODULES) for action in module.ACTIONS]


@hookimpl
def checks_commands(cli):
    for module in _modules(COMMAND_MODULES):
        module.register_commands(cli)
