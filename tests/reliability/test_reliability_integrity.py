"""Content integrity from the judged raw file to the published raw.zip.

A file swapped after it was judged (same size, mtime restored, so the index cache's key
still matches), or dropped into the cache after process, must never be copied or published
unjudged: process decodes again what changed, the raw copy and upload check every file against
the digests recorded when it was decoded and written.
"""

from __future__ import annotations

import gzip
import io
import os
import pickle
import zipfile

import pytest
from tests.support.reliability_fixtures import (
    CONFIG,
    process_json,
    processed_for_upload,
    swap_same_size,
    verdicts_by_code,
    write_info,
)
from tests.support.s3_fixtures import BUCKET, make_method_cache, record_process
from tests.support.tabarena_fixtures import Call, make_run

from checks import ActionFailed
from checks.testing import run_cli
from tabarena_checks.engine import raw_copy
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.raw import index, inference
from tabarena_checks.testing.commands import upload_args


def test_file_swapped_after_inspect_is_judged_again(tmp_path):
    """Fault: `checks inspect` (index cached), then one results.pkl replaced by a code-running pickle of the same size
    with its mtime restored (os.utime; rsync -a does it by accident)

    Must: `checks run process` checks every cached row against its file's sha256, decodes the changed file again and
    is blocked by TA301 naming it (exit 1); nothing ran, no cache is written
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=3, validation_protocol="8x1")
    inspected = run_cli(["inspect", str(data), "--format", "json"], cwd=tmp_path)
    assert inspected.exit_code == 0, inspected.stderr
    victim = data / CONFIG / "363612" / "0_1" / "results.pkl"
    marker = tmp_path / "ran"
    swap_same_size(victim, marker)
    res = process_json(data, tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    ta301 = verdicts_by_code(res)["TA301"]
    assert ta301["outcome"] == "failed" and victim.relative_to(data).as_posix() in ta301["message"]
    assert not marker.exists() and not (tmp_path / "cache" / "artifacts").exists()


def test_raw_copy_refuses_a_file_changed_after_it_was_judged(tmp_path):
    """The window between judging and copying: the copy checks each file's bytes against the index's digest."""
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    built = index.build_index(data, workers=1, progress=False, use_cache=False)
    meta = metadata_load.load(write_info(tmp_path / "info"))
    swap_same_size(data / CONFIG / "363612" / "0_0" / "results.pkl", tmp_path / "ran")
    raw = tmp_path / "out" / "raw"
    with pytest.raises(ActionFailed, match="363612/0_0/results.pkl changed after the rules judged it"):
        with raw_copy.copying_raw(built, inference.infer(built), meta, raw):
            pass


def _tamper(method, kind, tmp_path):
    raw = sorted((method / "raw").rglob("results.pkl"))
    if kind == "pickle-dropped-into-raw":
        extra = raw[0].parent.parent / "9_9" / "results.pkl"
        extra.parent.mkdir()
        extra.write_bytes(gzip.compress(pickle.dumps({"x": Call(os.system, "true")})))
        return extra.relative_to(method).as_posix(), "not written by process"
    if kind == "raw-file-swapped":
        swap_same_size(raw[0], tmp_path / "ran")
        return raw[0].relative_to(method).as_posix(), "changed since process wrote it"
    if kind == "manifest-rewritten-too":
        swap_same_size(raw[0], tmp_path / "ran")
        record_process(method, log=tmp_path / "elsewhere.jsonl")  # a consistent manifest no process run recorded
        return "", "no passed `checks run process`"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["pickle-dropped-into-raw", "raw-file-swapped", "manifest-rewritten-too"])
def test_upload_refuses_a_cache_changed_after_process(tmp_path, kind):
    """Fault: after `checks run process`: a pickle dropped into the cache's raw/, a raw file swapped for one of the same
    size and mtime, or both the file and the cache's manifest rewritten

    Must: `checks run upload` is blocked by TA407 (required, cannot be waived) naming the file, or saying no passed
    process run in the decision log recorded that manifest (exit 1); the untouched cache passes TA407
    """
    method, upload = processed_for_upload(tmp_path)
    clean = run_cli(upload, cwd=tmp_path)
    assert verdicts_by_code(clean)["TA407"]["outcome"] == "passed", clean.stdout
    where, words = _tamper(method, kind, tmp_path)
    res = run_cli(upload, cwd=tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    ta407 = verdicts_by_code(res)["TA407"]
    assert ta407["outcome"] == "failed" and words in ta407["message"] and where in ta407["message"], ta407


def test_ta407_cannot_be_waived(tmp_path):
    method, upload = processed_for_upload(tmp_path)
    _tamper(method, "raw-file-swapped", tmp_path)
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA407"\ntarget = "*"\nreason = "r"\nowner = "o@example.org"\nexpires = 2099-01-01\n'
    )
    res = run_cli(upload, cwd=tmp_path)
    assert res.exit_code == 2 and "TA407" in res.stderr and "cannot be waived" in res.stderr, res.stderr


def test_a_tampered_staged_zip_is_never_published(tmp_path, s3_env):
    """Fault: the staged raw.zip a real upload keeps in the cache's .checks-staging/ replaced by a zip holding a
    code-running pickle, its inputs record left as it was

    Must: the rerun reads the staged zip back, finds an entry that is not what process wrote, builds the zip again
    from the checked files, and publishes that: the published raw.zip holds the processed bytes
    """
    path = make_method_cache(tmp_path / "cache")
    base = upload_args(tmp_path / "cache", "--no-dry-run")
    assert run_cli(base, cwd=tmp_path).exit_code == 0
    staged = path / ".checks-staging" / "raw.zip"
    names = zipfile.ZipFile(staged).namelist()
    evil = gzip.compress(pickle.dumps({"x": Call(os.system, "true")}))
    with zipfile.ZipFile(staged, "w") as zf:
        for name in names:
            zf.writestr(name, evil)
    s3_env.delete_object(Bucket=BUCKET, Key=f"cache/{path.relative_to(tmp_path / 'cache').as_posix()}/raw.zip")
    assert run_cli(base, cwd=tmp_path).exit_code == 0
    body = s3_env.get_object(Bucket=BUCKET, Key=f"cache/{path.relative_to(tmp_path / 'cache').as_posix()}/raw.zip")
    published = zipfile.ZipFile(io.BytesIO(body["Body"].read()))
    for name in names:
        assert published.read(name) == (path / "raw" / name).read_bytes()
