"""A toy plugin for the framework tests: one action that writes a marker file, and rules
whose outcome the test chooses through the action's options, which the action hands its rules as facts
(a rule never reads ``ctx.options``)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import click

from checks import Action, ActionFailed, Finding, Severity, hookimpl, rule


@rule("TOY001", "toy-must-not-fail", actions=("toy",), why="toy", example_fail="--fail", example_pass="")
def must_not_fail(ctx):
    """Fails when --fail is given."""
    if ctx.facts["fail"]:
        path, line, col = (ctx.facts.get("at") or "::").rsplit(":", 2)
        yield Finding(
            "asked to fail",
            target=ctx.facts["name"],
            path=ctx.facts.get("finding_path") or path or None,
            line=ctx.facts.get("finding_line") or (int(line) if line else None),
            col=int(col) if col else None,
        )


@rule("TOY002", "toy-crashes", actions=("toy",))
def crashes(ctx):
    """Raises when --crash is given."""
    if ctx.facts["crash"]:
        raise RuntimeError("boom from TOY002")
    return None


@rule("TOY003", "toy-warns", actions=("toy",), severity=Severity.WARNING)
def warns(ctx):
    """Warns when --warn is given."""
    if ctx.facts["warn"]:
        yield "a warning"


@rule("TOY004", "toy-required", actions=("toy",), required=True)
def required(ctx):
    """A required rule that fails when --fail-required is given."""
    if ctx.facts["fail_required"]:
        yield "required rule failed"


def _execute(ctx):
    if ctx.options["action_fails"]:
        raise ActionFailed("the toy action failed on purpose")
    marker = Path(ctx.options["marker"])
    marker.write_text("ran\n")
    return f"wrote {marker}"


ACTION = Action(
    name="toy",
    help="Write a marker file (framework tests).",
    gather=lambda ctx: dict(ctx.options),
    plan=lambda ctx: [f"would write {ctx.options['marker']}"],
    execute=_execute,
    params=(
        click.Option(["--marker"], required=True),
        click.Option(["--name"], default="toy-target"),
        click.Option(["--fail"], is_flag=True),
        click.Option(["--finding-path"], default=None, help="The file TOY001's finding points at."),
        click.Option(["--finding-line"], default=None, type=int, help="The line TOY001's finding points at."),
        click.Option(["--crash"], is_flag=True),
        click.Option(["--warn"], is_flag=True),
        click.Option(["--fail-required"], is_flag=True),
        click.Option(["--action-fails"], is_flag=True),
        click.Option(["--at"], default=None, metavar="PATH:LINE:COL", help="Where TOY001's finding is."),
    ),
    target=lambda ctx: ctx.options["name"],
    inputs=lambda ctx: {"name": hashlib.sha256(ctx.options["name"].encode()).hexdigest()},
    arena="toy",
)


@hookimpl
def checks_rules():
    return [must_not_fail, crashes, warns, required]


@hookimpl
def checks_actions():
    return [ACTION]
