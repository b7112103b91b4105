"""The publishing chain publishes only bytes the gate itself verified in this run.

Each test is an attack on a step between the raw files and the store: a code-running class where
nothing reads, a cache laundered through "kept unchanged", a staged zip with a duplicate entry, a
published file other than raw/ changed behind a record that verifies. Each must end in a refusal
naming the file, or in a rebuild from the verified inputs; never in a publish of the attacker's bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import time
import warnings
import zipfile

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.support.reliability_fixtures import process_json, write_info
from tests.support.s3_fixtures import BUCKET, make_method_cache, record_process
from tests.support.tabarena_fixtures import Call, make_run

from checks import ActionFailed, records
from checks.exitcodes import ExitCode
from checks.io import sha256
from checks.testing import run_cli
from tabarena_checks.cache import integrity, published
from tabarena_checks.engine import reread
from tabarena_checks.raw import reader
from tabarena_checks.testing.commands import process_args, upload_args

CONFIG = "TA-Nori_c1_default_BAG_L1"
#: the fields neither the rules nor processing read, where the reader used to read a class as None with a warning
UNREAD = ("info", "hyperparameters", "init_kwargs_extra", "fit_kwargs_extra")


def _verdicts(res) -> dict:
    return {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}


def _plant(victim, field: str, marker) -> None:
    """Put a REDUCE of os.system under ``method_metadata.<field>.x`` of the result in ``victim``."""
    result = pickle.loads(gzip.decompress(victim.read_bytes()))
    result["method_metadata"][field] = {"x": Call(os.system, f"touch '{marker}'")}
    victim.write_bytes(gzip.compress(pickle.dumps(result, protocol=5)))


def _upload(root, *more: str) -> list[str]:
    return upload_args(root, *more)


@pytest.mark.parametrize("field", UNREAD)
def test_a_class_outside_the_allow_list_where_nothing_reads_blocks_process(tmp_path, field):
    """Fault: a results.pkl whose method_metadata.info (or hyperparameters, init_kwargs_extra, fit_kwargs_extra: fields
    nothing reads) holds a REDUCE of os.system: TA308 only warned, process exited 0 and the published raw.zip ran the
    command in whoever loaded it with pickle

    Must: `checks inspect` still informs (exit 0, TA308 names the class and the field path); `checks run process` is
    blocked by TA308 (required, an error, no waiver applies) naming posix.system and method_metadata.<field>.x (exit 1),
    no cache is written and the payload never runs; measured: the blocked process of a 6-result run ends in 2.1-2.5 s
    with a peak RSS of 186 MiB
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=3, validation_protocol="8x1")
    victim = data / CONFIG / "363612" / "0_1" / "results.pkl"
    marker = tmp_path / "ran"
    _plant(victim, field, marker)
    inspected = run_cli(["inspect", str(data), "--format", "json"], cwd=tmp_path)
    assert inspected.exit_code == 0, inspected.stdout + inspected.stderr
    assert "posix.system" in inspected.stdout and f"method_metadata.{field}.x" in inspected.stdout
    start = time.monotonic()
    res = process_json(data, tmp_path)
    assert time.monotonic() - start < 30
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta308 = _verdicts(res)["TA308"]
    assert ta308["outcome"] == "failed", ta308
    assert f"method_metadata.{field}.x holds a posix.system" in ta308["message"], ta308
    assert victim.relative_to(data).as_posix() in json.dumps(ta308)
    assert not marker.exists() and not (tmp_path / "cache" / "artifacts").exists()


def test_a_clean_run_passes_ta308(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    res = process_json(data, tmp_path)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert _verdicts(res)["TA308"]["outcome"] == "passed"


def test_ta308_cannot_be_waived(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    _plant(next(data.rglob("results.pkl")), "info", tmp_path / "ran")
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA308"\ntarget = "*"\nreason = "r"\nowner = "o@example.org"\nexpires = 2099-01-01\n'
    )
    res = process_json(data, tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "TA308" in res.stderr and "cannot be waived" in res.stderr


def test_the_engines_second_read_refuses_what_the_gate_would(tmp_path):
    """Behind TA308: the engine reads each raw file again without the index's leniency."""
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    victim = next(data.rglob("results.pkl"))
    _plant(victim, "fit_kwargs_extra", tmp_path / "ran")
    notes: list[str] = []
    assert reader.load_result(victim, notes=notes)["method_metadata"]["fit_kwargs_extra"] == {"x": None}
    assert notes == ["method_metadata.fit_kwargs_extra.x holds a posix.system, a class the reader does not load"]
    digest = sha256(victim.read_bytes())
    with pytest.raises(ActionFailed, match=r"refused to load 'posix.system' in method_metadata.fit_kwargs_extra.x"):
        reread.decode_group([("r/results.pkl", str(victim), digest)], None)
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("mode", ["plan", "publish"])
def test_upload_refuses_a_class_where_nothing_reads(tmp_path, s3_env, s3_proxy, mode):
    """Fault: the same code-running class in method_metadata.info of a results.pkl in the cache's raw/, behind a
    decision record that verifies (a leaked key, or a cache processed before this rule): staging's re-decode used the
    same lenient reader and published it

    Must: `checks run upload` is blocked by TA308 naming the file, posix.system and method_metadata.info.x (exit 1),
    in a dry run too, before any request; behind it staging's reader refuses the file outright; the payload never runs;
    measured: the blocked dry run ends in 2.2-2.3 s with a peak RSS of 31 MiB
    """
    path = make_method_cache(tmp_path / "cache")
    marker = tmp_path / "ran"
    pkl = next((path / "raw").rglob("results.pkl"))
    planted = {"framework": "Dummy_c1_BAG_L1", "method_metadata": {"info": {"x": Call(os.system, f"touch {marker}")}}}
    pkl.write_bytes(gzip.compress(pickle.dumps(planted)))
    record_process(path)
    args = _upload(tmp_path / "cache", "--format", "json", *(["--no-dry-run"] if mode == "publish" else []))
    res = run_cli(args, cwd=tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta308 = _verdicts(res)["TA308"]
    assert ta308["outcome"] == "failed" and "method_metadata.info.x holds a posix.system" in ta308["message"], ta308
    assert pkl.relative_to(path).as_posix() in json.dumps(ta308)
    rel = pkl.relative_to(path).as_posix()
    assert "'posix.system' in method_metadata.info.x" in published.problem(rel, pkl.read_bytes())
    assert s3_proxy.puts() == [] and not marker.exists()


def test_upload_without_raw_does_not_judge_raw(tmp_path):
    path = make_method_cache(tmp_path / "cache")
    pkl = next((path / "raw").rglob("results.pkl"))
    pkl.write_bytes(pickle.dumps({"method_metadata": {"info": {"x": Call(os.system, "true")}}}))
    record_process(path)
    res = run_cli(_upload(tmp_path / "cache", "--format", "json", "--no-upload-raw"), cwd=tmp_path)
    assert res.exit_code == 0, res.stdout + res.stderr
    assert _verdicts(res)["TA308"]["outcome"] == "passed"


def _process_args(tmp_path, data) -> list[str]:
    ref = write_info(tmp_path / "info")
    return process_args(data, ref, tmp_path / "cache")


def _launder(method) -> dict[str, str]:
    """What whoever can write the cache does: zero every metric_error, add a pickle, rewrite the manifest to match."""
    table = pq.read_table(method / "results" / "model_results.parquet")
    zeros = pa.array([0.0] * table.num_rows, type=table.schema.field("metric_error").type)
    table = table.set_column(table.schema.get_field_index("metric_error"), "metric_error", zeros)
    pq.write_table(table, method / "results" / "model_results.parquet")
    (method / "processed" / "evil.pkl").write_bytes(pickle.dumps(Call(os.system, "true")))
    forged = integrity.manifest_of(method)
    source = method / integrity.SOURCE_RECORD
    source.write_text(json.dumps({**json.loads(source.read_text()), integrity.MANIFEST: forged}))
    return forged


def test_a_laundered_cache_is_rebuilt_not_signed(tmp_path):
    """Fault: a cache laundered through "kept unchanged": whoever can write it (or ships it in a checkout) zeroes
    metric_error in results/model_results.parquet, adds processed/evil.pkl and rewrites the manifest in
    .checks-source.json; the maintainer reruns `checks run process` with the same inputs, which kept the cache and
    signed the forged manifest

    Must: the rerun builds the cache again from the verified raw inputs, names each file that differs (the table,
    evil.pkl, the manifest) and replaces the cache whole with the build; only the digests of that build are signed, so
    upload publishes neither the forged table nor evil.pkl; an untouched cache is kept unchanged; measured on the shared
    2-core machine: a rerun now builds the cache again, so a kept rerun of a 2-result run takes 2.6-2.8 s (a --force
    rebuild 2.3 s, the laundered rerun 1.7 s), peak RSS 190 MiB either way
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    args = _process_args(tmp_path, data)
    assert run_cli(args, cwd=tmp_path).exit_code == 0
    method = tmp_path / "cache" / "artifacts" / "nori-2026" / "methods" / "Nori"
    clean = integrity.manifest_of(method)
    forged = _launder(method)
    start = time.monotonic()
    res = run_cli(args, cwd=tmp_path)
    took = time.monotonic() - start
    assert res.exit_code == 0, res.stdout + res.stderr
    for name in ("results/model_results.parquet", "processed/evil.pkl", integrity.SOURCE_RECORD):
        assert name in res.stdout, res.stdout
    assert "replaced it whole" in res.stdout
    assert integrity.manifest_of(method) == clean and not (method / "processed" / "evil.pkl").exists()
    signed = integrity.passed_process_decisions(records.signed(records.read(tmp_path / ".checks" / "decisions.jsonl")))
    assert integrity.manifest_digest(clean) in signed and integrity.manifest_digest(forged) not in signed
    assert took < 60


def test_an_untouched_cache_is_kept_and_its_build_signed(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    args = _process_args(tmp_path, data)
    assert run_cli(args, cwd=tmp_path).exit_code == 0
    method = tmp_path / "cache" / "artifacts" / "nori-2026" / "methods" / "Nori"
    before = {p: p.stat().st_mtime_ns for p in method.rglob("*")}
    res = run_cli(args, cwd=tmp_path)
    assert res.exit_code == 0 and "kept unchanged" in res.stdout, res.stdout + res.stderr
    assert {p: p.stat().st_mtime_ns for p in method.rglob("*")} == before
    last = records.read(tmp_path / ".checks" / "decisions.jsonl")[-1]
    assert last["inputs"][integrity.DECISION_KEY] == integrity.manifest_digest(integrity.manifest_of(method))


def test_a_staged_zip_with_a_duplicate_entry_is_built_again(tmp_path, s3_env):
    """Fault: the staged .checks-staging/raw.zip a real upload keeps rewritten with a code-running entry placed first
    under a name a real entry also uses, its inputs record left as it was: names compared as a set and read(name) (which
    returns the last entry) passed it, and the published zip held 2 entries for 1 name

    Must: the rerun reads the staged zip back through infolist(), finds the second entry under that name, says so on
    stderr and builds the zip again from the checked files: the published raw.zip holds each name once, with the bytes
    process wrote; measured: the rerun (zip built again, uploaded to moto) ends in 0.8 s in-process, 1.6 s as a command
    with a peak RSS of 110 MiB
    """
    path = make_method_cache(tmp_path / "cache")
    args = _upload(tmp_path / "cache", "--no-dry-run")
    assert run_cli(args, cwd=tmp_path).exit_code == 0
    staged = path / ".checks-staging" / "raw.zip"
    with zipfile.ZipFile(staged) as zf:
        entries = [(info.filename, zf.read(info)) for info in zf.infolist()]
    evil = gzip.compress(pickle.dumps({"x": Call(os.system, "true")}))
    with zipfile.ZipFile(staged, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # zipfile's "Duplicate name": the point of the attack
        zf.writestr(entries[0][0], evil)
        for name, data in entries:
            zf.writestr(name, data)
    key = f"cache/{path.relative_to(tmp_path / 'cache').as_posix()}/raw.zip"
    s3_env.delete_object(Bucket=BUCKET, Key=key)
    start = time.monotonic()
    res = run_cli(args, cwd=tmp_path)
    assert time.monotonic() - start < 30
    assert res.exit_code == 0, res.stdout + res.stderr
    assert f"raw.zip!{entries[0][0]}: a second entry under that name" in res.stderr
    published = zipfile.ZipFile(io.BytesIO(s3_env.get_object(Bucket=BUCKET, Key=key)["Body"].read()))
    assert [(i.filename, published.read(i)) for i in published.infolist()] == entries
    assert all(data == (path / "raw" / name).read_bytes() for name, data in entries)


def _resign(path, rel: str, data: bytes) -> None:
    """Change a cache file and sign a manifest naming it: what a leaked key (or a record signed elsewhere) allows."""
    (path / rel).parent.mkdir(parents=True, exist_ok=True)
    (path / rel).write_bytes(data)
    record_process(path)


FORGED = {
    "pickle-in-processed": (
        "processed/evil.pkl",
        pickle.dumps(Call(os.system, "true")),
        "not a file the engines write",
    ),
    "pickle-as-results-table": (
        "results/model_results.parquet",
        pickle.dumps(Call(os.system, "true")),
        "not a parquet file",
    ),
    "extra-results-table": ("results/evil.parquet", b"PAR1", "not a file the engines write"),
    "hyperparameters-not-json": ("processed/configs_hyperparameters.json", b"\x80\x04evil", "not UTF-8 JSON"),
    "text-file-in-raw": ("raw/Dummy_c1_BAG_L1/notes.txt", b"hello", "not a file the engines write"),
}


@pytest.mark.parametrize("kind", sorted(FORGED))
def test_upload_reverifies_every_file_it_publishes(tmp_path, s3_env, s3_proxy, kind):
    """Fault: behind a decision record that verifies (a leaked key, or a record signed for other bytes): a pickle added
    as processed/evil.pkl, results/model_results.parquet replaced by a pickle, an extra results/evil.parquet,
    configs_hyperparameters.json that is not JSON, a text file in raw/; upload checked only the manifest (and decoded
    only raw/), so each was published

    Must: staging re-verifies every file it publishes (raw.zip and processed.zip entry by entry, processed/*,
    results/*.parquet, metadata.yaml, configs_hyperparameters.json): a name the engines do not write, or bytes not of
    the kind the name says (parquet footer, JSON, the one CSV of a label zip, a results.pkl the strict reader reads),
    refuses the upload naming the file (exit 4) before any request, in a dry run too; the clean cache passes; measured:
    each refusal in 0.05-0.11 s; on a 9-result run (63 cache files) both zips are built and read back in 0.13 s and
    reused ones verified in 0.04 s, peak RSS 202 MiB for processing and staging together
    """
    path = make_method_cache(tmp_path / "cache")
    assert run_cli(_upload(tmp_path / "cache"), cwd=tmp_path).exit_code == 0
    rel, data, words = FORGED[kind]
    _resign(path, rel, data)
    for mode in ([], ["--no-dry-run"]):
        start = time.monotonic()
        res = run_cli(_upload(tmp_path / "cache", *mode), cwd=tmp_path)
        assert time.monotonic() - start < 30
        assert res.exit_code == ExitCode.ACTION_FAILED, res.stdout + res.stderr
        out = res.stdout + res.stderr
        assert f"{rel}: {words}" in out and "refused at staging" in out, out
    assert s3_proxy.puts() == []
