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

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("checks", "tabarena_checks", "hfmigrate_checks", "plugins")


def _declares_rules(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                call = decorator.func if isinstance(decorator, ast.Call) else decorator
                if isinstance(call, ast.Name) and call.id == "rule":
                    return True
    return False


def options_read(source: str) -> list[int]:
    """The lines of ``source`` that read ``ctx.options``, when it declares a rule; none otherwise."""
    tree = ast.parse(source)
    if not _declares_rules(tree):
        return []
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr == "options"
        and isinstance(node.value, ast.Name)
        and node.value.id == "ctx"
    ]


def _rule_sources():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
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
