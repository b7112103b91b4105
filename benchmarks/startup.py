"""Startup cost: median wall time of the `checks` launcher against `python -c pass`.

Target (issue 2): `checks rules` under 4x the bare interpreter start. Loading the framework
(pluggy, click, attrs, importlib.metadata: the "import floor") alone exceeds that, so the target
is met by the replay cache (docs/cli.md): the figure that counts is the cached `checks rules`,
measured after one warm-up run in a fresh cache directory. The uncached figure shows what a miss
(or CHECKS_NO_CACHE=1) costs. The project's modules are byte-compiled first, as pip does for an
installed package: an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile
every module on every start.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = 15


def median_time(argv: list[str], env: dict[str, str] | None = None) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    import compileall
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for package in ("checks", "tabarena_checks", "hfmigrate_checks"):
        compileall.compile_dir(root / package, quiet=1)
    checks = [sys.executable, "-m", "checks"]
    base = median_time([sys.executable, "-c", "pass"])
    floor = median_time([sys.executable, "-c", "import pluggy, click, attrs, importlib.metadata"])
    version = median_time([*checks, "--version"])
    uncached = median_time([*checks, "rules"], {**os.environ, "CHECKS_NO_CACHE": "1"})
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKS_")}
        env["CHECKS_CACHE_DIR"] = cache
        warm, check = (
            subprocess.run([*checks, "rules"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, env={**env, "CHECKS_CACHE_TRACE": "1"}).stderr.replace("checks: cache: ", "")
            for _ in range(2)
        )
        cached = median_time([*checks, "rules"], env)
    print(f"python -c pass          median {base * 1000:7.1f} ms")
    print(f"import floor            median {floor * 1000:7.1f} ms  ratio {floor / base:5.2f}x  "
          "(pluggy, click, attrs, importlib.metadata: what loading the plugins must import)")
    print(f"checks --version        median {version * 1000:7.1f} ms  ratio {version / base:5.2f}x")
    print(f"checks rules, uncached  median {uncached * 1000:7.1f} ms  ratio {uncached / base:5.2f}x  "
          "(CHECKS_NO_CACHE=1; also the cost of every cache miss)")
    print(f"checks rules, cached    median {cached * 1000:7.1f} ms  ratio {cached / base:5.2f}x  "
          "(target < 4x: met only on a hit)")
    print(f"  cache trace: warm-up run {' '.join(warm.split())!r}, next run {' '.join(check.split())!r}")


if __name__ == "__main__":
    main()
