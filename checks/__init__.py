"""arena-checks: the public API for plugins.

A plugin imports from here only: ``hookimpl`` to mark hook implementations, ``rule``
and ``Rule`` to define rules, ``Action`` for things the runner may execute,
``Finding``/``Severity`` for what rules report, and the error types.

The names are resolved on first use (PEP 562), so ``import checks`` costs nothing:
``checks --version`` never imports attrs, pluggy or click.
"""

__version__ = "0.1.0"

TYPE_CHECKING = False  # the typing module costs more to import than this whole package
if TYPE_CHECKING:
    from checks.errors import ActionFailed, ChecksError, ConfigError, InputError, PluginError, UsageError
    from checks.model import Action, Finding, Outcome, Rule, Severity, Verdict, rule
    from checks.plugins import hookimpl

_HOME = {
    "ActionFailed": "checks.errors",
    "ChecksError": "checks.errors",
    "ConfigError": "checks.errors",
    "InputError": "checks.errors",
    "PluginError": "checks.errors",
    "UsageError": "checks.errors",
    "Action": "checks.model",
    "Finding": "checks.model",
    "Outcome": "checks.model",
    "Rule": "checks.model",
    "Severity": "checks.model",
    "Verdict": "checks.model",
    "rule": "checks.model",
    "hookimpl": "checks.plugins",
}

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


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'checks' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
