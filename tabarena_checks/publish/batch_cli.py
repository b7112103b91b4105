"""``checks tabarena publish PLAN``: publish the methods a plan lists (see :mod:`.batch`).

Declared by name in tabarena_checks/cli.py and imported only when it runs. The plan is read and
every input checked before any step starts (exit 2 naming the plan's line); then the batch runs,
watched live on a terminal or one line per event elsewhere (stderr), and its summary goes to
stdout in the format asked for.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import click

from checks import ExitCode, UsageError, io, records
from tabarena_checks.publish import batch_plan, batch_report, batch_view
from tabarena_checks.publish.batch import Batch, Settings, exit_code


def _root_args(app) -> tuple[str, ...]:
    """The ``checks`` options each step needs to judge as this command would: the same configuration."""
    path = getattr(app, "config_path", None)
    return ("--config", str(Path(path).resolve())) if path else ()


def _default_jobs() -> int:
    """One method processed at a time: processing is the batch's memory peak, and the uploads overlap it anyway."""
    return 1


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
    type=click.IntRange(1, 64),
    default=None,
    help="Methods processed (and uploaded) at the same time [default: 1, the memory of one method].",
)
@click.option(
    "--stall-timeout",
    type=click.FloatRange(min=1),
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="Stop a step that printed, read, wrote and computed nothing this long (STALLED); the others go on.",
)
@click.option("--format", "fmt", type=click.Choice(batch_report.FORMATS), default="human", show_default=True)
@click.option("--output-file", default=None, metavar="PATH", help="Also write the summary (in --format) to PATH.")
def publish_cmd(plan, execute, jobs, stall_timeout, fmt, output_file):
    """Publish every method of PLAN (TOML): process, upload, register and log, pipelined and resumable.

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
    settings = Settings(
        dry_run=not execute,
        jobs=jobs or _default_jobs(),
        stall_after=stall_timeout,
        root_args=_root_args(app),
        cwd=cwd,
        decision_log=records.log_path(app.config(), os.getcwd()),
    )
    started = time.monotonic()
    with batch_view.watcher(parsed) as events:
        outcomes = Batch(parsed, settings, events).run()
    code = exit_code(outcomes)
    doc = batch_report.as_dict(
        outcomes, plan=str(plan), dry_run=settings.dry_run, code=code, seconds=time.monotonic() - started
    )
    text = batch_report.render(fmt, doc)
    if output_file:
        io.write_text(output_file, text)
    sys.stdout.write(text)
    raise SystemExit(int(ExitCode(code)))
