"""Suite-wide setup: the caches the tests write (the raw-data index, the inference memo) go to a
temporary directory, never to the developer's ~/.cache; temporary files go under pytest's own
temporary directory, never straight into /tmp."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_OWN: list[str] = []
#: the session's cache directory is ``checks-cache-<pid>-<random>`` in the temporary directory
CACHE_PREFIX = "checks-cache-"


def pytest_configure(config) -> None:
    if "CHECKS_CACHE_DIR" not in os.environ:
        sweep_killed_sessions(Path(tempfile.gettempdir()))
        _OWN.append(tempfile.mkdtemp(prefix=f"{CACHE_PREFIX}{os.getpid()}-"))
        os.environ["CHECKS_CACHE_DIR"] = _OWN[0]


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


def pytest_unconfigure(config) -> None:
    for directory in _OWN:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_basetemp(tmp_path_factory):
    """TMPDIR, for this process and every command a test starts, is a folder of pytest's basetemp.

    A command the crash tests SIGKILL cannot remove its own temporary directories (an upload's
    staging, a Hub download under way): under the basetemp they go when pytest drops the run
    (it keeps the last three), instead of piling up in /tmp. tests/test_reliability_tempfiles.py
    checks that a command that ends, fails or gets SIGTERM leaves none.
    """
    folder = tmp_path_factory.mktemp("tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder))
        patch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR again on its next call
        yield folder
