"""The raw index's parquet cache: where it lives, what keys it, and reading and writing it.

The rows are cached per data directory in the user's own cache directory
(:func:`checks.io.user_cache_dir`), never beside the data: raw data can come from outside
submitters, and a cache shipped with it is then simply never read. The cache is keyed by a digest
of this package's code (:func:`code_digest`), so a cache written by other code is never read. It is
an optimisation only: when it cannot be read or written the index is built from the files alone.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import attrs

from checks import io
from tabarena_checks.raw.schema import schema

#: below the user's cache directory: one sub-directory per resolved data directory
CACHE_SUBDIR = "index"
CACHE_FILE = "index.parquet"


def default_cache_dir(data_dir: str | os.PathLike) -> Path:
    """This user's cache directory for ``data_dir``: named by a digest of its resolved path."""

    key = hashlib.sha256(os.fsencode(Path(data_dir).resolve())).hexdigest()[:24]
    return io.user_cache_dir() / CACHE_SUBDIR / key


def cache_file(data_dir: Path, cache_dir: str | os.PathLike | None) -> Path:
    return (Path(cache_dir) if cache_dir is not None else default_cache_dir(data_dir)) / CACHE_FILE


def _cache_tag(data_dir: Path) -> dict[bytes, bytes]:
    return {b"checks.code": code_digest().encode(), b"checks.data_dir": str(data_dir.resolve()).encode()}


@functools.cache
def code_digest() -> str:
    """A digest of the code that turns a file into a row (every module of :mod:`tabarena_checks.raw`).

    It keys the cached index: a cache built by other code, even one line of a check apart, is never
    read, so no version number has to be bumped by hand.
    """
    return digest_of_modules(Path(__file__).parent)


def digest_of_modules(package: Path) -> str:
    """``sha256:<hex>`` over the names and bytes of the ``*.py`` files of ``package``, in name order."""
    digest = hashlib.sha256()
    for module in sorted(package.glob("*.py")):
        digest.update(module.name.encode() + b"\0" + module.read_bytes() + b"\0")
    return "sha256:" + digest.hexdigest()


@attrs.frozen
class Cached:
    """What the cache file holds: the rows, the directory mtimes of the walk that found
    them, and a token naming this content (see :attr:`tabarena_checks.raw.index.RawIndex.fingerprint`)."""

    table: Any
    dirs: dict[str, int]
    token: str


def read_cache(path: Path, data_dir: Path) -> Cached | None:
    """The cached index, or None when it is absent, unreadable or from another version or directory."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if not path.is_file():  # the usual first build: pq.read_table would import pyarrow.dataset (0.2 s) to fail
        return None
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return None
    meta = table.schema.metadata or {}
    tag = _cache_tag(data_dir)
    if any(meta.get(k) != v for k, v in tag.items()) or table.schema.remove_metadata() != schema():
        return None
    try:
        dirs = json.loads(meta[b"checks.dirs"])
        token = meta[b"checks.token"].decode()
    except (KeyError, ValueError):
        return None
    if not isinstance(dirs, dict):
        return None
    return Cached(table.replace_schema_metadata(None), dirs, token)


def _write_cache(path: Path, cached: Cached, data_dir: Path) -> bool:
    """Write atomically (:func:`checks.io.replacing`); False when the location is not writable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = {
        **_cache_tag(data_dir),
        b"checks.dirs": json.dumps(cached.dirs).encode(),
        b"checks.token": cached.token.encode(),
    }
    try:
        with io.replacing(path) as tmp:
            pq.write_table(cached.table.replace_schema_metadata(meta), tmp, compression="zstd")
        return True
    except (OSError, pa.ArrowException):
        return False


def stored(cache_path: Path | None, root: Path, cached: Cached | None, table, dirs: dict[str, int]):
    """Write the cache when its content or directory stats changed; ``(cache path, fingerprint)``, or
    ``(None, None)`` when there is no cache to write (or writing failed)."""
    if not cache_path:
        return None, None
    content_changed = cached is None or table is not cached.table
    fingerprint = os.urandom(12).hex() if content_changed else cached.token
    if (content_changed or dirs != cached.dirs) and not _write_cache(
        cache_path, Cached(table, dirs, fingerprint), root
    ):
        return None, None
    return cache_path, fingerprint
