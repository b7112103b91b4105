"""Load run: `checks inspect` over a 100,000-file run of small generated results, under 1 GiB of memory.

    .venv/bin/python benchmarks/load_inspect.py                  # 100,000 files in a temp dir
    .venv/bin/python benchmarks/load_inspect.py --files 20000    # smaller
    .venv/bin/python benchmarks/load_inspect.py --dir /tmp/big   # generate once, reuse later

The run is written by tabarena_checks.synth.generate with the smallest arrays (16 rows per split) and
inspected by the real CLI in a child process. A sampler reads /proc every 0.1 s and sums the
resident memory of that child and all its worker processes, so the figure is the peak of the
whole process tree at one moment (not the peaks of its members added up). The baseline is the
same command on a 1% slice of the run, measured in the same invocation: per-file time and peak
memory at full size are printed as ratios to it. A second, warm run shows what the index cache
saves. Limits checked: peak tree RSS < 1 GiB; every file accounted for in the report.
"""

from __future__ import annotations

import os
import sys

# benchmarks/inspect.py is named like the stdlib's inspect module: keep this directory off the import path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

TASKS = (363612, 363614, 363619)
REPEATS = 10
FOLDS = 10
LIMIT_MIB = 1024
CHECKS = str(Path(sys.executable).with_name("checks"))


class TreeRSS:
    """Samples the summed RSS of a process and all its descendants (Linux /proc) until stopped.

    ``pss=True`` sums the proportional set sizes instead: a page that n processes share counts 1/n in
    each, so processes forked from one another are counted once for what they share (RSS counts it
    in every one of them).
    """

    def __init__(self, pid: int, interval: float = 0.1, *, pss: bool = False):
        self.pid, self.interval = pid, interval
        self._size = self._pss_kib if pss else self._rss_kib
        self.peak_kib = 0
        self.peak_procs = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
        out, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            out.append(pid)
            todo += children.get(pid, [])
        return out

    @staticmethod
    def _kib(path: str, field: str) -> int:
        """The KiB figure of the line ``FIELD:`` in a /proc file (0 once the process is gone)."""
        try:
            with open(path) as fh:
                for line in fh:
                    if line.startswith(field):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def _rss_kib(self, pid: int) -> int:
        return self._kib(f"/proc/{pid}/status", "VmRSS:")

    def _pss_kib(self, pid: int) -> int:
        return self._kib(f"/proc/{pid}/smaps_rollup", "Pss:")

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = self._tree()
            total = sum(self._size(p) for p in pids)
            if total > self.peak_kib:
                self.peak_kib, self.peak_procs = total, len(pids)
            self._stop.wait(self.interval)


def generate(out: Path, files: int, workers: int) -> tuple[Path, int]:
    """A run of about ``files`` results (rounded up to whole configs); reused when already there."""
    from tabarena_checks.synth import generate as synth

    configs = max(1, math.ceil(files / (len(TASKS) * REPEATS * FOLDS)))
    data = out / "data"
    stamp = out / f".load-{configs}x{len(TASKS)}x{REPEATS}x{FOLDS}"
    if not (stamp.exists() and data.is_dir()):
        shutil.rmtree(out, ignore_errors=True)
        started = time.perf_counter()
        synth.generate_run(
            out,
            configs=configs,
            repeats=REPEATS,
            folds=FOLDS,
            tasks=TASKS,
            validation_protocol="8x1",
            array_scale=0.0001,
            bag_children=2,
            workers=workers,
        )
        stamp.touch()
        print(f"generated {configs * len(TASKS) * REPEATS * FOLDS:,} files in {time.perf_counter() - started:.1f}s")
    return data, configs * len(TASKS) * REPEATS * FOLDS


def inspect(data: Path, cache: Path) -> dict:
    """Run `checks inspect --format json` as a child; time it and sample its process tree's memory."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [CHECKS, "inspect", str(data), "--format", "json", "--cache-dir", str(cache)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with TreeRSS(proc.pid) as rss:
        out, err = proc.communicate()
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"checks inspect failed ({proc.returncode}): {err[-2000:]}")
    report = json.loads(out)
    accounted = sum(m["counts"]["results"] + len(m["unreadable"]) for m in report["methods"])
    accounted += len(report.get("unreadable", []))
    return {"seconds": seconds, "peak_mib": rss.peak_kib / 1024, "procs": rss.peak_procs, "accounted": accounted}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None, help="generate here and keep it (default: a temp dir)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="generator processes")
    args = parser.parse_args()
    tmp = None if args.dir else Path(tempfile.mkdtemp(prefix="load-inspect-"))
    root = args.dir or tmp
    try:
        data, files = generate(root / "run", args.files, args.workers)
        base_data, base_files = generate(root / "baseline", max(1, files // 100), args.workers)
        base = inspect(base_data, root / "baseline-index")
        cold = inspect(data, root / "index")
        warm = inspect(data, root / "index")
        per_file = cold["seconds"] / files
        base_per_file = base["seconds"] / base_files
        print(
            f"baseline (1% slice): {base_files:,} files in {base['seconds']:.1f}s, peak tree RSS "
            f"{base['peak_mib']:.0f} MiB ({base['procs']} processes)"
        )
        print(
            f"cold:  {files:,} files in {cold['seconds']:.1f}s ({files / cold['seconds']:,.0f} files/s), peak tree "
            f"RSS {cold['peak_mib']:.0f} MiB ({cold['procs']} processes); per-file time x{per_file / base_per_file:.2f} "
            f"of the baseline's, memory x{cold['peak_mib'] / base['peak_mib']:.2f}"
        )
        print(
            f"warm:  {warm['seconds']:.1f}s (index cache), peak tree RSS {warm['peak_mib']:.0f} MiB; "
            f"cold/warm x{cold['seconds'] / warm['seconds']:.1f}"
        )
        ok = cold["peak_mib"] < LIMIT_MIB and warm["peak_mib"] < LIMIT_MIB and cold["accounted"] == files
        print(
            f"every file accounted for: {cold['accounted']:,}/{files:,}; limit {LIMIT_MIB} MiB: "
            f"{'OK' if ok else 'EXCEEDED or files missing'}"
        )
        return 0 if ok else 1
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
