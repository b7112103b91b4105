"""The hook specifications: the whole plugin API of arena-checks.

Every hook is prefixed ``checks_``. A plugin implements any subset of them with
``@checks.hookimpl``; an implementation may accept any subset of the documented
arguments (pluggy passes only what it asks for). The built-in ``tabarena_checks`` and
``hfmigrate_checks`` plugins use exactly these hooks, through the same ``checks``
entry-point group a third party would.

The full reference, with examples, is ``docs/hooks.md``; ``tests/docs/test_docs.py`` fails
when a hook here is missing there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # pragma: no cover
    import click

    from checks.config_model import Config
    from checks.context import RunContext
    from checks.model import Action, Rule

hookspec = pluggy.HookspecMarker("checks")

# -------------------------------------------------------------------------
# Configuration hooks: called once, after the plugins are loaded and before
# any rules.toml is read.
# -------------------------------------------------------------------------


@hookspec
def checks_config_sections() -> Mapping[str, type]:
    """Declare the settings a plugin reads from ``[arenas.<name>]`` in rules.toml.

    :return: a mapping from arena name to a frozen attrs class. The keys of that arena's
        table other than ``select``, ``ignore`` and ``rules`` are structured into the
        class with extra keys forbidden, so a misspelt setting is an error with its path.
        The instance is available to rules and actions as ``ctx.settings`` when the
        action's arena matches. Two plugins may not claim the same arena name.

    Use in plugins: return ``{"beyondarena": BeyondArenaSettings}``.
    """


@hookspec
def checks_adjust_config(config: Config) -> Config | None:
    """Adjust the loaded configuration before any run uses it.

    :param config: the configuration as parsed; every implementation is handed the same one
        (one ordinary call through ``pm.hook``; a ``wrapper=True`` implementation, alone or
        not, may change the list of results as pluggy lets it).
    :return: a new :class:`~checks.config_model.Config` (build it with ``attrs.evolve``) or
        ``None`` to keep it. The results are applied in pluggy's call order (the plugin
        registered last first; ``tryfirst``/``trylast`` move one) as the changes each makes
        to ``config`` (:mod:`checks.config_changes`), so additions of two plugins both take
        effect. Required rules stay required whatever is returned: the runner re-checks
        them after this hook.

    Use in plugins: add a default waiver, extend ``ignore`` for an arena, tighten a
    severity.
    """


# -------------------------------------------------------------------------
# Registration hooks: what a plugin contributes.
# -------------------------------------------------------------------------


@hookspec
def checks_rules() -> Iterable[Rule]:
    """Contribute rules.

    :return: an iterable of :class:`~checks.Rule` (usually made with ``@checks.rule``).
        Codes must be unique across all plugins; a clash is an error naming both
        plugins. A plugin that raises here, or returns something other than rules, is
        reported by name.

    Use in plugins: return module-level rules; bind a rule to an action another plugin
    defines by naming that action in ``actions=``. Keep the modules that define rules light
    (heavy libraries imported inside the check functions): ``checks rules`` imports them.
    """


@hookspec
def checks_actions(name: str | None) -> Iterable[Action]:
    """Contribute actions, the things ``checks run ACTION`` may execute once its rules pass.

    :param name: the action asked for (``checks run NAME``), or ``None`` when every action is
        needed (``checks run --help``, ``checks config``). A plugin may return only that one (it
        then imports no module for the others); returning all of them is always right.
    :return: an iterable of :class:`~checks.Action`. Names must be unique across
        plugins. Each action becomes ``checks run <name>`` with its ``params`` as options.

    Use in plugins: return an action whose ``gather`` builds the facts its rules read,
    ``plan`` lists what it would do and ``execute`` does it.
    """


@hookspec
def checks_gates() -> Iterable[str]:
    """Declare the names of the gates this plugin provides, so rules can bind to them.

    :return: an iterable of names: the plugin's pre-commit hooks (the ``action`` its hook command
        judges with, e.g. ``precommit-info``) and, when it can say so without importing them, its
        actions. Every name a rule's ``actions=`` holds must be an action some plugin contributes
        or a name some plugin declares here; anything else is a load error (exit 2) naming the
        plugin, the rule, the name and the closest known one. Actions need not be declared (they
        are then collected, importing every action module, to check the names).

    Use in plugins: ``ModuleWiring(..., hooks=("precommit-mine",))`` declares the hooks and the
    actions named in ``actions={...}``; bind it as ``checks_gates = wiring.checks_gates``.
    """


@hookspec
def checks_commands(cli: click.Group, name: str | None) -> None:
    """Add command-line commands next to ``run``, ``rules``, ``rule``, ``config`` and ``plugins``.

    :param cli: the root ``checks`` group, a :class:`checks.LazyGroup`: call ``cli.add_command(...)``, or
        ``cli.declare({name: ("module:attribute", short help)})`` to declare commands without importing
        them (what ``ModuleWiring(commands=...)`` does).
    :param name: the top-level command the user asked for (``"precommit"``), or ``None``
        when every command is needed (``checks --help``). A plugin may add only that one
        (it then imports no module for the others); adding all of them is always right.
    :return: nothing.

    Called only when a command other than the framework's own is asked for (``checks
    rules`` never calls it). Use in plugins: add a group such as ``checks tabarena ...``.
    Keep heavy imports inside the command functions so the hooks and ``checks rules`` stay fast.
    """


# -------------------------------------------------------------------------
# Run hooks: called by the runner around one ``checks run`` invocation.
# -------------------------------------------------------------------------


@hookspec
def checks_run_finished(ctx: RunContext, record: Mapping[str, Any], rules: Mapping[str, Rule]) -> None:
    """Observe a finished run, after its decision record was written.

    :param ctx: the run context (action, options, facts, verdicts).
    :param record: the decision record exactly as appended to the log (secrets redacted).
    :param rules: every loaded rule by code (e.g. to explain a verdict in a report).
    :return: nothing. A raising implementation is reported as an internal error but
        cannot change what already happened.

    Use in plugins: notify a channel, export metrics, keep a second audit trail.
    """
