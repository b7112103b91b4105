"""Hostile configuration files and framework-level faults: clear errors, bounded cost, fail closed."""

from __future__ import annotations

import time

import pytest

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.testing.commands import process_args

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _toy(tmp_path, *args):
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), *args], env=NO_AUTOLOAD, cwd=tmp_path
    )


@pytest.mark.parametrize(
    "content, expected",
    [
        (b'select = ["ALL"]\nselect = ["TA"]\n', "not valid TOML"),
        (b"a = " + b"[" * 50_000 + b"]" * 50_000, "nested too deeply"),
        (b'select = ["\xff\xfe"]\n', "not UTF-8 text"),
        (b"# " + b"x" * 2_000_000 + b"\n", "too large for a rules.toml"),
    ],
    ids=["duplicate-keys", "deep-nesting", "non-utf8", "huge"],
)
def test_hostile_rules_toml_gives_a_clear_error(tmp_path, content, expected):
    """Fault: rules.toml with duplicate keys, deep nesting, non-UTF-8 bytes or a huge size

    Must: one clear configuration error (exit 2) within bounded time; the action does not run
    """
    (tmp_path / "rules.toml").write_bytes(content)
    start = time.monotonic()
    res = _toy(tmp_path)
    assert time.monotonic() - start < 10
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert expected in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    "content, expected",
    [
        ("select = []\n", "select: an empty list selects no rule"),
        ('select = ["ZZ"]\n', "select: 'ZZ' matches no rule code"),
        ('ignore = ["TA99"]\n', "ignore: 'TA99' matches no rule code"),
        ('[rules.TA999]\nseverity = "warning"\n', "rules.TA999: no rule has the code 'TA999'"),
        ('[arenas.tabarena]\nselect = ["TA9"]\n', "arenas.tabarena.select: 'TA9' matches no rule code"),
        ("[arenas.tabarena]\nselect = []\n", "arenas.tabarena.select: an empty list selects no rule"),
        (
            '[[waivers]]\nrule = "TA999"\ntarget = "*"\nreason = "r"\nowner = "o"\nexpires = 2099-01-01\n',
            "waivers[0].rule: no rule has the code 'TA999'",
        ),
    ],
    ids=["empty-select", "unknown-select", "unknown-ignore", "unknown-rules", "arena-select", "arena-empty", "waiver"],
)
def test_empty_or_unknown_selection_stops_process(tmp_path, content, expected):
    """Fault: `select = []`, or an unknown rule code in select, ignore, [rules.X], [arenas.X] or a waiver

    Must: a configuration error naming the code and its key path (exit 2) before anything is read; process does not
    run
    """
    (tmp_path / "rules.toml").write_text(content)
    (tmp_path / "info.py").write_text("m = 1\n")  # a reference that resolves: the configuration is what is wrong
    run = tmp_path / "run"
    run.mkdir()
    res = run_cli(
        ["-p", "tabarena", *process_args(run, "info.py:m", tmp_path / "cache")],
        env=NO_AUTOLOAD,
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    line = 2 if content.startswith("[") else 1  # the key's own line (the table's, for [rules.X])
    line = 1 if content.startswith("[rules.") else line
    assert f"rules.toml, line {line}: {expected}" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "cache").exists() and not (tmp_path / ".checks").exists()


def test_crashed_rule_fails_closed(tmp_path):
    """Fault: a rule raises an exception

    Must: its verdict is 'crashed', the other verdicts are still reported, the action is blocked (exit 3)
    """
    res = _toy(tmp_path, "--crash")
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    assert "crashed TOY002" in res.stdout and "1 crashed (TOY002)" in res.stdout
    assert not (tmp_path / "m").exists()


def test_expired_waiver_blocks(tmp_path):
    """Fault: an expired waiver in rules.toml

    Must: CK001 blocks every action until the waiver is renewed or removed
    """
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TOY001"\ntarget = "*"\nreason = "r"\nowner = "o"\nexpires = 2001-01-01\n'
    )
    res = _toy(tmp_path)
    assert res.exit_code == ExitCode.BLOCKED and "CK001" in res.stdout


def test_secrets_never_printed_or_recorded(tmp_path):
    """Fault: fake credentials in the environment and in a target name

    Must: no output, decision record or error message contains them
    """
    secret = "AKIA" + "Q" * 16
    env = {**NO_AUTOLOAD, "AWS_SECRET_ACCESS_KEY": "topsecret-value-123", "R2_ACCESS_KEY_ID": secret}
    res = run_cli(
        [
            "-p",
            "toy_plugin",
            "run",
            "toy",
            "--marker",
            str(tmp_path / "m"),
            "--fail",
            "--name",
            f"x-{secret}-topsecret-value-123",
            "--format",
            "json",
        ],
        env=env,
        cwd=tmp_path,
    )
    written = [p.read_text() for p in tmp_path.rglob("*") if p.is_file()]
    for blob in (res.stdout, res.stderr, *written):
        assert secret not in blob and "topsecret-value-123" not in blob


@pytest.mark.parametrize("option", ["--token=abc", "--hf-token", "--aws-secret-access-key", "--password", "--api-key"])
def test_credential_options_refused(tmp_path, option):
    """Fault: a credential-looking command-line option

    Must: refused with exit 2 and a pointer to the environment; the value is not echoed
    """
    res = run_cli(["run", "toy", option, "value-xyz"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "environment" in res.stderr and "value-xyz" not in res.stderr


def test_unwritable_decision_log_is_reported(tmp_path):
    """Fault: the decision log cannot be written (read-only or full disk)

    Must: the run reports it as an error with the log path and never exits 0; no traceback
    """
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the log folder should be")
    res = _toy(tmp_path, "--decision-log", str(blocker / "log.jsonl"))
    assert res.exit_code == ExitCode.ACTION_FAILED
    assert "decision record could not be appended" in res.stdout and "Traceback" not in res.stdout + res.stderr
