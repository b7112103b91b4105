"""docs/reliability.md is generated from the row each proving test states in its docstring, and must be current."""

from tests.support.reliability import DOC, render


def test_reliability_doc_is_current():
    assert DOC.read_text() == render(), (
        "run `python tests/support/reliability.py --write` and commit docs/reliability.md"
    )
