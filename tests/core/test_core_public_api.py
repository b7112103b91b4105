"""The built-in plugins use the framework like a third party: only ``checks``' public API.

The public API is ``checks.__all__`` plus the modules in ``checks.PUBLIC_MODULES``. A
built-in plugin reaching into another framework module (``checks.config``, ``checks.runner``)
would hide what a third-party plugin cannot do; this test names the file and the import.
"""

from __future__ import annotations

import ast
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
    sneaky.write_text("from checks.runner import evaluate\nfrom checks import io, rule\nimport checks.config\n")
    found = [(m, n) for _, m, n in _framework_imports(sneaky) if _private_use(m, n)]
    assert found == [("checks.runner", "evaluate"), ("checks.config", "")]
