"""The inference of a cached index, kept next to the index cache so a warm inspect runs no query.

An inference depends only on the rows of the index and on the code that derives it, so it
is stored under the index's fingerprint (a new one whenever a file was added, changed or
removed) and a digest of that code; a change to either computes it again. The memo is an
optimisation only: when it cannot be read, parsed or written, the inference is computed.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from checks import io
from tabarena_checks.raw import index as index_mod, inference as inference_mod
from tabarena_checks.raw.inference import Inference
from tabarena_checks.raw.index import RawIndex

MEMO_FILE = "inference.json"


@cache
def _converter():
    import cattrs

    return cattrs.Converter()


def infer(index: RawIndex) -> Inference:
    """:func:`tabarena_checks.raw.inference.infer`, answered from the memo when the index is cached and unchanged."""
    if index.fingerprint is None or index.cache_path is None:
        return inference_mod.infer(index)
    path = index.cache_path.with_name(MEMO_FILE)
    key = {"index": index.fingerprint, "code": index_mod.code_digest()}
    memo = _read(path)
    entries = memo.get("methods", {}) if memo.get("key") == key else {}
    name = index.method or ""
    if isinstance(entries, dict) and name in entries:
        try:
            return _converter().structure(entries[name], Inference)
        except Exception:  # noqa: BLE001 - a damaged or foreign memo is recomputed, never trusted
            pass
    result = inference_mod.infer(index)
    entries = {**(entries if isinstance(entries, dict) else {}), name: _converter().unstructure(result)}
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
