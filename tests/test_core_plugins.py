"""Plugin loading: entry points, -p, -p no:, autoload off, hook validation, introspection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checks import Rule, hookimpl, plugins, rule
from checks.errors import PluginError, UsageError
from checks.exitcodes import ExitCode
from checks.testing import run_cli

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_builtin_domain_plugins_load_through_the_entry_point_group():
    registry = plugins.load([], environ={})
    assert {"tabarena", "hfmigrate", "checks.core_rules"} <= set(registry.infos)
    info = registry.infos["tabarena"]
    assert info.distribution == "arena-checks" and info.version
    assert "checks_rules" in info.hooks


def test_autoload_off_loads_only_essential_and_named_plugins():
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD)
    assert set(registry.infos) == {"checks.core_rules", "toy_plugin"}
    assert "TOY001" in registry.rules


def test_dash_p_loads_an_entry_point_by_name_with_autoload_off():
    registry = plugins.load(["tabarena"], environ=NO_AUTOLOAD)
    assert "tabarena" in registry.infos and "hfmigrate" not in registry.infos


def test_dash_p_no_blocks_a_plugin():
    registry = plugins.load(["no:tabarena"], environ={})
    assert "tabarena" not in registry.infos and "hfmigrate" in registry.infos
    assert not any(r.plugin == "tabarena" for r in registry.rules.values())


def test_essential_plugin_cannot_be_blocked():
    with pytest.raises(UsageError, match="essential"):
        plugins.load(["no:checks.core_rules"], environ={})


def test_unknown_plugin_name_is_a_usage_error(tmp_path):
    res = run_cli(["-p", "no_such_plugin_xyz", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "no_such_plugin_xyz" in res.stderr


def test_misspelt_hook_name_fails_naming_the_plugin(tmp_path):
    res = run_cli(["-p", "toy_broken", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    assert "toy_broken" in res.stderr and "checks_rulez" in res.stderr


class _Unprefixed:
    @hookimpl(specname="checks_rules")
    def fine(self):
        return []

    @hookimpl
    def rules(self):  # not prefixed, no specname
        return []


def test_hook_implementations_must_carry_the_prefix():
    pm = plugins.ChecksPluginManager()
    with pytest.raises(PluginError, match="'checks_' prefix"):
        pm.register(_Unprefixed(), name="unprefixed")


def _plugin_with(*rules_):
    class P:
        @hookimpl
        def checks_rules(self):
            return list(rules_)

    return P()


@rule("TOY001", "another-name", actions=("toy",))
def clash(ctx):
    """Same code as the toy plugin's TOY001."""


def test_duplicate_rule_codes_name_both_plugins():
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("clasher", _plugin_with(clash))])
    with pytest.raises(PluginError, match="TOY001 is defined twice: by plugin 'toy_plugin' and by plugin 'clasher'"):
        registry.rules


def test_a_plugin_raising_in_registration_is_named():
    class Raises:
        @hookimpl
        def checks_rules(self):
            raise RuntimeError("bad import inside")

    registry = plugins.load([], environ=NO_AUTOLOAD, extra=[("raiser", Raises())])
    with pytest.raises(
        PluginError, match="plugin 'raiser' raised in hook checks_rules: RuntimeError: bad import inside"
    ):
        registry.rules


def test_rule_codes_and_names_are_validated():
    with pytest.raises(ValueError, match="'code' must be 2-4 capital letters and 3 digits"):
        Rule(code="ta1", name="x", summary="s", check=lambda c: None, actions=("a",))
    with pytest.raises(ValueError, match="kebab-case"):
        Rule(code="TA100", name="Not_Kebab", summary="s", check=lambda c: None, actions=("a",))


def test_rules_rule_and_plugins_commands(tmp_path):
    res = run_cli(["-p", "toy_plugin", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == 0
    assert "TOY004*" in res.stdout and "toy-required" in res.stdout
    res = run_cli(["-p", "toy_plugin", "rules", "--format", "json"], env=NO_AUTOLOAD, cwd=tmp_path)
    rows = {r["code"]: r for r in json.loads(res.stdout)}
    assert rows["TOY003"]["severity"] == "warning" and rows["TOY003"]["plugin"] == "toy_plugin"
    res = run_cli(["rule", "CK002"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert "## What it does" in res.stdout and "## Why is this bad?" in res.stdout
    assert "## Example (fails)" in res.stdout and "## Example (passes)" in res.stdout
    res = run_cli(["rule", "ZZ999"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    res = run_cli(["plugins", "--format", "json"], env={}, cwd=tmp_path)
    names = {p["name"]: p for p in json.loads(res.stdout)}
    assert names["tabarena"]["version"] and names["hfmigrate"]["distribution"] == "arena-checks"


def test_version_and_rules_do_not_import_heavy_modules():
    code = (
        "import sys; from checks.cli import main; main(['rules']); main(['--version']);"
        "heavy=[m for m in ('duckdb','pyarrow','boto3','botocore','huggingface_hub','numpy','libcst','rich') if m in sys.modules];"
        "print('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out, out


def test_the_script_answers_version_without_the_framework():
    code = (
        "import sys; sys.argv = ['checks', '--version']\n"
        "from checks.__main__ import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code == 0\n"
        "print('LOADED', [m for m in ('click', 'pluggy', 'attr', 'importlib.metadata') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.startswith("arena-checks ") and "LOADED []" in out, out
