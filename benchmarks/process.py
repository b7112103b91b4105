"""How long ``checks run process`` (native engine) takes on a large generated run, against the bare read loop.

It processes the run of the inspect benchmark (benchmarks/_tenk_run.py: about 10,000 files of
full-size arrays) and compares with that benchmark's bare loop, the least any processing must
do: read, gunzip and unpickle every results.pkl once, in one process. ``checks run process``
is measured as a whole command (interpreter start, rules, index, tables, raw copy) into an
empty cache root, with no index cache left by ``checks inspect``, so every raw file is decoded. Target: under 2x the bare loop.
The raw copy creates a directory and a file per result: run it on the disk the cache will live
on (mkdir speed differs a lot between file systems). Each run writes into a cache root of its
own and all are deleted at the end, and before each run the disks are flushed and left to go
idle, so no run pays for the write-back or deletion of the previous one's 10,000 files.
Also printed: process right after ``checks inspect`` (which keeps the index cache process reads).

    .venv/bin/python benchmarks/process.py [--files 10000] [--dir DIR] [--no-cache-raw]

``--dir`` generates the run there once and reuses it (the same directory as inspect.py's ``--dir``).
"""

from __future__ import annotations

import sys

# benchmarks/ holds inspect.py, which would shadow the standard library's inspect for this script
sys.path[:] = [p for p in sys.path if p not in ("", __file__.rsplit("/", 1)[0])]

import argparse
import importlib.util
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

tenk = importlib.util.module_from_spec(spec := importlib.util.spec_from_file_location(
    "tenk_run", Path(__file__).with_name("_tenk_run.py")))
spec.loader.exec_module(tenk)

INFO = '''from tabarena.models._method_metadata import MethodMetadata

bench = MethodMetadata.config(method="Nori", suite="bench-process", ag_key="TA-NORI", is_bag=True,
                              validation_protocol="8x1")
'''


def _disk_activity() -> tuple[int, ...]:
    """I/O completed and in flight on every block device (Linux); empty elsewhere."""
    counts = []
    for stat in Path("/sys/block").glob("*/stat"):
        fields = [int(x) for x in stat.read_text().split()]
        counts += [fields[0], fields[4], fields[8], *fields[11:12], *fields[15:16]]
    return tuple(counts)


def settle(limit: float = 60.0) -> float:
    """Flush, then wait until the disks are idle for a second: a run should not pay for the
    write-back and discards of the one before. Returns the seconds waited."""
    start = time.perf_counter()
    os.sync()
    before = _disk_activity()
    while time.perf_counter() - start < limit:
        time.sleep(1.0)
        now = _disk_activity()
        if now == before:
            break
        before = now
    return time.perf_counter() - start


def timed_process(data: Path, root: Path, work: Path, *extra: str) -> float:
    """One whole ``checks run process`` into the empty cache root ``root`` (the first processing of a method)."""
    checks = Path(sys.executable).with_name("checks")
    cmd = [str(checks), "run", "process", str(data), "--method-metadata", f"{work / 'info.py'}:bench",
           "--cache-root", str(root), *extra]
    waited = settle()
    if waited > 5:
        print(f"(waited {waited:.0f} s for the disk to go idle before this run)")
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"checks run process failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="about how many results.pkl to generate")
    parser.add_argument("--dir", type=Path, default=None, help="generate here and reuse on later runs")
    parser.add_argument("--no-cache-raw", action="store_true", help="Measure process without the raw copy too.")
    args = parser.parse_args()

    work = (args.dir or Path(tempfile.mkdtemp(prefix="bench-process-"))).resolve()
    data = tenk.generate(work, args.files, os.cpu_count() or 1)
    (work / "info.py").write_text(INFO)
    files = sorted(data.rglob("results.pkl"))
    size = sum(p.stat().st_size for p in files)
    print(f"run: {len(files)} results.pkl, {size / 2**20:.0f} MiB on disk, {os.cpu_count()} CPU(s)")

    from tabarena_checks.index import default_cache_dir

    index_cache = default_cache_dir(data)
    shutil.rmtree(index_cache, ignore_errors=True)  # no inspect cache: process decodes everything
    tenk.bare_loop(files)  # warm the page cache so both sides read from memory
    bare = min(tenk.bare_loop(files)[0], tenk.bare_loop(files)[0])
    roots = work / "caches"
    shutil.rmtree(roots, ignore_errors=True)
    try:
        runs = [timed_process(data, roots / f"run{i}", work) for i in range(2)]
        print(f"bare read loop (read + gunzip + unpickle, 1 process), best of 2: {bare:.2f}s")
        for took in runs:
            print(f"checks run process: {took:.2f}s  = {took / bare:.2f}x the bare loop (target < 2x)")
        if args.no_cache_raw:
            no_raw = timed_process(data, roots / "no-raw", work, "--no-cache-raw")
            print(f"checks run process --no-cache-raw: {no_raw:.2f}s  = {no_raw / bare:.2f}x the bare loop")
        inspect = subprocess.run([str(Path(sys.executable).with_name("checks")), "inspect", str(data)],
                                 capture_output=True, text=True, cwd=work)
        if inspect.returncode != 0:
            raise SystemExit(f"checks inspect failed (exit {inspect.returncode}):\n{inspect.stderr[-3000:]}")
        after = timed_process(data, roots / "after-inspect", work)
        print(f"checks run process after checks inspect (index cache read, nothing decoded): {after:.2f}s  "
              f"= {after / bare:.2f}x the bare loop")
    finally:
        shutil.rmtree(index_cache, ignore_errors=True)
        shutil.rmtree(roots, ignore_errors=True)
    if args.dir:
        print(f"files kept in {work} (the next run with --dir reuses the generated run)")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
