"""Load plugins (entry points, ``-p``), validate them, and collect their rules and actions."""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import attrs
import click
import pluggy

from checks import __version__, gates, hookcalls, hookspecs, suggest, trust
from checks.errors import ChecksError, PluginError, PluginLoadError, UsageError
from checks.lazygroup import LazyGroup
from checks.model import Action, Rule

if TYPE_CHECKING:  # click loads with the command line, not with the registry
    import click

ENTRY_POINT_GROUP = "checks"
AUTOLOAD_ENV = "CHECKS_DISABLE_PLUGIN_AUTOLOAD"
HOOK_PREFIX = "checks_"
#: plugins that are always loaded and cannot be blocked with ``-p no:``
ESSENTIAL = ("checks.core_rules",)
#: the command plugins add their pre-commit hooks' commands to (checks.filecheck's group, named here so a plugin's
#: hook can tell it is asked for without loading the judge)
PRECOMMIT_GROUP = "precommit"

hookimpl = pluggy.HookimplMarker("checks")


class ChecksPluginManager(pluggy.PluginManager):
    """A pluggy manager for ``checks_`` hooks whose implementations name their plugin when they fail.

    Hooks are called through ``pm.hook`` as in any pluggy application, and implementations stay as
    registered: a hook-call monitor (:func:`checks.hookcalls.watch`) turns an exception into one
    :class:`~checks.errors.PluginError` naming the plugin and the hook (pluggy itself reports only
    the exception), and the registry asks the registration hooks one plugin at a time
    (:func:`checks.hookcalls.by_plugin`) so that the rules and actions a plugin returns are
    stamped with that plugin's name.
    """

    def __init__(self) -> None:
        super().__init__("checks")
        self.add_hookspecs(hookspecs)
        hookcalls.watch(self)

    def parse_hookimpl_opts(self, plugin: Any, name: str):  # type: ignore[override]
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None and not name.startswith(HOOK_PREFIX) and not opts.get("specname"):
            msg = (
                f"plugin {self.get_name(plugin) or plugin!r}: hook implementation {name!r} "
                f"must be named with the '{HOOK_PREFIX}' prefix{_did_you_mean(HOOK_PREFIX + name, _hook_names())}"
            )
            raise PluginLoadError(msg)
        return opts

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            registered = super().register(plugin, name=name)
        except ValueError as exc:  # already registered under another name
            raise PluginError(f"plugin {name!r}: {exc}") from None
        except pluggy.PluginValidationError as exc:
            raise PluginLoadError(_signature_error(name, str(exc))) from None
        return registered


def _stamped(pm: pluggy.PluginManager, hook: str, **kwargs: Any) -> list[Any]:
    """What each plugin returns from the registration ``hook``, stamped with its name, in registration order."""
    stamp = _STAMPS[hook]
    return [stamp(result, name) for name, result in reversed(list(hookcalls.by_plugin(pm, hook, **kwargs)))]


def _stamp(kind: type, hook: str) -> Any:
    def stamp(result: Iterable[Any], plugin_name: str) -> tuple[Any, ...]:
        items = tuple(result)
        for item in items:
            if not isinstance(item, kind):
                raise PluginError(
                    f"plugin {plugin_name!r}, hook {hook}: expected checks.{kind.__name__} objects (got {item!r})"
                )
        return tuple(attrs.evolve(item, plugin=plugin_name) for item in items)

    return stamp


def _sections(result: Mapping[str, type], plugin_name: str) -> dict[str, type]:
    sections = dict(result)
    for arena, cls in sections.items():
        if not attrs.has(cls):
            raise PluginError(
                f"plugin {plugin_name!r}, hook checks_config_sections: settings for "
                f"arena {arena!r} must be an attrs class (got {cls!r})"
            )
    return sections


_STAMPS = {
    "checks_rules": _stamp(Rule, "checks_rules"),
    "checks_actions": _stamp(Action, "checks_actions"),
    "checks_config_sections": _sections,
}


class Registry:
    """The loaded plugins and everything they contribute, collected once.

    A plain class: the process's working state, not a record.
    """

    def __init__(
        self,
        pm: ChecksPluginManager,
        blocked: frozenset[str] = frozenset(),
        sources: dict[str, EntryPoint] | None = None,
    ):
        self.pm = pm
        #: names blocked with ``-p no:NAME``
        self.blocked = blocked
        #: plugin name -> the entry point it was loaded from
        self.sources: dict[str, EntryPoint] = {} if sources is None else sources
        #: the configuration's checks_plugins were turned off (``--no-local-plugins``)
        self.local_off = False
        self._infos: dict[str, Any] | None = None
        self._rules: dict[str, Rule] | None = None
        self._actions: dict[str, Action] | None = None
        #: actions collected for one name each (``checks run NAME`` imports no other action's module)
        self._named_actions: dict[str, Action | None] = {}
        self._sections: dict[str, type] | None = None

    def __repr__(self) -> str:
        return f"Registry(pm={self.pm!r}, blocked={self.blocked!r}, sources={self.sources!r})"

    @property
    def infos(self) -> dict[str, Any]:
        """What ``checks plugins`` shows, by plugin name (distributions' metadata read on first use)."""
        if self._infos is None:
            from checks.plugin_info import infos  # noqa: PLC0415 - only `checks plugins` and a run's record need them

            self._infos = infos(self.pm, self.sources, ESSENTIAL, _own_version())
        return self._infos

    @property
    def rules(self) -> dict[str, Rule]:
        """Every rule, each bound only to gates something registers (:mod:`checks.gates`)."""
        if self._rules is None:
            rules = _collect_rules(self.pm)
            gates.check_bindings(rules, (self._declared_gates, lambda: self.actions, self._unloaded_gates))
            self._rules = rules
        return self._rules

    def _declared_gates(self) -> set[str]:
        return {name for result in self.pm.hook.checks_gates() for name in result}

    def _unloaded_gates(self) -> set[str]:
        """The gates the entry points left unloaded (blocked, or not autoloaded) would register; asked only
        on the way to an error."""
        names: set[str] = set()
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if self.pm.has_plugin(ep.name) and not self.pm.is_blocked(ep.name):
                continue
            try:
                scratch = ChecksPluginManager()
                scratch.register(ep.load(), name=ep.name)
                names.update(name for result in scratch.hook.checks_gates() for name in result)
                names.update(a.name for result in scratch.hook.checks_actions(name=None) for a in result or ())
            except Exception:  # a plugin that cannot even be asked registers nothing we can name
                continue
        return names

    @property
    def actions(self) -> dict[str, Action]:
        """Every action of every plugin (each plugin imports all its action modules)."""
        if self._actions is None:
            self._actions = _collect_actions(self.pm, None)
        return self._actions

    def action(self, name: str) -> Action | None:
        """The action ``name``, or None: the plugins are asked for that one only, so a plugin that
        declares which module holds which action imports no other action's module."""
        if self._actions is not None:
            return self._actions.get(name)
        if name not in self._named_actions:
            self._named_actions[name] = _collect_actions(self.pm, name).get(name)
        return self._named_actions[name]

    @property
    def config_sections(self) -> dict[str, type]:
        if self._sections is None:
            sections: dict[str, type] = {}
            for result in _stamped(self.pm, "checks_config_sections"):
                for arena, cls in result.items():
                    if arena in sections:
                        raise PluginError(
                            f"arena {arena!r} has settings from two plugins: {_qualname(sections[arena])} and "
                            f"{_qualname(cls)} (hook checks_config_sections)"
                        )
                    sections[arena] = cls
            self._sections = sections
        return self._sections

    @property
    def arenas(self) -> set[str]:
        """Every arena an action belongs to or a plugin declares settings for."""
        return {a.arena for a in self.actions.values() if a.arena} | set(self.config_sections)

    def distributions(self) -> dict[str, str]:
        """Distribution name -> version for every loaded plugin that comes from one."""
        return {i.distribution: i.version for i in self.infos.values() if i.distribution and i.version}


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


#: the rule families this distribution ships, each with the package allowed to define it: their rule names
#: predate namespaces and stay unprefixed; no other plugin may use these codes
HOUSE_FAMILIES = {"CK": "checks", "TA": "tabarena_checks", "HF": "hfmigrate_checks"}
_FAMILY = re.compile(r"^[A-Z]+")


def _check_namespace(rule: Rule) -> None:
    """A plugin's rule carries its prefix: its name starts with its code's letters (``MTB104`` ->
    ``mtb-...``) or its plugin's name, so two plugins' names never collide; the house families are
    the framework's and the built-in plugins' alone. Raises :class:`PluginError` with the fix."""
    family = _FAMILY.match(rule.code).group()
    package = (getattr(rule.check, "__module__", "") or "").split(".")[0]
    where = f"plugin {rule.plugin!r}, rule {rule.code} ({package or 'unknown module'})"
    owner = HOUSE_FAMILIES.get(family)
    if owner is not None:
        if package != owner:
            raise PluginLoadError(
                f"{where}: code family {family} belongs to arena-checks' own {owner}; pick a prefix of your own "
                f"(2-4 capital letters, e.g. {rule.plugin[:3].upper() or 'XYZ'}{rule.code[len(family) :]})"
            )
        return
    prefixes = (f"{family.lower()}-", f"{_plugin_word(rule.plugin)}-")
    if not rule.name.startswith(prefixes):
        named = f" or {prefixes[1]!r} (its plugin's name)" if prefixes[1] != prefixes[0] else ""
        raise PluginLoadError(
            f"{where}: rule name {rule.name!r} must carry the plugin's prefix, {prefixes[0]!r} "
            f"(its code's letters){named}: did you mean {prefixes[0] + rule.name!r}?"
        )


def _plugin_word(plugin: str) -> str:
    """The plugin's name as a rule-name prefix: ``beyondarena``, also when loaded as ``beyondarena_checks.plugin``."""
    word = plugin.split(".")[0].replace("_", "-").lower()
    return word.removesuffix("-checks") or word


def _collect_rules(pm: pluggy.PluginManager) -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    names: dict[str, str] = {}
    for result in _stamped(pm, "checks_rules"):
        for item in result:
            _check_namespace(item)
            if item.code in rules:
                raise PluginLoadError(
                    f"rule code {item.code} is defined twice: by plugin {rules[item.code].plugin!r} "
                    f"and by plugin {item.plugin!r} (hook checks_rules); codes are never reused: "
                    f"did you mean {_free_code(item.code, rules)}?"
                )
            if item.name in names:
                raise PluginLoadError(
                    f"rule name {item.name!r} is used by {names[item.name]} and {item.code} "
                    f"(plugin {item.plugin!r}, hook checks_rules); give {item.code} a name of its own"
                )
            rules[item.code] = item
            names[item.name] = item.code
    return dict(sorted(rules.items()))


def _collect_actions(pm: pluggy.PluginManager, name: str | None) -> dict[str, Action]:
    actions: dict[str, Action] = {}
    for result in _stamped(pm, "checks_actions", name=name):
        for item in result:
            if item.name in actions:
                raise PluginLoadError(
                    f"action {item.name!r} is defined by plugin {actions[item.name].plugin!r} and "
                    f"by plugin {item.plugin!r} (hook checks_actions)"
                )
            actions[item.name] = item
    return dict(sorted(actions.items()))


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


def load(
    plugin_args: Sequence[str] = (),
    *,
    environ: Mapping[str, str] | None = None,
    extra: Iterable[tuple[str, object]] = (),
    local: Iterable[tuple[str, str]] = (),
) -> Registry:
    """Build the registry: essential plugins, entry points (unless disabled), ``-p`` names, ``extra``.

    The entry points are found by ``importlib.metadata`` (the first distribution of a name wins)
    and registered with pluggy, except names blocked with ``-p no:NAME`` (``pm.set_blocked``).
    ``-p NAME`` loads the entry point of that name even with autoload off, else imports the module ``NAME``. ``extra`` registers
    already-imported plugin objects (used by ``checks.testing``). ``local`` lists the
    configuration's ``checks_plugins`` as ``(entry, directory)``: a ``.py`` path or a dotted
    module, relative to the configuration file's directory (see :func:`_load_local`).
    ``check_pending()`` runs right after loading, so a misspelt hook fails here, naming its plugin.
    """
    env = os.environ if environ is None else environ
    to_load, blocked = parse_plugin_args(plugin_args)
    pm = ChecksPluginManager()
    for name in ESSENTIAL:
        pm.register(importlib.import_module(name), name=name)
    for name in blocked:
        pm.set_blocked(name)
    autoload = env.get(AUTOLOAD_ENV, "").strip().lower() not in ("1", "true", "yes")
    found = entry_points(group=ENTRY_POINT_GROUP) if autoload or to_load else []
    sources: dict[str, EntryPoint] = {}
    if autoload:
        _load_entry_points(pm, found, sources)
    _load_named(pm, to_load, found, sources)
    _load_locals(pm, local)
    for name, plugin in extra:
        pm.register(plugin, name=name)
    _refuse_unknown_hooks(pm)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginLoadError(f"plugin {exc.plugin_name!r}: {exc}") from None
    return Registry(pm, blocked=frozenset(blocked), sources=sources)


def _refuse_unknown_hooks(pm: ChecksPluginManager) -> None:
    """A ``checks_`` implementation no hook specifies (a misspelt hook) is a load error naming the plugin and the
    hook it was probably meant to be; pluggy's own check says only that the name is unknown."""
    for name in sorted(n for n in vars(pm.hook) if n.startswith(HOOK_PREFIX)):
        caller = getattr(pm.hook, name)
        if caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if not impl.optionalhook:
                raise PluginLoadError(
                    f"plugin {impl.plugin_name!r}: hook implementation {name!r} matches no hook of arena-checks"
                    f"{_did_you_mean(name, _hook_names())} (the hooks: docs/hooks.md)"
                )


def _hook_names() -> list[str]:
    return sorted(n for n in vars(hookspecs) if n.startswith(HOOK_PREFIX))


def _did_you_mean(word: str, known: Sequence[str]) -> str:
    """``: did you mean 'X'?`` for the closest of ``known``, or "" when none is close."""
    return suggest.did_you_mean(word, known, after=": ")


def _signature_error(plugin: str | None, message: str) -> str:
    """One line for pluggy's several-line refusal of an implementation: the plugin, the hook, the arguments the
    hook offers, and the closest one to each the implementation asked for."""
    hook = re.search(r"hook '([^']+)'", message)
    wrong = re.search(r"Argument\(s\) \{([^}]*)\}", message)
    if hook is None or wrong is None or not hasattr(hookspecs, hook.group(1)):
        return f"plugin {plugin!r} implements a hook wrongly: {' '.join(message.split())}"
    offered = list(inspect.signature(getattr(hookspecs, hook.group(1))).parameters)
    asked = [w.strip(" '\"") for w in wrong.group(1).split(",")]
    hints = "".join(_did_you_mean(a, offered) for a in asked)
    return (
        f"plugin {plugin!r}: its {hook.group(1)} takes {', '.join(map(repr, asked))}, which the hook does not "
        f"offer (it offers {', '.join(offered) or 'no argument'}){hints}"
    )


def _free_code(code: str, taken: Mapping[str, Any]) -> str:
    """The next code of ``code``'s family no rule uses (``TOY001`` -> ``TOY005`` when 001-004 are taken)."""
    family, number = _FAMILY.match(code).group(), int(code[-3:])
    for n in range(number + 1, 1000):
        if f"{family}{n:03d}" not in taken:
            return f"{family}{n:03d}"
    return f"a code of another family than {family}"


def _load_named(
    pm: ChecksPluginManager, names: Iterable[str], found: Iterable[EntryPoint], sources: dict[str, EntryPoint]
) -> None:
    """``-p NAME`` for each of ``names``: the entry point of that name, else the module ``NAME``.

    A blocked or already loaded name is skipped, so ``-p tabarena`` with autoload on is harmless.
    """
    for name in names:
        if pm.is_blocked(name) or pm.has_plugin(name) or _load_entry_points(pm, found, sources, name):
            continue
        module = _import(name, f"-p {name}")
        if not pm.is_registered(module):
            pm.register(module, name=name)


def _load_locals(pm: ChecksPluginManager, local: Iterable[tuple[str, str]]) -> None:
    """The configuration's ``checks_plugins`` (``(entry, directory)``), unless blocked or loaded under that name."""
    for entry, base in local:
        if not pm.is_blocked(entry) and not pm.has_plugin(entry):
            pm.register(_load_local(entry, base), name=entry)


def _load_local(entry: str, base: str) -> ModuleType:
    """A ``checks_plugins`` entry: a ``.py`` file (imported from its path) or a dotted module (``base`` on sys.path).

    Like pytest's conftest.py: a plugin that lives in the repository it checks, with no
    package to install. Its name (for ``checks plugins`` and ``-p no:NAME``) is the entry as written.
    """
    import hashlib  # noqa: PLC0415 - only for a local plugin file; hashlib loads OpenSSL

    what = f"checks_plugins entry {entry!r}"
    if entry.endswith(".py") or "/" in entry:
        path = (Path(base) / entry).resolve()
        if not path.is_file():
            raise UsageError(
                f"{what}: no such file {path} (paths are relative to the configuration's directory {base})"
            )
        trust.check(path, "local plugin")
        module_name = f"checks_local_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}_{path.stem}"
        if module_name in sys.modules:
            return sys.modules[module_name]
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[module_name]
            raise PluginError(f"{what}: importing {path} raised {type(exc).__name__}: {exc}") from exc
        return module
    spec = importlib.machinery.PathFinder.find_spec(entry.partition(".")[0], [base])  # found, not imported
    if spec is not None and spec.origin:
        trust.check(spec.origin, "local plugin")
    if base not in sys.path:
        sys.path.insert(0, base)
    return _import(entry, what)


def unloaded_providers(registry: Registry, *, action: str | None = None, command: Sequence[str] = ()) -> list[str]:
    """Why ``action`` (of ``checks run``) or ``command`` (a path: ``("precommit", "info-py")``) is missing.

    Each entry point of the group that is blocked (``-p no:NAME``) or was not autoloaded is
    imported into a scratch manager and asked; this happens only on the way to a "no such
    command" error, never in a normal run. Returns sentences like
    ``plugin 'tabarena' provides it but is blocked with -p no:tabarena``.
    """
    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        blocked = registry.pm.is_blocked(ep.name)
        if registry.pm.has_plugin(ep.name) and not blocked:
            continue
        if _provides(ep, action, command):
            why = (
                f"is blocked with -p no:{ep.name}"
                if blocked
                else f"is not loaded ({AUTOLOAD_ENV} is set; load it with -p {ep.name})"
            )
            found.append(f"plugin {ep.name!r} provides it but {why}")
    return found


def _provides(ep: EntryPoint, action: str | None, command: Sequence[str]) -> bool:
    """Whether the plugin of ``ep``, loaded into a scratch manager, provides ``action`` or ``command``.

    A plugin that cannot even be asked (its import or hook raises) provides nothing we can name.
    """
    try:
        scratch = ChecksPluginManager()
        scratch.register(ep.load(), name=ep.name)
        if action is not None:
            return action in {a.name for result in scratch.hook.checks_actions(name=action) for a in result or ()}
        return _command_of(scratch, command) is not None
    except Exception:
        return False


def _command_of(pm: ChecksPluginManager, command: Sequence[str]) -> click.Command | None:
    """The click command at path ``command`` among those ``pm``'s plugins add, or None (a command a group
    declares by name, as ``checks precommit``'s are, is loaded to be found)."""
    found: click.Command | None = LazyGroup("checks")
    pm.hook.checks_commands(cli=found, name=command[0] if command else None)
    for part in command:
        found = found.get_command(click.Context(found), part) if isinstance(found, click.Group) else None
    return found


def _load_entry_points(
    pm: ChecksPluginManager, found: Iterable[EntryPoint], sources: dict[str, EntryPoint], name: str | None = None
) -> int:
    """Register the entry points ``found`` (all, or the one ``name``) not blocked or loaded yet; a failing import is named.

    Like pluggy's ``load_setuptools_entrypoints``: the first entry point of a name wins and
    ``-p no:NAME`` keeps it unimported. ``sources`` records where each plugin came from.
    """
    count = 0
    for ep in found:
        if (name is not None and ep.name != name) or pm.has_plugin(ep.name) or pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
        except ChecksError:
            raise
        except Exception as exc:
            raise PluginError(
                f"plugin {ep.name!r} (entry point {ep.name} = {ep.value} of group "
                f"{ENTRY_POINT_GROUP!r}) failed to load: {type(exc).__name__}: {exc}"
            ) from exc
        pm.register(plugin, name=ep.name)
        sources[ep.name] = ep
        count += 1
    return count


def _own_version() -> str:

    return __version__
