"""The native cache against TabArena 0.1.0 itself, file by file, for every metadata shape.

TabArena is never installed in the project's environment: ``make test`` builds it in its own
(``.venv-tabarena``, from tests/tabarena-requirements.txt) and passes its python in
``CHECKS_TABARENA_PYTHON``; these tests run ``tests/support/tabarena_driver.py`` with it, which processes
the same generated run with TabArena's own code into a second cache root. Then every file is
compared: the same file list, parquet schemas equal field by field (names, Arrow types, order),
rows equal value by value in the same order, JSON and YAML equal byte for byte. Run by hand
(``pytest tests/tabarena/test_tabarena_parity.py``) they use ``.venv-tabarena`` when it exists and are
skipped otherwise; under ``make test`` a missing environment is a failure, never a skip.
"""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute  # noqa: F401  (pa.compute)
import pyarrow.parquet as pq
import pytest
from tests.support.parity import (
    DRIVER,
    DRIVER_TIMEOUT,
    HEADER,
    R2,
    compare_caches,
    compare_loaded,
    download,
    tabarena_python,
    without_protocol,
)

from checks.testing import run_cli
from tabarena_checks.synth.generate import generate_run
from tabarena_checks.testing.commands import process_args, upload_args


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


def build(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """Process the scenario's run natively and with TabArena 0.1.0; returns both method directories."""
    python = tabarena_python()
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
                process_args(data, f"{tmp_path / 'native_info.py'}:m", tmp_path / "native"),
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


def load_both(tmp_path: Path, name: str, sides=("native", "tabarena"), expect_failure=False) -> list:
    """What TabArena 0.1.0 reads back (from_yaml, load_results, load_processed) from each cache root
    (with ``expect_failure``: the output of loads that must fail)."""
    python = tabarena_python()
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


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_native_cache_equals_tabarenas_and_loads_the_same(tmp_path, name, s3_env):
    native, tabarena = build(tmp_path, name)
    protocol = SCENARIOS[name].get("protocol")
    problems = compare_caches(native, tabarena)
    if protocol is not None:
        # the one difference: the recorded protocol, a key TabArena 0.1.0 predates (PR #524 added it)
        assert problems == [p for p in problems if p.startswith("metadata.yaml: content differs")]
        assert without_protocol(native / "metadata.yaml", protocol) == (tabarena / "metadata.yaml").read_text()
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
        upload_args(tmp_path / "native", "--no-dry-run", "--verified", method=spec["method"], suite=spec["suite"]),
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
            yaml_path.write_text(without_protocol(yaml_path, protocol))
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
