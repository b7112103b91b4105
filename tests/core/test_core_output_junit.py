"""JUnit: one test case per finding at its file and line, one per passing rule, excused findings skipped.

Three files failing one rule were one test case linked to the first file; an inline suppression
showed as ``<skipped message="waived by " />``. Now each finding is a case a CI dashboard links
to its own file and line, and each excused one says what excused it, why, and where.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from checks.testing import run_cli
from tests.support.precommit_fixtures import GOOD_INFO, INFO_CASES, write_info

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")
BAD_DATE = INFO_CASES["TA110"][0]


def junit(tmp_path, *paths) -> ET.Element:
    res = run_cli([*BUILTIN, "precommit", "info-py", *paths, "--format", "junit"], env=ENV, cwd=tmp_path)
    return ET.fromstring(res.stdout).find("testsuite")


def cases_of(suite, code: str) -> list[ET.Element]:
    return [c for c in suite.findall("testcase") if c.get("name").startswith(f"{code} ")]


def test_each_failing_file_is_its_own_case_at_its_file_and_line(tmp_path):
    paths = [write_info(tmp_path, name, BAD_DATE).relative_to(tmp_path).as_posix() for name in ("a", "b", "c")]
    suite = junit(tmp_path, *paths)
    failing = cases_of(suite, "TA110")
    assert sorted(c.get("file") for c in failing) == paths
    assert {c.get("line") for c in failing} == {"3"} and all(c.find("failure") is not None for c in failing)
    assert len({c.get("name") for c in failing}) == 3  # names apart: readers key cases by name
    assert suite.get("failures") == "3" and suite.get("tests") == str(len(suite.findall("testcase")))


def test_a_passing_rule_is_one_case_without_outcome(tmp_path):
    suite = junit(tmp_path, write_info(tmp_path, "nori", GOOD_INFO).relative_to(tmp_path).as_posix())
    (ta112,) = cases_of(suite, "TA112")
    assert list(ta112) == [] and ta112.get("file") is None
    assert suite.get("failures") == "0" and suite.get("skipped") == "0"


def test_an_inline_suppression_is_a_skipped_case_with_its_reason_and_place(tmp_path):
    text = BAD_DATE.replace('date="2026-02-30")', 'date="2026-02-30")  # checks: ignore[TA110] as printed in 2019')
    path = write_info(tmp_path, "m", text).relative_to(tmp_path).as_posix()
    suite = junit(tmp_path, path)
    cases = cases_of(suite, "TA110")
    skipped = [c for c in cases if c.find("skipped") is not None]
    assert len(skipped) == 1 and skipped[0].get("file") == path and skipped[0].get("line") == "3"
    assert skipped[0].find("skipped").get("message") == f"suppressed inline at {path}:3: as printed in 2019"
    assert [c for c in cases if c not in skipped and list(c)] == []  # the rule itself passed
    assert suite.get("skipped") == "1" and suite.get("failures") == "0"


def test_a_waived_finding_is_a_skipped_case_naming_the_waiver(tmp_path):
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA110"\ntarget = "Nori@*"\nreason = "upstream date"\n'
        'owner = "ana"\nexpires = 2999-01-01\n'
    )
    path = write_info(tmp_path, "m", BAD_DATE).relative_to(tmp_path).as_posix()
    (case,) = cases_of(junit(tmp_path, path), "TA110")
    message = case.find("skipped").get("message")
    assert message.startswith("waived by TA110:") and "upstream date (owner ana, expires 2999-01-01)" in message
    assert case.get("file") == path
