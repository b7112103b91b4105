"""Hostile YAML in every YAML file the workflows read: a clear error within bounded time and memory.

Each case runs the real command in a child process whose address space is capped, so a
parser that expanded an alias bomb or recursed without limit would die (and fail the test)
instead of exhausting the machine. rules.toml is covered in tests/core/test_core_hostile.py.
"""

from __future__ import annotations

import resource
import time

import pytest
from tests.support.hf_fixtures import BENCHMARK_ID
from tests.support.reliability_fixtures import draft_args, hf_setup, run_checks, write_ledger
from tests.support.s3_fixtures import make_method_cache
from tabarena_checks.testing.commands import upload_args
from hfmigrate_checks.testing.migration import contract_step

#: the child's address-space cap: far above a normal run, far below an expanded alias bomb
ADDRESS_SPACE = 3 << 30
SECONDS = 30


def _bomb(levels: int = 9) -> str:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [" + ", ".join([f"*l{n - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


CASES = {
    "alias-bomb": (_bomb() + "tasks: *l8\n").encode(),
    "deep-nesting": b"tasks: " + b"[" * 20_000 + b"]" * 20_000 + b"\n",
    "duplicate-keys": b"name: a\nname: b\ntasks:\n  - id: main\n",
    "non-utf8": b"name: \xff\xfe\xfa\ntasks:\n  - id: main\n",
    "huge": b"name: big\ntasks:\n" + b"  - id: main\n" + b"# " + b"x" * (3 << 20) + b"\n",
}
EXPECTED = {
    "alias-bomb": ("alias", "anchor"),
    "deep-nesting": ("nested", "deep"),
    "duplicate-keys": ("duplicate",),
    "non-utf8": ("utf-8", "utf8", "decode"),
    "huge": ("limit", "large", "bytes"),
}


def _cap():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def _run(args, cwd, env=None):
    started = time.monotonic()
    res = run_checks(args, cwd=cwd, env=env, timeout=SECONDS * 2, preexec_fn=_cap)
    return res, time.monotonic() - started


def _clear(res, elapsed, case, *, exit_codes=(1, 2)):
    out = res.stdout + res.stderr
    assert elapsed < SECONDS, f"{elapsed:.1f}s"
    assert "Traceback" not in out and "MemoryError" not in out and "crashed" not in out, out[-2000:]
    assert res.returncode in exit_codes, out[-2000:]
    assert any(word in out.lower() for word in EXPECTED[case]), out[-2000:]


@pytest.mark.parametrize("case", list(CASES))
def test_validate_refuses_hostile_eval_results(tmp_path, case):
    """Fault: an .eval_results draft that is an alias bomb, 20,000 levels deep, has duplicate keys, non-UTF-8 bytes or 3
    MiB

    Must: `checks hf validate` reports that file as an input it cannot read, at its place with the reason (exit 2),
    within bounded time and memory; no rule judges it, the other drafts are still judged
    """
    good = tmp_path / "bundle" / "drafts" / "good--model" / ".eval_results" / "b.yaml"
    bad = tmp_path / "bundle" / "drafts" / "bad--model" / ".eval_results" / "b.yaml"
    good.parent.mkdir(parents=True)
    bad.parent.mkdir(parents=True)
    good.write_text("- dataset:\n    id: org/bench\n    task_id: main\n  value: 1.5\n")
    bad.write_bytes(CASES[case])
    res, elapsed = _run(["hf", "validate", "bundle", "--benchmark-id", "org/bench", "--task-id", "main"], tmp_path)
    _clear(res, elapsed, case, exit_codes=(2,))
    assert "good--model" not in res.stdout
    assert "bundle/drafts/bad--model/.eval_results/b.yaml:" in res.stdout and ": error " in res.stdout


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_contract_refuses_hostile_eval_yaml(tmp_path, case):
    """Fault: a benchmark whose eval.yaml on the Hub is an alias bomb, too deep, has duplicate keys, non-UTF-8 bytes or
    3 MiB

    Must: `checks hf contract` stops with one clear error naming eval.yaml (exit 2), no contract written, within
    bounded time and memory
    """
    res, elapsed = _contract(tmp_path, eval_yaml=CASES[case])
    _clear(res, elapsed, case, exit_codes=(2,))
    assert "eval.yaml" in res.stderr
    assert not (tmp_path / "out.json").exists()


def _contract(tmp_path, *, eval_yaml: bytes | None = None, mapping: bytes | None = None):
    """`checks hf contract` against the local Hub, with a hostile eval.yaml on the Hub or a hostile mapping file."""
    with hf_setup(tmp_path, models=0) as (env, hub):
        if eval_yaml is not None:
            (tmp_path / "hub" / "datasets" / BENCHMARK_ID / "main" / "eval.yaml").write_bytes(eval_yaml)
        if mapping is not None:
            (tmp_path / "hostile.yaml").write_bytes(mapping)
        args = contract_step(BENCHMARK_ID, "contract.yaml" if mapping is None else "hostile.yaml", "out.json")
        return _run(args, tmp_path, env)


def _mapping_case(case: str) -> bytes:
    """The contract mapping's shape around each hostile construct."""
    if case == "duplicate-keys":
        return b"metric: accuracy\nmetric: f1\ndirection: higher_is_better\nunit: percent\ncolumns: {Main: main}\n"
    return CASES[case].replace(b"tasks:", b"columns:").replace(b"name:", b"metric:")


@pytest.mark.parametrize("case", list(CASES))
def test_contract_refuses_a_hostile_mapping(tmp_path, case):
    """Fault: a contract mapping file (--mapping) that is an alias bomb, too deep, has duplicate keys, non-UTF-8 bytes
    or 3 MiB

    Must: `checks hf contract` stops with one clear error naming the mapping file (exit 2) within bounded time and
    memory; nothing is written
    """
    res, elapsed = _contract(tmp_path, mapping=_mapping_case(case))
    _clear(res, elapsed, case, exit_codes=(2,))
    assert "hostile.yaml" in res.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("case", list(CASES))
def test_draft_refuses_a_hostile_models_mapping(tmp_path, case):
    """Fault: a models mapping file (checks run draft --mapping) that is an alias bomb, too deep, has duplicate keys,
    non-UTF-8 bytes or 3 MiB

    Must: the draft stops with one clear error naming the mapping file (exit 2) within bounded time and memory; no
    bundle is written
    """
    with hf_setup(tmp_path, models=1) as (env, hub):
        write_ledger(tmp_path / "ledger.csv", models=1, base=50.0)
        blob = CASES[case] if case != "duplicate-keys" else b'"Model 0 7B": {repo: a/b}\n"Model 0 7B": {repo: c/d}\n'
        (tmp_path / "models.yaml").write_bytes(blob)
        res, elapsed = _run(draft_args(tmp_path), tmp_path, env)
    _clear(res, elapsed, case, exit_codes=(2,))
    assert "models.yaml" in res.stderr
    assert not (tmp_path / "bundle").exists()


@pytest.mark.parametrize("case", list(CASES))
def test_upload_refuses_a_hostile_metadata_yaml(tmp_path, case):
    """Fault: a processed cache whose metadata.yaml is an alias bomb, too deep, has duplicate keys, non-UTF-8 bytes or 3
    MiB (`checks run upload --from-cache`)

    Must: one clear error naming metadata.yaml (exit 2) within bounded time and memory; nothing is uploaded
    """
    cache = make_method_cache(tmp_path / "cache")
    text = (cache / "metadata.yaml").read_bytes()
    hostile = {
        "alias-bomb": _bomb().encode() + text.replace(b"tags: []", b"tags: *l8"),
        "deep-nesting": text.replace(b"tags: []", b"tags: " + b"[" * 20_000 + b"]" * 20_000),
        "duplicate-keys": text + b"method: Other\n",
        "non-utf8": text.replace(b"tags: []", b"tags: [\xff\xfe]"),
        "huge": text + b"# " + b"x" * (3 << 20) + b"\n",
    }[case]
    (cache / "metadata.yaml").write_bytes(hostile)
    res, elapsed = _run(
        upload_args(tmp_path / "cache"),
        tmp_path,
    )
    _clear(res, elapsed, case, exit_codes=(2,))
    assert "metadata.yaml" in res.stderr


def test_validate_refuses_control_characters(tmp_path):
    """Fault: an .eval_results draft holding a control character (U+001F), which YAML forbids

    Must: `checks hf validate` reports that file as an input it cannot read, with the reason (exit 2), no traceback
    """
    bad = tmp_path / "bundle" / "drafts" / "bad--model" / ".eval_results" / "b.yaml"
    bad.parent.mkdir(parents=True)
    bad.write_text('- dataset:\n    id: org/bench\n    task_id: main\n  value: 1.5\n  notes: "a\x1fb"\n')
    res, _ = _run(["hf", "validate", "bundle", "--benchmark-id", "org/bench", "--task-id", "main"], tmp_path)
    assert "Traceback" not in res.stdout + res.stderr
    assert res.returncode == 2 and "bundle/drafts/bad--model/.eval_results/b.yaml:" in res.stdout
