"""The CI conveniences ruff users reach for: --exit-zero, --statistics, --color, CHECKS_FORMAT, quiet annotations."""

from __future__ import annotations

import json

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tests.support.precommit_fixtures import GOOD_INFO, INFO_CASES, write_info

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")


def hook(tmp_path, *args, env=None):
    return run_cli([*BUILTIN, "precommit", "info-py", *args], env={**ENV, **(env or {})}, cwd=tmp_path)


def toy(tmp_path, *args, env=None):
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "marker"), *args],
        env={**ENV, **(env or {})},
        cwd=tmp_path,
    )


def files(tmp_path) -> list[str]:
    """Two declarations failing TA110 (in two files), one failing TA112, one good file."""
    made = [
        write_info(tmp_path, "a", INFO_CASES["TA110"][0]),
        write_info(tmp_path, "b", INFO_CASES["TA110"][0]),
        write_info(tmp_path, "c", INFO_CASES["TA112"][0]),
        write_info(tmp_path, "d", GOOD_INFO),
    ]
    return [p.relative_to(tmp_path).as_posix() for p in made]


def test_exit_zero_passes_findings_but_keeps_reporting_them(tmp_path):
    paths = files(tmp_path)
    res = hook(tmp_path, *paths, "--exit-zero")
    assert res.exit_code == ExitCode.OK and len(res.stdout.splitlines()) == 4, res.stdout
    assert res.stdout.splitlines()[-1] == "Found 3 problems in 3 files (3 blocking); exit 0"
    data = json.loads(hook(tmp_path, *paths, "--exit-zero", "--format", "json").stdout)
    assert (data["outcome"], data["exit_code"]) == ("blocked", 0)


def test_exit_zero_does_not_hide_an_unreadable_file_or_a_bad_option(tmp_path):
    broken = write_info(tmp_path, "x", "m = (\n").relative_to(tmp_path).as_posix()
    assert hook(tmp_path, broken, "--exit-zero").exit_code == ExitCode.USAGE_ERROR
    assert hook(tmp_path, *files(tmp_path), "--exit-zero", "--select", "XX1").exit_code == ExitCode.USAGE_ERROR


def test_statistics_counts_findings_per_rule_most_first(tmp_path):
    res = hook(tmp_path, *files(tmp_path), "--statistics")
    tail = res.stdout.splitlines()[-2:]
    assert [line.split() for line in tail] == [["2", "TA110", "date-calendar"], ["1", "TA112", "tags-allowed"]]


def test_statistics_on_a_run_follow_the_report(tmp_path):
    res = toy(tmp_path, "--fail", "--statistics")
    assert res.stdout.splitlines()[-1].split()[:2] == ["1", "TOY001"], res.stdout


def test_color_always_and_never(tmp_path):
    assert "\x1b[" in toy(tmp_path, "--fail", "--color", "always").stdout
    plain = toy(tmp_path, "--fail", "--color", "never").stdout
    assert "\x1b[" not in plain and "TOY001" in plain


def test_checks_format_sets_the_default_and_an_option_wins(tmp_path):
    paths = files(tmp_path)
    assert json.loads(hook(tmp_path, *paths, env={"CHECKS_FORMAT": "json"}).stdout)["command"] == "precommit"
    res = hook(tmp_path, *paths, "--format", "human", env={"CHECKS_FORMAT": "json"})
    assert res.stdout.startswith(paths[0])


def test_a_bad_checks_format_names_the_variable_and_the_closest(tmp_path):
    res = hook(tmp_path, *files(tmp_path), env={"CHECKS_FORMAT": "jsn"})
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "CHECKS_FORMAT='jsn': expected one of human, json, junit, sarif, github; did you mean 'json'?" in res.stderr


def test_a_clean_run_prints_no_annotation_and_a_failing_one_ends_with_its_summary(tmp_path):
    clean = files(tmp_path)[3]
    assert hook(tmp_path, clean, "--format", "github").stdout == ""
    lines = hook(tmp_path, *files(tmp_path), "--format", "github").stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error"] * 3 + ["::notice"]


def test_a_mistyped_arena_is_refused_with_the_closest(tmp_path):
    good = files(tmp_path)[3]
    res = hook(tmp_path, good, "--arena", "tabarna")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "--arena 'tabarna': " in res.stderr and "did you mean 'tabarena'?" in res.stderr
    assert hook(tmp_path, good, "--arena", "tabarena").exit_code == ExitCode.OK


def test_an_output_file_that_cannot_be_written_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "plain").write_text("a file, not a directory")
    for target, why in [
        (tmp_path / "plain" / "report.json", "plain is not a writable directory"),
        (tmp_path, "it is a directory"),
    ]:
        res = toy(tmp_path, "--output-file", f"json={target}")
        assert res.exit_code == ExitCode.USAGE_ERROR and res.stdout == "", res.stdout  # no "(exit 0)" summary first
        assert why in res.stderr, res.stderr
        assert not (tmp_path / "marker").exists()  # the action did not run


def test_sarif_says_columns_count_code_points(tmp_path):
    run = json.loads(hook(tmp_path, *files(tmp_path), "--format", "sarif").stdout)["runs"][0]
    assert run["columnKind"] == "unicodeCodePoints"
