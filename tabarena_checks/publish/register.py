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
from types import SimpleNamespace

import attrs
import click

from checks import Action, ActionFailed, io
from checks.options import option
from tabarena_checks.facts.constants import COLLECTION_ARG, GROUP_CPU, GROUP_GPU, GROUP_SYSTEMS, SUPERSEDED
from tabarena_checks.facts.register import (
    INFO_MODULE,
    Layout,
    RegisterFacts,
    collection_list,
    dotted,
    list_groups,
    read_layout,
    targets,
)
from tabarena_checks.facts.sources import info_sources
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import MethodMetadata


def group_for(meta: MethodMetadata) -> str:
    """The comment heading the entry's group: systems, then CPU models, then GPU/neural/foundation models."""
    if meta.method_class == "system":
        return GROUP_SYSTEMS
    return GROUP_GPU if meta.compute == "gpu" else GROUP_CPU


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
        groups = list_groups(lst)
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
        lst = collection_list(value)
        if lst is not None:
            new_args = [a.with_changes(value=self.collection(a.value)) if a.value is lst else a for a in value.args]
            return small.with_changes(value=value.with_changes(args=new_args))
        if self.superseded_add and SUPERSEDED in targets(small) and isinstance(value, cst.List):
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
            mod = dotted(imp.module) if imp.module is not None else ""
            if INFO_MODULE.match(mod):
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
class RegisterOptions:
    """``checks run register``'s options, declared once (``checks run`` makes its parameters from these fields):
    one ``--method-metadata`` (a string) or several (a tuple)."""

    method_metadata: str | tuple[str, ...] = option(
        help="path/to/models/<x>/info.py:VARIABLE or tabarena.models.<x>.info:VARIABLE; repeat it to register "
        "several methods in one edit of methods.py.",
        multiple=True,
        required=True,
        metavar="REF",
        converter=metadata_load.one_or_several,
        callback=metadata_load.checked_path_reference,
    )
    repo: str = option(help="TabArena checkout.", type=click.Path(file_okay=False))
    arena: str = option(help="contexts/<arena>/methods.py to edit.", default="tabarena")

    @property
    def refs(self) -> tuple[str, ...]:
        return metadata_load.references(self.method_metadata)


def whole_edit(facts: RegisterFacts) -> Edit:
    """Every declaration's changes in one source: what the one write puts in methods.py."""
    source = facts.edits[-1].source if facts.edits else facts.source
    changes = tuple(c for e in facts.edits for c in e.changes)
    return Edit(source, changes, ", ".join(e.entry for e in facts.edits))


def registered_already(facts: RegisterFacts) -> list[str]:
    """The entries of the declarations methods.py holds already (a rerun adds them no more)."""
    return [e.entry for e in facts.edits if not e.changes]


def _plan(ctx) -> Iterator[str]:
    facts: RegisterFacts = ctx.facts
    for entry in registered_already(facts):
        yield f"{facts.path}: {entry} is registered already; nothing to change"
    for change in whole_edit(facts).changes:
        yield f"{facts.path}: {change}"


def _execute(ctx) -> str:
    facts: RegisterFacts = ctx.facts
    edit = whole_edit(facts)
    if not edit.changes:
        if len(facts.declarations) == 1:
            return f"{facts.metadata.method} (suite={facts.metadata.effective_suite}) is registered already as {edit.entry}; {facts.path} unchanged"
        return f"{', '.join(d.target for d in facts.declarations)} are registered already; {facts.path} unchanged"
    swept = io.sweep_siblings(facts.path)  # the temporary file of a register killed before its rename
    io.write_text(facts.path, edit.source)  # one atomic write (temp file, then rename) for every declaration
    lines = [*swept, f"edited {facts.path}:", *(f"  {c}" for c in edit.changes)]
    lines += [f"  {entry} was registered already" for entry in registered_already(facts)]
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
    gather=lambda ctx: RegisterFacts.gather(ctx.options, plan_edit),
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
