"""Suite-wide setup: the caches the tests write (the raw-data index, the inference memo) go to a
temporary directory, never to the developer's ~/.cache; temporary files go under pytest's own
temporary directory, never straight into /tmp.

The fixtures more than one area asks for come from the plugins below (a test requests them by
name and imports nothing); an area's own fixtures are in its conftest.py."""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
from pathlib import Path

import pytest

from tests.support.cache_dirs import CACHE_PREFIX, sweep_killed_sessions

#: the framework's ``checks_cli``/``checks_evaluate``, the local S3 server, the miniature TabArena checkout,
#: and the ``reliability`` marker on every test whose docstring states a row of docs/reliability.md
pytest_plugins = [
    "checks.testing",
    "tests.support.s3_fixtures",
    "tests.support.tabarena_checkout_fixtures",
    "tests.support.reliability",
]

_OWN: list[str] = []


def pytest_configure(config) -> None:
    # a suite started in the background of a non-interactive shell inherits SIGINT ignored, and so would
    # every command the tests start: the Ctrl-C tests would send a signal nobody hears. Handled here, it is
    # back to the default in every child (exec resets a handled signal), as under a terminal
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if "CHECKS_CACHE_DIR" not in os.environ:
        sweep_killed_sessions(Path(tempfile.gettempdir()))
        _OWN.append(tempfile.mkdtemp(prefix=f"{CACHE_PREFIX}{os.getpid()}-"))
        os.environ["CHECKS_CACHE_DIR"] = _OWN[0]


def pytest_unconfigure(config) -> None:
    for directory in _OWN:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_basetemp(tmp_path_factory):
    """TMPDIR, for this process and every command a test starts, is a folder of pytest's basetemp.

    A command the crash tests SIGKILL cannot remove its own temporary directories (an upload's
    staging, a Hub download under way): under the basetemp they go when pytest drops the run
    (it keeps the last three), instead of piling up in /tmp. tests/reliability/test_reliability_tempfiles.py
    checks that a command that ends, fails or gets SIGTERM leaves none.
    """
    folder = tmp_path_factory.mktemp("tmp")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder))
        patch.setattr(tempfile, "tempdir", None)  # tempfile reads TMPDIR again on its next call
        yield folder
