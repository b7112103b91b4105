"""Decoding results.pkl into the raw index's rows: in worker processes once there are enough files.

Decoding is the expensive part of an index (gunzip, then the restricted unpickler), so a cold build
hands each directory's files to worker processes (:mod:`tabarena_checks.workers`) while the walk is
still listing the run, and each worker sends its rows back as Arrow record batches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from checks import io
from checks import progress as bars
from tabarena_checks import workers as pools
from tabarena_checks.raw import reader
from tabarena_checks.raw import database
from tabarena_checks.raw.schema import schema
from tabarena_checks.raw.walk import FileStat

CHUNK = 32


def decode_chunk(root: str, items: Sequence[FileStat], max_bytes: int):
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
    """:func:`decode_chunk`'s table as Arrow IPC record batch messages, what a worker sends back.

    Pickling the table itself costs several times as much on each side. The messages carry no schema: the parent reads them all against its one
    :func:`schema` object (:func:`_received`), so joining them compares no schemas (IPC streams each
    carry a schema, and joining them spent its time comparing those; figures in benchmarks/README.md).
    """
    return [batch.serialize().to_pybytes() for batch in decode_chunk(root, items, max_bytes).to_batches()]


def _received(messages: list[bytes]) -> list[Any]:
    """The record batches a worker sent (:func:`_sent_chunk`)."""
    import pyarrow as pa

    return [pa.ipc.read_record_batch(pa.py_buffer(message), schema()) for message in messages]


def _error_row(item: FileStat, reason: str) -> dict[str, Any]:
    return {**reader.layout(item.path), "error": reason, "decode_errors": [], "invalid_text": [], "unread": []}


def _chunks(items: Sequence[FileStat], size: int) -> Iterable[Sequence[FileStat]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def decode(root: Path, todo: list[FileStat], *, workers: int | None, progress: bool | None, max_bytes: int):
    """The rows of ``todo`` as one table, decoded in worker processes when there are enough files."""
    chunks = -(-len(todo) // CHUNK)  # no more workers than chunks
    with Decoder(root, pools.worker_count(workers, chunks), max_bytes) as decoder:
        decoder.found_more(todo)
        return decoder.table(todo, progress)


class Decoder:
    """Files decoded into one table: in worker processes once
    :data:`~tabarena_checks.workers.PARALLEL_THRESHOLD` files are queued,
    in chunks of :data:`CHUNK` sent as soon as they are full; here, after the last file, below that.

    A cold build queues each directory's files while the walk is still listing the run: the walk of a
    large run takes a few tens of milliseconds in which the second core would otherwise idle. The pool
    is forked from the walk, before any other thread of the build runs (a progress bar's included).
    Once the walk is done, a thread prepares the queries that follow
    (:func:`~tabarena_checks.raw.database.prepare_queries`); once the last chunk is in, another stops the
    workers (:func:`~tabarena_checks.workers.stopping`), and leaving the decoder waits for it.
    """

    def __init__(self, root: Path, workers: int | None, max_bytes: int):
        self.root, self.max_bytes = str(root), max_bytes
        self.workers = pools.worker_count(workers)
        self.waiting: list[FileStat] = []
        self.sent: list[Any] = []
        self.pool: Any = None
        self.preparing: threading.Thread | None = None
        self.stopping: threading.Thread | None = None

    def __enter__(self) -> Decoder:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.stopping is not None:
            self.stopping.join()
        elif self.pool is not None:  # on Ctrl-C or an error the queued chunks are dropped
            pools.stop(self.pool)

    def found_more(self, files: list[FileStat]) -> None:
        """Queue ``files``; send every full chunk once there are enough files for workers."""
        self.waiting.extend(files)
        if self.pool is None:
            if self.workers < 2 or len(self.waiting) < pools.PARALLEL_THRESHOLD:
                return
            # they only run numpy/zlib/pickle code and pyarrow's single-threaded conversion
            self.pool = pools.worker_pool(self.workers, pools.die_with_parent)
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
                    tables.append(decode_chunk(self.root, chunk, self.max_bytes))
                    advance(len(chunk))
            else:
                if self.waiting:
                    self._send(self.waiting)
                    self.waiting = []
                # the walk is done (it would compete for the interpreter) and the workers are forked
                self.preparing = threading.Thread(target=database.prepare_queries, name="prepare-queries", daemon=True)
                self.preparing.start()
                batches = []
                for count, sent in self.sent:
                    batches += _received(sent.result())
                    advance(count)
                tables.append(pa.Table.from_batches(batches, schema=schema()))
                # every chunk is in: the workers exit while this process goes on, and are waited for when
                # the decoder is left, after the cache is written
                self.stopping = pools.stopping(self.pool)
        if self.preparing is not None:  # done long before the workers, unless the run is tiny
            self.preparing.join()
        # one chunk per column, not one per batch of files: the cache is written and queried faster than the
        # copy costs (benchmarks/README.md)
        return _sorted(pa.concat_tables(tables).combine_chunks())


def _sorted(table):
    """``table`` sorted by path. A cold build's walk visits directories in name order, so its rows usually
    arrive sorted: checking that costs a twentieth of sorting, which copies every column."""
    import pyarrow.compute as pc

    paths = table["path"]
    if len(paths) < 2 or pc.all(pc.less(paths[:-1], paths[1:])).as_py():
        return table
    return table.sort_by("path")
