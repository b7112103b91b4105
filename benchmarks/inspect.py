"""Benchmark: index + inference over a large generated run, against a bare read/gunzip/unpickle loop.

    .venv/bin/python benchmarks/inspect.py                 # 1,800 files in a temp dir (issue 27's target)
    .venv/bin/python benchmarks/inspect.py --files 10000   # larger
    .venv/bin/python benchmarks/inspect.py --dir /tmp/run  # generate once, reuse on later runs

Figures printed (one process = this one; the index may use worker processes):
- bare loop: read + gzip.decompress + plain pickle.loads of every file in one process, the
  floor any single-process reader pays (it does not even check what it loads);
- cold: what `checks inspect` computes, with no cache: build_index (restricted unpickler,
  per-file facts, fidelity checks, parquet cache write), split by method, the inference and
  TA306's checks over the index (SQL, each then memoised next to the cache), and its ratio to
  the bare loop (target <= 1.0);
- warm: the same with the cache in place (unchanged directories are not listed again, every
  file is stat'ed, the inference and TA306's problems come from their memos), and the cold/warm
  speed-up (target >= 20);
- peak RSS of this process and of its largest child (target < 1 GiB);
- the hostile payloads of tests/support/hostile_pickles.py read by the same reader: every one must be refused
  (the speed is not bought by reading less carefully).
CPU seconds (this process plus its finished children) are printed next to wall times: on a
shared machine the wall-clock gain of the workers depends on how many cores are free. On Linux the
share of the machine's CPU time the hypervisor gave to other guests during each bare and cold run is
printed too (``steal`` in /proc/stat): the cold run needs both cores, so it loses more to them.
Heavy imports happen before timing; the page cache is warmed first so both sides read from memory.
Each figure is measured ``--rounds`` times, alternating, and the best is kept (other processes
on a shared machine only ever add time).
"""

from __future__ import annotations

import os
import sys

# this file is named like the stdlib's inspect module: keep its directory off the import path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import duckdb  # noqa: E402,F401  (imported before timing)
import pyarrow.parquet  # noqa: E402,F401

from tabarena_checks.raw import index  # noqa: E402

tenk = importlib.util.module_from_spec(
    spec := importlib.util.spec_from_file_location("tenk_run", Path(__file__).with_name("_tenk_run.py"))
)
spec.loader.exec_module(tenk)
hostile = importlib.util.module_from_spec(
    spec := importlib.util.spec_from_file_location(
        "hostile_pickles", Path(__file__).resolve().parent.parent / "tests" / "support" / "hostile_pickles.py"
    )
)
spec.loader.exec_module(hostile)


def _refused() -> tuple[int, int]:
    """(refused, all) of the hostile payloads, each read as a results.pkl would be."""
    from tabarena_checks.raw import reader

    payloads = hostile.payloads()
    refused = 0
    for name, blob in payloads.items():
        try:
            reader.unpickle(name, blob)
        except reader.RawFileError:
            refused += 1
    return refused, len(payloads)


def _host_ticks() -> tuple[int, int] | None:
    """(stolen, all) CPU ticks of the whole machine so far, from Linux's /proc/stat; None elsewhere."""
    try:
        with open("/proc/stat") as stat:
            ticks = [int(field) for field in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return (ticks[7] if len(ticks) > 7 else 0), sum(ticks)


def _stolen(before: tuple[int, int] | None) -> float | None:
    """The share of the machine's CPU time since ``before`` that the hypervisor gave to other guests."""
    after = _host_ticks()
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1])


def _shares(stolen: list[float | None]) -> str:
    return "/".join("?" if share is None else f"{share:.0%}" for share in stolen)


def _runs(measures: list[tuple[float, float]]) -> str:
    return "/".join(f"{wall:.2f}" for wall, _ in measures)


def _mib(kib: int) -> float:
    return kib / 1024


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1_800, help="about how many results.pkl to generate")
    parser.add_argument("--dir", type=Path, default=None, help="generate here and reuse on later runs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3, help="measure each figure this many times, keep the best")
    args = parser.parse_args(argv)

    with tenk.run_dir(args.dir, "checks-bench-") as out:
        data = tenk.generate(out, args.files, args.workers)
        paths = [data / f.path for f in index.scan(data)]
        size = sum(p.stat().st_size for p in paths)
        for p in paths:  # warm the page cache so both sides read from memory
            p.read_bytes()
        cache = out / "bench-cache"
        shutil.rmtree(cache, ignore_errors=True)

        load_before = os.getloadavg()
        bares, colds, warms = [], [], []
        stolen_bare, stolen_cold = [], []
        for _ in range(args.rounds):
            ticks = _host_ticks()
            bares.append(tenk.bare_loop(paths))
            stolen_bare.append(_stolen(ticks))
            shutil.rmtree(cache, ignore_errors=True)
            ticks = _host_ticks()
            seconds, built, _, infs = tenk.index_and_infer(data, cache, args.workers)
            stolen_cold.append(_stolen(ticks))
            (inf,) = infs.values()
            assert built.decoded == len(paths) and inf.n_results == len(paths)
            colds.append(seconds)
            seconds, again, _, _ = tenk.index_and_infer(data, cache, args.workers)
            assert again.decoded == 0
            warms.append(seconds)
        (bare, bare_cpu), (cold, cold_cpu), (warm, _) = min(bares), min(colds), min(warms)

        own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(
            f"files: {len(paths)} results.pkl, {size / 2**20:.0f} MiB on disk; workers: {args.workers} "
            f"on {os.cpu_count()} CPUs; python {sys.version.split()[0]}; load average before/after "
            f"{load_before[0]:.1f}/{os.getloadavg()[0]:.1f}"
        )
        print(
            f"rounds: {args.rounds}, best of each shown; all: bare {_runs(bares)}, cold {_runs(colds)}, "
            f"warm {_runs(warms)}"
        )
        if any(share is not None for share in stolen_bare + stolen_cold):
            # a share above a few percent means the figures say as much about the host as about the code
            print(f"CPU stolen by other guests (/proc/stat): bare {_shares(stolen_bare)}, cold {_shares(stolen_cold)}")
        print(f"bare loop (read+gunzip+unpickle, 1 process): {bare:7.2f} s   ({bare_cpu:.2f} CPU-s)")
        print(
            f"cold index+inference:                        {cold:7.2f} s   cold/bare = {cold / bare:.2f}x   "
            f"({cold_cpu:.2f} CPU-s in all processes, {cold_cpu / bare_cpu:.2f}x the bare loop's)"
        )
        print(f"warm index+inference (cached):               {warm:7.2f} s   cold/warm = {cold / warm:.1f}x")
        print(
            f"peak RSS: this process {_mib(own):.0f} MiB, largest child {_mib(child):.0f} MiB, "
            f"sum {_mib(own + child):.0f} MiB"
        )
        refused, total = _refused()
        print(f"hostile payloads refused by the same reader: {refused}/{total}")


if __name__ == "__main__":
    main()
