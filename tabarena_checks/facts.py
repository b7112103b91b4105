"""The facts one TabArena run hands to its rules: raw index, inference and declared metadata.

Each member is computed on first use and then shared by every rule, so a run decodes the
raw files at most once (and usually not at all, thanks to the index cache). A member that
cannot be computed raises the project's error type; rules that depend on it treat that as
"not applicable" and the rule that owns the input reports it.
"""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import InputError


def _optional_path(value: Any) -> Path | None:
    return None if value is None or value == "" else Path(value)


@attrs.define(slots=False)
class TabArenaFacts:
    """Inputs of a TabArena action and everything derived from them, lazily.

    ``method`` restricts the raw data to one method of a directory holding several
    (see :func:`tabarena_checks.raw.index.split_methods`).
    """

    data_dir: Path | None = attrs.field(default=None, converter=_optional_path)
    metadata_ref: str | None = None
    cache_dir: Path | None = attrs.field(default=None, converter=_optional_path)
    method: str | None = None
    workers: int | None = None
    progress: bool | None = None
    #: ``--task-metadata``: the metadata of the run's tasks outside the TabArena-v0.1 suite
    task_metadata_file: str | None = None

    @cached_property
    def full_index(self):
        """The index of the whole data directory."""
        from tabarena_checks.raw.index import build_index

        if self.data_dir is None:
            raise InputError("no raw data directory given: pass the run's data/ folder (e.g. --raw RUN/data)")
        return build_index(self.data_dir, cache_dir=self.cache_dir, workers=self.workers, progress=self.progress)

    @cached_property
    def methods(self) -> dict:
        """One index per method found in the directory."""
        from tabarena_checks.raw.index import split_methods

        return split_methods(self.full_index)

    @cached_property
    def index(self):
        """The index the rules judge: the whole directory, or only ``method`` when one was chosen."""
        if self.method is None:
            return self.full_index
        if self.method not in self.methods:
            found = ", ".join(self.methods) or "none"
            raise InputError(f"method {self.method!r} not found under '{self.data_dir}' (methods found: {found})")
        return self.methods[self.method]

    @cached_property
    def inference(self):
        from tabarena_checks.raw.inference_memo import infer

        return infer(self.index)

    @cached_property
    def task_metadata(self):
        """The :class:`~tabarena_checks.raw.task_table.TaskTable` given with ``--task-metadata``, or None."""
        from tabarena_checks.raw import task_table

        return None if self.task_metadata_file is None else task_table.read(self.task_metadata_file)

    @cached_property
    def metadata(self):
        """The declared MethodMetadata, or None when no reference was given."""
        from tabarena_checks.metadata.load import load

        return load(self.metadata_ref)

    def digests(self) -> dict[str, str]:
        """Digests of the inputs for the decision record, read fresh from disk (not from caches)."""
        out: dict[str, str] = {}
        if self.data_dir is not None and self.data_dir.is_dir():
            # the files the rules judged, when the index is built already (its walk stat'ed each one)
            built = self.__dict__.get("full_index")
            out["raw_data"] = raw_digest(self.data_dir, built.files if built is not None else None)
        if self.metadata_ref:
            source = _metadata_file(self.metadata_ref)
            if source is None:
                try:
                    md = self.metadata
                except InputError:
                    md = None
                source = _metadata_file(md.source) if md is not None and md.source else None
            if source is not None:
                out["method_metadata"] = "sha256:" + hashlib.sha256(source.read_bytes()).hexdigest()
            else:
                out["method_metadata"] = "ref:" + self.metadata_ref
        out.update(_file_digest("task_metadata", self.task_metadata_file))
        return out


def _file_digest(name: str, path: str | None) -> dict[str, str]:
    """``{name: "sha256:<hex>"}`` of the file at ``path``, or nothing when there is none."""
    if path is None or not Path(path).is_file():
        return {}
    return {name: "sha256:" + hashlib.sha256(Path(path).read_bytes()).hexdigest()}


def raw_digest(data_dir: Path, files=None) -> str:
    """sha256 over the sorted (path, size, mtime_ns) of every results.pkl (``files``, else a fresh walk)."""
    from tabarena_checks.raw.index import scan

    h = hashlib.sha256()
    for f in scan(data_dir) if files is None else files:
        h.update(f"{f.path}\t{f.size}\t{f.mtime_ns}\n".encode())
    return "sha256:" + h.hexdigest()


def info_sources(ctx) -> list[str]:
    """The info.py a TabArena action's ``--method-metadata`` names (its ``Action.sources``), if it is a file:
    only the lines of the declaration the run judges (``path#Lfirst-Llast``), so a suppression on a sibling
    declaration is never reported unused by a run that did not judge it."""
    ref = ctx.options.method_metadata or ""
    path = _metadata_file(ref)
    if path is None:
        return []
    span = _declaration_lines(path, ref.rpartition(":")[2])
    return [f"{path}#L{span[0]}-L{span[1]}" if span else str(path)]


def _declaration_lines(path: Path, variable: str) -> tuple[int, int] | None:
    """First and last line of the module-level statement that assigns ``variable`` in ``path``; ``(0, 0)`` (no
    line) when the file does not assign it (an imported name: no line of this file is the run's own, so
    nothing there is unused); None when the file does not parse (the whole file, as before)."""
    import ast

    from checks import io

    try:
        tree = ast.parse(io.read_text(path, what="an info.py"))
    except (io.ReadError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            return node.lineno, node.end_lineno or node.lineno
    return (0, 0)


def _metadata_file(ref: str) -> Path | None:
    """The info.py file a reference or a ``source`` (``path:VAR`` / ``path:line``) points at, if it exists."""
    path = ref.rpartition(":")[0] or ref
    candidate = Path(os.path.expanduser(path))
    return candidate if path.endswith(".py") and candidate.is_file() else None
