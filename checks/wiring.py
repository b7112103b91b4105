"""Hook implementations for a plugin package that keeps each workflow step in its own module.

The package's plugin module names its modules; each is imported when what it holds is needed
(a rule judged, an action run, a command asked for), not when ``checks`` starts, and a broken
module is reported through the hook that needed it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

from checks import manifest
from checks.plugins import PRECOMMIT_GROUP, hookimpl


class ModuleWiring:
    """A plugin package's hooks, its modules named and imported only when a hook needs what they hold.

    In the plugin module::

        wiring = ModuleWiring(
            "my_checks",
            rules=("rules_a",),
            actions={"publish": ("publish",)},
            commands={"mine": ("cli:mine_group", "My arena's tools.")},
        )
        checks_rules, checks_actions, checks_commands = wiring.hooks()
        checks_gates = wiring.checks_gates

    Module names are relative to the package. ``rules`` modules each hold a ``RULES`` list (read
    from the package's generated manifest when it has one, :mod:`checks.manifest`). ``actions``
    maps each action module to the actions its ``ACTIONS`` declares, so ``checks run publish``
    imports that module only (a tuple of modules imports every one for any action).

    Commands are declared as a :class:`~checks.LazyGroup` declares its own, the one way a command
    is declared lazily: name -> ``("module:attribute", short help)``, the attribute the command
    or a function that makes it. ``commands`` adds top-level commands (``checks mine``),
    ``precommit`` the plugin's ``checks precommit`` commands
    (``precommit={"lint": ("hooks.lint:lint_command", "Lint FILES.")}``); each module is imported
    when its command runs or shows its help, and ``checks --help`` lists them all from the
    declarations. ``hooks`` names the gates those pre-commit commands judge with
    (``hooks=("precommit-lint",)``), so rules may bind to them; bind ``checks_gates =
    wiring.checks_gates`` in the plugin module to declare them.
    """

    def __init__(
        self,
        package: str,
        *,
        rules: tuple[str, ...] = (),
        actions: tuple[str, ...] | Mapping[str, tuple[str, ...]] = (),
        commands: Mapping[str, tuple[str, str]] | None = None,
        precommit: Mapping[str, tuple[str, str]] | None = None,
        hooks: tuple[str, ...] = (),
    ):
        self.package = package
        self.rule_modules = rules
        #: action module -> the actions it declares (None: not declared, so imported for any name)
        self.action_modules = _named(actions)
        #: top-level command -> ``("module:attribute", short help)``, imported when that command is asked for
        self.commands = self._absolute(commands)
        #: ``checks precommit`` command -> ``("module:attribute", short help)``, likewise
        self.precommit = self._absolute(precommit)
        #: the gate names the pre-commit hooks judge with (``precommit-info``), which rules bind to like actions
        self.gate_hooks = tuple(hooks)

    def _absolute(self, declared: Mapping[str, tuple[str, str]] | None) -> dict[str, tuple[str, str]]:
        return {
            name: (f"{self.package}.{target}", short_help) for name, (target, short_help) in (declared or {}).items()
        }

    def _modules(self, names: tuple[str, ...]) -> list[ModuleType]:
        return [importlib.import_module(f"{self.package}.{name}") for name in names]

    @hookimpl
    def checks_rules(self):
        """The rules of the package's manifest (their checks imported when judged), else of its rule modules."""
        listed = manifest.read(self.package, self.rule_modules)
        if listed is not None:
            return listed
        return [rule for module in self._modules(self.rule_modules) for rule in module.RULES]

    @hookimpl
    def checks_actions(self, name):
        return [action for module in self._modules(_wanted(self.action_modules, name)) for action in module.ACTIONS]

    @hookimpl
    def checks_commands(self, cli, name):
        """Declare the plugin's commands, importing none of their modules (``checks precommit``'s group only
        for that group or every command: it loads the judge)."""
        if self.commands:
            cli.declare(self.commands)
        if self.precommit and name in (None, PRECOMMIT_GROUP):
            from checks import filecheck  # noqa: PLC0415 - start-up: every command (`checks rules` too) loads this module, and filecheck loads the judge; only `checks precommit` needs it

            filecheck.command_group(cli, self.precommit)

    @hookimpl
    def checks_gates(self):
        """The hooks' gate names and the actions ``actions={...}`` names, importing no module."""
        declared = (name for names in self.action_modules.values() if names is not None for name in names)
        return (*self.gate_hooks, *declared)

    def hooks(self):
        """The three hook implementations, to bind as module-level names of the plugin module."""
        return self.checks_rules, self.checks_actions, self.checks_commands


def _named(modules: tuple[str, ...] | Mapping[str, tuple[str, ...]]) -> dict[str, tuple[str, ...] | None]:
    """module -> the names it provides, None where they are not declared."""
    if isinstance(modules, Mapping):
        return {module: tuple(names) for module, names in modules.items()}
    return dict.fromkeys(modules)


def _wanted(modules: Mapping[str, tuple[str, ...] | None], name: str | None) -> tuple[str, ...]:
    """The modules to import for ``name`` (None: every one): those that provide it or do not say what they provide."""
    return tuple(module for module, names in modules.items() if name is None or names is None or name in names)
