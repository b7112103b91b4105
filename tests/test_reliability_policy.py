"""Decisions about who may turn a gate off, and how: inline comments, waivers, local plugins, signals.

Each test holds one decision documented in docs/rules-core.md, docs/rules-toml.md or docs/cli.md.
"""

from __future__ import annotations

import json

import pytest
from reliability_fixtures import INFO_PY
from tabarena_fixtures import make_run

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from reliability import reliability


def _process(tmp_path, info_text: str):
    (tmp_path / "info.py").write_text(info_text)
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    return run_cli(["run", "process", str(data), "--method-metadata", f"{tmp_path / 'info.py'}:nori",
                    "--cache-root", str(tmp_path / "cache"), "--format", "json"], cwd=tmp_path)


@pytest.mark.parametrize("code, wrong", [("TA104", 'ag_key="TA-WRONG"'), ("TA106", "can_hpo=True"),
                                         ("TA107", "is_bag=False")])
@reliability(fault="one inline comment (`# checks: ignore[TA104] ...`) on the declaration in info.py turning off a "
                   "raw-vs-declared publishing gate (TA104 ag_key, TA106 can_hpo, TA107 is_bag) with no owner or "
                   "expiry",
             must="the comment suppresses nothing: the gate still blocks process (exit 1) and CK004 names the comment "
                  "as one that can only be a waiver in rules.toml (owner and expiry); a waiver still excuses it")
def test_publishing_gates_are_not_suppressed_inline(tmp_path, code, wrong):
    text = INFO_PY.format(var="nori", method="Nori", suite="nori-2026", can_hpo=False)
    field = wrong.split("=")[0]
    default = {"ag_key": 'ag_key="TA-NORI"', "can_hpo": "can_hpo=False", "is_bag": "is_bag=True"}[field]
    text = text.replace(default, wrong).replace("is_bag=True,\n", f"is_bag=True,  # checks: ignore[{code}] trust me\n")
    text = text.replace("is_bag=False,\n", f"is_bag=False,  # checks: ignore[{code}] trust me\n")
    res = _process(tmp_path, text)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts[code]["outcome"] == "failed", verdicts[code]
    assert "cannot be suppressed inline, only waived" in verdicts["CK004"]["message"], verdicts["CK004"]
    assert not (tmp_path / "cache" / "artifacts").exists()
    (tmp_path / "rules.toml").write_text(f'[[waivers]]\nrule = "{code}"\ntarget = "Nori@nori-2026"\n'
                                         'reason = "the raw run predates the key rename"\nowner = "maintainer@example.org"\n'
                                         "expires = 2026-12-31\n")
    text = text.replace(f"  # checks: ignore[{code}] trust me", "")
    waived = {v["code"]: v for v in json.loads(_process(tmp_path, text).stdout)["verdicts"]}
    assert waived[code]["outcome"] == "waived", waived[code]
