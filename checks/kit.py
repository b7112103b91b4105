"""A file-tree arena declared once: its result files, and from them an action's inputs and a pre-commit hook.

Arenas such as embedding or language-model benchmarks keep one JSON file per model, revision
and task in a results tree. A plugin for one declares those files once, as a
:class:`ResultFiles` (which files: a glob of their last path segments; how one becomes a
record: a function of a :class:`Source`), and gets from that one declaration:

- :meth:`ResultFiles.gather`: an action's inputs (files and folders below them) read into
  :class:`Records`, the facts its rules read;
- :meth:`ResultFiles.hook`: the ``checks precommit NAME FILES...`` command;
- one read-error path: a file that is not strict JSON, or that lacks what the record needs,
  is :class:`Unreadable` with its ``path:line:col``. No rule sees it; the command ends with
  exit 2 (a hook prints it as an ``error`` line, ``checks run`` as its error), never a crash
  and never a rule finding, so the same file fails the same way in every command.

Every value keeps its place: :meth:`Source.at` makes a finding located at a key path, whose
target is ``PATH#POINTER`` so a waiver can name one value of a file that holds no comments.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import click

from checks import io
from checks.errors import InputError, PluginLoadError
from checks.jsonread import NONFINITE_POLICIES, JsonDoc
from checks.model import ACTION_NAME, Finding

_KINDS = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "a list",
    dict: "an object",
}


class Unreadable(InputError):
    """An input that cannot be read into a record: where (``path``, ``line``, ``col``) and why (``reason``)."""

    def __init__(self, path: str, reason: str, *, line: int | None = None, col: int | None = None) -> None:
        self.path, self.reason, self.line, self.col = path, reason, line, col
        where = ":".join(str(part) for part in (path, line, col) if part is not None)
        super().__init__(f"{where}: {reason}")


@attrs.frozen
class Source:
    """One result file as read: its ``path`` (as given), the positioned document and the digest of its bytes."""

    path: str
    doc: JsonDoc = attrs.field(repr=False)
    digest: str = ""

    @property
    def value(self) -> Any:
        return self.doc.value

    def get(self, pointer: str, kind: type | tuple[type, ...], *, required: bool = True) -> Any:
        """The value at ``pointer`` (``/scores/test``), checked to be of ``kind``; None when absent or null and
        not required.

        :raises Unreadable: absent though required, or of another type: the record cannot be built.
        """
        parent, _, key = pointer.rpartition("/")
        value = self._lookup(pointer)
        if value is None and not required:
            return None
        if value is None and not _holds(self._lookup(parent), _unescape(key)):
            raise self.unreadable(parent, f"no {pointer!r} (expected {_kind_words(kind)})")
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
            raise self.unreadable(pointer, f"{pointer} is {_kind_of(value)}, expected {_kind_words(kind)}")
        return value

    def _lookup(self, pointer: str) -> Any:
        value = self.doc.value
        for part in map(_unescape, pointer.split("/")[1:]):
            value = value.get(part) if isinstance(value, dict) else _item(value, part)
        return value

    def where(self, pointer: str) -> tuple[int, int]:
        """``(line, col)`` of the value at ``pointer``, or of the nearest enclosing value the document has."""
        while True:
            try:
                return self.doc.where(pointer)
            except KeyError:
                pointer = pointer.rpartition("/")[0]

    def at(self, pointer: str, message: str) -> Finding:
        """A finding about the value at ``pointer``: located there, its target ``PATH#POINTER`` (what a waiver names)."""
        line, col = self.where(pointer)
        return Finding(message, target=f"{self.path}#{pointer}", path=self.path, line=line, col=col)

    def unreadable(self, pointer: str, reason: str) -> Unreadable:
        """The error a record builder raises for a file it cannot use, placed at ``pointer``."""
        line, col = self.where(pointer)
        return Unreadable(self.path, reason, line=line, col=col)


def _unescape(part: str) -> str:
    """One key of a JSON Pointer as written in the document (RFC 6901: ``~1`` is ``/``, ``~0`` is ``~``)."""
    return part.replace("~1", "/").replace("~0", "~")


def _holds(holder: Any, key: str) -> bool:
    """Whether an object has ``key``, or a list has the index ``key`` (whatever it holds, null too)."""
    if isinstance(holder, dict):
        return key in holder
    return isinstance(holder, list) and key.isdigit() and int(key) < len(holder)


def _item(value: Any, part: str) -> Any:
    if isinstance(value, list) and part.isdigit() and int(part) < len(value):
        return value[int(part)]
    return None


def _kind_words(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_KINDS.get(k, k.__name__) for k in kinds)


def _kind_of(value: Any) -> str:
    return "null" if value is None else _KINDS.get(type(value), type(value).__name__)


class Records:
    """The facts of a kit arena's action or hook: every record read, in path order, with their sources.

    A working set rather than a record, so a plain class; ``extra`` holds what an action adds
    (the results tree already published, a root folder) for its rules to read.
    """

    def __init__(self, records: Sequence[Any], sources: Sequence[Source], **extra: Any) -> None:
        self.records = tuple(records)
        self.sources = tuple(sources)
        self.__dict__.update(extra)

    def __repr__(self) -> str:
        return f"Records({len(self.records)} records)"

    def of(self, kind: type) -> list[Any]:
        """The records of one type (a task result, a model's metadata, ...)."""
        return [r for r in self.records if isinstance(r, kind)]

    def digests(self) -> dict[str, str]:
        """path -> sha256 of every file read: an action's inputs for its decision record."""
        return {s.path: s.digest for s in self.sources}


def records(kind: type) -> Callable[[Any], list[Any] | None]:
    """A provider for :func:`checks.needs`: the records of ``kind`` a kit arena's action or hook read; None when
    the run's facts are not :class:`Records` (a rule of this arena bound to another plugin's action)."""

    def provider(ctx: Any) -> list[Any] | None:
        return ctx.facts.of(kind) if isinstance(ctx.facts, Records) else None

    provider.__name__ = provider.__qualname__ = f"records_of_{kind.__name__}"
    return provider


@attrs.frozen
class ResultFiles:
    """An arena's result files, declared once.

    ``name`` names the pre-commit command (``checks precommit NAME``) and its action
    (``precommit-NAME``, which rules bind to); ``glob`` matches a file by its last path segments
    (``*/*/*.json``: model, revision, file), wherever the tree is; ``record`` turns a
    :class:`Source` into the plugin's record (raising :meth:`Source.unreadable` when it cannot);
    ``nonfinite`` is the arena's NaN/Infinity policy (``refuse`` or ``keep``, see
    :func:`checks.io.loads_json`); ``arena`` its ``[arenas.NAME]`` settings section.
    """

    name: str = attrs.field()
    glob: str
    record: Callable[[Source], Any]
    nonfinite: str = "refuse"
    arena: str | None = None
    max_bytes: int = io.MAX_BYTES
    max_depth: int = io.MAX_DEPTH

    @name.validator
    def _check(self, attribute: attrs.Attribute, value: str) -> None:
        if not isinstance(value, str) or not ACTION_NAME.match(value):
            raise PluginLoadError(f"ResultFiles name {value!r}: expected a lower-case command name like 'mteb'")
        if self.nonfinite not in NONFINITE_POLICIES:
            raise PluginLoadError(
                f"ResultFiles {value!r}: nonfinite={self.nonfinite!r} is not a policy; use one of "
                f"{', '.join(NONFINITE_POLICIES)}"
            )

    @property
    def action(self) -> str:
        """The action name the hook judges under: bind rules to it (and to the plugin's own actions)."""
        return f"precommit-{self.name}"

    def matches(self, path: str) -> bool:
        """Whether ``path`` (``/``-separated) is one of these files: its last segments match the glob's."""
        want = self.glob.split("/")
        have = path.replace(os.sep, "/").split("/")
        return len(have) >= len(want) and all(map(fnmatch.fnmatchcase, have[-len(want) :], want))

    def read(self, path: str) -> tuple[Source, Any]:
        """One file: its source and its record. :raises Unreadable: not strict JSON, too large, or not what
        ``record`` needs."""
        try:
            data = io.read_bytes(path, limit=self.max_bytes, what=f"a {self.name} result file")
            doc = io.loads_json(
                data, source=path, max_bytes=self.max_bytes, max_depth=self.max_depth, nonfinite=self.nonfinite
            )
        except io.ReadError as exc:
            raise Unreadable(path, exc.reason, line=exc.line, col=exc.col) from None
        source = Source(path, doc, io.sha256(data))
        return source, self.record(source)

    def files(self, paths: Iterable[str | os.PathLike]) -> list[str]:
        """``paths`` with each folder replaced by the files below it that match (sorted); a file is kept as given."""
        out: list[str] = []
        for given in map(str, paths):
            if not Path(given).is_dir():
                out.append(given)
                continue
            for folder, dirs, names in os.walk(given):
                dirs.sort()
                out += sorted(p for p in (os.path.join(folder, n) for n in names) if self.matches(p))
        return out

    def read_all(self, paths: Iterable[str]) -> tuple[list[tuple[Source, Any]], list[Unreadable]]:
        """Every file's (source, record), and every file that could not be read, each once."""
        read, unreadable = [], []
        for path in paths:
            try:
                read.append(self.read(path))
            except Unreadable as exc:
                unreadable.append(exc)
        return read, unreadable

    def gather(self, paths: Iterable[str | os.PathLike], **extra: Any) -> Records:
        """An action's inputs: the files below ``paths`` read into :class:`Records` (``extra`` added to them).

        :raises InputError: one or more files are unreadable; the message lists each once with its place (exit 2).
            Also when ``paths`` hold no matching file at all: an action given nothing has judged nothing.
        """
        paths = list(paths)
        files = self.files(paths)
        if not files:
            given = ", ".join(map(str, paths)) or "nothing"
            raise InputError(
                f"{given}: no {self.name} result file ({self.glob}) below it; give the folder that holds them"
            )
        read, unreadable = self.read_all(files)
        if unreadable:
            lines = [str(u) for u in unreadable]
            head = "an input file cannot be read" if len(lines) == 1 else f"{len(lines)} input files cannot be read"
            raise InputError(f"{head} (no rule ran; fix the file):\n  " + "\n  ".join(lines))
        return Records([r for _, r in read], [s for s, _ in read], **extra)

    def hook(self, help: str) -> Callable[[], click.Command]:
        """The factory of ``checks precommit NAME FILES...``: name it in ``ModuleWiring(precommit=...)``."""

        def make() -> click.Command:
            @click.command(self.name, help=help)
            @click.argument("files", nargs=-1, type=click.Path())
            def command(files: tuple[str, ...]) -> None:
                from checks import filecheck  # noqa: PLC0415 - the judge and the outputs load with the hook that runs, not with `checks rules`

                paths = filecheck.expand(files, self.matches, self.glob)
                subjects = [s for group in filecheck.by_configuration(paths) for s in self._subjects(group)]
                filecheck.run_command(self.action, subjects, arena=self.arena)

            return command

        return make

    def _subjects(self, paths: list[str]) -> list[Any]:
        """One subject per unreadable file (the read check), then one holding every readable file's record."""
        from checks.filecheck import Subject  # noqa: PLC0415 - as in hook(): only a running hook needs it

        read, unreadable = self.read_all(paths)
        out = [Subject(u.path, error=u.reason, line=u.line, col=u.col) for u in unreadable]
        if read:
            facts = Records([r for _, r in read], [s for s, _ in read])
            out.append(Subject(read[0][0].path, facts, target=self.name, sources=tuple(facts.digests())))
        return out
