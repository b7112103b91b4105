"""This process's one DuckDB database, which every raw index queries, and opening it ahead of the first query."""

from __future__ import annotations

import os
import threading
from typing import Any


def shared():
    """This process's one in-memory DuckDB database; each index queries it through a cursor of its own.

    Opening a database costs far more than a cursor (benchmarks/README.md); what a cursor registers is its own, so indexes never see each other's ``results``. Kept per
    process id: a forked worker must not use its parent's database, whose threads it does not have.

    One DuckDB thread per query: the index holds a row per file, so a query is mostly planning, which a
    second thread does not share, and ``checks inspect`` already runs two queries at once (the inference
    beside TA306); a second thread measured slower (benchmarks/README.md).
    """
    import duckdb

    pid = os.getpid()
    with _OPENING:  # a cold build opens it in a thread of its own (prepare_queries): one database, not two
        if _DATABASE.get("pid") != pid:
            _DATABASE.update(pid=pid, db=duckdb.connect(config={"threads": 1, "memory_limit": "1GB"}))
        return _DATABASE["db"]


_DATABASE: dict[str, Any] = {}
_OPENING = threading.Lock()


def prepare_queries() -> None:
    """Import what the index's queries need and open the process's database (:func:`shared`).

    A cold build does it while its workers decode, when this process waits, instead of after them: the
    imports and the database take about a quarter of a second that the first query would otherwise wait.
    A failure here is left to that query to report.
    """
    try:
        import pyarrow.compute  # noqa: F401  (the sort check, split_methods)

        shared()
    except Exception:  # noqa: BLE001 - the same call, made by the first query, raises it where it is handled
        pass
