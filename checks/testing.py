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

from checks import config as config_mod
from checks.config import Config, Waiver
from checks.context import RunContext
from checks.model import Outcome, Rule, Severity, Verdict
from checks.runner import evaluate


def evaluate_rules(
    rules: Iterable[Rule],
    facts: Any = None,
    *,
    action: str = "test",
    options: Mapping[str, Any] | None = None,
    config: Config | str | None = None,
    settings: Any = None,
    target: str = "test",
    today: dt.date | None = None,
    extra_waivers: Iterable[Waiver] = (),
) -> dict[str, Verdict]:
    """Evaluate ``rules`` against ``facts`` the way the runner does; returns verdicts by code.

    ``config`` may be rules.toml text (for waivers and severity overrides);
    ``extra_waivers`` are waivers an action adds from its command line.
    """
    if isinstance(config, str):
        config = config_mod.parse(config, source="<test rules.toml>")
    config = config or Config()
    rules = list(rules)
    ctx = RunContext(action=action, options=dict(options or {}), config=config, settings=settings,
                     today=today or dt.date.today(), facts=facts, target=target,
                     extra_waivers=list(extra_waivers))
    chosen = []
    for r in rules:
        severity = (config.rules.get(r.code) and config.rules[r.code].severity) or r.severity
        chosen.append((r, severity))
    return {v.code: v for v in evaluate(chosen, ctx, [r.code for r in rules])}


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


def run_cli(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None) -> CliResult:
    """Run ``checks ARGS`` in-process with ``env`` added to the environment and ``cwd`` as working directory."""
    from checks.cli import main

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


__all__ = ["CliResult", "Severity", "assert_fails", "assert_passes", "evaluate_rules", "run_cli"]
