"""Reliability and security rows: a marker for the tests that prove them, and the generator of docs/reliability.md.

Mark a test with ``@reliability(fault="...", must="...")``; ``python tests/reliability.py --write``
regenerates the table and ``tests/test_reliability_doc.py`` fails when it is out of date.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "reliability.md"
HEADER = """# Reliability and security

Generated from the test suite by `python tests/reliability.py --write`; do not edit by hand.
Each row is a fault or a hostile input, what must happen, and the test that proves it.
Every test named here runs in `make test`; the load runs live in `benchmarks/`.
"""


def reliability(*, fault: str, must: str):
    """Mark a test as the proof of one row of docs/reliability.md."""
    return pytest.mark.reliability(fault=fault, must=must)


def _rows_in(path: Path) -> list[tuple[str, str, str]]:
    rows = []
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for deco in node.decorator_list:
            if isinstance(deco, ast.Call) and getattr(deco.func, "id", getattr(deco.func, "attr", None)) == "reliability":
                kw = {k.arg: ast.literal_eval(k.value) for k in deco.keywords}
                rows.append((kw["fault"], kw["must"], f"tests/{path.name}::{node.name}"))
    return rows


def render() -> str:
    sections = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        rows = _rows_in(path)
        if not rows:
            continue
        lines = [f"## {path.stem.removeprefix('test_').replace('_', ' ')}", "",
                 "| Fault or input | What must happen | Test |", "|---|---|---|"]
        lines += [f"| {f} | {m} | `{t}` |" for f, m, t in rows]
        sections.append("\n".join(lines))
    return HEADER + "\n" + "\n\n".join(sections) + "\n"


if __name__ == "__main__":
    text = render()
    if "--write" in sys.argv:
        DOC.write_text(text)
    else:
        sys.stdout.write(text)
