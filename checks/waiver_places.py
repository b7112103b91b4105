"""Where each ``[[waivers]]`` entry of a configuration file is written, so CK001 and CK002 point at it.

tomllib keeps no positions, and a waiver-hygiene finding at ``rules.toml:1`` sends the reader
hunting; so the file's text is scanned for the waiver tables' headers, each block read on its own
with tomllib to learn its ``rule`` and ``target``. A waiver the scan cannot place (written as an
inline array, or brought in by ``extend``) stays at the file's first line.
"""

from __future__ import annotations

import functools
import os
import re
import tomllib

from checks.io import ReadError, read_text

#: the header of one waiver table, in a rules.toml or under [tool.checks] of a pyproject.toml
_HEADER = re.compile(r"^[ \t]*\[\[[ \t]*(?:tool\.checks\.)?waivers[ \t]*\]\][ \t]*(?:#.*)?$")
_TABLE = re.compile(r"^[ \t]*\[")


def place(config_path: str | None, rule: str, target: str) -> dict:
    """``path``/``line``/``col`` keyword arguments of :class:`checks.Finding` for the waiver of ``rule`` on
    ``target``: its header's line in the file, the path relative to the working directory; {} without a file."""
    if not config_path:
        return {}
    line = _lines(os.path.abspath(config_path)).get((rule, target), 1)
    return {"path": os.path.relpath(config_path), "line": line, "col": 1}


@functools.lru_cache(maxsize=8)
def _lines(path: str) -> dict[tuple[str, str], int]:
    """(rule, target) -> the 1-based line of its ``[[waivers]]`` header in ``path`` (first one wins)."""
    try:
        text = read_text(path, what="a configuration file")
    except ReadError:
        return {}
    lines = text.splitlines()
    heads = [i for i, line in enumerate(lines) if _HEADER.match(line)]
    found: dict[tuple[str, str], int] = {}
    for start in heads:
        end = next((j for j in range(start + 1, len(lines)) if _TABLE.match(lines[j])), len(lines))
        try:
            body = tomllib.loads("\n".join(lines[start + 1 : end]))
        except tomllib.TOMLDecodeError:
            continue
        found.setdefault((str(body.get("rule")), str(body.get("target"))), start + 1)
    return found
