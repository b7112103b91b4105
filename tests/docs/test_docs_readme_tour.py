"""The README's 5-minute tour runs as written on what `make demo` leaves in demo-out/ (issue 42).

The two demos `make demo` runs write demo-out/ into a temporary directory; then every command line of
the tour's code block is run there as written (continuation lines joined, the trailing comment read
for the exit code it promises), so a tour line that stops working on the demo's own output fails here.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from checks.testing import run_cli

ROOT = Path(__file__).resolve().parents[2]


def tour_lines() -> list[tuple[str, str]]:
    """(command, comment) for each command of the tour's code block, in order."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## A 5-minute tour", 1)[1].split("```", 2)[1]
    commands: list[list[str]] = []
    joining = False
    for raw in block.splitlines()[1:]:
        line = raw.rstrip()
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):  # a comment on its own line belongs to the command above
            commands[-1][1] += " " + line.strip()
            continue
        code, comment = (re.split(r"\s{2,}#\s", line, maxsplit=1) + [""])[:2]
        if joining:
            commands[-1][0] += " " + code.strip().rstrip("\\").strip()
            commands[-1][1] += " " + comment
        else:
            commands.append([code.strip().rstrip("\\").strip(), comment])
        joining = code.rstrip().endswith("\\")
    return [(command, comment) for command, comment in commands]


@pytest.fixture(scope="module")
def demo_out(tmp_path_factory):
    """A working directory holding demo-out/ exactly as `make demo` writes it."""
    here = tmp_path_factory.mktemp("tour")
    env = {**os.environ, "CHECKS_CACHE_DIR": str(here / "user-cache")}
    for module, workdir in (("tabarena_checks.demo", "demo-out"), ("hfmigrate_checks.demo", "demo-out/hf")):
        command = [sys.executable, "-m", module, "--workdir", str(here / workdir)]
        res = subprocess.run(command, cwd=here, env=env, capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    return here


def test_the_tour_has_the_commands_it_promises():
    commands = [command for command, _ in tour_lines()]
    assert any(c.startswith("checks hf validate demo-out/hf/bundle ") for c in commands), commands
    assert sum(c.startswith("checks run process ") for c in commands) == 2


def test_every_tour_command_runs_as_written_on_the_demo_output(demo_out, tmp_path):
    ran = 0
    for command, comment in tour_lines():
        if command.startswith("source "):
            continue
        command = command.replace("/tmp/tour-cache", str(tmp_path / "tour-cache")).replace(
            "/tmp/run", str(tmp_path / "run")
        )
        expected = 1 if "(exit 1)" in comment else 0
        if not command.startswith("checks "):
            res = subprocess.run(command, shell=True, cwd=demo_out, capture_output=True, text=True, timeout=60)
            assert res.returncode == expected, (command, res.stderr)
            continue
        res = run_cli(shlex.split(command)[1:], cwd=demo_out, env={"CHECKS_CACHE_DIR": str(demo_out / "user-cache")})
        assert res.exit_code == expected, (command, res.stdout[-3000:], res.stderr[-3000:])
        assert "Traceback" not in res.stdout + res.stderr
        ran += 1
    assert ran >= 9
