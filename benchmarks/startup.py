"""Startup cost: median wall time of `checks` commands against `python -c pass`.

Target (issue 13): `checks rules`, `checks rule CODE` and a one-file `checks precommit
info-py` at most 8x the bare interpreter start, with no cache of any kind: the plugins
import lightly (heavy libraries only inside the functions that use them). The import floor
(pluggy, click, attrs), which loading any plugin needs, is printed for scale; the plugins'
entry points are found without importlib.metadata (checks.entrypoints), so it is not part of it. The project's modules are byte-compiled first, as pip does for an installed package:
an editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on
every start.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 15
TARGET = 8.0

INFO_PY = '''from tabarena.benchmark.task.user_task import MethodMetadata

lightgbm_method_metadata = MethodMetadata(
    method="LightGBM_2026",
    method_type="config",
    date="2026-01-15",
    reference_url="https://github.com/microsoft/LightGBM",
)
'''


def medians(commands: dict[str, list[str]], cwd: str) -> dict[str, float]:
    """Median wall time of each command, sampled round-robin so a load change on a shared machine hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, argv in commands.items():
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
            samples[name].append(time.perf_counter() - start)
    return {name: statistics.median(times) for name, times in samples.items()}


def main() -> None:
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("checks", "tabarena_checks", "hfmigrate_checks"):
        compileall.compile_dir(root / package, quiet=1)
    checks = [sys.executable, "-m", "checks"]
    with tempfile.TemporaryDirectory() as work:
        (Path(work) / "info.py").write_text(INFO_PY)
        times = medians({
            "python -c pass": [sys.executable, "-c", "pass"],
            "import floor": [sys.executable, "-c", "import pluggy, click, attrs"],
            "checks --version": [*checks, "--version"],
            "checks rules": [*checks, "rules"],
            "checks rule TA101": [*checks, "rule", "TA101"],
            "checks precommit info-py": [*checks, "precommit", "info-py", "info.py"],
        }, work)
    base = times.pop("python -c pass")
    print(f"{'python -c pass':26s} median {base * 1000:7.1f} ms")
    for name, seconds in times.items():
        verdict = "" if name in ("import floor", "checks --version") else \
            f"  (target <= {TARGET:.0f}x: {'met' if seconds / base <= TARGET else 'NOT met'})"
        print(f"{name:26s} median {seconds * 1000:7.1f} ms  ratio {seconds / base:5.2f}x{verdict}")


if __name__ == "__main__":
    main()
