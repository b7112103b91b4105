"""``checks config``: the resolved configuration as TOML (pasteable back into a rules.toml) or JSON.

What a run would use is not always what one file says: defaults fill the keys a file
leaves out, plugins declare arena settings, and the command line replaces or extends the
selection. This prints the result with where it came from.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import attrs
import click

from checks import suggest
from checks.cli import App, pop_selection, selection_params
from checks.config_model import Config
from checks.config_select import effective
from checks.errors import UsageError
from checks.io import closest_path
from checks.judge import adjust_config, select_rules


def as_data(config: Config, selected: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """Every key of ``config`` under its name in the file, plus its ``source`` (path, table, sha256, overrides),
    the selection layers stacked on the file (``overlays``) and, given, the rules each action runs (``selected``)."""
    return {
        "source": {
            "path": config.path,
            "table": config.table or None,
            "sha256": config.sha256,
            "overrides": list(config.overrides),
            "extends": list(config.extends),
        },
        "select": list(config.select),
        "extend-select": list(config.extend_select),
        "ignore": list(config.ignore),
        "extend-ignore": list(config.extend_ignore),
        "per-file-ignores": {p.glob: list(p.codes) for p in config.per_file_ignores},
        "exclude": list(config.exclude),
        "extend-exclude": list(config.extend_exclude),
        "decision_log": config.decision_log,
        "checks_plugins": list(config.checks_plugins),
        "rules": _rules(config.rules),
        "arenas": {name: _arena(section) for name, section in sorted(config.arenas.items())},
        "waivers": [attrs.asdict(w) for w in config.waivers],
        "overlays": [_layer(layer) for layer in config.overlays],
        "selected": {action: list(codes) for action, codes in (selected or {}).items()},
    }


def _arena(section) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if section.select is not None:
        body["select"] = list(section.select)
    body["ignore"] = list(section.ignore)
    if section.rules:
        body["rules"] = _rules(section.rules)
    if section.settings is not None:
        body.update(attrs.asdict(section.settings))
    return body


def _layer(layer) -> dict[str, Any]:
    return {
        "name": layer.name,
        "select": None if layer.select is None else list(layer.select),
        "extend-select": list(layer.extend_select),
        "ignore": list(layer.ignore),
    }


def selected(registry, config: Config) -> dict[str, list[str]]:
    """The codes each ``checks run`` action and each pre-commit hook (``precommit-info``, ...: the action names
    rules are bound to that no action runs) would run under ``config`` (``*`` after a required one)."""

    config = adjust_config(registry, config)
    hooks = {name for rule in registry.rules.values() for name in rule.actions} - set(registry.actions) - {"*"}
    actions = {**registry.actions, **{name: _Hook(name) for name in hooks}}
    out = {}
    for name, action in sorted(actions.items()):
        chosen = sorted(select_rules(registry.rules, action, config), key=lambda pair: pair[0].code)
        out[name] = [r.code + ("*" if effective(r, config, action.arena)[1] else "") for r, _ in chosen]
    return out


class _Hook(NamedTuple):
    """A pre-commit hook's action name as selection sees it: a name and no arena (``--arena`` picks one)."""

    name: str
    arena: str | None = None


def _rules(rules) -> dict[str, dict[str, Any]]:
    return {
        code: {k: getattr(v, "value", v) for k, v in attrs.asdict(s, recurse=False).items() if v not in (None, False)}
        for code, s in sorted(rules.items())
    }


def as_json(config: Config, selected: Mapping[str, Sequence[str]] | None = None) -> str:
    return json.dumps(as_data(config, selected), indent=2, default=_plain)


def as_toml(config: Config, selected: Mapping[str, Sequence[str]] | None = None) -> str:
    """The resolved configuration as TOML, with its source in leading comments and the rules each action
    runs (every layer applied) in trailing ones."""
    data = as_data(config, selected)
    overlays, chosen = data.pop("overlays"), data.pop("selected")
    lines = _toml_source(data.pop("source"))
    tables, waivers = {k: data.pop(k) for k in ("per-file-ignores", "rules", "arenas")}, data.pop("waivers")
    lines += [f"{_key(k)} = {_value(v)}" for k, v in data.items()]
    lines += _toml_tables(tables, waivers)
    if chosen:
        stack = " < ".join(["the file", "its [arenas.NAME] table", *(o["name"] for o in overlays)])
        lines += [
            "",
            f"# rules each `checks run` action and pre-commit hook (precommit-*) runs, after every layer "
            f"({stack}; * required):",
        ]
        lines += [f"#   {action}: {' '.join(codes) or '(none)'}" for action, codes in chosen.items()]
    return "\n".join(lines) + "\n"


def _toml_source(source: Mapping[str, Any]) -> list[str]:
    """The leading comments: where the configuration came from, its hash and the command-line overrides."""
    where = source["path"] or "<defaults>"
    lines = [f"# source: {where}" + (f" [{source['table']}]" if source["table"] else "")]
    if source["path"] == "<defaults>":
        lines[0] = "# source: built-in defaults (no rules.toml, .checks.toml or [tool.checks] found upwards)"
    lines.append(f"# sha256: {source['sha256']}")
    if source["extends"]:
        lines.append(f"# extends: {' -> '.join(source['extends'])}")
    if source["overrides"]:
        lines.append(f"# command line: {' '.join(source['overrides'])}")
    return lines


def _toml_tables(tables: Mapping[str, Any], waivers: Sequence[Mapping[str, Any]]) -> list[str]:
    """The ``[per-file-ignores]``, ``[rules.CODE]``, ``[arenas.NAME]`` (with their rules) and
    ``[[waivers]]`` tables, in that order, each after a blank line."""
    lines = []
    if tables["per-file-ignores"]:
        lines += [
            "",
            "[per-file-ignores]",
            *(f"{_key(g)} = {_value(c)}" for g, c in tables["per-file-ignores"].items()),
        ]
    for code, body in tables["rules"].items():
        lines += ["", f"[rules.{code}]", *_toml_pairs(body)]
    for name, body in tables["arenas"].items():
        nested = body.pop("rules", {})
        lines += ["", f"[arenas.{_key(name)}]", *(f"{_key(k)} = {_value(v)}" for k, v in body.items())]
        for code, rule in nested.items():
            lines += ["", f"[arenas.{_key(name)}.rules.{code}]", *_toml_pairs(rule)]
    for waiver in waivers:
        lines += ["", "[[waivers]]", *_toml_pairs(waiver)]
    return lines


def _toml_pairs(body: Mapping[str, Any]) -> list[str]:
    """``key = value`` lines of a table whose keys are bare (rule settings, waiver fields)."""
    return [f"{k} = {_value(v)}" for k, v in body.items()]


def _key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else json.dumps(key)


def _value(value: Any) -> str:
    """A TOML literal: JSON's strings, numbers, booleans and arrays are TOML's too; dates are bare."""
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + "}"
    if value is None:
        return '""'
    return json.dumps(value)


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else str(value)


def config_command() -> click.Command:
    """``checks config [FILE]``: the resolved configuration, as TOML or JSON."""

    @click.command("config", params=selection_params())
    @click.argument("file", required=False, type=click.Path(dir_okay=False))
    @click.option("--format", "output_format", type=click.Choice(["toml", "json"]), default="toml", show_default=True)
    @click.pass_obj
    def config_cmd(app: App, output_format, file, **selection):
        """Print the resolved configuration and the file it came from (for FILE: the one `checks precommit` uses
        for it); exit 2 if it is invalid."""
        chosen = pop_selection(selection)
        if file and not os.path.lexists(file):  # the configuration of a file that is not there would be a guess
            hint = suggest.hint([closest_path(file)], show=str)
            raise UsageError(f"checks config {file}: no such file{hint} (name the file whose configuration to show)")
        config = app.configs(chosen)(file) if file else app.config(selection=chosen)
        chosen_rules = selected(app.registry, config)
        click.echo(
            as_json(config, chosen_rules) + "\n" if output_format == "json" else as_toml(config, chosen_rules),
            nl=False,
        )

    return config_cmd
