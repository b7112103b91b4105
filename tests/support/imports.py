"""The project's import graph, read from the source (ast): what the layout and import-direction tests judge."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.support.paths import ROOT


PACKAGES = ("checks", "tabarena_checks", "hfmigrate_checks")


def project_modules(root: Path, packages=PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def lazy_package(path: Path) -> bool:
    """A package that resolves its names on first use (PEP 562 ``__getattr__``, like ``checks``): no edge leads to it,
    since importing it or a name from it imports nothing else until the name is used."""
    return path.name == "__init__.py" and any(
        isinstance(node, ast.FunctionDef) and node.name == "__getattr__" for node in ast.parse(path.read_text()).body
    )


def import_graph(root: Path = ROOT, packages=PACKAGES) -> dict[str, dict[str, int]]:
    """Module -> {project module it imports: line of the first such import}."""
    modules = project_modules(root, packages)
    lazy = {name for name, path in modules.items() if lazy_package(path)}
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, one level up per extra dot
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, *([base] if base else [])])
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                parts = target.split(".")
                for i in range(1, len(parts) + 1):  # importing a.b.c runs a and a.b first
                    dotted = ".".join(parts[:i])
                    if dotted in modules and dotted != name and dotted not in lazy:
                        edges.setdefault(dotted, node.lineno)
        graph[name] = edges
    return graph
