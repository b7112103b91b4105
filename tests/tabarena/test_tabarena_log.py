"""checks run log on a miniature checkout whose commits (and so reflog moves) have known dates."""

from __future__ import annotations

import datetime as dt
import os
import shutil

import pytest
from tests.support.tabarena_checkout_fixtures import LOG, LOG_MD, SRC

from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli
from tabarena_checks.facts.log import LogFacts
from tabarena_checks.publish.benchmark_log import LogOptions, insert_entry
from tabarena_checks.rules import register as rules_register
from tabarena_checks.synth.generate import generate_run


def _ts(iso: str) -> float:
    return dt.datetime.fromisoformat(iso).timestamp()


@pytest.fixture(scope="module")
def run_template(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    generate_run(
        out,
        configs=1,
        folds=2,
        tasks=(363612,),
        method="Nori",
        name_prefix="TA-Nori",
        bag_children=2,
        validation_protocol="8x1",
        array_scale=0.05,
        workers=1,
    )
    return out


def _run(tmp_path, template, started: str):
    """A copy of the generated run whose results.pkl files date from ``started`` (and a day later)."""
    run = tmp_path / "run"
    shutil.copytree(template, run)
    for i, pkl in enumerate(sorted(run.rglob("results.pkl"))):
        t = _ts(started) + i * 86400
        os.utime(pkl, (t, t))
    return run


def log(repo, run, tmp_path, *extra):
    return run_cli(
        ["run", "log", "--run", str(run), "--repo", str(repo), "--benchmark-name", "nori-2026-02", *extra], cwd=tmp_path
    )


def test_entry_records_the_sha_at_setup_time_from_the_reflog(checkout, tmp_path, run_template):
    repo, shas = checkout
    run = _run(tmp_path, run_template, "2026-02-10T08:00:00+00:00")
    ref = f"{repo / SRC / 'models/nori/info.py'}:nori_new_method_metadata"
    result = log(repo, run, tmp_path, "--purpose", "rerun with warm-up", "--method-metadata", ref)
    assert result.exit_code == 0, result.stdout + result.stderr
    text = (repo / LOG).read_text()
    entry = (
        "## 2026-02-10 \u2014 nori-2026-02\n\n**Model(s):** Nori\n"
        f"**Git SHA:** `{shas[0]}`\n**Purpose:** rerun with warm-up\n"
        "**Notes:** processed suite id `nori-2026-09`; metadata variable `nori_new_method_metadata`\n"
        "**Validation protocol:** 8x1\n\n"
    )
    assert text == LOG_MD.replace("## 2026-01-05", entry + "## 2026-01-05")
    assert f"reflog: HEAD was {shas[0][:12]} at the earliest results.pkl (2026-02-10T08:00:00Z)" in result.stdout


def test_an_entry_for_several_methods_names_each_with_its_suite_and_variable(checkout, tmp_path, run_template):
    repo, _ = checkout
    run = _run(tmp_path, run_template, "2026-02-10T08:00:00+00:00")
    refs = [
        f"{repo / SRC / 'models/nori/info.py'}:nori_new_method_metadata",
        f"{repo / SRC / 'models/tabm/info.py'}:tabm_method_metadata",
    ]
    result = log(repo, run, tmp_path, *(arg for ref in refs for arg in ("--method-metadata", ref)))
    assert result.exit_code == 0, result.stdout + result.stderr
    text = (repo / LOG).read_text()
    assert "**Model(s):** Nori, TabM\n" in text
    assert (
        "**Notes:** processed suite ids `nori-2026-09`, `tabm-2026`; "
        "metadata variables `nori_new_method_metadata`, `tabm_method_metadata`\n"
    ) in text
    assert "**Validation protocol:** 8x1\n" in text  # TabM declares none: the run's own record


def test_later_run_gets_the_later_commit_and_protocol_from_the_raw_data(checkout, tmp_path, run_template):
    repo, shas = checkout
    run = _run(tmp_path, run_template, "2026-03-05T00:00:00+00:00")
    result = log(repo, run, tmp_path)
    assert result.exit_code == 0, result.stdout
    text = (repo / LOG).read_text()
    assert f"**Git SHA:** `{shas[1]}`" in text
    assert "**Model(s):** TA-Nori" in text and "**Validation protocol:** 8x1" in text


def test_reflog_not_reaching_back_falls_back_to_head_with_a_note(checkout, tmp_path, run_template):
    repo, shas = checkout
    run = _run(tmp_path, run_template, "2025-12-01T00:00:00+00:00")
    result = log(repo, run, tmp_path)
    assert result.exit_code == 0, result.stdout
    assert f"**Git SHA:** `{shas[1]}`" in (repo / LOG).read_text()
    assert "fallback: the reflog starts at 2026-01-01T12:00:00Z" in result.stdout
    assert "check it by hand" in result.stdout


def test_an_existing_entry_is_never_added_twice(checkout, tmp_path, run_template):
    repo, _ = checkout
    run = _run(tmp_path, run_template, "2026-02-10T08:00:00+00:00")
    assert log(repo, run, tmp_path).exit_code == 0
    once = (repo / LOG).read_text()
    again = log(repo, run, tmp_path)
    assert again.exit_code == 0 and "exists already" in again.stdout
    assert (repo / LOG).read_text() == once
    assert once.count("\u2014 nori-2026-02") == 1


def test_insert_entry_without_any_entry_appends_after_the_preamble():
    assert (
        insert_entry("# Log\n\nPreamble.\n", "## 2026-01-01 \u2014 x\n")
        == "# Log\n\nPreamble.\n\n## 2026-01-01 \u2014 x\n"
    )


# --- TA51x: must fail and must pass --------------------------------------------------------------


def _verdicts(repo, run, name="nori-2026-02"):
    options = LogOptions(repo=str(repo), run=str(run), benchmark_name=name)
    return evaluate_rules(rules_register.RULES[3:], LogFacts.gather(options), action="log", options=options)


def test_ta510_run_has_results(checkout, tmp_path, run_template):
    repo, _ = checkout
    assert_passes(_verdicts(repo, _run(tmp_path, run_template, "2026-02-10T00:00:00+00:00")), "TA510")
    (tmp_path / "empty").mkdir()
    assert_fails(_verdicts(repo, tmp_path / "empty"), "TA510", "no results.pkl")


def test_ta511_log_file_present(checkout, tmp_path, run_template):
    repo, _ = checkout
    run = _run(tmp_path, run_template, "2026-02-10T00:00:00+00:00")
    assert_passes(_verdicts(repo, run), "TA511")
    (repo / LOG).unlink()
    assert_fails(_verdicts(repo, run), "TA511", "BENCHMARK_LOG.md is missing")


def test_ta512_git_sha_known(checkout, tmp_path, run_template):

    repo, _ = checkout
    run = _run(tmp_path, run_template, "2026-02-10T00:00:00+00:00")
    assert_passes(_verdicts(repo, run), "TA512")
    shutil.rmtree(repo / ".git")
    v = _verdicts(repo, run)
    assert_fails(v, "TA512", "must be a git checkout")
    result = log(repo, run, tmp_path)
    assert result.exit_code == 1 and (repo / LOG).read_text() == LOG_MD


def test_ta513_benchmark_name_valid(checkout, tmp_path, run_template):
    repo, _ = checkout
    run = _run(tmp_path, run_template, "2026-02-10T00:00:00+00:00")
    assert_passes(_verdicts(repo, run), "TA513")
    assert_fails(_verdicts(repo, run, name="nori \u2014 rerun"), "TA513", "without '\u2014'")
