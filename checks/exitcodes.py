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


def exit_code_for(exc: BaseException) -> ExitCode:
    """Map an exception that ended a command to its exit code."""
    if isinstance(exc, errors.NoRulesSelected):
        return ExitCode.NO_RULES
    if isinstance(exc, errors.ActionFailed):
        return ExitCode.ACTION_FAILED
    if isinstance(exc, errors.PluginLoadError):
        return ExitCode.USAGE_ERROR
    if isinstance(exc, errors.PluginError):
        return ExitCode.INTERNAL_ERROR
    if isinstance(exc, errors.ChecksError):
        return ExitCode.USAGE_ERROR
    if isinstance(exc, click.UsageError):
        return ExitCode.USAGE_ERROR
    if isinstance(exc, click.ClickException):
        return ExitCode.USAGE_ERROR
    return ExitCode.INTERNAL_ERROR
