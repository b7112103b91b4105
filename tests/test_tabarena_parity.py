"""The native cache against TabArena 0.1.0 itself, file by file, for every metadata shape.

TabArena is never installed in the project's environment: ``make test`` builds it in its own
(``.venv-tabarena``, from tests/tabarena-requirements.txt) and passes its python in
``CHECKS_TABARENA_PYTHON``; these tests run ``tests/tabarena_driver.py`` with it, which processes
the same generated run with TabArena's own code into a second cache root. Then every file is
compared: the same file list, parquet schemas equal field by field (names, Arrow types, order),
rows equal value by value in the same order, JSON and YAML equal byte for byte. Run by hand
(``pytest tests/test_tabarena_parity.py``) they use ``.venv-tabarena`` when it exists and are
skipped otherwise; under ``make test`` a missing environment is a failure, never a skip.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import os
import pickle
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest
from s3_fixtures import BUCKET, moto_s3, s3_env, s3_proxy  # noqa: F401  (fixtures are used by name)

from checks.testing import run_cli
from tabarena_checks.synth.generate import generate_run

ROOT = Path(__file__).resolve().parent.parent
DRIVER = Path(__file__).resolve().parent / "tabarena_driver.py"
#: TabArena's processing of a small run takes 20-60 s on a loaded 2-core machine
DRIVER_TIMEOUT = 900

HEADER = "from tabarena.models._method_metadata import MethodMetadata\n\n"
#: every declaration uploads to this bucket and prefix (moto's S3 server in the tests)
R2 = 'cache_kwargs={"bucket": "tabarena", "prefix": "cache"}, '
SCENARIOS = {
    # a config method with HPO: 3 configs, 2 tasks, 3 repeats
    # (metric_error_val left out of every fold-0 result: both recompute it from the validation predictions)
    "hpo": dict(
        method="Nori",
        suite="nori-hpo",
        edits={0: ("drop_val",)},
        run=dict(configs=3, repeats=3, folds=1, tasks=(363612, 363614), bag_children=3),
        info='MethodMetadata.config(method="Nori", suite="nori-hpo", ag_key="TA-NORI", is_bag=True, '
        'can_hpo=True, config_default="Nori_c1_default_BAG_L1")',
    ),
    # one config, renamed with name_suffix and a model_key of its own
    # (disk_usage None in every fold-0 result: an int column holding None, int64 with nulls in both)
    "suffix": dict(
        method="Nori",
        suite="nori-v2",
        edits={0: ("drop_val", "disk_usage_none")},
        run=dict(configs=1, repeats=1, folds=2, tasks=(363619,), bag_children=2),
        info='MethodMetadata.config(method="Nori", suite="nori-v2", ag_key="TA-NORI", '
        'model_key="NORI-KEY", name_suffix="_v2", is_bag=True, can_hpo=False, '
        'config_default="Nori_v2_c1_default_BAG_L1")',
    ),
    # one method out of a directory holding two (the other has its own ag_key)
    # (no disk_usage key in the first config's fold-0 result: the column first appears in a later row of the
    # first split, before task all the same)
    "shared": dict(
        method="Nori",
        suite="nori-shared",
        prefix="TA-Nori",
        edits={0: ("no_disk_usage_c1",)},
        run=dict(configs=2, repeats=1, folds=2, tasks=(363612,), bag_children=2),
        other=dict(
            configs=2, repeats=1, folds=1, tasks=(363612,), name_prefix="TA-Other", method="Other", ag_key="TA-OTHER"
        ),
        info='MethodMetadata.config(method="Nori", suite="nori-shared", ag_key="TA-NORI", is_bag=True, '
        'can_hpo=True, config_default="Nori_c1_default_BAG_L1")',
    ),
    # a BeyondArena-protocol run: the native declaration names the protocol, which TabArena 0.1.0 cannot
    "beyondarena": dict(
        method="Nori",
        suite="nori-beyond",
        protocol="8x1+tiny5x5<=500+task-specific+adapt-classes",
        run=dict(configs=2, repeats=1, folds=2, tasks=(363614,), bag_children=2, validation_protocol="beyondarena"),
        info='MethodMetadata.config(method="Nori", suite="nori-beyond", ag_key="TA-NORI", '
        'is_bag=True, can_hpo=True, config_default="Nori_c1_default_BAG_L1")',
    ),
    # (hardware recorded by the fold-1 results only: those columns come after task)
    "baseline": dict(
        method="AutoGluon",
        suite="ag-2026",
        edits={1: ("hardware",)},
        run=dict(
            kind="baseline", method="AutoGluon", name_prefix="AutoGluon", repeats=1, folds=2, tasks=(363612, 363619)
        ),
        info='MethodMetadata.baseline(method="AutoGluon", suite="ag-2026")',
    ),
    "system": dict(
        method="MySys",
        suite="mysys-2026",
        run=dict(kind="system", method="MySys", name_prefix="MySys", repeats=1, folds=2, tasks=(363612, 363614)),
        info='MethodMetadata.system(method="MySys", suite="mysys-2026", name="My System", tags=("with-llm",))',
    ),
}


def _tabarena_python() -> str:
    configured = os.environ.get("CHECKS_TABARENA_PYTHON")
    if configured:
        if not Path(configured).exists():
            pytest.fail(f"CHECKS_TABARENA_PYTHON={configured} does not exist; run make tabarena-env")
        return configured
    default = ROOT / ".venv-tabarena" / "bin" / "python"
    if not default.exists():
        pytest.skip("TabArena's environment .venv-tabarena is not built (make tabarena-env); make test builds it")
    return str(default)


def build(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """Process the scenario's run natively and with TabArena 0.1.0; returns both method directories."""
    python = _tabarena_python()
    spec = SCENARIOS[name]
    method, suite, info = spec["method"], spec["suite"], spec["info"].replace("(", f"({R2}", 1)
    data = generate_run(tmp_path / "run", array_scale=0.05, workers=1, **spec["run"])
    if "edits" in spec:
        _edit(data, spec["edits"])
    if "other" in spec:
        other = generate_run(tmp_path / "other", array_scale=0.05, workers=1, **spec["other"])
        for config_dir in other.iterdir():
            config_dir.rename(data / config_dir.name)
    (tmp_path / "info.py").write_text(f"{HEADER}m = {info}\n")
    native_info = info if "protocol" not in spec else f'{info[:-1]}, validation_protocol="{spec["protocol"]}")'
    (tmp_path / "native_info.py").write_text(f"{HEADER}m = {native_info}\n")
    prefix = ["--prefix", spec["prefix"]] if "prefix" in spec else []
    env = {**os.environ, "TABARENA_CACHE": str(tmp_path / "ta-default-cache"), "PYTHONDONTWRITEBYTECODE": "1"}
    with open(tmp_path / "tabarena.log", "wb") as log:
        driver = subprocess.Popen(
            [
                python,
                str(DRIVER),
                "process",
                str(data),
                f"{tmp_path / 'info.py'}:m",
                str(tmp_path / "tabarena"),
                *prefix,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        try:
            result = run_cli(
                [
                    "run",
                    "process",
                    str(data),
                    "--method-metadata",
                    f"{tmp_path / 'native_info.py'}:m",
                    "--cache-root",
                    str(tmp_path / "native"),
                ],
                cwd=tmp_path,
            )
            assert result.exit_code == 0, result.stdout + result.stderr
            rc = driver.wait(timeout=DRIVER_TIMEOUT)
        finally:
            if driver.poll() is None:
                driver.kill()
    assert rc == 0, f"TabArena's processing failed:\n{(tmp_path / 'tabarena.log').read_text()[-4000:]}"
    rel = Path("artifacts") / suite / "methods" / method
    return tmp_path / "native" / rel, tmp_path / "tabarena" / rel


#: edits of generated results, by name
EDITS = {
    # TabArena 0.1.0 recomputes a missing metric_error_val on load
    "drop_val": lambda r: r.pop("metric_error_val"),
    "disk_usage_none": lambda r: r["method_metadata"].update(disk_usage=None),
    "no_disk_usage_c1": lambda r: "_c1_" in r["framework"] and r["method_metadata"].pop("disk_usage"),
    # a baseline's method_metadata with hardware figures
    "hardware": lambda r: r.update(method_metadata={"num_cpus": 8, "disk_usage": 5_000_000}),
}


def _edit(data: Path, edits: dict[int, tuple[str, ...]]) -> None:
    """Apply the named :data:`EDITS` to the results of each fold (``{fold: names}``)."""
    for path in data.rglob("results.pkl"):
        result = pickle.loads(gzip.decompress(path.read_bytes()))  # our own generated files
        for name in edits.get(result["task_metadata"]["fold"], ()):
            EDITS[name](result)
        path.write_bytes(gzip.compress(pickle.dumps(result)))


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


def _without_protocol(path: Path, protocol: str) -> str:
    lines = path.read_text().splitlines(keepends=True)
    assert f"validation_protocol: {protocol}\n" in lines
    lines.remove(f"validation_protocol: {protocol}\n")
    return "".join(lines)


def load_both(tmp_path: Path, name: str, sides=("native", "tabarena"), expect_failure=False) -> list:
    """What TabArena 0.1.0 reads back (from_yaml, load_results, load_processed) from each cache root
    (with ``expect_failure``: the output of loads that must fail)."""
    python = _tabarena_python()
    spec = SCENARIOS[name]
    outs, procs = [], []
    for side in sides:
        out = tmp_path / f"loaded-{side}"
        log = open(tmp_path / f"load-{side}.log", "wb")  # noqa: SIM115 - closed below
        procs.append(
            (
                subprocess.Popen(
                    [python, str(DRIVER), "load", str(tmp_path / side), spec["method"], spec["suite"], str(out)],
                    stdout=log,
                    stderr=subprocess.STDOUT,
                ),
                log,
                side,
            )
        )
        outs.append(out)
    for proc, log, side in procs:
        try:
            rc = proc.wait(timeout=DRIVER_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
        output = (tmp_path / f"load-{side}.log").read_text()
        if expect_failure:
            assert rc != 0, f"TabArena loaded the {side} cache"
            outs[sides.index(side)] = output
        else:
            assert rc == 0, f"TabArena could not load the {side} cache:\n{output[-3000:]}"
    return outs


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


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_native_cache_equals_tabarenas_and_loads_the_same(tmp_path, name, s3_env):
    native, tabarena = build(tmp_path, name)
    protocol = SCENARIOS[name].get("protocol")
    problems = compare_caches(native, tabarena)
    if protocol is not None:
        # the one difference: the recorded protocol, a key TabArena 0.1.0 predates (PR #524 added it)
        assert problems == [p for p in problems if p.startswith("metadata.yaml: content differs")]
        assert _without_protocol(native / "metadata.yaml", protocol) == (tabarena / "metadata.yaml").read_text()
        problems = []
    assert not problems, "\n".join(problems)
    if "other" in SCENARIOS[name]:
        assert {p.parts[-4] for p in (native / "raw").rglob("results.pkl")} == {
            "Nori_c1_default_BAG_L1",
            "Nori_r1_default_BAG_L1",
        }, "nothing of the other method"
    spec = SCENARIOS[name]
    # then the same after checks run upload (moto's S3 server) and a download into a fresh cache root
    uploaded = run_cli(
        [
            "run",
            "upload",
            "--from-cache",
            spec["method"],
            spec["suite"],
            "--cache-root",
            str(tmp_path / "native"),
            "--no-dry-run",
            "--verified",
        ],
        cwd=tmp_path,
    )
    assert uploaded.exit_code == 0, uploaded.stdout + uploaded.stderr
    download(s3_env, f"cache/artifacts/{spec['suite']}/methods/{spec['method']}/", tmp_path / "downloaded")
    published = tmp_path / "downloaded" / native.relative_to(tmp_path / "native") / "results"
    assert sorted(p.name for p in published.glob("*.parquet")) == sorted(
        p.name for p in (native / "results").glob("*.parquet")
    ), "every results table is published (the HPO results and trajectories of a config method too)"
    for table in published.glob("*.parquet"):
        assert table.read_bytes() == (native / "results" / table.name).read_bytes()
    if protocol is not None:
        # TabArena 0.1.0 refuses the key (from_yaml: unexpected keyword); it reads the rest once it is gone
        failed = load_both(tmp_path, name, sides=("downloaded",), expect_failure=True)[0]
        assert "unexpected keyword argument 'validation_protocol'" in failed
        shutil.copytree(tmp_path / "native", tmp_path / "native-as-0.1.0")
        for root in (tmp_path / "native-as-0.1.0", tmp_path / "downloaded"):
            yaml_path = root / native.relative_to(tmp_path / "native") / "metadata.yaml"
            yaml_path.write_text(_without_protocol(yaml_path, protocol))
        shutil.rmtree(tmp_path / "native")
        (tmp_path / "native-as-0.1.0").rename(tmp_path / "native")
    loaded_native, loaded_tabarena = load_both(tmp_path, name)
    loaded_download = load_both(tmp_path, name, sides=("downloaded",))[0]
    for loaded in (loaded_native, loaded_download):
        problems = compare_loaded(loaded, loaded_tabarena)
        assert not problems, "\n".join(problems)
        # load_results gives a config method's HPO results (the leaderboard's input), a baseline's model results
        assert (loaded / "results.parquet").exists() and not (loaded / "results.error").exists()
    if spec["info"].startswith("MethodMetadata.config"):
        assert set(pq.read_table(loaded_native / "results.parquet").column("method_subtype").to_pylist()) >= {"default"}


def test_comparison_catches_a_changed_type_and_a_missing_file(tmp_path):
    """The comparison itself must fail on a float64 where TabArena wrote float32, and on a missing file."""
    for side, typ in (("a", pa.float32()), ("b", pa.float64())):
        (tmp_path / side / "results").mkdir(parents=True)
        pq.write_table(pa.table({"x": pa.array([0.5], type=typ)}), tmp_path / side / "results/model_results.parquet")
    (tmp_path / "b" / "metadata.yaml").write_text("method: X\n")
    problems = compare_caches(tmp_path / "a", tmp_path / "b")
    assert any("schema differs" in p for p in problems) and any("file lists differ" in p for p in problems)
