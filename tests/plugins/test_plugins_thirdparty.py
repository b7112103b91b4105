"""The two third-party plugins in plugins/: their rules in-process, then installed and used through `checks`.

The installed half builds each plugin like a user would (pip, build isolation from the
configured index) but into a directory of its own that only the subprocesses of these
tests see (PYTHONPATH), so tests running in parallel never meet the plugins' rules.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.support.tabarena_checkout_fixtures import METHODS, SRC, info, make_checkout, write

from checks import config_parse
from checks.exitcodes import ExitCode
from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli
from tabarena_checks.synth.generate import generate_run

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "plugins" / "beyondarena"), str(ROOT / "plugins" / "orgpolicy")]

from beyondarena_checks import rules as ba  # noqa: E402
from beyondarena_checks.settings import OFFICIAL_PROTOCOL, BeyondArenaSettings  # noqa: E402
from orgpolicy_checks import rules as org  # noqa: E402
from orgpolicy_checks.settings import OrgPolicySettings  # noqa: E402
from tests.support.precommit_fixtures import GOOD_INFO, HEADER, write_info  # noqa: E402

from tabarena_checks.metadata.model import MethodMetadata  # noqa: E402

SECTIONS = {"beyondarena": BeyondArenaSettings, "orgpolicy": OrgPolicySettings}
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
LOADED = ("-p", "tabarena", "-p", "hfmigrate", "-p", "beyondarena_checks.plugin", "-p", "orgpolicy_checks.plugin")
FRIDAY, MONDAY = dt.date(2026, 11, 27), dt.date(2026, 11, 30)


def md(**kw) -> MethodMetadata:
    kw.setdefault("method", "Nori")
    kw.setdefault("suite", "beyond_iid_benchmark_2026")
    return MethodMetadata(**kw)


def facts(**kw):
    return SimpleNamespace(**kw)


def cfg(text: str = ""):
    return config_parse.parse(text, source="rules.toml", sections=SECTIONS)


# --------------------------------------------------------------------------- beyondarena rules


def test_ba101_fails_on_an_unknown_beyondarena_suite_and_ignores_other_arenas():
    assert_fails(
        evaluate_rules([ba.suite_known], facts(metadata=md(suite="beyond_iid_benchmark_2025"))),
        "BA101",
        "not one of its suites",
    )
    assert_passes(evaluate_rules([ba.suite_known], facts(metadata=md())), "BA101")
    assert_passes(evaluate_rules([ba.suite_known], facts(metadata=md(suite="nori-2026"))), "BA101")


def test_ba101_reads_its_suites_from_rules_toml_on_another_plugins_action():
    config = cfg('[arenas.beyondarena]\nsuites = ["beyond_iid_benchmark_2027"]\n')
    verdicts = evaluate_rules([ba.suite_known], facts(metadata=md()), config=config, action="upload")
    assert_fails(verdicts, "BA101", "beyond_iid_benchmark_2027")


def test_ba201_fails_on_a_declared_or_recorded_non_official_protocol():
    declared = facts(metadata=md(validation_protocol="8x1"))
    assert_fails(evaluate_rules([ba.official_protocol], declared), "BA201", OFFICIAL_PROTOCOL)
    undeclared = facts(metadata=md())
    assert_fails(evaluate_rules([ba.official_protocol], undeclared), "BA201", "declares no validation_protocol")
    recorded = facts(
        metadata=md(validation_protocol=OFFICIAL_PROTOCOL), inference=SimpleNamespace(validation_protocol_keys=["8x1"])
    )
    assert_fails(evaluate_rules([ba.official_protocol], recorded), "BA201", "raw results")


def test_ba201_passes_official_results_systems_and_other_arenas():
    official = facts(
        metadata=md(validation_protocol=OFFICIAL_PROTOCOL),
        inference=SimpleNamespace(validation_protocol_keys=[OFFICIAL_PROTOCOL]),
    )
    assert_passes(evaluate_rules([ba.official_protocol], official), "BA201")
    system = facts(metadata=md(method_class="system", method_type="baseline"))
    assert_passes(evaluate_rules([ba.official_protocol], system), "BA201")
    tabarena = facts(metadata=md(suite="nori-2026", validation_protocol="8x1"))
    assert_passes(evaluate_rules([ba.official_protocol], tabarena), "BA201")


def test_ba201_is_required_and_only_a_waiver_lets_a_custom_run_through():
    assert ba.official_protocol.required
    config = (
        '[[waivers]]\nrule = "BA201"\ntarget = "Nori@*"\nreason = "ablation, BA-7"\nowner = "ana"\n'
        "expires = 2999-01-01\n"
    )
    verdicts = evaluate_rules(
        [ba.official_protocol],
        facts(metadata=md(validation_protocol="8x1")),
        config=config,
        target="Nori@beyond_iid_benchmark_2026",
    )
    assert verdicts["BA201"].outcome.value == "waived"


def test_ba301_sends_beyondarena_methods_to_their_collection_only():
    path = Path("repo/packages/tabarena/src/tabarena/contexts/beyondarena/methods.py")
    other = Path("repo/packages/tabarena/src/tabarena/contexts/tabarena/methods.py")
    assert_fails(
        evaluate_rules([ba.collection], facts(metadata=md(), arena="tabarena", path=other)),
        "BA301",
        "--arena beyondarena",
    )
    assert_fails(
        evaluate_rules([ba.collection], facts(metadata=md(suite="nori-2026"), arena="beyondarena", path=path)),
        "BA301",
        "not a BeyondArena method",
    )
    assert_passes(evaluate_rules([ba.collection], facts(metadata=md(), arena="beyondarena", path=path)), "BA301")
    assert_passes(
        evaluate_rules([ba.collection], facts(metadata=md(suite="nori-2026"), arena="tabarena", path=other)), "BA301"
    )


# --------------------------------------------------------------------------- orgpolicy rules


def test_org101_needs_an_http_reference_url():
    assert_fails(evaluate_rules([org.reference_url], facts(metadata=md())), "ORG101", "it is unset")
    assert_fails(evaluate_rules([org.reference_url], facts(metadata=md(reference_url="arxiv 2601"))), "ORG101")
    assert_passes(
        evaluate_rules([org.reference_url], facts(metadata=md(reference_url="https://arxiv.org/abs/1"))), "ORG101"
    )


def test_org102_freezes_fridays_unless_waived_or_switched_off():
    assert_fails(evaluate_rules([org.no_friday_upload], facts(), today=FRIDAY), "ORG102", "frozen on Fridays")
    assert_passes(evaluate_rules([org.no_friday_upload], facts(), today=FRIDAY, dry_run=True), "ORG102")
    assert_passes(evaluate_rules([org.no_friday_upload], facts(), today=MONDAY), "ORG102")
    waiver = (
        '[[waivers]]\nrule = "ORG102"\ntarget = "*"\nreason = "release, OPS-1"\nowner = "ana"\nexpires = 2999-01-01\n'
    )
    assert (
        evaluate_rules([org.no_friday_upload], facts(), today=FRIDAY, config=waiver)["ORG102"].outcome.value == "waived"
    )
    off = cfg("[arenas.orgpolicy]\nfriday_freeze = false\n")
    assert_passes(evaluate_rules([org.no_friday_upload], facts(), today=FRIDAY, config=off), "ORG102")


def test_org103_llm_methods_carry_the_with_llm_tag():
    assert_fails(evaluate_rules([org.llm_tag], facts(metadata=md(method="TabLLM"))), "ORG103", "with-llm")
    assert_passes(evaluate_rules([org.llm_tag], facts(metadata=md(method="TabLLM", tags=("with-llm",)))), "ORG103")
    assert_passes(evaluate_rules([org.llm_tag], facts(metadata=md(method="Nori"))), "ORG103")


def test_org201_waivers_cite_a_ticket():
    waiver = '[[waivers]]\nrule = "TA110"\ntarget = "*"\nreason = "{}"\nowner = "ana"\nexpires = 2999-01-01\n'
    assert_fails(evaluate_rules([org.waiver_ticket], facts(), config=cfg(waiver.format("trust me"))), "ORG201")
    assert_passes(evaluate_rules([org.waiver_ticket], facts(), config=cfg(waiver.format("see OPS-12"))), "ORG201")


def test_org202_finds_uploads_that_ran_without_the_org_rules():
    bypassed = {"action": "upload", "outcome": "ran", "target": "Nori@s", "verdicts": [{"code": "TA401"}]}
    audited = {**bypassed, "verdicts": [{"code": "TA401"}, {"code": "ORG101"}]}
    planned = {**bypassed, "dry_run": True}
    bad = facts(records=[(1, audited), (2, bypassed)], path=".checks/decisions.jsonl")
    v = assert_fails(evaluate_rules([org.uploads_audited], bad), "ORG202", "without the ORG rules")
    assert v.findings[0].line == 2
    good = facts(records=[(1, audited), (2, planned)], path=".checks/decisions.jsonl")
    assert_passes(evaluate_rules([org.uploads_audited], good), "ORG202")


# --------------------------------------------------------------------------- hooks, through the CLI in-process


def cli(tmp_path, *args):
    return run_cli([*LOADED, *args], env=ENV, cwd=tmp_path)


def test_plugin_rules_bind_to_the_precommit_action_of_another_plugin(tmp_path):
    path = write_info(
        tmp_path, "tabllm", 'm = MethodMetadata.config(method="TabLLM", suite="beyondiid-2026", ag_key="K")'
    )
    res = cli(tmp_path, "precommit", "info-py", str(path))
    assert res.exit_code == ExitCode.BLOCKED
    line = HEADER.count("\n") + 1
    path = path.relative_to(tmp_path)  # shown relative to the working directory, with a column always
    assert f"{path}:{line}:1: ORG103 " in res.stdout
    assert "BA101" not in res.stdout  # "beyondiid-2026" does not match the default pattern beyond_*
    (tmp_path / "rules.toml").write_text('[arenas.beyondarena]\nsuite_pattern = "beyond*"\n')
    assert f"{path}:{line}:1: BA101 " in cli(tmp_path, "precommit", "info-py", str(path)).stdout


def test_adjust_config_relaxes_optional_rules_but_never_a_required_one(tmp_path):
    path = write_info(tmp_path, "nori", 'm = MethodMetadata.config(method="Nori", ag_key="K", date="2026-02-30")')
    (tmp_path / "rules.toml").write_text('[arenas.orgpolicy]\nrelax = ["TA1"]\n')
    res = cli(tmp_path, "precommit", "info-py", str(path))
    assert "TA110" not in res.stdout  # relaxed
    assert " TA101 " in res.stdout and res.exit_code == ExitCode.BLOCKED  # required: still judged
    (tmp_path / "rules.toml").write_text('[arenas.orgpolicy]\nrelax = ["TA101"]\n')
    res = cli(tmp_path, "precommit", "info-py", str(path))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "TA101 (method-not-suite) is a required rule and cannot be ignored" in res.stderr
    upload = (
        "run",
        "upload",
        "--method-metadata",
        f"{path}:m",
        "--cache-root",
        str(tmp_path / "cache"),
        "--format",
        "json",
    )
    res = cli(tmp_path, *upload)
    assert res.exit_code == ExitCode.USAGE_ERROR and "TA101 (method-not-suite) is a required rule" in res.stderr
    assert not (tmp_path / ".checks" / "decisions.jsonl").exists()  # refused before anything ran
    (tmp_path / "rules.toml").write_text('[arenas.orgpolicy]\nrelax = ["TA1"]\n')
    verdicts = _verdicts(cli(tmp_path, *upload))
    assert verdicts["TA101"] == "failed" and "TA110" not in verdicts
    res = cli(tmp_path, "run", "orgpolicy-audit")
    assert res.exit_code == ExitCode.OK  # TA101 does not gate the audit, so relaxing it is harmless there


def test_audit_action_run_finished_trail_and_status_command(tmp_path):
    log = tmp_path / ".checks" / "decisions.jsonl"
    log.parent.mkdir()
    record = {
        "action": "upload",
        "outcome": "ran",
        "target": "Nori@s",
        "started": "2026-11-02T10:00:00",
        "verdicts": [{"code": "TA401", "outcome": "passed"}],
    }
    log.write_text(json.dumps(record) + "\n")
    res = cli(tmp_path, "run", "orgpolicy-audit")
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    assert "ORG202" in res.stdout and ".checks/decisions.jsonl:1" in res.stdout
    trail = (tmp_path / ".checks" / "orgpolicy-audit.log").read_text().splitlines()
    assert len(trail) == 1 and "orgpolicy-audit" in trail[0] and "outcome=blocked blocked_by=ORG202" in trail[0]
    record["verdicts"].append({"code": "ORG101", "outcome": "passed"})
    log.write_text(json.dumps(record) + "\n")
    res = cli(tmp_path, "run", "orgpolicy-audit")
    assert res.exit_code == ExitCode.OK and "audited 1 decision record(s)" in res.stdout
    status = cli(tmp_path, "orgpolicy", "status")
    assert status.exit_code == 0
    assert "(2 run(s))" in status.stdout and "outcome=ran" in status.stdout.splitlines()[1]


def test_audit_of_a_corrupt_decision_log_is_an_input_error(tmp_path):
    (tmp_path / ".checks").mkdir()
    (tmp_path / ".checks" / "decisions.jsonl").write_text('{"action": "upload"}\nnot json\n')
    res = cli(tmp_path, "run", "orgpolicy-audit")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert ".checks/decisions.jsonl:2: not a JSON decision record" in res.stderr


def test_bad_plugin_settings_are_config_errors_with_their_path(tmp_path):
    (tmp_path / "rules.toml").write_text('[arenas.beyondarena]\nofficial_protocoll = "8x1"\n')
    res = cli(tmp_path, "precommit", "info-py", str(write_info(tmp_path, "nori", GOOD_INFO)))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "arenas.beyondarena.official_protocoll: unknown key" in res.stderr
    (tmp_path / "rules.toml").write_text('[arenas.orgpolicy]\nticket_pattern = "(["\n')
    res = cli(tmp_path, "run", "orgpolicy-audit")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "arenas.orgpolicy: ticket_pattern must be a regular expression" in res.stderr


# --------------------------------------------------------------------------- installed like a user would


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Both plugins built and installed into a private directory that only these tests' subprocesses see."""
    target, sources = tmp_path_factory.mktemp("site"), tmp_path_factory.mktemp("sources")
    for name in ("beyondarena", "orgpolicy"):  # built from copies: setuptools writes build/ next to the sources
        shutil.copytree(
            ROOT / "plugins" / name, sources / name, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__")
        )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(sources / "beyondarena"),
            str(sources / "orgpolicy"),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("CHECKS_DISABLE_PLUGIN_AUTOLOAD", None)
    exe = Path(sys.executable).with_name("checks")

    def checks(*args: str, cwd: Path) -> subprocess.CompletedProcess:
        return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)

    return checks


@pytest.mark.slow
def test_installed_plugins_are_listed_with_versions_and_blockable(installed, tmp_path):
    plugins = installed("plugins", "--format", "json", cwd=tmp_path)
    listed = {p["name"]: p for p in json.loads(plugins.stdout)}
    assert (listed["beyondarena"]["distribution"], listed["beyondarena"]["version"]) == ("beyondarena-checks", "0.1.0")
    assert (listed["orgpolicy"]["distribution"], listed["orgpolicy"]["version"]) == ("orgpolicy-checks", "0.2.0")
    rules = {r["code"]: r["plugin"] for r in json.loads(installed("rules", "--format", "json", cwd=tmp_path).stdout)}
    assert {c for c, p in rules.items() if p == "beyondarena"} == {"BA101", "BA201", "BA301"}
    assert {c for c, p in rules.items() if p == "orgpolicy"} == {"ORG101", "ORG102", "ORG103", "ORG201", "ORG202"}
    blocked = installed("-p", "no:beyondarena", "rules", "--format", "json", cwd=tmp_path)
    codes = {r["code"] for r in json.loads(blocked.stdout)}
    assert not any(c.startswith("BA") for c in codes) and "ORG101" in codes
    assert "orgpolicy-audit" not in installed("-p", "no:orgpolicy", "run", "--help", cwd=tmp_path).stdout
    assert "BA201" in installed("rule", "BA201", cwd=tmp_path).stdout


BEYOND_INFO = (
    HEADER
    + """
official = MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", ag_key="TA-NORI", is_bag=True,
                                 validation_protocol="8x1+tiny5x5<=500+task-specific+adapt-classes",
                                 reference_url="https://example.org/nori")
plain = MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", ag_key="TA-NORI", is_bag=True,
                              validation_protocol="8x1")
"""
)


def _verdicts(res) -> dict[str, str]:
    return {v["code"]: v["outcome"] for v in json.loads(res.stdout)["verdicts"]}


@pytest.mark.slow
def test_installed_beyondarena_blocks_processing_a_run_fit_under_tabarenas_protocol(installed, tmp_path):

    small = dict(tasks=(363612, 363614), configs=1, repeats=1, folds=2, bag_children=2, array_scale=0.05, workers=1)
    plain = generate_run(tmp_path / "plain", validation_protocol="8x1", **small)
    beyond = generate_run(tmp_path / "beyond", validation_protocol="beyondarena", **small)
    (tmp_path / "info.py").write_text(BEYOND_INFO)

    def process(data, var, *extra):
        return installed(
            "run",
            "process",
            str(data),
            "--method-metadata",
            f"{tmp_path / 'info.py'}:{var}",
            "--cache-root",
            str(tmp_path / "cache"),
            "--format",
            "json",
            *extra,
            cwd=tmp_path,
        )

    res = process(plain, "plain")
    assert res.returncode == ExitCode.BLOCKED, res.stdout[-2000:] + res.stderr
    assert _verdicts(res)["BA201"] == "failed"
    assert not (tmp_path / "cache").exists()
    assert _verdicts(process(beyond, "official", "--dry-run"))["BA201"] == "passed"
    res = installed(
        "-p",
        "no:beyondarena",
        "run",
        "process",
        str(plain),
        "--method-metadata",
        f"{tmp_path / 'info.py'}:plain",
        "--cache-root",
        str(tmp_path / "cache"),
        "--format",
        "json",
        "--dry-run",
        cwd=tmp_path,
    )
    assert "BA201" not in _verdicts(res)


@pytest.mark.slow
def test_installed_orgpolicy_blocks_an_upload_without_reference_url(installed, tmp_path):
    (tmp_path / "info.py").write_text(
        HEADER + 'nori = MethodMetadata.config(method="Nori", suite="nori-2026", '
        'ag_key="TA-NORI", cache_kwargs={"bucket": "b", "prefix": "p"})\n'
    )
    args = (
        "run",
        "upload",
        "--method-metadata",
        f"{tmp_path / 'info.py'}:nori",
        "--cache-root",
        str(tmp_path / "cache"),
        "--format",
        "json",
    )
    res = installed(*args, cwd=tmp_path)
    assert res.returncode == ExitCode.BLOCKED, res.stdout[-2000:] + res.stderr
    assert _verdicts(res)["ORG101"] == "failed"
    trail = (tmp_path / ".checks" / "orgpolicy-audit.log").read_text()
    assert "upload target='Nori@nori-2026' outcome=blocked" in trail and "ORG101" in trail
    assert "ORG101" not in _verdicts(installed("-p", "no:orgpolicy", *args, cwd=tmp_path))


def test_register_sends_a_beyondarena_method_to_beyondarenas_collection(tmp_path):

    repo = tmp_path / "tabarena"
    make_checkout(repo)
    ref = (
        str(
            write(
                repo,
                SRC / "models/beyondnori/info.py",
                info(
                    beyond_nori=(
                        'MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", ag_key="TA-NORI", '
                        'validation_protocol="8x1+tiny5x5<=500+task-specific+adapt-classes")'
                    )
                ),
            )
        )
        + ":beyond_nori"
    )

    def register(*extra):
        return cli(
            tmp_path,
            "run",
            "register",
            "--method-metadata",
            ref,
            "--repo",
            str(repo),
            "--dry-run",
            "--format",
            "json",
            *extra,
        )

    res = register()  # --arena defaults to tabarena
    assert res.exit_code == ExitCode.BLOCKED and _verdicts(res)["BA301"] == "failed"
    res = register("--arena", "beyondarena")  # the checkout has no BeyondArena collection yet
    assert res.exit_code == ExitCode.USAGE_ERROR and "contexts/beyondarena/methods.py" in res.stderr
    write(
        repo,
        METHODS.parent.parent / "beyondarena" / "methods.py",
        (repo / METHODS)
        .read_text()
        .replace("tabarena_method_metadata_collection", "beyondarena_method_metadata_collection"),
    )
    res = register("--arena", "beyondarena")
    assert _verdicts(res)["BA301"] == "passed", res.stdout[-2000:] + res.stderr
    # registered with another method in one edit, each declaration is judged: CatBoost is not BeyondArena's
    catboost = f"{repo / SRC / 'models/catboost/info.py'}:catboost_method_metadata"
    res = register("--arena", "beyondarena", "--method-metadata", catboost)
    assert res.exit_code == ExitCode.BLOCKED and _verdicts(res)["BA301"] == "failed", res.stdout[-2000:]
    assert "CatBoost (suite 'catboost-2026-03') is not a BeyondArena method" in res.stdout
