"""Rules read their facts, never the command line: no rule module reads ``ctx.options``.

An action turns its options into facts or providers (``tabarena_checks/facts/providers.py``), so a rule
judges the same thing whether the run came from ``checks run``, a pre-commit hook or a test's facts,
and an option renamed on the command line changes one provider, not every rule reading it. A rule
module is any module of the packages, the bundled plugins or the scaffold's templates that declares a
rule with ``@rule``; its helpers are held to it too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from checks import scaffold

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("checks", "tabarena_checks", "hfmigrate_checks", "plugins")


def _is_rule(node: ast.AST) -> bool:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    calls = (d.func if isinstance(d, ast.Call) else d for d in node.decorator_list)
    return any(isinstance(c, ast.Name) and c.id == "rule" for c in calls)


def _judging(tree: ast.Module) -> list[ast.AST]:
    """The module's rule functions and the module functions they call, directly or through one another (an
    action declared in the same module is not among them)."""
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    todo = [n for n in functions.values() if _is_rule(n)]
    seen: dict[str, ast.AST] = {}
    while todo:
        node = todo.pop()
        if node.name in seen:
            continue
        seen[node.name] = node
        called = {c.func.id for c in ast.walk(node) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        todo += [functions[name] for name in called if name in functions]
    return list(seen.values())


def options_read(source: str) -> list[int]:
    """The lines of ``source`` where a rule, or a function a rule calls, reads ``ctx.options``."""
    return sorted(
        node.lineno
        for function in _judging(ast.parse(source))
        for node in ast.walk(function)
        if isinstance(node, ast.Attribute)
        and node.attr == "options"
        and isinstance(node.value, ast.Name)
        and node.value.id == "ctx"
    )


def _rule_sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "tests").rglob("toy_*.py")):  # the framework tests' toy plugins, rules as examples
        yield path.relative_to(ROOT).as_posix(), path.read_text(encoding="utf-8")
    for name, text in scaffold.files("demo", "DEM").items():
        if name.endswith(".py"):
            yield f"checks/scaffold.py ({name})", text


def test_no_rule_module_reads_the_options():
    found = [f"{where}:{line}" for where, text in _rule_sources() for line in options_read(text)]
    assert not found, (
        "rules read ctx.options; give them a provider (tabarena_checks/facts/providers.py) or a fact:\n"
        + "\n".join(found)
    )


def test_the_check_sees_a_rule_reading_the_options():
    source = (
        "from checks import rule\n\n\n"
        "@rule('DEM101', 'dem-x', actions=('a',))\n"
        "def x(ctx):\n"
        "    return helper(ctx)\n\n\n"
        "def helper(ctx):\n"
        "    return ctx.options.engine\n"
    )
    assert options_read(source) == [10]
    assert options_read("def gather(ctx):\n    return ctx.options.engine\n") == []  # an action may
    assert options_read(source.replace("return helper(ctx)", "return None")) == []  # a helper no rule calls
