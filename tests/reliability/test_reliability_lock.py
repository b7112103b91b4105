"""Two uploads of one method never interleave: a lock object per method prefix, taken with a conditional put.

Both against the moto server, through the real CLI: concurrent runs from different caches, a
lock another live run holds, and locks a dead or expired run left behind.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
import socket
import time
import zipfile

from tests.support.reliability_fixtures import run_checks, start_checks
from tests.support.s3_fixtures import BUCKET, PREFIX, make_method_cache

from checks.testing import run_cli
from tabarena_checks.testing.commands import upload_args

METHOD, SUITE = "Dummy", "dummy-2026-11-01"
KEY_ROOT = f"{PREFIX}/artifacts/{SUITE}/methods/{METHOD}"
LOCK = f"{KEY_ROOT}.checks-lock"


def _args(root):
    return upload_args(root, "--no-dry-run", method=METHOD, suite=SUITE)


def _published_raw(client) -> bytes:
    body = client.get_object(Bucket=BUCKET, Key=f"{KEY_ROOT}/raw.zip")["Body"].read()
    with zipfile.ZipFile(io.BytesIO(body)) as zf:
        return zf.read(f"{METHOD}_c1_BAG_L1/363612/0_0/results.pkl")


def test_concurrent_uploads_never_publish_a_mix(tmp_path, s3_env, s3_proxy):
    """Fault: two `checks run upload --no-dry-run` of the same method from different caches at the same time (a slow
    link, 20 MiB raw.zip in multipart), three rounds

    Must: one takes the upload lock (an S3 conditional put, If-None-Match: *) and publishes its whole cache; the
    other stops before sending anything with exit 4 naming the lock's holder (host, pid, start, lease); metadata.yaml is
    never published over a mix, no multipart upload is aborted under a live run, and the lock is gone afterwards
    """
    caches = {}
    for name in ("a", "b"):
        path = make_method_cache(tmp_path / name / "cache", raw_bytes=os.urandom(20 << 20))
        caches[name] = next((path / "raw").rglob("results.pkl")).read_bytes()  # what its raw.zip must hold

    procs = {}

    def other_run_ended():
        deadline = time.monotonic() + 120
        while all(proc.poll() is None for proc in procs.values()) and time.monotonic() < deadline:
            time.sleep(0.05)

    def overlapping(method, path):
        # the lock's holder neither sends data nor releases the lock until the other run has ended: the two
        # always overlap, however late a loaded machine starts the second (a timer alone let it start after
        # the first had finished), and also in a round whose winner finds its cache already in place
        holding = (method == "PUT" and LOCK not in path) or (method == "DELETE" and LOCK in path)
        return other_run_ended if holding else None

    s3_proxy.fault = overlapping
    for round_ in range(3):
        order = ("a", "b") if round_ % 2 == 0 else ("b", "a")
        procs.clear()
        procs.update({name: start_checks(_args(tmp_path / name / "cache"), cwd=tmp_path / name) for name in order})
        outputs = {name: proc.communicate(timeout=300) for name, proc in procs.items()}  # drains both pipes
        results = {name: (procs[name].returncode, out) for name, out in outputs.items()}
        codes = {name: code for name, (code, _) in results.items()}
        assert sorted(codes.values()) == [0, 4], (round_, results)
        winner = next(name for name, code in codes.items() if code == 0)
        loser = next(name for name in codes if name != winner)
        stdout = results[loser][1][0]
        assert "another upload of this method holds the lock" in stdout and socket.gethostname() in stdout, stdout
        assert "0 missing, 0 size/ETag mismatch" in results[winner][1][0]
        assert _published_raw(s3_env) == caches[winner], f"round {round_}: raw.zip is not the winner's"
        assert s3_env.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
        assert "Contents" not in s3_env.list_objects_v2(Bucket=BUCKET, Prefix=LOCK), "the lock was released"


def _plant_lock(client, **fields):
    now = dt.datetime.now(dt.timezone.utc)
    body = {
        "host": "build-host-7",
        "pid": 4242,
        "run": "r",
        "started": now.isoformat(),
        "expires": (now + dt.timedelta(minutes=10)).isoformat(),
        **fields,
    }
    client.put_object(Bucket=BUCKET, Key=LOCK, Body=json.dumps(body).encode())


def _dead_pid() -> int:
    proc = start_checks(["--version"], cwd=".")
    proc.communicate()
    return proc.pid


def test_left_locks_block_only_while_their_run_lives(tmp_path, s3_env, s3_proxy):
    """Fault: a lock left in the bucket: by a live upload on another host, by a killed upload on this host, by a run on
    another host whose lease expired

    Must: the live one blocks the upload (exit 4, nothing sent, the holder named); the dead and the expired ones are
    taken over (If-Match on the lock's ETag) and the upload completes, saying so
    """
    make_method_cache(tmp_path / "cache")
    args = _args(tmp_path / "cache")
    _plant_lock(s3_env)
    s3_proxy.forwarded.clear()
    held = run_cli(args, cwd=tmp_path)
    assert held.exit_code == 4 and "build-host-7" in held.stdout and "pid 4242" in held.stdout, held.stdout
    assert s3_proxy.puts() == [], "nothing of the method was sent"
    _plant_lock(s3_env, host=socket.gethostname(), pid=_dead_pid())
    dead = run_checks(args, cwd=tmp_path)
    assert dead.returncode == 0 and "is no longer running" in dead.stderr, dead.stdout + dead.stderr
    _plant_lock(s3_env, expires=(dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=1)).isoformat())
    expired = run_checks(args, cwd=tmp_path)
    assert expired.returncode == 0 and "lease expired" in expired.stderr, expired.stdout + expired.stderr
    assert "Contents" not in s3_env.list_objects_v2(Bucket=BUCKET, Prefix=LOCK)
