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

## Decisions

- **Evidence upload trusts is authenticated, and the raw files are decoded again.** TA407
  counts a process decision record only when its HMAC-SHA256 verifies with a 32-byte key kept
  in the user's own cache directory (`decision-key`, 0600, never in a repository), and the
  record names the digest of the manifest every cache file is checked against (at TA407 and
  again while staging). A submitter, a pull request or anyone who can write the cache or the
  log cannot make a record that verifies. Behind it, staging reads every results.pkl it zips
  with the safe reader (0.07 s for a 40 MiB result), so even a leaked key publishes no pickle
  the reader refuses. The cache tables are vouched for by the signed manifest only: checking
  them against the raw files would mean processing the run a second time at every upload. The
  decision log may not lie inside the data or the cache (TA408) and must be a regular file.
- **Local plugins** come only from the configuration in use and are off with
  `--no-local-plugins` or `CHECKS_NO_LOCAL_PLUGINS=1` (pytest's `--noconftest`);
  `CHECKS_DISABLE_PLUGIN_AUTOLOAD` keeps pytest's meaning (entry points only).
- **The publishing gates TA104, TA106 and TA107** are excused only by a waiver (owner, expiry),
  never by an inline comment. **Waivers** need a visible letter or digit in their reason and
  owner; a waiver of a required rule or a publishing gate names its one target and ends within
  366 days.
- **Exit codes** stay the run's own when only printing failed (docs/cli.md).
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
            if (
                isinstance(deco, ast.Call)
                and getattr(deco.func, "id", getattr(deco.func, "attr", None)) == "reliability"
            ):
                kw = {k.arg: ast.literal_eval(k.value) for k in deco.keywords}
                rows.append((kw["fault"], kw["must"], f"tests/{path.name}::{node.name}"))
    return rows


def render() -> str:
    sections = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        rows = _rows_in(path)
        if not rows:
            continue
        lines = [
            f"## {path.stem.removeprefix('test_').replace('_', ' ')}",
            "",
            "| Fault or input | What must happen | Test |",
            "|---|---|---|",
        ]
        lines += [f"| {f} | {m} | `{t}` |" for f, m, t in rows]
        sections.append("\n".join(lines))
    return HEADER + "\n" + "\n\n".join(sections) + "\n"


if __name__ == "__main__":
    text = render()
    if "--write" in sys.argv:
        DOC.write_text(text)
    else:
        sys.stdout.write(text)
