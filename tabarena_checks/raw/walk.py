"""The walk of a run's data directory: every results.pkl, the directory mtimes, and what cannot be read.

A warm build lists again only the directories whose mtime changed (:func:`walk`), so its walk is
mostly stat calls; entries that cannot be part of the run (links to directories, undecodable names,
a results.pkl that is not a file) are reported, never skipped, so they block like unreadable files.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

RESULT_FILE = "results.pkl"


class FileStat(NamedTuple):
    """A results.pkl found by the walk: its path relative to the data directory, size and mtime."""

    path: str
    size: int
    mtime_ns: int


#: a directory changed less than this long before it was listed may change again within the
#: same timestamp tick (coarse clocks, 2 s on FAT): its recorded listing is never trusted
RACY_NS = 2_000_000_000
#: the recorded mtime of a directory whose listing must be read again
UNTRUSTED = -1


class Walk(NamedTuple):
    """What :func:`walk` found: the results.pkl files, the directory mtimes, and the entries that
    cannot be read as part of the run (``(relative path, reason)``), which must block process."""

    files: list[FileStat]
    dirs: dict[str, int]
    problems: list[tuple[str, str]]


def walk(
    data_dir: Path,
    known: Mapping[str, int] | None = None,
    known_files: frozenset[str] = frozenset(),
    found_more: Callable[[list[FileStat]], None] | None = None,
) -> Walk:
    """Every results.pkl under ``data_dir`` (sorted by path), and the mtime of every directory seen.

    ``known`` maps a directory (relative, "" for ``data_dir``) to its mtime_ns when it was
    last listed, and ``known_files`` holds the results.pkl seen then. A directory whose
    mtime is unchanged has the same entries, so it is not listed again: only its
    results.pkl is stat'ed (a rewrite in place changes the file, not the directory) and
    its known subdirectories are visited. Hidden directories are skipped.

    Symbolic links to directories are not followed (a link cycle or a DAG of links would make
    the walk loop or visit 2^depth directories): each is reported, like a directory that
    cannot be listed, a dangling link, a name that is not valid UTF-8 and a results.pkl that
    is not a regular file. A directory holding such an entry is listed again on every walk.

    ``found_more``, when given, is called with the files of each directory as it is listed (in no
    particular order), so decoding them can start before the walk ends.
    """
    known = known or {}
    same = _unchanged(os.fspath(data_dir), known, known_files) if _trusted(known) else None
    if same is not None:
        return Walk(same, dict(known), [])
    children = _children(known)
    root = os.fspath(data_dir)
    trusted_before = time.time_ns() - RACY_NS
    found: list[FileStat] = []
    problems: list[tuple[str, str]] = []
    seen: dict[str, int] = {}
    pending = [""]
    while pending:
        rel, before = pending.pop(), len(found)
        mtime = _dir_mtime(root, rel, problems)
        if mtime is None:
            seen[rel] = UNTRUSTED  # tried again next time
        elif mtime == known.get(rel, UNTRUSTED) != UNTRUSTED:  # listed before and unchanged: same entries
            seen[rel] = mtime
            pending.extend(children.get(rel, ()))
            _restat(root, rel, known_files, found, problems)
        else:
            listed = len(pending)
            clean = _list(root, rel, pending, found, problems)
            pending[listed:] = sorted(pending[listed:], reverse=True)  # visited in name order: see decode.Decoder.table
            seen[rel] = mtime if clean and mtime < trusted_before else UNTRUSTED
        if found_more is not None and len(found) > before:
            found_more(found[before:])
    found.sort()
    problems.sort()
    return Walk(found, seen, problems)


def _trusted(known: Mapping[str, int]) -> bool:
    """Whether every directory of the last walk was listed cleanly, long enough ago to trust its mtime."""
    return bool(known) and UNTRUSTED not in known.values()


def _children(known: Mapping[str, int]) -> dict[str, list[str]]:
    """The known subdirectories of each known directory."""
    children: dict[str, list[str]] = {}
    for rel in known:
        if rel:
            children.setdefault(rel.rpartition("/")[0], []).append(rel)
    return children


def _restat(
    root: str, rel: str, known_files: frozenset[str], found: list[FileStat], problems: list[tuple[str, str]]
) -> None:
    """The known results.pkl of an unchanged directory, stat'ed again (a rewrite in place changes the file only)."""
    result = f"{rel}/{RESULT_FILE}" if rel else RESULT_FILE
    if result in known_files:
        _add(found, problems, f"{root}/{result}", result)


def _dir_mtime(root: str, rel: str, problems: list[tuple[str, str]]) -> int | None:
    """The directory's mtime_ns, or None (and a problem) when it cannot be read."""
    try:
        return os.stat(f"{root}/{rel}" if rel else root).st_mtime_ns
    except OSError as exc:
        problems.append((rel or ".", f"directory cannot be read ({exc.strerror or exc})"))
        return None


def _list(root: str, rel: str, pending: list[str], found: list[FileStat], problems: list[tuple[str, str]]) -> bool:
    """Sort every entry of one directory (see :func:`_entry`); False when it held a problem or could not be listed."""
    before = len(problems)
    prefix = f"{rel}/" if rel else ""
    try:
        with os.scandir(f"{root}/{rel}" if rel else root) as entries:
            for entry in entries:
                _entry(entry, prefix, pending, found, problems)
    except OSError as exc:
        problems.append(
            (
                rel or ".",
                f"directory cannot be listed ({exc.strerror or exc}); its results would "
                "be missing: fix its permissions",
            )
        )
    return len(problems) == before


def _entry(
    entry: os.DirEntry, prefix: str, pending: list[str], found: list[FileStat], problems: list[tuple[str, str]]
) -> None:
    """Sort one directory entry: a directory to visit, a results.pkl to read, or a problem."""
    name = entry.name
    if name.startswith("."):
        return
    rel = prefix + name
    shown = _undecodable(rel)
    if shown is not None:
        problems.append((shown, "name is not valid UTF-8; rename it"))
        return
    try:
        if _directory_or_link(entry, rel, pending, problems):
            return
    except OSError as exc:
        problems.append((rel, f"cannot be read ({exc.strerror or exc})"))
        return
    if name == RESULT_FILE:
        _add(found, problems, entry.path, rel)


def _undecodable(rel: str) -> str | None:
    """``rel`` shown with replacement characters when it is not valid UTF-8 (it could be neither stored
    nor reported faithfully), else None."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return rel.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return None


def _directory_or_link(entry: os.DirEntry, rel: str, pending: list[str], problems: list[tuple[str, str]]) -> bool:
    """True when ``entry`` was sorted here: a directory queued in ``pending``, or a problem (a directory
    named results.pkl, a link to a directory, a dangling link); False for a file or a link to one.

    Apart so that every stat it makes is under the caller's one OSError handler.
    """
    if entry.is_dir(follow_symlinks=False):
        if entry.name == RESULT_FILE:
            problems.append((rel, "is a directory; a results.pkl must be a file"))
        else:
            pending.append(rel)
        return True
    if not entry.is_symlink():
        return False
    if entry.is_dir():
        problems.append((rel, "a symbolic link to a directory, not followed; copy the directory into the run instead"))
        return True
    if not os.path.exists(entry.path):
        problems.append((rel, "a dangling symbolic link (its target does not exist or loops)"))
        return True
    return False


def _unchanged(root: str, known: Mapping[str, int], known_files: frozenset[str]) -> list[FileStat] | None:
    """The known files, re-stat'ed, when no known directory changed (the warm case); else None.

    Two flat loops of stat calls instead of a walk: most of a warm build is this.
    """
    stat = os.stat
    try:
        for rel, mtime in known.items():
            if stat(f"{root}/{rel}" if rel else root).st_mtime_ns != mtime:
                return None
        found = []
        for rel in sorted(known_files):
            st = stat(f"{root}/{rel}")
            found.append(FileStat(rel, st.st_size, st.st_mtime_ns))
    except OSError:
        return None
    return found


def _add(found: list[FileStat], problems: list[tuple[str, str]], where: str, rel: str) -> None:
    try:
        st = os.stat(where)
    except OSError as exc:
        problems.append((rel, f"cannot be read ({exc.strerror or exc})"))
        return
    if not stat.S_ISREG(st.st_mode):
        kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
        problems.append((rel, f"is {kind}; a results.pkl must be a file"))
        return
    found.append(FileStat(rel, st.st_size, st.st_mtime_ns))


def scan(data_dir: Path) -> list[FileStat]:
    """Every results.pkl under ``data_dir``, sorted by path (hidden directories skipped)."""
    return walk(data_dir)[0]
