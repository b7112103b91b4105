"""Read ``MethodMetadata`` declarations from an ``info.py`` without importing it.

Importing an ``info.py`` runs its code and needs TabArena installed, and TabArena's own
checks stop at the first bad field. Parsing the file with :mod:`ast` and evaluating only
literal arguments gives the declared values of every variable, so the rules can report
every problem at once, in a pre-commit hook, on a machine without TabArena.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from checks import io
from checks.errors import InputError
from tabarena_checks.metadata import CONSTRUCTOR_IMPLIES, CONSTRUCTORS, FIELDS, MethodMetadata, canonical

CLASS_NAME = "MethodMetadata"
#: positional parameters of each constructor, in order (TabArena's signatures)
POSITIONAL = {
    "config": ("method", "ag_key", "model_key", "config_default", "name_suffix", "can_hpo", "is_bag"),
    "baseline": ("method", "name"),
    "system": ("method", "name", "tags"),
    "portfolio": ("method", "name", "has_raw"),
    "direct": ("method", "suite", "artifact_dir", "cache_root", *FIELDS[2:]),
}
#: accepted by TabArena but runtime-only: never part of the record
RUNTIME_ONLY = ("artifact_dir", "cache_root")
_MAX_BYTES = 2_000_000


def _class_aliases(tree: ast.Module) -> set[str]:
    """``MethodMetadata`` plus any ``from x import MethodMetadata as Alias`` names."""
    names = {CLASS_NAME}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.update(a.asname for a in node.names if a.name == CLASS_NAME and a.asname)
    return names


def _is_class(node: ast.expr, aliases: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in aliases
    return isinstance(node, ast.Attribute) and node.attr == CLASS_NAME


def _constructor(call: ast.Call, aliases: set[str]) -> str | None:
    """``config``/``baseline``/``system``/``portfolio``/``direct``, ``"?name"`` for another classmethod, else None."""
    func = call.func
    if _is_class(func, aliases):
        return "direct"
    if isinstance(func, ast.Attribute) and _is_class(func.value, aliases):
        return func.attr if func.attr in CONSTRUCTORS else f"?{func.attr}"
    return None


def _module_statements(body: list[ast.stmt]):
    """Statements that run at import time: the module body and its if/try/with blocks."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.With)):
            yield from _module_statements(stmt.body)
            yield from _module_statements(getattr(stmt, "orelse", []))
        elif isinstance(stmt, ast.Try):
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from _module_statements(block)


def _assignments(tree: ast.Module):
    """``(variable, call, line)`` for each ``NAME = <call>`` / ``NAME: T = <call>`` at module level."""
    for stmt in _module_statements(tree.body):
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    yield target.id, stmt.value, stmt.lineno
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.value, ast.Call) and isinstance(stmt.target, ast.Name):
            yield stmt.target.id, stmt.value, stmt.lineno


def _snippet(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of odd trees is best effort; the line number still locates it
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def _literal(node: ast.expr, where: str, field: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise InputError(
            f"{where}: field {field!r} is set to {_snippet(node)}, which is not a literal; only "
            f"literal values (strings, numbers, True/False/None, lists, tuples, dicts) can be read "
            f"statically: write the value inline, or pass the metadata as package.module:variable "
            f"to import it"
        ) from None


def _record(variable: str, call: ast.Call, constructor: str, where: str) -> MethodMetadata:
    label = f"{CLASS_NAME}()" if constructor == "direct" else f"{CLASS_NAME}.{constructor}()"
    positional = POSITIONAL[constructor]
    implied = CONSTRUCTOR_IMPLIES[constructor]
    values: dict[str, Any] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            raise InputError(f"{where}: {variable}: *{_snippet(arg.value)} cannot be read statically; pass each field as a literal keyword argument")
        if index >= len(positional):
            raise InputError(
                f"{where}: {variable}: {label} takes at most {len(positional)} positional argument(s) "
                f"({', '.join(positional)}); pass the others by keyword"
            )
        values[positional[index]] = _literal(arg, where, positional[index])
    allowed = set(FIELDS) | set(RUNTIME_ONLY)
    for kw in call.keywords:
        if kw.arg is None:
            raise InputError(f"{where}: {variable}: **{_snippet(kw.value)} cannot be read statically; pass each field as a literal keyword argument")
        if kw.arg not in allowed:
            raise InputError(
                f"{where}: {variable}: {label} got unknown field {kw.arg!r}; known fields: {', '.join(FIELDS)}"
            )
        if kw.arg in implied:
            raise InputError(
                f"{where}: {variable}: {label} sets {kw.arg!r} itself; remove {kw.arg}={_snippet(kw.value)}"
                + ("" if constructor == "direct" else " or use another constructor")
            )
        if kw.arg in values:
            raise InputError(f"{where}: {variable}: field {kw.arg!r} is given twice (by position and by keyword)")
        values[kw.arg] = _literal(kw.value, where, kw.arg)
    for name in RUNTIME_ONLY:
        values.pop(name, None)
    if "method" not in values:
        raise InputError(f"{where}: {variable}: {label} needs 'method' (the method's name)")
    return canonical(
        MethodMetadata(
            **implied,
            **values,
            constructor=constructor,
            declared=frozenset(values),
            source=where,
            variable=variable,
        )
    )


def parse_source(text: str, path: str) -> list[MethodMetadata]:
    """Every ``MethodMetadata`` declaration bound to a module-level name in ``text``, in file order."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno or 0}: not valid Python: {exc.msg}; fix the syntax error") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise InputError(f"{path}: cannot be parsed as Python: {type(exc).__name__}: {exc}") from None
    aliases = _class_aliases(tree)
    records = []
    for variable, call, line in _assignments(tree):
        constructor = _constructor(call, aliases)
        if constructor is None:
            continue
        where = f"{path}:{line}"
        if constructor.startswith("?"):
            raise InputError(
                f"{where}: {variable}: {CLASS_NAME}.{constructor[1:]}(...) cannot be read statically; "
                f"use .config, .baseline, .system or .portfolio, or import it as package.module:variable"
            )
        records.append(_record(variable, call, constructor, where))
    return records


def read_file(path: str | Path) -> list[MethodMetadata]:
    """Parse ``path``; unreadable, non-UTF-8 or oversized files raise :class:`InputError`."""
    text = io.read_text(path, limit=_MAX_BYTES, what="an info.py")
    return parse_source(text, str(path))


def read_variable(path: str | Path, variable: str) -> MethodMetadata:
    """The declaration bound to ``variable`` in ``path``."""
    records = read_file(path)
    for record in reversed(records):  # the last binding wins, as at import time
        if record.variable == variable:
            return record
    found = ", ".join(sorted({r.variable for r in records})) or "none"
    raise InputError(
        f"{path}: no MethodMetadata declaration is assigned to {variable!r} (found: {found}); "
        f"use path/to/info.py:VARIABLE with one of those names"
    )


__all__ = ["parse_source", "read_file", "read_variable"]
