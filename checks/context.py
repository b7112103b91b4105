"""The one object a run passes to its action and its rules."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from checks.config import Config, Waiver
from checks.suppress import SuppressionReport


@attrs.define
class WaiverReport:
    """Which waivers applied, which are expired, which matched nothing (filled by the runner)."""

    used: dict[str, list[str]] = attrs.field(factory=dict)
    expired: list[Waiver] = attrs.field(factory=list)
    unused: list[Waiver] = attrs.field(factory=list)
    unknown: list[Waiver] = attrs.field(factory=list)


@attrs.define
class RunContext:
    """Everything about one run: the action, its options, the config and the facts.

    ``facts`` is whatever the action's ``gather`` returned; rules read it and must not
    change it. ``extra_waivers`` holds waivers the command line created (recorded like
    the ones from rules.toml).
    """

    action: str
    #: the action's options: an instance of its ``Action.options`` class, else a dict of the values
    options: Any
    config: Config
    settings: Any = None
    dry_run: bool = False
    today: dt.date = attrs.field(factory=dt.date.today)
    facts: Any = None
    target: str = ""
    extra_waivers: list[Waiver] = attrs.field(factory=list)
    waiver_report: WaiverReport = attrs.field(factory=WaiverReport)
    verdicts: list = attrs.field(factory=list)
    #: the ``checks`` arguments that started the run (empty when run in-process without them)
    command_line: tuple[str, ...] = ()
    #: files judged whole (a pre-commit hook's files): their unused inline suppressions are reported
    sources: tuple[str, ...] = ()
    #: inline suppressions used, unused and malformed (filled by the runner, read by CK003/CK004)
    suppression_report: SuppressionReport = attrs.field(factory=SuppressionReport)
