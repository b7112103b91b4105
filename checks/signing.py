"""Authenticate decision records with a key only this user can read.

A gate that trusts an earlier decision (upload trusts the process run that wrote its cache) must
not trust a line anyone can append: the decision log sits in the working tree, where a pull
request or a shipped run can write it, and its path is set by a rules.toml that travels with the
repository. Every record the tool writes carries an HMAC-SHA256 over its canonical JSON, keyed by
32 random bytes kept in the user's own cache directory (``decision-key``, mode 0600, created on
first use), never in the repository; a record without a valid MAC is not evidence.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks.errors import ConfigError
from checks.io import user_cache_dir

#: the record field holding the MAC
FIELD = "mac"
PREFIX = "hmac-sha256:"
KEY_FILE = "decision-key"
KEY_BYTES = 32


def key_path() -> Path:
    """Where this user's key lives: ``<user cache dir>/decision-key``."""
    return user_cache_dir() / KEY_FILE


def key() -> bytes:
    """The key, created (0600, in a 0700 directory) the first time a record is signed."""
    path = key_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return _read_key(path)
    with os.fdopen(fd, "wb") as fh:
        fh.write(os.urandom(KEY_BYTES))
        fh.flush()
        os.fsync(fh.fileno())
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    """The key's bytes; a key that is not a regular file of 32 bytes, or that others can read, is refused."""
    fix = f"delete {path} (a new key is made; earlier records then no longer count as evidence)"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError as exc:
        raise ConfigError(f"the decision-record key {path} cannot be read ({exc.strerror or exc}): {fix}") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        data = fh.read(KEY_BYTES + 1) if stat.S_ISREG(info.st_mode) else b""
    if len(data) != KEY_BYTES:
        raise ConfigError(f"the decision-record key {path} is not a {KEY_BYTES}-byte regular file: {fix}")
    if info.st_mode & 0o077:
        raise ConfigError(
            f"the decision-record key {path} is readable by other users (mode "
            f"{stat.S_IMODE(info.st_mode):o}): chmod 600 it, or {fix}"
        )
    return data


def _canonical(record: Mapping[str, Any]) -> bytes:
    body = {k: v for k, v in record.items() if k != FIELD}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=str).encode()


def sign(record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with its MAC (any MAC it carried is replaced)."""
    mac = hmac.new(key(), _canonical(record), hashlib.sha256).hexdigest()
    return {**{k: v for k, v in record.items() if k != FIELD}, FIELD: PREFIX + mac}


def authentic(record: Any, secret: bytes) -> bool:
    """Whether ``record`` is a JSON object whose MAC ``secret`` (this user's :func:`key`) made."""
    if not isinstance(record, dict) or not isinstance(record.get(FIELD), str):
        return False
    mac = hmac.new(secret, _canonical(record), hashlib.sha256).hexdigest()
    return hmac.compare_digest(record[FIELD], PREFIX + mac)
