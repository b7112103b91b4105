"""Bounded YAML loading for files that come from strangers (Hub repos, PR diffs, user input).

``yaml.safe_load`` already refuses to build Python objects, but it still expands
aliases (a few hundred bytes can describe billions of nodes for whoever walks the
result), silently keeps the last of two duplicate keys, and recurses without limit on
deep nesting. Eval-result files never need aliases, so this loader refuses them,
refuses duplicate keys, caps the size and the depth, and turns every failure into one
:class:`YamlRefused` with a readable reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

#: eval.yaml and .eval_results files are a few KB; a leaderboard-sized file stays far below
MAX_BYTES = 2 * 1024 * 1024
MAX_DEPTH = 64


class YamlRefused(ValueError):
    """The text is not YAML this project accepts; the message says why (and where)."""


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise YamlRefused(f"YAML aliases are not allowed (alias *{event.anchor} at {_mark(event.start_mark)})")
        event = self.peek_event()
        if getattr(event, "anchor", None):
            raise YamlRefused(f"YAML anchors are not allowed (&{event.anchor} at {_mark(event.start_mark)})")
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise YamlRefused(f"YAML nested deeper than {MAX_DEPTH} levels at {_mark(event.start_mark)}")
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _value in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:
                raise YamlRefused(f"mapping key at {_mark(key_node.start_mark)} must be a plain value") from None
            if duplicate:
                raise YamlRefused(f"duplicate key {key!r} at {_mark(key_node.start_mark)}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _mark(mark) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def loads(text: str | bytes, *, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one YAML document under the limits above, or raise :class:`YamlRefused`."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > max_bytes:
        raise YamlRefused(f"YAML text is {size} bytes, more than the {max_bytes}-byte limit")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise YamlRefused(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if "\x00" in text:
        raise YamlRefused("YAML text contains a NUL character")
    loader = None
    try:
        loader = _BoundedLoader(text)  # the reader already refuses control characters here
        return loader.get_single_data()
    except YamlRefused:
        raise
    except yaml.YAMLError as exc:
        raise YamlRefused(" ".join(str(exc).split())) from None
    except RecursionError:
        raise YamlRefused("YAML nested too deeply to parse") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_path(path: str | Path, *, max_bytes: int = MAX_BYTES) -> Any:
    """Read and parse ``path``; the size is checked before the whole file is read."""
    path = Path(path)
    with path.open("rb") as fh:
        data = fh.read(max_bytes + 1)
    return loads(data, max_bytes=max_bytes)
