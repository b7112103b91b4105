"""Temporary files: every command removes its own, also when SIGTERM stops it part-way.

An upload stages its zips and a Hub read downloads into a temporary directory. A run that
ends, fails or is stopped with SIGTERM (``kill``, a CI job's timeout) must leave the
temporary directory as it found it: every command of the ``checks`` script takes SIGTERM as
Ctrl-C and unwinds. Only
SIGKILL leaves what was under way; the suite points TMPDIR at pytest's own temporary
directory (tests/conftest.py), so the crash tests' kills do not pile up in /tmp.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from tests.support.cache_dirs import sweep_killed_sessions
from tests.support.hf_fixtures import BENCHMARK_ID
from tests.support.reliability_fixtures import draft_args, hf_setup, run_checks, snapshot, start_checks, write_ledger
from tests.support.s3_fixtures import make_method_cache

from hfmigrate_checks.testing import Fault
from tabarena_checks.testing.commands import upload_args
from hfmigrate_checks.testing.migration import contract_step


def _terminate_once(proc, temp, prefix: str, *, within: float = 60.0) -> tuple[str, str]:
    """SIGTERM ``proc`` (the process alone, as ``kill`` and ``timeout`` do) once it holds a temporary directory.

    Waited for by its ``prefix``: the first entry to appear is the nameless probe file with which
    ``tempfile`` tries the directory, gone a moment later (a signal right then could strand it).
    """
    deadline = time.monotonic() + within
    while not any(entry.name.startswith(prefix) for entry in temp.iterdir()):
        assert proc.poll() is None, "the command ended before it made a temporary directory: " + proc.stderr.read()
        assert time.monotonic() < deadline, "no temporary directory appeared"
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGTERM)
    return proc.communicate(timeout=within)


@pytest.fixture()
def temp(tmp_path):
    """The TMPDIR of the child commands, empty."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_draft_removes_its_downloads_when_it_ends_or_is_terminated(tmp_path, temp):
    """Fault: `checks run draft` reading the Hub, run to the end, and stopped with SIGTERM while a download is under way
    (24 models on 2 workers, a slow Hub: 0.2 s a model request, 1.5 s a file)

    Must: both leave TMPDIR as they found it (no arena-checks-hub-* directory); the stopped run ends as 'checks:
    aborted' (exit 2) after the reads under way, the queued ones dropped, and the bundle is untouched
    """
    args = [*draft_args(tmp_path), "--max-workers", "2"]
    with hf_setup(tmp_path, models=24) as (env, hub):
        env = {**env, "TMPDIR": str(temp)}
        write_ledger(tmp_path / "ledger.csv", models=24, base=50.0)
        first = run_checks(args, cwd=tmp_path, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        assert list(temp.iterdir()) == []
        assert len(_models_asked(hub)) == 24
        before = snapshot(tmp_path / "bundle")
        write_ledger(tmp_path / "ledger.csv", models=24, base=60.0)
        hub.clear_requests()
        hub.add_fault(Fault("/resolve/", status=0, delay=1.5, times=None))  # the benchmark's file, a download
        hub.add_fault(Fault("^/api/models/", status=0, delay=0.2, times=None))  # a slow Hub: models take a while
        proc = start_checks(args, cwd=tmp_path, env=env)
        out, err = _terminate_once(proc, temp, "arena-checks-hub-")
        assert proc.returncode == 2 and "checks: aborted" in err, (proc.returncode, out, err)
        assert len(_models_asked(hub)) <= 6, "the reads not started yet were not dropped"
    assert list(temp.iterdir()) == []
    assert snapshot(tmp_path / "bundle") == before


def test_a_read_only_hub_command_stopped_with_sigterm_removes_its_download(tmp_path, temp):
    """Fault: `checks hf contract` (a read-only command, not an action) stopped with SIGTERM while it downloads the
    benchmark's eval.yaml from a slow Hub (1.5 s a file)

    Must: it ends as 'checks: aborted' (exit 2), leaves TMPDIR as it found it (no arena-checks-hub-* directory) and
    writes no --out file; the same command run to the end writes it
    """

    args = contract_step(BENCHMARK_ID, "contract.yaml", "again.json")
    with hf_setup(tmp_path, models=1) as (env, hub):
        env = {**env, "TMPDIR": str(temp)}
        hub.add_fault(Fault("/resolve/", status=0, delay=1.5, times=None))
        proc = start_checks(args, cwd=tmp_path, env=env)
        out, err = _terminate_once(proc, temp, "arena-checks-hub-")
        assert proc.returncode == 2 and "checks: aborted" in err, (proc.returncode, out, err)
        assert "Traceback" not in err
        assert list(temp.iterdir()) == [] and not (tmp_path / "again.json").exists()
        done = run_checks(args, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "again.json").is_file() and list(temp.iterdir()) == []


def _models_asked(hub) -> set[str]:
    """The models the Hub was asked about (``/api/models/<owner>/<name>...``)."""
    return {"/".join(r.path.split("/")[3:5]) for r in hub.requests if r.path.startswith("/api/models/")}


def _upload(root, *extra):
    return upload_args(root, *extra)


def test_upload_removes_its_staging_when_it_ends_or_is_terminated(tmp_path, temp, s3_env, s3_proxy):
    """Fault: `checks run upload` planned, run for real to the end, and stopped with SIGTERM while it sends over a slow
    link

    Must: each leaves TMPDIR as it found it (no checks-upload-* staging directory); the stopped run ends as 'checks:
    aborted' (exit 2)
    """
    root = tmp_path / "cache"
    make_method_cache(root, raw_bytes=os.urandom(4 << 20))
    env = {"TMPDIR": str(temp)}
    for extra in ((), ("--no-dry-run",)):
        done = run_checks(_upload(root, *extra), cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert list(temp.iterdir()) == [], extra
    make_method_cache(root, raw_bytes=os.urandom(4 << 20))

    def slow(method, path):
        time.sleep(0.5 if method == "PUT" else 0.0)

    s3_proxy.fault = slow
    proc = start_checks(_upload(root, "--no-dry-run"), cwd=tmp_path, env=env)
    out, err = _terminate_once(proc, temp, "checks-upload-")
    s3_proxy.fault = None
    assert proc.returncode == 2 and "checks: aborted" in err, (proc.returncode, out, err)
    assert list(temp.iterdir()) == []


def test_the_next_session_sweeps_a_killed_sessions_cache(tmp_path):
    """Fault: a test session killed before its end (a timeout, SIGKILL): its cache directory checks-cache-<pid>-* stays
    in the temporary directory

    Must: the next session removes it (no process has that pid), and leaves alone the cache directory of a session
    still running (in another checkout) and anything else
    """

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    killed = tmp_path / f"checks-cache-{ended.pid}-abc123"
    (killed / "index").mkdir(parents=True)
    running = tmp_path / f"checks-cache-{os.getpid()}-def456"
    running.mkdir()
    others = [tmp_path / "checks-cache-old_style", tmp_path / "checks-upload-x1"]
    for folder in others:
        folder.mkdir()
    assert sweep_killed_sessions(tmp_path) == [killed]
    assert not killed.exists() and running.is_dir() and all(folder.is_dir() for folder in others)
