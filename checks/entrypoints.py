"""The entry points of one group, read from the installed distributions without importing importlib.metadata.

Why not ``importlib.metadata``: importing it imports the ``email`` package (to parse
METADATA files), about 15 ms on Python 3.11, one and a half times a bare interpreter's
start, on every ``checks`` command and pre-commit hook. Finding plugins needs much less:
the ``entry_points.txt`` files (an INI format, see the packaging specification "Entry
points specification") of the ``*.dist-info`` and ``*.egg-info`` directories on
``sys.path``, searched as importlib.metadata searches them (path order, the first
distribution of a name wins; ``''`` is the working directory). Name and version of the
few distributions that provide a plugin are read from their METADATA (PKG-INFO) headers.
``tests/core/test_core_entrypoints.py`` holds the result equal to ``importlib.metadata.entry_points``;
benchmarks/README.md has the measurement that keeps this module (``checks rules`` at 7.3x
``python -c pass`` with it, 8.7x with importlib.metadata, against a target of 8x).

Not seen: ``.egg`` archives and distributions that only a custom ``sys.meta_path`` finder
knows (pip, setuptools' editable installs and pre-commit's hook environments write
``.dist-info`` directories).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import NamedTuple

_SUFFIXES = (".dist-info", ".egg-info")


class EntryPoint(NamedTuple):
    """``name = value`` of ``group``, declared by the distribution whose metadata directory is ``path``."""

    name: str
    value: str
    group: str
    path: str

    @property
    def module(self) -> str:
        return self.value.partition(":")[0].strip()

    def load(self) -> object:
        """The object named by ``module:attr`` (an attribute path); ``[extras]`` are ignored, as importlib does."""
        module, _, attr = self.value.partition("[")[0].partition(":")
        obj: object = importlib.import_module(module.strip())
        for part in filter(None, attr.strip().split(".")):
            obj = getattr(obj, part)
        return obj

    def distribution(self) -> tuple[str | None, str | None]:
        """(Name, Version) from the METADATA (or PKG-INFO) headers; (None, None) when unreadable."""
        headers: dict[str, str] = {}
        for file in ("METADATA", "PKG-INFO"):
            try:
                with open(os.path.join(self.path, file), encoding="utf-8", errors="replace") as handle:
                    for line in handle:
                        if not line.strip():
                            break  # the headers end at the first blank line; the description follows
                        key, sep, value = line.partition(":")
                        if sep and not line[0].isspace():
                            headers.setdefault(key.strip().lower(), value.strip())
                break
            except OSError:
                continue
        return headers.get("name"), headers.get("version")


def _normalized(name: str) -> str:
    """A distribution's name as PEP 503 compares them (``Arena_Checks`` and ``arena-checks`` are one)."""
    return "-".join(filter(None, name.lower().replace("_", "-").replace(".", "-").split("-")))


def _metadata_dirs(paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(normalized distribution name, metadata directory) for every distribution on ``paths``, in path order."""
    for entry in paths:
        root = entry or "."
        try:
            names = sorted(os.listdir(root))
        except OSError:  # a zip file, a missing directory: importlib.metadata finds no entry points there either
            continue
        for child in names:
            low = child.lower()
            if low.endswith(_SUFFIXES):
                stem = child[: child.rindex(".")]  # the suffixes hold no other dot
                yield _normalized(stem.partition("-")[0]), f"{root}/{child}"


def _parse(text: str, group: str, path: str) -> Iterator[EntryPoint]:
    """The ``name = value`` lines of section ``[group]`` of an entry_points.txt (comments start with ``#``)."""
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section == group:
            name, sep, value = line.partition("=")
            if sep:
                yield EntryPoint(name.strip(), value.strip(), group, path)


def entry_points(group: str, paths: Iterable[str] | None = None) -> list[EntryPoint]:
    """Every entry point of ``group``, one scan of ``paths`` (default ``sys.path``); the first distribution of a name wins.

    Most distributions declare no entry points, and most that do declare none of ``group``:
    a file is parsed only when its bytes hold the section header ``[group]``.
    """
    header = f"[{group}]".encode()
    seen: set[str] = set()
    found = []
    for name, path in _metadata_dirs(sys.path if paths is None else paths):
        if name in seen:
            continue
        seen.add(name)
        file = f"{path}/entry_points.txt"
        if not os.access(file, os.R_OK):  # no exception for the usual case of no file
            continue
        try:
            with open(file, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        if header in data:
            found.extend(_parse(data.decode("utf-8", errors="replace"), group, path))
    return found
