"""Hook implementations for a plugin package that keeps each workflow step in its own module.

The package's plugin module names its modules; they are imported when a hook is called,
not when ``checks`` starts, so listing rules stays cheap and a broken module is reported
through the hook that needed it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

from checks.plugins import hookimpl


class ModuleWiring:
    """Collects ``RULES`` and ``ACTIONS`` lists and ``register_commands(cli)`` functions from modules of ``package``.

    In the plugin module::

        wiring = ModuleWiring("my_checks", rules=("rules_a",), actions=("publish",), commands=("cli",))
        checks_rules, checks_actions, checks_commands = wiring.hooks()

    ``commands`` may also map each command module to the top-level command names it adds,
    ``commands={"cli": ("mine",), "precommit": ("precommit",)}``: ``checks precommit ...``
    then imports only the modules that add ``precommit`` (a tuple imports every one).
    """

    def __init__(
        self,
        package: str,
        *,
        rules: tuple[str, ...] = (),
        actions: tuple[str, ...] = (),
        commands: tuple[str, ...] | Mapping[str, tuple[str, ...]] = (),
    ):
        self.package = package
        self.rule_modules, self.action_modules = rules, actions
        #: command module -> the top-level names it adds (None: not declared, so imported for any name)
        self.command_modules: dict[str, tuple[str, ...] | None] = (
            {module: tuple(names) for module, names in commands.items()}
            if isinstance(commands, Mapping)
            else dict.fromkeys(commands)
        )

    def _modules(self, names: tuple[str, ...]) -> list[ModuleType]:
        return [importlib.import_module(f"{self.package}.{name}") for name in names]

    @hookimpl
    def checks_rules(self):
        return [rule for module in self._modules(self.rule_modules) for rule in module.RULES]

    @hookimpl
    def checks_actions(self):
        return [action for module in self._modules(self.action_modules) for action in module.ACTIONS]

    @hookimpl
    def checks_commands(self, cli, name):
        wanted = tuple(
            module for module, names in self.command_modules.items() if name is None or names is None or name in names
        )
        for module in self._modules(wanted):
            module.register_commands(cli)

    def hooks(self):
        """The three hook implementations, to bind as module-level names of the plugin module."""
        return self.checks_rules, self.checks_actions, self.checks_commands
