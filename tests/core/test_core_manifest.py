"""The rule manifests (checks/manifest.py): generated, never stale, read instead of importing rule modules, fail closed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from checks import manifest, plugins
from checks.errors import PluginLoadError

ROOT = Path(__file__).resolve().parents[2]
#: every plugin module of this repository whose package ships a manifest (the Makefile's `make manifest`)
MANIFESTED = ("tabarena_checks.plugin", "hfmigrate_checks.plugin", "mteb_checks.plugin")


@pytest.fixture(autouse=True)
def _mteb_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "plugins" / "mteb"))


@pytest.mark.parametrize("plugin_module", MANIFESTED)
def test_every_manifest_is_what_its_modules_generate(plugin_module):
    """Stale after a rule changed? `make manifest` regenerates it."""
    wiring = manifest._wiring_of(plugin_module)
    assert manifest.path_of(wiring.package).read_text(encoding="utf-8") == manifest.render(
        wiring.package, wiring.rule_modules
    ), f"{manifest.path_of(wiring.package)} is stale: run make manifest"


def test_the_make_target_names_every_manifested_plugin():
    makefile = (ROOT / "Makefile").read_text()
    assert all(module in makefile for module in MANIFESTED)


def test_regenerating_in_a_copy_writes_the_file_and_check_reports_a_stale_one(tmp_path, monkeypatch):
    package = _toy(tmp_path, "toyregen_checks", manifest=False)
    env = {"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "checks.manifest"]
    res = subprocess.run([*run, "--check", f"{package}.plugin"], env=env, capture_output=True, text=True)
    assert res.returncode == 1 and "stale" in res.stdout, res.stdout + res.stderr
    res = subprocess.run([*run, f"{package}.plugin"], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and "regenerated" in res.stdout, res.stderr
    res = subprocess.run([*run, "--check", f"{package}.plugin"], env=env, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == "", res.stdout


RULES_PY = '''
from checks import rule

@rule("TOY101", "toy-first", actions=("toy-gate",), why="w", example_fail="a", example_pass="b")
def first(ctx):
    """The first toy rule."""
    return ()

@rule("TOY102", "toy-second", actions=("toy-gate",))
def second(ctx):
    """The second toy rule."""
    yield "always"

RULES = [first, second]
'''


def _toy(root: Path, package: str, *, manifest: bool = True) -> str:
    """A plugin package ``package`` under ``root`` (ModuleWiring, one rule module), with its manifest if asked."""
    folder = root / package
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "rules.py").write_text(RULES_PY)
    (folder / "plugin.py").write_text(
        "from checks import ModuleWiring\n\n"
        f"wiring = ModuleWiring({package!r}, rules=('rules',), hooks=('toy-gate',))\n"
        "checks_rules, checks_actions, checks_commands = wiring.hooks()\n"
        "checks_gates = wiring.checks_gates\n"
    )
    if manifest:
        sys.path.insert(0, str(root))
        try:
            (folder / "rules_manifest.json").write_text(_render(package))
        finally:
            sys.path.remove(str(root))
            for name in [m for m in sys.modules if m.startswith(package)]:
                del sys.modules[name]
    return package


def _render(package: str) -> str:
    return manifest.render(package, ("rules",))


def _loaded(tmp_path, monkeypatch, package: str):
    monkeypatch.syspath_prepend(str(tmp_path))
    return plugins.load([f"{package}.plugin"], environ={plugins.AUTOLOAD_ENV: "1"})


def test_rules_come_from_the_manifest_and_a_module_is_imported_when_its_rule_is_judged(tmp_path, monkeypatch):
    package = _toy(tmp_path, "toyread_checks")
    registry = _loaded(tmp_path, monkeypatch, package)
    rule = registry.rules["TOY101"]
    assert (rule.name, rule.summary, rule.why, rule.plugin) == (
        "toy-first",
        "The first toy rule.",
        "w",
        f"{package}.plugin",
    )
    assert f"{package}.rules" not in sys.modules  # listed, explained and selected without its module
    assert "TOY101" in rule.explain()
    manifest.load([rule])
    assert f"{package}.rules" in sys.modules
    assert list(registry.rules["TOY102"].check(None)) == ["always"]


def test_a_plugin_without_a_manifest_imports_its_rule_modules(tmp_path, monkeypatch):
    package = _toy(tmp_path, "toybare_checks", manifest=False)
    registry = _loaded(tmp_path, monkeypatch, package)
    assert set(registry.rules) >= {"TOY101", "TOY102"} and f"{package}.rules" in sys.modules
    assert not isinstance(registry.rules["TOY101"].check, manifest.Deferred)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            ("The first toy rule.", "The first toy rule, reworded."),
            "rule TOY101 of {p}.rules differs from the manifest in summary",
        ),
        (('"toy-second"', '"toy-other"'), "rule TOY102 of {p}.rules differs from the manifest in name"),
        (
            ("RULES = [first, second]", "RULES = [first]"),
            "the manifest lists rule TOY102 in {p}.rules, which does not define it",
        ),
    ],
)
def test_a_manifest_that_disagrees_with_its_module_is_a_load_error(tmp_path, monkeypatch, change, expected):
    """Fail closed: the rule module changed and nobody regenerated the manifest."""
    package = _toy(tmp_path, f"toystale{abs(hash(change)) % 10**6}_checks")
    rules = tmp_path / package / "rules.py"
    rules.write_text(rules.read_text().replace(*change))
    registry = _loaded(tmp_path, monkeypatch, package)
    with pytest.raises(PluginLoadError) as caught:
        manifest.load(registry.rules.values())
    message = str(caught.value)
    assert message.startswith(f"plugin '{package}.plugin', rule TOY10"), message
    assert expected.format(p=package) in message and "make manifest" in message


def test_a_rule_the_manifest_does_not_list_is_a_load_error(tmp_path, monkeypatch):
    package = _toy(tmp_path, "toynew_checks")
    rules = tmp_path / package / "rules.py"
    rules.write_text(
        rules.read_text().replace(
            "RULES = [first, second]",
            textwrap.dedent('''
                @rule("TOY103", "toy-third", actions=("toy-gate",))
                def third(ctx):
                    """A third."""
                    return ()

                RULES = [first, second, third]
            '''),
        )
    )
    registry = _loaded(tmp_path, monkeypatch, package)
    with pytest.raises(PluginLoadError, match=f"{package}.rules defines rule TOY103, which the manifest does not list"):
        manifest.load([registry.rules["TOY101"]])


def test_a_manifest_naming_other_modules_than_the_wiring_is_refused(tmp_path, monkeypatch):
    package = _toy(tmp_path, "toymods_checks")
    plugin = tmp_path / package / "plugin.py"
    plugin.write_text(plugin.read_text().replace("rules=('rules',)", "rules=('rules', 'more')"))
    registry = _loaded(tmp_path, monkeypatch, package)
    with pytest.raises(
        PluginLoadError, match="lists the rule modules rules, but the plugin's wiring names rules, more"
    ):
        registry.rules  # noqa: B018 - the property reads the manifest
