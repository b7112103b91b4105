"""The entry point ``orgpolicy``: it uses every hook beyondarena does not.

Rules on TabArena's actions and on its own ``orgpolicy-audit`` action, the ``checks
orgpolicy`` command group, ``[arenas.orgpolicy]`` settings, an organisation-wide
``relax`` list applied to the configuration, and an audit trail line per finished run.
"""

from __future__ import annotations

import os

import attrs

from checks import hookimpl
from orgpolicy_checks import audit, rules, settings


@hookimpl
def checks_config_sections():
    return {settings.ARENA: settings.OrgPolicySettings}


@hookimpl
def checks_adjust_config(config):
    """Add the ``relax`` codes to ``ignore``; the core still keeps (or refuses to drop) required rules."""
    relax = settings.of(config).relax
    if not relax:
        return None
    return attrs.evolve(config, ignore=(*config.ignore, *relax))


@hookimpl
def checks_rules():
    return rules.RULES


@hookimpl
def checks_actions():
    return [audit.AUDIT]


@hookimpl
def checks_commands(cli):
    cli.add_command(audit.orgpolicy_group)


@hookimpl
def checks_run_finished(ctx, record):
    audit.append_trail(settings.of(ctx.config).audit_path(os.getcwd()), audit.trail_line(record))
