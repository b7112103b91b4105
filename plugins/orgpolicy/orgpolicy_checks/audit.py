"""The organisation's audit trail: a line per finished run, a ``status`` command and an audit action.

The trail is a plain text file next to the decision log (``audit_log``); each line is
appended with one write, so concurrent runs never interleave within a line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from pathlib import Path

import click

from checks import Action, InputError, io
from orgpolicy_checks import settings as settings_mod

#: ``checks run orgpolicy-audit``
ACTION_NAME = "orgpolicy-audit"
#: the decision log grows by a line per action; far beyond any real one, short of exhausting memory
MAX_LOG_BYTES = 256 * 1024 * 1024


def trail_line(record) -> str:
    """One audit line: when, what, on which target, the outcome and the rules that blocked."""
    blocked = [
        v["code"]
        for v in record.get("verdicts", [])
        if v.get("outcome") in ("failed", "crashed") and v.get("severity") == "error"
    ]
    return (
        f"{record.get('finished')} {record.get('action')} target={record.get('target')!r} "
        f"outcome={record.get('outcome')} blocked_by={','.join(blocked) or '-'}\n"
    )


def append_trail(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)


class AuditFacts:
    """The decision log the audit reads, parsed when gathered: a corrupt line is an input error naming it."""

    def __init__(self, config):
        #: as rules.toml names it; a relative path is read from the working directory
        self.path = config.decision_log
        try:
            self.text = io.read_text(self.path, limit=MAX_LOG_BYTES, what="a decision log")
        except io.ReadError as exc:
            if not exc.missing:
                raise InputError(f"{self.path}: cannot read the decision log: {exc.reason}") from None
            self.text = ""
        #: (line number, record) for every record in the decision log
        self.records: list[tuple[int, dict]] = []
        for number, line in enumerate(self.text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise InputError(
                    f"{self.path}:{number}: not a JSON decision record ({exc}); "
                    f"the log is append-only: restore the line from a backup"
                ) from None
            if not isinstance(record, dict):
                raise InputError(f"{self.path}:{number}: a decision record must be a JSON object")
            self.records.append((number, record))


def _plan(ctx):
    yield f"would audit {len(ctx.facts.records)} decision record(s) in {ctx.facts.path}"


def _execute(ctx) -> str:
    runs: dict[str, dict[str, int]] = {}
    for _number, record in ctx.facts.records:
        by_outcome = runs.setdefault(str(record.get("action")), {})
        by_outcome[str(record.get("outcome"))] = by_outcome.get(str(record.get("outcome")), 0) + 1
    lines = [
        f"{action}: " + ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
        for action, counts in sorted(runs.items())
    ]
    return "\n".join([f"audited {len(ctx.facts.records)} decision record(s) in {ctx.facts.path}", *lines])


def _inputs(ctx):
    return {"decision_log": hashlib.sha256(ctx.facts.text.encode()).hexdigest()}


AUDIT = Action(
    name=ACTION_NAME,
    help="Audit the decision log and rules.toml against the organisation's policy, then summarise the runs.",
    gather=lambda ctx: AuditFacts(ctx.config),
    plan=_plan,
    execute=_execute,
    target=lambda ctx: ctx.facts.path,
    inputs=_inputs,
    arena=settings_mod.ARENA,
)


@click.group("orgpolicy")
def orgpolicy_group():
    """The organisation's policy: its audit trail and settings."""


@orgpolicy_group.command("status")
@click.pass_obj
def status(app):
    """Show the audit trail (where, how many runs, the last one) and whether uploads are frozen today."""
    settings = settings_mod.of(app.config())
    path = settings.audit_path(os.getcwd())
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    frozen = settings.friday_freeze and dt.date.today().weekday() == 4
    click.echo(f"audit trail: {path} ({len(lines)} run(s))")
    click.echo(f"last run: {lines[-1] if lines else 'none'}")
    click.echo(f"uploads today: {'frozen (Friday)' if frozen else 'allowed'}")
    click.echo(f"relaxed rules: {', '.join(settings.relax) or 'none'}")
