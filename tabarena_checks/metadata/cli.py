"""``checks tabarena metadata FILE[:VAR]``: show what the static reader read, field by field, and from where.

A maintainer who wonders why a rule pointed at a line (or why a value is what it is) sees every
declaration with every field TabArena would hold, derived ones included, and the chain each
value came through: the keyword, the ``**`` spreads, the descriptor default, the constant, the
import. Read-only, nothing is imported or executed. Declared by name in tabarena_checks/cli.py and
imported only when it runs or shows its help.
"""

from __future__ import annotations

import json
from typing import Any

import click

from checks import ExitCode, InputError
from tabarena_checks.metadata import info_eval, info_static
from tabarena_checks.metadata.origins import CALL

#: how TabArena derives a field that was left unset (``MethodMetadata.__post_init__``)
_DERIVED = {
    "suite": "method",
    "model_key": "ag_key",
    "can_hpo": "method_type == 'config'",
}


def _derivation(record, field: str) -> str | None:
    """How TabArena derives ``field`` of ``record`` when it was left unset; None when it was set (or is not derived)."""
    if field in _DERIVED and getattr(record, field) is None:
        return _DERIVED[field]
    if field == "cache_type" and record.cache_type is None:
        return "'r2' when cache_kwargs has bucket and prefix, else 'local'"
    if field == "display_name" and record.display_name is None:
        return _display_name_derivation(record)
    return None


def _display_name_derivation(record) -> str:
    """Where an unset ``display_name`` comes from: apart because it alone depends on other fields' values."""
    if record.name is not None:
        return "name"
    if record.method_type == "config" and record.effective_model_key:
        return "model_key + name_suffix" if record.name_suffix else "model_key"
    return "method"


def _kinds(steps) -> list[str]:
    kinds = []
    for step in steps:
        kind = {
            "keyword": "literal",
            "key": "literal",
            "positional": "literal",
            "descriptor": "descriptor default",
            "constructor": "constructor",
        }.get(step.kind, step.kind)
        if step.kind in ("keyword", "key", "positional") and any(s.kind == "constant" for s in steps):
            continue
        if kind not in kinds:
            kinds.append(kind)
    return kinds


def _json_safe(value: Any) -> Any:
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def describe(declaration) -> dict[str, Any]:
    """One declaration as a JSON-ready dict: where it is, every field, where each value came from."""
    out: dict[str, Any] = {
        "variable": declaration.variable,
        "path": declaration.path,
        "line": declaration.line,
        "col": declaration.col,
    }
    if declaration.record is None:
        problem = declaration.problem
        out["problem"] = {"message": problem.message, "path": problem.path, "line": problem.line, "col": problem.col}
        return out
    record = declaration.record
    out["constructor"] = record.constructor
    fields = {}
    for field, value in record.resolved().items():
        steps = record.origins.get(field)
        entry: dict[str, Any] = {"value": _json_safe(value)}
        if steps:
            entry["from"] = _kinds(steps)
            entry["provenance"] = [
                {"kind": s.kind, "name": s.name, "path": s.path, "line": s.line, "col": s.col} for s in steps
            ]
        else:
            derivation = _derivation(record, field)
            entry["from"] = [f"derived from {derivation}"] if derivation else ["default"]
        fields[field] = entry
    out["fields"] = fields
    call = record.origins.get(CALL)
    if call:
        out["call"] = {"path": call[0].path, "line": call[0].line, "col": call[0].col}
    return out


def _human(items: list[dict[str, Any]]) -> str:
    lines = []
    for item in items:
        head = f"{item['path']}:{item['line']}:{item['col']}: {item['variable'] or '(not bound to a name)'}"
        if "problem" in item:
            p = item["problem"]
            lines += [head, f"  cannot be read: {p['path']}:{p['line']}:{p['col']}: {p['message']}", ""]
            continue
        lines.append(f"{head} = {item['constructor']}")
        width = max(len(f) for f in item["fields"])
        for field, entry in item["fields"].items():
            where = ", ".join(entry["from"])
            chain = " > ".join(
                f"{s['kind']} {s['name']} ({s['path']}:{s['line']}:{s['col']})" for s in entry.get("provenance", [])
            )
            lines.append(f"  {field:<{width}} = {entry['value']!r}  [{where}]" + (f"  {chain}" if chain else ""))
        lines.append("")
    return "\n".join(lines).rstrip("\n")


def _split(ref: str) -> tuple[str, str | None]:
    path, sep, variable = ref.rpartition(":")
    if sep and path.endswith(".py") and variable.isidentifier():
        return path, variable
    return ref, None


@click.command("metadata")
@click.argument("ref", metavar="FILE[:VAR]")
@click.option("--format", "fmt", type=click.Choice(["human", "json"]), default="human", show_default=True)
def metadata(ref, fmt):
    """Show every MethodMetadata declaration of FILE (or VAR) as read statically: each field, derived ones
    included, and where its value came from. Exit 1 when a declaration cannot be read."""
    path, variable = _split(ref)
    try:
        declarations = _declarations(path, variable)
    except InputError as exc:
        click.echo(str(exc), err=True)
        raise SystemExit(int(ExitCode.BLOCKED)) from None
    items = [describe(d) for d in declarations]
    if fmt == "json":
        click.echo(json.dumps({"ref": ref, "declarations": items}, indent=2))
    else:
        click.echo(_human(items) if items else f"{path}: no MethodMetadata declaration")
    bad = any("problem" in item for item in items) or not items
    raise SystemExit(int(ExitCode.BLOCKED if bad else ExitCode.OK))


def _declarations(path: str, variable: str | None) -> list:
    """Every declaration of ``path`` (or only ``variable``'s), read statically.

    A declaration that cannot be read is kept, with its problem, so the command shows it where it
    is; only a file that cannot be read at all raises (an InputError).
    """
    reader = info_static.new_reader()
    try:
        if variable is None:
            return info_static.read_declarations(path, reader)
        try:
            return [_declaration_of(info_static.read_variable(path, variable, reader), variable)]
        except info_eval.Unreadable as exc:
            return [info_static.Declaration(variable, exc.path, exc.line, exc.col, problem=exc)]
    except info_eval.Unreadable as exc:
        return [info_static.Declaration(None, exc.path, exc.line, exc.col, problem=exc)]


def _declaration_of(record, variable: str):

    call = record.origins.get(CALL)
    path, _, line = record.source.rpartition(":")
    if call:
        return info_static.Declaration(variable, call[0].path, call[0].line, call[0].col, record=record)
    return info_static.Declaration(variable, path, int(line or 1), 1, record=record)
