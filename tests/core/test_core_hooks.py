"""checks_adjust_config and checks_run_finished, and the checks.testing fixtures."""

from __future__ import annotations

import json
from types import SimpleNamespace

import attrs
import pytest
from toy_plugin import must_not_fail, warns

from checks import Action, config_parse, hookimpl, judge, plugins, rule, runner
from checks.config_model import Config
from checks.errors import ChecksError, PluginError
from checks.exitcodes import ExitCode
from checks.testing import assert_fails, assert_passes

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _run(checks_cli, tmp_path, *args, env=None):
    return checks_cli(
        "-p",
        "toy_plugin",
        "-p",
        "toy_adjust",
        "run",
        "toy",
        "--marker",
        str(tmp_path / "m"),
        *args,
        env={**NO_AUTOLOAD, **(env or {})},
    )


def test_adjust_config_can_ignore_an_optional_rule(checks_cli, tmp_path):
    res = _run(checks_cli, tmp_path, "--fail", env={"TOY_ADJUST": "ignore-optional"})
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr


def test_adjust_config_cannot_bypass_a_required_rule(checks_cli, tmp_path):
    res = _run(checks_cli, tmp_path, "--fail-required", env={"TOY_ADJUST": "ignore-required"})
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "TOY004 (toy-required) is a required rule" in res.stderr
    assert not (tmp_path / "m").exists()


class _AddIgnore:
    """A plugin whose checks_adjust_config adds one code to ``ignore``."""

    def __init__(self, code: str) -> None:
        self.code = code

    @hookimpl
    def checks_adjust_config(self, config):
        return attrs.evolve(config, ignore=(*config.ignore, self.code))


def test_adjust_config_applies_every_plugins_changes_in_call_order():
    registry = plugins.load(
        ["toy_plugin"], environ=NO_AUTOLOAD, extra=[("first", _AddIgnore("TOY001")), ("second", _AddIgnore("TOY003"))]
    )
    config = judge.adjust_config(registry, config_parse.parse("", source="<defaults>"))
    # both changes survive; pluggy's order: the plugin registered last is called first
    assert config.ignore[-2:] == ("TOY003", "TOY001")


class _Narrow:
    """A plugin that replaces the selection and drops one ignore, as a whole Config."""

    @hookimpl
    def checks_adjust_config(self, config):
        return attrs.evolve(config, select=("TOY0",), ignore=tuple(c for c in config.ignore if c != "TOY002"))


def test_adjust_config_applies_removals_and_replacements_with_the_others_additions():
    registry = plugins.load(
        ["toy_plugin"], environ=NO_AUTOLOAD, extra=[("narrow", _Narrow()), ("add", _AddIgnore("TOY003"))]
    )
    config = judge.adjust_config(registry, config_parse.parse('ignore = ["TOY002"]\n', source="rules.toml"))
    assert config.select == ("TOY0",) and config.ignore == ("TOY003",)


def test_adjust_config_returning_something_else_names_the_plugin():
    class Wrong:
        @hookimpl
        def checks_adjust_config(self):
            return {"ignore": ["TOY001"]}

    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("wrong", Wrong())])
    with pytest.raises(ChecksError, match="plugin 'wrong': checks_adjust_config must return a Config or None"):
        judge.adjust_config(registry, config_parse.parse("", source="<defaults>"))


class _Wrapping:
    """A plugin wrapping every step of the chain (``wrapper=True``): it sees each result and may replace it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, ...]] = []

    @hookimpl(wrapper=True)
    def checks_adjust_config(self, config):
        results = yield
        self.seen.append(tuple(config.ignore))
        return [attrs.evolve(r, ignore=(*r.ignore, "TOY005")) for r in results]


def test_adjust_config_is_one_pm_hook_call_wrappers_and_monitoring_included():
    wrapping = _Wrapping()
    registry = plugins.load(
        ["toy_plugin"],
        environ=NO_AUTOLOAD,
        extra=[("first", _AddIgnore("TOY001")), ("wrapping", wrapping), ("second", _AddIgnore("TOY003"))],
    )
    calls = []
    undo = registry.pm.add_hookcall_monitoring(
        lambda name, impls, kwargs: calls.append((name, sorted(i.plugin_name for i in impls), kwargs["config"].ignore)),
        lambda outcome, name, impls, kwargs: None,
    )
    try:
        config = judge.adjust_config(registry, config_parse.parse("", source="<defaults>"))
    finally:
        undo()
    # one call as pluggy makes it: every implementation handed the same configuration, the wrapper around all
    assert calls == [("checks_adjust_config", ["first", "second", "wrapping"], ())]
    assert wrapping.seen == [()]
    assert config.ignore == ("TOY003", "TOY005", "TOY001")


class _WrapperAlone:
    """A plugin whose only checks_adjust_config is a wrapper adding a result of its own."""

    @hookimpl(wrapper=True)
    def checks_adjust_config(self, config):
        results = yield
        return [*results, attrs.evolve(config, ignore=(*config.ignore, "TOY001"))]


def test_a_wrapper_alone_takes_effect_as_in_pluggy():
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("alone", _WrapperAlone())])
    assert judge.adjust_config(registry, config_parse.parse("", source="<defaults>")).ignore == ("TOY001",)


class _Raising:
    @hookimpl
    def checks_adjust_config(self, config):
        raise KeyError("relax")


def test_a_failing_implementation_is_named_and_left_as_registered():
    raising = _Raising()
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("raising", raising), ("add", _AddIgnore("X"))])
    (impl,) = [i for i in registry.pm.hook.checks_adjust_config.get_hookimpls() if i.plugin_name == "raising"]
    assert impl.function == raising.checks_adjust_config  # the bound method pluggy registered, not a wrapper
    with pytest.raises(PluginError, match="plugin 'raising' raised in hook checks_adjust_config: KeyError: 'relax'"):
        judge.adjust_config(registry, config_parse.parse("", source="<defaults>"))


def test_run_finished_sees_every_outcome(checks_cli, tmp_path):
    log = tmp_path / "finished.jsonl"
    _run(checks_cli, tmp_path, env={"TOY_FINISHED_LOG": str(log)})
    _run(checks_cli, tmp_path, "--fail", env={"TOY_FINISHED_LOG": str(log)})
    seen = [json.loads(line) for line in log.read_text().splitlines()]
    assert seen == [{"action": "toy", "outcome": "ran"}, {"action": "toy", "outcome": "blocked"}]


def test_evaluate_fixture_judges_rules_like_the_runner(checks_evaluate):
    failing = checks_evaluate([must_not_fail, warns], {"fail": True, "warn": False, "name": "n"})
    assert_fails(failing, "TOY001", "asked to fail")
    assert_passes(failing, "TOY003")
    waived = checks_evaluate(
        [must_not_fail],
        {"fail": True, "name": "n"},
        config='[[waivers]]\nrule = "TOY001"\ntarget = "n"\nreason = "r"\nowner = "o"\nexpires = 2999-01-01\n',
    )
    assert waived["TOY001"].outcome.value == "waived"


def test_cli_fixture_runs_in_a_temporary_directory(checks_cli, tmp_path):
    res = checks_cli("-p", "toy_plugin", "run", "toy", "--marker", "here", env=NO_AUTOLOAD)
    assert res.exit_code == 0
    assert (tmp_path / "here").exists() and (tmp_path / ".checks" / "decisions.jsonl").exists()


def test_run_help_lists_the_actions(checks_cli):
    res = checks_cli("-p", "toy_plugin", "run", "--help", env=NO_AUTOLOAD)
    assert res.exit_code == 0 and "toy" in res.stdout


def test_facts_are_gathered_once_per_run(tmp_path):

    calls = []

    @rule("GAT001", "gat-a", actions=("g",))
    def a(ctx):
        """Reads the facts."""
        assert ctx.facts.value == 1

    @rule("GAT002", "gat-b", actions=("g",))
    def b(ctx):
        """Reads the facts too."""
        assert ctx.facts.value == 1

    def gather(ctx):
        calls.append(1)
        return SimpleNamespace(value=1)

    class P:
        @hookimpl
        def checks_rules(self):
            return [a, b]

        @hookimpl
        def checks_actions(self):
            return [Action(name="g", help="g", gather=gather, plan=lambda c: [], execute=lambda c: "done")]

    registry = plugins.load([], environ=NO_AUTOLOAD, extra=[("p", P())])
    result = runner.run(registry, "g", {}, Config(decision_log=str(tmp_path / "d.jsonl")), cwd=str(tmp_path))
    assert result.outcome == "ran" and calls == [1]


class _Passing:
    """A wrapper that lets every result and exception through."""

    @hookimpl(wrapper=True)
    def checks_adjust_config(self, config):
        return (yield)


def test_a_failure_under_a_wrapper_names_the_implementation_that_raised():
    registry = plugins.load(
        ["toy_plugin"], environ=NO_AUTOLOAD, extra=[("raising", _Raising()), ("passing", _Passing())]
    )
    with pytest.raises(PluginError, match="plugin 'raising' raised in hook checks_adjust_config"):
        judge.adjust_config(registry, config_parse.parse("", source="<defaults>"))
