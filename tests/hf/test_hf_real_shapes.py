"""The real-table suite for header shapes: setting rows of large model cards and deep HTML headers.

Scored cell by cell like tests/hf/test_hf_real_tables.py, on the tables of tests/support/real_shapes.py
(no network at test time).
"""

from __future__ import annotations

import pytest

from checks import InputError
from hfmigrate_checks.source import ledger
from tests.support.real_shapes import CASES
from tests.support.ledgers import score


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_sampled_cell_of_a_header_shape_is_read_as_github_renders_it(case, tmp_path):
    rows, wrong = score(case, tmp_path)
    assert not wrong, f"{case.name} ({case.source}): {len(wrong)} of {len(case.cells)} cells wrong: {wrong}"
    assert not [r for r in rows if r.status == "ok" and "(no footnote definition" in r.qualifiers]


def test_the_header_suite_covers_six_tables_from_five_repositories():
    assert len(CASES) >= 6 and len({c.source.split(":")[0] for c in CASES}) >= 4
    assert sum(len(c.cells) for c in CASES) >= 20


def test_a_header_whose_groups_are_models_is_not_read_as_rows_without_being_told(tmp_path):
    case = next(c for c in CASES if c.name == "persuarl-model-groups")
    path = tmp_path / "README.md"
    path.write_text(case.text)
    with pytest.raises(InputError, match="pass --models-as-columns"):
        ledger.import_source(path, "markdown", heading=case.options["heading"])
