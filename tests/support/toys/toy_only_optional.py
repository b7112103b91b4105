"""The toy action with only optional rules, to test an empty selection."""

from checks import hookimpl
from toy_plugin import ACTION, must_not_fail


@hookimpl
def checks_rules():
    return [must_not_fail]


@hookimpl
def checks_actions():
    return [ACTION]
