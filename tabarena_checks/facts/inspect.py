"""The facts contract of the TabArena workflow: what an action hands its rules, and the words both share.

Rules import this module (and the readers and models below it), never an action or the engine:
what a rule needs from an action's world (the store's credential variables, the landmarks of an
arena's methods.py, the metrics the native engine simulates) is named here, and the actions
import it from here too, so the two cannot drift apart.

Each member is computed on first use and then shared by every rule, so a run decodes the
raw files at most once (and usually not at all, thanks to the index cache). A member that
cannot be computed raises the project's error type; rules that depend on it treat that as
"not applicable" and the rule that owns the input reports it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from checks import InputError, UsageError, io
from tabarena_checks.metadata.load import load
from tabarena_checks.raw import task_table
from tabarena_checks.raw.index import build_index, scan, split_methods
from tabarena_checks.raw.inference import infer as infer_unmemoized
from tabarena_checks.raw.inference_memo import infer

if TYPE_CHECKING:
    from tabarena_checks.metadata.model import MethodMetadata

#: the environment variables a real upload or unpublish needs (read only from the environment)
CREDENTIAL_ENV = ("R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY")
#: an arena's methods.py: the collection's list argument, its group comments, the list of replaced metadata
COLLECTION_ARG = "method_metadata_lst"
SUPERSEDED = "methods_superseded"
GROUP_SYSTEMS = "# Systems"
GROUP_CPU = "# Default tabular models (CPU)"
GROUP_GPU = "# Neural / GPU / foundation models"
GROUPS = (GROUP_SYSTEMS, GROUP_CPU, GROUP_GPU)
#: the metrics the native engine simulates TabArena's HPO results for, under the names results record them
SIMULATED = ("log_loss", "roc_auc", "rmse", "mae")


def missing_credentials(environ: Mapping[str, str] | None = None) -> list[str]:
    """The variables of :data:`CREDENTIAL_ENV` that ``environ`` (default: the process's) lacks or leaves empty."""
    env = os.environ if environ is None else environ
    return [name for name in CREDENTIAL_ENV if not env.get(name)]


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
            source = _metadata_file(self.metadata_ref)
            if source is None:
                try:
                    md = self.metadata
                except InputError:
                    md = None
                source = _metadata_file(md.source) if md is not None and md.source else None
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

    try:
        tree = ast.parse(io.read_text(path, what="an info.py"))
    except (io.ReadError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == variable for t in targets):
            return node.lineno, node.end_lineno or node.lineno
    return (0, 0)


def _metadata_file(ref: str) -> Path | None:
    """The info.py file a reference or a ``source`` (``path:VAR`` / ``path:line``) points at, if it exists."""
    path = ref.rpartition(":")[0] or ref
    candidate = Path(os.path.expanduser(path))
    return candidate if path.endswith(".py") and candidate.is_file() else None


@attrs.define(slots=False)
class ProcessFacts(TabArenaFacts):
    """The facts inspect uses, except that the raw index cache is only read, never written: a blocked
    run writes nothing. After ``checks inspect`` (which keeps the cache) nothing is decoded again,
    but every cached row is checked against its file's content (sha256): a file swapped since it
    was decoded is decoded again, so the rules judge what process copies."""

    #: an index of ``data_dir`` built already (``checks inspect --html`` previews process on its own)
    built_index: Any = attrs.field(default=None, repr=False)

    @cached_property
    def full_index(self):

        if self.built_index is not None:
            return self.built_index
        return build_index(self.data_dir, write_cache=False, workers=self.workers, progress=self.progress, verify=True)

    @cached_property
    def input_digests(self) -> dict[str, str]:
        """The input digests, computed once per run (the plan, the source record and the decision record share them)."""
        return self.digests()

    @cached_property
    def selected_method(self) -> str | None:
        """The method prefix whose results are processed when the directory holds several methods.

        ``--method PREFIX`` names it (a unique prefix of one is enough, like ``checks inspect``);
        otherwise it is the one method the declaration matches: for configs the raw ag_key equals
        the declared ``ag_key``, for baselines the directory name starts with the method (or its
        ``name``). None when the directory holds one method, or when no single method matches
        (TA302 then says how to choose).
        """
        if self.method is not None:
            return self._named_method()
        if len(self.methods) < 2:
            return None
        return self._declared_method()

    def _named_method(self) -> str:
        """The one method ``--method`` names, exactly or as a unique prefix.

        A usage error when it names none or several, or when its config directories also hold
        results read as another method: processing it alone would silently leave those out.
        """
        methods = self.methods
        matches = [m for m in methods if m == self.method] or [m for m in methods if m.startswith(self.method)]
        if len(matches) != 1:
            found = ", ".join(methods) or "none"
            how = "matches several" if matches else "matches none"
            raise UsageError(f"--method {self.method!r} {how} of the methods in '{self.data_dir}' ({found})")
        sharing = _sharing(methods, matches[0])
        if sharing:
            raise UsageError(
                f"--method {matches[0]!r}: its config directories also hold results read as "
                f"{', '.join(sharing)} (a damaged result, or another method's); fix or move them"
            )
        return matches[0]

    def _declared_method(self) -> str | None:
        """The one method of several that the declaration matches, or None.

        Apart from ``--method`` because it never raises: an unreadable declaration is its rule's
        finding, and an ambiguous match is TA302's, so nothing is chosen then.
        """
        methods = self.methods
        try:
            meta = self.metadata
        except Exception:  # a bad reference is reported by its rule; nothing is chosen
            return None
        if meta is None:
            return None
        matches = [prefix for prefix, sub in methods.items() if _declares(meta, prefix, sub)]
        # never chosen when a config directory of it holds results of another "method": that is a damaged
        # result of this one (say, simulation artifacts missing), which must be judged, not left out
        return matches[0] if len(matches) == 1 and not _sharing(methods, matches[0]) else None

    @cached_property
    def index(self):
        chosen = self.selected_method
        return self.full_index if chosen is None else self.methods[chosen]

    def other_methods(self) -> list[tuple[str, int]]:
        """The methods of the directory that are not processed, with their number of results."""
        chosen = self.selected_method
        if chosen is None:
            return []
        return [(prefix, len(sub)) for prefix, sub in self.methods.items() if prefix != chosen]


def _sharing(methods: dict, chosen: str) -> list[str]:
    """The other methods with a result in one of ``chosen``'s config directories."""
    dirs = set(methods[chosen].table["config_dir"].to_pylist())
    return [
        prefix
        for prefix, sub in methods.items()
        if prefix != chosen and dirs & set(sub.table["config_dir"].to_pylist())
    ]


def _declares(meta: MethodMetadata, prefix: str, sub) -> bool:
    """Whether the results of one method of a directory are the ones ``meta`` declares."""
    inference = infer_unmemoized(sub)
    if meta.method_type == "config":
        return inference.method_type == "config" and inference.ag_key is not None and inference.ag_key == meta.ag_key
    names = [n for n in (meta.method, meta.name) if isinstance(n, str) and n]
    return inference.method_type == "baseline" and any(prefix.startswith(n) for n in names)
