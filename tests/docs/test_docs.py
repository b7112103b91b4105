"""The docs must keep up with the code: every hook, rule, rules.toml key and CLI command is documented."""

from __future__ import annotations

import importlib.metadata as md
import inspect
import sys
from pathlib import Path

import attrs
import click
import pytest

from checks import config_model, hookspecs, plugins
from checks.cli import App, build_cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("plugins/*/README.md"), *ROOT.glob("plugins/*/docs/*.md")])
CORPUS = "\n".join(p.read_text() for p in DOCS)


def _own_plugins() -> plugins.Registry:
    """The project's plugins: the entry points arena-checks declares, and the example plugins in plugins/.

    Autoload stays off, so a third-party plugin installed next to the project cannot make
    these tests demand docs for its rules.
    """
    own = [ep.name for ep in md.distribution("arena-checks").entry_points if ep.group == plugins.ENTRY_POINT_GROUP]
    saved = list(sys.path)
    for folder in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        sys.path.insert(0, str(folder.parent))
        own += [f"{pkg.parent.name}.plugin" for pkg in folder.parent.glob("*_checks/plugin.py")]
    try:
        return plugins.load(own, environ={plugins.AUTOLOAD_ENV: "1"})
    finally:
        sys.path[:] = saved


REGISTRY = _own_plugins()


def _hook_specs():
    return [(n, f) for n, f in inspect.getmembers(hookspecs, inspect.isfunction) if n.startswith("checks_")]


@pytest.mark.parametrize("name, fn", _hook_specs(), ids=lambda x: x if isinstance(x, str) else "")
def test_every_hook_is_documented_with_its_signature(name, fn):
    signature = f"### {name}({', '.join(inspect.signature(fn).parameters)})"
    assert signature in (ROOT / "docs" / "hooks.md").read_text(), f"docs/hooks.md lacks '{signature}'"


def test_every_hook_is_registered_as_a_spec():
    assert {n for n, _ in _hook_specs()} == {n for n in dir(REGISTRY.pm.hook) if n.startswith("checks_")}


@pytest.mark.parametrize("code", list(REGISTRY.rules))
def test_every_rule_is_documented(code):
    rule = REGISTRY.rules[code]
    heading = f"### {rule.code} {rule.name}"
    assert heading in CORPUS, f"no docs file has the heading '{heading}'"
    assert rule.why and rule.example_fail, f"{code} lacks why/example_fail for `checks rule {code}`"


def _config_keys():
    keys = [
        config_model.KEY_NAMES.get(f.name, f.name)
        for f in attrs.fields(config_model.Config)
        if f.name not in ("path", "sha256", "table", "overrides", "overlays", "extends", "decision_log_from")
    ]
    keys += [f.name for f in attrs.fields(config_model.RuleSettings)]
    keys += [f.name for f in attrs.fields(config_model.Waiver)]
    keys += list(config_model.ARENA_KEYS)
    return sorted(set(keys))


@pytest.mark.parametrize("key", _config_keys())
def test_every_rules_toml_key_is_documented(key):
    text = (ROOT / "docs" / "rules-toml.md").read_text()
    assert f"### {key}" in text or f"- `{key}`" in text, f"docs/rules-toml.md does not document '{key}'"


def _commands(group: click.Group, prefix: str, ctx: click.Context):
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        path = f"{prefix} {name}"
        yield path
        if isinstance(cmd, click.Group):
            yield from _commands(cmd, path, click.Context(cmd, parent=ctx, obj=ctx.obj))


def _all_commands():
    cli = build_cli(REGISTRY)

    ctx = click.Context(cli, obj=App(REGISTRY, None))
    return sorted(_commands(cli, "checks", ctx))


@pytest.mark.parametrize("path", _all_commands())
def test_every_cli_command_is_documented(path):
    assert f"`{path}" in CORPUS or f"{path} " in CORPUS, f"no docs file mentions '{path}'"
