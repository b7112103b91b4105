"""``checks precommit info-py FILE...``: the MethodMetadata rules decidable from info.py alone.

Each file is read statically (nothing is imported, TabArena need not be installed) and
every declaration in it is judged by the rules bound to ``precommit-info``, with
rules.toml's selection and waivers, like a ``checks run`` would judge it. Read-only:
no decision record, nothing written.
"""

from __future__ import annotations

import os

import click

from checks import InputError, filecheck
from tabarena_checks.metadata import info_eval, info_static
from tabarena_checks.metadata.model import MethodMetadata

ACTION = "precommit-info"


class InfoFacts:
    """What the ``precommit-info`` rules read: one declaration, or why it cannot be read (TA118).

    A plain slotted class: the working state of one ``checks precommit info-py`` run, not a record.
    """

    __slots__ = ("metadata", "problem")

    def __init__(self, metadata: MethodMetadata | None, problem: InputError | None = None):
        self.metadata, self.problem = metadata, problem

    def __repr__(self) -> str:
        return f"InfoFacts(metadata={self.metadata!r}, problem={self.problem!r})"


def subjects(paths: list[str]) -> list[filecheck.Subject]:
    """One subject per declaration, readable or not; a file that declares nothing is one, and so is a file
    that cannot be read or parsed (an unreadable subject, reported whatever the selection).

    The target is ``method@suite``, as ``checks run process`` and ``upload`` name it, so one
    waiver covers a method in the hook and in the runs. Every file is read with one reader, so a
    module the files import from (a descriptor, shared keyword arguments) is parsed once.
    """
    reader = info_static.new_reader()
    out = []
    for path in paths:
        try:
            _inside_checkout(path)
            declarations = info_static.read_declarations(path, reader)
        except info_eval.Unreadable as exc:  # the read check's: no rule sees a file it cannot read or parse
            out.append(filecheck.Subject(path, error=exc.message, line=exc.line, col=exc.col))
            continue
        if not declarations:
            problem = info_eval.Unreadable(
                "no MethodMetadata declaration assigned to a module-level name; declare "
                "one (e.g. nori = MethodMetadata.config(...)) or exclude this file from "
                "the hook",
                path,
                1,
                1,
            )
            out.append(filecheck.Subject(path, InfoFacts(None, problem), target=path, line=1, col=1))
        for declaration in declarations:
            record = declaration.record
            if record is None:
                out.append(
                    filecheck.Subject(
                        path,
                        InfoFacts(None, declaration.problem),
                        target=f"{path}:{declaration.variable or declaration.line}",
                        line=declaration.line,
                        col=declaration.col,
                    )
                )
                continue
            out.append(
                filecheck.Subject(
                    path,
                    InfoFacts(record),
                    target=f"{record.method}@{record.effective_suite}",
                    line=declaration.line,
                    col=declaration.col,
                )
            )
    return out


def _inside_checkout(path: str) -> None:
    """Refuse a file of the checkout (below the working directory) that is a link leading out of it: the
    hook would read, and quote, a file a pull request only pointed at (a credentials file)."""
    here = os.path.realpath(os.getcwd())
    if os.path.abspath(path).startswith(here + os.sep) and not os.path.realpath(path).startswith(here + os.sep):
        raise info_eval.Unreadable(
            "is a link leading outside this checkout; only files of the checkout are read, "
            "and nothing outside it is shown: commit the file itself",
            path,
            1,
            1,
        )


def info_py_command() -> click.Command:
    """``checks precommit info-py``, made anew for each group that loads it (the group adds its options)."""

    @click.command("info-py")
    @click.argument("files", nargs=-1, type=click.Path())
    @click.option(
        "--arena",
        default=None,
        metavar="NAME",
        shell_complete=filecheck.complete_arenas,
        help="Apply rules.toml's [arenas.NAME] selection and settings; NAME is an arena a loaded plugin declares "
        "(tabarena; completion lists them).",
    )
    def info_py(files, arena):
        """Check MethodMetadata declarations in info.py FILES statically (read-only; path:line:col: CODE message).

        A directory stands for every info.py below it."""
        paths = filecheck.expand(files, lambda path: path.rpartition("/")[2] == "info.py", "info.py")
        filecheck.run_command(ACTION, subjects(paths), arena=arena)

    return info_py
