"""arena-checks: the public API for plugins.

A plugin imports from here only: ``hookimpl`` to mark hook implementations, ``rule``
and ``Rule`` to define rules, ``Action`` for things the runner may execute,
``Finding``/``Severity`` for what rules report, and the error types.
"""

__version__ = "0.1.0"

from checks.errors import ActionFailed, ChecksError, ConfigError, InputError, PluginError, UsageError
from checks.model import Action, Finding, Outcome, Rule, Severity, Verdict, rule
from checks.plugins import hookimpl

__all__ = [
    "Action",
    "ActionFailed",
    "ChecksError",
    "ConfigError",
    "Finding",
    "InputError",
    "Outcome",
    "PluginError",
    "Rule",
    "Severity",
    "UsageError",
    "Verdict",
    "hookimpl",
    "rule",
]
