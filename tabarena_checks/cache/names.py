"""The names the cache and the store accept: a method or suite, one directory name, a bucket, a key prefix.

Each ``*_problem`` function says why a value cannot be such a name, or returns None. They live
apart from :mod:`tabarena_checks.cache.layout` (which builds the cache's paths and reads and
writes its metadata.yaml) because the TA4xx rules judge names before anything is written, and
``checks rules`` imports every rule module: this module costs the start-up no metadata model.
"""

from __future__ import annotations

import re

#: longer names make the raw copy's directory names (method + config suffix) exceed file-system limits
MAX_NAME = 128


def name_problem(value: object, field: str) -> str | None:
    """Why ``value`` cannot name a directory of the cache (and a segment of the object keys), or None."""
    if not isinstance(value, str) or not value:
        return f"'{field}' must be a non-empty string (got {value!r})"
    return _character_problem(value, field) or _size_problem(value, field)


def _character_problem(value: str, field: str) -> str | None:
    """Why ``value`` is not a plain directory name (a separator, a control character, a leading dot, padding)."""
    if value.startswith(".") or any(c in value for c in "/\\") or any(ord(c) < 32 for c in value):
        return (
            f"'{field}' must be a plain directory name: no '/', '\\', control characters or leading '.' (got {value!r})"
        )
    if value != value.strip():
        return f"'{field}' must not start or end with whitespace (got {value!r})"
    return None


def _size_problem(value: str, field: str) -> str | None:
    """Why ``value`` cannot be written as a file name: not encodable, or over :data:`MAX_NAME` bytes."""
    size = _utf8_size(value)
    if size is None:
        return f"'{field}' must be valid text (got {value!r}, which holds a lone surrogate)"
    if size > MAX_NAME:
        return f"'{field}' must be at most {MAX_NAME} bytes in UTF-8 (got {size})"
    return None


#: the longest directory name file systems accept (NAME_MAX, in bytes)
NAME_MAX = 255


def _utf8_size(value: str) -> int | None:
    try:
        return len(value.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def segment_problem(name: object) -> str | None:
    """Why ``name`` cannot be one directory name inside the cache (a path, '..', too long), or None."""
    if not isinstance(name, str) or not name or name in (".", ".."):
        return f"is not a directory name (got {name!r})"
    if "/" in name or "\\" in name or "\0" in name:
        return "holds a path separator or a NUL byte"
    size = _utf8_size(name)
    if size is None:
        return "holds a lone surrogate (not valid text)"
    if size > NAME_MAX:
        return f"is {size} bytes in UTF-8, over the {NAME_MAX}-byte limit of a file name"
    return None


#: S3's bucket naming rules (3-63 lowercase letters, digits, dots and hyphens, a letter or digit at each end);
#: compiled by ``re`` on first use, since every command that lists rules imports this module
BUCKET = r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]"
#: object keys are at most 1024 bytes; the prefix leaves room for artifacts/<suite>/methods/<method>/...
MAX_PREFIX = 256


def key_prefix_problem(value: object) -> str | None:
    """Why ``value`` cannot start the object keys (``cache_kwargs.prefix``), or None.

    Segments separated by '/' are plain names: no '..' or '.', no empty segment (so no leading
    '/' and no '//'), no backslash, no control character, at most :data:`MAX_PREFIX` bytes. A
    store resolves none of these the way a file system would, and a reader that does climbs.
    """
    if not isinstance(value, str) or not value.strip("/"):
        return f"must be a non-empty string of '/'-separated names (got {value!r})"
    if any(ord(c) < 32 or ord(c) == 127 or c == "\\" for c in value):
        return f"must hold no control character or backslash (got {value!r})"
    if (_utf8_size(value) or MAX_PREFIX + 1) > MAX_PREFIX:
        return f"must be valid text of at most {MAX_PREFIX} bytes in UTF-8 (got {len(value)} characters)"
    return _segments_problem(value)


def _segments_problem(value: str) -> str | None:
    """Why the '/'-separated segments of a key prefix are not plain names, or None."""
    segments = value.removesuffix("/").split("/")
    if any(seg in ("", ".", "..") or seg != seg.strip() for seg in segments):
        return (
            f"must be '/'-separated plain names: no leading '/', no empty, '.' or '..' segment, no padding "
            f"(got {value!r})"
        )
    return None


def bucket_problem(value: object) -> str | None:
    """Why ``value`` is no S3 bucket name (``cache_kwargs.bucket``), or None."""
    if not isinstance(value, str) or not re.fullmatch(BUCKET, value) or ".." in value:
        return f"must be an S3 bucket name: 3-63 lowercase letters, digits, '.' and '-' (got {value!r})"
    return None
