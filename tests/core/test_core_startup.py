"""Start-up stays light: what the fast commands and the pre-commit hooks import (issues 11, 13 and 17).

The figures are measured by benchmarks/startup.py, precommit_tabarena.py and hookenv.py; what
these tests hold is their cause: each command, in a fresh interpreter, must not import the
heavy libraries of the workflows, nor cattrs when there is no configuration file to validate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.support.paths import ROOT

#: imported by no fast command: the workflows' libraries and what the start-up path avoids
HEAVY = (
    "pyarrow",
    "duckdb",
    "boto3",
    "botocore",
    "huggingface_hub",
    "numpy",
    "matplotlib",
    "markdown_it",
    "rich",
    "jinja2",
    "cattrs",
    "hashlib",
    "difflib",
)

INFO_PY = (
    'from tabarena.models import MethodMetadata\n\nnori = MethodMetadata.config(method="Nori", suite="nori-2026-03")\n'
)
EVAL_YAML = (
    '- dataset:\n    id: Idavidrein/gpqa\n    task_id: diamond\n  value: 41.2\n  date: "2025-01-15"\n'
    "  source:\n    url: https://example.org/leaderboard\n"
)


def _imported(cwd, *args: str) -> tuple[int, set[str]]:
    """Run ``checks ARGS`` in a fresh interpreter; its exit code and every module it imported."""
    code = textwrap.dedent(f"""
        import json, sys
        from checks.cli import main
        code = main({list(args)!r})
        print(json.dumps([code, sorted(sys.modules)]), file=sys.stderr)
    """)
    res = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True)
    exit_code, modules = json.loads(res.stderr.strip().splitlines()[-1])
    return exit_code, set(modules)


def _facts_classes(modules: set[str]) -> list[str]:
    """The modules of the domains' facts packages loaded beyond their light ones (shared words, providers)."""
    packages = ("tabarena_checks.facts", "hfmigrate_checks.facts")
    light = {f"{p}{m}" for p in packages for m in ("", ".constants", ".providers")}
    return sorted(m for m in modules if m.startswith(packages) and m not in light)


@pytest.mark.parametrize(
    "args",
    [("rules",), ("rule", "TA101"), ("rule", "HF201"), ("--version",), ("plugins",), ("rules", "--format", "json")],
)
def test_fast_commands_import_no_heavy_module(tmp_path, args):
    exit_code, modules = _imported(tmp_path, *args)
    assert exit_code == 0
    assert sorted(modules & set(HEAVY)) == []


def test_listing_rules_imports_no_plugin_command_and_no_runner(tmp_path):
    """`checks rules` asks no plugin for its commands (they are added when one is asked for) and needs no runner."""
    _, modules = _imported(tmp_path, "rules")
    assert not {"checks.runner", "checks.judge", "checks.filecheck", "checks.run_cli", "checks.config_view"} & modules
    assert not [
        m
        for m in modules
        if m.startswith(("tabarena_checks", "hfmigrate_checks"))
        and (m.rpartition(".")[2] in ("cli", "inspect_cli", "precommit") or m.startswith("hfmigrate_checks.commands"))
    ]
    # a rule module's checks import what they judge with (the raw readers, validation-protocol keys) when they run
    assert not [m for m in modules if m.startswith(("tabarena_checks.raw", "hfmigrate_checks.drafts"))]
    # rules import the words they share with actions and their providers at their top (both light); the facts
    # classes, which load the readers, come with an action
    assert _facts_classes(modules) == []
    # the rules are listed from the plugins' manifests (checks/manifest.py): no rule module is imported
    assert not [m for m in modules if ".rules." in m]


@pytest.mark.parametrize("args", [("rule", "TA101"), ("rule", "HF201"), ("rule", "TA306")])
def test_explaining_a_rule_imports_no_rule_module(tmp_path, args):
    exit_code, modules = _imported(tmp_path, *args)
    assert exit_code == 0 and not [m for m in modules if ".rules." in m]


def test_a_precommit_hook_imports_only_the_rule_modules_of_its_gate(tmp_path):
    """The info.py hook judges the rules bound to `precommit-info`: their modules, and no other rule module."""
    (tmp_path / "info.py").write_text(INFO_PY)
    _, modules = _imported(tmp_path, "precommit", "info-py", "info.py")
    assert {m for m in modules if ".rules." in m} == {
        "tabarena_checks.rules.metadata",
        "tabarena_checks.rules.protocol",
    }


def test_precommit_hooks_import_no_heavy_module(tmp_path):
    (tmp_path / "info.py").write_text(INFO_PY)
    (tmp_path / ".eval_results").mkdir()
    (tmp_path / ".eval_results" / "gpqa.yaml").write_text(EVAL_YAML)
    exit_code, modules = _imported(tmp_path, "precommit", "info-py", "info.py")
    assert exit_code in (0, 1)  # judged (this declaration's verdicts are the hook tests' business)
    assert sorted(modules & set(HEAVY)) == []
    assert "yaml" not in modules  # an info.py hook has no YAML to read
    assert "checks.judge" in modules and "checks.runner" not in modules  # it judges; it runs no action
    assert _facts_classes(modules) == []
    exit_code, modules = _imported(tmp_path, "precommit", "eval-results", ".eval_results/gpqa.yaml")
    assert exit_code in (0, 1)
    assert sorted(modules & set(HEAVY)) == []
    # the draft action's modules (the review bundle, the ledger importers) and its facts stay out of the hook
    assert not [m for m in modules if m.endswith((".bundle", ".ledger")) and ".rules." not in m]
    assert _facts_classes(modules) == ["hfmigrate_checks.facts.eval_files"]
    assert "tabarena_checks.metadata.info_static" not in modules  # the info.py reader is the other hook's


def test_a_valid_configuration_file_is_read_without_cattrs(tmp_path):
    """The repository's rules.toml, a waiver and rule settings are built with the converter's hooks alone."""
    rules_toml = (ROOT / "rules.toml").read_text()
    waiver = '[[waivers]]\nrule = "TA303"\ntarget = "Nori@x"\nreason = "r"\nowner = "o"\nexpires = 2099-01-31\n'
    (tmp_path / "rules.toml").write_text(f'{rules_toml}\n[rules.TA303]\nseverity = "error"\n{waiver}')
    (tmp_path / "info.py").write_text(INFO_PY)
    for args in (("rules",), ("precommit", "info-py", "info.py")):
        exit_code, modules = _imported(tmp_path, *args)
        assert exit_code in (0, 1) and "cattrs" not in modules and "tomllib" in modules


def test_a_configuration_file_is_still_validated_with_cattrs(tmp_path):
    """The light path is for the defaults only: a rules.toml is parsed strictly, an invalid one exits 2."""
    (tmp_path / "rules.toml").write_text('select = ["TA"]\n[rules.TA101]\nseverity = "loud"\n')
    exit_code, modules = _imported(tmp_path, "rules")
    assert exit_code == 2 and "cattrs" in modules
    (tmp_path / "rules.toml").write_text('select = ["TA"]\nunknown_key = 1\n')
    assert _imported(tmp_path, "rules")[0] == 2


def test_a_plugin_command_imports_only_the_modules_that_add_it(tmp_path):
    """`checks precommit ...` imports the precommit modules, not synth's, inspect's or the Hub client's commands."""
    (tmp_path / "info.py").write_text(INFO_PY)
    _, modules = _imported(tmp_path, "precommit", "info-py", "info.py")
    assert "tabarena_checks.metadata.precommit" in modules
    assert not modules & {
        "tabarena_checks.synth.cli",
        "tabarena_checks.synth.generate",
        "tabarena_checks.report.inspect_cli",
        "tabarena_checks.metadata.cli",
        "tabarena_checks.cli",
        "hfmigrate_checks.cli",
    }


def test_a_precommit_hook_imports_no_other_hooks_module(tmp_path):
    """Each plugin declares its `checks precommit` commands by name (ModuleWiring's ``precommit``): a hook
    imports its own module, not the other plugin's, and `checks precommit --help` imports neither."""
    (tmp_path / "info.py").write_text(INFO_PY)
    (tmp_path / ".eval_results").mkdir()
    (tmp_path / ".eval_results" / "gpqa.yaml").write_text(EVAL_YAML)
    _, modules = _imported(tmp_path, "precommit", "info-py", "info.py")
    assert "hfmigrate_checks.drafts.precommit" not in modules
    assert not [m for m in modules if m.startswith(("hfmigrate_checks.evalresults", "hfmigrate_checks.source"))]
    _, modules = _imported(tmp_path, "precommit", "eval-results", ".eval_results/gpqa.yaml")
    assert "hfmigrate_checks.drafts.precommit" in modules
    assert not modules & {"tabarena_checks.metadata.precommit", "tabarena_checks.metadata.info_eval"}
    exit_code, modules = _imported(tmp_path, "precommit", "--help")
    assert exit_code == 0 and "checks.filecheck" in modules
    assert not modules & {"tabarena_checks.metadata.precommit", "hfmigrate_checks.drafts.precommit"}


#: the modules of each `checks hf` command (hfmigrate_checks.commands) and what only that command runs
HF_COMMANDS = {
    "contract": {"hfmigrate_checks.hub.client"},
    "ledger": {"hfmigrate_checks.source.ledger", "hfmigrate_checks.source.document"},
    "resolve": {"hfmigrate_checks.hub.resolve", "hfmigrate_checks.hub.client"},
    "inspect": {"hfmigrate_checks.hub.state", "hfmigrate_checks.hub.client"},
    "validate": {"hfmigrate_checks.drafts.validate"},
}


@pytest.mark.parametrize("command", sorted(HF_COMMANDS))
def test_a_hf_command_imports_its_own_module_and_no_other_commands(tmp_path, command):
    """`checks hf validate --help` loads the validator, not the Hub client, the ledger importers or the other
    commands' modules: each `checks hf` command is declared by name (hfmigrate_checks/cli.py) and lives apart."""
    exit_code, modules = _imported(tmp_path, "hf", command, "--help")
    assert exit_code == 0 and f"hfmigrate_checks.commands.{command}" in modules
    others = {name for name in HF_COMMANDS if name != command}
    assert not modules & {f"hfmigrate_checks.commands.{name}" for name in others}
    assert not modules & (set().union(*(HF_COMMANDS[name] for name in others)) - HF_COMMANDS[command])
    assert not modules & {"hfmigrate_checks.drafts.action", "hfmigrate_checks.drafts.decide", "tabarena_checks.cli"}


def test_a_group_help_imports_none_of_its_commands(tmp_path):
    """`checks hf --help` and `checks tabarena --help` list their commands from the declarations alone."""
    exit_code, modules = _imported(tmp_path, "hf", "--help")
    assert exit_code == 0 and "hfmigrate_checks.cli" in modules
    assert not [m for m in modules if m.startswith(("hfmigrate_checks.commands", "hfmigrate_checks.hub"))]
    assert not modules & set().union(*HF_COMMANDS.values())
    exit_code, modules = _imported(tmp_path, "tabarena", "--help")
    assert exit_code == 0 and "tabarena_checks.cli" in modules
    assert not modules & {"tabarena_checks.synth.cli", "tabarena_checks.metadata.cli"}


def test_a_tabarena_command_imports_neither_the_others_module_nor_its_readers(tmp_path):
    """`checks tabarena synth` loads the generator, not the metadata command's static reader; and the reverse."""
    exit_code, modules = _imported(tmp_path, "tabarena", "synth", "--help")
    assert exit_code == 0 and {"tabarena_checks.synth.cli", "tabarena_checks.synth.generate"} <= modules
    assert not [m for m in modules if m.startswith("tabarena_checks.metadata")]
    exit_code, modules = _imported(tmp_path, "tabarena", "metadata", "--help")
    assert exit_code == 0 and "tabarena_checks.metadata.cli" in modules
    assert not [m for m in modules if m.startswith("tabarena_checks.synth")]


def test_running_an_action_imports_only_the_module_that_declares_it(tmp_path):
    """`checks run upload` imports the upload action's module, not process's engine nor the HF drafts."""
    exit_code, modules = _imported(tmp_path, "run", "upload", "--help")
    assert exit_code == 0 and "tabarena_checks.publish.upload" in modules
    assert not modules & {
        "tabarena_checks.publish.process",
        "tabarena_checks.publish.register",
        "tabarena_checks.engine.native",
        "hfmigrate_checks.drafts.action",
    }
    exit_code, modules = _imported(tmp_path, "run", "--help")  # the list of actions needs every one
    assert exit_code == 0 and {"tabarena_checks.publish.process", "hfmigrate_checks.drafts.action"} <= modules


def test_help_still_lists_every_plugin_command(tmp_path):
    res = subprocess.run([sys.executable, "-m", "checks", "--help"], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 0
    listed = {line.split()[0] for line in res.stdout.split("Commands:")[1].splitlines() if line.strip()}
    assert {"run", "rules", "rule", "config", "plugins", "precommit", "tabarena", "inspect", "hf"} <= listed


def _with_plugin(tmp_path, plugin: str, *args: str) -> subprocess.CompletedProcess:
    """``checks -p PLUGIN ARGS...`` in a fresh interpreter, the plugin module importable from ``tmp_path``."""
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    return subprocess.run(
        [sys.executable, "-m", "checks", "-p", plugin, *args], cwd=tmp_path, env=env, capture_output=True, text=True
    )


def test_a_plugin_may_not_replace_a_framework_command(tmp_path):
    (tmp_path / "grabber.py").write_text(
        "import click\nfrom checks import hookimpl\n\n@hookimpl\ndef checks_commands(cli):\n"
        "    cli.add_command(click.Command('rules', callback=lambda: None))\n"
        "    cli.add_command(click.Command('grab', callback=lambda: click.echo('grabbed')))\n"
    )
    res = _with_plugin(tmp_path, "grabber", "grab")
    assert res.returncode == 3 and "replaced the framework's command(s) rules" in res.stderr, res.stderr
    res = _with_plugin(tmp_path, "grabber", "rules")
    assert res.returncode == 0 and "TA101" in res.stdout  # the framework's own, whatever the plugin tried


def test_a_plugin_may_not_replace_a_lazily_loaded_framework_command(tmp_path):
    """`run` and `config` are imported only when asked for; a plugin that adds one of those names is refused all the same."""
    (tmp_path / "grabber.py").write_text(
        "import click\nfrom checks import hookimpl\n\n@hookimpl\ndef checks_commands(cli):\n"
        "    cli.add_command(click.Command('config', callback=lambda: click.echo('grabbed')))\n"
    )
    res = _with_plugin(tmp_path, "grabber", "--help")
    assert res.returncode == 3 and "replaced the framework's command(s) config" in res.stderr, res.stderr
    res = _with_plugin(tmp_path, "grabber", "config")
    assert res.returncode == 0 and "grabbed" not in res.stdout and "select" in res.stdout, res.stdout + res.stderr
