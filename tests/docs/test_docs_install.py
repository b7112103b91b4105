"""docs/install.md's install block, run line by line as written, in a copy of the checkout and a fresh venv.

The install lines used to name a distribution that is not published and a tag that does not
exist; users copy these lines literally. So the block the docs mark is executed here exactly
as printed (each line through the shell, in a copy of the working tree, so `make dist` and the
builds write nowhere else). Packages come from the configured package index and pip's cache:
nothing is skipped when the network is away, since nothing here needs it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- tests/docs/test_docs_install.py runs the next block -->"
IGNORED = (".git", ".venv*", "dist", "build", "*.egg-info", "__pycache__", ".checks", "demo-out", ".*_cache")


def block() -> list[str]:
    """The command lines of the block after the marker in docs/install.md."""
    text = (ROOT / "docs" / "install.md").read_text()
    assert text.count(MARK) == 1, "docs/install.md must mark exactly one block for this test"
    found = re.search(r"```[a-z]*\n(.*?)```", text[text.index(MARK) :], re.S)
    return [line for line in found.group(1).splitlines() if line.strip()]


def test_the_block_installs_from_the_build_not_from_an_index_name():
    lines = block()
    assert lines[0] == "make dist"
    assert not any(re.search(r"pip install arena-checks\b", line) for line in lines)
    assert any("dist/arena_checks-*.whl" in line for line in lines)


def test_the_precommit_docs_pin_a_commit_not_a_missing_tag():
    text = (ROOT / "docs" / "precommit.md").read_text()
    revs = re.findall(r"^\s*rev: (\S+)", text, re.M)
    assert revs and all(re.fullmatch(r"[0-9a-f]{40}|<commit>", rev) for rev in revs), revs


@pytest.mark.slow
def test_the_install_block_runs_as_written_in_a_fresh_environment(tmp_path):
    checkout = tmp_path / "arena-checks"
    shutil.copytree(ROOT, checkout, ignore=shutil.ignore_patterns(*IGNORED))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "CHECKS_", "PYTHONPATH"))}
    outputs = {}
    for line in block():
        done = subprocess.run(
            line, shell=True, cwd=checkout, env=env, capture_output=True, text=True, timeout=900, check=False
        )
        assert done.returncode == 0, f"{line!r} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        outputs[line] = done.stdout
    assert outputs[".venv-try/bin/checks --version"].startswith("arena-checks ")
    rules = outputs[".venv-try/bin/checks rules"]
    assert all(code in rules for code in ("TA101", "HF201", "MTB103", "WMT101")), rules
    installed = (checkout / ".venv-try").glob("lib/python*/site-packages/checks/kit.py")
    assert next(installed, None) is not None, "checks was not installed from the wheel into the fresh venv"
