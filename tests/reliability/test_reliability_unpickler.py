"""Pickles that attack the restricted unpickler itself: memory safety, unbounded work, nesting.

The code-execution payloads are refused by name (tests/reliability/test_reliability_raw.py); these use
only allow-listed globals, with arguments numpy never writes or shapes no result has. Each
runs in a child process, so a SIGSEGV or a hang fails the test instead of killing the suite.
"""

from __future__ import annotations

import gzip
import json
import pickle
import subprocess
import sys

from tests.support import hostile_pickles
import numpy as np
import pytest
from tests.support.reliability_fixtures import child_env, run_checks, write_info
from tests.support.tabarena_fixtures import make_run

from tabarena_checks.raw import reader
from tabarena_checks.testing.commands import process_args

CONFIG = "TA-Nori_c1_default_BAG_L1"

#: payload -> words its refusal must hold
EXPECTED = {
    "ndarray-object-from-bytes": "direct call of numpy.ndarray",
    "ndarray-stride-0": "direct call of numpy.ndarray",
    "frombuffer-object": "object arrays are only rebuilt from the list",
    "frombuffer-short-buffer": "needs exactly 8000 bytes",
    "setstate-object-from-bytes": "object arrays are only rebuilt from the list",
    "setstate-short-buffer": "needs exactly 8000 bytes",
    "setstate-negative-shape": "array shape",
    "setstate-object-list-too-short": "object array of 5 element(s)",
    "dtype-structured-with-object-field": "the dtype 'V8'",
    "dtype-zero-size-string": "the dtype 'U0'",
    "dtype-state-turned-object": "dtype state",
    "scalar-object": "numpy scalar of dtype",
    "scalar-short": "needs exactly 8 bytes",
    "build-on-a-list": "setting the state of a list",
    "deep-tuple-dict-key": "tuples nested more than 100 deep",
    "billion-laughs": "method_metadata.model_hyperparameters.x[0]",
    "nested-1000-cubed": "expands to more than",
    "self-containing-list": "x[0] contains itself",
    "bytearray-of-a-size": "bytearray(10000000000)",
    "str-of-billion-laughs": "str(a list of length 10)",
    "tuple-copies": "tuple() copies past the",
    "opcode-flood": "objects a result may build",
}

_LOAD_ALL = """
import json, sys, time
from tabarena_checks.raw import reader
out = {}
for path in sys.argv[1:]:
    start = time.perf_counter()
    try:
        reader.load_result(path)
        out[path] = ["LOADED", 0]
    except reader.RawFileError as exc:
        out[path] = [exc.reason, time.perf_counter() - start]
with open("/proc/self/status") as fh:  # VmHWM starts at exec; ru_maxrss would count the forking parent's pages
    out["peak_mib"] = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:")) / 1024
print(json.dumps(out))
"""


def test_hostile_pickles_are_refused_without_crashing(tmp_path):
    """Fault: 22 pickles that use only allow-listed globals against the unpickler: numpy.ndarray called with a buffer of
    raw pointers (object dtype) or stride 0 over 10^12 elements, object arrays from bytes through _frombuffer or a
    forged state, buffers shorter than the shape, structured, zero-size and re-stated dtypes, object scalars, BUILD on a
    list, a dict key that is a tuple nested 10^6 deep (hashing it overflows the C stack), shared lists 40 deep (10^40
    when expanded) and 1000^3, a self-containing list, bytearray(10**10), str() of a billion laughs, 10^10 elements
    copied by tuple(), 5,000,000 opcodes of empty sets

    Must: each is refused as unreadable naming what was refused (and the field, for the graph limits); the reader
    never dies (exit 0, no SIGSEGV); measured on the shared 2-core machine: all 22 in 2.7 s, the slowest (the opcode
    flood) 1.5 s, peak RSS 167 MiB
    """
    paths = {}
    for name, blob in hostile_pickles.payloads().items():
        paths[name] = tmp_path / f"{name}.pkl"
        paths[name].write_bytes(gzip.compress(blob, compresslevel=1) if len(blob) > 1 << 20 else blob)
    assert set(paths) == set(EXPECTED)
    proc = subprocess.run(
        [sys.executable, "-c", _LOAD_ALL, *map(str, paths.values())],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=300,
    )
    assert proc.returncode == 0, f"the reader died with {proc.returncode}: {proc.stderr[-2000:]}"
    out = json.loads(proc.stdout)
    for name, path in paths.items():
        reason, _seconds = out[str(path)]
        assert EXPECTED[name] in reason, (name, reason)
    assert out["peak_mib"] < 512, out["peak_mib"]


def _plant(data, rel, field, value):
    """Rewrite one clean result with ``value`` at the dotted ``field``."""
    path = data / CONFIG / rel / "results.pkl"
    result = pickle.loads(gzip.decompress(path.read_bytes()))
    *parents, last = field.split(".")
    node = result
    for key in parents:
        node = node[key]
    node[last] = value
    path.write_bytes(gzip.compress(pickle.dumps(result, protocol=4)))
    return path.relative_to(data).as_posix()


@pytest.mark.parametrize("field", ["method_metadata.model_hyperparameters.max_depth", "simulation_artifacts.y_test"])
def test_pointer_array_in_a_result_is_refused_by_the_commands(tmp_path, field):
    """Fault: the review's pointer array, `__reduce__ -> (np.ndarray, ((1,), np.dtype('O'), b'A'*8))`, in the
    hyperparameters or in simulation_artifacts.y_test (inspect and process used to die with SIGSEGV, exit 139, or copy
    the file into raw/)

    Must: `checks inspect` lists the file as unreadable (exit 0) and `checks run process` is blocked by TA301 naming
    it (exit 1); no SIGSEGV, no cache written
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    pointer = hostile_pickles.Reduce(np.ndarray, ((1,), np.dtype("O"), b"A" * 8))
    rel = _plant(data, "363612/0_1", field, pointer)
    inspected = run_checks(["inspect", data, "--format", "json", "--cache-dir", tmp_path / "idx"], cwd=tmp_path)
    assert inspected.returncode == 0, (inspected.returncode, inspected.stderr[-2000:])
    (method,) = json.loads(inspected.stdout)["methods"]
    assert [u["path"] for u in method["unreadable"]] == [rel]
    assert "direct call of numpy.ndarray" in method["unreadable"][0]["reason"]
    ref = write_info(tmp_path / "info")
    processed = run_checks(
        process_args(data, ref, tmp_path / "cache", "--format", "json"),
        cwd=tmp_path,
    )
    assert processed.returncode == 1, (processed.returncode, processed.stderr[-2000:])
    verdicts = {v["code"]: v for v in json.loads(processed.stdout)["verdicts"]}
    assert verdicts["TA301"]["outcome"] == "failed" and rel in verdicts["TA301"]["message"]
    assert not (tmp_path / "cache" / "artifacts").exists()


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_every_array_numpy_pickles_still_loads(tmp_path, protocol):
    """The checks refuse only what numpy never writes: every plain dtype, order and shape loads as pickle does."""
    value = {
        "f4": np.arange(12, dtype=np.float32).reshape(3, 4),
        "fortran": np.asfortranarray(np.ones((2, 3))),
        "strided": np.arange(10.0)[::3],
        "big-endian": np.arange(3, dtype=">i4"),
        "empty": np.zeros((0, 5)),
        "0-d": np.array(2.5),
        "bool": np.array([True, False]),
        "u8": np.arange(3, dtype=np.uint64),
        "f2": np.ones(2, dtype=np.float16),
        "c16": np.array([1 + 2j]),
        "unicode": np.array(["ab", "c"]),
        "bytes": np.array([b"x", b"yz"]),
        "datetime": np.array(["2026-01-01"], dtype="M8[D]"),
        "timedelta": np.array([5], dtype="m8[ms]"),
        "objects": np.array([{"a": 1}, None, "s"], dtype=object),
        "object-2d": np.array([[1, "a"], [None, 2.0]], dtype=object),
        "scalar": np.float32(1.5),
        "dtype": np.dtype("f8"),
        "nested": {"t": (1, (2, (3,))), "l": [[[]]]},
    }
    path = tmp_path / "r.pkl"
    blob = pickle.dumps(value, protocol=protocol)
    path.write_bytes(blob)
    loaded = reader.load_result(path)
    for key, expected in pickle.loads(blob).items():  # our own pickle: plain pickle is the reference
        got = loaded[key]
        if isinstance(expected, np.ndarray):
            assert got.dtype == expected.dtype and got.shape == expected.shape, key
            assert np.array_equal(got, expected) if expected.dtype != object else got.tolist() == expected.tolist()
        else:
            assert got == expected and type(got) is type(expected), key
