"""docs/reliability.md is generated from the reliability markers and must be current."""

from tests.support.reliability import DOC, render


def test_reliability_doc_is_current():
    assert DOC.read_text() == render(), (
        "run `python tests/support/reliability.py --write` and commit docs/reliability.md"
    )
