"""The run the inspect, process and report benchmarks share, what ``checks inspect`` computes on it, and the bare
read loop they compare with.

About 10,000 results.pkl of full-size arrays: configs x 3 TabArena-v0.1 tasks x 10 repeats
x 3 folds. The benchmarks load it by file path: this directory also holds inspect.py, which
must stay off ``sys.path`` so it does not shadow the standard library's inspect.
"""

from __future__ import annotations

import contextlib
import gzip
import math
import pickle
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

TASKS = (363612, 363614, 363619)
REPEATS = 10
FOLDS = 3


@contextlib.contextmanager
def run_dir(given: Path | None, prefix: str) -> Iterator[Path]:
    """Where the run is generated: ``--dir`` when given (kept, so later runs reuse it), else a temporary
    directory removed when the benchmark ends."""
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        yield Path(tmp)


def generate(out: Path, files: int, workers: int) -> Path:
    """``out/data`` holding about ``files`` results.pkl; a run generated before with the same shape is reused."""
    from tabarena_checks.synth import generate as synth

    configs = max(1, math.ceil(files / (len(TASKS) * REPEATS * FOLDS)))
    stamp = out / f".bench-{configs}x{len(TASKS)}x{REPEATS}x{FOLDS}"
    data = out / "data"
    if stamp.exists() and data.is_dir():
        return data
    if data.exists():
        shutil.rmtree(data)
    started = time.perf_counter()
    synth.generate_run(
        out, configs=configs, repeats=REPEATS, folds=FOLDS, tasks=TASKS, validation_protocol="8x1", workers=workers
    )
    stamp.touch()
    print(
        f"generated {configs} configs x {len(TASKS)} tasks x {REPEATS * FOLDS} splits in "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    return data


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def index_and_infer(data: Path, cache: Path, workers: int):
    """What ``checks inspect`` computes: the index, split by method, and each method's inference.

    Returns ((wall, CPU) seconds, index, {prefix: method's index}, {prefix: inference}).
    """
    from tabarena_checks.raw import index
    from tabarena_checks.report.inspect_cli import infer_and_judge

    started, cpu = time.perf_counter(), cpu_seconds()
    built = index.build_index(data, cache_dir=cache, workers=workers, progress=False)
    methods = index.split_methods(built)
    infs, _ = infer_and_judge(methods)  # with TA306's checks, judged from the index's facts as `checks inspect` does
    return (time.perf_counter() - started, cpu_seconds() - cpu), built, methods, infs


def bare_loop(paths: list[Path]) -> tuple[float, float]:
    """Read, gunzip and unpickle every file in this one process: (wall, CPU) seconds.

    The floor any reader pays; it uses the plain unpickler, which is fine for our own files.
    """
    started, cpu = time.perf_counter(), cpu_seconds()
    for path in paths:
        data = path.read_bytes()
        pickle.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return time.perf_counter() - started, cpu_seconds() - cpu
