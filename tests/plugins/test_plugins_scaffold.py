"""`checks plugin new NAME`: the package it writes installs, is found through its entry point and passes its own tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from checks import scaffold
from checks.exitcodes import ExitCode
from checks.testing import run_cli

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_new_writes_the_package_with_its_rule_in_its_namespace(tmp_path):
    res = run_cli(["plugin", "new", "wmt-news"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.OK, res.stderr
    root = tmp_path / "wmt-news"
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) == [
        ".pre-commit-hooks.yaml",
        "README.md",
        "pyproject.toml",
        "tests/test_rules.py",
        "wmt_news_checks/__init__.py",
        "wmt_news_checks/plugin.py",
        "wmt_news_checks/results.py",
        "wmt_news_checks/rules.py",
    ]
    assert 'wmt-news = "wmt_news_checks.plugin"' in (root / "pyproject.toml").read_text()
    assert '"WMT101",\n    "wmt-score-in-range"' in (root / "wmt_news_checks" / "rules.py").read_text()
    assert "### WMT101 wmt-score-in-range" in (root / "README.md").read_text()
    assert "entry: checks precommit wmt-news" in (root / ".pre-commit-hooks.yaml").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # built aside, then moved in whole


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["plugin", "new", "Bad Name"], "plugin name 'Bad Name': expected lower-case letters"),
        (["plugin", "new", "ok", "--prefix", "TA"], "(CK, TA, HF are arena-checks' own)"),
        (["plugin", "new", "ok", "--prefix", "toolong"], "expected 2-4 capital letters"),
    ],
)
def test_a_bad_name_or_prefix_is_a_usage_error(tmp_path, args, words):
    res = run_cli(args, env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and words in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_an_existing_folder_is_never_overwritten(tmp_path):
    (tmp_path / "wmt").mkdir()
    (tmp_path / "wmt" / "keep.txt").write_text("mine")
    res = run_cli(["plugin", "new", "wmt"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "already exists" in res.stderr
    assert [p.name for p in (tmp_path / "wmt").iterdir()] == ["keep.txt"]


def test_the_default_prefix_is_the_name_s_first_letters():
    assert scaffold.default_prefix("wmt") == "WMT" and scaffold.default_prefix("leader-board2") == "LEA"


@pytest.mark.slow
def test_the_generated_package_installs_lists_its_rule_and_passes_its_tests_as_generated(tmp_path):
    assert run_cli(["plugin", "new", "wmt", "--dir", str(tmp_path / "src")], env=ENV, cwd=tmp_path).exit_code == 0
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(tmp_path / "src")]
    subprocess.run(pip, check=True, capture_output=True, timeout=600)
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("CHECKS_DISABLE_PLUGIN_AUTOLOAD", None)  # found through its entry point, as after a real install
    checks = Path(sys.executable).with_name("checks")
    listed = subprocess.run([str(checks), "rules"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "WMT101" in listed.stdout and "wmt-score-in-range" in listed.stdout, listed.stderr
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", "0", "tests"],
        cwd=tmp_path / "src",
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tests.returncode == 0, tests.stdout[-3000:] + tests.stderr[-2000:]
    assert "3 passed" in tests.stdout
