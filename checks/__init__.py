"""arena-checks: the public API for plugins.

A plugin imports from here only, as the built-in ``tabarena_checks`` and
``hfmigrate_checks`` do (``tests/core/test_core_public_api.py`` holds them to it): ``hookimpl`` to
mark hook implementations, ``rule`` and ``Rule`` to define rules (``needs`` to give a rule its facts, ``fact`` and ``provides`` to ask for
one by name, ``at`` to place a finding at a recorded ``path:line``), ``Action`` for things
the runner may execute, ``ModuleWiring`` to spread a plugin over modules imported when a
hook needs them, ``LazyGroup`` for a command group whose commands are imported when one is asked for, ``Finding``/``Severity`` for what rules report, ``Waiver`` for waivers an
action adds, ``RunContext``/``Verdict``/``Outcome`` for what hooks receive, ``preview`` to
show what a gate would decide, ``ExitCode`` and the error types, ``secret_values`` and
``SECRET_SHAPES`` to keep credentials out of what a plugin writes, and ``main`` to run the
command line in-process. The modules named in ``PUBLIC_MODULES`` are public as a whole
(docs/writing-plugins.md says what each holds; ``tests/core/test_core_public_api.py`` holds the docs' lists
of them to it).

The names are resolved on first use (PEP 562), so ``import checks`` costs nothing:
``checks --version`` never imports attrs, pluggy or click.
"""

import importlib

__version__ = "0.1.0"

TYPE_CHECKING = False  # the typing module costs more to import than this whole package
if TYPE_CHECKING:
    from checks.cli import main
    from checks.config_model import Waiver
    from checks.context import RunContext
    from checks.errors import ActionFailed, ChecksError, ConfigError, InputError, PluginError, UsageError
    from checks.exitcodes import ExitCode
    from checks.facts import at, fact, provides
    from checks.lazygroup import LazyGroup
    from checks.model import Action, Finding, Outcome, Rule, Severity, Verdict, needs, rule
    from checks.plugins import hookimpl
    from checks.redact import SECRET_SHAPES, secret_values
    from checks.runner import Preview, preview
    from checks.wiring import ModuleWiring

_HOME = {
    "ActionFailed": "checks.errors",
    "ChecksError": "checks.errors",
    "ConfigError": "checks.errors",
    "InputError": "checks.errors",
    "PluginError": "checks.errors",
    "UsageError": "checks.errors",
    "ExitCode": "checks.exitcodes",
    "Action": "checks.model",
    "Finding": "checks.model",
    "Outcome": "checks.model",
    "Rule": "checks.model",
    "Severity": "checks.model",
    "Verdict": "checks.model",
    "rule": "checks.model",
    "needs": "checks.model",
    "fact": "checks.facts",
    "provides": "checks.facts",
    "at": "checks.facts",
    "hookimpl": "checks.plugins",
    "ModuleWiring": "checks.wiring",
    "LazyGroup": "checks.lazygroup",
    "RunContext": "checks.context",
    "Waiver": "checks.config_model",
    "Preview": "checks.runner",
    "preview": "checks.runner",
    "SECRET_SHAPES": "checks.redact",
    "secret_values": "checks.redact",
    "main": "checks.cli",
}

#: modules a plugin may import as a whole (``from checks import io``)
PUBLIC_MODULES = (
    "filecheck",
    "htmlreport",
    "io",
    "kit",
    "options",
    "progress",
    "records",
    "suggest",
    "testing",
    "visible",
)

__all__ = sorted(_HOME)


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'checks' has no attribute {name!r}")

    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME, *PUBLIC_MODULES})
