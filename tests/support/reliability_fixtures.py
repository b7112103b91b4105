"""Helpers for the fault and abuse tests: the real CLI in a child process, kills, snapshots and secret scans.

Crash tests need a process that can really die, so they start ``checks`` as a child and
send it SIGKILL; the in-process ``run_cli`` is used everywhere else because it is faster.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import pickle
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.paths import CHILD_PYTHONPATH
from tests.support.hf_fixtures import BENCHMARK_ID, TOKEN, WHOAMI, board_row, write_benchmark
from tests.support.tabarena_fixtures import Call, make_run

from checks.testing import run_cli
from hfmigrate_checks.source import ledger
from hfmigrate_checks.testing import LocalHub, set_whoami, write_model
from hfmigrate_checks.testing.migration import client_env, contract_step, draft_step
from tabarena_checks.testing.commands import process_args, upload_args

ROOT = Path(__file__).resolve().parents[2]
CHECKS = str(Path(sys.executable).with_name("checks"))

INFO_PY = """\
from tabarena.models import MethodMetadata

{var} = MethodMetadata.config(method={method!r}, suite={suite!r}, ag_key="TA-NORI", can_hpo={can_hpo}, is_bag=True,
                             compute="cpu", validation_protocol="8x1", date="2026-01-01")
"""


def write_info(
    folder: Path, *, method: str = "Nori", suite: str = "nori-2026", var: str = "nori", can_hpo: bool = False
) -> str:
    """An info.py declaring a method that matches the generated runs; returns its ``path:VARIABLE`` ref."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "info.py"
    path.write_text(INFO_PY.format(var=var, method=method, suite=suite, can_hpo=can_hpo))
    return f"{path}:{var}"


def process_json(data: Path, tmp_path: Path):
    """``checks run process DATA`` in-process with :func:`write_info`'s declaration, a cache under ``tmp_path``
    and the JSON report: what the tests of damaged runs judge."""
    ref = write_info(tmp_path / "info")
    args = process_args(data, ref, tmp_path / "cache")
    return run_cli([*args, "--format", "json"], cwd=tmp_path)


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test's environment plus ``extra``, with the helpers and the toy plugins importable in the child."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [CHILD_PYTHONPATH, env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


def start_checks(args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, preexec_fn=None):
    """``checks ARGS`` as a child process in its own process group (so a kill reaches its workers too)."""
    return subprocess.Popen(
        [CHECKS, *map(str, args)],
        cwd=cwd,
        env=child_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=preexec_fn,
    )


def run_checks(
    args: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 120, preexec_fn=None
) -> subprocess.CompletedProcess:
    proc = start_checks(args, cwd=cwd, env=env, preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def kill_after(proc: subprocess.Popen, delay: float) -> bool:
    """SIGKILL ``proc``'s whole process group after ``delay`` seconds; False when it had already finished."""
    deadline = time.monotonic() + delay
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            proc.communicate()
            return False
        time.sleep(0.005)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.communicate()
    return proc.returncode == -signal.SIGKILL


def snapshot(folder: Path, *, skip_hidden: bool = False) -> dict[str, str]:
    """``{relative path: sha256}`` of every file under ``folder`` (empty when it does not exist)."""
    out = {}
    if not folder.exists():
        return out
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if skip_hidden and any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file():
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def files_under(*folders: Path) -> list[Path]:
    return [p for folder in folders if folder.exists() for p in folder.rglob("*") if p.is_file()]


def leaks(secrets: Iterable[str], texts: Iterable[str] = (), files: Iterable[Path] = ()) -> list[str]:
    """Where any of ``secrets`` occurs: ``'<text n>'`` or a file path (binary files are scanned as bytes)."""
    secrets = [s for s in secrets if s]
    found = []
    for n, text in enumerate(texts):
        found += [f"text {n}: {s[:6]}..." for s in secrets if s in text]
    for path in files:
        blob = path.read_bytes()
        found += [f"{path}: {s[:6]}..." for s in secrets if s.encode() in blob]
    return found


def outside(folder: Path, paths: Iterable[Path]) -> list[Path]:
    """The ``paths`` that are NOT below ``folder`` (after resolving links and '..')."""
    root = folder.resolve()
    return [p for p in paths if not p.resolve().is_relative_to(root)]


# --------------------------------------------------------------------------- the HF migration on a local Hub

CONTRACT_YAML = """metric: accuracy
direction: higher_is_better
unit: percent
source_name: Toy leaderboard
columns:
  Main: main
  Hard: hard
"""


def model_label(i: int) -> str:
    return f"Model {i} 7B"


def model_repo(i: int) -> str:
    return f"fill-org/Model-{i}-7B"


def write_hub(root: Path, models: int, *, token: str | None = None) -> None:
    """The official toy benchmark, the test account and ``models`` plain model repos (state ``new``)."""

    write_benchmark(root)
    set_whoami(root, WHOAMI, token=token or TOKEN)
    for i in range(models):
        write_model(root, model_repo(i), {"README.md": f"# {model_repo(i)}\n"})


def write_mapping(path: Path, models: int) -> None:
    path.write_text("".join(f'"{model_label(i)}": {{repo: {model_repo(i)}}}\n' for i in range(models)))


def write_ledger(path: Path, *, models: int, base: float) -> None:
    """Two printed scores per model; ``base`` shifts every value (a new version of the leaderboard)."""
    rows = [
        board_row(model_label(i), task, f"{base + i / 10 + k:.1f}", 10 + i)
        for i in range(models)
        for k, task in enumerate(("Main", "Hard"))
    ]
    ledger.write(path, rows)


@contextmanager
def hf_setup(tmp: Path, *, models: int, token: str | None = None, **hub_options):
    """A running LocalHub with ``models`` models, plus contract.json and models.yaml in ``tmp``; yields the env."""

    write_hub(tmp / "hub", models, token=token)
    write_mapping(tmp / "models.yaml", models)
    (tmp / "contract.yaml").write_text(CONTRACT_YAML)
    with LocalHub(tmp / "hub", **hub_options) as hub:
        env = client_env(tmp / "hf-home", token or TOKEN, hub.endpoint)
        made = run_cli(contract_step(BENCHMARK_ID), env=env, cwd=tmp)
        assert made.exit_code == 0, made.stdout + made.stderr
        hub.clear_requests()
        yield env, hub


def draft_args(tmp: Path, bundle: str = "bundle") -> list[str]:
    """``checks run draft`` on the files :func:`hf_setup` wrote, by absolute path (a child may run elsewhere)."""
    return draft_step(
        BENCHMARK_ID,
        bundle=str(tmp / bundle),
        contract=str(tmp / "contract.json"),
        ledger=str(tmp / "ledger.csv"),
        mapping=str(tmp / "models.yaml"),
    )


CONFIG = "TA-Nori_c1_default_BAG_L1"


def swap_same_size(victim, marker) -> None:
    """Replace ``victim`` by a code-running pickle of exactly its size, its mtime restored (like ``rsync -a``)."""
    before = victim.stat()
    payload = gzip.compress(pickle.dumps({"framework": CONFIG, "x": Call(os.system, f"touch '{marker}'")}))
    assert len(payload) < before.st_size
    victim.write_bytes(payload + b"\0" * (before.st_size - len(payload)))  # NUL padding after gzip is accepted
    os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert victim.stat().st_size == before.st_size and victim.stat().st_mtime_ns == before.st_mtime_ns


def verdicts_by_code(res) -> dict:
    """A JSON run's verdicts, by rule code."""
    return {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}


def processed_for_upload(tmp_path: Path):
    """A run processed into ``tmp_path/cache``: the method's cache folder and the upload command for it."""
    data = make_run(tmp_path / "run", tasks=(363612,), folds=2, validation_protocol="8x1")
    ref = write_info(tmp_path / "info")
    cache_root = tmp_path / "cache"
    res = run_cli(process_args(data, ref, cache_root), cwd=tmp_path)
    assert res.exit_code == 0, res.stdout + res.stderr
    method = cache_root / "artifacts" / "nori-2026" / "methods" / "Nori"
    return method, upload_args(cache_root, "--format", "json", method="Nori", suite="nori-2026")


MEASURED = """
import resource, sys, time
from checks.cli import main
start = time.perf_counter()
try:
    code = main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
with open("/proc/self/status") as fh:  # VmHWM starts at exec; ru_maxrss would count the forking parent's pages
    peak = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
peak = max(peak, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)  # the decode workers, if any
print(f"MEASURED peak_kib={peak} seconds={time.perf_counter() - start:.2f}", file=sys.stderr)
sys.exit(code)
"""


def measured(args, cwd, timeout=120):
    """``checks ARGS`` in a child with a deadline; returns (exit code, stdout, stderr, peak MiB, seconds)."""
    proc = subprocess.run(
        [sys.executable, "-c", MEASURED, *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=timeout,
    )
    line = proc.stderr.rsplit("MEASURED ", 1)[-1].split()
    peak = int(line[0].split("=")[1]) / 1024 if len(line) == 2 else float("nan")
    seconds = float(line[1].split("=")[1]) if len(line) == 2 else float("nan")
    return proc.returncode, proc.stdout, proc.stderr, peak, seconds
