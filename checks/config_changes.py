"""The changes one ``checks_adjust_config`` result makes, applied to a configuration.

``checks_adjust_config`` is an ordinary pluggy hook: one call, every implementation handed the same
configuration, the results a list in call order (a ``wrapper=True`` implementation may add to it,
drop from it or replace it, as pluggy lets a wrapper do). Each result is a whole configuration built
from the one handed in; what it changes is what it holds that the input does not, so results are
applied one after the other as changes, and two plugins that each add an ignore both take effect:

- a tuple (``select``, ``ignore``, ``waivers``, ...): the items it added are appended (once), the items
  it removed are removed;
- a mapping (``rules``, ``arenas``): the keys it added or changed are set, the keys it removed removed;
- any other value: the result's replaces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


def apply(config: Any, base: Any, result: Any) -> Any:
    """``config`` with the changes ``result`` made to ``base`` (attrs instances of one class)."""
    changes = {}
    for field in attrs.fields(type(base)):
        before, after = getattr(base, field.name), getattr(result, field.name)
        if before == after:
            continue
        current = getattr(config, field.name)
        if isinstance(before, tuple) and isinstance(after, tuple) and isinstance(current, tuple):
            changes[field.name] = _tuple(current, before, after)
        elif isinstance(before, Mapping) and isinstance(after, Mapping) and isinstance(current, Mapping):
            changes[field.name] = _mapping(current, before, after)
        else:
            changes[field.name] = after
    return attrs.evolve(config, **changes) if changes else config


def _tuple(current: tuple, before: tuple, after: tuple) -> tuple:
    removed = [item for item in before if item not in after]
    kept = [item for item in current if item not in removed]
    return (*kept, *(item for item in after if item not in before and item not in kept))


def _mapping(current: Mapping, before: Mapping, after: Mapping) -> dict:
    merged = {key: value for key, value in current.items() if key not in before or key in after}
    merged.update({key: value for key, value in after.items() if key not in before or before[key] != value})
    return merged
