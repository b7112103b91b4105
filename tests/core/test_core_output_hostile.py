"""Hostile names in every output (issue 30, item 9): file and directory names are data from strangers.

A name holding a line break and ``::error ...`` would start a GitHub workflow command in a CI
log, ``ESC ] 52`` would write the reader's clipboard, and either made the JUnit file malformed.
Human outputs (the hooks' lines, ``checks run``'s report, ``checks inspect``, error messages)
show control characters as ``\\x1b`` and no line starts a command; JUnit and SARIF stay
well-formed and keep the name, escaped.
"""

from __future__ import annotations

import datetime as dt
import json
from xml.etree import ElementTree as ET

import pytest
from tests.support.precommit_fixtures import INFO_CASES, write_info

from checks import output
from checks.exitcodes import ExitCode
from checks.model import Finding, Outcome, Severity, Verdict
from checks.testing import run_cli
from checks.visible import guarded, safe_lines, visible
from tabarena_checks.synth import generate as synth

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")
#: a line break then a workflow command, an OSC 52 clipboard write ended by BEL, a legacy command, a bidi override
HOSTILE = "x\n::error file=README.md::pwned\x1b]52;c;aGk=\x07\r\n##[add-mask]s\u202e"
RAW = ("\x1b", "\x07", "\r", "\u202e")


def assert_safe_text(text: str) -> None:
    for char in RAW:
        assert char not in text, repr(char)
    for line in text.splitlines():
        assert not line.lstrip().startswith(("::", "##[")), line
    assert "\\x1b]52" in text, text  # shown, not dropped: a reader sees what the name holds


def hostile_info(tmp_path) -> str:
    (tmp_path / HOSTILE).mkdir()
    path = write_info(tmp_path / HOSTILE, "m", INFO_CASES["TA110"][0])
    return str(path.relative_to(tmp_path))


def hook(tmp_path, *args):
    return run_cli([*BUILTIN, "precommit", "info-py", *args], env=ENV, cwd=tmp_path)


def test_visible_shows_every_control_and_keeps_text():
    assert visible("a\x1b[31mb\tc\u202ed\udcff") == "a\\x1b[31mb\\tc\\u202ed\\udcff"
    assert visible("a\nb", keep_newlines=True) == "a\nb" and visible("a\nb") == "a\\nb"
    assert visible("naïve ✓ 日本") == "naïve ✓ 日本"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("::error::x", "\\x3a:error::x"),
        ("   ::warning x", "   \\x3a:warning x"),
        ("##[add-mask]s", "\\x23#[add-mask]s"),
        ("path.py:1: TA110 ::error", "path.py:1: TA110 ::error"),  # not at the start: the runner ignores it
    ],
)
def test_guarded_defuses_only_a_line_that_would_be_a_command(line, expected):
    assert guarded(line) == expected


def test_safe_lines_guards_every_line_of_a_block():
    assert safe_lines("ok\n::error::x\x1b") == "ok\n\\x3a:error::x\\x1b"


def test_hook_human_lines_show_controls_and_start_no_command(tmp_path):
    res = hook(tmp_path, hostile_info(tmp_path))
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    assert_safe_text(res.stdout)
    lines = res.stdout.splitlines()
    assert len(lines) == 2 and "TA110" in lines[0] and lines[1].startswith("Found 1 problem")  # one finding, one line


def test_hook_junit_is_well_formed_and_keeps_the_name_visible(tmp_path):
    res = hook(tmp_path, hostile_info(tmp_path), "--format", "junit", "--output-file", "report.xml")
    for text in (res.stdout, (tmp_path / "report.xml").read_text()):
        suite = ET.fromstring(text)[0]
        files = [case.get("file") for case in suite.iter("testcase") if case.get("file")]
        assert files and all("\\x1b]52" in f and "\\n::error" in f for f in files), files


def test_hook_sarif_and_json_are_valid_and_carry_the_name_exactly(tmp_path):
    path = hostile_info(tmp_path)
    sarif = json.loads(hook(tmp_path, path, "--format", "sarif").stdout)
    (result,) = sarif["runs"][0]["results"]
    assert "%0A%3A%3Aerror" in result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    data = json.loads(hook(tmp_path, path, "--format", "json").stdout)
    assert data["verdicts"][[v["code"] for v in data["verdicts"]].index("TA110")]["findings"][0]["path"] == path


def test_hook_github_annotations_are_one_command_each(tmp_path):
    res = hook(tmp_path, hostile_info(tmp_path), "--format", "github")
    lines = res.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == ["::error", "::notice"], lines
    assert not any(char in res.stdout for char in RAW)


def test_an_unreadable_hostile_file_is_reported_safely_in_every_format(tmp_path):
    (tmp_path / HOSTILE).mkdir()
    path = str((tmp_path / HOSTILE / "info.py").relative_to(tmp_path))  # missing: the read check's error
    res = hook(tmp_path, path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert_safe_text(res.stdout)
    ET.fromstring(hook(tmp_path, path, "--format", "junit").stdout)


def test_a_hostile_config_path_in_an_error_is_shown_safely(tmp_path):
    res = run_cli([*BUILTIN, "--config", HOSTILE + ".toml", "rules"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert_safe_text(res.stderr)


def hostile_report() -> output.Report:
    finding = Finding("bad date", path=HOSTILE + "/info.py", line=3, col=5, target=HOSTILE)
    verdict = Verdict(
        code="TA110",
        name="date-valid",
        severity=Severity.ERROR,
        outcome=Outcome.FAILED,
        findings=(finding,),
        plugin="tabarena",
    )
    return output.Report(
        command="run",
        action="process",
        target=HOSTILE,
        outcome="blocked",
        exit_code=1,
        verdicts=(verdict,),
        started=dt.datetime.now(dt.timezone.utc),
        duration=0.1,
        plan=(f"write {HOSTILE}",),
        error=f"cannot write {HOSTILE}",
    )


def test_run_report_human_shows_controls_and_starts_no_command():
    text = output.render_human(hostile_report())
    assert_safe_text(text)


def test_run_report_junit_sarif_github_stay_well_formed():
    report = hostile_report()
    ET.fromstring(output.as_junit(report))
    json.loads(output.as_sarif(report))
    lines = output.as_github(report).splitlines()
    assert len(lines) == 2 and all(line.startswith("::") for line in lines)


@pytest.mark.slow
def test_inspect_of_a_hostile_run_directory_is_shown_safely(tmp_path):

    data = synth.generate_run(tmp_path / HOSTILE, tasks=(363612,), folds=1)
    res = run_cli(["inspect", str(data), "--cache-dir", str(tmp_path / "cache")], cwd=tmp_path)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert_safe_text(res.stdout)
