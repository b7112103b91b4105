"""``checks tabarena publish PLAN``: publish the methods a plan lists (see :mod:`.batch`).

Declared by name in tabarena_checks/cli.py and imported only when it runs. The plan is read and
every input checked before any step starts (exit 2 naming the plan's line); then the batch runs,
watched live on a terminal or one line per event elsewhere (stderr), and its summary goes to
stdout in the format asked for.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import click

from checks import ExitCode, UsageError, io, records
from tabarena_checks.publish import batch_lanes, batch_plan, batch_report, batch_view
from tabarena_checks.publish.batch import Batch, Settings, exit_code
from tabarena_checks.publish.batch_steps import Children, step_env

#: seconds without progress after which the rules check's step is given up (it loads plugins, nothing more)
RULES_TIMEOUT = 120.0


def _root_args(app) -> tuple[str, ...]:
    """The ``checks`` options each step needs to judge as this command does: the same plugins (those named
    with ``-p``, those blocked with ``-p no:``, ``--no-local-plugins``) and the same ``--config``."""
    registry = app.registry
    out: list[str] = []
    for name, plugin in registry.pm.list_name_plugin():
        if name in registry.blocked:
            out += ["-p", f"no:{name}"]
        elif name not in registry.sources and getattr(plugin, "__name__", None) == name and name != "checks.core_rules":
            out += ["-p", name]  # a module loaded by -p NAME (entry points and the core load by themselves)
    if registry.local_off:
        out.append("--no-local-plugins")
    path = getattr(app, "config_path", None)
    return (*out, *(("--config", str(Path(path).resolve())) if path else ()))


def _check_same_rules(app, root_args: tuple[str, ...], children: Children, cwd: Path) -> None:
    """Refuse to start unless a step would load exactly this command's rules: a step judging with fewer
    (a plugin a step does not load) would pass a gate this command's configuration closes."""
    args = [*root_args, "rules", "--format", "json"]
    answer = children.command(args, cwd=cwd, env=step_env(), stall_after=RULES_TIMEOUT)
    try:
        theirs = {r["code"] for r in json.loads(answer.stdout)}
    except (ValueError, TypeError, KeyError):
        theirs = set()
    mine = set(app.registry.rules)
    if answer.code == 0 and theirs == mine:
        return
    if answer.code != 0:
        why = f"a step cannot start with {' '.join(root_args) or 'no options'}: {answer.last_line[:300]}"
    else:
        why = f"missing in a step: {', '.join(sorted(mine - theirs)[:10]) or 'none'}"
    raise UsageError(
        f"the steps would not load the rules this command loads ({why}); load the plugins by entry point or "
        "the configuration's checks_plugins, so every step is judged as the single commands are"
    )


def _default_jobs() -> int:
    """The lanes the machine allows (:mod:`.batch_lanes`), said on stderr with the figures they came from."""
    found = batch_lanes.machine()
    lanes = found.lanes()
    sys.stderr.write(f"--jobs {lanes}: what this machine allows ({found.says()}); --jobs N chooses\n")
    return lanes


@click.command("publish")
@click.argument("plan", type=click.Path(dir_okay=False))
@click.option(
    "--no-dry-run",
    "execute",
    is_flag=True,
    help="Upload for real and edit the checkout; without it uploads, register and log only plan.",
)
@click.option(
    "--jobs",
    type=click.IntRange(1, batch_lanes.MAX_LANES),
    default=None,
    show_default="what the machine allows: one lane per two usable CPUs and per GiB available, at least 1",
    help="Steps run at the same time, each in a process of its own; 1 keeps the memory at one step's.",
)
@click.option(
    "--stall-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop a step that printed, read, wrote and computed nothing this long (STALLED); the others go on.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(batch_report.FORMATS),
    default="human",
    show_default=True,
    help="The summary's format on stdout (the events go to stderr).",
)
@click.option("--output-file", default=None, metavar="PATH", help="Also write the summary (in --format) to PATH.")
def publish_cmd(plan, execute, jobs, stall_timeout, fmt, output_file):
    """Publish every method of PLAN (TOML): process, upload, register and log, watched and resumable.

    Each step is the single command (`checks run process|upload|register|log`) with its own rules
    and decision record; a rerun skips what the decision log shows done for the same inputs.
    Credentials come from the environment only. Exit 0 all done, 1 some blocked, 4 some failed
    or stalled, 2 a wrong plan (nothing ran).
    """
    app = click.get_current_context().find_root().obj
    parsed = batch_plan.read(plan)
    if output_file and Path(output_file).is_dir():
        raise UsageError(f"--output-file {output_file}: a directory; give a file path")
    cwd = Path.cwd()
    root_args = _root_args(app)
    jobs = jobs or _default_jobs()
    config = app.config()
    settings = Settings(
        dry_run=not execute,
        jobs=jobs,
        stall_after=stall_timeout,
        root_args=root_args,
        cwd=cwd,
        decision_log=records.log_path(config, os.getcwd()),
        config_sha256=config.sha256,
    )
    children = Children()
    children.start()  # forked now, while this process runs no other thread
    try:
        _check_same_rules(app, root_args, children, cwd)
        started = time.monotonic()
        with batch_view.watcher(parsed) as events:
            outcomes = Batch(parsed, settings, events, children).run()
    finally:  # the step server ends with the batch, a usage error above included
        children.close()
    code = exit_code(outcomes)
    doc = batch_report.as_dict(
        outcomes, plan=str(plan), dry_run=settings.dry_run, code=code, seconds=time.monotonic() - started, jobs=jobs
    )
    text = batch_report.render(fmt, doc)
    if output_file:
        io.write_text(output_file, text)
    sys.stdout.write(text)
    raise SystemExit(int(ExitCode(code)))
