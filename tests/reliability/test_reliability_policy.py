"""Decisions about who may turn a gate off, and how: inline comments, waivers, local plugins, signals.

Each test holds one decision documented in docs/rules-core.md, docs/rules-toml.md or docs/cli.md.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import time

import pytest
from tests.support.reliability_fixtures import CHECKS, INFO_PY, child_env
from tests.support.tabarena_fixtures import make_run

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.testing.commands import process_args

#: an expiry a month away, whenever the suite runs
SOON = (dt.date.today() + dt.timedelta(days=30)).isoformat()


def _process(tmp_path, info_text: str):
    (tmp_path / "info.py").write_text(info_text)
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    return run_cli(
        process_args(data, f"{tmp_path / 'info.py'}:nori", tmp_path / "cache", "--format", "json"),
        cwd=tmp_path,
    )


@pytest.mark.parametrize(
    "code, wrong", [("TA104", 'ag_key="TA-WRONG"'), ("TA106", "can_hpo=True"), ("TA107", "is_bag=False")]
)
def test_publishing_gates_are_not_suppressed_inline(tmp_path, code, wrong):
    """Fault: one inline comment (`# checks: ignore[TA104] ...`) on the declaration in info.py turning off a
    raw-vs-declared publishing gate (TA104 ag_key, TA106 can_hpo, TA107 is_bag) with no owner or expiry

    Must: the comment suppresses nothing: the gate still blocks process (exit 1) and CK004 names the comment as one
    that can only be a waiver in rules.toml (owner and expiry); a waiver still excuses it
    """
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
    (tmp_path / "rules.toml").write_text(
        f'[[waivers]]\nrule = "{code}"\ntarget = "Nori@nori-2026"\n'
        'reason = "the raw run predates the key rename"\nowner = "maintainer@example.org"\n'
        f"expires = {SOON}\n"
    )
    text = text.replace(f"  # checks: ignore[{code}] trust me", "")
    waived = {v["code"]: v for v in json.loads(_process(tmp_path, text).stdout)["verdicts"]}
    assert waived[code]["outcome"] == "waived", waived[code]


NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _toy(tmp_path, waiver: str, *args):
    (tmp_path / "rules.toml").write_text("[[waivers]]\n" + waiver)
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), *args], env=NO_AUTOLOAD, cwd=tmp_path
    )


ZW = "\u200b"
WAIVERS = {
    "zero-width-reason": (
        (f'rule = "TOY001"\ntarget = "t"\nreason = "{ZW}"\nowner = "o@example.org"\nexpires = {SOON}\n'),
        "waivers[0].reason: must not be empty or invisible",
    ),
    "invisible-owner": (
        (f'rule = "TOY001"\ntarget = "t"\nreason = "r"\nowner = "{ZW}\u2060\u3164 "\nexpires = {SOON}\n'),
        "waivers[0].owner: must not be empty or invisible",
    ),
    "far-expiry": (
        'rule = "TOY004"\ntarget = "t"\nreason = "r"\nowner = "o@example.org"\nexpires = 9999-12-31\n',
        "waivers[0].expires: 9999-12-31 is more than 366 days away",
    ),
    "star-target": (
        f'rule = "TOY004"\ntarget = "*"\nreason = "r"\nowner = "o@example.org"\nexpires = {SOON}\n',
        "waivers[0].target: TOY004 (toy-required) is a required rule",
    ),
}


@pytest.mark.parametrize("kind", sorted(WAIVERS))
def test_invisible_or_endless_waivers_are_refused(tmp_path, kind):
    """Fault: a waiver whose reason or owner is a zero-width space (or other invisible text), and a waiver of a required
    rule with `target = "*"` and `expires 9999-12-31`: all were accepted

    Must: refused as configuration errors naming the waiver's key and the fix (exit 2), before the action runs:
    reason, owner and target need visible text, and a required rule's waiver names its target and ends within 366 days
    """
    waiver, words = WAIVERS[kind]
    res = _toy(tmp_path, waiver, "--fail", "--fail-required")
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert words in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert not (tmp_path / "m").exists()


def test_a_plain_waiver_of_a_required_rule_within_a_year_applies(tmp_path):
    res = _toy(
        tmp_path,
        f'rule = "TOY004"\ntarget = "toy-target"\nreason = "r"\nowner = "o"\nexpires = {SOON}\n',
        "--fail-required",
    )
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr


def _toy_child(tmp_path, **popen):
    """``checks run toy`` as a child process (the real script), started with ``popen`` arguments."""

    return subprocess.Popen(
        [CHECKS, "-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m")],
        cwd=tmp_path,
        env=child_env(NO_AUTOLOAD),
        stderr=subprocess.PIPE,
        text=True,
        **popen,
    )


@pytest.mark.parametrize("how", ["closed-pipe", "closed-stdout"])
def test_printing_that_fails_after_the_action_ran_keeps_its_exit_code(tmp_path, how):
    """Fault: stdout going away after the action ran: the reader of a pipe gone (`| head -1`, EPIPE) or stdout closed
    (`>&-`): exit 1, 'blocked, the action did not run', though it ran, or a traceback; with `>&-` the first file the run
    opened took descriptor 1

    Must: the exit code is the run's own (0: the action ran), stderr says the report was not printed and the action's
    outcome, no traceback; a closed stdout is /dev/null from the start, so no file the run writes receives the report,
    and the decision record is whole
    """

    if how == "closed-pipe":
        proc = _toy_child(tmp_path, stdout=subprocess.PIPE)
        proc.stdout.close()  # before the child prints: its write meets EPIPE
    else:
        proc = _toy_child(tmp_path, stdout=subprocess.DEVNULL, preexec_fn=lambda: os.close(1))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == ExitCode.OK, err
    assert (tmp_path / "m").exists() and "Traceback" not in err, err
    if how == "closed-pipe":
        assert "the report was not printed" in err and "outcome ran, exit 0" in err, err
    log = (tmp_path / ".checks" / "decisions.jsonl").read_text()
    assert "toy-must-not-fail" not in (tmp_path / "m").read_text()
    assert json.loads(log.splitlines()[-1])["outcome"] == "ran"


def test_a_signal_during_start_up_prints_no_traceback(tmp_path):
    """Fault: Ctrl-C (SIGINT) or SIGTERM arriving while `checks` starts, before its handler is installed (a
    KeyboardInterrupt traceback was printed)

    Must: the script installs a quiet handler first: the run ends as 'checks: aborted' (exit 2) with no traceback
    whenever the signal lands after the interpreter's own start; measured over 20 delays from 0.1 to 0.5 s
    """

    for i in range(20):
        proc = _toy_child(tmp_path, stdout=subprocess.DEVNULL)
        time.sleep(0.1 + i * 0.02)  # after the interpreter's own start (site), which no script can guard
        proc.send_signal(signal.SIGINT if i % 2 else signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert "Traceback" not in err and "KeyboardInterrupt" not in err, (i, err)
        # killed by the signal before Python ran any code of the script (the interpreter's own start), or aborted
        assert proc.returncode in (ExitCode.USAGE_ERROR, ExitCode.OK, -signal.SIGTERM, -signal.SIGINT), (
            i,
            proc.returncode,
            err,
        )


LOCAL_PLUGIN = (
    "from pathlib import Path\n\nfrom checks import hookimpl\n\n\n@hookimpl\ndef checks_rules():\n"
    "    Path({marker!r}).write_text('ran')\n    return []\n"
)


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_local_plugins_can_be_turned_off(tmp_path, how):
    """Fault: a rules.toml in a parent directory (or shipped in a pull request) naming a local plugin in checks_plugins:
    its code ran for `checks rules`, `config`, `hf validate` and the pre-commit hooks, and
    CHECKS_DISABLE_PLUGIN_AUTOLOAD=1 did not stop it

    Must: only the configuration in use (--config, else the nearest) names local plugins, and `--no-local-plugins` or
    CHECKS_NO_LOCAL_PLUGINS=1 loads none (like pytest's --noconftest; CHECKS_DISABLE_PLUGIN_AUTOLOAD keeps pytest's
    meaning: entry points only): the plugin's code never runs, and the pre-commit hooks still judge the files
    """
    marker = tmp_path / "plugin-ran"
    (tmp_path / "evil.py").write_text(LOCAL_PLUGIN.format(marker=str(marker)))
    (tmp_path / "rules.toml").write_text('checks_plugins = ["evil.py"]\n')
    work = tmp_path / "repo" / "models" / "nori"
    work.mkdir(parents=True)
    base = ["-p", "tabarena", "-p", "hfmigrate"]
    loaded = run_cli([*base, "rules"], env=NO_AUTOLOAD, cwd=work)
    assert loaded.exit_code == ExitCode.OK and marker.exists(), loaded.stderr  # the default: loaded, as documented
    marker.unlink()
    flag = ["--no-local-plugins"] if how == "flag" else []
    env = {**NO_AUTOLOAD, **({"CHECKS_NO_LOCAL_PLUGINS": "1"} if how == "environment" else {})}
    for args in (["rules"], ["config"], ["precommit", "info-py", "info.py"]):
        (work / "info.py").write_text(INFO_PY.format(var="nori", method="Nori", suite="nori-2026", can_hpo=False))
        res = run_cli([*base, *flag, *args], env=env, cwd=work)
        assert res.exit_code in (ExitCode.OK, ExitCode.BLOCKED), (args, res.stdout + res.stderr)
        assert not marker.exists(), args


def test_checks_rule_says_a_publishing_gate_is_only_waived():
    res = run_cli(["-p", "tabarena", "rule", "TA104"], env=NO_AUTOLOAD)
    assert res.exit_code == ExitCode.OK and "Only waived, never suppressed inline." in res.stdout, res.stdout
    assert "Only waived" not in run_cli(["-p", "tabarena", "rule", "TA105"], env=NO_AUTOLOAD).stdout
