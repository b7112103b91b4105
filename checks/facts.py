"""The public providers a rule declares with :func:`checks.needs`, so no plugin writes its own fact accessor.

An action hands its rules one facts object; which attributes it has depends on the action, and an
attribute that cannot be computed (an unreadable reference, no raw data) raises the project's error
type. A rule bound to several actions asks for a fact by name with :func:`fact`, which gives None in
both cases, so ``@needs`` skips the rule and the rule that owns that input reports why. :func:`at`
places a finding at a ``path:line`` a fact recorded (where a declaration was read from).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from checks.errors import ChecksError
from checks.model import Finding


def provides(facts: Any, name: str) -> bool:
    """Whether ``facts`` offers ``name`` at all, without computing it (a lazy member is not evaluated)."""
    return facts is not None and (hasattr(type(facts), name) or name in getattr(facts, "__dict__", {}))


def fact(name: str) -> Callable[[Any], Any]:
    """A provider of ``ctx.facts.<name>`` for :func:`checks.needs`: None when the action's facts lack it or it
    could not be computed (a :class:`checks.ChecksError`, which the rule owning that input reports)."""

    def provider(ctx: Any) -> Any:
        if not provides(ctx.facts, name):
            return None
        try:
            return getattr(ctx.facts, name)
        except ChecksError:
            return None

    provider.__name__ = provider.__qualname__ = name
    provider.__doc__ = f"``ctx.facts.{name}``, or None when the facts lack it or it could not be computed."
    return provider


def at(source: str | None, message: str) -> Finding:
    """A finding placed at ``source`` when it is a ``path:line``; unplaced otherwise."""
    path, _, line = (source or "").rpartition(":")
    if path and line.isdecimal():
        return Finding(message, path=path, line=int(line))
    return Finding(message)
