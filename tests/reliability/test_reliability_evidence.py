"""The evidence upload trusts: decision records signed with the user's key, and a decision log that is a file.

Upload publishes a cache only when a passed process run recorded its manifest (TA407). A record
anyone can append (a pull request, a shipped run, a hand edit) must not count; the log itself
must be a regular file kept apart from the data and the cache, read and written within bounds.
"""

from __future__ import annotations

import gzip
import json
import os
import pickle
import resource
import stat
import time

import pytest
from tests.support.reliability_fixtures import run_checks, write_info
from tests.support.s3_fixtures import make_method_cache, record_process
from tests.support.tabarena_fixtures import Call, make_run
from tests.support.reliability_fixtures import processed_for_upload, swap_same_size, verdicts_by_code

from checks import ConfigError, records, signing
from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.cache import integrity
from tabarena_checks.testing.commands import process_args, upload_args

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _forge(method, log, mac: str | None) -> None:
    """Swap a raw file for a code-running pickle, rewrite the manifest, and append a process record by hand."""
    swap_same_size(min((method / "raw").rglob("results.pkl")), method / "ran")
    manifest = integrity.manifest_of(method)
    source = method / ".checks-source.json"
    source.write_text(json.dumps({**json.loads(source.read_text()), integrity.MANIFEST: manifest}))
    line = {
        "action": "process",
        "outcome": "ran",
        "dry_run": False,
        "inputs": {integrity.DECISION_KEY: integrity.manifest_digest(manifest)},
    }
    if mac is not None:
        line["mac"] = mac
    with open(log, "a") as fh:
        fh.write(json.dumps(line) + "\n")


@pytest.mark.parametrize("mac", [None, "hmac-sha256:" + "0" * 64], ids=["unsigned", "made-up-mac"])
def test_a_hand_written_process_record_is_not_evidence(tmp_path, mac):
    """Fault: a raw pickle swapped for a code-running one, .checks-source.json recomputed, and one process record
    (outcome ran, the new manifest's digest) appended to the decision log by hand, unsigned or with a made-up MAC

    Must: TA407 refuses the line as evidence (its HMAC-SHA256 does not verify with the key in the user's own cache
    directory) and blocks upload (exit 1) saying so; records the tool writes carry a MAC that verifies; measured on the
    shared 2-core machine: a log of 10,000 records (50 MB) read in 3.4 s, and only the records naming the cache are
    authenticated
    """
    method, upload = processed_for_upload(tmp_path)
    log = tmp_path / ".checks" / "decisions.jsonl"
    assert all(r["mac"].startswith("hmac-sha256:") for r in records.read(log))
    _forge(method, log, mac)
    res = run_cli(upload, cwd=tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta407 = verdicts_by_code(res)["TA407"]
    assert ta407["outcome"] == "failed" and "not signed by arena-checks" in ta407["message"], ta407


def test_signed_record_checks_take_bounded_time(tmp_path):
    log = tmp_path / "log.jsonl"
    line = {"action": "process", "outcome": "ran", "inputs": {"cache_manifest": "sha256:" + "1" * 64}}
    records.append(log, line)
    signed = log.read_bytes()
    log.write_bytes(signed * 10_000)
    start = time.monotonic()
    read = records.load(log)
    assert len(records.signed(read.records)) == 10_000
    assert time.monotonic() - start < 15


def test_the_key_is_private_and_outside_the_checkout(tmp_path):

    records.append(tmp_path / "log.jsonl", {"action": "x"})
    key = signing.key_path()
    assert key.is_relative_to(os.environ["CHECKS_CACHE_DIR"])
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


@pytest.mark.parametrize("where", ["cache", "data"])
def test_a_decision_log_inside_the_data_or_the_cache_is_refused(tmp_path, where):
    """Fault: a rules.toml (as shipped in a repository) setting decision_log inside the cache root or the run's data
    directory

    Must: TA408 (required, cannot be waived) blocks process and upload naming the log and the directory (exit 1);
    nothing is processed or published
    """
    inside = {"cache": "cache/.checks/decisions.jsonl", "data": "run/data/decisions.jsonl"}[where]
    (tmp_path / "rules.toml").write_text(f'decision_log = "{inside}"\n')
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    res = run_cli(
        process_args(data, write_info(tmp_path / "info"), tmp_path / "cache", "--format", "json"),
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta408 = verdicts_by_code(res)["TA408"]
    assert ta408["outcome"] == "failed" and "decisions.jsonl" in ta408["message"], ta408
    assert not (tmp_path / "cache" / "artifacts").exists()


def test_a_decision_log_apart_from_the_data_passes_ta408(tmp_path):
    _, upload = processed_for_upload(tmp_path)
    assert verdicts_by_code(run_cli(upload, cwd=tmp_path))["TA408"]["outcome"] == "passed"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory"])
def test_a_decision_log_that_is_not_a_file_is_refused(tmp_path, kind):
    """Fault: decision_log pointing at a FIFO nobody reads (every run, a dry run too, blocked forever), at /dev/zero
    (read without end: 8.7 GB in 20 s) or at a directory

    Must: refused before the action runs as a configuration error naming decision_log and the fix (exit 2, no
    traceback); the log is opened without blocking and read within 256 MiB; measured: each run ends in 0.3 s
    """
    target = {"fifo": tmp_path / "log.fifo", "dev-zero": "/dev/zero", "directory": tmp_path / "dir"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    start = time.monotonic()
    res = run_checks(
        ["-p", "toy_plugin", "run", "toy", "--marker", tmp_path / "m", "--decision-log", target],
        cwd=tmp_path,
        env=NO_AUTOLOAD,
        timeout=60,
    )
    assert time.monotonic() - start < 30
    assert res.returncode == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert f"decision_log {target} is not a regular file" in res.stderr and "Traceback" not in res.stderr
    assert not (tmp_path / "m").exists()
    with pytest.raises(OSError, match="not a regular file"):
        records.load(target)


def test_a_decision_log_over_its_limit_is_named(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b"{}\n" * 1000)
    with pytest.raises(ValueError, match="more than the 100-byte limit"):
        records.load(log, limit=100)


def test_a_short_write_of_the_record_leaves_no_torn_line(tmp_path):
    """Fault: a short write of the decision record: the file-size limit (RLIMIT_FSIZE) reached half-way through the
    line, as on a full disk (the record was torn and the run exited 0)

    Must: the rest is retried, then the log is cut back to its old length (no torn line) and the run exits 4 saying
    the record could not be appended and that the action ran
    """
    log = tmp_path / "log.jsonl"
    records.append(log, {"action": "earlier"})
    before = log.read_bytes()

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (len(before) + 40, len(before) + 40))

    res = run_checks(
        ["-p", "toy_plugin", "run", "toy", "--marker", tmp_path / "m", "--decision-log", log],
        cwd=tmp_path,
        env=NO_AUTOLOAD,
        preexec_fn=limit,
    )
    assert res.returncode == ExitCode.ACTION_FAILED, res.stdout + res.stderr
    assert "could not be appended" in res.stdout + res.stderr and "the action ran" in res.stdout + res.stderr
    assert (tmp_path / "m").exists()
    assert log.read_bytes() == before


def test_a_torn_line_and_non_object_lines_are_skipped(tmp_path):
    """Fault: a decision log whose last line was torn by an interrupted write, and lines that are JSON but not objects
    ([1], 42, "x"; TA407 crashed on them, exit 3)

    Must: the next run closes the torn line with a warning on stderr and appends a whole record; readers skip the
    fragment and the non-object lines (named by line) and TA407 still judges (passed for a cache process wrote)
    """
    _, upload = processed_for_upload(tmp_path)
    log = tmp_path / ".checks" / "decisions.jsonl"
    with open(log, "a") as fh:
        fh.write('[1]\n42\n"x"\n{"action": "process", "outc')
    res = run_cli(upload, cwd=tmp_path)
    assert res.exit_code != ExitCode.INTERNAL_ERROR, res.stdout + res.stderr
    assert verdicts_by_code(res)["TA407"]["outcome"] == "passed"
    assert "last line had no end" in res.stderr
    read = records.load(log)
    assert read.records[-1]["action"] == "upload" and len(read.skipped) == 4, read.skipped
    assert "not JSON" in read.skipped[-1] and "JSON but not an object (list)" in read.skipped[0]


@pytest.mark.parametrize("mode", ["plan", "publish"])
def test_staging_decodes_every_raw_file_again(tmp_path, s3_env, s3_proxy, mode):
    """Fault: a code-running pickle in the cache's raw/ behind a decision record that verifies (a leaked key, or a
    record signed on a machine that judged other bytes): TA407 passes

    Must: staging reads every results.pkl it zips again with the safe reader (a reused staged zip too) and stops at
    the first it refuses, naming it (exit 4) before any request: nothing is published and the payload never runs;
    measured: a 40 MiB result decodes in 0.07 s
    """

    path = make_method_cache(tmp_path / "cache")
    marker = tmp_path / "ran"
    pkl = next((path / "raw").rglob("results.pkl"))
    pkl.write_bytes(
        gzip.compress(pickle.dumps({"framework": "Dummy_c1_BAG_L1", "x": Call(os.system, f"touch '{marker}'")}))
    )
    record_process(path)  # a record that verifies: the evidence alone would let it through
    args = upload_args(tmp_path / "cache", *(["--no-dry-run"] if mode == "publish" else []))
    res = run_cli(args, cwd=tmp_path)
    assert res.exit_code == ExitCode.ACTION_FAILED, res.stdout + res.stderr
    assert "refused at staging" in res.stdout + res.stderr and "results.pkl" in res.stdout + res.stderr
    assert s3_proxy.puts() == [] and not marker.exists()


def test_a_key_others_can_read_is_refused(tmp_path, monkeypatch):

    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "cache-dir"))
    records.append(tmp_path / "log.jsonl", {"action": "x"})
    signing.key_path().chmod(0o644)
    with pytest.raises(ConfigError, match="readable by other users"):
        records.append(tmp_path / "log.jsonl", {"action": "y"})


def test_a_run_with_an_unreadable_key_stops_before_the_action(tmp_path, monkeypatch):

    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "cache-dir"))
    records.append(tmp_path / "log.jsonl", {"action": "x"})
    signing.key_path().chmod(0o640)
    res = run_cli(["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m")], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "readable by other users" in res.stderr, res.stderr
    assert not (tmp_path / "m").exists()
