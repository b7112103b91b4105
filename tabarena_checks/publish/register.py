"""``checks run register``: add a method's info.py metadata to an arena's ``contexts/<arena>/methods.py``.

The file is edited as a concrete syntax tree (libcst), so its comments and layout survive:
the import goes into the alphabetical block of ``info`` imports, the entry at the end of its
group in ``method_metadata_lst``. Registering a rerun of a method already in the collection
swaps the entry and appends the replaced metadata to ``methods_superseded``. Registering the
same metadata again changes nothing. Several declarations (``--method-metadata`` repeated, as a
batch registers its methods) are edited in turn on one copy and written once: all or none.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from types import SimpleNamespace

import attrs
import click

from checks import Action, ActionFailed, InputError, io
from checks.options import option
from tabarena_checks.facts.constants import COLLECTION_ARG, GROUP_CPU, GROUP_GPU, GROUP_SYSTEMS, GROUPS, SUPERSEDED
from tabarena_checks.facts.sources import info_sources
from tabarena_checks.metadata import info_static
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import MethodMetadata

SRC = Path("packages/tabarena/src")
_INFO_MODULE = re.compile(r"^tabarena\.(models|systems)\.[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*\.info$")


def group_for(meta: MethodMetadata) -> str:
    """The comment heading the entry's group: systems, then CPU models, then GPU/neural/foundation models."""
    if meta.method_class == "system":
        return GROUP_SYSTEMS
    return GROUP_GPU if meta.compute == "gpu" else GROUP_CPU


def import_module_for(ref: str) -> str:
    """``tabarena.models.<x>.info`` from an ``.../src/tabarena/models/<x>/info.py:VAR`` or module reference."""
    target = ref.rpartition(":")[0] if ":" in ref else ref.rpartition(".")[0]
    if target.endswith(".py"):
        parts = Path(target).resolve().with_suffix("").parts
        starts = [i for i in range(len(parts) - 1) if parts[i] == "tabarena" and parts[i + 1] in ("models", "systems")]
        module = ".".join(parts[starts[-1] :]) if starts else ""
    else:
        module = target
    if not _INFO_MODULE.match(module):
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


def _list_groups(lst) -> list[tuple[str, str]]:
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


def _collection_list(node):
    """The list passed as ``method_metadata_lst=`` in a call, if ``node`` is such a call."""
    import libcst as cst

    if isinstance(node, cst.Call):
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == COLLECTION_ARG and isinstance(arg.value, cst.List):
                return arg.value
    return None


def _targets(stmt) -> list[str]:
    import libcst as cst

    if isinstance(stmt, cst.Assign):
        return [t.target.value for t in stmt.targets if isinstance(t.target, cst.Name)]
    if isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name):
        return [stmt.target.value]
    return []


def _dotted(node) -> str:
    import libcst as cst

    return cst.Module([]).code_for_node(node)


def _from_imports(small) -> dict[str, tuple[str, str]]:
    """``from m import x as y``: ``{y: (m, x)}`` for each name."""
    return {
        (alias.asname.name.value if alias.asname else alias.name.value): (_dotted(small.module), alias.name.value)
        for alias in small.names
    }


def _imported_modules(small) -> set[str]:
    """``import a.b as c``: the top-level names the statement binds."""
    return {(alias.asname.name.value if alias.asname else _dotted(alias.name)).split(".")[0] for alias in small.names}


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

        names = _targets(small)
        self.other.update(names)
        value = getattr(small, "value", None)
        lst = _collection_list(value)
        if lst is not None:
            self.has_collection = True
            self.entries = tuple(_list_groups(lst))
            self.groups = frozenset(_group_comments(lst))
        if SUPERSEDED in names and isinstance(value, cst.List):
            self.has_superseded = True
            self.superseded = tuple(name for name, _ in _list_groups(value))

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
class Edit:
    """What registering changes: the name used in the collection and each change, in words."""

    source: str
    changes: tuple[str, ...]
    entry: str


def _alias_for(variable: str, suite: str, taken: set[str]) -> str:
    base = f"{variable}_{re.sub(r'[^0-9A-Za-z_]', '_', suite)}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    return name


def _plain_ws(lst):
    """The whitespace before a list's first element without its comments: a newline plus the element indent."""
    import libcst as cst

    ws = lst.lbracket.whitespace_after
    if isinstance(ws, cst.ParenthesizedWhitespace):
        return ws.with_changes(empty_lines=[], first_line=cst.TrailingWhitespace())
    return cst.SimpleWhitespace(" ")


def _append_after(lst, index: int, name: str, comment: str | None = None):
    """A copy of ``lst`` with ``name`` inserted after element ``index``, comments staying where they were.

    A trailing comment belongs to the element it follows; comment lines below it (the next
    group's heading) end up after the new element.
    """
    import libcst as cst

    elements = list(lst.elements)
    prev = elements[index]
    plain = _plain_ws(lst)
    trailing = (
        cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(comment))
        if comment
        else cst.TrailingWhitespace()
    )
    closing = lst.rbracket.whitespace_before
    if index == len(elements) - 1 and isinstance(closing, cst.ParenthesizedWhitespace):
        # the last element's trailing comment is stored before the closing bracket
        new = cst.Element(cst.Name(name), comma=prev.comma)
        prev = prev.with_changes(comma=cst.Comma(whitespace_after=plain.with_changes(first_line=closing.first_line)))
        lst = lst.with_changes(
            rbracket=lst.rbracket.with_changes(whitespace_before=closing.with_changes(first_line=trailing))
        )
    elif isinstance(prev.comma, cst.Comma) and isinstance(prev.comma.whitespace_after, cst.ParenthesizedWhitespace):
        old = prev.comma.whitespace_after
        prev = prev.with_changes(
            comma=prev.comma.with_changes(whitespace_after=plain.with_changes(first_line=old.first_line))
        )
        new = cst.Element(cst.Name(name), comma=cst.Comma(whitespace_after=old.with_changes(first_line=trailing)))
    else:  # a list on one line
        new = cst.Element(cst.Name(name), comma=prev.comma)
        prev = prev.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    elements[index] = prev
    elements.insert(index + 1, new)
    return lst.with_changes(elements=elements)


def _split_at(ws, comment: str):
    """``ws`` cut after the line holding ``comment``: (the part up to it, the rest), or None if absent."""
    import libcst as cst

    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return None
    for k, line in enumerate(ws.empty_lines):
        if line.comment is not None and line.comment.value.strip() == comment:
            return ws.empty_lines[: k + 1], ws.empty_lines[k + 1 :]
    return None


def _insert_under_comment(lst, comment: str, name: str):
    """A copy of ``lst`` with ``name`` as the first entry under ``comment``, a group with no entry yet."""
    import libcst as cst

    elements = list(lst.elements)
    plain = _plain_ws(lst)
    slots = [(0, lst.lbracket.whitespace_after)]
    slots += [(i + 1, e.comma.whitespace_after) for i, e in enumerate(elements) if isinstance(e.comma, cst.Comma)]
    for at, ws in slots:
        cut = _split_at(ws, comment)
        if cut is None:
            continue
        above, below = cut
        before = ws.with_changes(empty_lines=above, last_line=plain.last_line)
        after = ws.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=below)
        if at == 0:
            lst = lst.with_changes(lbracket=lst.lbracket.with_changes(whitespace_after=before))
        else:
            elements[at - 1] = elements[at - 1].with_changes(
                comma=elements[at - 1].comma.with_changes(whitespace_after=before)
            )
        elements.insert(at, cst.Element(cst.Name(name), comma=cst.Comma(whitespace_after=after)))
        return lst.with_changes(elements=elements)
    closing = lst.rbracket.whitespace_before
    cut = _split_at(closing, comment)
    if cut is None or not elements:
        raise ActionFailed(f"the group comment {comment!r} was not found in {COLLECTION_ARG}")
    above, below = cut
    last = elements[-1]
    elements[-1] = last.with_changes(
        comma=cst.Comma(whitespace_after=closing.with_changes(empty_lines=above, last_line=plain.last_line))
    )
    elements.append(cst.Element(cst.Name(name), comma=last.comma))
    closing = closing.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=below)
    return lst.with_changes(elements=elements, rbracket=lst.rbracket.with_changes(whitespace_before=closing))


class _Editor:
    """Applies the collection and superseded changes while walking the module once."""

    def __init__(self, *, entry: str, group: str, replace: str | None, superseded_add: str | None, comment: str):
        self.entry, self.group, self.replace = entry, group, replace
        self.superseded_add, self.comment = superseded_add, comment

    def collection(self, lst):
        import libcst as cst

        if self.replace is not None:
            elements = [
                e.with_changes(value=cst.Name(self.entry))
                if isinstance(e.value, cst.Name) and e.value.value == self.replace
                else e
                for e in lst.elements
            ]
            return lst.with_changes(elements=elements)
        groups = _list_groups(lst)
        members = [i for i, (_, g) in enumerate(groups) if g == self.group]
        if members:
            return _append_after(lst, members[-1], self.entry)
        return _insert_under_comment(lst, self.group, self.entry)

    def superseded(self, lst):
        import libcst as cst

        if not lst.elements:
            return lst.with_changes(elements=[cst.Element(cst.Name(self.superseded_add))])
        return _append_after(lst, len(lst.elements) - 1, self.superseded_add, self.comment)

    def statement(self, small):
        import libcst as cst

        value = getattr(small, "value", None)
        lst = _collection_list(value)
        if lst is not None:
            new_args = [a.with_changes(value=self.collection(a.value)) if a.value is lst else a for a in value.args]
            return small.with_changes(value=value.with_changes(args=new_args))
        if self.superseded_add and SUPERSEDED in _targets(small) and isinstance(value, cst.List):
            return small.with_changes(value=self.superseded(value))
        return small


def _with_import(stmts: list, target_module: str, name: str, alias: str | None) -> list:
    """``stmts`` with ``from target_module import name [as alias]`` added in alphabetical position."""
    import libcst as cst

    alias_node = cst.ImportAlias(cst.Name(name), asname=cst.AsName(cst.Name(alias)) if alias else None)
    infos = _info_imports(stmts)
    for i, mod, imp in infos:
        if mod == target_module and not isinstance(imp.names, cst.ImportStar):
            names = _names_with(imp, name, alias_node)
            stmts[i] = stmts[i].with_changes(body=[imp.with_changes(names=names)])
            return stmts
    new = cst.SimpleStatementLine([cst.ImportFrom(module=cst.parse_expression(target_module), names=[alias_node])])
    _insert_import(stmts, [(i, mod) for i, mod, _ in infos], target_module, new)
    return stmts


def _info_imports(stmts: list) -> list[tuple[int, str, object]]:
    """``(position, module, ImportFrom)`` of every one-line ``from tabarena.models.<x>.info import ...``."""
    import libcst as cst

    infos = []
    for i, stmt in enumerate(stmts):
        if (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.ImportFrom)
        ):
            imp = stmt.body[0]
            mod = _dotted(imp.module) if imp.module is not None else ""
            if _INFO_MODULE.match(mod):
                infos.append((i, mod, imp))
    return infos


def _names_with(imp, name: str, alias_node) -> list:
    """The names ``imp`` imports with ``alias_node`` added in alphabetical position, commas laid out as around it."""
    import libcst as cst

    names = list(imp.names)
    pos = next((k for k, a in enumerate(names) if a.name.value > name), len(names))
    if imp.lpar is not None and pos == len(names):  # parenthesised, appended: one name per line
        last = names[-1]
        names[-1] = last.with_changes(
            comma=cst.Comma(
                whitespace_after=cst.ParenthesizedWhitespace(
                    first_line=cst.TrailingWhitespace(), indent=True, last_line=cst.SimpleWhitespace("    ")
                )
            )
        )
        names.append(alias_node.with_changes(comma=last.comma))
    elif imp.lpar is None and pos == len(names):
        names[-1] = names[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        names.append(alias_node)
    else:
        template = (
            names[pos].comma
            if pos < len(names) - 1
            else (names[0].comma if len(names) > 1 else cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        )
        names.insert(pos, alias_node.with_changes(comma=template))
    return names


def _insert_import(stmts: list, infos: list[tuple[int, str]], target_module: str, new) -> None:
    """Put the new import statement ``new`` among the info imports ``infos``, in its own block, alphabetically."""
    kind = target_module.split(".")[1]
    same = [(i, mod) for i, mod in infos if mod.split(".")[1] == kind] or infos
    after = [i for i, mod in same if mod < target_module]
    before = [i for i, mod in same if mod > target_module]
    if after:  # models and systems imports are separate blocks: stay inside the target's own block
        stmts.insert(after[-1] + 1, new)
    elif before:
        at = before[0]
        # a comment heading the block stays at the top of the block
        new = new.with_changes(leading_lines=stmts[at].leading_lines)
        stmts[at] = stmts[at].with_changes(leading_lines=[])
        stmts.insert(at, new)
    else:
        stmts.insert(_last_import(stmts) + 1, new)


def _last_import(stmts: list) -> int:
    """The position of the module's last import statement (-1 without one)."""
    import libcst as cst

    return max(
        (
            i
            for i, s in enumerate(stmts)
            if isinstance(s, cst.SimpleStatementLine)
            and any(isinstance(b, (cst.Import, cst.ImportFrom)) for b in s.body)
        ),
        default=-1,
    )


def plan_edit(source: str, path: str, meta: MethodMetadata, module_name: str, replaced: str | None) -> Edit:
    """The edited source (unchanged when ``meta`` is registered already) and the list of changes."""
    import libcst as cst

    tree = cst.parse_module(source)
    layout = read_layout(tree)
    variable = meta.variable
    bound = next((n for n, origin in layout.imports.items() if origin == (module_name, variable)), None)
    entries = [n for n, _ in layout.entries]
    if bound is not None and bound in entries:
        return Edit(source, (), bound)
    changes = []
    stmts = list(tree.body)
    if bound is None:
        bound, change = _import_variable(stmts, layout, meta, module_name)
        changes.append(change)
    group = group_for(meta)
    add_superseded = replaced if replaced is not None and replaced not in layout.superseded else None
    editor = _Editor(
        entry=bound,
        group=group,
        replace=replaced,
        superseded_add=add_superseded,
        comment=f"# rerun {meta.effective_suite} replaced it",
    )
    stmts = _edited_statements(stmts, editor)
    changes.extend(_entry_changes(bound, group, replaced, add_superseded))
    new_source = tree.with_changes(body=stmts).code
    _must_compile(new_source, path)
    return Edit(new_source, tuple(changes), bound)


def _edited_statements(stmts: list, editor: _Editor) -> list:
    """Each simple statement line with its statements passed through ``editor``; compound statements as they are."""
    import libcst as cst

    return [
        s.with_changes(body=[editor.statement(b) for b in s.body]) if isinstance(s, cst.SimpleStatementLine) else s
        for s in stmts
    ]


def _entry_changes(bound: str, group: str, replaced: str | None, add_superseded: str | None) -> list[str]:
    """What the edit does to the collection: a swap (and the superseded list) for a rerun, else an addition."""
    if replaced is None:
        return [f"add {bound} to {COLLECTION_ARG} under {group!r}"]
    changes = [f"swap {replaced} -> {bound} in {COLLECTION_ARG}"]
    if add_superseded:
        changes.append(f"append {replaced} to {SUPERSEDED}")
    return changes


def _must_compile(new_source: str, path: str) -> None:
    """The edited file must parse before it is written: a bug here must never reach the checkout."""
    try:
        compile(new_source, path, "exec")
    except SyntaxError as exc:
        raise ActionFailed(
            f"{path}: the edited file would not parse ({exc.msg} at line {exc.lineno}); nothing was written"
        ) from None


def _import_variable(stmts: list, layout: Layout, meta: MethodMetadata, module_name: str) -> tuple[str, str]:
    """Import the metadata's variable into ``stmts`` (under an alias when its name is taken); the name it is
    bound to, and the change to report."""
    variable = meta.variable
    taken = set(layout.imports) | set(layout.other_names)
    alias = _alias_for(variable, meta.effective_suite, taken) if variable in taken else None
    stmts[:] = _with_import(stmts, module_name, variable, alias)
    change = (
        f"import {variable}"
        + (f" as {alias} (the name {variable!r} is taken)" if alias else "")
        + f" from {module_name}"
    )
    return alias or variable, change


# --------------------------------------------------------------------------- facts and action


@attrs.frozen
class Entry:
    """A collection entry and the metadata it resolves to (None when it cannot be read statically)."""

    name: str
    group: str
    module: str | None
    metadata: MethodMetadata | None
    problem: str = ""


def _one_or_several(refs: str | tuple[str, ...] | list[str]) -> str | tuple[str, ...]:
    """``--method-metadata`` as given once (a string, as a single register always recorded it) or several times."""
    if isinstance(refs, str):
        return refs
    refs = tuple(refs)
    return refs[0] if len(refs) == 1 else refs


@attrs.frozen
class RegisterOptions:
    """``checks run register``'s options, declared once (``checks run`` makes its parameters from these fields):
    one ``--method-metadata`` (a string) or several (a tuple)."""

    method_metadata: str | tuple[str, ...] = option(
        help="path/to/models/<x>/info.py:VARIABLE or tabarena.models.<x>.info:VARIABLE; repeat it to register "
        "several methods in one edit of methods.py.",
        multiple=True,
        required=True,
        metavar="REF",
        converter=_one_or_several,
        callback=metadata_load.checked_path_reference,
    )
    repo: str = option(help="TabArena checkout.", type=click.Path(file_okay=False))
    arena: str = option(help="contexts/<arena>/methods.py to edit.", default="tabarena")

    @property
    def refs(self) -> tuple[str, ...]:
        return (self.method_metadata,) if isinstance(self.method_metadata, str) else self.method_metadata


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


class RegisterFacts:
    """The new metadata (one declaration or several), the checkout's methods.py and what its collection holds."""

    def __init__(self, options: RegisterOptions):

        self.options = options
        self.repo = Path(options.repo)
        self.arena = options.arena or "tabarena"
        refs = options.refs
        twice = sorted({r for r in refs if refs.count(r) > 1})
        if twice:
            raise InputError(f"--method-metadata {twice[0]!r} is given twice; name each declaration once")
        self._declared = [_declared(self.repo, ref) for ref in refs]
        self.path = methods_path(self.repo, self.arena)
        if not self.path.is_file():
            raise InputError(
                f"{self.path}: no methods.py for arena {self.arena!r} in {self.repo}; "
                "pass --repo <TabArena checkout> and --arena <name of contexts/<arena>>"
            )
        import libcst as cst

        self.source = self.path.read_text(encoding="utf-8")
        try:
            self.layout = read_layout(cst.parse_module(self.source))
        except cst.ParserSyntaxError as exc:
            raise InputError(f"{self.path}:{exc.raw_line}: not valid Python ({exc.message}); fix it first") from None

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
            Declaration(ref, module, meta, self._replaced(module, meta)) for ref, module, meta in self._declared
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
    def edits(self) -> tuple[Edit, ...]:
        """Each declaration's edit, made on the source the one before it left (no changes: registered already)."""
        source, edits = self.source, []
        for d in self.declarations:
            edits.append(plan_edit(source, str(self.path), d.metadata, d.module, d.replaced))
            source = edits[-1].source
        return tuple(edits)

    def edit(self) -> Edit:
        """Every declaration's changes in one source: what the one write puts in methods.py."""
        source = self.edits[-1].source if self.edits else self.source
        changes = tuple(c for e in self.edits for c in e.changes)
        return Edit(source, changes, ", ".join(e.entry for e in self.edits))

    def registered_already(self) -> list[str]:
        """The entries of the declarations methods.py holds already (a rerun adds them no more)."""
        return [e.entry for e in self.edits if not e.changes]


def _plan(ctx) -> Iterator[str]:
    facts: RegisterFacts = ctx.facts
    for entry in facts.registered_already():
        yield f"{facts.path}: {entry} is registered already; nothing to change"
    for change in facts.edit().changes:
        yield f"{facts.path}: {change}"


def _execute(ctx) -> str:
    facts: RegisterFacts = ctx.facts
    edit = facts.edit()
    if not edit.changes:
        if len(facts.declarations) == 1:
            return f"{facts.metadata.method} (suite={facts.metadata.effective_suite}) is registered already as {edit.entry}; {facts.path} unchanged"
        return f"{', '.join(d.target for d in facts.declarations)} are registered already; {facts.path} unchanged"
    swept = io.sweep_siblings(facts.path)  # the temporary file of a register killed before its rename
    io.write_text(facts.path, edit.source)  # one atomic write (temp file, then rename) for every declaration
    lines = [*swept, f"edited {facts.path}:", *(f"  {c}" for c in edit.changes)]
    lines += [f"  {entry} was registered already" for entry in facts.registered_already()]
    return "\n".join(lines)


def _target(ctx) -> str:
    """``method@suite`` of the declaration, or of each declaration joined by commas."""
    return ",".join(d.target for d in ctx.facts.declarations)


def _sources(ctx) -> list[str]:
    """The declaration lines of each ``--method-metadata`` (as :func:`info_sources` gives them for one)."""
    refs = ctx.options.refs
    if len(refs) == 1:
        return info_sources(ctx)
    return [s for ref in refs for s in info_sources(SimpleNamespace(options=SimpleNamespace(method_metadata=ref)))]


REGISTER = Action(
    name="register",
    help="Add a method's info.py metadata to packages/tabarena/src/tabarena/contexts/<arena>/methods.py "
    "(a rerun swaps the entry and keeps the old one in methods_superseded).",
    gather=lambda ctx: RegisterFacts(ctx.options),
    plan=_plan,
    execute=_execute,
    target=_target,
    inputs=lambda ctx: {"methods.py": io.sha256(ctx.facts.source.encode())},
    sources=_sources,
    arena="tabarena",
    requires=("libcst",),
    options=RegisterOptions,
)

ACTIONS = [REGISTER]
