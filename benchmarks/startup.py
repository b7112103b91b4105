"""Startup cost: median wall time of `checks rules` and `checks --version` against `python -c pass`.

Target (issue 2): `checks rules` under 4x the bare interpreter start. The project's modules are
byte-compiled first, as pip does for an installed package: an editable install under
PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on every start.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 15


def median_time(argv: list[str]) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    import compileall
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for package in ("checks", "tabarena_checks", "hfmigrate_checks"):
        compileall.compile_dir(root / package, quiet=1)
    base = median_time([sys.executable, "-c", "pass"])
    floor = median_time([sys.executable, "-c", "import pluggy, click, attrs, importlib.metadata"])
    rules = median_time([sys.executable, "-m", "checks", "rules"])
    version = median_time([sys.executable, "-m", "checks", "--version"])
    print(f"python -c pass     median {base * 1000:7.1f} ms")
    print(f"import floor       median {floor * 1000:7.1f} ms  ratio {floor / base:5.2f}x  "
          "(pluggy, click, attrs, importlib.metadata: what any `checks rules` must import)")
    print(f"checks --version   median {version * 1000:7.1f} ms  ratio {version / base:5.2f}x")
    print(f"checks rules       median {rules * 1000:7.1f} ms  ratio {rules / base:5.2f}x  (target < 4x)")


if __name__ == "__main__":
    main()
