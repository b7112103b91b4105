"""The raw-data index: every results.pkl of a run decoded once into one table DuckDB can query.

Decoding is the expensive part (gunzip, then unpickle), so files are decoded in parallel
processes and the rows are cached as parquet, keyed per file by its path, size and
mtime_ns: a later build decodes only new or changed files and drops deleted ones, and lists
again only the directories whose mtime changed (see :func:`walk`). The cache lives in the
user's own cache directory (:func:`checks.io.user_cache_dir`), one per resolved data
directory, never beside the data: raw data can come from outside submitters, and a cache
shipped with it is then simply never read. The cache is an optimisation only; when it
cannot be read or written the index is built from the files alone.
"""

from __future__ import annotations

import ctypes
import gc
import multiprocessing
import signal
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
import functools
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from checks import InputError, io
from checks import progress as bars
from tabarena_checks.raw import reader

RESULT_FILE = "results.pkl"
#: below the user's cache directory: one sub-directory per resolved data directory
CACHE_SUBDIR = "index"
CACHE_FILE = "index.parquet"
#: below this many files to decode, starting worker processes costs more than it saves
PARALLEL_THRESHOLD = 48
CHUNK = 32


@functools.cache  # built once per process (65 fields take 60 us, and each batch of files asks for it)
def schema():
    """The explicit Arrow schema of a row (``error`` is set only for unreadable files).

    A row holds what its file says, decoded and typed, and nothing judged: the rules judge it when
    the gate runs (tabarena_checks.rules.raw_fields), so no index, however old, carries a verdict.
    ``artifact_facts`` and ``val_position_bounds`` are JSON (tabarena_checks.raw.artifacts.facts);
    ``decode_errors`` says why a value could not be decoded into its column (or a measurement could not
    be made), ``invalid_text`` which text was not valid Unicode.
    """
    import pyarrow as pa

    s, i, f, b = pa.string(), pa.int64(), pa.float64(), pa.bool_()
    return pa.schema(
        [
            ("path", s),
            ("size", i),
            ("mtime_ns", i),
            ("sha256", s),
            ("config_dir", s),
            ("task_dir", s),
            ("split_dir", s),
            ("dir_repeat", i),
            ("dir_fold", i),
            ("method_prefix", s),
            ("framework", s),
            ("tid", i),
            ("dataset", s),
            ("repeat", i),
            ("fold", i),
            ("sample", i),
            ("split_idx", i),
            ("problem_type", s),
            ("metric", s),
            ("metric_error", f),
            ("metric_error_val", f),
            ("time_train_s", f),
            ("time_infer_s", f),
            ("num_cpus", i),
            ("num_gpus", f),
            ("disk_usage", f),
            ("model_cls", s),
            ("model_type", s),
            ("ag_key", s),
            ("name_prefix", s),
            ("name_suffix", s),
            ("has_method_metadata", b),
            ("has_sim_artifacts", b),
            ("is_legacy_layout", b),
            ("num_bag_children", i),
            ("use_child_oof", b),
            ("child_oof", b),
            ("has_vp_record", b),
            ("vp_key", s),
            ("vp_flavour", s),
            ("vp_num_bag_folds", i),
            ("vp_num_bag_sets", i),
            ("vp_child_oof", b),
            ("vp_num_child_models", i),
            ("vp_protocol", s),
            ("vp_stored_key", s),
            ("test_not_close_pct", f),
            ("val_not_close", b),
            ("val_not_close_pct", f),
            ("val_labels_missing", b),
            ("val_rows", i),
            ("test_rows", i),
            ("labels_digest", s),
            ("hyperparameters", s),
            ("method_hyperparameters", s),
            ("metric_error_val_state", s),
            ("has_model_type_key", b),
            ("model_hyperparameters_kind", s),
            ("model_hyperparameters_shown", s),
            ("artifact_facts", s),
            ("val_position_bounds", s),
            ("decode_errors", pa.list_(s)),
            ("invalid_text", pa.list_(pa.struct([("field", s), ("shown", s)]))),
            ("unread", pa.list_(s)),
            ("error", s),
        ]
    )


def unreadable_schema():
    """Columns of the ``unreadable`` table: where each unreadable file sits and why it failed."""
    import pyarrow as pa

    return pa.schema(
        [
            ("path", pa.string()),
            ("config_dir", pa.string()),
            ("task_dir", pa.string()),
            ("split_dir", pa.string()),
            ("dir_repeat", pa.int64()),
            ("dir_fold", pa.int64()),
            ("reason", pa.string()),
        ]
    )


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
            pending[listed:] = sorted(pending[listed:], reverse=True)  # visited in name order: see _Decoder.table
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


def _decode_chunk(root: str, items: Sequence[FileStat], max_bytes: int):
    """Decode a batch of files into a table (runs in a worker process); unreadable files become error rows.

    Each row records the sha256 of the bytes it was decoded from, so whatever later copies
    the file (process, upload) can prove it holds what the rules judged. The worker builds the
    Arrow table itself: converting rows is a fifth of the work and would otherwise run in the
    parent, one core, while the workers wait.
    """
    import pyarrow as pa

    rows = []
    for item in items:
        path, digest = f"{root}/{item.path}", None
        try:
            data = reader.read_raw(path, max_bytes=max_bytes)
            digest = io.sha256(data)
            notes: list[str] = []
            row = reader.row_from_result(reader.unpickle(path, reader.unpack(path, data, max_bytes), notes), item.path)
            row.update(error=None, unread=notes)
        except reader.RawFileError as exc:
            row = _error_row(item, exc.reason)
        except Exception as exc:  # a bug met by one odd file is that file's finding; the run goes on
            row = _error_row(item, f"could not be judged ({type(exc).__name__}: {reader._text(exc)})")
        row.update(path=item.path, size=item.size, mtime_ns=item.mtime_ns, sha256=digest)
        rows.append(row)
    try:
        return pa.Table.from_pylist(rows, schema=schema())
    except (pa.ArrowException, ValueError, TypeError, OverflowError):  # find the row(s) Arrow cannot hold
        tables = []
        for row in rows:
            try:
                tables.append(pa.Table.from_pylist([row], schema=schema()))
            except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
                item = FileStat(row["path"], row["size"], row["mtime_ns"])
                bad = {
                    **_error_row(item, f"could not be recorded ({type(exc).__name__}: {reader._text(exc)})"),
                    "path": item.path,
                    "size": item.size,
                    "mtime_ns": item.mtime_ns,
                    "sha256": row.get("sha256"),
                }
                tables.append(pa.Table.from_pylist([bad], schema=schema()))
        return pa.concat_tables(tables)


def _sent_chunk(root: str, items: Sequence[FileStat], max_bytes: int) -> list[bytes]:
    """:func:`_decode_chunk`'s table as Arrow IPC record batch messages, what a worker sends back.

    Pickling the table itself costs ten times as much on each side (1.2 ms to write and 0.9 ms to read 32
    rows, against 0.1 ms). The messages carry no schema: the parent reads them all against its one
    :func:`schema` object (:func:`_received`), so joining them compares no schemas. Joining 57 IPC streams,
    each with a schema of its own, took 6-10 ms of comparing them; these take 1-2 ms.
    """
    return [batch.serialize().to_pybytes() for batch in _decode_chunk(root, items, max_bytes).to_batches()]


def _received(messages: list[bytes]) -> list[Any]:
    """The record batches a worker sent (:func:`_sent_chunk`)."""
    import pyarrow as pa

    return [pa.ipc.read_record_batch(pa.py_buffer(message), schema()) for message in messages]


def _error_row(item: FileStat, reason: str) -> dict[str, Any]:
    return {**reader.layout(item.path), "error": reason, "decode_errors": [], "invalid_text": [], "unread": []}


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


def _chunks(items: Sequence[FileStat], size: int) -> Iterable[Sequence[FileStat]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _decode(root: Path, todo: list[FileStat], *, workers: int | None, progress: bool | None, max_bytes: int):
    """The rows of ``todo`` as one table, decoded in worker processes when there are enough files."""
    chunks = -(-len(todo) // CHUNK)  # no more workers than chunks
    with _Decoder(root, min(workers or os.cpu_count() or 1, max(chunks, 1)), max_bytes) as decoder:
        decoder.found_more(todo)
        return decoder.table(todo, progress)


class _Decoder:
    """Files decoded into one table: in worker processes once :data:`PARALLEL_THRESHOLD` files are queued,
    in chunks of :data:`CHUNK` sent as soon as they are full; here, after the last file, below that.

    A cold build queues each directory's files while the walk is still listing the run: the walk of a
    large run takes a few tens of milliseconds in which the second core would otherwise idle. The pool
    is forked from the walk, before any other thread of the build runs (a progress bar's included).
    Once the walk is done, a thread prepares the queries that follow (:func:`_prepare_queries`); once the
    last chunk is in, another stops the workers, and leaving the decoder waits for it.
    """

    def __init__(self, root: Path, workers: int | None, max_bytes: int):
        self.root, self.max_bytes = str(root), max_bytes
        self.workers = workers or os.cpu_count() or 1
        self.waiting: list[FileStat] = []
        self.sent: list[Any] = []
        self.pool: ProcessPoolExecutor | None = None
        self.preparing: threading.Thread | None = None
        self.stopping: threading.Thread | None = None

    def __enter__(self) -> _Decoder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.stopping is not None:
            self.stopping.join()
        elif self.pool is not None:  # on Ctrl-C or an error the queued chunks are dropped
            self.pool.shutdown(wait=True, cancel_futures=True)

    def found_more(self, files: list[FileStat]) -> None:
        """Queue ``files``; send every full chunk once there are enough files for workers."""
        self.waiting.extend(files)
        if self.pool is None:
            if self.workers < 2 or len(self.waiting) < PARALLEL_THRESHOLD:
                return
            # they only run numpy/zlib/pickle code and pyarrow's single-threaded conversion
            self.pool = worker_pool(self.workers, die_with_parent)
        while len(self.waiting) >= CHUNK:
            self._send(self.waiting[:CHUNK])
            del self.waiting[:CHUNK]

    def _send(self, chunk: list[FileStat]) -> None:
        self.sent.append((len(chunk), self.pool.submit(_sent_chunk, self.root, chunk, self.max_bytes)))

    def table(self, files: list[FileStat], progress: bool | None):
        """The rows of ``files`` (every file queued) as one table, sorted by path."""
        import pyarrow as pa

        if not files:
            return schema().empty_table()
        tables = []
        with bars.bar("decode", total=len(files), unit="results.pkl", show=progress) as advance:
            if self.pool is None:
                for chunk in _chunks(files, CHUNK):
                    tables.append(_decode_chunk(self.root, chunk, self.max_bytes))
                    advance(len(chunk))
            else:
                if self.waiting:
                    self._send(self.waiting)
                    self.waiting = []
                # the walk is done (it would compete for the interpreter) and the workers are forked
                self.preparing = threading.Thread(target=_prepare_queries, name="prepare-queries", daemon=True)
                self.preparing.start()
                batches = []
                for count, sent in self.sent:
                    batches += _received(sent.result())
                    advance(count)
                tables.append(pa.Table.from_batches(batches, schema=schema()))
                # every chunk is in: the workers exit (about 15 ms) while this process goes on, and are
                # waited for when the decoder is left, after the cache is written
                self.stopping = threading.Thread(target=self.pool.shutdown, name="stop-workers", daemon=True)
                self.stopping.start()
        if self.preparing is not None:  # done long before the workers, unless the run is tiny
            self.preparing.join()
        # one chunk per column, not one per batch of files: on 1,800 rows (57 batches) the cache is written in
        # 14 ms instead of 25 and the queries that follow take 122 ms instead of 152, for 5 ms of copying
        return _sorted(pa.concat_tables(tables).combine_chunks())


def _sorted(table):
    """``table`` sorted by path. A cold build's walk visits directories in name order, so its rows usually
    arrive sorted: checking that costs a twentieth of sorting, which copies every column."""
    import pyarrow.compute as pc

    paths = table["path"]
    if len(paths) < 2 or pc.all(pc.less(paths[:-1], paths[1:])).as_py():
        return table
    return table.sort_by("path")


def _prepare_queries() -> None:
    """Import what the index's queries need and open the process's database (:func:`_database`).

    A cold build does it while its workers decode, when this process waits, instead of after them: the
    imports and the database take about a quarter of a second that the first query would otherwise wait.
    A failure here is left to that query to report.
    """
    try:
        import pyarrow.compute  # noqa: F401  (the sort check, split_methods)

        _database()
    except Exception:  # noqa: BLE001 - the same call, made by the first query, raises it where it is handled
        pass


def worker_pool(count: int, initializer: Callable[[int], None]):
    """A pool of ``count`` worker processes, each started with ``initializer(<this process's pid>)``.

    Forked where the platform can (workers start in milliseconds and never re-import the caller's
    ``__main__``), spawned elsewhere.
    """
    fork = "fork" in multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if fork else "spawn")
    return ProcessPoolExecutor(count, mp_context=ctx, initializer=_started, initargs=(initializer, os.getpid()))


def _started(initializer: Callable[[int], None], parent: int) -> None:
    """Every pool worker's first step: set aside the objects it inherited, then ``initializer(parent)``.

    A forked worker holds a copy of its parent's objects, which it never frees. The collector would
    still walk them all at each full collection, writing to every page they sit on, so the kernel
    copies those pages: about 30 ms per worker in a cold build of 1,800 files. Frozen (gc.freeze),
    they are out of its reach. A spawned worker has few objects to freeze.
    """
    gc.freeze()
    initializer(parent)


def quiet_worker(parent: int) -> None:
    """Worker initializer for the pools of ``checks run process``: stopped quietly, and only by its pool.

    The CLI's SIGTERM handler (stop as Ctrl-C does, so ``finally`` blocks run) is inherited by fork
    and would print a KeyboardInterrupt traceback from each worker the pool terminates (it does when
    another worker died). Ctrl-C is the main process's to handle: it shuts the pool down, cancelling
    what is queued, so a pool using this must shut down with ``cancel_futures=True``.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)


@contextmanager
def quiet_pool(count: int) -> Iterator[Any]:
    """``count`` worker processes started with :func:`quiet_worker`, every one forked now (call it before any
    other thread starts: a process forked beside another thread keeps, held for good, any lock that thread
    held); on leaving, the queued tasks are dropped and the workers stopped."""
    pool = worker_pool(count, quiet_worker)
    try:
        pool.submit(int).result()  # fork starts every worker at the first task
        yield pool
    finally:  # on Ctrl-C the queued tasks are dropped, not run by workers that ignore it
        pool.shutdown(wait=True, cancel_futures=True)


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this worker when the process that started it dies, even by SIGKILL.

    A killed parent never tells its pool to stop, and a forked worker holds the write end of its
    own task pipe, so it would wait for work forever. On Linux the kernel sends SIGKILL on the
    parent's death (PR_SET_PDEATHSIG); elsewhere a thread polls the parent pid.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        armed = libc.prctl(1, int(signal.SIGKILL), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:

        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            os._exit(1)

        threading.Thread(target=watch, daemon=True, name="die-with-parent").start()


def default_cache_dir(data_dir: str | os.PathLike) -> Path:
    """This user's cache directory for ``data_dir``: named by a digest of its resolved path."""

    key = hashlib.sha256(os.fsencode(Path(data_dir).resolve())).hexdigest()[:24]
    return io.user_cache_dir() / CACHE_SUBDIR / key


def _cache_file(data_dir: Path, cache_dir: str | os.PathLike | None) -> Path:
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
class _Cached:
    """What the cache file holds: the rows, the directory mtimes of the walk that found
    them, and a token naming this content (see :attr:`RawIndex.fingerprint`)."""

    table: Any
    dirs: dict[str, int]
    token: str


def _read_cache(path: Path, data_dir: Path) -> _Cached | None:
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
    return _Cached(table.replace_schema_metadata(None), dirs, token)


def _write_cache(path: Path, cached: _Cached, data_dir: Path) -> bool:
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


def _database():
    """This process's one in-memory DuckDB database; each index queries it through a cursor of its own.

    Opening a database costs about 40 ms (measured with DuckDB 2.0 on the 2-core VM) and a cursor a tenth of
    a millisecond; what a cursor registers is its own, so indexes never see each other's ``results``. Kept per
    process id: a forked worker must not use its parent's database, whose threads it does not have.

    One DuckDB thread per query: the index holds a row per file, so a query is mostly planning, which a
    second thread does not share, and ``checks inspect`` already runs two queries at once (the inference
    beside TA306). Its 17 queries over 1,800 rows took 161 ms (median of 12) against 187 ms with two.
    """
    import duckdb

    pid = os.getpid()
    with _OPENING:  # a cold build opens it in a thread of its own (_prepare_queries): one database, not two
        if _DATABASE.get("pid") != pid:
            _DATABASE.update(pid=pid, db=duckdb.connect(config={"threads": 1, "memory_limit": "1GB"}))
        return _DATABASE["db"]


_DATABASE: dict[str, Any] = {}
_OPENING = threading.Lock()


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
        """A DuckDB cursor of the process's database (:func:`_database`) with ``results`` (readable files) and
        ``unreadable`` registered."""
        import pyarrow as pa

        con = _database().cursor()
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
    cache_path = _cache_file(root, cache_dir) if use_cache else None
    cached = _read_cache(cache_path, root) if cache_path else None
    if cached is None:  # every file is decoded: start while the walk goes on
        with _Decoder(root, workers, max_bytes) as decoder:
            files, dirs, walk_problems = walk(root, found_more=decoder.found_more)
            _some_found(root, files, walk_problems)
            table, todo = decoder.table(files, progress), files
            # written before the decoder is left: its workers exit meanwhile
            cache_path, fingerprint = _stored(cache_path if write_cache else None, root, cached, table, dirs)
    else:
        cached_keys = _keys(cached)
        files, dirs, walk_problems = walk(root, cached.dirs, frozenset(k[0] for k in cached_keys))
        _some_found(root, files, walk_problems)
        changed = _changed_since(root, cached, cached_keys, set(files), max_bytes) if verify else set()
        table, todo = _table(
            root, cached, cached_keys, files, changed, workers=workers, progress=progress, max_bytes=max_bytes
        )
        cache_path, fingerprint = _stored(cache_path if write_cache else None, root, cached, table, dirs)
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


def _keys(cached: _Cached) -> list[tuple[str, int, int]]:
    """``(path, size, mtime_ns)`` of every cached row, in the cache's order."""
    t = cached.table
    return list(zip(t["path"].to_pylist(), t["size"].to_pylist(), t["mtime_ns"].to_pylist()))


def _changed_since(root: Path, cached: _Cached, cached_keys: list, wanted: set, max_bytes: int) -> set[str]:
    """The cached rows whose file kept its stat but not its content (see :func:`_changed`)."""
    reused = [
        (FileStat(*key), digest)
        for key, digest in zip(cached_keys, cached.table["sha256"].to_pylist())
        if key in wanted
    ]
    return _changed(root, [r[0] for r in reused], [r[1] for r in reused], max_bytes)


def _table(
    root: Path, cached: _Cached, cached_keys: list, files: list[FileStat], changed: set[str], **decode
) -> tuple[Any, list[FileStat]]:
    """Every file's row (the cached rows still valid, the others decoded now) and the files decoded."""
    import pyarrow as pa

    if files == cached_keys and not changed:  # the usual warm case: nothing to decode or drop
        return cached.table, []
    kept, todo = _kept(cached, cached_keys, files, changed)
    return pa.concat_tables([kept, _decode(root, todo, **decode)]).sort_by("path"), todo


def _kept(cached: _Cached, cached_keys: list, files: list[FileStat], changed: set[str]):
    """The cached rows still valid and the files to decode."""
    import pyarrow as pa

    wanted = set(files)
    mask = [key in wanted and key[0] not in changed for key in cached_keys]
    have = {key for key, keep in zip(cached_keys, mask) if keep}
    return cached.table.filter(pa.array(mask, pa.bool_())), [f for f in files if f not in have]


def _stored(cache_path: Path | None, root: Path, cached: _Cached | None, table, dirs: dict[str, int]):
    """Write the cache when its content or directory stats changed; ``(cache path, fingerprint)``, or
    ``(None, None)`` when there is no cache to write (or writing failed)."""
    if not cache_path:
        return None, None
    content_changed = cached is None or table is not cached.table
    fingerprint = os.urandom(12).hex() if content_changed else cached.token
    if (content_changed or dirs != cached.dirs) and not _write_cache(
        cache_path, _Cached(table, dirs, fingerprint), root
    ):
        return None, None
    return cache_path, fingerprint


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
