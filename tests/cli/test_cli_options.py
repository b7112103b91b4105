"""Global options where CI puts them, and errors that name where a bad value came from.

``--config`` is read before click parses, wherever it stands (a pre-commit hook's ``args:``
come after the subcommand); a selection option naming a required rule or leaving no rule is
blamed on the option, not on a configuration file the user never wrote.
"""

from __future__ import annotations

import json

from tests.support.precommit_fixtures import INFO_CASES, write_info

from checks.exitcodes import ExitCode
from checks.testing import run_cli

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")


def checks(tmp_path, *args):
    return run_cli([*BUILTIN, *args], env=ENV, cwd=tmp_path)


def bad_date(tmp_path) -> str:
    return write_info(tmp_path, "bad", INFO_CASES["TA110"][0]).relative_to(tmp_path).as_posix()


def test_config_after_the_subcommand_is_the_configuration_used(tmp_path):
    path = bad_date(tmp_path)
    (tmp_path / "lax.toml").write_text('ignore = ["TA110"]\n')
    assert checks(tmp_path, "precommit", "info-py", path).exit_code == ExitCode.BLOCKED
    for spelling in (["--config", "lax.toml"], ["--config=lax.toml"]):
        res = checks(tmp_path, "precommit", "info-py", path, *spelling)
        assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
        res = checks(tmp_path, *spelling, "precommit", "info-py", path)  # before the subcommand, as always
        assert res.exit_code == ExitCode.OK, res.stdout + res.stderr


def test_config_after_the_subcommand_is_shown_by_checks_config(tmp_path):
    (tmp_path / "lax.toml").write_text('ignore = ["TA110"]\n')
    res = checks(tmp_path, "config", "--config", "lax.toml")
    assert res.exit_code == ExitCode.OK and "lax.toml" in res.stdout, res.stdout + res.stderr


def test_two_different_configs_are_refused_naming_both(tmp_path):
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "b.toml").write_text("")
    res = checks(tmp_path, "--config", "a.toml", "precommit", "info-py", "x.py", "--config", "b.toml")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "--config is given 2 times (a.toml, b.toml)" in res.stderr


def test_a_config_after_a_double_dash_is_not_taken(tmp_path):
    (tmp_path / "lax.toml").write_text('ignore = ["TA110"]\n')
    res = checks(tmp_path, "precommit", "info-py", bad_date(tmp_path), "--", "--config")
    assert res.exit_code == ExitCode.USAGE_ERROR and "--config" in res.stdout + res.stderr  # a file named --config


def test_ignoring_a_required_rule_on_the_command_line_blames_the_option(tmp_path):
    path = bad_date(tmp_path)
    (tmp_path / "rules.toml").write_text("")
    for option, value in [
        ("--ignore", "TA101"),
        ("--extend-ignore", "TA110,TA101"),
        ("--per-file-ignores", "*.py:TA101"),
    ]:
        res = checks(tmp_path, "precommit", "info-py", path, option, value)
        assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
        assert res.stderr.startswith(f"checks: error: {option}"), res.stderr
        assert (
            "TA101 (method-not-suite) is a required rule" in res.stderr and "rules.toml" not in res.stderr.split(";")[0]
        )


def test_ignoring_a_required_rule_in_the_file_still_blames_the_file(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TA101"]\n')
    res = checks(tmp_path, "precommit", "info-py", bad_date(tmp_path))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert res.stderr.startswith(f"checks: error: {tmp_path / 'rules.toml'}: ignore: TA101"), res.stderr


def test_an_empty_gate_names_the_option_and_the_rules_the_action_has(tmp_path):
    res = checks(tmp_path, "precommit", "info-py", bad_date(tmp_path), "--select", "TA301")
    assert res.exit_code == ExitCode.NO_RULES, res.stderr
    assert "--select=TA301 on the command line" in res.stderr and "<defaults>" not in res.stderr
    assert "the rules bound to it: TA101, TA110" in res.stderr


def test_judging_options_before_the_subcommand_reach_it(tmp_path):

    path = bad_date(tmp_path)
    res = checks(tmp_path, "--format", "json", "--select", "TA110", "precommit", "info-py", path)
    data = json.loads(res.stdout)
    assert [v["code"] for v in data["verdicts"] if v["code"].startswith("TA1")] == ["TA101", "TA110", "TA118"]
    res = checks(tmp_path, "--format=github", "-q", "precommit", "info-py", path, "--ignore", "TA110")
    assert res.exit_code == 0 and res.stdout == ""  # the later --ignore applies; nothing to annotate


def test_a_judging_option_before_a_command_without_it_is_refused_by_name(tmp_path):
    res = checks(tmp_path, "--select", "TA1", "rules")
    assert res.exit_code == ExitCode.USAGE_ERROR and "No such option '--select'" in res.stderr


def test_options_after_a_double_dash_stay_where_they_are(tmp_path):
    res = checks(tmp_path, "precommit", "info-py", "-q", "--", "--format")
    assert (
        res.exit_code == ExitCode.USAGE_ERROR and res.stdout == "--format:1:1: error no such file\n"
    )  # a file named --format


def test_a_missing_run_directory_is_a_usage_error_not_a_blocked_run(tmp_path):
    (tmp_path / "info.py").write_text("m = 1\n")
    (tmp_path / "there").mkdir()
    res = checks(tmp_path, "run", "process", "nothere", "--method-metadata", "info.py:m", "--dry-run")
    assert res.exit_code == ExitCode.USAGE_ERROR and res.stdout == "", res.stdout  # no "31 passed" report
    assert "RUN_DATA_DIR" in res.stderr and "'nothere' does not exist" in res.stderr
    assert "Did you mean 'there'?" in res.stderr
