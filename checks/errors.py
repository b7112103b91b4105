"""The project's own error types: user mistakes end as a few clear lines, never a traceback."""

from __future__ import annotations


class ChecksError(Exception):
    """Base of every error the user can fix; the message says what, where and how to fix it."""


class UsageError(ChecksError):
    """A command line that cannot work (bad option, missing path, unknown action)."""


class ConfigError(ChecksError):
    """A rules.toml (or other configuration) that does not parse or validate."""


class PluginError(ChecksError):
    """A plugin that cannot be loaded or that implements a hook wrongly."""


class PluginLoadError(PluginError):
    """A plugin declared something wrongly (a rule outside its namespace, ...): a mistake its author fixes,
    exit 2 like any configuration error, where a plugin that raises is a crash (exit 3)."""


class InputError(ChecksError):
    """An input file (raw results, info.py, ledger, YAML) that cannot be read as expected."""


class ActionFailed(ChecksError):
    """The action itself failed after its rules passed (upload refused by the server, ...)."""


class NoRulesSelected(ChecksError):
    """The selection left no rule for the action: an empty gate is not a pass."""


class MissingDependency(UsageError):
    """A command needs a module this installation left out (a light install without the extra)."""
