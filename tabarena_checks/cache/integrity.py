"""Content digests that tie a published cache to the raw files its rules judged.

The rules judge the bytes the index decoded; process copies raw files into ``raw/`` and
upload zips the cache. A file swapped in between (same size, mtime restored: ``rsync -a``
does it by accident) or dropped into the cache after process would otherwise be copied or
published unjudged. So: the index records the sha256 of every file it decodes, process
checks each copy against it and writes a manifest of every file of the cache (its digest goes
into the process decision record), and upload refuses a cache that differs from its manifest
or whose manifest no passed process decision recorded, and checks each file again as it
stages it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from checks.io import file_sha256, sha256

#: the key of the manifest in ``.checks-source.json`` and of its digest in the process decision record
MANIFEST = "files"
#: the file beside the cache's files that records what it was built from, with the manifest
SOURCE_RECORD = ".checks-source.json"
DECISION_KEY = "cache_manifest"
#: what upload keeps in the cache and never publishes (see tabarena_checks.publish.upload)
UNLISTED = (SOURCE_RECORD, ".checks-staging")


def listing(cache_dir: Path) -> list[str]:
    """Every entry below ``cache_dir`` that a manifest covers, relative and sorted; directories are
    walked without following links, and anything that is not a regular file is listed too (so it differs)."""
    out: list[str] = []
    pending = [""]
    while pending:
        rel = pending.pop()
        with os.scandir(cache_dir / rel if rel else cache_dir) as entries:
            for entry in entries:
                name = f"{rel}/{entry.name}" if rel else entry.name
                if not rel and entry.name in UNLISTED:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    pending.append(name)
                else:
                    out.append(name)
    return sorted(out)


def manifest_of(cache_dir: Path, known: Mapping[str, str] | None = None) -> dict[str, str]:
    """``{relative path: sha256}`` of every file of the cache; ``known`` digests are taken as given."""
    known = known or {}
    return {rel: known.get(rel) or file_sha256(cache_dir / rel) for rel in listing(cache_dir)}


def manifest_digest(manifest: Mapping[str, str]) -> str:
    """One digest naming a whole manifest (what the process decision record keeps)."""
    return sha256(json.dumps(dict(sorted(manifest.items())), sort_keys=True).encode())


#: how :func:`differences` words a file added, changed or missing against what process wrote
BY_PROCESS = (
    "not written by process (added to the cache afterwards)",
    "changed since process wrote it (sha256 differs)",
    "missing (process wrote it)",
)


def differences(cache_dir: Path, manifest: Mapping[str, str], words: tuple[str, str, str] = BY_PROCESS) -> list[str]:
    """How the cache differs from ``manifest``: files added, changed or missing (``words`` says each), or not
    regular files."""
    added, changed, missing = words
    problems = []
    present = listing(cache_dir)
    for rel in present:
        path = cache_dir / rel
        if rel not in manifest:
            problems.append(f"{rel}: {added}")
        elif not path.is_file() or path.is_symlink():
            problems.append(f"{rel}: not a regular file")
        elif file_sha256(path) != manifest[rel]:
            problems.append(f"{rel}: {changed}")
    problems += [f"{rel}: {missing}" for rel in sorted(set(manifest) - set(present))]
    return problems


def passed_process_decisions(records: Iterable[Mapping[str, Any]]) -> set[str]:
    """The manifest digests recorded by every process run whose rules passed and that ran (wrote or kept a cache)."""
    return {
        r["inputs"][DECISION_KEY]
        for r in records
        if r.get("action") == "process"
        and r.get("outcome") == "ran"
        and not r.get("dry_run")
        and isinstance(r.get("inputs"), dict)
        and isinstance(r["inputs"].get(DECISION_KEY), str)
    }
