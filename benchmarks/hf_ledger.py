"""The ledger of a large README: CPU time and added memory of `checks hf ledger`'s read, per page shape.

Issue 39's budget: a 1 MB README's ledger in at most 2 s of CPU, in time linear in the page. Two
1 MB pages (hfmigrate_checks/testing/pages.py): one results table of about 24,500 rows (49,000
scores), and sections of prose, lists and code with 100 small tables, one of them asked for. Each
is read by ``ledger.import_source`` in a fresh interpreter after its imports (the figure the test
holds to the budget, tests/hf/test_hf_reader_bounds.py); the median of RUNS runs is printed with the
ratio to the sectioned page and to the one-table page at half its size (near 0.5 when the read is
linear), and ``python -c pass`` for scale. CPU time, not wall time: the development VM is shared.
"""

from __future__ import annotations

import sys

# benchmarks/ holds inspect.py, which would shadow the standard library's inspect for this script
sys.path[:] = [p for p in sys.path if p not in ("", __file__.rsplit("/", 1)[0])]

import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from hfmigrate_checks.testing.pages import (  # noqa: E402
    one_table_readme,
    read_in_fresh_interpreter,
    sectioned_readme,
)

RUNS = 5
BUDGET_SECONDS = 2.0


def _bare() -> float:
    """CPU seconds of ``python -c pass`` (user + system of the child)."""
    before = os.times()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    pages = {
        "one table, 1 MB": (one_table_readme(1_000_000), {}),
        "one table, 0.5 MB": (one_table_readme(500_000), {}),
        "100 tables in sections, 1 MB": (sectioned_readme(1_000_000), {"heading": "Section 400"}),
    }
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (text, options) in pages.items():
            path = Path(tmp) / "README.md"
            path.write_text(text)
            runs = [read_in_fresh_interpreter(path, options) for _ in range(RUNS)]
            figures[name] = {
                "seconds": statistics.median(r["seconds"] for r in runs),
                "mb": statistics.median(r["mb"] for r in runs),
                "scores": runs[0]["outcome"],
                "bytes": len(text.encode()),
            }
    bare = statistics.median(_bare() for _ in range(RUNS))
    load = os.getloadavg()
    print(f"load average {load[0]:.1f}/{load[1]:.1f}; python -c pass {bare * 1000:.0f} ms CPU; medians of {RUNS} runs")
    sections = figures["100 tables in sections, 1 MB"]["seconds"]
    for name, got in figures.items():
        print(
            f"{name:30} {got['bytes']:>9,} bytes {got['scores'].replace(' rows', ''):>6} scores  {got['seconds']:.3f} s CPU "
            f"({got['seconds'] / BUDGET_SECONDS:.0%} of the 2 s budget, {got['seconds'] / sections:.2f}x the "
            f"sectioned page, {got['seconds'] / bare:.0f}x python -c pass)  +{got['mb']:.0f} MB"
        )
    half = figures["one table, 0.5 MB"]["seconds"] / figures["one table, 1 MB"]["seconds"]
    print(f"half the table / the whole table: {half:.2f} (0.5 when linear)")
    print(time.strftime("measured %Y-%m-%d %H:%M UTC", time.gmtime()))


if __name__ == "__main__":
    main()
