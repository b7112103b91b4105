"""The read check of the pre-commit hooks: a file no rule can judge is an input error whatever is selected.

A draft or an info.py that is missing, not UTF-8, too large or does not parse is reported once,
at the place the parser gave, with exit 2, in every format (human, JSON's ``unreadable``, a JUnit
``read PATH`` case, a SARIF ``input-error`` result), under every selection: no ``--select``,
``--ignore`` or per-file ignore can make such a file pass silently.
"""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

import pytest

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tests.support.precommit_fixtures import GOOD_DRAFT, GOOD_INFO, write_draft, write_info

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")

#: a draft whose flow list is never closed: pyyaml stops at line 3, column 10 ("[")
UNCLOSED = "- dataset:\n    id: Idavidrein/gpqa\n  value: [1,\n  date: '2026-01-01'\n"

SELECTIONS = {
    "default": (),
    "another rule only": ("--select", "HF502"),
    "the parse rules ignored": ("--ignore", "HF201,HF506"),
    "extend-ignore": ("--extend-ignore", "HF201,HF506,HF501"),
    "per-file ignore": ("--per-file-ignores", "*.yaml:HF"),
}


def hook(tmp_path, *args):
    return run_cli([*BUILTIN, "precommit", *args], env=ENV, cwd=tmp_path)


def broken_and_good(tmp_path):
    bad = write_draft(tmp_path, "org--bad", "gpqa", UNCLOSED).relative_to(tmp_path).as_posix()
    good = write_draft(tmp_path, "org--good", "gpqa", GOOD_DRAFT).relative_to(tmp_path).as_posix()
    return bad, good


@pytest.mark.parametrize("selection", sorted(SELECTIONS))
def test_an_unparseable_draft_is_one_error_at_its_place_whatever_the_selection(tmp_path, selection):
    bad, good = broken_and_good(tmp_path)
    res = hook(tmp_path, "eval-results", bad, good, *SELECTIONS[selection])
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    lines = [line for line in res.stdout.splitlines() if line.startswith(bad)]
    assert len(lines) == 1, res.stdout  # once, not once per rule reading the file
    assert lines[0].startswith(f"{bad}:3:10: error cannot parse YAML: while parsing a flow sequence"), lines
    assert lines[0].endswith("(it starts here and is never closed)"), lines
    assert "<unicode string>" not in res.stdout and "^" not in res.stdout
    assert good not in res.stdout


@pytest.mark.parametrize("selection", sorted(SELECTIONS))
def test_a_missing_draft_is_an_error_whatever_the_selection(tmp_path, selection):
    _bad, good = broken_and_good(tmp_path)
    res = hook(tmp_path, "eval-results", good, "gone/.eval_results/x.yaml", *SELECTIONS[selection])
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert res.stdout.splitlines() == [
        "gone/.eval_results/x.yaml:1:1: error cannot read file: no such file",
        "Found 1 problem in 1 file (1 blocking); exit 2",
    ]


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"\xff\xfe- value: 1\n", "not UTF-8"),
        (b"- value: 1\n" + b"#" * (9 << 20), "too large"),
    ],
)
def test_undecodable_and_oversized_drafts_are_input_errors(tmp_path, content, expected):
    path = tmp_path / "org--m/.eval_results/gpqa.yaml"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    res = hook(tmp_path, "eval-results", str(path.relative_to(tmp_path)), "--select", "HF502")
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert expected in res.stdout and res.stdout.count("\n") == 2  # the problem and the count line


@pytest.mark.parametrize("selection", [(), ("--select", "TA110"), ("--ignore", "TA110,TA112")])
def test_an_info_py_that_does_not_parse_is_an_error_whatever_the_selection(tmp_path, selection):
    bad = write_info(tmp_path, "bad", "m = MethodMetadata.config(method='M',\n").relative_to(tmp_path).as_posix()
    good = write_info(tmp_path, "nori", GOOD_INFO).relative_to(tmp_path).as_posix()
    res = hook(tmp_path, "info-py", bad, good, *selection)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert res.stdout.splitlines() == [
        f"{bad}:3:26: error not valid Python: '(' was never closed; fix the syntax error",
        "Found 1 problem in 1 file (1 blocking); exit 2",
    ]


def test_a_waiver_or_an_inline_comment_cannot_excuse_an_unreadable_file(tmp_path):
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "HF201"\ntarget = "*"\nreason = "r"\nowner = "o"\nexpires = 2999-01-01\n'
    )
    bad = write_draft(tmp_path, "org--bad", "gpqa", "# checks: ignore[HF201,HF506] legacy\n" + UNCLOSED)
    res = hook(tmp_path, "eval-results", str(bad.relative_to(tmp_path)))
    assert res.exit_code == ExitCode.USAGE_ERROR and ": error cannot parse YAML" in res.stdout, res.stdout


def test_json_lists_the_file_as_unreadable_with_its_place(tmp_path):
    bad, good = broken_and_good(tmp_path)
    data = json.loads(hook(tmp_path, "eval-results", bad, good, "--format", "json", "--select", "HF502").stdout)
    assert (data["outcome"], data["exit_code"]) == ("error", 2)
    (entry,) = data["unreadable"]
    assert entry["path"] == bad and entry["message"].startswith("cannot parse YAML: ")
    assert (entry["line"], entry["col"]) == (3, 10)
    assert all(not v["findings"] for v in data["verdicts"])  # no rule reports the file a second time


def test_junit_has_one_read_case_with_an_error(tmp_path):
    bad, good = broken_and_good(tmp_path)
    res = hook(tmp_path, "eval-results", bad, good, "--format", "junit", "--ignore", "HF201,HF506")
    suite = ET.fromstring(res.stdout)[0]
    reads = [c for c in suite.iter("testcase") if c.get("name", "").startswith("read ")]
    assert [c.get("name") for c in reads] == [f"read {bad}"]
    assert reads[0].find("error").get("type") == "unreadable" and reads[0].get("file") == bad
    assert int(suite.get("errors")) >= 1


def test_sarif_has_one_input_error_result_at_the_place(tmp_path):
    bad, good = broken_and_good(tmp_path)
    res = hook(tmp_path, "eval-results", bad, good, "--format", "sarif", "--select", "HF502")
    run = json.loads(res.stdout)["runs"][0]
    errors = [r for r in run["results"] if r["ruleId"] == "input-error"]
    assert len(errors) == 1 and run["invocations"][0]["exitCode"] == 2
    region = errors[0]["locations"][0]["physicalLocation"]
    assert region["artifactLocation"]["uri"] == bad and region["region"] == {"startLine": 3, "startColumn": 10}


def test_github_annotates_the_unreadable_file_at_its_place(tmp_path):
    bad, good = broken_and_good(tmp_path)
    res = hook(tmp_path, "eval-results", bad, good, "--format", "github", "--select", "HF502")
    lines = res.stdout.splitlines()
    assert lines[0].startswith(
        f"::error file={bad.replace(':', '%3A')},line=3,col=10,title=error unreadable input::cannot parse YAML: "
    )
    assert lines[-1].startswith("::notice ") and "(exit 2)" in lines[-1] and len(lines) == 2
