"""The raw-data index: every results.pkl of a run decoded once into one table DuckDB can query.

:func:`build_index` puts the pieces together, each a module of its own: the walk of the data
directory (:mod:`~tabarena_checks.raw.walk`: a later build lists again only the directories whose
mtime changed), the decoding in worker processes (:mod:`~tabarena_checks.raw.decode`), the parquet
cache keyed per file by its path, size and mtime_ns (:mod:`~tabarena_checks.raw.index_cache`: a later
build decodes only new or changed files and drops deleted ones) and the process's DuckDB database
(:mod:`~tabarena_checks.raw.database`). Callers import what they need of the index from here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import InputError, io
from tabarena_checks.raw import database, reader
from tabarena_checks.raw.decode import Decoder, decode
from tabarena_checks.raw.index_cache import Cached, cache_file, code_digest, default_cache_dir, read_cache, stored
from tabarena_checks.raw.schema import schema, unreadable_schema
from tabarena_checks.raw.walk import RESULT_FILE, FileStat, scan, walk

#: what callers outside this module import from here; the pieces live in the modules named above
__all__ = [
    "FileStat",
    "RawIndex",
    "build_index",
    "code_digest",
    "default_cache_dir",
    "schema",
    "scan",
    "split_methods",
]


def _changed(root: Path, items: Sequence[FileStat], digests: Sequence[str | None], max_bytes: int) -> set[str]:
    """The paths among ``items`` whose bytes no longer have the digest recorded when they were decoded.

    A file rewritten with the same size and its mtime restored (``os.utime``, ``rsync -a``) keeps
    its cache key; only its content tells. Read in threads (reading and hashing release the GIL).
    """

    def differs(pair: tuple[FileStat, str | None]) -> bool:
        item, digest = pair
        try:
            return digest is None or io.sha256(reader.read_raw(root / item.path, max_bytes=max_bytes)) != digest
        except reader.RawFileError:
            return True

    with ThreadPoolExecutor(min(8, os.cpu_count() or 2)) as pool:
        flags = list(pool.map(differs, zip(items, digests)))
    return {item.path for item, changed in zip(items, flags) if changed}


@attrs.frozen(slots=False)
class RawIndex:
    """The decoded rows of one data directory (or one method of it), queryable with DuckDB as ``results``.

    ``table`` holds the readable files, ``errors`` the unreadable ones as (path, reason);
    paths are relative to ``data_dir``. ``decoded`` counts the files decoded by the build
    that produced this index (0 when everything came from the cache).
    """

    data_dir: Path
    table: Any = attrs.field(repr=False)
    errors: tuple[tuple[str, str], ...] = ()
    decoded: int = 0
    cache_path: Path | None = None
    #: names the cached content this index was read from or written as (a new one whenever a
    #: file was added, changed or removed); None when the index is not cached
    fingerprint: str | None = None
    #: the method prefix when this is one method's part of a directory (see :func:`split_methods`)
    method: str | None = None
    #: every results.pkl the build found, readable or not, with the size and mtime it saw
    files: tuple[FileStat, ...] = attrs.field(default=(), repr=False)

    @cached_property
    def con(self):
        """A DuckDB cursor of the process's database (:func:`~tabarena_checks.raw.database.shared`) with ``results`` (readable files) and
        ``unreadable`` registered."""
        import pyarrow as pa

        con = database.shared().cursor()
        con.register("results", self.table)
        layouts = [{**reader.layout(Path(path)), "path": path, "reason": reason} for path, reason in self.errors]
        con.register("unreadable", pa.Table.from_pylist(layouts, schema=unreadable_schema()))
        return con

    def query(self, sql: str, params: Any = None) -> list[tuple]:
        """Run ``sql`` against ``results`` and return every row (results are always fully fetched)."""
        return self._fetched(sql, params)[1]

    def records(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """Like :meth:`query`, with each row as a dict keyed by column name."""
        names, rows = self._fetched(sql, params)
        return [dict(zip(names, row)) for row in rows]

    def _fetched(self, sql: str, params: Any) -> tuple[list[str], list[tuple]]:
        """The column names and every row of ``sql``; a query stopped by Ctrl-C or SIGTERM raises KeyboardInterrupt."""
        with io.interrupted_query_aborts():
            cursor = self.con.execute(sql, params) if params is not None else self.con.execute(sql)
            return [d[0] for d in cursor.description or ()], cursor.fetchall()

    def abspath(self, path: str) -> Path:
        """The file a row's ``path`` refers to."""
        return self.data_dir / path

    def __len__(self) -> int:
        return self.table.num_rows


def build_index(
    data_dir: str | os.PathLike,
    *,
    cache_dir: str | os.PathLike | None = None,
    workers: int | None = None,
    progress: bool | None = None,
    use_cache: bool = True,
    write_cache: bool = True,
    max_bytes: int = reader.DEFAULT_MAX_BYTES,
    verify: bool = False,
) -> RawIndex:
    """Decode every results.pkl under ``data_dir`` (reusing the cache) into a :class:`RawIndex`.

    With ``write_cache=False`` an existing cache is only read: nothing is written, and the
    index carries no cache path or fingerprint, so nothing downstream writes next to it.
    With ``verify`` every cached row is checked against its file's content (sha256) and
    decoded again when it differs: what an action copies must be what its rules judged.
    """
    root = Path(data_dir)
    if not root.is_dir():
        raise InputError(
            f"raw data directory '{root}' does not exist or is not a directory: point it at the run's data/ "
            f"folder (<data>/<config>/<task>/<repeat>_<fold>/{RESULT_FILE})"
        )
    cache_path = cache_file(root, cache_dir) if use_cache else None
    cached = read_cache(cache_path, root) if cache_path else None
    if cached is None:  # every file is decoded: start while the walk goes on
        with Decoder(root, workers, max_bytes) as decoder:
            files, dirs, walk_problems = walk(root, found_more=decoder.found_more)
            _some_found(root, files, walk_problems)
            table, todo = decoder.table(files, progress), files
            # written before the decoder is left: its workers exit meanwhile
            cache_path, fingerprint = stored(cache_path if write_cache else None, root, cached, table, dirs)
    else:
        cached_keys = _keys(cached)
        files, dirs, walk_problems = walk(root, cached.dirs, frozenset(k[0] for k in cached_keys))
        _some_found(root, files, walk_problems)
        changed = _changed_since(root, cached, cached_keys, set(files), max_bytes) if verify else set()
        table, todo = _table(
            root, cached, cached_keys, files, changed, workers=workers, progress=progress, max_bytes=max_bytes
        )
        cache_path, fingerprint = stored(cache_path if write_cache else None, root, cached, table, dirs)
    good, errors = _split_errors(table, walk_problems)
    return RawIndex(
        data_dir=root,
        table=good,
        errors=errors,
        decoded=len(todo),
        cache_path=cache_path,
        fingerprint=fingerprint,
        files=tuple(files),
    )


def _some_found(root: Path, files: list[FileStat], walk_problems: list[tuple[str, str]]) -> None:
    """Refuse a directory that holds no results.pkl and no entry that should have been one."""
    if not files and not walk_problems:
        raise InputError(
            f"no {RESULT_FILE} found under '{root}': expected <config>/<task>/<repeat>_<fold>/{RESULT_FILE}; "
            "point it at the run's data/ folder"
        )


def _keys(cached: Cached) -> list[tuple[str, int, int]]:
    """``(path, size, mtime_ns)`` of every cached row, in the cache's order."""
    t = cached.table
    return list(zip(t["path"].to_pylist(), t["size"].to_pylist(), t["mtime_ns"].to_pylist()))


def _changed_since(root: Path, cached: Cached, cached_keys: list, wanted: set, max_bytes: int) -> set[str]:
    """The cached rows whose file kept its stat but not its content (see :func:`_changed`)."""
    reused = [
        (FileStat(*key), digest)
        for key, digest in zip(cached_keys, cached.table["sha256"].to_pylist())
        if key in wanted
    ]
    return _changed(root, [r[0] for r in reused], [r[1] for r in reused], max_bytes)


def _table(
    root: Path, cached: Cached, cached_keys: list, files: list[FileStat], changed: set[str], **decoding
) -> tuple[Any, list[FileStat]]:
    """Every file's row (the cached rows still valid, the others decoded now) and the files decoded."""
    import pyarrow as pa

    if files == cached_keys and not changed:  # the usual warm case: nothing to decode or drop
        return cached.table, []
    kept, todo = _kept(cached, cached_keys, files, changed)
    return pa.concat_tables([kept, decode(root, todo, **decoding)]).sort_by("path"), todo


def _kept(cached: Cached, cached_keys: list, files: list[FileStat], changed: set[str]):
    """The cached rows still valid and the files to decode."""
    import pyarrow as pa

    wanted = set(files)
    mask = [key in wanted and key[0] not in changed for key in cached_keys]
    have = {key for key, keep in zip(cached_keys, mask) if keep}
    return cached.table.filter(pa.array(mask, pa.bool_())), [f for f in files if f not in have]


def _split_errors(table, walk_problems: list[tuple[str, str]]):
    """The decoded rows without their error column, and ``(path, error)`` of every file that could not be judged."""
    import pyarrow.compute as pc

    errors: tuple[tuple[str, str], ...] = ()
    good = table
    if table["error"].null_count < table.num_rows:  # filtering copies every column: only when needed
        failed = pc.is_valid(table["error"])
        bad = table.filter(failed)
        errors = tuple(zip(bad["path"].to_pylist(), bad["error"].to_pylist()))
        good = table.filter(pc.invert(failed))
    if walk_problems:  # entries that are not results the run can be judged on: they block like unreadable files
        errors = tuple(sorted([*errors, *walk_problems]))
    return good.drop_columns(["error"]), errors


def split_methods(index: RawIndex) -> dict[str, RawIndex]:
    """One index per method in the directory, keyed by config-dir prefix (a baseline's whole framework name).

    An unreadable file goes to the method of its config directory; when that directory
    holds no readable file it goes to every method, so no method looks clean by accident.
    """
    import pyarrow.compute as pc

    table = index.table
    prefixes = sorted({p for p in table["method_prefix"].to_pylist() if p is not None})
    by_dir = dict(zip(table["config_dir"].to_pylist(), table["method_prefix"].to_pylist()))
    out = {}
    for prefix in prefixes:
        errors = []
        for path, reason in index.errors:
            config_dir = Path(path).parts[0] if len(Path(path).parts) >= 2 else None
            owner = by_dir.get(config_dir) or reader.method_prefix(config_dir, None, True)
            if owner == prefix or owner not in prefixes:
                errors.append((path, reason))
        alone = len(prefixes) == 1 and table["method_prefix"].null_count == 0  # every row: no copy to filter
        rows = table if alone else table.filter(pc.equal(table["method_prefix"], prefix))
        out[prefix] = attrs.evolve(index, table=rows, errors=tuple(errors), method=prefix)
    return out
