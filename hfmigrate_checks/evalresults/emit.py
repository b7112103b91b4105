"""The ``.eval_results`` YAML the drafts are written in: pyyaml's emitter, told the house style.

Every string is double-quoted (so a date, ``yes`` or ``null`` stays a string for every YAML
reader), keys stay plain unless a reader would retype them, a printed number keeps the text
the leaderboard printed (:class:`Literal`), and sequences are indented under their key, so a
draft reads and diffs like the files on the Hub. Characters YAML cannot print are written with
YAML's own escapes (``\\a``, ``\\L``, ``\\uFEFF``); every reader gets the same string back.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from checks import io

#: plain words YAML 1.1 readers turn into booleans or null
RESERVED_WORDS = frozenset({"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"})
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Literal(str):
    """A scalar already formatted for YAML (a printed number), emitted as is."""


def yaml_number(text: str) -> str:
    """The printed number as a YAML literal that every YAML parser reads back as that number."""
    number = float(text)
    try:
        parsed = io.loads_yaml(text)
    except io.YamlError:
        parsed = None
    if not isinstance(parsed, bool) and isinstance(parsed, (int, float)) and parsed == number and "_" not in text:
        return text.lstrip("+")
    if number.is_integer() and re.fullmatch(r"[+-]?\d+", text, re.ASCII):
        return str(int(text))
    return yaml.dump(number, Dumper=yaml.SafeDumper).removesuffix("\n...\n")


class _Dumper(yaml.SafeDumper):
    """SafeDumper with the house style (see the module docstring)."""

    def increase_indent(self, flow: bool = False, indentless: bool = False):
        return super().increase_indent(flow, False)  # a sequence under a key is indented, never flush with it

    def represent_mapping(self, tag, mapping, flow_style=None):
        node = super().represent_mapping(tag, mapping, flow_style)
        for key, _ in node.value:
            if (
                key.tag == "tag:yaml.org,2002:str"
                and _PLAIN_KEY.fullmatch(key.value)
                and key.value.lower() not in RESERVED_WORDS
            ):
                key.style = None
        return node


def _string(dumper: yaml.SafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')


def _literal(dumper: yaml.SafeDumper, value: Literal):
    tag = dumper.resolve(yaml.ScalarNode, str(value), (True, False))
    return yaml.ScalarNode(tag, str(value))


def _date(dumper: yaml.SafeDumper, value: dt.date):
    return _string(dumper, value.isoformat())


_Dumper.add_representer(str, _string)
_Dumper.add_representer(Literal, _literal)
_Dumper.add_representer(dt.date, _date)
_Dumper.add_representer(dt.datetime, _date)


def emit_yaml(entries: Sequence[Mapping[str, Any]]) -> str:
    """Block-style YAML for a list of results."""
    plain = [dict(entry) for entry in entries]
    return yaml.dump(
        plain, Dumper=_Dumper, default_flow_style=False, sort_keys=False, allow_unicode=True, width=float("inf")
    )
