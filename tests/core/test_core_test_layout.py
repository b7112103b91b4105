"""The tests' own layout, as pytest lays out its tree: one directory per area, each with its conftest.py.

The rule is mechanical so that a test file arriving from another branch is placed without a
judgement call: ``test_<area>_<rest>.py`` lives in ``tests/<area>/``, where ``<area>`` is the
first word after ``test_``. Nothing but conftest.py sits at the top of tests/; helpers live in
``tests/support/`` and are imported as ``tests.support.<module>`` (CONTRIBUTING.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import ROOT, TESTS

#: directories below tests/ that hold no tests: the shared helpers and the fixture data
NOT_AREAS = {"support", "fixtures", "real_runs"}


def areas(tests: Path = TESTS) -> set[str]:
    return {
        path.name
        for path in tests.iterdir()
        if path.is_dir() and path.name not in NOT_AREAS and not path.name.startswith((".", "_"))
    }


def misplaced(tests: Path = TESTS) -> list[str]:
    """Every file that breaks the layout, each with where it belongs."""
    known = areas(tests)
    found = [
        f"{path.relative_to(tests.parent)}: only conftest.py sits at the top of tests/; "
        + (
            f"move it to tests/{_area(path)}/ (git mv)"
            if _area(path) in known
            else "a test goes in tests/<area>/test_<area>_*.py, a helper in tests/support/"
        )
        for path in sorted(tests.glob("*.py"))
        if path.name != "conftest.py"
    ]
    for path in sorted(tests.glob("*/**/test_*.py")):
        where = path.relative_to(tests).parts[0]
        if where in NOT_AREAS - {"support"}:
            continue
        if where not in known or _area(path) != where or len(path.relative_to(tests).parts) != 2:
            found.append(
                f"{path.relative_to(tests.parent)}: a test of area {_area(path)!r} lives in tests/{_area(path)}/ "
                f"(the first word after test_ names its directory; rename it test_{where}_*.py to keep it here)"
            )
    found += [
        f"tests/{area}/: an area holds its fixtures in a conftest.py of its own"
        for area in sorted(known)
        if not (tests / area / "conftest.py").is_file()
    ]
    return found


def _area(path: Path) -> str:
    return path.stem.removeprefix("test_").partition("_")[0]


def test_every_test_file_sits_in_the_directory_its_name_says():
    assert not misplaced(), "\n".join(misplaced())


@pytest.mark.parametrize(
    ("files", "words"),
    [
        (
            ["test_core_x.py"],
            "tests/test_core_x.py: only conftest.py sits at the top of tests/; move it to tests/core/",
        ),
        (["tabarena/test_core_x.py"], "tests/tabarena/test_core_x.py: a test of area 'core' lives in tests/core/"),
        (["core/deep/test_core_x.py"], "tests/core/deep/test_core_x.py: a test of area 'core' lives in tests/core/"),
        (["helper.py"], "tests/helper.py: only conftest.py sits at the top of tests/; a test goes in tests/<area>/"),
        (["support/test_core_x.py"], "tests/support/test_core_x.py: a test of area 'core' lives in tests/core/"),
        (["hf/test_hf_x.py"], "tests/hf/: an area holds its fixtures in a conftest.py of its own"),
    ],
)
def test_a_misplaced_file_is_named_with_where_it_belongs(tmp_path, files, words):
    tests = tmp_path / "tests"
    for area in ("core", "tabarena", "support"):
        (tests / area).mkdir(parents=True)
        (tests / area / "conftest.py").write_text("")
    for rel in files:
        (tests / rel).parent.mkdir(parents=True, exist_ok=True)
        (tests / rel).write_text("")
    assert any(words in line for line in misplaced(tests)), misplaced(tests)


def test_the_layout_rule_is_the_one_contributing_states():
    text = (ROOT / "CONTRIBUTING.md").read_text()
    assert "`tests/<area>/test_<area>_*.py`" in text
    for area in sorted(areas()):
        assert f"`tests/{area}/`" in text, f"CONTRIBUTING.md says nothing of the area tests/{area}/"
