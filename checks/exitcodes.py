"""Exit codes of the ``checks`` command, and the one place that maps exceptions to them."""

from __future__ import annotations

import enum

import click

from checks import errors


class ExitCode(enum.IntEnum):
    #: the rules passed and the action ran, or a dry run found nothing blocking
    OK = 0
    #: at least one error verdict blocked the action
    BLOCKED = 1
    #: the command line or the configuration is wrong
    USAGE_ERROR = 2
    #: an internal error, a crashed rule or a broken plugin
    INTERNAL_ERROR = 3
    #: the rules passed but the action itself failed
    ACTION_FAILED = 4
    #: the selection left no rule to evaluate for the action
    NO_RULES = 5


#: the exit code of each error type, the first match winning: a subclass stands before its base
_EXIT_CODES: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (errors.NoRulesSelected, ExitCode.NO_RULES),
    (errors.ActionFailed, ExitCode.ACTION_FAILED),
    (errors.PluginLoadError, ExitCode.USAGE_ERROR),
    (errors.PluginError, ExitCode.INTERNAL_ERROR),
    (errors.ChecksError, ExitCode.USAGE_ERROR),
    (click.ClickException, ExitCode.USAGE_ERROR),
)


def exit_code_for(exc: BaseException) -> ExitCode:
    """Map an exception that ended a command to its exit code; anything unnamed is an internal error."""
    return next((code for kind, code in _EXIT_CODES if isinstance(exc, kind)), ExitCode.INTERNAL_ERROR)
