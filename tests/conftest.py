"""Suite-wide setup: the caches the tests write (the raw-data index, the inference memo) go to a
temporary directory, never to the developer's ~/.cache."""

from __future__ import annotations

import os
import shutil
import tempfile

_OWN: list[str] = []


def pytest_configure(config) -> None:
    if "CHECKS_CACHE_DIR" not in os.environ:
        _OWN.append(tempfile.mkdtemp(prefix="checks-cache-"))
        os.environ["CHECKS_CACHE_DIR"] = _OWN[0]


def pytest_unconfigure(config) -> None:
    for directory in _OWN:
        shutil.rmtree(directory, ignore_errors=True)
