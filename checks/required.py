"""What a configuration may not do to a required rule: ignore it, lower it, or waive it for good.

Its own module because every command that reads a configuration refuses the same mistakes
(``checks run``, the hooks, ``checks config`` and ``checks rules``), and ``checks rules`` must not
load the judge to do so.
"""

from __future__ import annotations

import datetime as dt

from checks.config_model import Config
from checks.errors import ConfigError
from checks.model import Rule, Severity


def check_required(rule: Rule, severity: Severity, ignore: set[str], config: Config) -> None:
    """Raise :class:`ConfigError` if ``config`` ignores, lowers or (when it may not be) waives a required rule:
    a required rule gates every run, so a configuration that would silence it is refused up front."""
    per_file = any(rule.code in p.codes for p in config.per_file_ignores)
    if rule.code in ignore or per_file:
        key = config.key("per-file-ignores" if per_file else "ignore")
        raise ConfigError(
            f"{config.path}: {key}: {rule.code} ({rule.name}) is a required rule and cannot be "
            f"ignored; add a [[waivers]] entry with a reason, owner and expiry instead"
        )
    if severity is not Severity.ERROR:
        raise ConfigError(
            f"{config.path}: rules.{rule.code}.severity: {rule.code} ({rule.name}) is required; "
            f"its severity must stay 'error' (got {severity.value!r})"
        )
    if not rule.waivable and any(w.rule == rule.code for w in config.waivers):
        raise ConfigError(
            f"{config.path}: waivers: {rule.code} ({rule.name}) guards the machine and the published "
            f"files and cannot be waived; fix what it reports instead"
        )
    check_strict_waivers(rule, config, "a required rule")


#: the longest a waiver of a required rule or a publishing gate may run: it is renewed, with its reason
#: read again, each year
MAX_REQUIRED_WAIVER_DAYS = 366


def check_strict_waivers(rule: Rule, config: Config, kind: str) -> None:
    """A waiver of a required rule or a publishing gate (``kind`` says which) names what it excuses (no glob)
    and ends within a year: a gate every run needs, or one guarding what is published, is never switched
    off for everything, or for good."""
    latest = dt.date.today() + dt.timedelta(days=MAX_REQUIRED_WAIVER_DAYS)
    for i, waiver in enumerate(config.waivers):
        if waiver.rule not in rule.names:  # a waiver of the rule's group waives it too
            continue
        if any(c in waiver.target for c in "*?["):
            raise ConfigError(
                f"{config.path}: waivers[{i}].target: {rule.code} ({rule.name}) is {kind}; "
                f"its waiver must name the one target it excuses (method@suite), not a glob ({waiver.target!r})"
            )
        if waiver.expires > latest:
            raise ConfigError(
                f"{config.path}: waivers[{i}].expires: {waiver.expires} is more than "
                f"{MAX_REQUIRED_WAIVER_DAYS} days away, the longest a waiver of {kind} "
                f"({rule.code}) may run; set a date before {latest} and renew it then"
            )
