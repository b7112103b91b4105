"""Every name a rule binds to must be a gate something registers: an action, or a pre-commit hook's name.

A rule bound to a misspelt action (``actions=("mteb-acept",)``) used to load without a word and
never run: ``checks run mteb-accept`` passed without it, and ``checks config`` showed a phantom
action. The names are checked when the rules are collected, in stages so that a command pays
only for what it needs: the names plugins declare (``checks_gates``, which imports nothing),
then every action (which imports every action module), then what the plugins left unloaded
(blocked, or not autoloaded) would register, since a rule bound to their gates cannot run
without them either. A name none of them knows is a :class:`~checks.errors.UsageError` (exit 2)
naming the plugin, the rule, the name and the closest known one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from checks import suggest
from checks.errors import UsageError
from checks.model import Rule

#: bound to every gate (the framework's own rules)
EVERY_GATE = "*"


def check_bindings(rules: Mapping[str, Rule], stages: Sequence[Callable[[], Iterable[str]]]) -> None:
    """Raise :class:`UsageError` for the first rule bound to a name no stage of ``stages`` knows."""
    missing = [(rule, name) for rule in rules.values() for name in rule.actions if name != EVERY_GATE]
    known: set[str] = set()
    for stage in stages:
        if not missing:
            return
        known.update(stage())
        missing = [(rule, name) for rule, name in missing if name not in known]
    if missing:
        raise UsageError(_message(*missing[0], known))


def _message(rule: Rule, name: str, known: set[str]) -> str:
    hint = suggest.did_you_mean(name, sorted(known))
    return (
        f"plugin {rule.plugin!r}: rule {rule.code} ({rule.name}) is bound to {name!r}, which no loaded plugin "
        f"registers as an action or a pre-commit hook{hint} (known: {', '.join(sorted(known)) or 'none'}); "
        "fix the name in the rule's actions=, or declare the hook's name with checks_gates"
    )
