"""Replace files and directories atomically, and recover what a killed run left behind.

A reader, or the run after a kill, sees the old content or the new, never half of each.
Directories are built in a temporary sibling named after the writing process
(``.<name>.checks-tmp-<pid>``) and swapped in; the one replaced is first moved aside
(``.<name>.checks-old-<pid>``). :func:`sweep_siblings` clears those of a killed run, puts
back a directory moved aside when the target is missing, and leaves a running one's alone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

TMP, OLD = "checks-tmp", "checks-old"


def pid_running(pid: int) -> bool:
    """Whether process ``pid`` exists: temporaries of a live run are left alone, those of a killed one swept."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary sibling file, fsync and ``os.replace``."""
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


def temp_sibling(target: str | Path) -> Path:
    """This process's temporary path next to ``target`` (same file system, so renames are atomic), cleared."""
    target = Path(target)
    path = target.parent / f".{target.name}.{TMP}-{os.getpid()}"
    shutil.rmtree(path, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    return path


def swap_in_dir(built: Path, target: str | Path) -> bool:
    """Put the finished directory ``built`` at ``target``; returns whether a directory was replaced.

    An existing ``target`` is renamed aside first and removed only once ``built`` is in
    place; if that second rename fails, it is put back.
    """
    target = Path(target)
    if not target.exists():
        os.replace(built, target)
        return False
    if not target.is_dir() or target.is_symlink():
        raise FileExistsError(f"{target} exists and is not a directory")
    aside = target.parent / f".{target.name}.{OLD}-{os.getpid()}"
    shutil.rmtree(aside, ignore_errors=True)
    os.replace(target, aside)
    try:
        os.replace(built, target)
    except BaseException:
        os.replace(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)
    return True


def sweep_siblings(target: str | Path) -> list[str]:
    """Clear what killed runs left next to ``target``; returns one note per thing done.

    A run killed between moving the old directory aside and moving the new one in left no
    ``target`` at all: the old one is put back, so the previous state is what the next run
    sees. Temporaries of a process still running are left alone.
    """
    target = Path(target)
    notes: list[str] = []
    if not target.parent.is_dir():
        return notes
    left = re.compile(rf"^\.{re.escape(target.name)}\.({TMP}|{OLD})-(\d+)(\..*)?$")
    for entry in sorted(target.parent.iterdir()):
        match = left.match(entry.name)
        if match is None or entry.is_symlink() or pid_running(int(match[2])):
            continue
        if match[1] == OLD and not target.exists():
            os.replace(entry, target)
            notes.append(f"restored the previous {target.name} from {entry.name}, left by an interrupted run")
        else:
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            notes.append(f"removed {entry.name}, left by an interrupted run")
    return notes
