"""A rule's group (``Rule.group``): a code that selects, ignores, waives and sets every rule of the group.

A rule that checked many things and is split into one rule per check keeps its old code as the group of
the new rules, so a configuration written for the old rule means what it meant (TabArena's TA306).
"""

from __future__ import annotations

import json

import pytest

from checks import Action, Finding, Severity, config_load, config_parse, config_select, rule
from checks.config_model import Layer
from checks.config_select import is_selected
from checks.errors import ConfigError
from checks.judge import select_rules
from checks.model import Outcome, known_codes
from checks.testing import evaluate_rules, run_cli


def _member(code: str, name: str, group: str | None = "ZZ306"):
    @rule(code, name, actions=("act",), group=group)
    def check(ctx):
        """Always finds one problem."""
        yield Finding(f"{name} found it", path="data/x.pkl")

    return check


RULES = [_member("ZZ321", "first-check"), _member("ZZ322", "second-check"), _member("ZZ401", "alone", None)]
ACTION = Action("act", "an action", gather=lambda ctx: None, plan=lambda ctx: [], execute=lambda ctx: None)


def _selected(toml: str) -> set[str]:
    config = config_parse.parse(toml, source="rules.toml")
    return {r.code for r, _ in select_rules({r.code: r for r in RULES}, ACTION, config)}


@pytest.mark.parametrize(
    "toml, expected",
    [
        ("", {"ZZ321", "ZZ322", "ZZ401"}),
        ('ignore = ["ZZ306"]\n', {"ZZ401"}),  # the group's code ignores every member
        ('ignore = ["ZZ30"]\n', {"ZZ401"}),  # a prefix of the group's code too, as it did the old rule
        ('select = ["ZZ306"]\n', {"ZZ321", "ZZ322"}),
        ('ignore = ["ZZ306"]\nextend-select = ["ZZ321"]\n', {"ZZ321", "ZZ401"}),  # the member's own code wins
        ('select = ["ZZ306"]\nignore = ["ZZ322"]\n', {"ZZ321"}),
        ('select = ["ZZ3"]\nignore = ["ZZ306"]\n', set()),  # the longer selector wins, as between codes
        ('select = ["ZZ306"]\nignore = ["ZZ3"]\n', {"ZZ321", "ZZ322"}),
    ],
)
def test_the_group_code_selects_and_ignores_its_rules(toml, expected):
    assert _selected(toml) == expected


def test_a_group_selector_ties_with_a_code_selector_as_the_code_wins():
    # equally long selectors: the one naming the code is the more specific
    assert is_selected("ZZ321", [Layer("f", select=("ZZ321",), ignore=("ZZ306",))], "ZZ306")
    assert not is_selected("ZZ321", [Layer("f", select=("ZZ306",), ignore=("ZZ321",))], "ZZ306")
    assert not is_selected("ZZ321", [Layer("f", select=("ALL",), ignore=("ZZ306",))], "ZZ306")
    assert is_selected("ZZ321", [Layer("f", select=("ALL",), ignore=("ZZ306",))])  # no group, nothing ignored


WAIVER = '[[waivers]]\nrule = "ZZ306"\ntarget = "test"\nreason = "r"\nowner = "o@example.org"\nexpires = 2099-01-01\n'


def test_a_waiver_of_the_group_waives_each_member_and_nothing_else():
    verdicts = evaluate_rules(RULES, config=WAIVER)
    assert verdicts["ZZ321"].outcome is Outcome.WAIVED and verdicts["ZZ321"].waivers == ("ZZ306:test",)
    assert verdicts["ZZ322"].outcome is Outcome.WAIVED
    assert verdicts["ZZ401"].outcome is Outcome.FAILED


def test_the_group_settings_apply_and_the_members_own_override_them():
    toml = '[rules.ZZ306]\nseverity = "warning"\n[rules.ZZ322]\nseverity = "info"\n'
    verdicts = evaluate_rules(RULES, config=toml)
    assert [verdicts[c].severity for c in ("ZZ321", "ZZ322", "ZZ401")] == [
        Severity.WARNING,
        Severity.INFO,
        Severity.ERROR,
    ]


def test_per_file_ignores_name_the_group(tmp_path, monkeypatch):
    (tmp_path / "rules.toml").write_text('[per-file-ignores]\n"data/*" = ["ZZ306"]\n')
    monkeypatch.chdir(tmp_path)
    verdicts = evaluate_rules(RULES, config=config_load.load(tmp_path / "rules.toml", cwd=tmp_path))
    assert verdicts["ZZ321"].outcome is Outcome.PASSED and verdicts["ZZ401"].outcome is Outcome.FAILED


def test_a_group_code_is_a_known_code_and_an_unknown_one_is_still_refused():
    codes = known_codes(RULES)
    assert codes == {"ZZ321", "ZZ322", "ZZ401", "ZZ306"}
    config_select.check_codes(config_parse.parse('ignore = ["ZZ306"]\n' + WAIVER, source="rules.toml"), codes, ())
    with pytest.raises(ConfigError, match="waivers\\[0\\].rule: no rule has the code 'ZZ307'"):
        config_select.check_codes(config_parse.parse(WAIVER.replace("ZZ306", "ZZ307"), source="rules.toml"), codes, ())


def test_checks_rule_explains_a_group_and_its_members(tmp_path):
    group = run_cli(["rule", "TA306"], cwd=tmp_path)
    assert group.exit_code == 0, group.stderr
    assert group.stdout.startswith("# TA306 (a group of ") and "- TA322 numbers-finite: " in group.stdout
    member = run_cli(["rule", "TA322"], cwd=tmp_path)
    assert "Group: TA306 (selecting, ignoring or waiving TA306 covers this rule)." in member.stdout
    assert run_cli(["rule", "TA399"], cwd=tmp_path).exit_code == 2
    rows = {r["code"]: r for r in json.loads(run_cli(["rules", "--format", "json"], cwd=tmp_path).stdout)}
    assert rows["TA322"]["group"] == "TA306" and rows["TA301"]["group"] is None


def test_a_waiver_of_a_group_is_held_to_the_rules_for_its_required_members():
    required = rule("ZZ323", "required-check", actions=("act",), required=True, group="ZZ306")(lambda ctx: None)
    rules = {r.code: r for r in (*RULES, required)}
    config = config_parse.parse(WAIVER.replace('target = "test"', 'target = "*"'), source="rules.toml")
    with pytest.raises(ConfigError, match=r"waivers\[0\].target: ZZ323 \(required-check\) is a required rule"):
        select_rules(rules, ACTION, config)
