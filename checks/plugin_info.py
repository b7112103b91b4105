"""What ``checks plugins`` shows for each loaded plugin, and where a run's record finds the versions.

Kept out of :mod:`checks.plugins`, which every command imports: only ``checks plugins`` and
``checks run`` (its decision record names the plugins' distributions) need these records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.metadata import EntryPoint

import attrs
import pluggy


@attrs.frozen
class PluginInfo:
    """What ``checks plugins`` shows for one plugin."""

    name: str
    module: str
    distribution: str | None
    version: str | None
    hooks: tuple[str, ...]


def infos(
    pm: pluggy.PluginManager, sources: Mapping[str, EntryPoint], essential: Iterable[str], own_version: str
) -> dict[str, PluginInfo]:
    """What ``checks plugins`` shows, in registration order; distributions from their metadata files
    (the ``essential`` plugins are arena-checks' own, at ``own_version``)."""
    out = {}
    for name, plugin in pm.list_name_plugin():
        if plugin is None:  # a blocked name
            continue
        if name in essential:
            distribution, version = "arena-checks", own_version
        else:
            distribution, version = _distribution(sources.get(name))
        module = getattr(plugin, "__name__", name)
        out[name] = PluginInfo(name, module, distribution, version, _hooks_of(pm, plugin))
    return out


def _hooks_of(pm: pluggy.PluginManager, plugin: object) -> tuple[str, ...]:
    return tuple(sorted(c.name for c in pm.get_hookcallers(plugin) or ()))


def _distribution(ep: EntryPoint | None) -> tuple[str | None, str | None]:
    """(Name, Version) of the distribution that declares ``ep``; (None, None) for a plugin from no entry point."""
    dist = ep.dist if ep is not None else None
    return (dist.name, dist.version) if dist is not None else (None, None)
