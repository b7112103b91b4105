"""checks.entrypoints finds the same entry points as importlib.metadata, without importing it."""

from __future__ import annotations

import importlib.metadata as md
import subprocess
import sys

import pytest

from checks import entrypoints


def _stdlib(group: str, paths: list[str] | None = None) -> set[tuple[str, str]]:
    """importlib.metadata's answer: the first distribution of each normalized name, its entry points of ``group``."""
    seen, found = set(), set()
    for dist in md.distributions(**({"path": paths} if paths is not None else {})):
        name = dist._normalized_name  # what importlib's own entry_points() deduplicates on
        if name in seen:
            continue
        seen.add(name)
        found |= {(ep.name, ep.value) for ep in dist.entry_points if ep.group == group}
    return found


@pytest.mark.parametrize("group", ["checks", "console_scripts", "pytest11"])
def test_same_entry_points_as_importlib_metadata_in_this_environment(group):
    ours = {(ep.name, ep.value) for ep in entrypoints.entry_points(group)}
    assert ours == _stdlib(group)
    assert ours or group != "checks"


def _dist(root, folder: str, name: str, version: str, entry_points: str | None) -> None:
    d = root / folder
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nName: not-a-header\n")
    if entry_points is not None:
        (d / "entry_points.txt").write_text(entry_points)


def test_path_order_first_distribution_wins_egg_info_and_comments(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    _dist(
        first,
        "Acme_Checks-1.0.dist-info",
        "Acme-Checks",
        "1.0",
        "# a comment\n[checks]\nacme = acme_checks.plugin\n\n[console_scripts]\nacme = acme_checks:main\n",
    )
    _dist(second, "acme.checks-2.0.dist-info", "acme.checks", "2.0", "[checks]\nacme2 = acme_checks.other\n")
    _dist(second, "zeta.egg-info", "zeta", "0.3", "[checks]\nzeta = zeta_checks.plugin:hooks [extra]\n")
    _dist(second, "plain-1.0.dist-info", "plain", "1.0", None)
    _dist(second, "acme_checks.egg-info", "acme-checks", "0.9", "[checks]\nshadowed = acme_checks.old\n")  # first wins
    paths = [
        str(first),
        str(tmp_path / "missing"),
        str(tmp_path / "first" / "Acme_Checks-1.0.dist-info" / "METADATA"),
        str(second),
    ]
    found = entrypoints.entry_points("checks", paths)
    assert [(ep.name, ep.value) for ep in found] == [
        ("acme", "acme_checks.plugin"),
        ("zeta", "zeta_checks.plugin:hooks [extra]"),
    ]
    assert {(ep.name, ep.value) for ep in found} == _stdlib("checks", paths)
    assert found[0].distribution() == ("Acme-Checks", "1.0")
    assert found[1].distribution() == ("zeta", "0.3")
    assert found[1].module == "zeta_checks.plugin"
    assert [ep.name for ep in entrypoints.entry_points("console_scripts", paths)] == ["acme"]


def test_load_imports_the_module_and_follows_the_attribute_path(tmp_path, monkeypatch):
    (tmp_path / "ep_target_mod.py").write_text("class Hooks:\n    class inner:\n        pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = entrypoints.EntryPoint("x", "ep_target_mod:Hooks.inner [extra]", "checks", str(tmp_path))
    assert ep.load() is sys.modules["ep_target_mod"].Hooks.inner
    assert entrypoints.EntryPoint("x", "ep_target_mod", "checks", "").load() is sys.modules["ep_target_mod"]


def test_loading_the_plugins_does_not_import_importlib_metadata():
    code = (
        "import sys; from checks import plugins; r = plugins.load(); assert 'tabarena' in r.infos; "
        "print('importlib.metadata' in sys.modules, 'email' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
