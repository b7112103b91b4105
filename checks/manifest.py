"""The rule manifest: each plugin package's rules listed in a checked-in file, as ruff generates its registry.

``checks rules``, ``checks rule CODE``, a configuration's codes and the pre-commit hooks' choice
of rules need what a rule *is* (code, name, summary, gates, severity, group, why and examples),
not the code that judges. A package wired with :class:`checks.ModuleWiring` keeps that in
``rules_manifest.json`` beside its ``__init__.py``; its rules are built from the file, each
check imported from its module when a rule of that module is first judged. A package without
the file has its rule modules imported, as before.

The file is generated, never written by hand: ``make manifest`` (``python -m checks.manifest
PLUGIN_MODULE...``) regenerates it, and ``tests/core/test_core_manifest.py`` fails when it is stale.
Fail closed: a manifest whose modules are not the wiring's, or whose entries disagree with the
rules a module defines when it is imported, is a :class:`~checks.errors.PluginLoadError`
naming the package, the rule and the fix.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from checks import io
from checks.errors import PluginLoadError
from checks.model import Rule, Severity

FILE_NAME = "rules_manifest.json"
#: the command that regenerates a manifest, named in every error about a stale one
REGENERATE = "make manifest (python -m checks.manifest PLUGIN_MODULE)"
#: the Rule fields a manifest holds: all but the check (code) and the plugin (stamped when loaded)
_LEFT_OUT = ("check", "plugin")


def entry(rule: Rule, module: str) -> dict[str, Any]:
    """One rule as the manifest lists it: its fields (the severity by value) and its module, relative to the package."""
    fields = {f.name: getattr(rule, f.name) for f in attrs.fields(Rule) if f.name not in _LEFT_OUT}
    fields["actions"] = list(fields["actions"])
    fields["severity"] = fields["severity"].value
    return {**fields, "module": module}


def render(package: str, modules: Sequence[str]) -> str:
    """The manifest of ``package`` whose rule modules (relative names) are ``modules``: imports each of them."""
    rules = [entry(rule, module) for module in modules for rule in importlib.import_module(f"{package}.{module}").RULES]
    doc = {"generated_by": REGENERATE, "package": package, "modules": list(modules), "rules": rules}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def path_of(package: str) -> Path:
    """Where ``package``'s manifest is (it may not exist)."""
    return Path(importlib.import_module(package).__path__[0]) / FILE_NAME


def read(package: str, modules: Sequence[str]) -> list[Rule] | None:
    """``package``'s rules from its manifest, each check imported when first judged; None without a manifest."""
    path = path_of(package)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise PluginLoadError(f"{path}: cannot be read ({exc}); regenerate it: {REGENERATE}") from None
    try:
        doc = json.loads(text)
        listed, entries = doc["modules"], doc["rules"]
    except (ValueError, KeyError, TypeError) as exc:
        raise PluginLoadError(f"{path}: not a rule manifest ({exc}); regenerate it: {REGENERATE}") from None
    if listed != list(modules):
        raise PluginLoadError(
            f"{path}: lists the rule modules {', '.join(listed) or 'none'}, but the plugin's wiring names "
            f"{', '.join(modules) or 'none'}; regenerate it: {REGENERATE}"
        )
    by_module: dict[str, list[dict]] = {}
    for item in entries:
        by_module.setdefault(item["module"], []).append(item)
    loaders = {module: _ModuleChecks(package, module, path, by_module.get(module, [])) for module in modules}
    return [_rule(item, loaders[item["module"]], path) for item in entries]


def _rule(item: dict[str, Any], loader: _ModuleChecks, path: Path) -> Rule:
    """The :class:`Rule` an entry describes, its check deferred to ``loader``."""
    fields = {key: value for key, value in item.items() if key != "module"}
    try:
        return Rule(
            **{**fields, "actions": tuple(fields["actions"]), "severity": Severity(fields["severity"])},
            check=Deferred(loader, item["code"]),
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise PluginLoadError(
            f"{path}: rule {item.get('code', '?')}: not a valid entry ({exc}); regenerate it: {REGENERATE}"
        ) from None


class _ModuleChecks:
    """The checks of one rule module, imported once, its rules held equal to the manifest's entries."""

    def __init__(self, package: str, module: str, path: Path, entries: list[dict[str, Any]]) -> None:
        self.name = f"{package}.{module}"
        self.module = module
        self.path = path
        self.entries = {item["code"]: item for item in entries}
        self._checks: dict[str, Callable] | None = None

    def check(self, code: str) -> Callable:
        if self._checks is None:
            rules = importlib.import_module(self.name).RULES
            found = {rule.code: entry(rule, self.module) for rule in rules}
            for code_ in sorted(set(found) | set(self.entries)):
                if found.get(code_) != self.entries.get(code_):
                    raise PluginLoadError(self._disagreement(code_, found.get(code_), self.entries.get(code_)))
            self._checks = {rule.code: rule.check for rule in rules}
        return self._checks[code]

    def _disagreement(self, code: str, found: dict | None, listed: dict | None) -> str:
        if listed is None:
            what = f"{self.name} defines rule {code}, which the manifest does not list"
        elif found is None:
            what = f"the manifest lists rule {code} in {self.name}, which does not define it"
        else:
            keys = ", ".join(key for key in listed if listed[key] != found.get(key))
            what = f"rule {code} of {self.name} differs from the manifest in {keys}"
        return f"{self.path}: {what}; the manifest is stale: regenerate it: {REGENERATE}"


class Deferred:
    """A rule's check imported from its module when first called (or :func:`load`-ed)."""

    def __init__(self, loader: _ModuleChecks, code: str) -> None:
        self.loader = loader
        self.code = code
        #: the module the check lives in, as a function's own (the plugin manager reads its package)
        self.__module__ = loader.name

    def __call__(self, ctx: Any) -> Any:
        return self.loader.check(self.code)(ctx)

    def __repr__(self) -> str:
        return f"<check of {self.code} in {self.loader.name}, imported when judged>"


def load(rules: Iterable[Rule]) -> None:
    """Import the checks of ``rules`` that come from a manifest, so a stale one fails before any rule is judged:
    a :class:`PluginLoadError` naming the plugin (exit 2), not a crashed verdict."""
    for rule in rules:
        if isinstance(rule.check, Deferred):
            try:
                rule.check.loader.check(rule.code)
            except PluginLoadError as exc:
                raise PluginLoadError(f"plugin {rule.plugin!r}, rule {rule.code}: {exc}") from None


def _wiring_of(plugin_module: str) -> Any:
    """The :class:`checks.ModuleWiring` a plugin module binds: the one of its names that has rule modules."""
    module = importlib.import_module(plugin_module)
    found = [value for value in vars(module).values() if hasattr(value, "rule_modules") and hasattr(value, "package")]
    if len(found) != 1:
        raise SystemExit(f"{plugin_module}: expected one checks.ModuleWiring among its names, found {len(found)}")
    return found[0]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m checks.manifest [--check] PLUGIN_MODULE...``: write (or, with --check, compare) each manifest."""
    args = list(sys.argv[1:] if argv is None else argv)
    only_check = "--check" in args
    stale = []
    for plugin_module in (a for a in args if a != "--check"):
        wiring = _wiring_of(plugin_module)
        text = render(wiring.package, wiring.rule_modules)
        path = path_of(wiring.package)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(str(path))
        if not only_check:
            io.write_text(path, text)
    for path in stale:
        print(f"{path}: {'stale' if only_check else 'regenerated'}")
    return 1 if only_check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
