"""Hostile and damaged raw results through the real commands: `checks inspect` and `checks run process`.

The reader's own tests prove the unpickler refuses payloads one call at a time; these prove
the commands a user runs report every such file by name, run nothing, keep inspecting the
rest of the run, and never end in a traceback.
"""

from __future__ import annotations

import builtins
import gzip
import json
import os
import pickle
import subprocess

import numpy as np
import pytest
from tests.support.reliability_fixtures import measured, process_json
from tests.support.tabarena_fixtures import Call, make_run

from checks.testing import run_cli
from tabarena_checks.raw import index

CONFIG = "TA-Nori_c1_default_BAG_L1"


def _payloads(marker):
    """name -> raw pickle bytes that would create ``marker`` if anything ever ran them."""
    touch = f"touch '{marker}'"
    return {
        "os.system": pickle.dumps({"framework": CONFIG, "x": Call(os.system, touch)}, protocol=4),
        "subprocess": pickle.dumps(Call(subprocess.check_call, ["touch", str(marker)]), protocol=4),
        "builtins.eval": pickle.dumps(Call(builtins.eval, f"open({str(marker)!r}, 'w')"), protocol=2),
        "reduce-getattr": f"cbuiltins\ngetattr\n(cbuiltins\n__import__\n(Vos\ntRVsystem\ntR(V{touch}\ntR.".encode(),
        "numpy-outside-allow-list": pickle.dumps(Call(np.savetxt, str(marker), np.arange(3)), protocol=4),
        "protocol-0-global": f"cos\nsystem\n(V{touch}\ntR.".encode(),
        "inst-opcode": f"(V{touch}\nios\nsystem\n.".encode(),
        "builtins.__import__": "cbuiltins\n__import__\n(Vos\ntR.".encode(),
        "nested-in-artifacts": pickle.dumps(
            {
                "framework": CONFIG,
                "simulation_artifacts": {"bag_info": {"pred_proba_test_per_child": [Call(os.system, touch)]}},
            },
            protocol=5,
        ),
    }


def _plant(data, rel, blob):
    path = data / CONFIG / rel / "results.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(blob)
    return path.relative_to(data).as_posix()


@pytest.fixture
def hostile_run(tmp_path):
    """A clean 6-file run plus one file per payload (half gzip-compressed, half plain)."""
    data = make_run(tmp_path / "run", tasks=(363612, 363614), folds=3, validation_protocol="8x1")
    marker = tmp_path / "PAYLOAD_RAN"
    planted = {}
    for n, (name, blob) in enumerate(_payloads(marker).items()):
        planted[name] = _plant(data, f"363619/0_{n}", gzip.compress(blob) if n % 2 else blob)
    return data, marker, planted


def test_inspect_refuses_every_payload_and_inspects_the_rest(hostile_run, tmp_path):
    """Fault: results.pkl files whose pickles call os.system, subprocess, eval, __import__, getattr tricks,
    INST/protocol-0 globals or numpy functions outside the allow-list

    Must: checks inspect lists each file as unreadable with the refused global, runs nothing (no marker file), and
    still reports every clean result of the run
    """
    data, marker, planted = hostile_run
    res = run_cli(["inspect", str(data), "--format", "json", "--cache-dir", str(tmp_path / "idx")], cwd=tmp_path)
    assert res.exit_code == 0, res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    assert not marker.exists()
    (method,) = json.loads(res.stdout)["methods"]
    unreadable = {u["path"]: u["reason"] for u in method["unreadable"]}
    assert set(unreadable) == set(planted.values())
    for name, path in planted.items():
        assert "refused to load '" in unreadable[path] and "nothing from the file was run" in unreadable[path], name
    assert method["counts"]["results"] == 6


def test_process_blocks_on_unsafe_pickles(hostile_run, tmp_path):
    """Fault: unsafe pickles in the raw data handed to `checks run process`

    Must: TA301 fails naming every refused file, the action is blocked (exit 1), nothing ran and no cache is written
    """
    data, marker, planted = hostile_run
    res = process_json(data, tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    assert "Traceback" not in res.stdout + res.stderr
    assert not marker.exists()
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TA301"]["outcome"] == "failed"
    messages = verdicts["TA301"]["message"]
    for path in planted.values():
        assert path in messages
    assert not (tmp_path / "cache" / "artifacts").exists(), "no method cache is written"


def _bomb(path, expanded_mib: int, member_mib: int = 64) -> None:
    """Concatenated gzip members of zeros: a ~2 MiB file that inflates to ``expanded_mib`` MiB."""
    member = gzip.compress(b"\0" * (member_mib << 20), compresslevel=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for _ in range(expanded_mib // member_mib):
            fh.write(member)


@pytest.mark.slow
def test_gzip_bomb_is_refused_within_bounded_memory(tmp_path):
    """Fault: a gzip bomb: a 2 MiB results.pkl that inflates to 4 GiB

    Must: refused as a gzip bomb by checks inspect with peak memory under 1 GiB (bounded by the decompression limit,
    not by the bomb); the other files are still inspected
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    _bomb(data / CONFIG / "363614" / "0_0" / "results.pkl", 4096)
    assert (data / CONFIG / "363614" / "0_0" / "results.pkl").stat().st_size < 8 << 20
    # the peak is the child's own (VmHWM) and its decode workers': ru_maxrss of a child started from this test
    # process would report this process's peak, whatever earlier tests in it had used
    code, stdout, stderr, peak_mib, _ = measured(
        ["inspect", data, "--format", "json", "--cache-dir", tmp_path / "idx"], cwd=tmp_path
    )
    assert code == 0, stderr
    (method,) = json.loads(stdout)["methods"]
    (bad,) = method["unreadable"]
    assert "gzip bomb" in bad["reason"] and method["counts"]["results"] == 2
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"


def _damage(data, kind):
    """Damage one file of a clean run the way ``kind`` says; returns what the verdict must mention."""
    victim = data / CONFIG / "363614" / "0_1" / "results.pkl"
    blob = victim.read_bytes()
    result = pickle.loads(gzip.decompress(blob))
    rel = victim.relative_to(data).as_posix()

    def rewrite(obj):
        victim.write_bytes(gzip.compress(pickle.dumps(obj, protocol=4)))

    if kind == "truncated-gzip":
        victim.write_bytes(blob[: len(blob) // 3])
        return "TA301", [rel, "truncated gzip"]
    if kind == "zero-byte":
        victim.write_bytes(b"")
        return "TA301", [rel, "empty"]
    if kind == "not-a-pickle":
        victim.write_bytes(gzip.compress(b"this is not a pickle at all"))
        return "TA301", [rel, "not a readable pickle"]
    if kind == "not-a-dict":
        rewrite([1, 2, 3])
        return "TA301", [rel, "expected the dict"]
    if kind == "string-fold":
        result["task_metadata"]["fold"] = "1"
        rewrite(result)
        return "TA320", [rel, "task_metadata.fold is not an integer"]
    if kind == "nan-metric-error":
        result["metric_error"] = float("nan")
        rewrite(result)
        return "TA322", [rel, "metric_error is NaN"]
    if kind == "missing-task-metadata":
        del result["task_metadata"]
        rewrite(result)
        return "TA320", [rel, "task_metadata missing"]
    if kind == "task-metadata-not-a-dict":
        result["task_metadata"] = "363614"
        rewrite(result)
        return "TA320", [rel, "task_metadata is not a dict"]
    if kind == "string-metric-error":
        result["metric_error"] = "0.25"
        rewrite(result)
        return "TA320", [rel, "metric_error is not a number"]
    if kind == "bad-protocol-record":
        result["validation_protocol"]["protocol"]["num_bag_folds"] = "eight"
        rewrite(result)
        return "TA320", [rel, "num_bag_folds"]
    if kind == "artifacts-not-a-dict":
        result["simulation_artifacts"] = ["oops"]
        rewrite(result)
        return "TA320", [rel, "simulation_artifacts is not a dict"]
    sa = result["simulation_artifacts"]
    if kind == "missing-y-test":
        del sa["y_test"]
        rewrite(result)
        return "TA370", [rel, "simulation_artifacts.y_test is missing"]
    if kind == "prediction-not-an-array":
        sa["pred_proba_dict_val"][result["framework"]] = "0.5"
        rewrite(result)
        return "TA366", [rel, "must be a 1-D or 2-D numeric array (got a str)"]
    if kind == "position-past-the-rows":
        sa["bag_info"]["val_idx_per_child"][1][0] = len(sa["y_val"])
        rewrite(result)
        return "TA383", [rel, "val_idx_per_child[1] holds positions outside the"]
    if kind == "int-beyond-64-bits":
        result["time_infer_s"] = 2**70
        rewrite(result)
        return "TA320", [rel, "time_infer_s is out of range"]
    if kind == "other-rows-in-the-split":
        # a second config of the split, sound on its own, predicting one test row fewer
        other = pickle.loads(gzip.decompress(blob))
        other["framework"] = CONFIG.replace("_c1_", "_r1_")
        osa = other["simulation_artifacts"]
        osa["y_test"], osa["y_test_idx"] = osa["y_test"][:-1], osa["y_test_idx"][:-1]
        osa["pred_proba_dict_val"] = {other["framework"]: osa["pred_proba_dict_val"][CONFIG]}
        osa["pred_proba_dict_test"] = {other["framework"]: osa["pred_proba_dict_test"][CONFIG][:-1]}
        osa["bag_info"]["pred_proba_test_per_child"] = [c[:-1] for c in osa["bag_info"]["pred_proba_test_per_child"]]
        twin = data / other["framework"] / "363614" / "0_1" / "results.pkl"
        twin.parent.mkdir(parents=True)
        twin.write_bytes(gzip.compress(pickle.dumps(other, protocol=4)))
        return "TA351", [twin.relative_to(data).as_posix(), "every config of a task split must predict the same rows"]
    if kind == "duplicate-split":
        twin = data / (CONFIG + "-rerun") / "363614" / "0_1" / "results.pkl"
        twin.parent.mkdir(parents=True)
        twin.write_bytes(blob)
        return "TA304", ["363614", "0_1", "2 results"]
    if kind == "two-methods":
        other = make_run(
            data.parent / "other",
            tasks=(363612,),
            folds=1,
            name_prefix="TA-Other",
            method="Other",
            validation_protocol="8x1",
        )
        (other / "TA-Other_c1_default_BAG_L1").rename(data / "TA-Other_c1_default_BAG_L1")
        return "TA302", ["2 methods", "TA-Nori", "TA-Other"]
    raise AssertionError(kind)


DAMAGE = (
    "truncated-gzip",
    "zero-byte",
    "not-a-pickle",
    "not-a-dict",
    "string-fold",
    "nan-metric-error",
    "missing-task-metadata",
    "task-metadata-not-a-dict",
    "string-metric-error",
    "bad-protocol-record",
    "artifacts-not-a-dict",
    "missing-y-test",
    "prediction-not-an-array",
    "position-past-the-rows",
    "int-beyond-64-bits",
    "other-rows-in-the-split",
    "duplicate-split",
    "two-methods",
)


@pytest.mark.parametrize("kind", DAMAGE)
def test_damaged_result_gets_a_clear_verdict(tmp_path, kind):
    """Fault: one damaged result in a run: truncated gzip, zero bytes, not a pickle, not a dict, a string fold, a NaN or
    string metric_error, missing or mistyped task_metadata, a malformed protocol record, simulation artifacts that
    processing cannot align (a missing label array, a prediction that is not an array, a child's position past the
    validation rows), an int time beyond 64 bits, a config whose labels differ in number from the rest of its task
    split, a duplicate (config, task, split), results of two methods mixed

    Must: `checks run process` blocks with one clear verdict naming the file and the field (TA301, TA302, TA304 or a
    rule of group TA306), never a traceback; every other rule still judges the rest of the run
    """
    data = make_run(tmp_path / "run", tasks=(363612, 363614), folds=2, validation_protocol="8x1")
    code, words = _damage(data, kind)
    res = process_json(data, tmp_path)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.exit_code == 1, res.stdout + res.stderr
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts[code]["outcome"] == "failed"
    message = verdicts[code]["message"]
    for word in words:
        assert word in message, (word, message)
    assert not [c for c, v in verdicts.items() if v["outcome"] == "crashed"]
    assert not (tmp_path / "cache" / "artifacts").exists(), "no method cache is written"
    inspected = run_cli(["inspect", str(data), "--format", "json", "--cache-dir", str(tmp_path / "idx")], cwd=tmp_path)
    assert inspected.exit_code == 0 and "Traceback" not in inspected.stderr
    total = sum(m["counts"]["results"] + len(m["unreadable"]) for m in json.loads(inspected.stdout)["methods"])
    assert total == len(list(data.rglob("results.pkl"))), "every file, damaged or not, is still accounted for"


def test_deeply_nested_pickle_is_one_unreadable_file(tmp_path):
    """Fault: a deeply nested pickle (a stack of 100,000 lists) in results.pkl

    Must: reported as unreadable for that file, no RecursionError traceback; the run is still inspected
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    depth = 100_000
    _plant(data, "363614/0_0", b"\x80\x04" + b"]" * depth + b"a" * (depth - 1) + b".")
    res = run_cli(["inspect", str(data), "--format", "json", "--cache-dir", str(tmp_path / "idx")], cwd=tmp_path)
    assert res.exit_code == 0, res.stderr
    (method,) = json.loads(res.stdout)["methods"]
    assert len(method["unreadable"]) == 1 and method["counts"]["results"] == 2


def test_a_forged_index_cache_shipped_with_the_run_is_not_trusted(tmp_path, monkeypatch):
    """Fault: a submitter's index cache whose rows describe a clean file that was swapped for a code-running pickle of
    the same size and mtime

    Must: the maintainer's index cache lives in the maintainer's own cache directory, so the submitter's is never
    read: every file is decoded, TA301 refuses the payload, process is blocked (exit 1), nothing ran; inspect reports
    the file
    """

    data = make_run(tmp_path / "run", tasks=(363612,), folds=2)
    victim = sorted(data.rglob("results.pkl"))[0]
    rel = victim.relative_to(data).as_posix()
    before = victim.stat()
    marker = tmp_path / "ran"
    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "submitter"))  # the submitter's machine
    index.build_index(data, workers=1, progress=False)
    payload = gzip.compress(pickle.dumps({"framework": CONFIG, "x": Call(os.system, f"touch '{marker}'")}))
    assert len(payload) < before.st_size
    victim.write_bytes(payload + b"\0" * (before.st_size - len(payload)))  # gzip readers accept NUL padding
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    forged = index.build_index(data, workers=1, progress=False)
    assert forged.decoded == 0 and not forged.errors, "on the submitter's machine the forged rows are believed"

    monkeypatch.setenv("CHECKS_CACHE_DIR", str(tmp_path / "maintainer"))
    res = process_json(data, tmp_path)
    assert res.exit_code == 1, res.stdout + res.stderr
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TA301"]["outcome"] == "failed" and rel in verdicts["TA301"]["message"]
    assert not (tmp_path / "cache" / "artifacts").exists() and not marker.exists()
    report = run_cli(["inspect", str(data), "--format", "json"], cwd=tmp_path)
    assert rel in report.stdout and "refused to load" in report.stdout and not marker.exists()
