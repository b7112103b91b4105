"""User docs state what a reader can reproduce; measurements live in benchmarks/README.md (issue 40, item 6).

A figure measured once on a shared machine (a wall time, a ratio to `python -c pass`, an instruction
count, a load average, a commit id) reads as a promise in a user doc and cannot be checked by its reader;
the docs name the script that measures it instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_DOCS = ("docs/cli.md", "docs/precommit.md", "docs/install.md")
LAB_NOTES = {
    "a time in ms or s": re.compile(r"(?<!<= )\b\d+(?:\.\d+)? ?(?:ms|s)\b"),  # a target (<= 10 s) is no measurement
    "a measured ratio": re.compile(r"\b\d+\.\d+x\b"),
    "an instruction count": re.compile(r"\b\d+(?:\.\d+)? ?M instructions|\binstructions?\b.*\b\d+ ?M\b"),
    "a load average": re.compile(r"\bload(?: average)? \d"),
    "a commit id": re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"),
    "a measurement date": re.compile(r"\bmeasured (?:on )?\d{4}-\d{2}-\d{2}"),
}


@pytest.mark.parametrize("doc", USER_DOCS)
def test_user_docs_hold_no_lab_notes(doc):
    prose = re.sub(r"```.*?```", "", (ROOT / doc).read_text(), flags=re.S)  # examples may print anything
    found = [(kind, m[0]) for kind, pattern in LAB_NOTES.items() for m in pattern.finditer(prose)]
    assert not found, f"{doc}: {found} (move the measurement to benchmarks/README.md; name the script here)"


def test_the_measurements_moved_to_the_benchmarks_page():
    page = (ROOT / "benchmarks" / "README.md").read_text()
    assert "## Figures moved from the user docs" in page and "c212ec9" in page and "18.6 MB" in page
