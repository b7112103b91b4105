"""Judge files one by one with the rules bound to an action: the engine behind pre-commit hooks.

A hook must be read-only and fast, and its output must point an editor at the line to
fix. So nothing is gathered or executed and no decision record is written: a domain
module turns each file into :class:`Subject` records (facts the rules read), and this
module selects the action's rules with :func:`checks.judge.gate_rules`, evaluates
them on every subject with :func:`checks.judge.evaluate` (waivers and rules.toml
included), and prints ``path:line:col: CODE message`` lines (or another --format). The exit code follows the
runner's: 0 clean, 1 blocked, 2 unreadable input or bad configuration, 3 a rule crashed.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import click

from checks import config_load, helpgroups, reporting, suggest
from checks.cli import App, global_params, pop_selection, refuse_unloaded, selection_params
from checks.cli import complete_arenas as complete_arenas  # public here: a domain hook's --arena completes with it
from checks.config_model import Layer
from checks.context import RunContext
from checks.errors import ChecksError, UsageError
from checks.io import closest_path
from checks.exitcodes import ExitCode
from checks.judge import FRAMEWORK_PREFIX, adjust_config, evaluate, gate_rules, required_codes
from checks.lazygroup import LazyGroup
from checks.model import Action, Finding, Outcome, Verdict, known_codes
from checks.output import Report, relative_finding, shown_relative
from checks.plugins import PRECOMMIT_GROUP as GROUP_NAME
from checks.plugins import Registry

if TYPE_CHECKING:  # pragma: no cover
    from checks.config_model import Config
    from checks.context import RunContext


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


def _file_action(name: str, arena: str | None) -> Action:
    """A stand-in action so selection sees the name and arena; nothing is gathered or executed."""

    def refuse(ctx: RunContext):
        raise ChecksError(f"{name} only judges files; it has nothing to gather or execute")

    return Action(name=name, help="", gather=refuse, plan=refuse, execute=refuse, arena=arena)


def check(
    registry: Registry,
    action: str,
    subjects: Iterable[Subject],
    config: Config | Callable[[str | None], Config],
    *,
    arena: str | None = None,
    options: dict[str, Any] | None = None,
    undecidable: Sequence[str] = (),
    today: dt.date | None = None,
) -> Report:
    """Evaluate the rules bound to ``action`` on each subject; one verdict per rule, merged over the files.

    ``config`` is the configuration of every subject, or a function giving the one of a subject's
    file (:meth:`checks.cli.App.configs`: the nearest to it); each subject is judged under its own.

    A rule's merged verdict crashed if it crashed on any file, failed if it failed on any
    (holding the findings of those files, each located in its file), else waived if a waiver
    covered it anywhere, else passed. Framework rules (``CK``) judge rules.toml rather than a
    file, so they keep only the findings every subject judged under that configuration produced:
    a waiver used by one file is not unused. ``undecidable`` names rules this invocation has no input for (say, task ids
    without an eval.yaml); they are left out like an ``ignore``, so a required one is refused.
    An empty selection is refused like ``checks run`` refuses it.
    """
    started, clock = dt.datetime.now(dt.timezone.utc), time.perf_counter()
    unreadable: list[Finding] = []
    per_rule: dict[str, list[Verdict]] = {}
    for group_config, group in _by_config(subjects, config):
        judged = _judge_group(
            registry,
            action,
            group,
            group_config,
            arena=arena,
            options=options,
            undecidable=undecidable,
            today=today or dt.date.today(),
            unreadable=unreadable,
        )
        for code, found in judged.items():  # a framework rule judged one configuration: merged within its group
            per_rule.setdefault(code, []).extend(
                [_merge(found, framework=True)] if code.startswith(FRAMEWORK_PREFIX) else found
            )
    verdicts = tuple(_merge(vs, framework=False) for code, vs in sorted(per_rule.items()))
    code, outcome = _ending(verdicts, unreadable)
    return Report(
        command="precommit",
        action=action,
        target=action,
        outcome=outcome,
        exit_code=int(code),
        verdicts=shown_relative(verdicts),
        started=started,
        duration=time.perf_counter() - clock,
        unreadable=tuple(relative_finding(f, os.getcwd() + os.sep) for f in unreadable),
        rules={c: registry.rules[c].summary for c in per_rule},
    )


def _judge_group(
    registry: Registry,
    action: str,
    subjects: list[Subject],
    config: Config,
    *,
    arena: str | None,
    options: dict[str, Any] | None,
    undecidable: Sequence[str],
    today: dt.date,
    unreadable: list[Finding],
) -> dict[str, list[Verdict]]:
    """The verdicts of each rule on every subject judged under one configuration (unreadable ones are appended)."""

    config = adjust_config(registry, config)
    _known_arena(registry, arena, config)
    if undecidable:
        config = attrs.evolve(
            config, overlays=(*config.overlays, Layer("no input for them", ignore=tuple(undecidable)))
        )
    chosen = gate_rules(registry, _file_action(action, arena), config)
    required = required_codes(chosen, config)  # the same for every subject of the group
    known = known_codes(registry.rules.values())
    per_rule: dict[str, list[Verdict]] = {}
    # each file's waivers are judged in all: every subject's target and the files it holds
    seen = tuple(t for subject in subjects for t in (subject.target or subject.path, *subject.sources))
    for subject in subjects:
        if subject.error is not None:
            error = subject.error + _closest_hint(subject.path)
            unreadable.append(Finding(error, path=subject.path, line=subject.line or 1, col=subject.col))
            continue
        ctx = RunContext(
            action=action,
            options=dict(options or {}),
            config=config,
            settings=config.arena(arena).settings,
            today=today,
            facts=subject.facts,
            target=subject.target or subject.path,
            sources=subject.sources or (subject.path,),
            seen=seen,
        )
        for verdict in _located_verdicts(chosen, ctx, subject, known, required):
            per_rule.setdefault(verdict.code, []).append(verdict)
    return per_rule


def _known_arena(registry: Registry, arena: str | None, config: Config) -> None:
    """``--arena NAME`` must name an arena a plugin or the configuration knows: a typo would silently
    judge without the arena's selection and settings. The configuration's arenas (every plugin's
    section among them) are asked first: the arenas of actions import every action module."""
    if arena is None or arena in config.arenas:
        return
    known = registry.arenas | set(config.arenas)
    if arena in known:
        return
    hint = suggest.did_you_mean(arena, sorted(known))
    raise UsageError(
        f"--arena {arena!r}: no loaded plugin or [arenas.NAME] table of the configuration defines "
        f"it{hint} (known: {', '.join(sorted(known)) or 'none'})"
    )


def _located_verdicts(
    chosen, ctx: RunContext, subject: Subject, known: frozenset[str], required: frozenset[str]
) -> list[Verdict]:
    """The subject's verdicts, each finding placed in its file (a framework rule's at the configuration)."""
    out = []
    for verdict in evaluate(chosen, ctx, known, required=required):
        if verdict.code.startswith(FRAMEWORK_PREFIX):
            where = {"path": os.path.relpath(ctx.config.path) if ctx.config.path else "rules.toml", "line": 1}
        else:
            where = {"path": subject.path, "line": subject.line or 1, "col": subject.col, "target": ctx.target}
        if verdict.findings:  # most verdicts have none: no copy to make
            verdict = attrs.evolve(verdict, findings=tuple(_locate(f, where) for f in verdict.findings))
        out.append(verdict)
    return out


def _by_config(
    subjects: Iterable[Subject], config: Config | Callable[[str | None], Config]
) -> list[tuple[Config, list[Subject]]]:
    """The subjects grouped by the configuration that applies to each, in first-seen order (at least one group)."""
    if not callable(config):
        return [(config, list(subjects))]
    groups: dict[int, tuple[Config, list[Subject]]] = {}
    by_path: dict[str, Config] = {}  # a file's declarations are several subjects: its configuration is looked up once
    for subject in subjects:
        cfg = by_path.get(subject.path)
        if cfg is None:
            cfg = by_path[subject.path] = config(subject.path)
        groups.setdefault(id(cfg), (cfg, []))[1].append(subject)
    if not groups:  # no file: the configuration is still checked, and an empty gate refused
        cfg = config(None)
        groups[id(cfg)] = (cfg, [])
    return list(groups.values())


def _locate(finding: Finding, where: dict[str, Any]) -> Finding:
    """The finding with the subject's place where it has none (its col only if it has no line or path either)."""
    if finding.path or finding.line:
        where = {k: v for k, v in where.items() if k != "col"}
    return attrs.evolve(finding, **{k: getattr(finding, k) or v for k, v in where.items()})


def _closest_hint(path: str) -> str:
    """``; did you mean models/nori/info.py?`` for a file named on the command line that is not there."""
    return suggest.hint([closest_path(path) if not os.path.lexists(path) else None], show=str)


def _ending(verdicts: Sequence[Verdict], unreadable: Sequence[Finding]) -> tuple[ExitCode, str]:
    """(exit code, outcome) of a ``checks precommit`` run: a crash first, then an unreadable input,
    then a blocking verdict; passed otherwise."""
    if any(v.outcome is Outcome.CRASHED for v in verdicts):
        return ExitCode.INTERNAL_ERROR, "crashed"
    if unreadable:
        return ExitCode.USAGE_ERROR, "error"
    if any(v.blocks for v in verdicts):
        return ExitCode.BLOCKED, "blocked"
    return ExitCode.OK, "passed"


def _merge(verdicts: list[Verdict], *, framework: bool) -> Verdict:
    """One rule's verdicts on every file as one (see :func:`check`)."""
    first = verdicts[0]
    kept = _merged_excuses(verdicts)
    if framework:  # the same rules.toml judged once per file: keep what every file saw
        common = _common_findings(verdicts)
        outcome = first.outcome if common else Outcome.PASSED
        return attrs.evolve(first, outcome=outcome, findings=common, **kept)
    for outcome in (Outcome.CRASHED, Outcome.FAILED, Outcome.WAIVED):
        hit = [v for v in verdicts if v.outcome is outcome]
        if hit:
            findings = tuple(dict.fromkeys(f for v in hit for f in v.findings))
            return attrs.evolve(first, outcome=outcome, findings=findings, **kept)
    return attrs.evolve(first, outcome=Outcome.PASSED, findings=(), **kept)


def _common_findings(verdicts: list[Verdict]) -> tuple[Finding, ...]:
    """The first verdict's findings that every other verdict has too, in the first one's order."""
    return tuple(f for f in verdicts[0].findings if all(f in v.findings for v in verdicts[1:]))


def _merged_excuses(verdicts: list[Verdict]) -> dict[str, Any]:
    """The waivers, suppressions and excuses of every file's verdict, each once in first-seen order,
    and their summed duration: what the merged verdict keeps whatever its outcome."""
    return dict(
        waivers=tuple(dict.fromkeys(w for v in verdicts for w in v.waivers)),
        suppressions=tuple(dict.fromkeys(s for v in verdicts for s in v.suppressions)),
        excused=tuple(dict.fromkeys(e for v in verdicts for e in v.excused)),
        duration=sum(v.duration for v in verdicts),
    )


class _FileCheckGroup(LazyGroup):
    """``checks precommit``: every command added gets the selection and output options of ``checks run``.

    The output options (--format, --output-file, -q) store their values in the click context,
    where :func:`run_command` reads them. A command declared by name (:func:`command_group`) is
    imported and added when it is asked for.
    """

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(judging(cmd), name)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:

        command = super().get_command(ctx, name)
        app = ctx.find_object(App)
        if command is None and not ctx.resilient_parsing and app is not None:
            refuse_unloaded(app.registry, f"no command 'precommit {name}'", command=(GROUP_NAME, name))
        return command


def judging(cmd: click.Command) -> click.Command:
    """``cmd`` with the options of a command that judges files (every ``checks precommit`` command, and a
    plugin's own file-judging command such as ``checks hf validate``): output (--format, --output-file,
    -q, -v, --color, --statistics), --exit-zero, the walk's flags and the selection, which
    :func:`run_command` and :func:`judge` read from the click context. Returns ``cmd``."""
    helpgroups.tag(cmd.params, f"Options of {cmd.name}")
    cmd.params.extend(helpgroups.tag(reporting.params(), "Output"))
    cmd.params.append(
        click.Option(
            ["--exit-zero"],
            is_flag=True,
            expose_value=False,
            callback=lambda ctx, param, value: ctx.meta.__setitem__(_EXIT_ZERO, value),
            help="Exit 0 when the only problems are findings (an unreadable file, a bad option or a crash still fail).",
        )
    )
    cmd.params += [
        _walk_flag("--no-respect-gitignore", _ALL_FILES, "Walk directories without skipping what git ignores."),
        _walk_flag("--show-files", _SHOW_FILES, "Print the files that would be judged, one a line, and exit 0."),
    ]
    callback = cmd.callback
    if callback is not None:

        @functools.wraps(callback)
        def with_selection(**params: Any) -> Any:
            click.get_current_context().meta[_SELECTION] = pop_selection(params)
            return callback(**params)

        cmd.callback = with_selection
        cmd.params.extend(helpgroups.tag(selection_params(), "Selection"))
    cmd.params.extend(helpgroups.tag(global_params(), "Global"))
    return helpgroups.grouped(cmd)


_SELECTION = "checks.selection"
_EXIT_ZERO = "checks.exit_zero"
_ALL_FILES = "checks.no_respect_gitignore"
_SHOW_FILES = "checks.show_files"


def _walk_flag(name: str, key: str, help: str) -> click.Option:
    """A flag of the file walk (:func:`expand` reads it from the context)."""
    return click.Option(
        [name], is_flag=True, expose_value=False, callback=lambda ctx, p, v: ctx.meta.__setitem__(key, v), help=help
    )


def command_group(cli: click.Group, lazy_commands: Mapping[str, tuple[str, str]] | None = None) -> click.Group:
    """The shared ``checks precommit`` group: created by whichever domain registers first.

    ``lazy_commands`` declares commands by name, as :class:`checks.LazyGroup` does (name ->
    ``("module:attribute", short help)``): each is imported when asked for, so one hook does not
    load the others' modules (``checks precommit info-py`` reads no eval-results file).
    """
    group = cli.commands.get(GROUP_NAME)
    if group is None:
        group = _FileCheckGroup(
            GROUP_NAME,
            help="Read-only file checks for pre-commit hooks and editors (prints path:line:col: CODE message).",
            lazy_commands={},
        )
        cli.add_command(group)
    if lazy_commands:
        group.declare(lazy_commands)
    return group


def judge(
    action: str,
    subjects: Sequence[Subject],
    *,
    arena: str | None = None,
    options: dict[str, Any] | None = None,
    undecidable: Sequence[str] = (),
) -> Report:
    """From inside any ``checks`` command: :func:`check` with the command's plugins and rules.toml."""
    ctx = click.get_current_context()
    app = ctx.find_root().obj  # the checks.cli.App every command runs under
    return check(
        app.registry,
        action,
        subjects,
        app.configs(ctx.meta.get(_SELECTION)),
        arena=arena,
        options=options,
        undecidable=undecidable,
    )


def by_configuration(paths: Sequence[str]) -> list[list[str]]:
    """From inside a ``checks precommit`` command: ``paths`` grouped by the configuration nearest each
    (one group with ``--config``), for a command that judges several files as one subject."""
    app = click.get_current_context().find_root().obj
    if app.config_path:
        return [list(paths)] if paths else []

    groups: dict[Any, list[str]] = {}
    for path in paths:
        groups.setdefault(config_load.find(Path(path).resolve().parent), []).append(path)
    return list(groups.values())


def expand(paths: Sequence[str], wanted: Callable[[str], bool], what: str) -> list[str]:
    """From inside a ``checks precommit`` command: the files to judge, each directory among ``paths`` replaced
    by the files below it whose ``/``-separated path ``wanted`` accepts (sorted), as ``ruff check DIR`` does.

    A walk skips what the configuration's ``exclude``/``extend-exclude`` match (ruff's defaults: .git,
    .venv, node_modules, ...); a file named on the command line is always judged. No path at all, or a
    directory with nothing to judge below it, is a usage error naming ``what`` was looked for: a hook
    given nothing must not pass as if it had judged something.
    """
    if not paths:
        raise UsageError(f"no file given: name {what} files, or directories holding them")
    ctx = click.get_current_context()
    configs = ctx.find_root().obj.configs(None)
    gitignore = not ctx.meta.get(_ALL_FILES)
    out: list[str] = []
    for given in paths:
        if not Path(given).is_dir():
            out.append(given)
            continue
        config = configs(str(Path(given, "here")))  # the configuration of the directory itself
        found = _walk(Path(given), wanted, config)
        if gitignore:
            ignored = git_ignored(Path(given), found)
            found = [path for path in found if path not in ignored]
        if not found:
            skipped = ", ".join((*config.exclude, *config.extend_exclude, *(["git's ignores"] if gitignore else [])))
            raise UsageError(f"{given}: no {what} file below it (the walk skips {skipped or 'nothing'})")
        out += found
    if ctx.meta.get(_SHOW_FILES):  # ruff's --show-files: what would be judged, and nothing judged
        click.echo("\n".join(out))
        raise SystemExit(int(ExitCode.OK))
    return out


def _walk(top, wanted: Callable[[str], bool], config: Config) -> list[str]:
    """The files below ``top`` that ``wanted`` accepts, in sorted order, skipping what ``config`` excludes."""

    found = []
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if not config.excluded(Path(folder, d)))
        for name in sorted(names):
            path = Path(folder, name)
            if wanted(path.as_posix()) and not config.excluded(path):
                found.append(str(path))
    return found


def git_ignored(top: Path, paths: Sequence[str]) -> set[str]:
    """The ``paths`` below ``top`` that git ignores (.gitignore files, .git/info/exclude, the user's excludes), as
    ``ruff check DIR`` skips them; asked of git itself, by pattern (``--no-index``: a tracked file that matches is
    skipped too). Outside a repository, or without git, nothing is ignored: the walk judges more, never less."""
    import subprocess  # noqa: PLC0415 - a directory walk only: the one-file hook must not pay its import

    if not paths:
        return set()
    command = ["git", "-C", str(top), "check-ignore", "--no-index", "--stdin", "-z"]
    given = {os.path.abspath(path): path for path in paths}
    try:
        res = subprocess.run(command, input="\0".join(given), capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if res.returncode not in (0, 1):  # 128: not a repository
        return set()
    return {given[path] for path in res.stdout.split("\0") if path in given}


def run_command(
    action: str,
    subjects: Sequence[Subject],
    *,
    arena: str | None = None,
    options: dict[str, Any] | None = None,
    undecidable: Sequence[str] = (),
) -> None:
    """From inside a ``checks precommit`` command: judge, print in the chosen formats, exit."""
    report = judge(action, subjects, arena=arena, options=options, undecidable=undecidable)
    if report.exit_code == ExitCode.BLOCKED and click.get_current_context().meta.get(_EXIT_ZERO):
        report = attrs.evolve(report, exit_code=int(ExitCode.OK))  # the outcome still says "blocked"
    reporting.emit(report)
    raise SystemExit(int(report.exit_code))
