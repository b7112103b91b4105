"""``checks run register``'s facts: the declarations to register and the arena's methods.py as it stands.

methods.py is read as a concrete syntax tree (libcst) into its landmarks (:class:`Layout`: the collection's
list, its group comments, ``methods_superseded``, the ``info`` imports) and its entries, each resolved
statically like an info.py, so the TA5xx rules judge uniqueness and layout without importing TabArena or
the action that edits the file (``tabarena_checks.publish.register``, which plans its edit from these facts).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import InputError
from tabarena_checks.facts.constants import COLLECTION_ARG, GROUPS, SUPERSEDED
from tabarena_checks.metadata import info_static
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import MethodMetadata

SRC = Path("packages/tabarena/src")
INFO_MODULE = re.compile(r"^tabarena\.(models|systems)\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\.info$")


def import_module_for(ref: str) -> str:
    """``tabarena.models.<x>.info`` from an ``.../src/tabarena/models/<x>/info.py:VAR`` or module reference."""
    target = ref.rpartition(":")[0] if ":" in ref else ref.rpartition(".")[0]
    if target.endswith(".py"):
        parts = Path(target).resolve().with_suffix("").parts
        starts = [i for i in range(len(parts) - 1) if parts[i] == "tabarena" and parts[i + 1] in ("models", "systems")]
        module = ".".join(parts[starts[-1] :]) if starts else ""
    else:
        module = target
    if not INFO_MODULE.match(module):
        raise InputError(
            f"--method-metadata {ref!r}: cannot derive the import path: expected "
            "packages/tabarena/src/tabarena/models/<x>/info.py:VARIABLE (or .../systems/<x>/info.py), "
            "or a module reference tabarena.models.<x>.info:VARIABLE"
        )
    return module


def methods_path(repo: Path, arena: str) -> Path:
    return repo / SRC / "tabarena" / "contexts" / arena / "methods.py"


# --------------------------------------------------------------------------- reading methods.py


@attrs.frozen
class Layout:
    """What register needs to know about methods.py: imports, the collection's entries and groups."""

    #: bound name -> (module, imported name) for every ``from X import a [as b]`` at module level
    imports: dict[str, tuple[str, str]]
    #: every other module-level name (assignments, functions, classes)
    other_names: frozenset[str]
    #: the collection's entries in order, each with the group comment it sits under ("" if none)
    entries: tuple[tuple[str, str], ...]
    superseded: tuple[str, ...]
    has_collection: bool
    has_superseded: bool
    #: the group comments present in the collection list, with or without entries under them
    groups: frozenset[str] = frozenset()


def _comments(ws) -> list[str]:
    import libcst as cst

    if isinstance(ws, cst.ParenthesizedWhitespace):
        return [line.comment.value.strip() for line in ws.empty_lines if line.comment is not None]
    return []


def list_groups(lst) -> list[tuple[str, str]]:
    """``(name, group)`` for each element of a list literal, the group being the last comment line above it."""
    import libcst as cst

    out, group = [], ""
    above = _comments(lst.lbracket.whitespace_after)
    for element in lst.elements:
        group = next((c for c in reversed(above) if c in GROUPS), group)
        name = (
            element.value.value if isinstance(element.value, cst.Name) else cst.Module([]).code_for_node(element.value)
        )
        out.append((name, group))
        above = _comments(element.comma.whitespace_after) if isinstance(element.comma, cst.Comma) else []
    return out


def _group_comments(lst) -> set[str]:
    """Every group comment line anywhere in a list literal (also above no entry, or before the bracket)."""
    import libcst as cst

    spaces = [lst.lbracket.whitespace_after, lst.rbracket.whitespace_before]
    spaces += [e.comma.whitespace_after for e in lst.elements if isinstance(e.comma, cst.Comma)]
    return {c for ws in spaces for c in _comments(ws) if c in GROUPS}


def collection_list(node):
    """The list passed as ``method_metadata_lst=`` in a call, if ``node`` is such a call."""
    import libcst as cst

    if isinstance(node, cst.Call):
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == COLLECTION_ARG and isinstance(arg.value, cst.List):
                return arg.value
    return None


def targets(stmt) -> list[str]:
    import libcst as cst

    if isinstance(stmt, cst.Assign):
        return [t.target.value for t in stmt.targets if isinstance(t.target, cst.Name)]
    if isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name):
        return [stmt.target.value]
    return []


def dotted(node) -> str:
    import libcst as cst

    return cst.Module([]).code_for_node(node)


def _from_imports(small) -> dict[str, tuple[str, str]]:
    """``from m import x as y``: ``{y: (m, x)}`` for each name."""
    return {
        (alias.asname.name.value if alias.asname else alias.name.value): (dotted(small.module), alias.name.value)
        for alias in small.names
    }


def _imported_modules(small) -> set[str]:
    """``import a.b as c``: the top-level names the statement binds."""
    return {(alias.asname.name.value if alias.asname else dotted(alias.name)).split(".")[0] for alias in small.names}


def read_layout(module) -> Layout:
    """What the registry module binds at its top level: its imports, other names, collection and superseded list."""
    import libcst as cst

    found = _LayoutReader()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            found.other.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                found.statement(small)
    return found.layout()


@attrs.define
class _LayoutReader:
    """Collects a :class:`Layout` one top-level simple statement at a time (the last collection wins)."""

    imports: dict[str, tuple[str, str]] = attrs.Factory(dict)
    other: set[str] = attrs.Factory(set)
    entries: tuple = ()
    superseded: tuple = ()
    has_collection: bool = False
    has_superseded: bool = False
    groups: frozenset[str] = frozenset()

    def statement(self, small) -> None:
        import libcst as cst

        if (
            isinstance(small, cst.ImportFrom)
            and small.module is not None
            and not isinstance(small.names, cst.ImportStar)
        ):
            self.imports.update(_from_imports(small))
        elif isinstance(small, cst.Import):
            self.other.update(_imported_modules(small))
        else:
            self._binding(small)

    def _binding(self, small) -> None:
        """The names a statement binds; the collection's entries and group comments, the superseded list's names."""
        import libcst as cst

        names = targets(small)
        self.other.update(names)
        value = getattr(small, "value", None)
        lst = collection_list(value)
        if lst is not None:
            self.has_collection = True
            self.entries = tuple(list_groups(lst))
            self.groups = frozenset(_group_comments(lst))
        if SUPERSEDED in names and isinstance(value, cst.List):
            self.has_superseded = True
            self.superseded = tuple(name for name, _ in list_groups(value))

    def layout(self) -> Layout:
        return Layout(
            self.imports,
            frozenset(self.other - set(self.imports)),
            self.entries,
            self.superseded,
            self.has_collection,
            self.has_superseded,
            self.groups,
        )


# --------------------------------------------------------------------------- the edit


@attrs.frozen
class Entry:
    """A collection entry and the metadata it resolves to (None when it cannot be read statically)."""

    name: str
    group: str
    module: str | None
    metadata: MethodMetadata | None
    problem: str = ""


class SeveralDeclarations(RuntimeError):
    """A rule read the one declaration of a run that registers several: it must read ``facts.declarations``.

    Not a ChecksError nor an AttributeError, so a rule written for one declaration crashes (and a crashed
    rule blocks) instead of passing on a value it never judged."""


@attrs.frozen
class Declaration:
    """One ``--method-metadata`` of the run: where it is declared, the module methods.py imports it from, and
    the entry a rerun swaps out (None for a new method)."""

    ref: str
    module: str
    metadata: MethodMetadata
    replaced: str | None

    @property
    def target(self) -> str:
        return f"{self.metadata.method}@{self.metadata.effective_suite}"


def _declared(repo: Path, ref: str) -> tuple[str, str, MethodMetadata]:
    """``(ref read, import module, metadata)`` of one ``--method-metadata``; a module reference is read from the
    checkout itself, so TabArena need not be importable."""
    module = import_module_for(ref)
    in_checkout = repo / SRC / (module.replace(".", "/") + ".py")
    if not ref.rpartition(":")[0].endswith(".py") and in_checkout.is_file():
        ref = f"{in_checkout}:{re.split(r'[:.]', ref)[-1]}"
    return ref, module, metadata_load.load(ref)


@attrs.define(slots=False)
class RegisterFacts:
    """The new metadata (one declaration or several), the checkout's methods.py and what its collection holds;
    :meth:`gather` builds them from ``checks run register``'s options.

    ``plan_edit`` is the action's planner of one declaration's edit, handed over so these facts never
    import the action; the edits are planned once and shared by the plan, the execution and the rules.
    """

    options: Any = attrs.field(repr=False)
    repo: Path
    arena: str
    #: ``(ref read, import module, metadata)`` of each ``--method-metadata``, in the order given
    declared: list[tuple[str, str, MethodMetadata]] = attrs.field(repr=False)
    #: the arena's methods.py, its text and its landmarks
    path: Path
    source: str = attrs.field(repr=False)
    layout: Layout = attrs.field(repr=False)
    plan_edit: Callable[..., Any] = attrs.field(repr=False)

    @classmethod
    def gather(cls, options: Any, plan_edit: Callable[..., Any]) -> RegisterFacts:
        repo, arena = Path(options.repo), options.arena or "tabarena"
        refs = options.refs
        twice = sorted({r for r in refs if refs.count(r) > 1})
        if twice:
            raise InputError(f"--method-metadata {twice[0]!r} is given twice; name each declaration once")
        declared = [_declared(repo, ref) for ref in refs]
        path = methods_path(repo, arena)
        if not path.is_file():
            raise InputError(
                f"{path}: no methods.py for arena {arena!r} in {repo}; "
                "pass --repo <TabArena checkout> and --arena <name of contexts/<arena>>"
            )
        import libcst as cst

        source = path.read_text(encoding="utf-8")
        try:
            layout = read_layout(cst.parse_module(source))
        except cst.ParserSyntaxError as exc:
            raise InputError(f"{path}:{exc.raw_line}: not valid Python ({exc.message}); fix it first") from None
        return cls(options, repo, arena, declared, path, source, layout, plan_edit)

    def _resolve(self, name: str, group: str) -> Entry:
        """The entry's metadata, read statically like an info.py (descriptors, spreads and imports followed)."""
        origin = self.layout.imports.get(name)
        if origin is None:  # defined in methods.py itself
            module, file, variable = self.methods_module, self.path, name
        else:
            module, variable = origin
            file = self.repo / SRC / (module.replace(".", "/") + ".py")
        try:
            return Entry(name, group, module, info_static.read_variable(file, variable, self.reader))
        except InputError as exc:
            return Entry(name, group, module, None, str(exc))

    @cached_property
    def reader(self):
        """One static reader for every entry, so each module is parsed once."""
        return info_static.new_reader()

    @property
    def methods_module(self) -> str:
        return f"tabarena.contexts.{self.arena}.methods"

    @cached_property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._resolve(name, group) for name, group in self.layout.entries)

    def _replaced(self, module: str, meta: MethodMetadata) -> str | None:
        """The entry a rerun of ``meta`` swaps out: same method, other metadata (None for a new method)."""
        for e in self.entries:
            if e.metadata is None or e.metadata.method != meta.method:
                continue
            if e.metadata.effective_suite == meta.effective_suite:
                continue  # the same (method, suite) is no rerun: TA501 reports a second declaration
            if (e.module, e.metadata.variable) != (module, meta.variable):
                return e.name
        return None

    @cached_property
    def declarations(self) -> tuple[Declaration, ...]:
        """Every declaration the run registers, in the order given: what the TA5xx rules judge, each."""
        return tuple(
            Declaration(ref, module, meta, self._replaced(module, meta)) for ref, module, meta in self.declared
        )

    def _one(self) -> Declaration:
        if len(self.declarations) != 1:
            names = ", ".join(d.target for d in self.declarations)
            raise SeveralDeclarations(
                f"this run registers {len(self.declarations)} declarations ({names}): a rule must judge each of "
                "ctx.facts.declarations, not ctx.facts.metadata"
            )
        return self.declarations[0]

    @property
    def ref(self) -> str:
        return self._one().ref

    @property
    def module(self) -> str:
        return self._one().module

    @property
    def metadata(self) -> MethodMetadata:
        return self._one().metadata

    @property
    def replaced(self) -> str | None:
        return self._one().replaced

    @cached_property
    def edits(self) -> tuple[Any, ...]:
        """Each declaration's edit, made on the source the one before it left (no changes: registered already),
        as the action's ``plan_edit(source, path, metadata, module, replaced)`` plans it."""
        source, edits = self.source, []
        for d in self.declarations:
            edits.append(self.plan_edit(source, str(self.path), d.metadata, d.module, d.replaced))
            source = edits[-1].source
        return tuple(edits)
