"""Benchmark: the HTML run report of the 10,000-file run against the cold inspect of that run.

    .venv/bin/python benchmarks/report.py                 # 10,000 files in a temp dir
    .venv/bin/python benchmarks/report.py --dir /tmp/run  # generate once, reuse on later runs

Figures printed:
- cold inspect: what `checks inspect` computes with no cache (index, split by method, inference);
- report: what `--html` adds on top, in the same process and round: the method report dict,
  the process rules' preview verdicts and record, the heatmap, the three matplotlib plots,
  the page, and the atomic write; the first round includes importing matplotlib;
- matplotlib's import alone, in a fresh interpreter (paid once per command);
- the report's size.
Targets: report (plus the import, when it is not in the round already) <= 20% of the cold
inspect; the file under 5 MB. Each figure is the best of ``--rounds``, alternating.
"""

from __future__ import annotations

import os
import sys

# benchmarks/inspect.py is named like the stdlib's inspect module: keep this directory off the import path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import datetime as dt  # noqa: E402
import importlib.util  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

tenk = importlib.util.module_from_spec(
    spec := importlib.util.spec_from_file_location("tenk_run", Path(__file__).with_name("_tenk_run.py"))
)
spec.loader.exec_module(tenk)


def write_report(out: Path, data: Path, built, methods, infs) -> float:
    from tabarena_checks.report import html_inspect, summary as report
    from tabarena_checks.rules import raw_fields

    started = time.perf_counter()
    reports = [
        report.method_report(p, infs[p], None, dt.date.today(), raw_fields.problems(methods[p])) for p in methods
    ]
    html_inspect.write(str(out), str(data), None, built, methods, methods, reports, [])
    return time.perf_counter() - started


def import_seconds() -> float:
    code = (
        "import time; t = time.perf_counter(); import matplotlib.figure, matplotlib.backends.backend_svg; "
        "print(time.perf_counter() - t)"
    )
    return float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--dir", type=Path, default=None, help="generate here and reuse on later runs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)

    import click
    from click.globals import push_context

    from checks import plugins
    from checks.cli import App

    # the report previews the process gate with the command's plugins and rules.toml, as under `checks inspect`
    push_context(click.Context(click.Command("inspect"), obj=App(plugins.load([]), None)))

    import duckdb  # noqa: F401  (imported before timing, as in benchmarks/inspect.py)
    import pyarrow.parquet  # noqa: F401

    with tenk.run_dir(args.dir, "checks-bench-report-") as out:
        data = tenk.generate(out, args.files, args.workers)
        for path in data.rglob("results.pkl"):  # warm the page cache, as the inspect benchmark does
            path.read_bytes()
        page = out / "report.html"
        colds, reports = [], []
        for _ in range(args.rounds):
            shutil.rmtree(out / "bench-cache", ignore_errors=True)
            (seconds, _), built, methods, infs = tenk.index_and_infer(data, out / "bench-cache", args.workers)
            colds.append(seconds)
            reports.append(write_report(page, data, built, methods, infs))
        imported = import_seconds()
        cold, best, first = min(colds), min(reports), reports[0]
        size = page.stat().st_size
        print(
            f"files: {len(built.files)} results.pkl; {len(infs)} method(s), "
            f"{sum(len(i.results_per_config) for i in infs.values())} configs; workers {args.workers} on "
            f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}"
        )
        print(
            f"rounds: {args.rounds}; cold inspect {'/'.join(f'{c:.2f}' for c in colds)} s; report "
            f"{'/'.join(f'{r:.2f}' for r in reports)} s (the first includes importing matplotlib)"
        )
        print(f"cold inspect (best):                      {cold:6.2f} s")
        print(f"report, first round (with the import):    {first:6.2f} s   report/cold = {first / cold:.1%}")
        print(
            f"report, best round + import ({imported:.2f} s):    {best + imported:6.2f} s   "
            f"report/cold = {(best + imported) / cold:.1%}   (target <= 20%)"
        )
        print(f"report size:                              {size / 2**20:6.2f} MiB ({size} bytes; target < 5 MB)")


if __name__ == "__main__":
    main()
