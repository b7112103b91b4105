"""docs/architecture.md names every module and sub-package of the three packages, and nothing else.

The page is the map a newcomer reads before the code, so a module added without its row, or a
row left behind by a move, makes it wrong without anyone noticing. Each package has a section
whose heading names it (``## The framework, `checks/```, ``### `tabarena_checks/`...``); inside
it, the tables are read: a row whose first cell is a sub-package (```raw/```) names that
sub-package and, by bare file name, its modules (```index.py```); a name with a slash
(```engine/api.py```) is read from the package's top, as is every bare name in any other row.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("checks", "tabarena_checks", "hfmigrate_checks")

_HEADING = re.compile(r"^(#+) ")
_SUB_PACKAGE = re.compile(r"^`(\w+)/`$")
_MODULE = re.compile(r"`((?:\w+/)*\w+\.py)`")


def _sections(text: str) -> dict[str, list[str]]:
    """The lines of each package's section: from a heading naming ```package/``` to the next heading of its level
    or above."""
    sections: dict[str, list[str]] = {}
    current, level = None, 0
    for line in text.splitlines():
        heading = _HEADING.match(line)
        if heading:
            named = [p for p in PACKAGES if f"`{p}/`" in line]
            if named:
                current, level = named[0], len(heading.group(1))
                sections.setdefault(current, [])
                continue
            if current is not None and len(heading.group(1)) <= level:
                current = None
        if current is not None:
            sections[current].append(line)
    return sections


def _named(lines: list[str]) -> set[str]:
    """The modules (``raw/index.py``) and sub-packages (``raw/``) the table rows of a section name, from the top
    of their package."""
    named: set[str] = set()
    for line in lines:
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        sub = _SUB_PACKAGE.match(cells[0])
        where = f"{sub.group(1)}/" if sub else ""
        if sub:
            named.add(where)
        for name in _MODULE.findall(line):
            named.add(name if "/" in name else where + name)
    return named


def _present(package: str) -> set[str]:
    """The modules (but ``__init__.py``) and sub-packages of ``package``, from its top."""
    base = ROOT / package
    modules = {p.relative_to(base).as_posix() for p in base.rglob("*.py") if p.name != "__init__.py"}
    subs = {f"{p.parent.relative_to(base).as_posix()}/" for p in base.rglob("*/__init__.py")}
    return modules | subs


SECTIONS = _sections(DOC.read_text(encoding="utf-8"))


@pytest.mark.parametrize("package", PACKAGES)
def test_the_architecture_page_names_every_module_of_the_package(package):
    assert package in SECTIONS, f"docs/architecture.md: no heading names `{package}/`; give the package its section"
    missing = sorted(_present(package) - _named(SECTIONS[package]))
    assert not missing, (
        f"docs/architecture.md does not name these of {package}/: {', '.join(missing)}; "
        "add each to the row of its sub-package (or to the package's table), saying its job"
    )


@pytest.mark.parametrize("package", PACKAGES)
def test_the_architecture_page_names_no_module_that_does_not_exist(package):
    stale = sorted(_named(SECTIONS.get(package, [])) - _present(package))
    assert not stale, (
        f"docs/architecture.md names these in {package}/, which do not exist: {', '.join(stale)}; "
        "remove them or write their new place"
    )


def test_the_reading_catches_a_missing_and_a_stale_module(tmp_path):
    """What the page says is read as meant: a sub-package row's bare names are its modules, a slash reads from
    the top, and a row of another heading's section does not count."""
    page = "\n".join(
        [
            "## The framework, `checks/`",
            "| module | job |",
            "|---|---|",
            "| `io.py`, `engine/api.py` | reads |",
            "### `tabarena_checks/`: TabArena",
            "| sub-package | job | modules |",
            "|---|---|---|",
            "| `raw/` | the raw index | `index.py`, `walk.py` (the walk) |",
            "## Where a new thing goes",
            "| `raw/` | not a table of a package | `gone.py` |",
        ]
    )
    sections = _sections(page)
    assert _named(sections["checks"]) == {"io.py", "engine/api.py"}
    assert _named(sections["tabarena_checks"]) == {"raw/", "raw/index.py", "raw/walk.py"}
