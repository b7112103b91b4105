"""The command lines of the TabArena actions as the tests, the benchmarks and the demo run them.

``checks run process DATA --method-metadata REF --cache-root CACHE`` and ``checks run upload
--from-cache METHOD SUITE --cache-root CACHE`` are written once here, so an option that changes
name changes in one place, and a test reads as what it varies rather than the words it repeats.
"""

from __future__ import annotations

from os import PathLike

#: the method and suite of the cache ``make_method_cache`` writes (tests/support/s3_fixtures.py)
DUMMY = ("Dummy", "dummy-2026-11-01")


def process_args(data: str | PathLike, ref: str | PathLike, cache_root: str | PathLike, *extra: str) -> list[str]:
    """``run process`` of the run in ``data`` declared by ``ref`` (``info.py:variable``) into ``cache_root``."""
    return ["run", "process", str(data), "--method-metadata", str(ref), "--cache-root", str(cache_root), *extra]


def upload_args(cache_root: str | PathLike, *extra: str, method: str = DUMMY[0], suite: str = DUMMY[1]) -> list[str]:
    """``run upload`` of the processed cache of ``method`` and ``suite`` under ``cache_root``."""
    return ["run", "upload", "--from-cache", method, suite, "--cache-root", str(cache_root), *extra]
