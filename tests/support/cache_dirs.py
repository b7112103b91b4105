"""The session's cache directory (``checks-cache-<pid>-<random>`` in the temporary directory), and the
sweep of the ones killed sessions left: tests/conftest.py makes and sweeps them, the tempfile tests check it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


#: the session's cache directory is ``checks-cache-<pid>-<random>`` in the temporary directory
CACHE_PREFIX = "checks-cache-"


def sweep_killed_sessions(where: Path) -> list[Path]:
    """Remove the cache directories of sessions that no longer run, and return them.

    A session removes its own at the end (pytest_unconfigure); one that was killed (a timeout,
    SIGKILL) cannot, so the next session does: a directory whose pid names no process. A live
    session's, in another checkout, is left alone.
    """
    swept = []
    for folder in where.glob(f"{CACHE_PREFIX}*-*"):
        pid = folder.name[len(CACHE_PREFIX) :].partition("-")[0]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(folder)
    return swept


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
