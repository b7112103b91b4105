"""Judge files one by one with the rules bound to an action: the engine behind pre-commit hooks.

A hook must be read-only and fast, and its output must point an editor at the line to
fix. So nothing is gathered or executed and no decision record is written: a domain
module turns each file into :class:`Subject` records (facts the rules read), and this
module selects the action's rules with :func:`checks.runner.gate_rules`, evaluates
them on every subject with :func:`checks.runner.evaluate` (waivers and rules.toml
included), and prints ``path:line: CODE message`` lines. The exit code follows the
runner's: 0 clean, 1 blocked, 2 unreadable input or bad configuration, 3 a rule crashed.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs
import click

from checks.errors import ChecksError
from checks.exitcodes import ExitCode
from checks.model import Action, Outcome, Severity
from checks.plugins import Registry

if TYPE_CHECKING:  # pragma: no cover
    from checks.config import Config
    from checks.context import RunContext

#: the root command group every domain adds its file checks to
GROUP_NAME = "precommit"


@attrs.frozen
class Subject:
    """One thing to judge: its facts, the file it came from and the target waivers match.

    ``error`` marks a file that could not be read into facts; it is reported as such and
    no rule sees it.
    """

    path: str
    facts: Any = None
    target: str = ""
    line: int | None = None
    error: str | None = None
    col: int | None = None
    #: the files judged whole for this subject (default: ``path``); their unused suppressions are reported
    sources: tuple[str, ...] = ()


@attrs.frozen
class Problem:
    """One output line: where, which rule (or ``error`` for unreadable input), what."""

    path: str
    line: int
    code: str
    message: str
    severity: Severity = Severity.ERROR
    col: int | None = None

    def __str__(self) -> str:
        note = "" if self.severity is Severity.ERROR else f" [{self.severity.value}]"
        col = f":{self.col}" if self.col else ""
        return f"{self.path}:{self.line}{col}: {self.code} {self.message}{note}"


@attrs.frozen
class Report:
    problems: tuple[Problem, ...]
    exit_code: ExitCode


def _file_action(name: str, arena: str | None) -> Action:
    """A stand-in action so selection sees the name and arena; nothing is gathered or executed."""

    def refuse(ctx: RunContext):
        raise ChecksError(f"{name} only judges files; it has nothing to gather or execute")

    return Action(name=name, help="", gather=refuse, plan=refuse, execute=refuse, arena=arena)


def check(
    registry: Registry,
    action: str,
    subjects: Iterable[Subject],
    config: Config,
    *,
    arena: str | None = None,
    options: dict[str, Any] | None = None,
    undecidable: Sequence[str] = (),
    today: dt.date | None = None,
) -> Report:
    """Evaluate the rules bound to ``action`` on each subject and collect the failing findings.

    Framework rules (``CK``) judge rules.toml rather than a file, so their findings are
    reported once, and only those every subject produced: a waiver used by one file is
    not unused. ``undecidable`` names rules this invocation has no input for (say, task ids
    without an eval.yaml); they are left out like an ``ignore``, so a required one is refused.
    An empty selection is refused like ``checks run`` refuses it.
    """
    from checks.context import RunContext  # the judging machinery loads only when a hook runs
    from checks.runner import FRAMEWORK_PREFIX, adjust_config, evaluate, gate_rules

    config = adjust_config(registry, config)
    if undecidable:
        config = attrs.evolve(config, ignore=(*config.ignore, *undecidable))
    chosen = gate_rules(registry, _file_action(action, arena), config)
    settings = config.arena(arena).settings
    problems: list[Problem] = []
    framework: list[set[Problem]] = []
    unreadable = crashed = False
    for subject in subjects:
        if subject.error is not None:
            problems.append(Problem(subject.path, subject.line or 1, "error", subject.error, col=subject.col))
            unreadable = True
            continue
        ctx = RunContext(action=action, options=dict(options or {}), config=config, settings=settings,
                         today=today or dt.date.today(), facts=subject.facts, target=subject.target or subject.path,
                         sources=subject.sources or (subject.path,))
        own: set[Problem] = set()
        for verdict in evaluate(chosen, ctx, registry.rules):
            if verdict.outcome not in (Outcome.FAILED, Outcome.CRASHED):
                continue
            crashed = crashed or verdict.outcome is Outcome.CRASHED
            for finding in verdict.findings:
                if verdict.code.startswith(FRAMEWORK_PREFIX):
                    own.add(Problem(finding.path or config.path or "rules.toml", finding.line or 1, verdict.code,
                                    finding.message, verdict.severity))
                else:
                    located = finding.path or finding.line
                    problems.append(Problem(finding.path or subject.path, finding.line or subject.line or 1,
                                            verdict.code, finding.message, verdict.severity,
                                            col=finding.col if located else subject.col))
        framework.append(own)
    if framework:
        problems += sorted(set.intersection(*framework), key=lambda p: (p.code, p.message))
    if crashed:
        code = ExitCode.INTERNAL_ERROR
    elif unreadable:
        code = ExitCode.USAGE_ERROR
    elif any(p.severity is Severity.ERROR for p in problems):
        code = ExitCode.BLOCKED
    else:
        code = ExitCode.OK
    return Report(tuple(dict.fromkeys(problems)), code)


class _FileCheckGroup(click.Group):
    """``checks precommit``: every command added gets the selection options of ``checks run``."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        from checks.cli import pop_selection, selection_params

        callback = cmd.callback
        if callback is not None:
            @functools.wraps(callback)
            def with_selection(**params: Any) -> Any:
                click.get_current_context().meta[_SELECTION] = pop_selection(params)
                return callback(**params)

            cmd.callback = with_selection
            cmd.params.extend(selection_params())
        super().add_command(cmd, name)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from checks.cli import App, _refuse_unloaded

        command = super().get_command(ctx, name)
        app = ctx.find_object(App)
        if command is None and not ctx.resilient_parsing and app is not None:
            _refuse_unloaded(app.registry, f"no command 'precommit {name}'", command=(GROUP_NAME, name))
        return command


_SELECTION = "checks.selection"


def command_group(cli: click.Group) -> click.Group:
    """The shared ``checks precommit`` group: created by whichever domain registers first."""
    group = cli.commands.get(GROUP_NAME)
    if group is None:
        group = _FileCheckGroup(GROUP_NAME, help="Read-only file checks for pre-commit hooks and editors "
                                                 "(prints path:line: CODE message).")
        cli.add_command(group)
    return group


def run_command(action: str, subjects: Sequence[Subject], *, arena: str | None = None,
                options: dict[str, Any] | None = None, undecidable: Sequence[str] = ()) -> None:
    """From inside a ``checks precommit`` command: judge, print one line per problem, exit."""
    from checks.cli import App
    from checks.redact import redact

    ctx = click.get_current_context()
    app = ctx.find_object(App)
    report = check(app.registry, action, subjects, app.config(selection=ctx.meta.get(_SELECTION)), arena=arena,
                   options=options,
                   undecidable=undecidable)
    for problem in report.problems:
        click.echo(redact(str(problem)))
    raise SystemExit(int(report.exit_code))
