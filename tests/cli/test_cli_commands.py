"""Every command answers a typo with the closest names and completes in a shell without a traceback.

`checks precomit`, `checks insepct`, `checks run proces` had no suggestion (their groups are
filled on demand, and click suggests only among the commands already added), and `checks run
<TAB>` crashed with exit 3. The tree is walked through completion itself, so a command a plugin
adds later is covered without being listed here.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from checks.exitcodes import ExitCode
from checks.testing import run_cli

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")


def complete(tmp_path, *words: str) -> list[tuple[str, str]]:
    """(type, value) pairs bash completion gets for ``checks WORDS`` (the last word being typed), from the
    real script's start-up path in a process of its own, as a shell runs it."""
    env = {
        **os.environ,
        **ENV,
        "_CHECKS_COMPLETE": "bash_complete",
        "COMP_WORDS": " ".join(["checks", *words]),
        "COMP_CWORD": str(len(words)),
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    res = subprocess.run(
        [sys.executable, "-m", "checks", *BUILTIN], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == ExitCode.OK and "Traceback" not in res.stderr + res.stdout, res.stderr
    return [tuple(line.split(",", 1)) for line in res.stdout.splitlines() if "," in line]


def command_paths(tmp_path, prefix=()) -> list[tuple[str, ...]]:
    """Every command path below ``prefix``, found by completing an empty word after it (commands nest two
    deep: a group, then its commands)."""
    found = [prefix] if prefix else []
    if len(prefix) == 2:
        return found
    for kind, name in complete(tmp_path, *prefix, ""):
        if kind == "plain" and not name.startswith("-"):
            found += command_paths(tmp_path, (*prefix, name))
    return found


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    return command_paths(tmp_path_factory.mktemp("complete"))


def test_completion_reaches_every_group_and_action(paths):
    assert {
        ("run", "process"),
        ("run", "upload"),
        ("precommit", "info-py"),
        ("precommit", "eval-results"),
        ("hf", "validate"),
        ("tabarena", "synth"),
        ("inspect",),
        ("rules",),
    } <= set(paths)


def test_every_command_completes_its_options(paths, tmp_path):
    for path in paths:
        options = {value for kind, value in complete(tmp_path, *path, "--") if kind == "plain"}
        assert "--help" in options, path


def test_run_completes_its_actions_and_their_flags(tmp_path):
    assert ("plain", "process") in complete(tmp_path, "run", "pro")
    assert ("plain", "--dry-run") in complete(tmp_path, "run", "process", "--dry")
    assert ("plain", "--no-dry-run") in complete(tmp_path, "run", "upload", "--no-dry")


@pytest.mark.parametrize(
    "args, closest, lister",
    [
        (("precomit",), "precommit", "checks --help"),
        (("insepct",), "inspect", "checks --help"),
        (("run", "proces"), "process", "checks run --help"),
        (("run", "uplod"), "upload", "checks run --help"),
        (("precommit", "info-pi"), "info-py", "checks precommit --help"),
        (("hf", "valdate"), "validate", "checks hf --help"),
        (("tabarena", "synt"), "synth", "checks tabarena --help"),
    ],
)
def test_a_mistyped_command_names_the_closest_and_every_choice(tmp_path, args, closest, lister):
    res = run_cli([*BUILTIN, *args], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert f"No such command {args[-1]!r}. Did you mean {closest!r}? (`{lister}` lists " in res.stderr, res.stderr
    assert closest in res.stderr.split(" lists ", 1)[1]


def test_a_command_like_nothing_still_lists_the_choices(tmp_path):
    res = run_cli([*BUILTIN, "zzz"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "Did you mean" not in res.stderr
    assert (
        "(`checks --help` lists config, hf, inspect, plugin, plugins, precommit, rule, rules, run, tabarena)"
        in res.stderr
    )


@pytest.mark.parametrize(
    "args, closest",
    [
        (("rules", "--format", "jsn"), "json"),
        (("config", "--format", "tmol"), "toml"),
        (("precommit", "info-py", "x.py", "--format", "sarf"), "sarif"),
        (("precommit", "info-py", "x.py", "--color", "allways"), "always"),
        (("tabarena", "synth", "out", "--kind", "baseline_"), "baseline"),  # a plugin's command: the same place
        (("hf", "ledger", "x", "--format", "markdwn"), "markdown"),
    ],
)
def test_a_mistyped_choice_names_the_valid_ones_and_the_closest(tmp_path, args, closest):
    res = run_cli([*BUILTIN, *args], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert " is not one of " in res.stderr and res.stderr.rstrip().endswith(f"Did you mean {closest!r}?"), res.stderr


def test_completion_offers_rule_codes_arenas_and_plugins(tmp_path):
    def values(*words):
        return {value for _kind, value in complete(tmp_path, *words)}

    assert {"TA201", "TA202", "TA203"} <= values("rule", "TA20")
    assert values("precommit", "info-py", "--arena", "") == {"tabarena", "hf"}
    assert {"--color", "--config"} <= values("precommit", "info-py", "--c")  # the global options after it too
    assert {"tabarena", "no:tabarena", "hfmigrate"} <= values("-p", "")
