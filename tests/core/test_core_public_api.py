"""The built-in plugins use the framework like a third party: only ``checks``' public API.

The public API is ``checks.__all__`` plus the modules in ``checks.PUBLIC_MODULES``. A
built-in plugin reaching into another framework module (``checks.config_load``, ``checks.runner``)
would hide what a third-party plugin cannot do; this test names the file and the import.
``checks.PUBLIC_MODULES`` is the one list of the public modules: the docs that name them
(docs/architecture.md, docs/writing-plugins.md) are held equal to it here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import checks

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = ["tabarena_checks", "hfmigrate_checks", *sorted(p.name for p in (ROOT / "plugins").iterdir())]


def _framework_imports(path: Path):
    """(line, module, name) for every import of the framework in ``path``."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and node.module.split(".")[0] == "checks"
        ):
            for alias in node.names:
                yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "checks":
                    yield node.lineno, alias.name, ""


def _private_use(module: str, name: str) -> bool:
    public_modules = {f"checks.{m}" for m in checks.PUBLIC_MODULES}
    if module == "checks":
        return bool(name) and name not in checks.__all__ and name not in checks.PUBLIC_MODULES
    return module not in public_modules


def _sources():
    for package in PLUGIN_PACKAGES:
        base = ROOT / package if (ROOT / package).is_dir() else ROOT / "plugins" / package
        yield from sorted(base.rglob("*.py"))


@pytest.mark.parametrize("path", list(_sources()), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_plugins_import_only_the_public_api(path):
    private = [
        f"{path.relative_to(ROOT)}:{line}: {module}{'.' + name if name else ''}"
        for line, module, name in _framework_imports(path)
        if _private_use(module, name)
    ]
    assert not private, "import these through `checks` (or make them public there):\n" + "\n".join(private)


def test_every_public_name_resolves_and_is_used_or_handed_to_hooks():
    used = {name for path in _sources() for _, module, name in _framework_imports(path) if module == "checks"}
    handed_to_hooks = {"ConfigError", "PluginError", "Outcome", "Verdict", "Rule", "RunContext", "Preview"}
    for name in checks.__all__:
        assert getattr(checks, name) is not None
        assert name in used or name in handed_to_hooks, f"checks.{name} is public but no plugin needs it"


def test_the_check_catches_a_private_import(tmp_path):
    sneaky = tmp_path / "sneaky.py"
    sneaky.write_text("from checks.runner import evaluate\nfrom checks import io, rule\nimport checks.config_load\n")
    found = [(m, n) for _, m, n in _framework_imports(sneaky) if _private_use(m, n)]
    assert found == [("checks.runner", "evaluate"), ("checks.config_load", "")]


def _named_in(doc: str, starts: str) -> tuple[set[str], set[str]]:
    """The ``checks.X`` modules and the plain names in backticks in the paragraph or list item of ``doc``
    that starts with ``starts`` (up to the next blank line or list item)."""
    text = (ROOT / "docs" / doc).read_text(encoding="utf-8")
    assert starts in text, f"docs/{doc}: the passage starting {starts!r} is gone; keep the list of public API there"
    passage = re.split(r"\n\s*\n|\n- ", text[text.index(starts) :], maxsplit=1)[0]
    modules = set(re.findall(r"`checks\.(\w+)`", passage)) - {"PUBLIC_MODULES", "__all__"}
    names = set(re.findall(r"`(\w+)`", passage))
    return modules, names


@pytest.mark.parametrize(
    ("doc", "starts"),
    [("architecture.md", "import each other; every plugin"), ("writing-plugins.md", "- the modules of")],
)
def test_the_docs_name_the_public_modules_of_checks(doc, starts):
    """One list, ``checks.PUBLIC_MODULES``; a doc naming a module it lacks (or missing one) fails, naming both."""
    modules, _ = _named_in(doc, starts)
    public = set(checks.PUBLIC_MODULES)
    assert modules == public, (
        f"docs/{doc} names the public modules {sorted(modules)}, checks.PUBLIC_MODULES holds {sorted(public)}: "
        f"add {sorted(public - modules)}, remove {sorted(modules - public)}"
    )


def test_the_plugin_tutorial_names_every_public_name_of_checks():
    _, names = _named_in("writing-plugins.md", "- the names of `checks.__all__`")
    public = set(checks.__all__)
    assert names & public == public, f"docs/writing-plugins.md: add {sorted(public - names)} to the names of checks"


def test_the_package_docstring_lists_no_public_modules_of_its_own():
    """The docstring points at ``PUBLIC_MODULES`` rather than keeping a second list that could drift."""
    assert "PUBLIC_MODULES" in checks.__doc__
    assert not re.findall(r":mod:`checks\.\w+`", checks.__doc__), "name PUBLIC_MODULES instead of listing modules"
