"""Remote faults: a flaky S3 (moto behind a fault-injecting proxy) and a flaky Hub (the local Hub's faults).

Transient failures must be retried with backoff and end in success; lasting ones must end
in an honest report (what was sent, what was not, how to resume) and, on the Hub side, in
``needs_review``: a read that failed is never taken to mean "absent".
"""

from __future__ import annotations

import csv
import threading
import time

import pytest
from tests.support import s3_fixtures
from tests.support.reliability_fixtures import draft_args, hf_setup, model_label, model_repo, write_hub, write_ledger
from tests.support.s3_fixtures import (
    BUCKET,
    FAKE_ENV,
    KEY_ROOT,
    METHOD,
    SUITE,
    UPLOADED_KEYS,
    make_method_cache,
    remote_objects,
)

from checks.testing import run_cli
from hfmigrate_checks.hub import resolve
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.testing import Fault, LocalHub
from tabarena_checks.publish.s3store import make_client
from tabarena_checks.testing.commands import upload_args


def upload(tmp_path):
    return run_cli(
        upload_args(tmp_path / "cache", "--no-dry-run", method=METHOD, suite=SUITE),
        cwd=tmp_path,
    )


def _key(path: str) -> str:
    return path.split("?")[0].split(f"/{BUCKET}/", 1)[-1]


def test_connection_resets_are_retried(tmp_path, s3_env, s3_proxy):
    """Fault: connection resets: the proxy drops the first attempt of every object upload without answering

    Must: each upload is retried and the run ends with every planned object in place and verified (exit 0)
    """
    make_method_cache(tmp_path / "cache")
    dropped: set[str] = set()

    def reset_first(method, path):
        if method == "PUT" and _key(path) not in dropped and ".checks-lock" not in path:
            dropped.add(_key(path))
            return "drop"
        return None

    s3_proxy.fault = reset_first
    result = upload(tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    assert dropped == UPLOADED_KEYS
    assert "0 missing, 0 size/ETag mismatch" in result.stdout


@pytest.mark.slow
def test_server_restart_mid_upload_is_ridden_out(tmp_path, s3_env, s3_proxy, moto_s3):
    """Fault: the S3 server is stopped mid-upload and comes back a second later

    Must: the same run retries with backoff and completes: every object in place, metadata.yaml last, exit 0
    """
    make_method_cache(tmp_path / "cache", raw_bytes=b"r" * 300_000)
    puts: list[str] = []

    def stop_at_third_put(method, path):
        if method == "PUT":
            puts.append(_key(path))
            if len(puts) == 3:
                moto_s3.stop()
                threading.Timer(1.0, moto_s3.start).start()
        return None

    s3_proxy.fault = stop_at_third_put
    result = upload(tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    arrived = [_key(p) for p in s3_proxy.puts()]
    assert arrived[-1] == f"{KEY_ROOT}/metadata.yaml"
    assert len(puts) > len(UPLOADED_KEYS), "the PUT lost while the server was down must have been retried"


@pytest.mark.parametrize("status", [500, pytest.param(503, marks=pytest.mark.slow)])
def test_lasting_server_errors_end_in_an_honest_report(tmp_path, s3_env, s3_proxy, monkeypatch, status):
    """Fault: the store keeps answering 500 InternalError or 503 SlowDown for one object

    Must: retried by botocore's standard mode exactly the configured number of times (no second retry layer), then
    exit 4 with an honest report: which object failed, what was sent, metadata.yaml not published, and how to resume;
    the rerun resumes
    """
    make_method_cache(tmp_path / "cache")
    monkeypatch.setenv("CHECKS_S3_MAX_ATTEMPTS", "4")
    attempts: list[float] = []

    def refuse_raw(method, path):
        if method == "PUT" and _key(path).endswith("raw.zip"):
            attempts.append(time.monotonic())
            return status
        return None

    s3_proxy.fault = refuse_raw
    first = upload(tmp_path)
    assert first.exit_code == 4, first.stdout + first.stderr
    assert "Traceback" not in first.stdout + first.stderr
    report = first.stdout + first.stderr
    assert f"{KEY_ROOT}/raw.zip" in report and "metadata.yaml was not uploaded" in report
    assert "Re-run the same command to resume" in report
    assert len(attempts) == 4, f"{len(attempts)} attempts: botocore's 4, and no second retry layer on top"

    assert make_client().meta.config.retries == {"mode": "standard", "total_max_attempts": 4}
    sent = set(remote_objects(s3_env))
    assert f"{KEY_ROOT}/metadata.yaml" not in sent and sent == UPLOADED_KEYS - {
        f"{KEY_ROOT}/raw.zip",
        f"{KEY_ROOT}/metadata.yaml",
    }
    s3_proxy.fault = None
    s3_proxy.forwarded.clear()
    second = upload(tmp_path)
    assert second.exit_code == 0, second.stdout + second.stderr
    assert {_key(p) for p in s3_proxy.puts()} == {f"{KEY_ROOT}/raw.zip", f"{KEY_ROOT}/metadata.yaml"}
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS


@pytest.mark.parametrize("code", ["InvalidAccessKeyId", "ExpiredToken"])
def test_refused_credentials_fail_fast_and_honestly(tmp_path, s3_env, s3_proxy, monkeypatch, code):
    """Fault: expired or revoked credentials: the store answers 403 InvalidAccessKeyId / ExpiredToken

    Must: no retry storm (a refusal is not retried), exit 4 naming the store's error code, nothing uploaded, and the
    credentials never echoed
    """
    make_method_cache(tmp_path / "cache")
    monkeypatch.setitem(s3_fixtures._ERROR_CODES, 403, code)
    s3_proxy.fault = lambda method, path: 403
    result = upload(tmp_path)
    assert result.exit_code == 4, result.stdout + result.stderr
    out = result.stdout + result.stderr
    assert code in out and "Traceback" not in out
    assert len(s3_proxy.log) <= 3, f"{len(s3_proxy.log)} requests after a credentials refusal"
    for value in FAKE_ENV.values():
        assert value not in out
    assert remote_objects(s3_env) == {}


# --------------------------------------------------------------------------- the Hub


def _ledger_rows(bundle) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    with open(bundle / "source-ledger.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.setdefault(row["source_model"], []).append(row)
    return out


def _drafted(bundle) -> set[str]:
    return {p.parent.parent.name for p in (bundle / "drafts").rglob("*.yaml")}


@pytest.mark.slow
def test_draft_rides_out_brief_hub_faults_and_flags_lasting_ones(tmp_path):
    """Fault: the Hub answers 429 (Retry-After), 500, 503 or truncated JSON, some briefly and some for good, during
    `checks run draft`

    Must: brief faults are retried and the model is drafted; lasting ones make that model needs_review in the bundle,
    never not_on_hub or 'new'; the Hub only ever sees reads
    """

    def model_path(i, tail=""):
        return f"^/api/models/{model_repo(i)}{tail}$"

    faults = [
        Fault(model_path(1), status=429, times=2, retry_after=1),
        Fault(model_path(2), status=500, times=None),
        Fault(f"^/api/models/{model_repo(3)}/discussions", status=503, times=None),
        Fault(f"^/api/models/{model_repo(4)}/discussions", truncate=True, times=None),
        Fault(model_path(5), truncate=True, times=1),
        Fault(f"^/api/models/{model_repo(6)}/discussions", status=500, times=1),
    ]
    with hf_setup(tmp_path, models=8, faults=faults) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=8, base=50.0)
        result = run_cli(draft_args(tmp_path), env=env, cwd=tmp_path)
        requests = hub.requests
    assert "Traceback" not in result.stdout + result.stderr
    assert not [r for r in requests if r.method not in ("GET", "HEAD")]
    for i in (1, 5, 6):
        hits = [r for r in requests if model_repo(i) in r.path]
        assert any(r.status >= 400 or r.status == 200 for r in hits) and len(hits) > 1
    bundle = tmp_path / "bundle"
    drafted = _drafted(bundle)
    assert drafted == {model_repo(i).replace("/", "--") for i in (0, 1, 5, 6, 7)}, drafted
    rows = _ledger_rows(bundle)
    for i in (2, 3, 4):
        text = " ".join(" ".join(r.values()) for r in rows[model_label(i)])
        assert "needs_review" in text and "not_on_hub" not in text, text
    assert result.exit_code in (0, 1), result.stdout + result.stderr


def test_hanging_hub_reads_end_in_needs_review_within_bounded_time(tmp_path):
    """Fault: a Hub read that hangs past the client's deadline (the local Hub delays model_info)

    Must: each attempt is abandoned at the deadline and retried; when the Hub keeps hanging the model is needs_review
    (not not_on_hub) within bounded time; a single slow answer is ridden out
    """

    write_hub(tmp_path / "hub", 2)
    faults = [
        Fault(f"^/api/models/{model_repo(0)}$", status=0, delay=4.0, times=None),
        Fault(f"^/api/models/{model_repo(1)}$", status=0, delay=4.0, times=1),
    ]

    # a 1 s deadline leaves a loaded 2-core CI machine room to answer the retry of the slow-once read
    with (
        LocalHub(tmp_path / "hub", faults=faults) as hub,
        ReadOnlyHub(hub.endpoint, timeout=1.0, retries=2, backoff=0.05) as client,
    ):
        started = time.monotonic()
        hanging = resolve.resolve(client, model_label(0), (model_repo(0),))
        elapsed = time.monotonic() - started
        slow_once = resolve.resolve(client, model_label(1), (model_repo(1),))
    assert hanging.status == "needs_review", hanging
    assert "no answer within" in hanging.evidence
    assert elapsed < 3 * 1.0 + 3, f"{elapsed:.1f}s: three attempts of at most 1 s each, and little else"
    assert slow_once.status == "exact" and slow_once.repo_id == model_repo(1)


@pytest.mark.slow
def test_rate_limited_hub_loses_no_model(tmp_path):
    """Fault: a Hub that rate-limits (20 requests/s, small bursts) while `checks run draft` reads with 32 workers

    Must: the draft slows down to the limit and completes with every model drafted: throttling never turns a model
    into needs_review
    """
    with hf_setup(tmp_path, models=40, rate_limit=20, burst=5) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=40, base=50.0)
        result = run_cli([*draft_args(tmp_path), "--max-workers", "32"], env=env, cwd=tmp_path)
    assert "Traceback" not in result.stdout + result.stderr
    assert len(_drafted(tmp_path / "bundle")) == 40
