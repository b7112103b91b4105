"""The real-table suite: every sampled cell of tables shaped like public leaderboards, scored.

The tables and their hand-read ground truth are in tests/support/real_tables.py (no network at test
time). A cell is right when the ledger row of that model and task prints the same value,
has the same status and the same variant (what the draft writes as notes).
"""

from __future__ import annotations

import pytest

from checks import InputError
from hfmigrate_checks.source import ledger
from tests.support.ledgers import score
from tests.support.real_tables import CASES


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_sampled_cell_is_read_as_github_renders_it(case, tmp_path):
    _rows, wrong = score(case, tmp_path)
    assert not wrong, f"{case.name} ({case.source}): {len(wrong)} of {len(case.cells)} cells wrong: {wrong}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_row_marked_ok_carries_an_unexplained_marker(case, tmp_path):
    rows, _ = score(case, tmp_path)
    for row in rows:
        if row.status == "ok":
            assert "(no footnote definition" not in row.qualifiers and "(ambiguous" not in row.qualifiers, row


def test_the_suite_covers_at_least_eighteen_tables_and_every_shape():
    assert len(CASES) >= 18
    options = [c.options for c in CASES]
    assert any(o.get("models_as_columns") for o in options)
    assert any("<table>" in c.text for c in CASES) and any(c.fmt == "csv" for c in CASES)
    assert sum(len(c.cells) for c in CASES) >= 40


@pytest.mark.parametrize(
    "name", ["llama-card-base", "llama-card-instruct", "llama-card-multilingual", "llama-card-csv-export"]
)
def test_a_model_card_read_without_its_orientation_is_refused_not_guessed(name, tmp_path):

    case = next(c for c in CASES if c.name == name)
    path = tmp_path / ("board.csv" if case.fmt == "csv" else "README.md")
    path.write_text(case.text)
    options = {k: v for k, v in case.options.items() if k == "heading"}
    with pytest.raises(InputError, match="pass --models-as-columns"):
        ledger.import_source(path, case.fmt, **options)
