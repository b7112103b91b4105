"""Suite-wide setup: the caches the tests write (the raw-data index, the inference memo) go to a
temporary directory, never to the developer's ~/.cache; temporary files go under pytest's own
temporary directory, never straight into /tmp."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

_OWN: list[str] = []


def pytest_configure(config) -> None:
    if "CHECKS_CACHE_DIR" not in os.environ:
        _OWN.append(tempfile.mkdtemp(prefix="checks-cache-"))
        os.environ["CHECKS_CACHE_DIR"] = _OWN[0]


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
