"""Plugin loading: entry points, -p, -p no:, autoload off, hook validation, introspection."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from checks import Rule, hookimpl, plugins, rule
from checks.errors import PluginError, PluginLoadError, UsageError
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


def test_misspelt_hook_name_is_a_load_error_naming_the_plugin_and_the_hook_meant(tmp_path):
    res = run_cli(["-p", "toy_broken", "rules"], env=NO_AUTOLOAD, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert res.stderr == (
        "checks: error: plugin 'toy_broken': hook implementation 'checks_rulez' matches no hook of arena-checks: "
        "did you mean 'checks_rules'? (the hooks: docs/hooks.md)\n"
    )


def test_a_wrong_hook_signature_is_a_load_error_with_the_argument_meant():
    class WrongArgument:
        @hookimpl
        def checks_actions(self, nme):
            return []

    with pytest.raises(PluginLoadError) as caught:
        plugins.load([], environ=NO_AUTOLOAD, extra=[("wrong", WrongArgument())])
    assert str(caught.value) == (
        "plugin 'wrong': its checks_actions takes 'nme', which the hook does not offer (it offers name): "
        "did you mean 'name'?"
    )


def test_a_reused_code_is_a_load_error_suggesting_a_free_one():
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("clasher", _plugin_with(clash))])
    with pytest.raises(PluginLoadError, match="codes are never reused: did you mean TOY005?"):
        registry.rules


def test_a_bad_rule_declaration_is_a_load_error_naming_the_function():
    with pytest.raises(PluginLoadError, match=r"@rule on test_core_plugins\.\w+.*'code' must be 2-4 capital letters"):

        @rule("mtb1", "mtb-x", actions=("toy",))
        def misdeclared(ctx):
            """A code in lower case."""


def test_a_load_error_inside_a_lazily_imported_module_stays_exit_2_and_names_the_plugin(tmp_path):
    (tmp_path / "lazy_bad").mkdir()
    (tmp_path / "lazy_bad" / "__init__.py").write_text("")
    (tmp_path / "lazy_bad" / "plugin.py").write_text(
        'from checks import ModuleWiring\n\nwiring = ModuleWiring("lazy_bad", rules=("rules",))\n'
        "checks_rules, checks_actions, checks_commands = wiring.hooks()\n"
    )
    (tmp_path / "lazy_bad" / "rules.py").write_text(
        "from checks import rule\n\n\n"
        '@rule("LB101", "Bad Name", actions=("toy",))\n'
        "def bad(ctx):\n    return None\n\n\nRULES = [bad]\n"
    )
    res = rules_with(tmp_path, "lazy_bad.plugin")
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stderr
    assert "plugin 'lazy_bad.plugin', hook checks_rules: @rule on lazy_bad.rules.bad:" in res.stderr
    assert "kebab-case" in res.stderr and "Traceback" not in res.stderr


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


def rules_with(folder, module: str):
    """``checks -p MODULE rules`` with ``folder`` (where the test wrote the module) importable."""
    sys.path.insert(0, str(folder))
    try:
        return run_cli(["-p", module, "rules"], env=NO_AUTOLOAD, cwd=folder)
    finally:
        sys.path.remove(str(folder))


def _plugin_with(*rules_):
    class P:
        @hookimpl
        def checks_rules(self):
            return list(rules_)

    return P()


@rule("TOY001", "toy-another-name", actions=("toy",))
def clash(ctx):
    """Same code as the toy plugin's TOY001."""


def test_duplicate_rule_codes_name_both_plugins():
    registry = plugins.load(["toy_plugin"], environ=NO_AUTOLOAD, extra=[("clasher", _plugin_with(clash))])
    with pytest.raises(PluginError, match="TOY001 is defined twice: by plugin 'toy_plugin' and by plugin 'clasher'"):
        registry.rules


@rule("MTB105", "no-duplicate-results", actions=("toy",))
def unprefixed(ctx):
    """A third party's rule whose name lacks its prefix."""


@rule("MTB105", "mtb-no-duplicate-results", actions=("process",))
def prefixed(ctx):
    """The same rule, named in its plugin's namespace."""


@rule("MTB106", "mteb-one-per-revision", actions=("process",))
def by_plugin_name(ctx):
    """Named after the plugin rather than the code's letters."""


@rule("TA999", "ta-borrowed-family", actions=("toy",))
def borrowed(ctx):
    """A third party's rule in the TabArena plugin's family."""


def test_a_rule_name_without_its_plugin_s_prefix_is_a_load_error_suggesting_it():
    registry = plugins.load([], environ=NO_AUTOLOAD, extra=[("mteb", _plugin_with(unprefixed))])
    with pytest.raises(PluginError) as caught:
        registry.rules
    assert str(caught.value) == (
        "plugin 'mteb', rule MTB105 (test_core_plugins): rule name 'no-duplicate-results' must carry the plugin's "
        "prefix, 'mtb-' (its code's letters) or 'mteb-' (its plugin's name): did you mean 'mtb-no-duplicate-results'?"
    )


def test_a_rule_named_in_its_namespace_loads_beside_the_built_in_of_the_same_plain_name():
    registry = plugins.load(["tabarena"], environ=NO_AUTOLOAD, extra=[("mteb", _plugin_with(prefixed, by_plugin_name))])
    assert registry.rules["MTB105"].name == "mtb-no-duplicate-results"
    assert registry.rules["MTB106"].plugin == "mteb"
    assert any(r.name == "no-duplicate-results" for r in registry.rules.values() if r.code.startswith("TA"))


def test_a_house_family_code_from_another_plugin_is_a_load_error():
    registry = plugins.load([], environ=NO_AUTOLOAD, extra=[("mteb", _plugin_with(borrowed))])
    with pytest.raises(PluginError, match=r"code family TA belongs to arena-checks' own tabarena_checks; .*MTE999"):
        registry.rules


def test_a_namespace_mistake_ends_the_command_with_exit_2(tmp_path):
    (tmp_path / "bad_ns_plugin.py").write_text(
        "from checks import hookimpl, rule\n\n\n"
        '@rule("MTB105", "no-duplicate-results", actions=("toy",))\n'
        "def dup(ctx):\n    return None\n\n\n@hookimpl\ndef checks_rules():\n    return [dup]\n"
    )
    res = rules_with(tmp_path, "bad_ns_plugin")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "did you mean 'mtb-no-duplicate-results'?" in res.stderr and "Traceback" not in res.stderr


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
