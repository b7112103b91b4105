"""checks run upload / unpublish against moto's S3 server on 127.0.0.1 (through a recording, fault-injecting proxy)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile

import attrs
import pytest
import yaml
from tests.support.s3_fixtures import (
    BUCKET,
    FAKE_ENV,
    KEY_ROOT,
    METHOD,
    PREFIX,
    SUITE,
    UPLOADED_KEYS,
    make_method_cache,
    record_process,
    remote_objects,
)

from checks import records
from checks.errors import InputError
from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli
from tabarena_checks.cache.layout import read_metadata_yaml
from tabarena_checks.demo import DEMO_ENV
from tabarena_checks.facts.upload import UploadFacts
from tabarena_checks.publish.upload import UploadOptions, write_zip
from tabarena_checks.rules import upload as rules_upload
from tabarena_checks.testing.commands import upload_args

DEMO_SECRET = DEMO_ENV["R2_SECRET_ACCESS_KEY"]


def upload(tmp_path, *extra: str, env=None):
    args = upload_args(tmp_path / "cache", *extra, method=METHOD, suite=SUITE)
    return run_cli(args, cwd=tmp_path, env=env)


def facts(tmp_path, real=False, **options):
    base = {"from_cache": (METHOD, SUITE), "cache_root": str(tmp_path / "cache")}
    return UploadFacts.gather(UploadOptions(**{**base, **options}), real=real)


def test_dry_run_is_the_default_and_sends_nothing(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    result = upload(tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert f"r2://{BUCKET}/{KEY_ROOT}/" in result.stdout
    for key in UPLOADED_KEYS:
        assert key in result.stdout
    assert "bytes" in result.stdout and "--no-dry-run" in result.stdout
    assert s3_proxy.puts() == [] and remote_objects(s3_env) == {}


def test_dry_run_without_credentials_prints_placeholders_not_a_credentials_error(tmp_path, monkeypatch):
    make_method_cache(tmp_path / "cache")
    for name in FAKE_ENV:
        monkeypatch.delenv(name, raising=False)
    result = upload(tmp_path)
    assert result.exit_code == 0, result.stdout
    assert "R2_SECRET_ACCESS_KEY=<r2_secret_access_key>" in result.stdout


def test_missing_artifact_is_reported_as_missing_not_as_credentials(tmp_path, monkeypatch):
    path = make_method_cache(tmp_path / "cache")
    (path / "results" / "model_results.parquet").unlink()
    for name in FAKE_ENV:
        monkeypatch.delenv(name, raising=False)
    result = upload(tmp_path, "-v")  # every verdict: TA404's passing one included
    assert result.exit_code == 1
    assert "results: missing file" in result.stdout
    assert "TA404" in result.stdout and "missing environment" not in result.stdout


def test_the_decision_record_tells_a_plan_from_a_publish(tmp_path, s3_env, s3_proxy):

    make_method_cache(tmp_path / "cache")
    assert upload(tmp_path).exit_code == 0
    assert upload(tmp_path, "--no-dry-run", "--no-upload-raw").exit_code == 0
    plan, publish = records.read(tmp_path / ".checks" / "decisions.jsonl")[-2:]
    assert (plan["mode"], plan["outcome"], plan["dry_run"]) == ("plan", "dry-run", True)
    assert (publish["mode"], publish["outcome"], publish["dry_run"]) == ("execute", "ran", False)
    assert plan["options"]["from_cache"] == [METHOD, SUITE] and plan["options"]["no_upload_raw"] is False
    assert publish["options"]["no_upload_raw"] is True
    assert publish["options"]["cache_root"] == str(tmp_path / "cache")
    text = (tmp_path / ".checks" / "decisions.jsonl").read_text()
    assert FAKE_ENV["R2_SECRET_ACCESS_KEY"] not in text and FAKE_ENV["R2_ACCESS_KEY_ID"] not in text


def test_upload_has_one_flag_no_dry_run(tmp_path):
    make_method_cache(tmp_path / "cache")
    res = upload(tmp_path, "--dry-run")
    assert res.exit_code == 2
    assert "checks run upload plans by default: leave out --dry-run to plan; --no-dry-run executes" in res.stderr

    assert not [r for r in records.read(tmp_path / ".checks" / "decisions.jsonl") if r["action"] == "upload"]


def test_upload_publishes_every_object_and_verifies(tmp_path, s3_env, s3_proxy):
    path = make_method_cache(tmp_path / "cache")
    result = upload(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    assert "verify: 6 planned object(s) listed and HEAD-checked; 0 missing, 0 size/ETag mismatch" in result.stdout
    assert FAKE_ENV["R2_SECRET_ACCESS_KEY"] not in result.stdout + result.stderr
    checksums = json.loads(s3_env.get_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/results_checksums.json")["Body"].read())
    table = (path / "results" / "model_results.parquet").read_bytes()
    assert checksums == {
        f"artifacts/{SUITE}/methods/{METHOD}/results/model_results.parquet": hashlib.md5(table).hexdigest()
    }
    body = s3_env.get_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/processed.zip")["Body"].read()
    names = zipfile.ZipFile(io.BytesIO(body)).namelist()
    assert names == ["configs.parquet", "configs_hyperparameters.json"]
    raw = zipfile.ZipFile(io.BytesIO(s3_env.get_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/raw.zip")["Body"].read()))
    assert raw.namelist() == ["Dummy_c1_BAG_L1/363612/0_0/results.pkl"]


def test_rerun_sends_nothing_even_for_multipart_objects(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache", raw_bytes=os.urandom(20 * 1024 * 1024))
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    etag = s3_env.head_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/raw.zip")["ETag"]
    assert etag.strip('"').endswith("-2"), "raw.zip (20 MiB) should have gone multipart in 16 MiB parts"
    s3_proxy.forwarded.clear()
    again = upload(tmp_path, "--no-dry-run")
    assert again.exit_code == 0, again.stdout + again.stderr
    assert s3_proxy.puts() == []
    assert "uploaded 0 object(s), skipped 6 already in place" in again.stdout


def test_changed_part_is_resent_with_metadata_withdrawn_first(tmp_path, s3_env, s3_proxy):
    path = make_method_cache(tmp_path / "cache")
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    (path / "processed" / "configs_hyperparameters.json").write_text('{"changed": {}}')
    record_process(path)  # as a rerun of process would
    s3_proxy.forwarded.clear()
    result = upload(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout
    sent = {p.split("?")[0].split(f"/{BUCKET}/", 1)[1] for p in s3_proxy.puts()}
    assert sent == {
        f"{KEY_ROOT}/processed.zip",
        f"{KEY_ROOT}/processed/configs_hyperparameters.json",
        f"{KEY_ROOT}/metadata.yaml",
    }
    deletes = [p for m, p in s3_proxy.forwarded if m == "DELETE"]
    assert any(p.endswith("metadata.yaml") for p in deletes)
    assert "withdrawn" in result.stdout


def test_metadata_yaml_arrives_only_after_every_other_object(tmp_path, s3_env, s3_proxy, moto_s3):
    make_method_cache(tmp_path / "cache")
    seen_at_metadata_put: list[set[str]] = []

    def watch(method, path):
        if method == "PUT" and "metadata.yaml" in path:  # the upload lock is there too, beside the method's keys
            seen_at_metadata_put.append({k for k in remote_objects(s3_env) if not k.endswith(".checks-lock")})
        elif method == "PUT":
            assert f"{KEY_ROOT}/metadata.yaml" not in remote_objects(s3_env)
        return None

    s3_proxy.fault = watch
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    assert seen_at_metadata_put == [UPLOADED_KEYS - {f"{KEY_ROOT}/metadata.yaml"}]


def test_throttling_and_server_errors_are_retried(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    failed: dict[str, int] = {}

    def flaky(method, path):
        if method != "PUT" or not path.split("?")[0].endswith(("metadata.yaml", "raw.zip")):
            return None
        failed[path] = failed.get(path, 0) + 1
        return {1: 503, 2: 500}.get(failed[path])

    s3_proxy.fault = flaky
    result = upload(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    assert len(failed) == 2 and set(failed.values()) == {3}, "503, then 500, then accepted"


@pytest.mark.slow
def test_interrupted_upload_is_finished_by_a_rerun(tmp_path, s3_env, s3_proxy, moto_s3, monkeypatch):
    make_method_cache(tmp_path / "cache", raw_bytes=os.urandom(40 * 1024 * 1024))
    monkeypatch.setenv("CHECKS_S3_MAX_ATTEMPTS", "2")
    puts = []

    def stop_midway(method, path):
        if method == "PUT":
            puts.append(path)
            if len(puts) == 3:
                moto_s3.stop()
        return None

    s3_proxy.fault = stop_midway
    first = upload(tmp_path, "--no-dry-run")
    assert first.exit_code == 4, first.stdout + first.stderr
    assert "Re-run the same command to resume" in first.stdout
    s3_proxy.fault = None
    moto_s3.start()
    assert f"{KEY_ROOT}/metadata.yaml" not in remote_objects(s3_env)
    partial = remote_objects(s3_env)
    assert 0 < len(partial) < len(UPLOADED_KEYS) - 1, partial
    s3_proxy.forwarded.clear()
    second = upload(tmp_path, "--no-dry-run")
    assert second.exit_code == 0, second.stdout + second.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    resent = {p.split("?")[0].split(f"/{BUCKET}/", 1)[1] for p in s3_proxy.puts()}
    assert resent.isdisjoint(partial), "objects already complete must not be sent again"
    assert s3_env.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
    assert "0 missing, 0 size/ETag mismatch" in second.stdout


def test_real_upload_without_credentials_is_blocked_before_anything_is_sent(tmp_path, s3_env, s3_proxy, monkeypatch):
    make_method_cache(tmp_path / "cache")
    monkeypatch.delenv("R2_SECRET_ACCESS_KEY")
    result = upload(tmp_path, "--no-dry-run")
    assert result.exit_code == 1
    assert "R2_SECRET_ACCESS_KEY" in result.stdout and s3_proxy.log == []


def test_credentials_are_refused_as_options(tmp_path):
    make_method_cache(tmp_path / "cache")
    result = upload(tmp_path, "--r2-secret-access-key", "abc123456")
    assert result.exit_code == 2
    assert "never accepted as command-line options" in result.stderr


def test_unpublish_removes_every_object(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    make_method_cache(tmp_path / "cache", method="Other")
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    assert (
        run_cli(
            upload_args(tmp_path / "cache", "--no-dry-run", method="Other", suite=SUITE),
            cwd=tmp_path,
        ).exit_code
        == 0
    )
    base = ["run", "unpublish", "--method", METHOD, "--suite", SUITE, "--cache-root", str(tmp_path / "cache")]
    refused = run_cli(base, cwd=tmp_path)
    assert refused.exit_code == 4 and "pass --yes" in refused.stdout
    assert set(remote_objects(s3_env, KEY_ROOT)) == UPLOADED_KEYS
    s3_proxy.forwarded.clear()
    done = run_cli([*base, "--yes"], cwd=tmp_path)
    assert done.exit_code == 0, done.stdout
    assert remote_objects(s3_env, KEY_ROOT + "/") == {}
    assert len(remote_objects(s3_env, f"{PREFIX}/artifacts/{SUITE}/methods/Other/")) == 6
    first_delete = next(p for m, p in s3_proxy.forwarded if m in ("DELETE", "POST"))
    assert first_delete.split("?")[0].endswith("metadata.yaml")
    again = run_cli([*base, "--yes"], cwd=tmp_path)
    assert again.exit_code == 1 and "TA410" in again.stdout and "nothing is published" in again.stdout


def test_deterministic_zip(tmp_path):
    src = tmp_path / "src"
    (src / "b").mkdir(parents=True)
    (src / "b" / "x.bin").write_bytes(b"1" * 1000)
    (src / "a.txt").write_text("a")
    write_zip(src, tmp_path / "one.zip")
    os.utime(src / "a.txt", (1_000_000_000, 1_000_000_000))
    write_zip(src, tmp_path / "two.zip")
    assert (tmp_path / "one.zip").read_bytes() == (tmp_path / "two.zip").read_bytes()
    assert zipfile.ZipFile(tmp_path / "one.zip").namelist() == ["a.txt", "b/x.bin"]


# --- each TA4xx rule: must fail and must pass, on facts gathered from a real cache ---------------


def _verdicts(tmp_path, action="upload", real=False, **options):
    f = facts(tmp_path, real=real, **options)
    return evaluate_rules(rules_upload.RULES, f, action=action, options=f.options, dry_run=not real)


def _rewrite_metadata(path, **changes):

    doc = yaml.safe_load((path / "metadata.yaml").read_text())
    doc.update(changes)
    (path / "metadata.yaml").write_text(yaml.safe_dump(doc, sort_keys=True))


def test_ta401_store_is_r2(tmp_path):
    path = make_method_cache(tmp_path / "cache")
    assert_passes(_verdicts(tmp_path), "TA401")
    _rewrite_metadata(path, cache_type="local", cache_kwargs=None)
    assert_fails(_verdicts(tmp_path), "TA401", "has no remote store")
    _rewrite_metadata(path, cache_type="r2", cache_kwargs={"bucket": "tabarena"})
    assert_fails(_verdicts(tmp_path), "TA401", "cache_kwargs is missing 'prefix'")


def test_ta402_protocol_recorded_must_equal_declared(tmp_path):

    make_method_cache(tmp_path / "cache", protocol="8x1")
    f = facts(tmp_path)
    assert_passes(evaluate_rules(rules_upload.RULES, f, action="upload", options=f.options), "TA402")
    f.metadata = attrs.evolve(f.metadata, validation_protocol="3x1")
    assert_fails(
        evaluate_rules(rules_upload.RULES, f, action="upload", options=f.options),
        "TA402",
        "records validation_protocol='8x1'",
    )


def test_ta403_parts(tmp_path):
    path = make_method_cache(tmp_path / "cache")
    assert_passes(_verdicts(tmp_path), "TA403")
    (path / "processed" / "configs_hyperparameters.json").write_text("")
    assert_fails(_verdicts(tmp_path), "TA403", "processed: empty file")
    for pkl in (path / "raw").rglob("results.pkl"):
        pkl.unlink()
    assert_fails(_verdicts(tmp_path), "TA403", "raw: no results.pkl")
    v = _verdicts(tmp_path, no_upload_raw=True)
    assert "raw" not in v["TA403"].message


def test_ta404_credentials_only_for_real_runs(tmp_path, monkeypatch):
    make_method_cache(tmp_path / "cache")
    for name in FAKE_ENV:
        monkeypatch.delenv(name, raising=False)
    assert_passes(_verdicts(tmp_path), "TA404")
    assert_fails(_verdicts(tmp_path, real=True), "TA404", "R2_ACCOUNT_ID, R2_ACCESS_KEY_ID, R2_SECRET_ACCESS_KEY")
    for name, value in FAKE_ENV.items():
        monkeypatch.setenv(name, value)
    assert_passes(_verdicts(tmp_path, real=True), "TA404")


def test_ta405_verified_needs_the_flag(tmp_path):
    make_method_cache(tmp_path / "cache", verified=True)
    assert_fails(_verdicts(tmp_path), "TA405", "pass --verified")
    assert_passes(_verdicts(tmp_path, verified=True), "TA405")


def test_demo_runs_end_to_end_and_exits_cleanly(tmp_path):

    proc = subprocess.run(
        [sys.executable, "-m", "tabarena_checks.demo", "--workdir", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "blocked: the action did not run (exit 1)" in out and "cache written: False" in out
    assert "uploaded 8 object(s), skipped 0 already in place" in out
    assert "uploaded 0 object(s), skipped 8 already in place" in out
    assert out.count("0 missing, 0 size/ETag mismatch") == 2
    assert "local S3 server stopped" in out
    assert "SKIPPED  DemoGBM upload: uploaded and verified already" in out  # the batch of step 9
    assert "DONE     DemoRF upload (" in out and "; exit 0" in out
    assert DEMO_SECRET not in out + proc.stderr


def test_method_metadata_ref_whose_protocol_differs_from_the_processed_one_is_blocked(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache", protocol="8x1")
    info = tmp_path / "info.py"
    declaration = (
        'dummy = MethodMetadata.config(method="Dummy", suite="dummy-2026-11-01", ag_key="TA-DUMMY", '
        'cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}}, verified=False, '
        'validation_protocol="{}")\n'
    )
    info.write_text("from tabarena.models._method_metadata import MethodMetadata\n\n" + declaration.format("3x1"))
    args = [
        "run",
        "upload",
        "--method-metadata",
        f"{info}:dummy",
        "--cache-root",
        str(tmp_path / "cache"),
        "--no-dry-run",
    ]
    blocked = run_cli(args, cwd=tmp_path)
    assert blocked.exit_code == 1 and "records validation_protocol='8x1'" in blocked.stdout
    assert s3_proxy.log == []
    info.write_text("from tabarena.models._method_metadata import MethodMetadata\n\n" + declaration.format("8x1"))
    done = run_cli(args, cwd=tmp_path)
    assert done.exit_code == 0, done.stdout
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS


def test_from_cache_without_a_cache_names_the_missing_file(tmp_path):
    result = upload(tmp_path)
    assert result.exit_code == 2
    assert "metadata.yaml" in result.stderr and "process the method first" in result.stderr
    assert "credential" not in result.stderr.lower()


def test_ta406_cache_names_safe(tmp_path):

    make_method_cache(tmp_path / "cache")
    f = facts(tmp_path)
    assert_passes(evaluate_rules(rules_upload.RULES, f, action="upload", options=f.options), "TA406")
    for method in ("../../x", "a/b", "bad\x00name", "n" * 300, ".hidden"):
        f.metadata = attrs.evolve(f.metadata, method=method)
        assert_fails(
            evaluate_rules(rules_upload.RULES, f, action="upload", options=f.options), "TA406", "'method' must"
        )


def test_from_cache_with_a_climbing_name_is_refused_before_any_request(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    result = run_cli(
        upload_args(tmp_path / "cache", "--no-dry-run", method="../methods/Dummy", suite=SUITE),
        cwd=tmp_path,
    )
    assert result.exit_code == 2 and "'method' must be a plain directory name" in result.stderr
    assert s3_proxy.log == []


@pytest.mark.parametrize(
    ("hostile", "reason"),
    [
        (b"a: &a [x, x]\nb: &b [*a, *a]\nmethod: Dummy\ntags: *b\n", "aliases are not allowed"),
        (b"method: Dummy\nmethod: Other\n", "duplicate key 'method'"),
        (b"method: Dummy\ntags: " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested"),
        (b"method: Dummy\ntags: [\xff\xfe]\n", "not UTF-8"),
        (b"method: Dummy\n# " + b"x" * (1 << 20) + b"\n", "byte limit"),
    ],
)
def test_hostile_metadata_yaml_is_one_clear_input_error(tmp_path, hostile, reason):

    path = tmp_path / "metadata.yaml"
    path.write_bytes(hostile)
    with pytest.raises(InputError, match=reason):
        read_metadata_yaml(path)


def test_zips_are_staged_once_and_reused_while_their_inputs_are_unchanged(tmp_path, s3_env, s3_proxy):
    path = make_method_cache(tmp_path / "cache")
    assert upload(tmp_path).exit_code == 0
    assert not (path / ".checks-staging").exists(), "a dry run stores nothing"
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    staged = path / ".checks-staging" / "raw.zip"
    first = staged.stat().st_mtime_ns
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    assert staged.stat().st_mtime_ns == first, "an unchanged raw/ is not zipped again"
    pkl = next((path / "raw").rglob("results.pkl"))
    changed = pickle.dumps({"framework": "Dummy_c1_BAG_L1", "payload": b"changed raw results"})
    pkl.write_bytes(changed)
    record_process(path)  # as a rerun of process would
    s3_proxy.forwarded.clear()
    again = upload(tmp_path, "--no-dry-run")
    assert again.exit_code == 0, again.stdout
    sent = {p.split("?")[0].rsplit("/", 1)[-1] for p in s3_proxy.puts()}
    assert sent == {"raw.zip", "metadata.yaml"}
    remote = s3_env.get_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/raw.zip")["Body"].read()
    assert zipfile.ZipFile(io.BytesIO(remote)).read("Dummy_c1_BAG_L1/363612/0_0/results.pkl") == changed


def test_half_written_zip_of_a_killed_upload_is_swept(tmp_path, s3_env, s3_proxy):
    path = make_method_cache(tmp_path / "cache")
    (path / ".checks-staging").mkdir()
    (path / ".checks-staging" / ".raw.zip.checks-tmp-999997.0badf00d").write_bytes(b"half")
    assert upload(tmp_path, "--no-dry-run").exit_code == 0
    assert sorted(p.name for p in (path / ".checks-staging").iterdir()) == [
        "processed.zip",
        "processed.zip.inputs.json",
        "raw.zip",
        "raw.zip.inputs.json",
    ]


def test_upload_sends_no_flexible_checksums_that_r2_refuses(tmp_path, s3_env, s3_proxy):
    s3_proxy.like_r2 = True  # 501 NotImplemented for x-amz-checksum-* headers and aws-chunked trailers
    make_method_cache(tmp_path / "cache", raw_bytes=os.urandom(20 * 1024 * 1024))
    result = upload(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert set(remote_objects(s3_env)) == UPLOADED_KEYS
    assert "0 missing, 0 size/ETag mismatch" in result.stdout
    assert s3_env.head_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/raw.zip")["ETag"].strip('"').endswith("-2")


def test_the_dry_run_shows_the_command_given_with_no_dry_run(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    result = upload(tmp_path, "--no-upload-raw")
    line = next(line.strip() for line in result.stdout.splitlines() if "to upload for real: " in line)
    assert line.endswith(
        f"checks run upload --from-cache {METHOD} {SUITE} --cache-root {tmp_path / 'cache'} "
        "--no-upload-raw --no-dry-run"
    ), line
