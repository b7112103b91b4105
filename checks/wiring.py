"""Hook implementations for a plugin package that keeps each workflow step in its own module.

The package's plugin module names its modules; they are imported when a hook is called,
not when ``checks`` starts, so listing rules stays cheap and a broken module is reported
through the hook that needed it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType

from checks import manifest
from checks.plugins import PRECOMMIT_GROUP, hookimpl


class ModuleWiring:
    """Collects ``RULES`` and ``ACTIONS`` lists and ``register_commands(cli)`` functions from modules of ``package``.

    In the plugin module::

        wiring = ModuleWiring("my_checks", rules=("rules_a",), actions=("publish",), commands=("cli",))
        checks_rules, checks_actions, checks_commands = wiring.hooks()

    ``commands`` may also map each command module to the top-level command names it adds,
    ``commands={"cli": ("mine",), "precommit": ("precommit",)}``: ``checks precommit ...``
    then imports only the modules that add ``precommit`` (a tuple imports every one).
    ``actions`` likewise maps each action module to the actions it declares,
    ``actions={"publish": ("publish",)}``: ``checks run publish`` imports that module only.
    ``precommit`` declares the plugin's ``checks precommit`` commands by name, as a
    :class:`~checks.LazyGroup` declares its commands, the module relative to the package,
    ``precommit={"lint": ("hooks.lint:lint_command", "Lint FILES.")}``: ``checks precommit lint``
    imports that module and no other hook's, of this plugin or another. ``hooks`` names the gates
    those commands judge with (``hooks=("precommit-lint",)``), so rules may bind to them; bind
    ``checks_gates = wiring.checks_gates`` in the plugin module to declare them.
    """

    def __init__(
        self,
        package: str,
        *,
        rules: tuple[str, ...] = (),
        actions: tuple[str, ...] | Mapping[str, tuple[str, ...]] = (),
        commands: tuple[str, ...] | Mapping[str, tuple[str, ...]] = (),
        precommit: Mapping[str, tuple[str, str]] | None = None,
        hooks: tuple[str, ...] = (),
    ):
        self.package = package
        self.rule_modules = rules
        #: action module -> the actions it declares (None: not declared, so imported for any name)
        self.action_modules = _named(actions)
        #: command module -> the top-level names it adds (None: not declared, so imported for any name)
        self.command_modules = _named(commands)
        #: ``checks precommit`` command -> ``("module:attribute", short help)``, imported when that command is asked for
        self.precommit = {
            name: (f"{package}.{target}", short_help) for name, (target, short_help) in (precommit or {}).items()
        }
        #: the gate names the pre-commit hooks judge with (``precommit-info``), which rules bind to like actions
        self.gate_hooks = tuple(hooks)

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
        for module in self._modules(_wanted(self.command_modules, name)):
            module.register_commands(cli)
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
