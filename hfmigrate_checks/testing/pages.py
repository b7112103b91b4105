"""Large README pages built to a size, and the read of a page measured in a fresh interpreter.

Two shapes of a 1 MB page: many sections of prose, lists and code with a small results table in
every fourth one (:func:`sectioned_readme`), and one results table of tens of thousands of rows
(:func:`one_table_readme`). tests/hf/test_hf_reader_bounds.py holds them and the hostile pages of
issue 39 to its budgets with :func:`read_in_fresh_interpreter`, and benchmarks/hf_ledger.py prints
what the ledgers of the large pages cost the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

#: run in a fresh interpreter: the process CPU time of the read (so builds sharing two cores do not
#: fail a budget a quiet machine keeps) and the peak RSS it added over the interpreter with its imports
#: loaded (the imports alone come near 200 MB and do not grow with the page)
_MEASURE = """
import json, sys, time
from checks import InputError
from hfmigrate_checks.source import ledger

def high_water():  # VmHWM starts at exec; ru_maxrss would carry over the peak of the process that started this one
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))

path, options = sys.argv[1], json.loads(sys.argv[2])
imported = high_water()
start = time.process_time()
try:
    outcome = f"{len(ledger.import_source(path, 'markdown', **options))} rows"
except InputError as exc:
    outcome = f"refused: {exc}"
seconds = time.process_time() - start
peak = high_water()
print(json.dumps({"seconds": seconds, "mb": (peak - imported) / 1024, "outcome": outcome}))
"""


def read_in_fresh_interpreter(path: Path, options: dict, timeout: float = 120) -> dict:
    """``seconds`` (CPU), ``mb`` (RSS added) and ``outcome`` (``N rows`` or ``refused: why``) of the
    ledger of the Markdown page at ``path`` read with ``options`` in a new interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"reading {path} failed: {done.stderr}")
    return json.loads(done.stdout)


def sectioned_readme(size: int) -> str:
    """A large README as they come: sections of prose, lists, code and results tables with legends."""
    parts = ["# Project\n\nAn introduction with a [link](https://example.org) and `code`.\n"]
    n = 0
    while sum(map(len, parts)) < size:
        n += 1
        prose = " ".join(f"Sentence {i} of section {n} speaks about models." for i in range(20))
        parts.append(f"\n## Section {n}\n\n{prose}\n\n")
        parts.append(
            "".join(f"- item {i} with **bold** text and a [ref](https://example.org/{i})\n" for i in range(10))
        )
        parts.append("\n```python\n" + "".join(f"x_{i} = run(model, shots={i})\n" for i in range(10)) + "```\n\n")
        if n % 4 == 0:
            rows = "".join(f"| model-{n}-{i} | {i}.5 | {i}.25 | **{i}.75** |\n" for i in range(30))
            parts.append(f"| Model | MMLU | GSM8K† | HumanEval |\n|---|---|---|---|\n{rows}\n† with tools\n")
    return "".join(parts)


#: the lines of :func:`one_table_readme` above its first row
ONE_TABLE_HEAD = "# Leaderboard\n\n| Model | MMLU | GSM8K |\n|---|---|---|\n"


def one_table_readme(size: int) -> str:
    """A README that is one results table of about ``size`` bytes: two scores a row, as many rows as fit
    (1 MB: about 24,500 rows, 49,000 scores)."""
    rows, total, n = [], len(ONE_TABLE_HEAD), 0
    while total < size:
        line = f"| model-{n:05d}-instruct | {n % 100}.{n % 7}5 | {(n * 3) % 100}.{n % 9}1 |\n"
        rows.append(line)
        total += len(line)
        n += 1
    return ONE_TABLE_HEAD + "".join(rows)


def scores_of_one_table(text: str) -> int:
    """How many scores :func:`one_table_readme` printed: two a row."""
    return 2 * (text.count("\n") - ONE_TABLE_HEAD.count("\n"))
