"""docs/reliability.md is generated from the row each proving test states in its docstring, and must be current."""

import pytest

from tests.support.reliability import DOC, render, row


def test_reliability_doc_is_current():
    assert DOC.read_text() == render(), (
        "run `python tests/support/reliability.py --write` and commit docs/reliability.md"
    )


def test_a_row_is_two_paragraphs_each_joined_into_one_line():
    assert row("Fault: a file\nthat lies\n\nMust: refused,\nexit 2", "t.py::test") == (
        "a file that lies",
        "refused, exit 2",
    )
    assert row("Checks the happy path.", "t.py::test") is None and row(None, "t.py::test") is None


@pytest.mark.parametrize("doc", ["Fault: a file", "Fault: a file\n\nMust: refused\n\nmore", "Fault: a\n\nmust: b"])
def test_a_row_in_another_form_is_an_error_naming_the_test(doc):
    with pytest.raises(ValueError, match=r"^t\.py::test: its docstring starts a reliability row"):
        row(doc, "t.py::test")
