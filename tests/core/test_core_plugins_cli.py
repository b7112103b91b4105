"""Plugins from the command line and the configuration: -p after the subcommand, what a blocked
plugin would have provided, and local plugins from `checks_plugins` (like pytest's conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from checks.exitcodes import ExitCode
from checks.testing import run_cli

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}

LOCAL_PLUGIN = '''\
from checks import Finding, hookimpl, rule


@rule("LOC101", "loc-marker-named", actions=("toy",), why="local", example_fail="--name bad")
def marker_named(ctx):
    """Fails for the target 'bad'."""
    if ctx.facts["name"] == "bad":
        yield Finding("the local plugin refuses 'bad'")


@hookimpl
def checks_rules():
    return [marker_named]
'''


def codes(res) -> set[str]:
    return {v["code"] for v in json.loads(res.stdout)["verdicts"]}


# --------------------------------------------------------------------------- -p anywhere


def test_p_is_accepted_after_the_subcommand(tmp_path):
    args = ["run", "toy", "--marker", str(tmp_path / "m"), "--format", "json"]
    res = run_cli([*args, "-p", "toy_plugin", "-p", "toy_second"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.OK, res.stderr
    assert {"TOY000", "TOY001"} <= codes(res)
    res = run_cli(["-p", "toy_plugin", "-p", "toy_second", *args, "-p", "no:toy_second"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.OK, res.stderr
    assert "TOY000" not in codes(res) and "TOY001" in codes(res)
    res = run_cli(["-p", "toy_plugin", *args, "-ptoy_second"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert "TOY000" in codes(res)


def test_p_after_double_dash_is_left_alone(tmp_path):
    res = run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), "--", "-p", "x"],
        env=NO_AUTOLOAD,
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.USAGE_ERROR and "-p" in res.stderr  # handed to click, which refuses the extra args


# --------------------------------------------------------------------------- what a blocked plugin provides


def test_a_blocked_plugins_action_names_the_plugin(tmp_path):
    res = run_cli(["run", "process", str(tmp_path), "-p", "no:tabarena"], cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "no action 'process': plugin 'tabarena' provides it but is blocked with -p no:tabarena" in res.stderr


def test_a_plugin_left_out_by_disabled_autoload_is_named_with_the_fix(tmp_path):
    res = run_cli(["run", "draft"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert (
        "no action 'draft': plugin 'hfmigrate' provides it but is not loaded "
        "(CHECKS_DISABLE_PLUGIN_AUTOLOAD is set; load it with -p hfmigrate)"
    ) in res.stderr


def test_blocked_commands_and_precommit_commands_name_the_plugin(tmp_path):
    res = run_cli(["-p", "no:tabarena", "tabarena", "synth", str(tmp_path / "r")], cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "no command 'tabarena': plugin 'tabarena' provides it but is blocked" in res.stderr
    res = run_cli(["precommit", "info-py", "-p", "no:tabarena", "x.py"], cwd=tmp_path)
    assert "no command 'precommit info-py': plugin 'tabarena' provides it but is blocked" in res.stderr


def test_an_unknown_action_nobody_provides_stays_a_plain_error(tmp_path):
    res = run_cli(["run", "nope"], cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "No such command 'nope'" in res.stderr


# --------------------------------------------------------------------------- local plugins


def test_a_local_plugin_file_is_loaded_relative_to_the_configuration(tmp_path):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "local_rules.py").write_text(LOCAL_PLUGIN)
    (tmp_path / "rules.toml").write_text('checks_plugins = ["tools/local_rules.py"]\n')
    sub = tmp_path / "deep" / "er"
    sub.mkdir(parents=True)  # run from below: the path is the configuration's, not the working directory's
    base = ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m")]
    res = run_cli([*base, "--name", "bad"], env=NO_AUTOLOAD, cwd=sub)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    assert "the local plugin refuses 'bad'" in res.stdout
    assert run_cli([*base, "--name", "good"], env=NO_AUTOLOAD, cwd=sub).exit_code == ExitCode.OK
    listing = json.loads(run_cli(["plugins", "--format", "json"], env=NO_AUTOLOAD, cwd=sub).stdout)
    local = next(p for p in listing if p["name"] == "tools/local_rules.py")
    assert local["distribution"] is None and "checks_rules" in local["hooks"]
    res = run_cli([*base, "--name", "bad", "-p", "no:tools/local_rules.py"], env=NO_AUTOLOAD, cwd=sub)
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr  # blocked like any plugin


def test_a_local_plugin_module_from_pyproject(tmp_path):
    (tmp_path / "my_checks").mkdir()
    (tmp_path / "my_checks" / "__init__.py").write_text("")
    (tmp_path / "my_checks" / "rules_local.py").write_text(LOCAL_PLUGIN)
    (tmp_path / "pyproject.toml").write_text('[tool.checks]\nchecks_plugins = ["my_checks.rules_local"]\n')
    res = run_cli(["-p", "toy_plugin", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.OK, res.stderr
    assert "LOC101" in res.stdout and "my_checks.rules_local" in res.stdout


def test_local_plugin_errors_are_named(tmp_path):
    (tmp_path / "rules.toml").write_text('checks_plugins = ["missing.py"]\n')
    res = run_cli(["-p", "toy_plugin", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert f"checks_plugins entry 'missing.py': no such file {tmp_path / 'missing.py'}" in res.stderr
    (tmp_path / "broken.py").write_text("raise RuntimeError('half-written plugin')\n")
    (tmp_path / "rules.toml").write_text('checks_plugins = ["broken.py"]\n')
    res = run_cli(["-p", "toy_plugin", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    assert "checks_plugins entry 'broken.py': importing" in res.stderr and "half-written plugin" in res.stderr
    (tmp_path / "rules.toml").write_text('checks_plugins = "broken.py"\n')
    res = run_cli(["-p", "toy_plugin", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "checks_plugins" in res.stderr


# --------------------------------------------------------------------------- the project's docs test


def test_docs_test_ignores_an_installed_third_party_plugin(tmp_path):
    """An undocumented third-party plugin in the environment is loaded by `checks`, not by tests/docs/test_docs.py."""
    site = tmp_path / "site"
    (site / "undoc_plugin-0.1.dist-info").mkdir(parents=True)
    (site / "undoc_plugin-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: undoc-plugin\nVersion: 0.1\n"
    )
    (site / "undoc_plugin-0.1.dist-info" / "entry_points.txt").write_text("[checks]\nundoc = undoc_plugin\n")
    (site / "undoc_plugin.py").write_text(
        LOCAL_PLUGIN.replace('"LOC101", "loc-marker-named"', '"UND101", "und-documented"').replace(
            'actions=("toy",)',
            'actions=("process",)',  # toy_plugin is no entry point: a gate nothing registers
        )
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    env.pop("CHECKS_DISABLE_PLUGIN_AUTOLOAD", None)
    listed = subprocess.run(
        [sys.executable, "-m", "checks", "rules"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "UND101" in listed.stdout, listed.stderr  # the plugin is really installed
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", "tests/docs/test_docs.py"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
