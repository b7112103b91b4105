"""The one object a run passes to its action and its rules."""

from __future__ import annotations

import datetime as dt
from typing import Any

import attrs

from checks.config_model import Config, Waiver
from checks.suppress import SuppressionReport


class WaiverReport:
    """Which waivers applied, which are expired, which matched nothing (filled by the judge).

    Working state of one judgement rather than a record, so a plain class.
    """

    __slots__ = ("used", "expired", "unused", "unknown")

    def __init__(
        self,
        used: dict[str, list[str]] | None = None,
        expired: list[Waiver] | None = None,
        unused: list[Waiver] | None = None,
        unknown: list[Waiver] | None = None,
    ):
        self.used = {} if used is None else used
        self.expired = [] if expired is None else expired
        self.unused = [] if unused is None else unused
        self.unknown = [] if unknown is None else unknown

    def _fields(self) -> tuple:
        return self.used, self.expired, self.unused, self.unknown

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return (
            f"WaiverReport(used={self.used!r}, expired={self.expired!r}, unused={self.unused!r}, "
            f"unknown={self.unknown!r})"
        )


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
    #: targets the run looked at besides its own and its findings' (the other files of a pre-commit hook): a
    #: waiver is judged unused (CK002) only when its target matches one of these, the run's or a finding's
    seen: tuple[str, ...] = ()
    #: inline suppressions used, unused and malformed (filled by the runner, read by CK003/CK004)
    suppression_report: SuppressionReport = attrs.field(factory=SuppressionReport)
