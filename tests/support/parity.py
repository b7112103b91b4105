"""The parity tests' tools: TabArena's own environment, the driver that processes with it, and the
comparison of its cache with the native engine's (tests/tabarena/ and tests/support/fuzz_parity.py)."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest

from tests.support.paths import ROOT
from tests.support.s3_fixtures import BUCKET
from tests.support.tabarena_fixtures import build

from checks.testing import run_cli
from tabarena_checks.raw import inference, reader
from tabarena_checks.rules import raw_fields
from tabarena_checks.testing.commands import process_args


DRIVER = ROOT / "tests" / "support" / "tabarena_driver.py"


#: TabArena's processing of a small run takes 20-60 s on a loaded 2-core machine
DRIVER_TIMEOUT = 900


HEADER = "from tabarena.models._method_metadata import MethodMetadata\n\n"


#: every declaration uploads to this bucket and prefix (moto's S3 server in the tests)
R2 = 'cache_kwargs={"bucket": "tabarena", "prefix": "cache"}, '


def tabarena_python() -> str:
    configured = os.environ.get("CHECKS_TABARENA_PYTHON")
    if configured:
        if not Path(configured).exists():
            pytest.fail(f"CHECKS_TABARENA_PYTHON={configured} does not exist; run make tabarena-env")
        return configured
    default = ROOT / ".venv-tabarena" / "bin" / "python"
    if not default.exists():
        pytest.skip("TabArena's environment .venv-tabarena is not built (make tabarena-env); make test builds it")
    return str(default)


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def _zip_members(path: Path) -> list[tuple[str, bytes]]:
    """An archive's entries and their bytes (the archives' own timestamps differ)."""
    with zipfile.ZipFile(path) as zf:
        return [(info.filename, zf.read(info)) for info in zf.infolist()]


def _same_value(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def compare_caches(native: Path, tabarena: Path) -> list[str]:
    """Every difference between the two method directories (raw/ compared by its file list)."""
    problems = []
    mine = {f for f in _files(native) if f != ".checks-source.json"}
    theirs = _files(tabarena)
    if mine != theirs:
        problems.append(
            f"file lists differ: only native {sorted(mine - theirs)[:5]}, only TabArena {sorted(theirs - mine)[:5]}"
        )
    for rel in sorted(mine & theirs):
        if rel.startswith("raw/"):
            continue
        a, b = native / rel, tabarena / rel
        if rel.endswith(".parquet"):
            ta, tb = pq.read_table(a), pq.read_table(b)
            if rel == "processed/task_metadata.parquet":
                # deviation: the run's datasets and the columns its results determine, not TabArena's own frame
                tb = tb.filter(pa.compute.is_in(tb.column("dataset"), ta.column("dataset"))).select(ta.column_names)
            if ta.schema.remove_metadata() != tb.schema.remove_metadata():
                problems.append(
                    f"{rel}: schema differs:\nnative:\n{ta.schema.remove_metadata()}\n"
                    f"TabArena:\n{tb.schema.remove_metadata()}"
                )
                continue
            ra, rb = ta.to_pylist(), tb.to_pylist()
            if len(ra) != len(rb):
                problems.append(f"{rel}: {len(ra)} rows, TabArena {len(rb)}")
                continue
            for i, (x, y) in enumerate(zip(ra, rb)):
                diff = {k: (x[k], y[k]) for k in x if not _same_value(x[k], y[k])}
                if diff:
                    problems.append(f"{rel}: row {i} differs (native, TabArena): {diff}")
                    break
        elif rel.endswith(".zip"):
            if _zip_members(a) != _zip_members(b):
                problems.append(f"{rel}: archive content differs")
        elif rel == "processed/context.json":
            # deviation: TabArena records the absolute path it wrote to (its loader replaces it); native null
            ca, cb = (json.loads(p.read_text()) for p in (a, b))
            if ca["benchmark_paths"].pop("relative_path") is not None or ca != (
                cb["benchmark_paths"].pop("relative_path") and cb
            ):
                problems.append(
                    f"{rel}: content differs:\nnative:\n{a.read_text()[:800]}\nTabArena:\n{b.read_text()[:800]}"
                )
        elif a.read_bytes() != b.read_bytes():
            problems.append(
                f"{rel}: content differs:\nnative:\n{a.read_text()[:1500]}\nTabArena:\n{b.read_text()[:1500]}"
            )
    return problems


def without_protocol(path: Path, protocol: str) -> str:
    lines = path.read_text().splitlines(keepends=True)
    assert f"validation_protocol: {protocol}\n" in lines
    lines.remove(f"validation_protocol: {protocol}\n")
    return "".join(lines)


def compare_loaded(native: Path, tabarena: Path) -> list[str]:
    """Differences between what TabArena read from the two caches."""
    problems = []
    for name in ("configs.parquet", "baselines.parquet", "results.parquet"):
        a, b = native / name, tabarena / name
        if a.exists() != b.exists():
            problems.append(
                f"{name}: loaded from one cache only ({(native / 'results.error').read_text() if (native / 'results.error').exists() else ''})"
            )
        elif a.exists() and pq.read_table(a) != pq.read_table(b):
            problems.append(f"{name}: TabArena loads different tables from the two caches")
    for name in ("configs_hyperparameters.json", "summary.json", "processed.error"):
        if (native / name).exists() != (tabarena / name).exists():
            problems.append(f"{name}: from one cache only")
        elif (native / name).exists() and (native / name).read_text() != (tabarena / name).read_text():
            problems.append(
                f"{name} differs: {(native / name).read_text()[:300]} / {(tabarena / name).read_text()[:300]}"
            )
    if (native / "processed.error").exists():
        return problems
    with np.load(native / "predictions.npz") as a, np.load(tabarena / "predictions.npz") as b:
        if sorted(a.files) != sorted(b.files):
            problems.append(f"prediction keys differ: {sorted(a.files)[:4]} / {sorted(b.files)[:4]}")
        else:
            problems += [f"{k}: predictions differ" for k in a.files if not np.array_equal(a[k], b[k])]
    return problems


def download(client, prefix: str, root: Path) -> None:
    """Every object below ``prefix`` into the cache root ``root``, the zips unpacked, as a TabArena user gets them."""
    keys = [
        item["Key"]
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=prefix)
        for item in page.get("Contents", [])
    ]
    assert keys, f"nothing was uploaded under {prefix}"
    for key in keys:
        rel = key.removeprefix("cache/")
        body = client.get_object(Bucket=BUCKET, Key=key)["Body"].read()
        target = root / rel
        if rel.endswith((".zip",)) and Path(rel).stem in ("processed", "raw"):
            with zipfile.ZipFile(io.BytesIO(body)) as zf:
                zf.extractall(target.with_suffix(""))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(body)


def run_driver(*args: str, log: Path) -> None:
    start_driver(*args, log=log)()


def start_driver(*args: str, log: Path) -> Callable[[], None]:
    """The driver started in the background on ``args`` (its output in ``log``); call the result to wait for it
    and assert that it succeeded."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TABARENA_CACHE": str(log.parent / "ta-default-cache")}
    out = open(log, "wb")  # noqa: SIM115 - closed by the wait
    proc = subprocess.Popen([tabarena_python(), str(DRIVER), *args], stdout=out, stderr=subprocess.STDOUT, env=env)

    def wait() -> None:
        with out:
            try:
                rc = proc.wait(timeout=DRIVER_TIMEOUT)
            except subprocess.TimeoutExpired:
                proc.kill()
                raise
        assert rc == 0, f"TabArena failed ({' '.join(args[:1])}):\n{log.read_text()[-4000:]}"

    return wait


def read_whole(data: Path, tmp_path: Path) -> tuple[inference.Inference, list[dict]]:
    """The inference over every results.pkl of ``data`` and each one as the strict reader loads it, after asserting
    that every file was read with nothing left out (no error, no unread class, no field problem, fidelity kept)."""
    files = sorted(data.rglob("results.pkl"))
    index = build(data, cache_dir=tmp_path / "idx")
    assert len(index) == len(files) and index.errors == ()
    inf = inference.infer(index)
    assert raw_fields.problems(index) == () and inf.unread == () and inf.fidelity == ()
    # the reader processing and upload use: it takes no notes, so any class outside the allow-list raises
    return inf, [reader.load_result(path) for path in files]


def process_like_tabarena(tmp_path: Path, data: Path, tasks: Path, method: str, declaration: str) -> str:
    """Process ``data`` (custom tasks saved in ``tasks``) natively and with TabArena 0.1.0, assert both caches and
    what TabArena's loaders read from them are equal; ``--method-metadata`` reference of the declaration."""
    (tmp_path / "info.py").write_text(f"{HEADER}m = {declaration}\n")
    ref = f"{tmp_path / 'info.py'}:m"
    run_driver(
        "process", str(data), ref, str(tmp_path / "tabarena"), "--user-tasks", str(tasks), log=tmp_path / "ta.log"
    )
    result = run_cli(
        process_args(data, ref, tmp_path / "native", "--task-metadata", str(tasks / "task_metadata_legacy.parquet")),
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    suite = declaration.split('suite="')[1].split('"')[0]
    rel = Path("artifacts") / suite / "methods" / method
    native, theirs = tmp_path / "native" / rel, tmp_path / "tabarena" / rel
    assert compare_caches(native, theirs) == []
    # the task rows are TabArena's own, whole: compare_caches cuts TabArena's frame to the native columns
    assert pq.read_table(native / "processed" / "task_metadata.parquet").equals(
        pq.read_table(theirs / "processed" / "task_metadata.parquet")
    )
    for side in ("native", "tabarena"):
        run_driver(
            "load",
            str(tmp_path / side),
            method,
            suite,
            str(tmp_path / f"loaded-{side}"),
            log=tmp_path / f"load-{side}.log",
        )
    assert compare_loaded(tmp_path / "loaded-native", tmp_path / "loaded-tabarena") == []
    return ref
