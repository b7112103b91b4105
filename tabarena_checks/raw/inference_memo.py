"""The inference of a cached index, kept next to the index cache so a warm inspect runs no query.

An inference depends only on the rows of the index and on the code that derives it, so it
is stored under the index's fingerprint (a new one whenever a file was added, changed or
removed) and a digest of that code; a change to either computes it again. The memo is an
optimisation only: when it cannot be read, parsed or written, the inference is computed.
:func:`remember` does the same for any other value computed from an index (``checks inspect``
keeps TA306's problems so, under a digest of the rule's code as well).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from checks import io
from tabarena_checks.raw import index as index_mod, inference as inference_mod
from tabarena_checks.raw.inference import Inference
from tabarena_checks.raw.index import RawIndex

MEMO_FILE = "inference.json"
T = TypeVar("T")


@cache
def _converter():
    import cattrs

    return cattrs.Converter()


def infer(index: RawIndex) -> Inference:
    """:func:`tabarena_checks.raw.inference.infer`, answered from the memo when the index is cached and unchanged."""
    return remember(
        index,
        MEMO_FILE,
        index_mod.code_digest(),
        lambda: inference_mod.infer(index),
        dump=_converter().unstructure,
        load=lambda entry: _converter().structure(entry, Inference),
    )


def remember(
    index: RawIndex,
    file_name: str,
    code: str,
    compute: Callable[[], T],
    *,
    dump: Callable[[T], Any],
    load: Callable[[Any], T],
) -> T:
    """``compute()`` for ``index``, kept in ``file_name`` next to the index cache under the index's fingerprint
    and ``code``, a digest of every module that computes it (so the memo never outlives that code); one
    entry per method. ``dump`` makes the value JSON-ready, ``load`` makes it again (and raises on an entry
    that does not parse: it is computed again)."""
    if index.fingerprint is None or index.cache_path is None:
        return compute()
    path = index.cache_path.with_name(file_name)
    key = {"index": index.fingerprint, "code": code}
    memo = _read(path)
    entries = memo.get("methods", {}) if memo.get("key") == key else {}
    name = index.method or ""
    if isinstance(entries, dict) and name in entries:
        try:
            return load(entries[name])
        except Exception:  # noqa: BLE001 - a damaged or foreign memo is recomputed, never trusted
            pass
    result = compute()
    entries = {**(entries if isinstance(entries, dict) else {}), name: dump(result)}
    _write(path, {"key": key, "methods": entries})
    return result


def _read(path: Path) -> dict[str, Any]:
    try:
        memo = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def _write(path: Path, memo: dict[str, Any]) -> None:
    """Atomically; a location that cannot be written is left alone."""
    try:
        io.write_text(path, json.dumps(memo, sort_keys=True))
    except OSError:
        pass
