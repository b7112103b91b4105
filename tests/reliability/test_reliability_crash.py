"""Crash safety: SIGKILL at random moments during process, upload and draft; disk full during process.

Each test first builds an old complete state, then starts the real ``checks`` command in a
child process that changes it and kills the whole process group after a random delay.
After every kill the state must be the old complete one or the new complete one, and a
plain rerun must converge on the new one.
"""

from __future__ import annotations

import gzip
import os
import random
import re
import resource
import signal
import time

from tests.support import hostile_pickles
import pytest
from tests.support.reliability_fixtures import (
    draft_args,
    hf_setup,
    kill_after,
    run_checks,
    snapshot,
    start_checks,
    write_info,
    write_ledger,
)
from tests.support.s3_fixtures import BUCKET, make_method_cache
from tests.support.tabarena_fixtures import make_run

from checks.io import sweep_siblings
from tabarena_checks.testing.commands import process_args, upload_args

KILLS = 6


def _delays(total: float, seed: int) -> list[float]:
    """``KILLS`` kill points, one at a random moment in each equal slice of a run of ``total`` seconds.

    Seeded, so a failure can be replayed; stratified, so early and late moments are both hit.
    """
    rng = random.Random(seed)
    step = total * 1.05 / KILLS
    return [0.05 + step * (n + rng.random()) for n in range(KILLS)]


# --------------------------------------------------------------------------- process


def _process_args(data, ref, cache_root, *extra):
    return process_args(data, ref, cache_root, *extra)


@pytest.mark.slow
def test_process_killed_at_random_points_never_leaves_a_mixed_cache(tmp_path):
    """Fault: SIGKILL of `checks run process --force` at random moments while it replaces an existing cache

    Must: the method's cache directory holds exactly the old complete cache or the new complete one after every kill;
    a rerun converges on the new one and a further rerun keeps it unchanged
    """
    old_data, new_data = (
        make_run(
            tmp_path / name,
            tasks=(363612, 363614, 363619),
            repeats=2,
            folds=3,
            validation_protocol="8x1",
            array_scale=0.3,
            seed=seed,
        )
        for name, seed in (("old", 1), ("new", 2))
    )
    ref = write_info(tmp_path / "info")
    root = tmp_path / "cache"
    method_dir = root / "artifacts" / "nori-2026" / "methods" / "Nori"
    first = run_checks(_process_args(old_data, ref, root), cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    old = snapshot(method_dir, skip_hidden=True)
    started = time.monotonic()
    reference = run_checks(_process_args(new_data, ref, tmp_path / "reference"), cwd=tmp_path)
    duration = time.monotonic() - started
    assert reference.returncode == 0, reference.stdout + reference.stderr
    new = snapshot(tmp_path / "reference" / method_dir.relative_to(root), skip_hidden=True)
    assert old != new and old.keys() == new.keys()
    seen = []
    for delay in _delays(duration, seed=7):
        proc = start_checks(_process_args(new_data, ref, root, "--force"), cwd=tmp_path)
        kill_after(proc, delay)
        state = snapshot(method_dir, skip_hidden=True)
        assert state in (old, new), f"mixed cache after a kill at {delay:.2f}s"
        seen.append("new" if state == new else "old")
        if state == new:
            break  # a kill after the swap only proves the same again
    final = run_checks(_process_args(new_data, ref, root, "--force"), cwd=tmp_path)
    assert final.returncode == 0, final.stdout + final.stderr
    assert snapshot(method_dir, skip_hidden=True) == new
    again = run_checks(_process_args(new_data, ref, root), cwd=tmp_path)
    assert again.returncode == 0 and "kept unchanged" in again.stdout, again.stdout
    assert "old" in seen, f"no kill landed before the swap ({seen}); the test proved nothing"


def _limit_file_size(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.mark.slow
@pytest.mark.parametrize("where", ["first-write", "largest-file"])
def test_disk_full_during_process_leaves_the_old_cache(tmp_path, where):
    """Fault: the disk fills up while `checks run process --force` writes the new cache (RLIMIT_FSIZE in the child)

    Must: the action fails with a non-zero exit, the previous cache is untouched, no temporary directory is left
    behind, and a rerun with space converges
    """
    old_data = make_run(tmp_path / "old", tasks=(363612, 363614), folds=2, validation_protocol="8x1", seed=1)
    new_data = make_run(tmp_path / "new", tasks=(363612, 363614), folds=2, validation_protocol="8x1", seed=2)
    ref = write_info(tmp_path / "info")
    root = tmp_path / "cache"
    methods = root / "artifacts" / "nori-2026" / "methods"
    assert run_checks(_process_args(old_data, ref, root), cwd=tmp_path).returncode == 0
    old = snapshot(methods)
    # the limit must fall inside the new cache's writes: learn its largest file from a scratch build
    assert run_checks(_process_args(new_data, ref, tmp_path / "scratch"), cwd=tmp_path).returncode == 0
    largest = max(p.stat().st_size for p in (tmp_path / "scratch").rglob("*") if p.is_file())
    limit = 1_000 if where == "first-write" else largest - 1
    log = ["--decision-log", str(tmp_path / "limited.jsonl")]  # a fresh log, so only the cache hits the limit
    full = run_checks(
        _process_args(new_data, ref, root, "--force", *log), cwd=tmp_path, preexec_fn=_limit_file_size(limit)
    )
    assert full.returncode != 0 and full.returncode > 0, full.stdout + full.stderr
    assert "File too large" in full.stdout + full.stderr or "No space" in full.stdout + full.stderr
    assert snapshot(methods) == old, "the old cache must be untouched and nothing half-written next to it"
    rerun = run_checks(_process_args(new_data, ref, root, "--force"), cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert snapshot(methods) != old


# --------------------------------------------------------------------------- upload


def _upload_args(root):
    return upload_args(root, "--no-dry-run")


def _remote_state(client) -> dict[str, str]:
    """The method's objects and their ETags (the upload lock a killed run leaves beside them is not one)."""
    out = {}
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        out.update(
            {item["Key"]: item["ETag"] for item in page.get("Contents", []) if not item["Key"].endswith(".checks-lock")}
        )
    return out


@pytest.mark.slow
def test_upload_killed_at_random_points_never_publishes_a_mix(tmp_path, s3_env, s3_proxy):
    """Fault: SIGKILL of `checks run upload --no-dry-run` at random moments while it replaces a published method

    Must: whenever metadata.yaml is listed, every planned object is the old complete version or every one is the new
    one (never a mix); a rerun converges on the new version with no open multipart upload
    """
    root = tmp_path / "cache"
    make_method_cache(root, raw_bytes=random.Random(1).randbytes(18 << 20))
    assert run_checks(_upload_args(root), cwd=tmp_path).returncode == 0
    old = _remote_state(s3_env)
    make_method_cache(root, raw_bytes=random.Random(2).randbytes(18 << 20))

    def slow(method, path):  # a slow link: the replacement takes long enough to be interrupted
        time.sleep(0.4 if method == "PUT" else 0.02)

    s3_proxy.fault = slow
    started = time.monotonic()
    duration_probe = start_checks(upload_args(root), cwd=tmp_path)  # a dry run: how long the command takes to start
    duration_probe.communicate(timeout=60)
    startup = time.monotonic() - started
    states = []
    for delay in _delays(startup + 3.0, seed=11):
        kill_after(start_checks(_upload_args(root), cwd=tmp_path), delay)
        states.append(_remote_state(s3_env))
    s3_proxy.fault = None
    final = run_checks(_upload_args(root), cwd=tmp_path)
    assert final.returncode == 0, final.stdout + final.stderr
    new = _remote_state(s3_env)
    assert new != old and set(new) == set(old)
    meta = next(k for k in new if k.endswith("/metadata.yaml"))
    for n, state in enumerate(states):
        if meta in state:
            assert state in (old, new), f"kill {n}: metadata.yaml is published over a mix of objects"
    assert s3_env.list_multipart_uploads(Bucket=BUCKET).get("Uploads", []) == []
    assert any(meta not in s for s in states), "no kill landed while the method was being replaced"


# --------------------------------------------------------------------------- draft


_STAMP = re.compile(r"checked at \S+")
_STAMP_HTML = re.compile(r"(checked at</th><td>)[^<]+")


def _bundle_state(bundle) -> dict[str, str]:
    """The bundle's files, with the check time of review.md and review.html blanked (it differs between runs)."""
    state = snapshot(bundle)
    if (bundle / "review.md").is_file():
        state["review.md"] = _STAMP.sub("checked at -", (bundle / "review.md").read_text())
    if (bundle / "review.html").is_file():
        state["review.html"] = _STAMP_HTML.sub(r"\1-", (bundle / "review.html").read_text())
    return state


@pytest.mark.slow
def test_draft_killed_at_random_points_leaves_old_or_new_bundle(tmp_path):
    """Fault: SIGKILL of `checks run draft` at random moments while it rewrites an existing review bundle

    Must: the bundle directory is the old complete bundle or the new complete one after every kill; a rerun converges
    on the new one
    """
    with hf_setup(tmp_path, models=24) as (env, _hub):
        write_ledger(tmp_path / "ledger.csv", models=24, base=50.0)
        first = run_checks(draft_args(tmp_path), cwd=tmp_path, env=env)
        assert first.returncode == 0, first.stdout + first.stderr
        old = _bundle_state(tmp_path / "bundle")
        write_ledger(tmp_path / "ledger.csv", models=24, base=60.0)
        started = time.monotonic()
        reference = run_checks(draft_args(tmp_path, "reference"), cwd=tmp_path, env=env)
        duration = time.monotonic() - started
        assert reference.returncode == 0, reference.stdout + reference.stderr
        new = _bundle_state(tmp_path / "reference")
        assert old != new
        seen = []
        for delay in _delays(duration, seed=5):
            kill_after(start_checks(draft_args(tmp_path), cwd=tmp_path, env=env), delay)
            state = _bundle_state(tmp_path / "bundle")
            assert state in (old, new), f"bundle is neither old nor new after a kill at {delay:.2f}s"
            seen.append("new" if state == new else "old")
        final = run_checks(draft_args(tmp_path), cwd=tmp_path, env=env)
        assert final.returncode == 0, final.stdout + final.stderr
        assert _bundle_state(tmp_path / "bundle") == new
        assert "old" in seen, seen


def test_disk_full_during_process_is_a_clear_error(tmp_path):
    """Fault: the disk fills up while `checks run process` writes the cache

    Must: one clear error naming what could not be written and that the previous cache is kept (exit 4), no traceback
    """
    data = make_run(tmp_path / "run", tasks=(363612, 363614), folds=2, validation_protocol="8x1")
    ref = write_info(tmp_path / "info")
    assert run_checks(_process_args(data, ref, tmp_path / "scratch"), cwd=tmp_path).returncode == 0
    limit = max(p.stat().st_size for p in (tmp_path / "scratch" / "artifacts").rglob("*") if p.is_file()) - 1
    log = ["--decision-log", str(tmp_path / "limited.jsonl")]  # a fresh log, so only the cache hits the limit
    full = run_checks(
        _process_args(data, ref, tmp_path / "cache", *log), cwd=tmp_path, preexec_fn=_limit_file_size(limit)
    )
    assert "Traceback" not in full.stdout + full.stderr
    assert full.returncode == 4, full.stdout + full.stderr


def test_process_rerun_sweeps_what_a_killed_run_left(tmp_path):
    """Fault: the half-built temporary directory a SIGKILLed `checks run process` leaves next to the cache

    Must: the next run removes it, so interrupted runs do not pile up half-written copies of the cache
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    ref = write_info(tmp_path / "info")
    methods = tmp_path / "cache" / "artifacts" / "nori-2026" / "methods"
    stale = methods / ".Nori.checks-tmp-999999" / "raw"  # what a kill during the raw copy leaves (pid long gone)
    stale.mkdir(parents=True)
    (stale / "results.pkl").write_bytes(b"half")
    res = run_checks(_process_args(data, ref, tmp_path / "cache"), cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert sorted(p.name for p in methods.iterdir()) == ["Nori"]


def test_draft_rerun_sweeps_what_a_killed_run_left(tmp_path):
    """Fault: the half-written '.bundle.checks-tmp-<pid>' directory a SIGKILLed `checks run draft` leaves next to the
    bundle

    Must: the next draft removes it
    """
    with hf_setup(tmp_path, models=2) as (env, _hub):
        write_ledger(tmp_path / "ledger.csv", models=2, base=50.0)
        stale = tmp_path / ".bundle.checks-tmp-999999" / "drafts"  # its process is long gone
        stale.mkdir(parents=True)
        (stale / "half.yaml").write_text("- dataset:\n")
        res = run_checks(draft_args(tmp_path), cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".bundle.")]


def test_draft_rerun_restores_a_bundle_moved_aside(tmp_path):
    """Fault: a draft killed between moving the old bundle aside and moving the new one in

    Must: the next draft puts the old bundle back before building, then replaces it whole
    """
    with hf_setup(tmp_path, models=2) as (env, _hub):
        write_ledger(tmp_path / "ledger.csv", models=2, base=50.0)
        assert run_checks(draft_args(tmp_path), cwd=tmp_path, env=env).returncode == 0
        (tmp_path / "bundle").rename(tmp_path / ".bundle.checks-old-999999")

        notes = sweep_siblings(tmp_path / "bundle")
        assert notes and (tmp_path / "bundle" / "review.md").exists()
        (tmp_path / "bundle").rename(tmp_path / ".bundle.checks-old-999998")
        res = run_checks(draft_args(tmp_path), cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "bundle" / "review.md").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".bundle.")]


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(entry))
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process table from /proc")
def test_decode_workers_die_with_their_parent(tmp_path):
    """Fault: SIGKILL of the `checks inspect` parent alone (not its process group) while its decode workers are busy (a
    run of 54 results, 60 of them slow to refuse)

    Must: every decode worker dies with it (the kernel's parent-death signal; a thread watching the parent elsewhere)
    instead of waiting on its task pipe forever; measured: all gone within about 0.1 s
    """

    data = make_run(tmp_path / "run", tasks=(363612, 363614, 363619), folds=3, configs=6, validation_protocol="8x1")
    slow = gzip.compress(hostile_pickles.opcode_flood(5_000_000), compresslevel=1)
    for n in range(60):
        target = data / "TA-Nori_c1_default_BAG_L1" / "363612" / f"9_{n}" / "results.pkl"
        target.parent.mkdir(parents=True)
        target.write_bytes(slow)
    proc = start_checks(["inspect", data, "--format", "json", "--cache-dir", tmp_path / "idx"], cwd=tmp_path)
    deadline = time.monotonic() + 60
    workers: set[int] = set()
    while time.monotonic() < deadline and len(workers) < 2:
        workers = {p for p in _children(proc.pid) if _alive(p)}
        time.sleep(0.05)
    assert len(workers) >= 2, "the decode workers never started"
    os.kill(proc.pid, signal.SIGKILL)  # the parent alone: its workers are not signalled
    proc.wait()  # not communicate(): an orphaned worker would hold the output pipes open
    proc.stdout.close()
    proc.stderr.close()
    try:
        killed, deadline = time.monotonic(), time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.01)
        print(f"workers gone {time.monotonic() - killed:.2f} s after the parent was killed")
        assert not [p for p in workers if _alive(p)], "orphaned decode workers are still running"
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
