"""Run an action: gather its facts, judge its rules (:mod:`checks.judge`), decide, execute, record."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import click

from checks import extras, records
from checks.config_model import Config
from checks.context import RunContext
from checks.errors import ChecksError
from checks.exitcodes import ExitCode
from checks.judge import adjust_config, evaluate, gate_rules
from checks.model import Action, Outcome, Rule, Verdict, known_codes
from checks.plugins import Registry


@attrs.frozen
class RunResult:
    """What one ``checks run`` produced."""

    action: str
    target: str
    verdicts: tuple[Verdict, ...]
    outcome: str  # ran | dry-run | blocked | failed
    exit_code: ExitCode
    plan: tuple[str, ...] = ()
    summary: str = ""
    error: str = ""
    record: Mapping[str, Any] = attrs.field(factory=dict)


def _decide(
    action: Action, ctx: RunContext, verdicts: list[Verdict]
) -> tuple[str, ExitCode, tuple[str, ...], str, str]:
    """(outcome, exit code, plan, summary, error): blocked, planned (dry run), or executed and how that went."""
    if any(v.blocks for v in verdicts):
        crashed = any(v.outcome is Outcome.CRASHED for v in verdicts)
        return "blocked", ExitCode.INTERNAL_ERROR if crashed else ExitCode.BLOCKED, (), "", ""
    if ctx.dry_run:
        return "dry-run", ExitCode.OK, tuple(action.plan(ctx)), "", ""
    try:
        return "ran", ExitCode.OK, (), action.execute(ctx) or "", ""
    except ChecksError as exc:
        return "failed", ExitCode.ACTION_FAILED, (), "", str(exc)
    except Exception as exc:  # a bug in the action: reported with its traceback, the run fails closed
        import traceback  # noqa: PLC0415 - a crash only; traceback would load with every command

        error = f"internal error in action {action.name!r}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
        return "failed", ExitCode.INTERNAL_ERROR, (), "", error


def run(
    registry: Registry,
    action_name: str,
    options: Any,
    config: Config,
    *,
    dry_run: bool = False,
    today: dt.date | None = None,
    cwd: str = ".",
    command_line: Sequence[str] = (),
) -> RunResult:
    """Run one action: gather facts, evaluate, decide, execute unless blocked, record.

    ``options`` is the action's options object (see :attr:`Action.options`), or a mapping
    of option values it is built from.

    A decision record is appended for every run that reached evaluation, whatever its
    outcome.
    """
    action = registry.action(action_name)
    if action is None:
        known = ", ".join(registry.actions) or "none"
        raise ChecksError(f"unknown action {action_name!r} (known: {known})")
    extras.require(f"checks run {action_name}", action.requires)
    chosen, ctx = _gate(
        registry,
        action,
        config,
        options,
        dry_run=dry_run,
        today=today or dt.date.today(),
        command_line=tuple(command_line),
    )
    config = ctx.config
    log = records.log_path(config, cwd)
    records.check_target(log)  # a FIFO or a device would hang or flood the run at its end; a bad key, fail it
    records.check_place(config, log, cwd)  # a repository's rules.toml may not aim the log at ~/.bashrc
    started = dt.datetime.now(dt.timezone.utc)
    ctx.facts = action.gather(ctx)
    ctx.target = action.target(ctx)
    ctx.sources = tuple(action.sources(ctx))
    verdicts = evaluate(chosen, ctx, known_codes(registry.rules.values()))
    ctx.verdicts = verdicts
    outcome, code, plan, summary, error = _decide(action, ctx, verdicts)
    record = _record(registry, action, ctx, verdicts, outcome, started, error=error)
    note = _append(log, record, outcome)
    if note:  # the audit trail failed: say so, and never report a clean run
        error = f"{error}\n{note}" if error else note
        code = ExitCode.ACTION_FAILED if code is ExitCode.OK else code
    registry.pm.hook.checks_run_finished(ctx=ctx, record=record, rules=registry.rules)
    return RunResult(
        action=action_name,
        target=ctx.target,
        verdicts=tuple(verdicts),
        outcome=outcome,
        exit_code=code,
        plan=plan,
        summary=summary,
        error=error,
        record=record,
    )


def _options_of(action: Action, options: Any) -> Any:
    """The action's options object: built from a mapping of option values, else as given."""
    return action.make_options(options) if isinstance(options, Mapping) else options


_OUTCOMES = {
    "ran": "the action ran",
    "dry-run": "the action only planned (dry run)",
    "blocked": "the action was blocked and did not run",
    "failed": "the action failed",
}


def _append(log, record: Mapping[str, Any], outcome: str) -> str:
    """Append the decision record to the log (repairs it made are warned about on stderr); why it could
    not be, saying what happened to the action, so a failed record is never mistaken for a failed run."""

    try:
        notes = records.append(log, record)
    except (OSError, ChecksError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return (
            f"the decision record could not be appended to {log}: {why} "
            f"({_OUTCOMES.get(outcome, outcome)}; nothing of the record was left in the log)"
        )
    for note in notes:
        print(f"checks: warning: {note}", file=sys.stderr)
    return ""


@attrs.frozen
class Preview:
    """What ``checks run ACTION`` would decide on given facts: verdicts, the record it would write, the rules."""

    verdicts: tuple[Verdict, ...]
    record: dict[str, Any]
    #: every loaded rule by code (to explain a verdict)
    rules: Mapping[str, Rule]
    #: the context the rules were judged in (configuration, waivers, facts)
    ctx: RunContext

    @property
    def blocked(self) -> bool:
        return any(v.blocks for v in self.verdicts)


def preview(action_name: str, facts: Any, options: Any) -> Preview:
    """From inside a ``checks`` command: the verdicts ``checks run ACTION`` would give on ``facts``.

    The command's plugins and rules.toml are used, and the rules are selected and judged
    by :func:`evaluate` exactly as in a run (waivers included); nothing is gathered,
    executed or recorded. A report uses it to show what the gate would say (``checks
    inspect --html`` previews ``process`` on the index it built). ``options`` is the action's
    options object, or a mapping of option values it is built from (as for :func:`run`).

    :raises ChecksError: the action is not loaded, or its selection is refused.
    """

    app = click.get_current_context().find_root().obj  # the checks.cli.App every command runs under
    registry = app.registry
    action = registry.action(action_name)
    if action is None:
        raise ChecksError(f"the {action_name} action is not loaded, so no rule was evaluated")
    chosen, ctx = _gate(registry, action, app.config(), options, facts=facts)
    started = dt.datetime.now(dt.timezone.utc)
    ctx.target = action.target(ctx)
    verdicts = evaluate(chosen, ctx, known_codes(registry.rules.values()))
    outcome = "preview: would block" if any(v.blocks for v in verdicts) else "preview: would pass"
    record = _record(registry, action, ctx, verdicts, outcome, started)
    return Preview(tuple(verdicts), record, registry.rules, ctx)


def _gate(registry: Registry, action: Action, config: Config, options: Any, **fields: Any):
    """The rules selected for ``action`` and the run's context, under the plugins' adjusted configuration
    (one way for runs and previews, so a preview judges as the run would)."""
    config = adjust_config(registry, config)
    chosen = gate_rules(registry, action, config)
    ctx = RunContext(
        action=action.name,
        options=_options_of(action, options),
        config=config,
        settings=config.arena(action.arena).settings,
        **fields,
    )
    return chosen, ctx


def _record(registry: Registry, action: Action, ctx: RunContext, verdicts, outcome: str, started, error=None) -> dict:
    """The decision record of a run or a preview, finished now (one shape for both, so a report reads either)."""
    return records.build(
        ctx=ctx,
        action=action,
        verdicts=verdicts,
        outcome=outcome,
        started=started,
        finished=dt.datetime.now(dt.timezone.utc),
        versions=registry.distributions(),
        error=error,
    )
