"""Replay cache for the read-only listing commands: ``checks rules [--format F]`` and ``checks rule CODE``.

Loading the plugins costs several times the interpreter start (pluggy, click, attrs and
importlib.metadata alone are ~7x ``python -c pass``), yet what a listing prints is a pure
function of the code and the process it runs in. A miss runs the command normally and
records its output with everything the output depends on (see :mod:`checks.replay_record`);
a hit re-checks those inputs and prints the recorded bytes without importing the framework.

The hit path is this module alone, and it imports only os, sys, time, json and zlib (plus the C
blake2 for the environment digest). Any trouble with the cache is a miss, never a failure.
"""

import json
import os
import sys
import time
import zlib

#: bump when the entry layout or the key material changes
LAYOUT = 1
LISTINGS = ("rules", "rule")


def is_listing(args: list[str]) -> bool:
    """True for the cacheable command lines: global ``-p``/``--config`` then a listing command."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in ("-p", "--config"):
            i += 2
        elif arg.startswith("-p") or arg.startswith("--config="):
            i += 1
        else:
            return False
    tail = args[i:]
    if tail == ["rules"]:
        return True
    if len(tail) == 2:
        return (tail[0] == "rules" and tail[1].startswith("--format=")) or (
            tail[0] == "rule" and not tail[1].startswith("-")
        )
    return len(tail) == 3 and tail[:2] == ["rules", "--format"]


def user_cache_dir(environ) -> str:
    """This user's arena-checks cache: ``$CHECKS_CACHE_DIR``, else ``$XDG_CACHE_HOME/arena-checks``,
    else ``~/.cache/arena-checks``."""
    if environ.get("CHECKS_CACHE_DIR"):
        return environ["CHECKS_CACHE_DIR"]
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "arena-checks")


def cache_dir(environ) -> str | None:
    """Where replay entries live (:func:`user_cache_dir`), or None when ``CHECKS_NO_CACHE`` turns it off."""
    if environ.get("CHECKS_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no"):
        return None
    return user_cache_dir(environ)


def environment_digest(environ) -> str:
    """A digest of the environment: the values may be credentials and are never stored.

    Only ``CHECKS_CACHE_TRACE`` is left out: it writes to stderr, never to the replayed stdout.
    """
    try:
        from _blake2 import blake2b  # the C implementation hashlib wraps, without loading OpenSSL
    except ImportError:  # pragma: no cover - interpreters built without it
        from hashlib import blake2b
    h = blake2b(digest_size=32)
    for name, value in sorted(environ.items()):
        if name == "CHECKS_CACHE_TRACE":
            continue
        h.update(f"{name}\0{value}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def key_material(environ) -> dict:
    """What identifies one answer, apart from the files re-checked on every hit."""
    from checks import __version__

    out = sys.stdout
    return {
        "layout": LAYOUT,
        "version": __version__,
        "argv": list(sys.argv),
        "cwd": os.getcwd(),
        "executable": sys.executable,
        "python": sys.version,
        "flags": list(sys.flags),
        "path": list(sys.path),
        "environment": environment_digest(environ),
        "stdout": [out.encoding, out.errors, out.isatty()],
    }


def entry_path(directory: str, key: dict) -> str:
    """The entry's file: a crc of the key names it; the stored key is compared in full."""
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return os.path.join(directory, f"{zlib.crc32(text.encode('utf-8', 'surrogateescape')):08x}.json")


def stat_input(path: str) -> list:
    """What is recorded of one input: [path, mtime_ns, ctime_ns, size, inode], or [path] if absent."""
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def lookup(path: str, key: dict) -> bytes | None:
    """The recorded output if the entry matches ``key`` and every recorded input is unchanged."""
    try:
        with open(path, encoding="utf-8") as f:
            if hasattr(os, "getuid") and os.fstat(f.fileno()).st_uid != os.getuid():
                return None  # only trust entries this user wrote
            entry = json.load(f)
        if entry["key"] != key:
            return None
        for recorded in entry["inputs"]:
            if stat_input(recorded[0]) != recorded:
                return None
        stdout = entry["stdout"].encode("utf-8", "surrogateescape")
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None
    try:
        os.utime(path)  # the newest entries survive pruning
    except OSError:
        pass
    return stdout


def trace(message: str) -> None:
    if os.environ.get("CHECKS_CACHE_TRACE"):
        sys.stderr.write(f"checks: cache: {message}\n")
        sys.stderr.flush()


def run(args: list[str]) -> int:
    """Answer a listing command from the cache, or run it and record the answer."""
    started = time.time_ns()
    directory = cache_dir(os.environ)
    if directory is None or getattr(sys.stdout, "buffer", None) is None:
        return _run_plain(args)
    try:
        key = key_material(os.environ)
        path = entry_path(directory, key)
    except (OSError, ValueError, AttributeError):
        return _run_plain(args)
    recorded = lookup(path, key)
    if recorded is not None:
        trace("hit")
        sys.stdout.flush()
        sys.stdout.buffer.write(recorded)
        sys.stdout.buffer.flush()
        return 0
    trace("miss")
    from checks import replay_record

    return replay_record.run_and_record(args, path, key, started)


def _run_plain(args: list[str]) -> int:
    from checks.cli import main

    return main(args)
