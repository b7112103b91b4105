"""Options listed under headings in ``--help`` (the action's own, Run, Output, Selection), not one long list.

``checks run process --help`` had 25 options in one list, the action's own lost among the output
and selection options every judging command shares. click has no option groups, and a dependency
for them is not worth the hooks' install size, so a command's option list is formatted here: each
option carries the heading it was tagged with (:func:`tag`), untagged ones go under "Options".
"""

from __future__ import annotations

import types
from collections.abc import Iterable

import click

#: the heading of an option no one tagged (``--help`` itself, a plugin command's own options)
DEFAULT = "Options"


def tag(params: Iterable[click.Parameter], heading: str) -> list[click.Parameter]:
    """``params``, each to be listed under ``heading`` in ``--help``."""
    out = list(params)
    for param in out:
        param.help_heading = heading
    return out


def format_options(self: click.Command, ctx: click.Context, formatter: click.HelpFormatter) -> None:
    """click's option list, one section per heading, in the order the headings first appear."""
    sections: dict[str, list[tuple[str, str]]] = {}
    for param in self.get_params(ctx):
        record = param.get_help_record(ctx) if isinstance(param, click.Option) else None  # arguments: in the usage
        if record is not None:
            sections.setdefault(getattr(param, "help_heading", DEFAULT), []).append(record)
    for heading, records in sections.items():
        with formatter.section(heading):
            formatter.write_dl(records)


def grouped(cmd: click.Command) -> click.Command:
    """``cmd`` listing its options under their headings (an instance's method: the command may be any click class)."""
    cmd.format_options = types.MethodType(format_options, cmd)
    return cmd
