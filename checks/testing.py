"""Helpers for testing rules and plugins, usable directly or as pytest fixtures.

In a plugin's ``conftest.py``: ``pytest_plugins = ["checks.testing"]`` gives the
fixtures ``checks_evaluate`` and ``checks_cli``.
"""

from __future__ import annotations

import datetime as dt
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import attrs

from checks import config_parse, config_select, plugins
from checks.cli import main
from checks.config_model import Config, Waiver
from checks.context import RunContext
from checks.judge import evaluate
from checks.model import Outcome, Rule, Severity, Verdict, known_codes


def evaluate_rules(
    rules: Iterable[Rule],
    facts: Any = None,
    *,
    action: str = "test",
    options: Any = None,
    config: Config | str | None = None,
    settings: Any = None,
    target: str = "test",
    today: dt.date | None = None,
    extra_waivers: Iterable[Waiver] = (),
    dry_run: bool = False,
) -> dict[str, Verdict]:
    """Evaluate ``rules`` against ``facts`` the way the runner does; returns verdicts by code.

    ``config`` may be rules.toml text (for waivers and severity overrides);
    ``extra_waivers`` are waivers an action adds from its command line; ``options`` is the
    action's options object (or a dict for an action without an options class).
    ``dry_run`` judges a plan (``ctx.dry_run``) instead of an execution.
    """
    if isinstance(config, str):
        config = config_parse.parse(config, source="<test rules.toml>")
    config = config or Config()
    rules = list(rules)
    ctx = RunContext(
        action=action,
        options=_options(options),
        config=config,
        settings=settings,
        today=today or dt.date.today(),
        facts=facts,
        target=target,
        dry_run=dry_run,
        extra_waivers=list(extra_waivers),
    )
    chosen = [(r, _severity(r, config)) for r in rules]
    return {v.code: v for v in evaluate(chosen, ctx, known_codes(rules))}


def _options(options: Any) -> Any:
    """The action's options as the runner passes them: a fresh dict for none or a mapping, else the object."""
    return dict(options or {}) if options is None or isinstance(options, Mapping) else options


def _severity(rule: Rule, config: Config) -> Severity:
    """The rule's severity, or the one ``config``'s ``[rules.CODE]`` (or its group's) sets."""
    return config_select.effective(rule, config, None)[0]


def assert_fails(verdicts: Mapping[str, Verdict], code: str, contains: str = "") -> Verdict:
    """Assert rule ``code`` failed (and a finding mentions ``contains``)."""
    v = verdicts[code]
    assert v.outcome is Outcome.FAILED, f"{code} expected to fail, got {v.outcome.value}: {v.message}"
    if contains:
        assert contains in v.message, f"{code} message {v.message!r} lacks {contains!r}"
    return v


def assert_passes(verdicts: Mapping[str, Verdict], code: str) -> Verdict:
    v = verdicts[code]
    assert v.outcome is Outcome.PASSED, f"{code} expected to pass, got {v.outcome.value}: {v.message}"
    return v


@attrs.frozen
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(
    args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None
) -> CliResult:
    """Run ``checks ARGS`` in-process with ``env`` added to the environment and ``cwd`` as working directory."""
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return CliResult(code, out.getvalue(), err.getvalue())


# --------------------------------------------------------------------------- realistic facts
#
# A rule reads ``ctx.facts``; :func:`gather_facts` builds what an action really gathers, through
# the action's own ``gather``. The builders of each built-in plugin's inputs live with that
# plugin (``tabarena_checks.testing``, ``hfmigrate_checks.testing``): the framework knows no domain.


def gather_facts(
    action: str,
    options: Mapping[str, Any],
    *,
    plugin_args: Sequence[str],
    config: Config | str | None = None,
    dry_run: bool | None = None,
) -> Any:
    """The facts ``checks run ACTION`` would gather with ``options`` (keyword names as in ``ctx.options``).

    ``plugin_args`` are ``-p`` arguments naming the plugins to load (autoload stays off, so
    installed third-party plugins play no part); the action is looked up among them. The
    built-in plugins' own builders (``tabarena_checks.testing``, ``hfmigrate_checks.testing``)
    pass theirs.

    ``dry_run`` defaults to what the command does without a flag: plan for an action that plans
    by default (upload), execute otherwise.
    """
    registry = plugins.load(list(plugin_args), environ={plugins.AUTOLOAD_ENV: "1"})
    if isinstance(config, str):
        config = config_parse.parse(config, source="<test rules.toml>", sections=registry.config_sections)
    config = config or config_parse.parse("", source="<defaults>", sections=registry.config_sections)
    spec = registry.actions[action]
    ctx = RunContext(
        action=action,
        options=spec.make_options(options),
        config=config,
        settings=config.arena(spec.arena).settings,
        dry_run=spec.plans_by_default if dry_run is None else dry_run,
    )
    return spec.gather(ctx)


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is only needed for the fixtures
    pytest = None

if pytest is not None:

    @pytest.fixture
    def checks_evaluate():
        """``checks_evaluate(rules, facts, **kw)`` -> verdicts by code (see :func:`evaluate_rules`)."""
        return evaluate_rules

    @pytest.fixture
    def checks_cli(tmp_path: Path):
        """``checks_cli(*args, env=None)`` runs the CLI in-process in a temporary working directory."""

        def invoke(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> CliResult:
            return run_cli(args, env=env, cwd=cwd or tmp_path)

        return invoke


__all__ = ["CliResult", "Severity", "assert_fails", "assert_passes", "evaluate_rules", "gather_facts", "run_cli"]
