"""Credentials in the environment never reach an output, a file, a decision record or an error message.

Every command of both workflows runs with fake but realistically shaped credentials set
(R2_*, AWS_*, an ``hf_...`` HF_TOKEN), through success and through failure; afterwards every
file the run wrote (cache, index cache, bundle, .checks/decisions.jsonl) and every byte of
stdout/stderr is searched for each value.
"""

from __future__ import annotations

import json
import os

import pytest
from tests.support.reliability_fixtures import (
    draft_args,
    files_under,
    hf_setup,
    leaks,
    run_checks,
    write_info,
    write_ledger,
)
from tests.support.s3_fixtures import make_method_cache
from tests.support.tabarena_fixtures import make_run

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.testing.commands import process_args, upload_args

HF_TOKEN = "hf_" + "Zq8" * 12
AWS = {
    "AWS_ACCESS_KEY_ID": "AKIA" + "R7T2" * 4,
    "AWS_SECRET_ACCESS_KEY": "aws-secret-" + "k9" * 15,
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzE" + "x1" * 20,
}
R2_SECRETS = ("R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY")


def _secrets(env) -> list[str]:
    return [HF_TOKEN, *AWS.values(), *(env.get(name, "") for name in R2_SECRETS)]


@pytest.fixture
def secret_env(monkeypatch):
    for name, value in {**AWS, "HF_TOKEN": HF_TOKEN}.items():
        monkeypatch.setenv(name, value)


def test_tabarena_workflow_never_leaks_credentials(tmp_path, s3_env, s3_proxy, secret_env, monkeypatch):
    """Fault: fake AWS_*, R2_* and an hf_ HF_TOKEN in the environment while the TabArena workflow runs: inspect, process
    (blocked and successful), upload (dry run, real run, refused by the store)

    Must: none of the values appears in stdout, stderr, the decision records, the index cache or the method cache
    """

    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    bad = make_run(tmp_path / "bad", tasks=(363612,), folds=2, defects=("truncated", "unsafe_pickle"))
    ref = write_info(tmp_path / "info")
    cache = tmp_path / "cache"
    make_method_cache(cache)
    outputs = []
    for args in (
        ["inspect", str(data), "--format", "json"],
        process_args(bad, ref, cache, "--format", "json"),
        process_args(data, ref, cache),
        upload_args(cache),
        upload_args(cache, "--no-dry-run"),
    ):
        res = run_cli(args, cwd=tmp_path)
        outputs += [res.stdout, res.stderr]
    s3_proxy.fault = lambda method, path: 403
    refused = run_cli(
        upload_args(cache, "--no-dry-run", "--format", "json"),
        cwd=tmp_path,
    )
    assert refused.exit_code == ExitCode.ACTION_FAILED, refused.stdout
    outputs += [refused.stdout, refused.stderr]
    assert (tmp_path / ".checks" / "decisions.jsonl").is_file()
    assert leaks(_secrets(os.environ), outputs, files_under(tmp_path)) == []


def test_hf_workflow_never_leaks_the_token(tmp_path, secret_env):
    """Fault: an hf_ HF_TOKEN and AWS credentials in the environment during `checks hf contract`, `checks run draft`
    (accepted token) and a draft with a token the Hub rejects (401 on every route)

    Must: the token appears in no output, bundle file, decision record or error message
    """

    with hf_setup(tmp_path, models=3, token=HF_TOKEN) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=3, base=50.0)
        ok = run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)
        assert ok.exit_code == 0, ok.stdout + ok.stderr
        assert any(r.authorized for r in hub.requests), "the token was really used"
        wrong = {**env, "HF_TOKEN": "hf_" + "W0rng" * 8}
        rejected = run_cli([*draft_args(tmp_path, "bundle-rejected"), "--format", "json"], env=wrong, cwd=tmp_path)
        child = run_checks(draft_args(tmp_path, "bundle-child"), cwd=tmp_path, env=wrong)
    texts = [ok.stdout, ok.stderr, rejected.stdout, rejected.stderr, child.stdout, child.stderr]
    written = [p for p in files_under(tmp_path) if not p.is_relative_to(tmp_path / "hub")]  # the Hub's own fixture
    assert leaks([*_secrets(os.environ), HF_TOKEN, wrong["HF_TOKEN"]], texts, written) == []
    assert (tmp_path / "bundle" / "review.md").is_file() and (tmp_path / ".checks" / "decisions.jsonl").is_file()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "draft", "--hf-token", "hf_abcdefghijklmnopqrstu"],
        ["hf", "contract", "x/y", "--token=hf_abcdefghijklmnopqrstu"],
        ["run", "upload", "--aws-secret-access-key", "hf_abcdefghijklmnopqrstu"],
        ["inspect", ".", "--api-key", "hf_abcdefghijklmnopqrstu"],
        ["run", "process", ".", "--r2-access-key-id", "hf_abcdefghijklmnopqrstu"],
    ],
    ids=["draft", "contract", "upload", "inspect", "process"],
)
def test_credential_options_refused_everywhere(tmp_path, args):
    """Fault: a credential passed as a command-line option to any workflow command

    Must: refused with exit 2 and a pointer to the environment before anything runs; the value is not echoed
    """
    res = run_cli(args, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "environment" in res.stderr
    assert "abcdefghijklmnopqrstu" not in res.stdout + res.stderr
    assert not (tmp_path / ".checks").exists()


#: secrets spelled the way escaping changes them: a quote, a backslash, non-ASCII
AWKWARD = {"R2_ACCESS_KEY_ID": 'key"\\\u00e9-7731', "R2_SECRET_ACCESS_KEY": 'sec"ret\\\u00e9-7731-xyz'}


def _spellings(value: str) -> list[str]:
    """The secret as stored raw, escaped for JSON (ASCII or not) and as a Python repr shows it."""
    return [value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1], repr(value)[1:-1]]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def test_secrets_with_quotes_backslashes_and_non_ascii_are_redacted(tmp_path, monkeypatch):
    """Fault: credentials holding a quote, a backslash and a non-ASCII character, one of them also used as the suite
    name of info.py, so a verdict message quotes it (process blocked by TA406)

    Must: redaction runs on the values before JSON escaping: no raw, JSON-escaped or repr spelling of any secret
    appears in stdout (human and JSON), stderr or the decision record, nor in any string the JSON decodes to
    """
    for name, value in AWKWARD.items():
        monkeypatch.setenv(name, value)
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    ref = write_info(tmp_path / "info", suite=AWKWARD["R2_SECRET_ACCESS_KEY"])
    outputs = []
    for fmt in ("human", "json"):
        res = run_cli(
            process_args(data, ref, tmp_path / "c", "--format", fmt),
            cwd=tmp_path,
        )
        assert res.exit_code == 1, res.stdout + res.stderr
        outputs += [res.stdout, res.stderr]
    decoded = json.loads(outputs[2])
    assert "***" in json.dumps(decoded), "the suite was quoted, masked"
    log = (tmp_path / ".checks" / "decisions.jsonl").read_text(encoding="utf-8")
    texts = [*outputs, log, *_strings(decoded), *(s for line in log.splitlines() for s in _strings(json.loads(line)))]
    for value in AWKWARD.values():
        for spelling in _spellings(value):
            assert not [t for t in texts if spelling in t], spelling


def test_account_id_is_never_shown(tmp_path, monkeypatch):
    """Fault: R2 unreachable: the endpoint host, named after R2_ACCOUNT_ID as R2's is
    (<account>.r2.cloudflarestorage.com; here <account>.invalid, which never resolves), quoted by the connection error;
    an R2_ACCOUNT_ID that cannot be a host name

    Must: R2_ACCOUNT_ID is a secret: the error (exit 4) shows the host with the account masked, and the value is in
    no output or decision record; an impossible account id is refused without echoing it
    """
    account = "f00dfeed" * 4
    for name, value in {
        "R2_ACCOUNT_ID": account,
        "R2_ACCESS_KEY_ID": "AKIDPLAIN0042",
        "R2_SECRET_ACCESS_KEY": "plain-secret-0042",
        "CHECKS_S3_MAX_ATTEMPTS": "1",
        "CHECKS_S3_ENDPOINT_URL": f"https://{account}.invalid",
    }.items():
        monkeypatch.setenv(name, value)
    make_method_cache(tmp_path / "cache")
    args = upload_args(tmp_path / "cache", "--no-dry-run")
    res = run_cli([*args, "--format", "json"], cwd=tmp_path)
    assert res.exit_code == ExitCode.ACTION_FAILED, res.stdout + res.stderr
    assert "***.invalid" in res.stdout, res.stdout
    human = run_cli(args, cwd=tmp_path)
    log = (tmp_path / ".checks" / "decisions.jsonl").read_text()
    assert leaks([account], [res.stdout, res.stderr, human.stdout, human.stderr, log]) == []
    monkeypatch.delenv("CHECKS_S3_ENDPOINT_URL")
    monkeypatch.setenv("R2_ACCOUNT_ID", 'not"a host\\')
    refused = run_cli([*args, "--format", "json"], cwd=tmp_path)
    assert refused.exit_code == ExitCode.ACTION_FAILED and "is not an R2 account id" in refused.stdout
    assert 'not"a' not in refused.stdout + refused.stderr and 'not\\\\"a' not in refused.stdout
