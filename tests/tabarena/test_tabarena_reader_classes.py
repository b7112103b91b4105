"""What real results.pkl files hold beyond builtins and numpy: AutoGluon's container subclasses, classes the reader
does not know (read as None where nothing reads them, refused elsewhere), and the fast loader's equivalence with
the careful one. The index that serves these rows is keyed by the code that built them."""

from __future__ import annotations

import gzip
import io
import json
import pickle
import subprocess
import sys
import types
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.tabarena_fixtures import build, make_run, write_payload

from checks.testing import assert_fails, assert_passes, evaluate_rules
from tabarena_checks.raw import index, index_cache, inference, reader, unpickler
from tabarena_checks.rules.raw import unread_classes

AG_MODULE = "autogluon.core.models.abstract._mutation_deprecated_dict"
AG_AUX_MODULE = "autogluon.core.models.abstract._auxiliary_params"


@contextmanager
def importable_classes(module: str, **bases):
    """Classes named ``module.<name>`` that pickle can name (the module exists only while the block runs).

    A class whose base is ``"reduce"`` pickles as AutoGluon 1.6's containers do, ``cls(dict(self))``;
    ``"newobj"`` the default way of a dict subclass (NEWOBJ, then its items).
    """
    parts = module.split(".")
    added = [".".join(parts[:i]) for i in range(1, len(parts) + 1) if ".".join(parts[:i]) not in sys.modules]
    for name in added:  # pickle imports the module (and so its parents) to check the class is its own
        sys.modules[name] = types.ModuleType(name)
    fake = sys.modules[module]
    made = {}
    for name, how in bases.items():
        body = {"__module__": module}
        if how == "reduce":
            body["__reduce__"] = lambda self: (type(self), (dict(self),))
        made[name] = type(name, (dict,), body)
        made[name].__qualname__ = name
        setattr(fake, name, made[name])
    try:
        yield made
    finally:
        for name in added:
            del sys.modules[name]


def _load_in_a_fresh_interpreter(path) -> dict:
    """Load ``path`` where the class's module does not exist; report what came back, as JSON."""
    code = (
        "import json, sys\nfrom tabarena_checks.raw import reader\nr = reader.load_result(sys.argv[1])\n"
        "info = r['method_metadata']['info']\n"
        "print(json.dumps({'types': sorted({type(v).__name__ for v in (info['params'], "
        "info['bagged_info']['params_aux'])}), 'info': info, 'ag': [m for m in sys.modules "
        "if m.startswith('autogluon')]}))"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


def test_autogluon_containers_are_rebuilt_as_dicts_without_importing_autogluon(tmp_path):
    with (
        importable_classes(AG_MODULE, ParamsDict="reduce") as ag,
        importable_classes(AG_AUX_MODULE, ParamsAuxDict="reduce") as aux,
    ):
        result = {
            "framework": "x",
            "method_metadata": {
                "info": {
                    "params": ag["ParamsDict"]({"n_estimators": 300, "max_leaf_nodes": 15000}),
                    "bagged_info": {"params_aux": aux["ParamsAuxDict"]({"num_cpus": 8})},
                }
            },
        }
        path = write_payload(tmp_path / "results.pkl", result)
    got = _load_in_a_fresh_interpreter(path)
    assert got["types"] == ["dict"] and got["ag"] == []
    assert got["info"] == {
        "params": {"n_estimators": 300, "max_leaf_nodes": 15000},
        "bagged_info": {"params_aux": {"num_cpus": 8}},
    }


@pytest.mark.parametrize("how", ["reduce", "newobj"])
def test_unknown_class_where_nothing_reads_is_noted_by_the_index_and_refused_elsewhere(tmp_path, how):
    with importable_classes("autogluon.future.params", ParamsView=how) as made:
        view = made["ParamsView"]({"a": 1})
        result = {
            "framework": "x",
            "method_metadata": {
                "model_type": "RF",
                "info": {"children_info": {"S1F1": {"hyperparameters": view}}, "kept": [1, 2]},
            },
        }
        path = write_payload(tmp_path / "results.pkl", result)
    notes: list[str] = []
    loaded = reader.load_result(path, notes=notes)
    assert loaded["method_metadata"]["info"] == {"children_info": {"S1F1": {"hyperparameters": None}}, "kept": [1, 2]}
    assert loaded["method_metadata"]["model_type"] == "RF"
    (note,) = notes
    assert note.startswith(
        "method_metadata.info.children_info.S1F1.hyperparameters holds a autogluon.future.params.ParamsView"
    )
    assert note.endswith("a class the reader does not load")
    with pytest.raises(reader.UnsafePickleError, match="nothing reads this field, but the file is published"):
        reader.load_result(path)  # only the index, which informs, reads past it


@pytest.mark.parametrize("field", ["method_metadata.model_hyperparameters", "simulation_artifacts", "task_metadata"])
def test_unknown_class_where_processing_reads_refuses_the_file_naming_the_field(tmp_path, field):
    with importable_classes("autogluon.future.params", ParamsView="reduce") as made:
        top, *rest = field.split(".")
        value = {"x": made["ParamsView"]({"a": 1})}
        result = {"framework": "x", top: {rest[0]: value} if rest else value}
        path = write_payload(tmp_path / "results.pkl", result)
    with pytest.raises(reader.UnsafePickleError) as info:
        reader.load_result(path)
    message = str(info.value)
    assert f"'autogluon.future.params.ParamsView' in {field}.x" in message
    assert "processing reads this field" in message and "nothing from the file was run" in message
    assert info.value.field == f"{field}.x"


def test_unknown_classes_reach_the_index_and_ta308(tmp_path):
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    first, *_ = sorted(data.rglob("results.pkl"))
    result = pickle.loads(gzip.decompress(first.read_bytes()))
    with importable_classes("autogluon.future.params", ParamsView="reduce") as made:
        result["method_metadata"]["info"] = {"params": made["ParamsView"]({"a": 1})}
        first.write_bytes(gzip.compress(pickle.dumps(result, protocol=5)))
    built = build(data, cache_dir=tmp_path / "idx")
    assert not built.errors
    inf = inference.infer(built)
    rel = first.relative_to(data).as_posix()
    assert [path for path, _ in inf.unread] == [rel]
    verdicts = evaluate_rules([unread_classes], types.SimpleNamespace(inference=inf), action="process")
    verdict = assert_fails(verdicts, "TA308", "method_metadata.info.params holds a autogluon.future.params.ParamsView")
    assert [f.path for f in verdict.findings] == [rel]

    clean = make_run(tmp_path / "clean", tasks=(363612,), folds=2, validation_protocol="8x1")
    clean_inf = inference.infer(build(clean, cache_dir=tmp_path / "idx2"))
    assert clean_inf.unread == ()
    assert_passes(
        evaluate_rules([unread_classes], types.SimpleNamespace(inference=clean_inf), action="process"), "TA308"
    )


def test_fast_loader_equals_plain_pickle_and_the_careful_loader(tmp_path):
    data = make_run(tmp_path, tasks=(363612, 363614, 363619), folds=2, validation_protocol="8x1")
    paths = sorted(data.rglob("results.pkl"))
    assert paths
    for path in paths:
        payload = reader.read_payload(path)
        assert unpickler.scan(payload) is not None, path  # generated files take the fast path
        fast = unpickler.load(payload).value
        careful = unpickler.settle(unpickler.RestrictedUnpickler(io.BytesIO(payload)).load(), [])
        plain = pickle.loads(payload)
        assert _same(fast, plain) and _same(careful, plain), path


def _same(a, b) -> bool:
    if isinstance(b, np.ndarray):
        return (
            type(a) is np.ndarray
            and a.dtype == b.dtype
            and a.shape == b.shape
            and (
                a.tolist() == b.tolist() if b.dtype.hasobject else np.array_equal(a, b, equal_nan=b.dtype.kind in "fc")
            )
        )
    if isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in b)
    if isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.parametrize(
    "payload",
    [
        pickle.dumps({"t": (1, 2)}, protocol=0),  # text opcodes: read by the careful loader
        b"\x80\x04}\x94(" + b"\x8c\x01a\x94K\x01u.",  # truncated memo use is fine; a normal dict
    ],
)
def test_pickles_the_scan_sends_to_the_careful_loader_still_load(payload):
    assert unpickler.load(payload).value == pickle.loads(payload)


def test_scan_counts_the_budget_exactly_at_its_edges():
    """A memo index is allowed up to the budget spent so far (the opcode itself counted), a set or dict costs
    HEAVY, a tuple-making opcode counts towards FAST_TUPLES: one past each edge is refused."""
    put = b"\x80\x02]r"  # PROTO, EMPTY_LIST, then LONG_BINPUT: three opcodes spent
    assert unpickler.scan(put + (3).to_bytes(4, "little") + b".") == 4
    assert unpickler.scan(put + (4).to_bytes(4, "little") + b".") is None
    assert unpickler.scan(b"\x80\x02}}0.") == 1 + 2 * unpickler.HEAVY + 2
    tuples = b"\x80\x04N" + b"\x85" * unpickler.FAST_TUPLES + b"."
    assert unpickler.scan(tuples) == unpickler.FAST_TUPLES + 3
    assert unpickler.scan(tuples[:-1] + b"\x85.") is None


def test_scan_refuses_the_fast_loader_what_could_hurt_it():
    deep = b"\x80\x04}" + b"N" + b"\x85" * (unpickler.FAST_TUPLES + 1) + b"Ns."
    assert unpickler.scan(deep) is None  # a tuple this deep, hashed in C, could overflow the stack
    huge_memo = b"\x80\x04N" + b"r" + (2**31).to_bytes(4, "little") + b"."
    assert unpickler.scan(huge_memo) is None  # the C memo is sized by the largest index
    assert unpickler.scan(b"\x80\x04]" + b"\x8f" * (unpickler.MAX_OPS // unpickler.HEAVY) + b"e.") is None
    assert unpickler.scan(b"\x80\x04N") is None  # no STOP
    assert unpickler.scan(b"\n\x80\x02cbuiltins") is None  # a GLOBAL whose lines never end: no step backwards
    payload = pickle.dumps({"a": [1, 2.5, {"b": "x"}], "c": {1, 2}}, protocol=4)
    careful = unpickler.RestrictedUnpickler(io.BytesIO(payload))
    careful.load()
    assert unpickler.scan(payload) == unpickler.MAX_OPS - careful._globals.left  # both charge the same budget


def test_an_index_built_by_other_code_is_never_read(tmp_path, monkeypatch):
    """The cached index is keyed by a digest of the code that built its rows: an index a previous release (or any
    one-line change of a check) wrote is decoded again, never served (it once passed a gate the new code blocks)."""
    data = make_run(tmp_path, tasks=(363612,), folds=2)
    files = len(list(data.rglob("results.pkl")))
    assert build(data).decoded == files and build(data).decoded == 0
    monkeypatch.setattr(index_cache, "code_digest", lambda: "sha256:" + "0" * 64)
    assert build(data).decoded == files


def test_the_code_digest_covers_every_module_of_the_reader(tmp_path):
    package = tmp_path / "raw"
    package.mkdir()
    for module in sorted((index.Path(index.__file__).parent).glob("*.py")):
        (package / module.name).write_bytes(module.read_bytes())
    assert index_cache.digest_of_modules(package) == index.code_digest()
    for module in sorted(package.glob("*.py")):
        before = module.read_bytes()
        module.write_bytes(before + b"\n")
        assert index_cache.digest_of_modules(package) != index.code_digest(), module.name
        module.write_bytes(before)


_SEED = pickle.dumps(
    {
        "a": [1, 2.5, (3, "x")],
        "b": np.arange(6, dtype=np.float32).reshape(2, 3),
        "c": {1, 2},
        "d": np.float64(1.5),
        "e": b"raw",
    },
    protocol=5,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.integers(0, len(_SEED) - 1), st.integers(0, 255)), min_size=1, max_size=4),
    st.integers(0, len(_SEED)),
)
def test_mutated_pickles_end_in_a_value_or_a_refusal(edits, cut):
    """One to four bytes of a real pickle changed, and the rest cut anywhere: the scan always ends, and the load
    returns or raises an exception (the careful loader's answer), never crashes or hangs."""
    blob = bytearray(_SEED)
    for at, byte in edits:
        blob[at] = byte
    blob = bytes(blob[:cut] if cut < len(blob) else blob)
    unpickler.scan(blob)
    try:
        unpickler.load(blob)
    except Exception:  # noqa: BLE001 - any refusal is an answer; only a crash or a hang would fail here
        pass
