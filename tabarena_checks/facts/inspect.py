"""``checks inspect``'s facts, which every TabArena action on raw results builds on: the run's inputs, lazily.

Each member is computed on first use and then shared by every rule, so a run decodes the
raw files at most once (and usually not at all, thanks to the index cache). A member that
cannot be computed raises the project's error type; rules that depend on it treat that as
"not applicable" and the rule that owns the input reports it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import InputError, io
from tabarena_checks.facts.sources import metadata_file
from tabarena_checks.metadata.load import load
from tabarena_checks.raw import task_table
from tabarena_checks.raw.index import build_index, scan, split_methods
from tabarena_checks.raw.inference_memo import infer


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
        if self.data_dir is None:
            raise InputError("no raw data directory given: pass the run's data/ folder (e.g. --raw RUN/data)")
        return build_index(self.data_dir, cache_dir=self.cache_dir, workers=self.workers, progress=self.progress)

    @cached_property
    def methods(self) -> dict:
        """One index per method found in the directory."""
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

        return infer(self.index)

    @cached_property
    def task_metadata(self):
        """The :class:`~tabarena_checks.raw.task_table.TaskTable` given with ``--task-metadata``, or None."""
        return None if self.task_metadata_file is None else task_table.read(self.task_metadata_file)

    @cached_property
    def metadata(self):
        """The declared MethodMetadata, or None when no reference was given."""
        return load(self.metadata_ref)

    def digests(self) -> dict[str, str]:
        """Digests of the inputs for the decision record, read fresh from disk (not from caches)."""
        out: dict[str, str] = {}
        if self.data_dir is not None and self.data_dir.is_dir():
            # the files the rules judged, when the index is built already (its walk stat'ed each one)
            built = self.__dict__.get("full_index")
            out["raw_data"] = raw_digest(self.data_dir, built.files if built is not None else None)
        if self.metadata_ref:
            source = metadata_file(self.metadata_ref)
            if source is None:
                try:
                    md = self.metadata
                except InputError:
                    md = None
                source = metadata_file(md.source) if md is not None and md.source else None
            if source is not None:
                out["method_metadata"] = io.file_sha256(source)
            else:
                out["method_metadata"] = "ref:" + self.metadata_ref
        if self.task_metadata_file is not None and Path(self.task_metadata_file).is_file():
            out["task_metadata"] = io.file_sha256(Path(self.task_metadata_file))
        return out


def raw_digest(data_dir: Path, files=None) -> str:
    """sha256 over the sorted (path, size, mtime_ns) of every results.pkl (``files``, else a fresh walk)."""
    listing = "".join(f"{f.path}\t{f.size}\t{f.mtime_ns}\n" for f in (scan(data_dir) if files is None else files))
    return io.sha256(listing.encode())
