"""Atomic writes: a reader (or an interrupted run) sees the old content or the new, never half of it."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary sibling file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_sibling_dir(path: str | Path) -> Path:
    """An empty temporary directory next to ``path`` (same filesystem, so a rename is atomic)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))


def sweep_siblings(target: str | Path) -> list[str]:
    """Clear what a killed run left next to ``target``: half-built ``.tmp`` copies go, and an
    old directory renamed aside (``.old``) comes back when ``target`` itself is missing.

    One writer per target is assumed: a second run writing the same target concurrently
    would see the first one's temporaries as leftovers.
    """
    target = Path(target)
    notes: list[str] = []
    if not target.parent.is_dir():
        return notes
    prefix = f".{target.name}."
    for entry in sorted(target.parent.iterdir()):
        if not entry.name.startswith(prefix) or not entry.is_dir() or entry.is_symlink():
            continue
        if entry.name.endswith(".old") and not target.exists():
            os.replace(entry, target)
            notes.append(f"restored {target.name} from {entry.name}, left by an interrupted run")
        elif entry.name.endswith((".tmp", ".old")):
            shutil.rmtree(entry, ignore_errors=True)
            notes.append(f"removed {entry.name}, left by an interrupted run")
    return notes


def swap_in_dir(built: Path, target: str | Path) -> None:
    """Put the finished directory ``built`` at ``target``; an existing ``target`` survives until then.

    The old directory is first renamed aside, the new one renamed into place, and only
    then is the old one removed; if the second rename fails the old one is put back.
    """
    target = Path(target)
    if not target.exists():
        os.replace(built, target)
        return
    if not target.is_dir() or target.is_symlink():
        raise FileExistsError(f"{target} exists and is not a directory")
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rmdir(aside)
    os.replace(target, aside)
    try:
        os.replace(built, target)
    except BaseException:
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)
