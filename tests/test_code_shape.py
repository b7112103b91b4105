"""No function over 50 lines or above radon's grade B (cyclomatic complexity 10) without a reason.

Each function and method of the three packages is measured with :mod:`ast`: its length is
the lines from ``def`` to its last line (docstring and comments included), and its
complexity is McCabe's as radon counts it (1, plus one per ``if``/``elif``/conditional
expression, ``for``/``while`` and their ``else``, ``except`` handler and ``try``'s ``else``,
``assert`` (one, whatever its condition), ``match`` case, comprehension and its conditions,
and one per extra operand of ``and``/``or``). A nested function or class is measured on its
own and adds nothing to its parent; a lambda adds nothing itself, but its body counts (radon's
rules: ``radon cc`` gives the same figures). A function that must stay long or branchy says why in a comment
starting ``# shape:`` right above its ``def`` (or its decorators) or on the first lines of its
body, or a docstring line starting ``shape:``.

``python tests/test_code_shape.py`` prints every function over a limit, worst first.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

import attrs
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("checks", "tabarena_checks", "hfmigrate_checks")
MAX_LINES = 50
#: radon grades 1-5 A, 6-10 B, 11-20 C: grade C and worse need a reason
MAX_COMPLEXITY = 10
MARKER = "# shape:"

#: functions over a limit that are not split yet, by qualified name (the module may move):
#: a function listed here may stay as it is for now, a new one may not, and a name leaves
#: the list when its function is split (the test says so). Shrink it; never add to it.
_BACKLOG = """
    # checks
    # tabarena_checks
    # hfmigrate_checks
"""
BACKLOG = Counter(name for line in _BACKLOG.splitlines() for name in line.partition("#")[0].split())


@attrs.frozen
class Measure:
    path: str
    name: str
    line: int
    lines: int
    complexity: int
    justified: bool

    @property
    def over(self) -> bool:
        return self.lines > MAX_LINES or self.complexity > MAX_COMPLEXITY

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.name}: {self.lines} lines, complexity {self.complexity}"


class _Complexity(ast.NodeVisitor):
    """radon's ComplexityVisitor count for one function body; nested functions and classes are skipped."""

    def __init__(self) -> None:
        self.score = 0

    def visit_FunctionDef(self, node) -> None:  # measured on its own
        pass

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef

    def visit_Assert(self, node) -> None:  # one, whatever its condition holds
        self.score += 1

    def generic_visit(self, node) -> None:
        self.score += _branches(node)
        super().generic_visit(node)


def _branches(node: ast.AST) -> int:
    """The decision points ``node`` itself adds (radon's rules)."""
    if isinstance(node, (ast.If, ast.IfExp)):
        return 1
    if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
        return 1 + bool(node.orelse)
    if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
        return len(node.handlers) + bool(node.orelse)
    if isinstance(node, ast.BoolOp):
        return len(node.values) - 1
    if isinstance(node, ast.comprehension):
        return 1 + len(node.ifs)
    if isinstance(node, ast.Match):
        wildcard = any(isinstance(c.pattern, ast.MatchAs) and c.pattern.pattern is None for c in node.cases)
        return max(0, len(node.cases) - wildcard)
    return 0


def complexity(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    visitor = _Complexity()
    for statement in function.body:
        visitor.visit(statement)
    return 1 + visitor.score


def _justified(function, source_lines: list[str]) -> bool:
    """A ``# shape:`` comment above the def (and its decorators) or before the first statement, or a
    ``shape:`` line in the docstring."""
    docstring = ast.get_docstring(function, clean=True) or ""
    if any(line.startswith("shape:") and len(line) > len("shape:") + 8 for line in docstring.splitlines()):
        return True
    top = min([function.lineno, *(d.lineno for d in function.decorator_list)]) - 1  # 0-based
    while top > 0 and source_lines[top - 1].strip().startswith("#"):
        top -= 1
    body = function.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    end = (body[1].lineno - 1 if len(body) > 1 else body[0].end_lineno) if has_doc else body[0].lineno - 1
    return any(_has_marker(line) for line in source_lines[top:end])


def _has_marker(line: str) -> bool:
    """``# shape: <why>`` with a reason of some words."""
    at = line.find(MARKER)
    return at >= 0 and len(line[at + len(MARKER):].strip()) > 8


def measure_source(text: str, path: str) -> list[Measure]:
    tree = ast.parse(text)
    lines = text.splitlines()
    out = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append(Measure(path, name, child.lineno, child.end_lineno - child.lineno + 1,
                                   complexity(child), _justified(child, lines)))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
            else:
                walk(child, prefix)

    walk(tree, "")
    return out


def measure_all(root: Path = ROOT) -> list[Measure]:
    out = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            out += measure_source(path.read_text(encoding="utf-8"), path.relative_to(root).as_posix())
    return out


# --------------------------------------------------------------------------- the measure itself


def _one(text: str) -> Measure:
    return measure_source(text, "m.py")[0]


@pytest.mark.parametrize(("body", "expected"), [
    ("    return 1\n", 1),
    ("    if a:\n        pass\n    elif b:\n        pass\n    else:\n        pass\n", 3),
    ("    for x in y:\n        pass\n    else:\n        pass\n    while a:\n        break\n", 4),
    ("    try:\n        pass\n    except A:\n        pass\n    except B:\n        pass\n    else:\n        pass\n"
     "    finally:\n        pass\n", 4),
    ("    return a and b and c or d\n", 4),
    ("    return [x for x in y if x if not x]\n", 4),
    ("    assert a and b\n    return b if c else d\n", 3),
    ("    with a:\n        pass\n", 1),
    ("    match a:\n        case 1:\n            pass\n        case 2:\n            pass\n        case _:\n"
     "            pass\n", 3),
    ("    def inner():\n        if a:\n            pass\n    return lambda: a and b\n", 2),
])
def test_complexity_counts_as_radon_does(body, expected):
    assert _one("def f():\n" + body).complexity == expected


def test_length_spans_def_to_last_line_and_nested_functions_are_measured_apart():
    text = "class C:\n    def m(self):\n        def inner():\n            if a:\n                pass\n        return 1\n"
    measured = {m.name: m for m in measure_source(text, "m.py")}
    assert measured["C.m"].lines == 5 and measured["C.m"].complexity == 1
    assert measured["C.m.inner"].lines == 3 and measured["C.m.inner"].complexity == 2


def test_the_reason_is_found_above_the_def_in_the_body_or_docstring():
    branchy = "".join(f"    if a{i}:\n        pass\n" for i in range(11))
    assert not _one("def f():\n" + branchy).justified
    assert _one("# shape: a dispatch over every kind of node\ndef f():\n" + branchy).justified
    assert _one("@dec\n# shape: a dispatch over every kind of node\n@dec\ndef f():\n" + branchy).justified
    assert _one("def f():\n    # shape: a dispatch over every kind of node\n" + branchy).justified
    assert _one('def f():\n    """Doc.\n\n    shape: one table of every kind\n    """\n' + branchy).justified
    assert _one('def f():\n    """Doc."""\n    # shape: a dispatch over every kind of node\n' + branchy).justified
    assert not _one("def f():\n    # shape:\n" + branchy).justified, "a marker needs a reason"
    assert not _one("def f():\n" + branchy + "    # shape: a dispatch over every kind of node\n").justified


# --------------------------------------------------------------------------- the rule


def _unexplained() -> list[Measure]:
    return sorted((m for m in measure_all() if m.over and not m.justified), key=lambda m: (-m.complexity, -m.lines))


def test_no_unexplained_long_or_complex_function():
    unexplained = _unexplained()
    allowed = BACKLOG.copy()
    offenders = []
    for m in unexplained:
        if allowed[m.name] > 0:
            allowed[m.name] -= 1
        else:
            offenders.append(m)
    assert not offenders, (f"{len(offenders)} function(s) over {MAX_LINES} lines or complexity {MAX_COMPLEXITY}: split "
                           f"them into named helpers, or say why they must stay in a '{MARKER}' comment:\n"
                           + "\n".join(map(str, offenders)))


def test_the_backlog_only_shrinks():
    left = Counter(m.name for m in _unexplained())
    done = sorted((BACKLOG - left).elements())
    assert not done, "within the limits now (or gone): take them out of BACKLOG: " + " ".join(done)


def test_every_reason_is_still_needed():
    stale = [m for m in measure_all() if m.justified and not m.over]
    assert not stale, "a '# shape:' reason on a function within the limits: remove it\n" + "\n".join(map(str, stale))


if __name__ == "__main__":
    over = sorted((m for m in measure_all() if m.over), key=lambda m: (-m.complexity, -m.lines))
    for m in over:
        print(("  justified " if m.justified else "  ") + str(m))
    print(f"{sum(not m.justified for m in over)} unexplained ({sum(BACKLOG.values())} in the backlog), "
          f"{sum(m.justified for m in over)} justified", file=sys.stderr)
