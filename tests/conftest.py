"""Suite-wide setup: commands the tests start keep their replay cache (``checks rules``) in a
temporary directory, never in the developer's ~/.cache."""

from __future__ import annotations

import os
import shutil
import tempfile

_OWN: list[str] = []


def pytest_configure(config) -> None:
    if "CHECKS_CACHE_DIR" not in os.environ:
        _OWN.append(tempfile.mkdtemp(prefix="checks-replay-"))
        os.environ["CHECKS_CACHE_DIR"] = _OWN[0]


def pytest_unconfigure(config) -> None:
    for directory in _OWN:
        shutil.rmtree(directory, ignore_errors=True)
