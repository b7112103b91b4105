"""Which configuration file applies and what it says: found upward as ruff finds its own, ``extend`` followed.

The text of each file is parsed by :mod:`checks.config_parse`; this module reads the files
(bounded, trusted only when the user owns them) and merges a file over the one it extends.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from checks import io, trust
from checks.config_model import CONFIG_FILES, MAX_CONFIG_BYTES, TOP_KEYS, Config
from checks.config_parse import parse, text_sha256, toml_table
from checks.errors import ConfigError


def _holds_config(path: Path) -> bool:
    """pyproject.toml counts only with a [tool.checks] table (a broken one counts, so its error is shown)."""
    if path.name != "pyproject.toml":
        return True
    import tomllib  # noqa: PLC0415 - start-up: read only when a rules.toml exists

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    try:
        tool = tomllib.loads(text).get("tool")
    except (tomllib.TOMLDecodeError, RecursionError):
        return "[tool.checks" in text
    return isinstance(tool, dict) and "checks" in tool


def _held(folder: Path) -> Path | None:
    """The one configuration file ``folder`` itself holds, if any (two side by side are an error)."""
    found = [folder / name for name in CONFIG_FILES if (folder / name).is_file() and _holds_config(folder / name)]
    if len(found) > 1:
        names = " and ".join(p.name for p in found)
        raise ConfigError(
            f"{folder}: {names} both hold a checks configuration; keep exactly one per directory "
            f"(move the settings into one file and delete the other)"
        )
    return found[0] if found else None


def find(start: Path, seen: dict[Path, Path | None] | None = None) -> Path | None:
    """The configuration nearest to ``start``: the first directory upwards holding one, as ruff finds ruff.toml.

    A directory holds at most one: rules.toml, .checks.toml and a pyproject.toml with
    [tool.checks] side by side are an error, since which one wins would be a guess.
    ``seen`` (one command's memo, directory -> its nearest configuration) spares walking again the directories an
    earlier file of the same run already walked: the walk stops at the first one known.
    """
    start = start.resolve()
    seen = {} if seen is None else seen
    walked: list[Path] = []
    result = None
    for folder in (start, *start.parents):
        if folder in seen:
            result = seen[folder]
            break
        walked.append(folder)
        result = _held(folder)
        if result is not None:
            break
    for folder in walked:
        seen[folder] = result
    return result


def load(path: Path | None, *, cwd: Path, sections: Mapping[str, type] | None = None) -> Config:
    """Load ``path`` (from ``--config``), else the nearest configuration file, else the built-in defaults."""
    if path is None:
        path = find(cwd)
        if path is None:
            return parse("", source="<defaults>", sections=sections)
    return _load_file(path, sections, chain=())


#: how many ``extend`` steps a chain may take (a longer one is surely a mistake)
MAX_EXTENDS = 10


def _load_file(path: Path, sections: Mapping[str, type] | None, chain: tuple[Path, ...]) -> Config:
    """``path`` parsed, on top of what its ``extend`` names (relative to it), followed to the end of the chain."""
    trust.check(path, "configuration")
    try:
        text = io.read_text(path, limit=MAX_CONFIG_BYTES, what="a rules.toml")
    except io.ReadError as exc:
        where = f"{chain[-1]}: extend: " if chain else ""
        raise ConfigError(f"{where}{exc}") from None
    own = parse(text, source=str(path), sections=sections)
    target = _extend_target(text, path)
    if target is None:
        return own
    if target.resolve() in {p.resolve() for p in (*chain, path)} or len(chain) >= MAX_EXTENDS:
        names = " -> ".join(str(p) for p in (*chain, path, target))
        raise ConfigError(
            f"{path}: extend: {names} is a cycle or longer than {MAX_EXTENDS} files; "
            f"make one file the base of the others"
        )
    return extended(_load_file(target, sections, (*chain, path)), own, _table(text, path))


def _extend_target(text: str, path: Path) -> Path | None:
    """The file ``extend`` names, relative to ``path``'s directory; None without the key."""
    value = _table(text, path).get("extend")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f"{path}: extend: expected the path of another configuration file, e.g. "
            f'extend = "../rules.toml" (got {value!r})'
        )
    return (path.parent / os.path.expanduser(value)).resolve()


def _table(text: str, path: Path) -> dict:
    """The configuration's table as written (already validated by :func:`parse`)."""
    raw = toml_table(text, str(path))
    if path.name == "pyproject.toml":
        raw = (raw.get("tool") or {}).get("checks") or {}
    return raw


#: Config attribute per top-level key
_FIELD = {key: key.replace("-", "_") for key in TOP_KEYS}


def _merged(name: str, base: Config, own: Config, written: Any) -> Any:
    """One field of :func:`extended`: the file's value, or for tables of entries both merged."""
    if name in ("rules", "arenas"):  # only the entries the file writes (parse fills in the arenas' defaults)
        return {**getattr(base, name), **{k: v for k, v in getattr(own, name).items() if k in written}}
    if name == "per_file_ignores":
        globs = {p.glob for p in own.per_file_ignores}
        return (*(p for p in base.per_file_ignores if p.glob not in globs), *own.per_file_ignores)
    if name == "waivers":
        return (*base.waivers, *own.waivers)
    return getattr(own, name)


def extended(base: Config, own: Config, written: Mapping[str, Any]) -> Config:
    """``own`` (the file in use) over ``base`` (the file its ``extend`` names), as ruff merges ``extend``:
    a key the file sets replaces the base's, except tables of entries, which merge entry by entry
    (``rules`` and ``arenas`` by name, ``per-file-ignores`` by glob) and ``waivers``, which add up.
    ``checks_plugins`` is never inherited: only the configuration in use names code to run."""
    changes = {
        _FIELD[key]: _merged(_FIELD[key], base, own, written[key])
        for key in set(written) - {"extend", "checks_plugins"}
    }
    digest = text_sha256(f"{own.sha256}\n{base.sha256}")  # a change to either file changes what records carry
    return attrs.evolve(
        base,
        **changes,
        checks_plugins=own.checks_plugins,
        path=own.path,
        table=own.table,
        sha256=digest,
        extends=(base.path or "", *base.extends),
    )


def local_plugins(path: Path) -> list[tuple[str, str]]:
    """``(entry, directory)`` for each ``checks_plugins`` entry of the file, read before any plugin loads.

    Only this key is read here; everything else (and any error) is reported when the whole
    file is parsed with the loaded plugins' settings.
    """
    import tomllib  # noqa: PLC0415 - start-up: read only when a rules.toml exists

    trust.check(path, "configuration")
    try:
        raw = tomllib.loads(io.read_text(path, limit=MAX_CONFIG_BYTES, what="a rules.toml"))
    except (io.ReadError, tomllib.TOMLDecodeError, RecursionError):
        return []
    if path.name == "pyproject.toml":
        tool = raw.get("tool")
        raw = tool.get("checks") if isinstance(tool, dict) else None
    entries = raw.get("checks_plugins") if isinstance(raw, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        return []
    base = str(path.resolve().parent)
    return [(entry, base) for entry in entries]
