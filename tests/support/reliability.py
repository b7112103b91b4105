"""Reliability and security rows: a marker for the tests that prove them, and the generator of docs/reliability.md.

A row is the docstring of the test that proves it, two paragraphs: ``Fault: ...`` then ``Must: ...``
(plain prose, so two rows never read as the same code). ``python tests/support/reliability.py --write``
regenerates the table and ``tests/reliability/test_reliability_doc.py`` fails when it is out of date; as a
pytest plugin (tests/conftest.py) this module marks each such test ``reliability(fault, must)``, so
``pytest -m reliability`` runs the proofs.
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "reliability.md"
HEADER = """# Reliability and security

Generated from the test suite by `python tests/support/reliability.py --write`; do not edit by hand.
Each row is a fault or a hostile input, what must happen, and the test that proves it.
Every test named here runs in `make test`; the load runs live in `benchmarks/`.

## Threat model: the publishing chain

Who can write what:

- **A submitter** writes the raw files: every results.pkl of a run, its directory layout, and the
  info.py sent with it. Nothing in them is trusted: the rules judge the bytes, and no class outside
  the reader's allow-list is published, wherever it sits (TA308).
- **A pull request** writes anything in the checkout: rules.toml (`decision_log`, waivers, plugins),
  info.py, and any cache directory inside it (a `--cache-root` there, its `.checks-source.json`
  manifest and its `.checks-staging/` zips). None of it is evidence: a cache on disk is compared with a
  build of this run before it is kept, and a staged zip is read back before it is reused.
- **Trusted**: the maintainer's user cache directory (`$CHECKS_CACHE_DIR`, else the XDG cache: the
  decision key `decision-key` and the raw index) and the key itself. The tool signs a manifest only
  with digests it computed in that run from bytes it wrote (a rerun with the same inputs builds the
  cache again and keeps the old one only if it holds exactly those bytes).

What verifies each published file before upload (every check at staging stops the upload before any
request, exit 4, naming the file; TA407 first needs a signed process record naming the manifest):

| Published file | Written by | Verified before upload |
|---|---|---|
| `raw.zip` | process: `raw/`, each copy the bytes whose sha256 the rules judged in that run | TA308 reads each results.pkl of `raw/` (no class outside the allow-list, even where nothing reads; exit 1); then each entry through `infolist()`: its name once, listed in the signed manifest, its size and sha256 those of the manifest, under `raw/<config>/<tid>/<r>_<f>/results.pkl`, read by the strict reader (no class outside the allow-list anywhere); a staged zip that fails is built again |
| `processed.zip` | process: the engine's `processed/`, digests of the bytes written in that run | each entry as above, and of the kind its name says: a parquet footer that reads, UTF-8 JSON, a label zip holding its one CSV (the `.dat` arrays by name and digest); no other name (no pickle) |
| `processed/configs_hyperparameters.json` | process (the engine) | sha256 of the signed manifest, UTF-8 JSON; the checked copy is what is sent |
| `results/*.parquet` | process (the engine) | sha256 of the signed manifest, one of the four tables TabArena writes, a parquet footer that reads; `results_checksums.json` is the MD5 of the checked copies |
| `metadata.yaml` | upload, rendered from the declaration (info.py, or with `--from-cache` the cache's metadata.yaml) and the recorded protocol | the TA1xx/TA2xx/TA4xx rules; the cache's metadata.yaml must have the sha256 of the signed manifest |

Not covered: upload does not derive the tables from the raw files again (that is a process run); a
leaked key can sign a manifest of tables that are well-formed but false; someone writing the
maintainer's cache root while an upload runs is the maintainer.

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


def row(doc: str | None, where: str) -> tuple[str, str] | None:
    """The (fault, must) the cleaned docstring of the test ``where`` states, or None when it states no row.

    A row is a docstring of exactly two paragraphs, ``Fault: ...`` then ``Must: ...``; each paragraph's
    lines join with one space. A docstring that starts with ``Fault:`` in any other form is an error,
    so a row is never dropped from the document without a word.
    """
    if not doc or not doc.startswith("Fault:"):
        return None
    paragraphs = [" ".join(part.split("\n")) for part in doc.split("\n\n")]
    if len(paragraphs) != 2 or not paragraphs[1].startswith("Must: "):
        raise ValueError(
            f"{where}: its docstring starts a reliability row but is not two paragraphs, 'Fault: ...' then "
            "'Must: ...' (split the docstring with one blank line; no other paragraph)"
        )
    return paragraphs[0].removeprefix("Fault: "), paragraphs[1].removeprefix("Must: ")


def _rows_in(path: Path) -> list[tuple[str, str, str]]:
    rows = []
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        stated = row(ast.get_docstring(node), f"{path.relative_to(ROOT).as_posix()}::{node.name}")
        if stated:
            rows.append((*stated, f"{path.relative_to(ROOT).as_posix()}::{node.name}"))
    return rows


def pytest_collection_modifyitems(items) -> None:
    """Give every test that states a row the ``reliability`` marker pyproject.toml registers."""
    for item in items:
        function = getattr(item, "function", None)
        try:
            stated = row(inspect.getdoc(function), item.nodeid) if function is not None else None
        except ValueError as err:
            raise pytest.UsageError(str(err)) from None
        if stated:
            item.add_marker(pytest.mark.reliability(fault=stated[0], must=stated[1]))


def render() -> str:
    sections = []
    for path in sorted((ROOT / "tests").rglob("test_*.py"), key=lambda path: path.name):
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
    try:
        text = render()
    except ValueError as err:
        sys.exit(f"reliability.py: {err}")
    if "--write" in sys.argv:
        DOC.write_text(text)
    else:
        sys.stdout.write(text)
