"""Where an action's ``--method-metadata`` lives: the info.py lines a run judges, and the file a reference names.

Apart from the facts classes because every TabArena action names its sources with it (``Action.sources``)
and the inspect facts digest the same file, and it needs only the standard library and ``checks.io``.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from checks import io


def info_sources(ctx) -> list[str]:
    """The info.py a TabArena action's ``--method-metadata`` names (its ``Action.sources``), if it is a file:
    only the lines of the declaration the run judges (``path#Lfirst-Llast``), so a suppression on a sibling
    declaration is never reported unused by a run that did not judge it."""
    ref = ctx.options.method_metadata or ""
    path = metadata_file(ref)
    if path is None:
        return []
    span = _declaration_lines(path, ref.rpartition(":")[2])
    return [f"{path}#L{span[0]}-L{span[1]}" if span else str(path)]


def _declaration_lines(path: Path, variable: str) -> tuple[int, int] | None:
    """First and last line of the module-level statement that assigns ``variable`` in ``path``; ``(0, 0)`` (no
    line) when the file does not assign it (an imported name: no line of this file is the run's own, so
    nothing there is unused); None when the file does not parse (the whole file, as before)."""

    try:
        tree = ast.parse(io.read_text(path, what="an info.py"))
    except (io.ReadError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            return node.lineno, node.end_lineno or node.lineno
    return (0, 0)


def metadata_file(ref: str) -> Path | None:
    """The info.py file a reference or a ``source`` (``path:VAR`` / ``path:line``) points at, if it exists."""
    path = ref.rpartition(":")[0] or ref
    candidate = Path(os.path.expanduser(path))
    return candidate if path.endswith(".py") and candidate.is_file() else None
