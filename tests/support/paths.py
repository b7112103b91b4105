"""The places the tests read from, named once: the repository, the fixture data, the toy plugins,
and the PYTHONPATH a command the tests start needs to import the helpers and load the toys."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
TOYS = TESTS / "support" / "toys"
#: for a child process: ``tests.support`` importable and the toy plugins loadable by name
CHILD_PYTHONPATH = os.pathsep.join([str(ROOT), str(TOYS)])
