"""``checks precommit info-py FILE...``: the MethodMetadata rules decidable from info.py alone.

Each file is read statically (nothing is imported, TabArena need not be installed) and
every declaration in it is judged by the rules bound to ``precommit-info``, with
rules.toml's selection and waivers, like a ``checks run`` would judge it. Read-only:
no decision record, nothing written.
"""

from __future__ import annotations

import re

import attrs
import click

from checks import InputError
from checks import filecheck
from tabarena_checks.metadata import MethodMetadata

ACTION = "precommit-info"
_LOCATED = re.compile(r"^(?P<path>.+?):(?P<line>\d+): (?P<message>.*)$", re.S)


@attrs.frozen
class InfoFacts:
    """What the ``precommit-info`` rules read: one declaration and nothing else."""

    metadata: MethodMetadata


def _located(path: str, exc: InputError) -> filecheck.Subject:
    """An unreadable file, at the line its error names when it names one."""
    text = str(exc)
    match = _LOCATED.match(text)
    if match and match["path"] == path:
        return filecheck.Subject(path, line=int(match["line"]), error=match["message"])
    return filecheck.Subject(path, error=text.removeprefix(f"{path}: "))


def subjects(paths: list[str]) -> list[filecheck.Subject]:
    """One subject per declaration; a file that cannot be read, or declares nothing, is one error.

    The target is ``method@suite``, as ``checks run process`` and ``upload`` name it, so one
    waiver covers a method in the hook and in the runs.
    """
    from tabarena_checks import info_static

    out = []
    for path in paths:
        try:
            records = info_static.read_file(path)
        except InputError as exc:
            out.append(_located(path, exc))
            continue
        if not records:
            out.append(filecheck.Subject(path, error="no MethodMetadata declaration assigned to a module-level name; "
                                                     "declare one (e.g. nori = MethodMetadata.config(...)) or exclude "
                                                     "this file from the hook"))
        for record in records:
            number = record.source.rpartition(":")[2]
            line = int(number) if number.isdigit() else None
            out.append(filecheck.Subject(path, InfoFacts(record), target=f"{record.method}@{record.effective_suite}",
                                         line=line))
    return out


def register_commands(cli: click.Group) -> None:
    group = filecheck.command_group(cli)

    @group.command("info-py")
    @click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
    @click.option("--arena", default=None, metavar="NAME",
                  help="Apply rules.toml's [arenas.NAME] selection and settings (e.g. beyondarena).")
    def info_py(files, arena):
        """Check MethodMetadata declarations in info.py FILES statically (read-only; path:line: CODE message)."""
        filecheck.run_command(ACTION, subjects(list(files)), arena=arena)
