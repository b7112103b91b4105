"""The entry point ``beyondarena``: BeyondArena's rules and its ``[arenas.beyondarena]`` settings."""

from __future__ import annotations

from checks import hookimpl
from beyondarena_checks import rules, settings


@hookimpl
def checks_rules():
    return rules.RULES


@hookimpl
def checks_config_sections():
    return {settings.ARENA: settings.BeyondArenaSettings}
