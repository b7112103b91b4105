"""``checks run ACTION``: one subcommand per action, built when it is asked for.

The ``checks`` group declares ``run`` and imports this module only when ``run`` is the command
(:class:`checks.cli.ChecksGroup`), so ``checks rules`` never loads the runner, the judge or the
output formats.
"""

from __future__ import annotations

import contextlib
import os

import click

from checks import helpgroups, output, reporting, runner
from checks.options import declared_params
from checks.cli import (
    App,
    echo_error,
    global_params,
    pop_selection,
    quiet_stdout,
    refuse_unloaded,
    registry_of,
    selection_params,
)


class RunGroup(click.Group):
    """``checks run ACTION``: one subcommand per action contributed by the plugins."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(registry_of(ctx).actions)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        registry = registry_of(ctx)
        action = registry.action(name)
        if action is None and not ctx.resilient_parsing:
            refuse_unloaded(registry, f"no action {name!r}", action=name)
        return run_command(action) if action else None


def run_group() -> click.Group:
    """The ``run`` group of ``checks``."""
    return RunGroup("run", help="Run ACTION after its rules pass (checks run --help lists actions).")


def run_command(action) -> click.Command:
    def callback(decision_log: str | None, **options):
        app: App = click.get_current_context().find_object(App)
        dry_run = not options.pop("execute") if action.plans_by_default else options.pop("plan")
        selection = pop_selection(options)
        result = runner.run(
            app.registry,
            action.name,
            action.make_options(options),
            app.config(decision_log, selection),
            dry_run=dry_run,
            cwd=os.getcwd(),
            command_line=app.argv,
        )
        rules = {code: rule.summary for code, rule in app.registry.rules.items()}
        try:
            reporting.emit(output.Report.from_run(result, rules))
        except (BrokenPipeError, ValueError) as exc:  # the reader left (`| head -1`), or stdout was closed
            _report_lost(result, exc)
        raise SystemExit(int(result.exit_code))

    decision_log = click.Option(
        ["--decision-log"], default=None, help="Append the decision record here instead of rules.toml's decision_log."
    )
    params = [
        *helpgroups.tag(action.params or declared_params(action.options), f"Options of {action.name}"),
        *helpgroups.tag([*_mode_options(action), decision_log], "Run"),
        *helpgroups.tag(reporting.params(), "Output"),
        *helpgroups.tag(selection_params(), "Selection"),
        *helpgroups.tag(global_params(), "Global"),
    ]
    return helpgroups.grouped(click.Command(action.name, callback=callback, params=params, help=action.help))


def _report_lost(result, exc: BaseException) -> None:
    """The run's report could not be printed: say so on stderr with what happened to the action.

    The exit code stays the run's own (0 when the action ran): the action's outcome is the fact a
    caller acts on, and it is in the decision record; an unread report changes nothing that was done.
    """
    quiet_stdout()
    why = "the reader of stdout went away" if isinstance(exc, BrokenPipeError) else "stdout is closed"
    with contextlib.suppress(OSError, ValueError):
        echo_error(
            f"checks: warning: the report was not printed ({why}); checks run {result.action}: outcome "
            f"{result.outcome}, exit {int(result.exit_code)}; the decision record holds the verdicts",
            err=True,
        )


def _mode_options(action) -> list[click.Option]:
    """One flag per action: ``--dry-run`` where executing is the default, ``--no-dry-run`` where planning is.

    ``--dry-run`` on an action that plans by default is refused with what to do, never
    taken for (or "corrected" by click to) its opposite.
    """
    if not action.plans_by_default:
        return [
            click.Option(
                ["--dry-run", "plan"], is_flag=True, help="Evaluate the rules and print the plan; change nothing."
            )
        ]

    def refuse(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            raise click.UsageError(
                f"checks run {action.name} plans by default: leave out --dry-run to plan; "
                f"--no-dry-run executes for real",
                ctx=ctx,
            )

    return [
        click.Option(
            ["--no-dry-run", "execute"],
            is_flag=True,
            help="Execute for real; without it the action only plans (rules, then the plan; nothing changes).",
        ),
        click.Option(["--dry-run"], is_flag=True, hidden=True, expose_value=False, callback=refuse),
    ]
