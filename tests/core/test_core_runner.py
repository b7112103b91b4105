"""The runner gates actions: isolation, order, waivers, required rules, exit codes, outputs, records."""

from __future__ import annotations

import datetime as dt
import json
from xml.etree import ElementTree as ET

import attrs
import pytest

from checks import Action, records
from checks.exitcodes import ExitCode
from checks.testing import run_cli

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def toy(tmp_path, *args, env=None, config=None, plugins=("toy_plugin",)):
    if config is not None:
        (tmp_path / "rules.toml").write_text(config)
    argv = []
    for p in plugins:
        argv += ["-p", p]
    argv += ["run", "toy", "--marker", str(tmp_path / "marker"), *args]
    return run_cli(argv, env={**NO_AUTOLOAD, **(env or {})}, cwd=tmp_path)


def log(tmp_path):
    return records.read(tmp_path / ".checks" / "decisions.jsonl")


def test_passing_run_executes_the_action(tmp_path):
    res = toy(tmp_path)
    assert res.exit_code == ExitCode.OK, res.stderr
    assert (tmp_path / "marker").read_text() == "ran\n"
    assert "action ran" in res.stdout


def test_error_verdict_blocks_and_action_never_runs(tmp_path):
    res = toy(tmp_path, "--fail")
    assert res.exit_code == ExitCode.BLOCKED
    assert not (tmp_path / "marker").exists()
    assert "asked to fail" in res.stdout


def test_crashing_rule_does_not_hide_others_and_blocks(tmp_path):
    res = toy(tmp_path, "--crash", "--fail", "--warn", "--format", "json")
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    assert not (tmp_path / "marker").exists()
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TOY002"]["outcome"] == "crashed"
    assert "RuntimeError: boom from TOY002" in verdicts["TOY002"]["message"]
    assert verdicts["TOY001"]["outcome"] == "failed"
    assert verdicts["TOY003"]["outcome"] == "failed" and verdicts["TOY003"]["severity"] == "warning"
    assert verdicts["TOY004"]["outcome"] == "passed"


def test_warning_alone_does_not_block(tmp_path):
    res = toy(tmp_path, "--warn")
    assert res.exit_code == ExitCode.OK
    assert (tmp_path / "marker").exists()


def test_verdict_order_is_by_code_whatever_the_load_order(tmp_path):
    orders = []
    for plugins in (("toy_plugin", "toy_second"), ("toy_second", "toy_plugin")):
        res = toy(tmp_path, "--format", "json", plugins=plugins)
        orders.append([v["code"] for v in json.loads(res.stdout)["verdicts"]])
    assert orders[0] == orders[1]
    assert orders[0] == sorted(orders[0])
    assert orders[0][:2] == ["CK001", "CK002"] and "TOY000" in orders[0]


def test_dry_run_prints_plan_and_changes_nothing(tmp_path):
    res = toy(tmp_path, "--dry-run")
    assert res.exit_code == ExitCode.OK
    assert "plan: would write" in res.stdout
    assert not (tmp_path / "marker").exists()
    assert log(tmp_path)[-1]["outcome"] == "dry-run"


def test_action_failure_exit_code(tmp_path):
    res = toy(tmp_path, "--action-fails")
    assert res.exit_code == ExitCode.ACTION_FAILED
    assert log(tmp_path)[-1]["outcome"] == "failed"


WAIVER = """
[[waivers]]
rule = "TOY001"
target = "toy-*"
reason = "known and tracked"
owner = "ana"
expires = {expires}
"""


def test_valid_waiver_lets_the_action_run_and_is_recorded(tmp_path):
    future = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    res = toy(tmp_path, "--fail", config=WAIVER.format(expires=future))
    assert res.exit_code == ExitCode.OK, res.stdout
    assert (tmp_path / "marker").exists()
    rec = log(tmp_path)[-1]
    assert rec["waivers_used"] == ["TOY001:toy-*"]
    assert {v["code"]: v["outcome"] for v in rec["verdicts"]}["TOY001"] == "waived"


def test_waiver_only_covers_matching_targets_and_one_for_another_target_is_not_called_unused(tmp_path):
    future = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    res = toy(tmp_path, "--fail", "--name", "other", "--format", "json", config=WAIVER.format(expires=future))
    assert res.exit_code == ExitCode.BLOCKED
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TOY001"]["outcome"] == "failed"
    assert verdicts["CK002"]["outcome"] == "passed"  # the waiver is for toy-* targets; this run saw only 'other'


def test_a_waiver_for_the_run_s_target_that_matched_nothing_is_unused(tmp_path):
    future = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    res = toy(tmp_path, "--name", "toy-seen", config=WAIVER.format(expires=future))
    assert res.exit_code == ExitCode.OK
    assert "CK002" in res.stdout and "waiver for TOY001 on 'toy-*' matched no finding" in res.stdout


def test_a_waiver_of_a_place_inside_a_target_is_judged_when_the_run_saw_that_target(tmp_path):
    future = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    inside = WAIVER.format(expires=future).replace('"toy-*"', '"toy-seen#/scores/0"')
    res = toy(tmp_path, "--name", "toy-seen", config=inside)
    assert "waiver for TOY001 on 'toy-seen#/scores/0' matched no finding" in res.stdout
    res = toy(tmp_path, "--name", "toy-other", "--format", "json", config=inside)
    assert {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["CK002"]["outcome"] == "passed"


def test_expired_waiver_is_an_error(tmp_path):
    res = toy(tmp_path, "--fail", config=WAIVER.format(expires="2020-01-31"))
    assert res.exit_code == ExitCode.BLOCKED
    assert "expired on 2020-01-31" in res.stdout
    assert not (tmp_path / "marker").exists()


def test_unused_waiver_is_reported_but_does_not_block(tmp_path):
    future = (dt.date.today() + dt.timedelta(days=30)).isoformat()
    res = toy(tmp_path, "--format", "json", config=WAIVER.format(expires=future))
    assert res.exit_code == ExitCode.OK
    ck002 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["CK002"]
    assert ck002["outcome"] == "failed" and ck002["severity"] == "warning"


@pytest.mark.parametrize(
    ("config", "words"),
    [
        pytest.param('ignore = ["TOY004"]\n', "TOY004 (toy-required) is a required rule", id="ignored"),
        pytest.param('[rules.TOY004]\nseverity = "warning"\n', "must stay 'error'", id="severity-lowered"),
    ],
)
def test_a_required_rule_cannot_be_ignored_or_lowered(tmp_path, config, words):
    res = toy(tmp_path, config=config)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert words in res.stderr


def test_required_rule_survives_a_prefix_ignore_and_still_blocks(tmp_path):
    res = toy(tmp_path, "--fail-required", config='[arenas.toy]\nselect = ["TOY003"]\nignore = ["TOY00"]\n')
    assert res.exit_code == ExitCode.BLOCKED
    assert "required rule failed" in res.stdout


def test_severity_override_turns_an_error_into_a_warning(tmp_path):
    res = toy(tmp_path, "--fail", config='[rules.TOY001]\nseverity = "warning"\n')
    assert res.exit_code == ExitCode.OK


def test_required_rule_runs_even_when_not_selected(tmp_path):
    res = toy(tmp_path, "--fail-required", "--format", "json", config='select = ["TOY003"]\n')
    assert res.exit_code == ExitCode.BLOCKED
    codes = [v["code"] for v in json.loads(res.stdout)["verdicts"]]
    assert "TOY004" in codes and "TOY003" in codes and "TOY001" not in codes


def test_a_selection_matching_no_rule_of_the_action_is_an_error(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["CK"]\n')
    res = run_cli(
        ["-p", "toy_only_optional", "run", "toy", "--marker", str(tmp_path / "m")], env=NO_AUTOLOAD, cwd=tmp_path
    )
    assert res.exit_code == ExitCode.NO_RULES, res.stderr
    assert "no rule is selected" in res.stderr
    assert not (tmp_path / "m").exists()


def test_only_required_rules_left_is_no_gate(tmp_path):
    res = toy(tmp_path, config='ignore = ["TOY001", "TOY002", "TOY003"]\n')
    assert res.exit_code == ExitCode.NO_RULES, res.stdout + res.stderr
    assert "no rule is selected for action 'toy' besides the required ones" in res.stderr
    assert not (tmp_path / "marker").exists()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("select = []\n", "rules.toml, line 1: select: an empty list selects no rule"),
        ("[arenas.toy]\nselect = []\n", "rules.toml, line 2: arenas.toy.select: an empty list selects no rule"),
        ('select = ["ZZ"]\n', "rules.toml, line 1: select: 'ZZ' matches no rule code"),
        ('select = ["TOY1"]\n', "rules.toml, line 1: select: 'TOY1' matches no rule code"),
        ('ignore = ["TOY009"]\n', "rules.toml, line 1: ignore: 'TOY009' matches no rule code"),
        ('[rules.TOY009]\nseverity = "warning"\n', "rules.toml, line 1: rules.TOY009: no rule has the code 'TOY009'"),
        ('[arenas.toy]\nignore = ["XY"]\n', "rules.toml, line 2: arenas.toy.ignore: 'XY' matches no rule code"),
        ('[arenas.toy.rules.TOY009]\nseverity = "info"\n', "arenas.toy.rules.TOY009: no rule has the code"),
        ('[arenas.toys]\nignore = ["TOY003"]\n', "arenas.toys: no loaded action or plugin belongs to arena 'toys'"),
        (
            '[[waivers]]\nrule = "TOY009"\ntarget = "x"\nreason = "r"\nowner = "o"\nexpires = 2099-01-01\n',
            "rules.toml, line 2: waivers[0].rule: no rule has the code 'TOY009'",
        ),
    ],
)
def test_empty_or_unknown_selection_is_a_configuration_error(tmp_path, text, expected):
    res = toy(tmp_path, "--fail", config=text)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert expected in res.stderr
    assert not (tmp_path / "marker").exists()


def test_every_unknown_code_is_listed_at_once_and_blocked_plugins_are_named(tmp_path):
    res = toy(tmp_path, config='select = ["ZZ"]\nignore = ["QQ"]\n', plugins=("toy_plugin", "no:toy_second"))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "select: 'ZZ'" in res.stderr and "ignore: 'QQ'" in res.stderr
    assert "blocked with -p no:NAME: toy_second" in res.stderr


@pytest.mark.parametrize(
    "text, expected",
    [
        ('[rules.TOY001]\nsevrity = "warning"\n', "rules.TOY001.sevrity: unknown key"),
        ('selct = ["TOY"]\n', "selct: unknown key"),
        ('select = ["TOY", 3]\n', "select"),
        (
            '[[waivers]]\nrule = "TOY001"\ntarget = "x"\nreason = "r"\nowner = "o"\nexpires = "2026-02-30"\n',
            "waivers[0].expires: must be a real calendar date YYYY-MM-DD (got '2026-02-30')",
        ),
        ('[[waivers]]\nrule = "TOY001"\ntarget = "x"\nowner = "o"\nexpires = 2026-02-01\n', "waivers[0].reason"),
        ("[arenas.toy]\nflavour = 1\n", "arenas.toy: unknown key(s) flavour"),
        ("this is = = not toml", "not valid TOML"),
    ],
)
def test_config_errors_name_the_path(tmp_path, text, expected):
    res = toy(tmp_path, config=text)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert expected in res.stderr, res.stderr
    assert "Traceback" not in res.stderr


def test_explicit_config_option_wins_over_the_nearest_file(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["XX"]\nignore = ["TOY"]\n')
    other = tmp_path / "other.toml"
    other.write_text('ignore = ["TOY001"]\n')
    res = run_cli(
        ["-p", "toy_plugin", "--config", str(other), "run", "toy", "--marker", str(tmp_path / "m"), "--fail"],
        env=NO_AUTOLOAD,
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr


def test_config_is_found_in_a_parent_directory(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    res = run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), "--fail"], env=NO_AUTOLOAD, cwd=sub
    )
    assert res.exit_code == ExitCode.OK


def test_json_and_junit_outputs_parse(tmp_path):
    res = toy(tmp_path, "--fail", "--warn", "--format", "json")
    data = json.loads(res.stdout)
    assert data["outcome"] == "blocked" and data["exit_code"] == 1
    res = toy(tmp_path, "--fail", "--crash", "--format", "junit")
    suite = ET.fromstring(res.stdout).find("testsuite")
    cases = {c.get("name").split()[0]: c for c in suite.findall("testcase")}
    assert cases["TOY001"].find("failure") is not None
    assert cases["TOY002"].find("error") is not None
    assert cases["TOY004"].find("failure") is None
    assert suite.get("failures") == "1" and suite.get("errors") == "1"


def test_one_decision_record_per_run_with_the_required_fields(tmp_path):
    toy(tmp_path)
    toy(tmp_path, "--fail")
    toy(tmp_path, "--dry-run")
    recs = log(tmp_path)
    assert [r["outcome"] for r in recs] == ["ran", "blocked", "dry-run"]
    rec = recs[0]
    for key in ("action", "target", "inputs", "verdicts", "waivers_used", "config", "versions", "started", "finished"):
        assert key in rec
    assert rec["action"] == "toy" and rec["target"] == "toy-target"
    assert rec["versions"]["arena-checks"]
    assert all({"code", "severity", "outcome", "message"} <= set(v) for v in rec["verdicts"])


def test_the_record_says_plan_or_execute_and_keeps_the_options(tmp_path):
    toy(tmp_path, "--dry-run", "--name", "planned")
    toy(tmp_path, "--fail")
    toy(tmp_path)
    plan, blocked, ran = log(tmp_path)
    assert (plan["mode"], plan["outcome"], plan["dry_run"]) == ("plan", "dry-run", True)
    assert (blocked["mode"], blocked["outcome"]) == ("execute", "blocked")
    assert (ran["mode"], ran["outcome"], ran["dry_run"]) == ("execute", "ran", False)
    assert plan["options"]["name"] == "planned" and plan["options"]["fail"] is False
    assert blocked["options"]["fail"] is True and ran["options"]["marker"] == str(tmp_path / "marker")
    assert "plan" not in ran["options"] and "output_format" not in ran["options"]


def test_record_options_mask_a_secret_looking_name():
    assert records._options({"api_token": "abc123", "empty_token": None, "pair": ("a", 1), "n": 2}) == {
        "api_token": "***",
        "empty_token": None,
        "n": 2,
        "pair": ["a", 1],
    }


def test_decision_log_location_is_configurable(tmp_path):
    toy(tmp_path, config='decision_log = "audit/log.jsonl"\n')
    assert records.read(tmp_path / "audit" / "log.jsonl")[0]["outcome"] == "ran"
    toy(tmp_path, "--decision-log", str(tmp_path / "x.jsonl"))
    assert len(records.read(tmp_path / "x.jsonl")) == 1


def test_no_secret_reaches_the_record_or_the_output(tmp_path):
    secret = "s3cr3t-VALUE-abcdef123456"
    env = {"R2_SECRET_ACCESS_KEY": secret, "HF_TOKEN": "hf_" + "A" * 30}
    res = toy(tmp_path, "--fail", "--name", f"leak-{secret}-hf_{'A' * 30}", env=env)
    text = (tmp_path / ".checks" / "decisions.jsonl").read_text()
    for blob in (text, res.stdout, res.stderr):
        assert secret not in blob
        assert "hf_" + "A" * 30 not in blob
    assert "***" in text


def test_credential_options_are_refused(tmp_path):
    res = toy(tmp_path, "--secret-access-key", "abc")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "set them in the environment" in res.stderr
    assert "abc" not in res.stderr


def test_unknown_action_is_a_usage_error(tmp_path):
    res = run_cli(["-p", "toy_plugin", "run", "nope"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR


def test_bad_severity_value_is_named(tmp_path):
    res = toy(tmp_path, config='[rules.TOY001]\nseverity = "fatal"\n')
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "rules.TOY001.severity: expected one of 'error', 'warning', 'info' (got 'fatal')" in res.stderr


def test_summary_counts_warnings_apart_from_failures(tmp_path):
    res = toy(tmp_path, "--warn")
    summary = [line for line in res.stdout.splitlines() if "action ran" in line][0]
    assert "1 warning" in summary and "failed" not in summary


def test_an_action_with_an_options_class_gets_an_instance_and_a_misfit_is_named():

    @attrs.frozen
    class Opts:
        marker: str
        loud: bool = False

    action = Action(
        name="typed", help="", gather=lambda ctx: None, plan=lambda ctx: [], execute=lambda ctx: None, options=Opts
    )
    assert action.make_options({"marker": "m"}) == Opts("m")
    with pytest.raises(TypeError, match="action 'typed': options .* do not fit Opts"):
        action.make_options({"marker": "m", "lodu": True})
    untyped = attrs.evolve(action, options=None)
    assert untyped.make_options({"marker": "m"}) == {"marker": "m"}
