"""Load plugins (entry points, ``-p``), validate them, and collect their rules and actions."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import pluggy

from checks import hookspecs
from checks.errors import PluginError, UsageError
from checks.model import Action, Rule

if TYPE_CHECKING:  # pragma: no cover
    import importlib.metadata as md

ENTRY_POINT_GROUP = "checks"
AUTOLOAD_ENV = "CHECKS_DISABLE_PLUGIN_AUTOLOAD"
HOOK_PREFIX = "checks_"
#: plugins that are always loaded and cannot be blocked with ``-p no:``
ESSENTIAL = ("checks.core_rules",)

hookimpl = pluggy.HookimplMarker("checks")


class ChecksPluginManager(pluggy.PluginManager):
    """A pluggy manager that only accepts ``checks_``-prefixed hook implementations."""

    def __init__(self) -> None:
        super().__init__("checks")
        self.add_hookspecs(hookspecs)

    def parse_hookimpl_opts(self, plugin: Any, name: str):  # type: ignore[override]
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None and not name.startswith(HOOK_PREFIX) and not opts.get("specname"):
            msg = (
                f"plugin {self.get_name(plugin) or plugin!r}: hook implementation {name!r} "
                f"must be named with the '{HOOK_PREFIX}' prefix"
            )
            raise PluginError(msg)
        return opts


@attrs.frozen
class PluginInfo:
    """What ``checks plugins`` shows for one plugin."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


@attrs.define
class Registry:
    """The loaded plugins and everything they contribute, collected once."""

    pm: ChecksPluginManager
    infos: dict[str, PluginInfo] = attrs.field(factory=dict)
    #: names blocked with ``-p no:NAME``
    blocked: frozenset[str] = frozenset()
    _rules: dict[str, Rule] | None = None
    _actions: dict[str, Action] | None = None
    _sections: dict[str, type] | None = None

    @property
    def rules(self) -> dict[str, Rule]:
        if self._rules is None:
            self._rules = _collect_rules(self.pm)
        return self._rules

    @property
    def actions(self) -> dict[str, Action]:
        if self._actions is None:
            self._actions = _collect_actions(self.pm)
        return self._actions

    @property
    def config_sections(self) -> dict[str, type]:
        if self._sections is None:
            sections: dict[str, type] = {}
            owner: dict[str, str] = {}
            for plugin_name, result in _call_each(self.pm, "checks_config_sections"):
                for arena, cls in dict(result or {}).items():
                    if arena in sections:
                        raise PluginError(
                            f"plugins {owner[arena]!r} and {plugin_name!r} both define settings "
                            f"for arena {arena!r} (hook checks_config_sections)"
                        )
                    if not attrs.has(cls):
                        raise PluginError(
                            f"plugin {plugin_name!r}, hook checks_config_sections: settings for "
                            f"arena {arena!r} must be an attrs class (got {cls!r})"
                        )
                    sections[arena], owner[arena] = cls, plugin_name
            self._sections = sections
        return self._sections

    @property
    def arenas(self) -> set[str]:
        """Every arena an action belongs to or a plugin declares settings for."""
        return {a.arena for a in self.actions.values() if a.arena} | set(self.config_sections)

    def distributions(self) -> dict[str, str]:
        """Distribution name -> version for every loaded plugin that comes from one."""
        return {i.distribution: i.version for i in self.infos.values() if i.distribution and i.version}


def _call_each(pm: pluggy.PluginManager, hook_name: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """Call each implementation of a hook on its own, in registration order, naming the plugin on error."""
    out = []
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        args = {k: v for k, v in kwargs.items() if k in impl.argnames}
        try:
            out.append((impl.plugin_name, impl.function(**args)))
        except Exception as exc:
            raise PluginError(
                f"plugin {impl.plugin_name!r} raised in hook {hook_name}: {type(exc).__name__}: {exc}"
            ) from exc
    return out


def _collect_rules(pm: pluggy.PluginManager) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    for plugin_name, result in _call_each(pm, "checks_rules"):
        for item in result or ():
            if not isinstance(item, Rule):
                raise PluginError(
                    f"plugin {plugin_name!r}, hook checks_rules: expected checks.Rule objects (got {item!r})"
                )
            if item.code in rules:
                raise PluginError(
                    f"rule code {item.code} is defined twice: by plugin {rules[item.code].plugin!r} "
                    f"and by plugin {plugin_name!r} (hook checks_rules)"
                )
            if item.name in names:
                raise PluginError(
                    f"rule name {item.name!r} is used by {names[item.name]} and {item.code} "
                    f"(plugin {plugin_name!r}, hook checks_rules)"
                )
            rules[item.code] = attrs.evolve(item, plugin=plugin_name)
            names[item.name] = item.code
    return dict(sorted(rules.items()))


def _collect_actions(pm: pluggy.PluginManager) -> dict[str, Action]:
    actions: dict[str, Action] = {}
    for plugin_name, result in _call_each(pm, "checks_actions"):
        for item in result or ():
            if not isinstance(item, Action):
                raise PluginError(
                    f"plugin {plugin_name!r}, hook checks_actions: expected checks.Action objects (got {item!r})"
                )
            if item.name in actions:
                raise PluginError(
                    f"action {item.name!r} is defined by plugin {actions[item.name].plugin!r} and "
                    f"by plugin {plugin_name!r} (hook checks_actions)"
                )
            actions[item.name] = attrs.evolve(item, plugin=plugin_name)
    return dict(sorted(actions.items()))


def _dist_of(ep: "md.EntryPoint") -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(c.name for c in pm.get_hookcallers(plugin) or ()))


def _register(pm: ChecksPluginManager, module: ModuleType, name: str) -> bool:
    try:
        return pm.register(module, name=name) is not None
    except ValueError as exc:  # already registered under another name
        raise PluginError(f"plugin {name!r}: {exc}") from None
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {name!r} implements a hook wrongly: {exc}") from None


def _import(name: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise UsageError(f"{what}: cannot import module {name!r}: {exc}") from None
    except Exception as exc:
        raise PluginError(f"{what}: importing module {name!r} raised {type(exc).__name__}: {exc}") from exc


def parse_plugin_args(values: Sequence[str]) -> tuple[list[str], set[str]]:
    """Split ``-p`` values into names to load and names to block (``no:NAME``)."""
    load, block = [], set()
    for value in values:
        if value.startswith("no:"):
            name = value[3:]
            if not name:
                raise UsageError("-p no: needs a plugin name, e.g. -p no:tabarena")
            if name in ESSENTIAL:
                raise UsageError(f"-p no:{name}: {name} is essential and cannot be blocked")
            block.add(name)
        else:
            load.append(value)
    return load, block


def load(plugin_args: Sequence[str] = (), *, environ: dict[str, str] | None = None,
         extra: Iterable[tuple[str, object]] = ()) -> Registry:
    """Build the registry: essential plugins, entry points (unless disabled), then ``-p`` names.

    ``extra`` registers already-imported plugin objects (used by ``checks.testing``).
    ``check_pending()`` runs right after loading, so a misspelt hook fails here, naming
    its plugin.
    """
    import importlib.metadata as md  # costly (it pulls in the email package): only when loading plugins

    env = os.environ if environ is None else environ
    to_load, blocked = parse_plugin_args(plugin_args)
    pm = ChecksPluginManager()
    registry = Registry(pm, blocked=frozenset(blocked))
    for name in ESSENTIAL:
        module = importlib.import_module(name)
        _register(pm, module, name)
        registry.infos[name] = PluginInfo(name, name, "arena-checks", _own_version(), _hooks_of(pm, module))
    for name in blocked:
        pm.set_blocked(name)
    entry_points = {ep.name: ep for ep in md.entry_points(group=ENTRY_POINT_GROUP)}
    autoload = env.get(AUTOLOAD_ENV, "").strip().lower() not in ("1", "true", "yes")
    chosen: list[tuple[str, "md.EntryPoint | None", str]] = []
    if autoload:
        chosen += [(ep.name, ep, ep.value) for ep in sorted(entry_points.values(), key=lambda e: e.name)]
    for value in to_load:
        ep = entry_points.get(value)
        chosen.append((value, ep, ep.value if ep else value))
    for name, ep, module_name in chosen:
        if name in blocked or module_name in blocked or pm.has_plugin(name):
            continue
        if ep is not None:
            try:
                module = ep.load()
            except Exception as exc:
                raise PluginError(
                    f"plugin {name!r} (entry point {ep.value}) failed to load: {type(exc).__name__}: {exc}"
                ) from exc
        else:
            module = _import(module_name, f"-p {name}")
        if pm.is_registered(module):
            continue
        _register(pm, module, name)
        dist, version = _dist_of(ep) if ep is not None else (None, None)
        registry.infos[name] = PluginInfo(name, getattr(module, "__name__", name), dist, version, _hooks_of(pm, module))
    for name, module in extra:
        _register(pm, module, name)
        registry.infos[name] = PluginInfo(name, getattr(module, "__name__", name), None, None, _hooks_of(pm, module))
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(f"plugin {exc.plugin_name!r}: {exc}") from None
    return registry


def _own_version() -> str:
    from checks import __version__

    return __version__
