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

    .venv/bin/python benchmarks/process.py [--files 10000 | --small] [--dir DIR] [--no-cache-raw]
        [--tabarena-python .venv-tabarena/bin/python [--tabarena-timeout S]]

With ``--tabarena-python`` it also times TabArena 0.1.0 processing the same run (its
``process_method`` defaults, through tests/support/tabarena_driver.py) and prints wall time, CPU seconds
and peak RSS of both and their ratio (target: native >= 20x faster at no more than TabArena's peak
RSS); both write the same files, the HPO simulation included. The memory compared is each command's
whole process tree (native's decoding and HPO-simulation workers included): the peak of the sum of
their proportional set sizes (a page shared by k processes counts 1/k in each), sampled every 0.2 s;
the peak RSS of each command's own process is printed beside it. ``--tabarena-timeout S`` stops TabArena after S
seconds and reports how far it got (the 10,000-file run takes TabArena hours).
``--small`` is the 189-file run (7 configs x 3 tasks x 3 repeats x 3 folds).

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

tenk = importlib.util.module_from_spec(
    spec := importlib.util.spec_from_file_location("tenk_run", Path(__file__).with_name("_tenk_run.py"))
)
spec.loader.exec_module(tenk)

INFO = """from tabarena.models._method_metadata import MethodMetadata

bench = MethodMetadata.config(method="Nori", suite="bench-process", ag_key="TA-NORI", is_bag=True,
                              validation_protocol="8x1", config_default="Nori_c1_default_BAG_L1")
"""

#: the same declaration for TabArena 0.1.0, which predates validation_protocol (both simulate the HPO trajectories)
TABARENA_INFO = """from tabarena.models._method_metadata import MethodMetadata

bench = MethodMetadata.config(method="Nori", suite="bench-process", ag_key="TA-NORI", is_bag=True,
                              config_default="Nori_c1_default_BAG_L1")
"""


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


def tree_pss(pid: int) -> float:
    """MiB of memory ``pid`` and every process below it hold now: the sum of their proportional set
    sizes (Linux /proc; a page shared by k processes counts 1/k in each, so a forked worker's pages
    shared with its parent count once). 0 elsewhere."""
    below: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        below.setdefault(parent, []).append(int(stat.parent.name))
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        todo += below.get(current, [])
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
    return total / 1024


#: CPU seconds (user + system) of the last measured command and the children it waited for
LAST_CPU = [0.0]
#: the peak memory of the last measured command's whole process tree (its workers included), sampled
LAST_TREE = [0.0]


def measured(cmd: list[str], cwd: Path, what: str, timeout: float | None = None) -> tuple[float, float]:
    """Run ``cmd`` after the disks went idle: (wall seconds, peak RSS in MiB of the command's own process);
    its CPU seconds go to ``LAST_CPU``, the peak memory of its process tree (:func:`tree_pss`, sampled
    every 0.2 s, worker processes included) to ``LAST_TREE`` (on a shared machine CPU seconds say more
    than wall time).

    With ``timeout``, a command still running then is stopped and the seconds returned are negative
    (it did not finish); the peak RSS is what it reached until then."""
    waited = settle()
    if waited > 5:
        print(f"(waited {waited:.0f} s for the disk to go idle before this run)")
    LAST_TREE[0] = 0.0
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd)
        stopped = False
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if timeout is not None and time.perf_counter() - start > timeout:
                proc.kill()
                stopped = True
                _, status, usage = os.wait4(proc.pid, 0)
                break
            LAST_TREE[0] = max(LAST_TREE[0], tree_pss(proc.pid))
            time.sleep(0.2)
        took = time.perf_counter() - start
        LAST_CPU[0] = usage.ru_utime + usage.ru_stime
        if stopped:
            return -took, usage.ru_maxrss / 1024
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            out.seek(0)
            raise SystemExit(f"{what} failed (exit {proc.returncode}):\n{out.read().decode()[-4000:]}")
    return took, usage.ru_maxrss / 1024


def timed_process(data: Path, root: Path, work: Path, *extra: str) -> float:
    """One whole ``checks run process`` into the empty cache root ``root`` (the first processing of a method)."""
    return process_with_rss(data, root, work, *extra)[0]


def process_with_rss(data: Path, root: Path, work: Path, *extra: str) -> tuple[float, float]:
    checks = Path(sys.executable).with_name("checks")
    return measured(
        [
            str(checks),
            "run",
            "process",
            str(data),
            "--method-metadata",
            f"{work / 'info.py'}:bench",
            "--cache-root",
            str(root),
            *extra,
        ],
        work,
        "checks run process",
    )


def tabarena_process(
    python: str, data: Path, root: Path, work: Path, timeout: float | None = None
) -> tuple[float, float]:
    """TabArena 0.1.0's own processing of the same run (process_method's defaults: raw copy, HPO
    trajectories), through the driver the parity tests use."""
    driver = Path(__file__).resolve().parent.parent / "tests" / "support" / "tabarena_driver.py"
    (work / "tabarena_info.py").write_text(TABARENA_INFO)
    return measured(
        [os.path.abspath(python), str(driver), "process", str(data), f"{work / 'tabarena_info.py'}:bench", str(root)],
        work,
        "TabArena's processing",
        timeout,
    )


def small_run(work: Path) -> Path:
    """The 189-file run: 7 configs x 3 tasks x 3 repeats x 3 folds, full-size arrays."""
    from tabarena_checks.synth.generate import generate_run

    stamp, data = work / ".bench-189", work / "data"
    if not (stamp.exists() and data.is_dir()):
        shutil.rmtree(data, ignore_errors=True)
        generate_run(work, configs=7, repeats=3, folds=3, validation_protocol="8x1", workers=os.cpu_count() or 1)
        stamp.touch()
    return data


def after_inspect(data: Path, roots: Path, work: Path, bare: float) -> None:
    """Process right after ``checks inspect``, which leaves the index cache process reads."""
    inspect = subprocess.run(
        [str(Path(sys.executable).with_name("checks")), "inspect", str(data)], capture_output=True, text=True, cwd=work
    )
    if inspect.returncode != 0:
        raise SystemExit(f"checks inspect failed (exit {inspect.returncode}):\n{inspect.stderr[-3000:]}")
    after = timed_process(data, roots / "after-inspect", work)
    print(
        f"checks run process after checks inspect (index cache read, nothing decoded): {after:.2f}s  "
        f"= {after / bare:.2f}x the bare loop"
    )


def compare(args, data: Path, roots: Path, work: Path, files: list[Path]) -> None:
    """Native and TabArena 0.1.0 processing the same run, one after the other: wall time, CPU seconds and
    peak RSS of each whole process tree (workers included)."""
    load_before = os.getloadavg()[0]
    native, native_own = process_with_rss(data, roots / "native-rss", work)
    native_cpu, native_rss = LAST_CPU[0], LAST_TREE[0]
    theirs, their_own = tabarena_process(args.tabarena_python, data, roots / "tabarena", work, args.tabarena_timeout)
    their_cpu, their_rss = LAST_CPU[0], LAST_TREE[0]
    load_after = os.getloadavg()[0]
    print(
        f"checks run process (native, whole cache incl. HPO results and trajectories): {native:.2f}s, "
        f"peak memory {native_rss:.0f} MiB (PSS of the process tree, decoding and simulation workers "
        f"included; peak RSS of its own process {native_own:.0f} MiB)"
    )
    name = "TabArena 0.1.0 process_method (native backend, raw copy, HPO results and trajectories)"
    if theirs < 0:
        done = len(list((roots / "tabarena").glob("artifacts/*/methods/*/processed/model_predictions/*/*")))
        splits = len({p.parent.parent for p in files})
        phase = (
            "before any HPO trajectory"
            if done < splits
            else "all of its per-split phase; it was in the HPO trajectories or writing"
        )
        print(
            f"{name}: not finished after {-theirs:.0f}s (stopped), peak memory {their_rss:.0f} MiB until then "
            f"(peak RSS {their_own:.0f} MiB); it had processed {done} of {splits} task splits ({phase})"
        )
        print(
            f"native is more than {-theirs / native:.1f}x faster (target >= 20x), at most "
            f"{native_rss / their_rss:.2f}x TabArena's peak memory so far (target <= 1x)"
        )
    else:
        print(
            f"{name}: {theirs:.2f}s, peak memory {their_rss:.0f} MiB (PSS of the process tree; peak RSS "
            f"{their_own:.0f} MiB)"
        )
        print(
            f"native is {theirs / native:.1f}x faster (target >= 20x) at {native_rss / their_rss:.2f}x "
            f"TabArena's peak memory (target <= 1x), for the same files"
        )
    print(
        f"CPU seconds (user + system, with waited-for children): native {native_cpu:.1f}, TabArena "
        f"{their_cpu:.1f}{' until stopped' if theirs < 0 else ''} ({their_cpu / native_cpu:.1f}x)"
    )
    print(f"load average (1 min) before/after: {load_before:.1f}/{load_after:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000, help="about how many results.pkl to generate")
    parser.add_argument("--dir", type=Path, default=None, help="generate here and reuse on later runs")
    parser.add_argument("--no-cache-raw", action="store_true", help="Measure process without the raw copy too.")
    parser.add_argument(
        "--small",
        action="store_true",
        help="The 189-file run (7 configs x 3 tasks x 3 repeats x 3 folds) instead of ~10,000 files.",
    )
    parser.add_argument(
        "--compare-only",
        action="store_true",
        help="With --tabarena-python: only the native and TabArena runs, not the bare-loop rounds.",
    )
    parser.add_argument(
        "--tabarena-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="Stop TabArena's processing after this long and report it as not finished.",
    )
    parser.add_argument(
        "--tabarena-python",
        default=None,
        metavar="PYTHON",
        help="Also time TabArena 0.1.0 processing the same run with this interpreter "
        "(e.g. .venv-tabarena/bin/python, which make tabarena-env builds).",
    )
    args = parser.parse_args()

    work = (args.dir or Path(tempfile.mkdtemp(prefix="bench-process-"))).resolve()
    data = small_run(work) if args.small else tenk.generate(work, args.files, os.cpu_count() or 1)
    (work / "info.py").write_text(INFO)
    files = sorted(data.rglob("results.pkl"))
    size = sum(p.stat().st_size for p in files)
    print(f"run: {len(files)} results.pkl, {size / 2**20:.0f} MiB on disk, {os.cpu_count()} CPU(s)")

    from tabarena_checks.raw.index import default_cache_dir

    index_cache = default_cache_dir(data)
    shutil.rmtree(index_cache, ignore_errors=True)  # no inspect cache: process decodes everything
    tenk.bare_loop(files)  # warm the page cache so both sides read from memory
    bare = min(tenk.bare_loop(files)[0], tenk.bare_loop(files)[0])
    roots = work / "caches"
    shutil.rmtree(roots, ignore_errors=True)
    try:
        runs = [] if args.compare_only else [timed_process(data, roots / f"run{i}", work) for i in range(2)]
        print(f"bare read loop (read + gunzip + unpickle, 1 process), best of 2: {bare:.2f}s")
        for took in runs:
            print(f"checks run process: {took:.2f}s  = {took / bare:.2f}x the bare loop (target < 2x)")
        if args.no_cache_raw and not args.compare_only:
            no_raw = timed_process(data, roots / "no-raw", work, "--no-cache-raw")
            print(f"checks run process --no-cache-raw: {no_raw:.2f}s  = {no_raw / bare:.2f}x the bare loop")
        if args.tabarena_python:
            compare(args, data, roots, work, files)
        if not args.compare_only:
            after_inspect(data, roots, work, bare)
    finally:
        shutil.rmtree(index_cache, ignore_errors=True)
        shutil.rmtree(roots, ignore_errors=True)
    if args.dir:
        print(f"files kept in {work} (the next run with --dir reuses the generated run)")
    else:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
