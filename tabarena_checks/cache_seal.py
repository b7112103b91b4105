"""Seal the index cache with a secret of this user, so a cache that came with a run is never trusted.

The index cache lives next to the raw data, and raw data can come from outside submitters:
a submitter could ship a ``.checks-index`` whose rows describe clean files while the files
themselves are defective or would run code when unpickled. Every cache file is therefore
written with an HMAC-SHA256 of its bytes under a key kept in this user's cache directory
(created on first use, mode 0600); a file whose seal is missing or wrong is ignored and the
raw files are decoded again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from functools import cache
from pathlib import Path

KEY_FILE = "index-seal.key"


@cache
def _key(directory: str) -> bytes | None:
    """The key in ``directory``, created atomically when absent; None when it cannot be had."""
    path = Path(directory, KEY_FILE)
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = b""
    except OSError:
        return None
    if len(key) == 32:
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(os.urandom(32))
        try:
            os.link(tmp, path)  # fails when another process created it first: use theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) == 32 else None


def key() -> bytes | None:
    """This user's sealing key (see :func:`checks.io.user_cache_dir`), or None when it cannot be had."""
    from checks.io import user_cache_dir

    return _key(user_cache_dir(os.environ))


def seal(data: bytes) -> str | None:
    """The seal of ``data``, or None without a key (then no cache is written)."""
    secret = key()
    return None if secret is None else hmac.new(secret, data, hashlib.sha256).hexdigest()


def verify(data: bytes, mark: str) -> bool:
    """Whether ``mark`` is this user's seal of ``data``."""
    expected = seal(data)
    return expected is not None and hmac.compare_digest(expected, mark.strip())
