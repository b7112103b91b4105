"""Evaluate the safe subset of Python that TabArena's ``info.py`` files are written in, without running them.

TabArena declares its methods in ordinary modules: literals, module-level constants,
``dict(...)`` with ``**`` spreads, a ``ModelDescriptor(...)`` whose fields a later
``descriptor.method_metadata(...)`` call takes as defaults, and names imported from other
modules of the same checkout. Importing those modules would run them (and needs TabArena and
its model libraries installed); this module reads them with :mod:`ast` instead and evaluates
only that subset. Every value keeps the chain of places it came through (a keyword, a spread,
a constant, an import), so a finding can point at the exact place to edit.

Anything outside the subset raises :class:`Unreadable` with the place and the fix, at the
moment the value is needed: a file with one unreadable declaration still gives its others.

The evaluator's values (:class:`Step`, :class:`Val`, :class:`Binding`, ...; Step and their bases
are in :mod:`tabarena_checks.metadata.origins`) are plain slotted classes, not attrs classes:
a file creates thousands of these values, and they are never changed once built.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from checks import InputError, io
from tabarena_checks.metadata.origins import Comparable, Plain, Step, site

#: the two TabArena classes recognised by name (never imported, never followed)
KNOWN_CLASSES = ("MethodMetadata", "ModelDescriptor")
MAX_BYTES = 2_000_000


class Unreadable(InputError):
    """A value the safe subset cannot read (or that TabArena itself would refuse), at ``path:line:col``."""

    def __init__(self, message: str, path: str, line: int, col: int):
        self.message, self.path, self.line, self.col = message, path, line, col
        super().__init__(f"{path}:{line}:{col}: {message}")


class Val(Comparable):
    """An evaluated value and how it got here (outermost step first)."""

    __slots__ = ("value", "steps")

    def __init__(self, value: Any, steps: tuple[Step, ...] = ()):
        self.value, self.steps = value, steps

    def via(self, *steps: Step) -> Val:
        return Val(self.value, (*steps, *self.steps))


class Kwargs(Plain):
    """A dict whose keys are strings: ``dict(...)`` or ``{...}``, usable as ``**`` keyword arguments."""

    __slots__ = ("items",)

    def __init__(self, items: dict[str, Val]):
        self.items = items


class Descriptor(Plain):
    """A ``ModelDescriptor(...)``: the fields it was given, in TabArena's order."""

    __slots__ = ("fields", "name")

    def __init__(self, fields: dict[str, Val], name: str = ""):
        self.fields, self.name = fields, name


class KnownClass(Comparable):
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name


class KnownMethod(Comparable):
    """``MethodMetadata.<name>`` or ``<descriptor>.method_metadata`` before it is called."""

    __slots__ = ("owner", "name")

    def __init__(self, owner: Any, name: str):
        self.owner, self.name = owner, name


class Declared(Plain):
    """A MethodMetadata built by a declaration (the record type lives in tabarena_checks.metadata.model)."""

    __slots__ = ("record",)

    def __init__(self, record: Any):
        self.record = record


def plain(val: Val) -> Any:
    """The Python value: a Kwargs becomes a dict, recursively."""
    value = val.value
    if isinstance(value, Kwargs):
        return {k: plain(v) for k, v in value.items.items()}
    return value


def kind_of(value: Any) -> str:
    if isinstance(value, Kwargs):
        return "a dict"
    if isinstance(value, Descriptor):
        return "a ModelDescriptor"
    if isinstance(value, Declared):
        return "a MethodMetadata"
    if isinstance(value, (KnownClass, KnownMethod)):
        return "a class or method"
    return f"a {type(value).__name__} ({value!r:.40})"


def snippet(node: ast.AST) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # unparse of odd trees is best effort; the location still points at it
        text = type(node).__name__
    return text if len(text) <= 60 else text[:57] + "..."


class Binding(Comparable):
    """A module-level name binding: ``kind`` is value, import, loop or other."""

    __slots__ = ("kind", "line", "col", "node", "module", "original", "what")

    def __init__(
        self,
        kind: str,
        line: int,
        col: int,
        node: Any = None,
        module: str | None = None,
        original: str | None = None,
        what: str = "",
    ):
        self.kind, self.line, self.col, self.node = kind, line, col, node
        self.module, self.original, self.what = module, original, what


def module_statements(body: list[ast.stmt], loop: ast.stmt | None = None) -> Iterator[tuple[ast.stmt, ast.stmt | None]]:
    """Statements that run at import time, each with the loop it runs in (None outside loops)."""
    for stmt in body:
        yield stmt, loop
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            yield from module_statements(stmt.body, loop or stmt)
            yield from module_statements(stmt.orelse, loop)
        elif isinstance(stmt, (ast.If, ast.With, ast.AsyncWith)):
            yield from module_statements(stmt.body, loop)
            yield from module_statements(getattr(stmt, "orelse", []), loop)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                yield from module_statements(block, loop)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _target_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from _target_names(element.value if isinstance(element, ast.Starred) else element)


class Module:
    """One parsed source file: its module-level bindings, evaluated lazily and memoised."""

    def __init__(self, reader: Reader, path: str, text: str):
        self.reader = reader
        self.path = path
        try:
            self.tree = ast.parse(text, filename=path)
        except SyntaxError as exc:
            raise Unreadable(
                f"not valid Python: {exc.msg}; fix the syntax error", path, exc.lineno or 1, exc.offset or 1
            ) from None
        except (ValueError, RecursionError, MemoryError) as exc:
            raise Unreadable(f"cannot be parsed as Python ({type(exc).__name__}: {exc})", path, 1, 1) from None
        self.lines = text.splitlines()
        #: every column is a byte offset plus one when the file is ASCII (the common case: no line to re-encode)
        self._ascii = text.isascii()
        #: whether ``lines`` are numbered as ast numbers lines: ASCII text in which only "\n" ends a line
        #: (str.splitlines also splits at "\r", form feeds and a few other separators)
        self.plain_lines = self._ascii and not any(c in text for c in "\r\x0b\x0c\x1c\x1d\x1e")
        self.bindings: dict[str, list[Binding]] = {}
        self.memo: dict[str, Val | Unreadable] = {}
        #: absolute names of the modules this one imports from at run time (not under TYPE_CHECKING)
        self.imported_modules: set[str] = set()
        self._bind(self.tree.body, loop=None, typing_only=False)

    # ------------------------------------------------------------------ positions

    def col(self, node: ast.AST) -> int:
        """1-based character column of ``node`` (ast counts UTF-8 bytes)."""
        offset = getattr(node, "col_offset", 0) or 0
        if self._ascii:
            return offset + 1
        line = getattr(node, "lineno", 1) or 1
        if 0 < line <= len(self.lines) and not self.lines[line - 1].isascii():
            return len(self.lines[line - 1].encode("utf-8")[:offset].decode("utf-8", "replace")) + 1
        return offset + 1

    def step(self, kind: str, name: str, node: ast.AST) -> Step:
        return Step(kind, name, self.path, getattr(node, "lineno", 1) or 1, self.col(node))

    def fail(self, message: str, node: ast.AST) -> Unreadable:
        return Unreadable(message, self.path, getattr(node, "lineno", 1) or 1, self.col(node))

    # ------------------------------------------------------------------ bindings

    def _add(self, name: str, binding: Binding) -> None:
        known = self.bindings.setdefault(name, [])
        if binding.kind == "import" and any(
            b.kind == "import" and (b.module, b.original) == (binding.module, binding.original) for b in known
        ):
            return  # the same import again (say, once more under TYPE_CHECKING) binds the same value
        known.append(binding)

    def _bind(self, body: list[ast.stmt], loop: ast.stmt | None, typing_only: bool) -> None:
        """Record every name ``body`` binds; ``loop`` is the loop around it, if any."""
        for stmt in body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self._add(
                    stmt.name,
                    Binding(
                        "other",
                        stmt.lineno,
                        self.col(stmt),
                        what=f"a {'class' if isinstance(stmt, ast.ClassDef) else 'function'}",
                    ),
                )
                continue
            self._bind_statement(stmt, loop, typing_only)
            self._bind_blocks(stmt, loop, typing_only)

    def _bind_statement(self, stmt: ast.stmt, loop: ast.stmt | None, typing_only: bool) -> None:
        """The names the statement itself binds (an assignment, an import, a loop variable)."""
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            self._bind_assignment(stmt, loop)
        elif isinstance(stmt, ast.AugAssign):
            self._bind_names(stmt.target, "other", stmt.lineno, "changed in place (augmented assignment)")
        elif isinstance(stmt, ast.ImportFrom):
            self._bind_import_from(stmt, loop, typing_only)
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                self._add(
                    alias.asname or alias.name.split(".")[0],
                    Binding("other", stmt.lineno, self.col(stmt), what=f"the module {alias.name}"),
                )
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            self._bind_names(stmt.target, "loop", stmt.lineno, f"the variable of the loop at line {stmt.lineno}")

    def _bind_names(self, target: ast.expr, kind: str, lineno: int, what: str) -> None:
        for name in _target_names(target):
            self._add(name.id, Binding(kind, lineno, self.col(name), what=what))

    def _bind_assignment(self, stmt: ast.Assign | ast.AnnAssign, loop: ast.stmt | None) -> None:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            for name in _target_names(target):
                if loop is not None:
                    kind, what = "loop", f"assigned in the loop at line {loop.lineno}"
                elif not isinstance(target, ast.Name):
                    kind, what = "other", "bound by unpacking"
                else:
                    kind, what = "value", ""
                self._add(name.id, Binding(kind, stmt.lineno, self.col(name), stmt.value, what=what))

    def _bind_import_from(self, stmt: ast.ImportFrom, loop: ast.stmt | None, typing_only: bool) -> None:
        module = self.reader.absolute(self.path, stmt.module, stmt.level)
        if module and not typing_only and module != "__future__":
            self.imported_modules.add(module)
        for alias in stmt.names:
            if alias.name == "*":
                continue
            name = alias.asname or alias.name
            kind = "loop" if loop is not None else "import"
            self._add(
                name,
                Binding(
                    kind,
                    stmt.lineno,
                    self.col(stmt),
                    alias,
                    module,
                    alias.name,
                    what=f"imported in the loop at line {loop.lineno}" if loop else "",
                ),
            )

    def _bind_blocks(self, stmt: ast.stmt, loop: ast.stmt | None, typing_only: bool) -> None:
        """The names bound in a compound statement's blocks (a loop's body is in that loop)."""
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
            self._bind(stmt.body, loop or stmt, typing_only)
            self._bind(stmt.orelse, loop, typing_only)
        elif isinstance(stmt, ast.If):
            self._bind(stmt.body, loop, typing_only or _is_type_checking(stmt.test))
            self._bind(stmt.orelse, loop, typing_only)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            self._bind(stmt.body, loop, typing_only)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                self._bind(block, loop, typing_only)

    # ------------------------------------------------------------------ names

    def value(self, name: str, use: ast.AST | None = None) -> Val:
        """The value bound to module-level ``name`` (memoised; errors too)."""
        cached = self.memo.get(name)
        if isinstance(cached, Unreadable):
            raise cached
        if cached is not None:
            return cached
        key = (self.path, name)
        if key in self.reader.stack:
            chain = [*self.reader.stack[self.reader.stack.index(key) :], key]
            where = " -> ".join(f"{Path(p).name}:{n}" for p, n in chain)
            binding = (self.bindings.get(name) or [Binding("other", 1, 1)])[-1]
            kind = "an import cycle" if len({p for p, _ in chain}) > 1 else "a name that refers to itself"
            raise Unreadable(
                f"{name!r} depends on itself through {kind} ({where}); break the cycle "
                f"(declare the value in one module and import it from there)",
                self.path,
                binding.line,
                binding.col,
            )
        self.reader.stack.append(key)
        try:
            result = self._resolve(name, use)
        except Unreadable as exc:
            self.memo[name] = exc
            raise
        finally:
            self.reader.stack.pop()
        self.memo[name] = result
        return result

    def _resolve(self, name: str, use: ast.AST | None) -> Val:
        bindings = self.bindings.get(name, [])
        if not bindings:
            if name in KNOWN_CLASSES:
                return Val(KnownClass(name))
            if name == "dict":
                return Val(KnownClass("dict"))
            node = use or self.tree
            raise self.fail(
                f"{name!r} is not defined at module level in {Path(self.path).name}; "
                f"define it as a module-level constant or import it from a module of this checkout",
                node,
            )
        if len(bindings) > 1:
            lines = ", ".join(str(b.line) for b in bindings)
            second = bindings[1]
            raise Unreadable(
                f"{name!r} is bound {len(bindings)} times (lines {lines}): which value a declaration "
                f"gets depends on the order the file runs in; give each value its own name",
                self.path,
                second.line,
                second.col,
            )
        binding = bindings[0]
        if binding.kind == "import":
            return self._imported(name, binding)
        if binding.kind != "value":
            raise Unreadable(
                f"{name!r} is {binding.what}, which cannot be read statically; bind the value with a "
                f"plain module-level assignment (NAME = ...)",
                self.path,
                binding.line,
                binding.col,
            )
        return self.reader.evaluate(self, binding.node, variable=name)

    def _imported(self, name: str, binding: Binding) -> Val:
        step = Step("import", f"{binding.module}.{binding.original}", self.path, binding.line, binding.col)
        if binding.original in KNOWN_CLASSES:
            return Val(KnownClass(binding.original), (step,))
        other = self.reader.module_named(binding.module, self, binding)
        if other is None:
            where = self.reader.candidates(self.path, binding.module)
            raise Unreadable(
                f"{name!r} is imported from {binding.module}, which is not a module of this checkout "
                f"(looked for {where}); only names from modules of the same checkout are followed",
                self.path,
                binding.line,
                binding.col,
            )
        for path, _ in self.reader.stack[:-1]:
            if os.path.realpath(path) == os.path.realpath(other.path):
                raise Unreadable(
                    f"import cycle: {Path(self.path).name} imports {binding.module}, which is being "
                    f"read to resolve a name this file needs; move the shared value into a module "
                    f"that neither imports",
                    self.path,
                    binding.line,
                    binding.col,
                )
        cycle = self.reader.cycle_back(other, self.path)
        if cycle:
            raise Unreadable(
                f"import cycle between {cycle}: Python cannot import either module first; move the "
                f"shared value into a module that neither imports",
                self.path,
                binding.line,
                binding.col,
            )
        return other.value(binding.original, binding.node).via(step)


def _given_twice(module: Module, call: ast.Call, what: str, name: str, first: Val, again: Val) -> Unreadable:
    """The error for a keyword ``name`` that ``call`` gets twice (Python's TypeError), at its second site."""
    first_site, again_site = site(first.steps), site(again.steps)
    return Unreadable(
        f"{what} gets {name!r} twice ({first_site.describe() if first_site else '?'} and "
        f"{again_site.describe() if again_site else '?'}): Python raises TypeError (multiple values for "
        f"keyword argument {name!r}); keep one",
        again_site.path if again_site else module.path,
        again_site.line if again_site else call.lineno,
        again_site.col if again_site else module.col(call),
    )


#: what one value may expand to (a character of a string, or any other item, counts one), shared
#: sub-values counted at each use: what repr, YAML and the records write of it. Twice the largest file.
MAX_EXPANDED = 2 * MAX_BYTES


class Reader:
    """Parses and evaluates modules of one checkout; shared by every file of one invocation."""

    def __init__(self, build_declaration=None):
        self.modules: dict[str, Module | Unreadable] = {}
        self.stack: list[tuple[str, str]] = []
        #: id -> (value, its expanded size): the value is kept so its id is never reused while cached
        self._sizes: dict[int, tuple[Any, int]] = {}
        self._roots: dict[Path, Path] = {}
        self._files: dict[tuple[Path, str], Path | None] = {}
        self._build = build_declaration

    # ------------------------------------------------------------------ files

    def module(self, path: str | Path, imported: bool = False) -> Module:
        """The parsed module at ``path`` (parsed once per reader, whichever spelling of the path is used).

        A file reached through an import is shown relative to the working directory when it is under it.
        """
        key = os.path.realpath(path)
        cached = self.modules.get(key)
        if isinstance(cached, Unreadable):
            raise cached
        if cached is not None:
            return cached
        shown = str(path)
        if imported:
            relative = os.path.relpath(shown)
            shown = shown if relative.startswith("..") else relative
        try:
            module = Module(self, shown, read_text(path))
        except Unreadable as exc:
            self.modules[key] = exc
            raise
        self.modules[key] = module
        return module

    def root(self, path: str) -> Path:
        """The directory absolute imports start from: above the topmost package holding ``path``."""
        directory = Path(path).resolve().parent
        if directory not in self._roots:
            top = directory
            while (top / "__init__.py").is_file() and top.parent != top:
                top = top.parent
            self._roots[directory] = top
        return self._roots[directory]

    def absolute(self, path: str, module: str | None, level: int) -> str | None:
        if not level:
            return module
        directory = Path(path).resolve().parent
        root = self.root(path)
        for _ in range(level - 1):
            directory = directory.parent
        try:
            parts = list(directory.relative_to(root).parts)
        except ValueError:
            return None
        return ".".join([*parts, *(module.split(".") if module else [])]) or None

    def candidates(self, path: str, module: str | None) -> str:
        base = self.root(path).joinpath(*(module or "").split("."))
        return f"{base}.py or {base}/__init__.py"

    def module_file(self, path: str, module: str | None) -> Path | None:
        """The file of ``module`` in the checkout ``path`` belongs to, or None (not ours: never followed)."""
        if not module:
            return None
        key = (self.root(path), module)
        if key not in self._files:
            base = key[0].joinpath(*module.split("."))
            self._files[key] = next(
                (c for c in (base.with_name(base.name + ".py"), base / "__init__.py") if c.is_file()), None
            )
        return self._files[key]

    def module_named(self, module: str | None, importer: Module, binding: Binding) -> Module | None:
        """The module an import names, read only when its file (links resolved) lies inside the checkout."""
        file = self.module_file(importer.path, module)
        if file is None:
            return None
        if not Path(os.path.realpath(file)).is_relative_to(self.root(importer.path)):
            raise Unreadable(
                f"{binding.original!r} is imported from {module}, whose file {file} is a link leading "
                f"outside this checkout ({self.root(importer.path)}); only files of the checkout are "
                f"read, and nothing outside it is shown: put the value in the checkout itself",
                importer.path,
                binding.line,
                binding.col,
            )
        return self.module(file, imported=True)

    def cycle_back(self, other: Module, importer: str) -> str:
        """A description when ``other`` (directly or through loaded modules) imports ``importer`` back."""
        seen: set[str] = set()
        todo = [(other, [other.path])]
        target = os.path.realpath(importer)
        while todo:
            module, chain = todo.pop()
            for name in module.imported_modules:
                file = self.module_file(module.path, name)
                if file is None:
                    continue
                resolved = os.path.realpath(file)
                if resolved == target:
                    return " -> ".join(Path(p).name for p in [importer, *chain, importer])
                loaded = self.modules.get(resolved)
                if isinstance(loaded, Module) and resolved not in seen:
                    seen.add(resolved)
                    todo.append((loaded, [*chain, str(file)]))
        return ""

    # ------------------------------------------------------------------ size

    def expanded(self, value: Any) -> int:
        """How large ``value`` is once written out, each shared sub-value counted at every use (memoised by
        identity, so a reference bomb costs one step a level, not its expansion)."""
        if isinstance(value, (str, bytes)):
            return len(value) + 1
        if isinstance(value, Val):
            return self.expanded(value.value)
        if isinstance(value, Kwargs):
            children: Any = [*value.items, *value.items.values()]
        elif isinstance(value, dict):
            children = [*value, *value.values()]
        elif isinstance(value, (list, tuple, set, frozenset)):
            children = value
        else:
            return 1
        known = self._sizes.get(id(value))
        if known is not None:
            return known[1]
        size = 1 + sum(self.expanded(child) for child in children)
        self._sizes[id(value)] = (value, size)
        return size

    def bounded(self, module: Module, node: ast.AST, val: Val) -> Val:
        """``val``, unless written out it would exceed :data:`MAX_EXPANDED` (a finding at ``node`` then)."""
        size = self.expanded(val)
        if size > MAX_EXPANDED:
            raise module.fail(
                f"{snippet(node)} expands to more than {MAX_EXPANDED:,} items and characters when "
                f"written out ({size:,}; a value used twice counts twice): write a smaller value, "
                f"without nesting one value in the next several times",
                node,
            )
        return val

    # ------------------------------------------------------------------ expressions

    def evaluate(self, module: Module, node: ast.expr, variable: str | None = None) -> Val:
        if isinstance(node, ast.Constant):
            return Val(node.value)
        if isinstance(node, ast.Name):
            return self._name(module, node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self._sequence_display(module, node)
        if isinstance(node, ast.Dict):
            return self._dict_display(module, node)
        if isinstance(node, ast.Call):
            return self._call(module, node, variable)
        if isinstance(node, ast.Attribute):
            return self._attribute(module, node)
        if isinstance(node, (ast.UnaryOp, ast.BinOp)):
            try:
                return Val(ast.literal_eval(node))
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                pass
        raise module.fail(
            f"{snippet(node)} is an expression outside what can be read statically (literals, "
            f"module-level names, dict(...), ** spreads, MethodMetadata/ModelDescriptor calls); "
            f"write the value itself or a module-level constant",
            node,
        )

    @staticmethod
    def _name(module: Module, node: ast.Name) -> Val:
        """A name's value, traced to the module-level constant it reads (spreads, descriptors and declarations
        carry their own step)."""
        val = module.value(node.id, node)
        if isinstance(val.value, (KnownClass, KnownMethod, Kwargs, Descriptor, Declared)):
            return val  # the spread, descriptor or declaration step names it already
        binding = (module.bindings.get(node.id) or [None])[0]
        if binding is not None and binding.kind == "value":
            return val.via(Step("constant", node.id, module.path, binding.line, binding.col))
        return val

    def _sequence_display(self, module: Module, node: ast.List | ast.Tuple | ast.Set) -> Val:
        """A list, tuple or set literal of readable items (a ``*`` spread's length is not known statically)."""
        items = []
        for element in node.elts:
            if isinstance(element, ast.Starred):
                raise module.fail(
                    f"*{snippet(element.value)} in a literal cannot be read statically; write the items out", element
                )
            items.append(plain(self.evaluate(module, element)))
        kind = {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)]
        try:
            return self.bounded(module, node, Val(kind(items)))
        except TypeError as exc:
            raise module.fail(f"{snippet(node)}: {exc}", node) from None

    def _dict_display(self, module: Module, node: ast.Dict) -> Val:
        items: dict[Any, Val] = {}
        names = True
        for key, value in zip(node.keys, node.values):
            if key is None:
                spread = self.evaluate(module, value)
                if not isinstance(spread.value, Kwargs):
                    raise module.fail(
                        f"**{snippet(value)} is {kind_of(spread.value)}, not a dict; spread a dict of field values",
                        value,
                    )
                step = module.step("spread", f"**{snippet(value)}", value)
                for name, item in spread.value.items.items():
                    items[name] = item.via(step)
                continue
            k = plain(self.evaluate(module, key))
            try:
                hash(k)
            except TypeError:
                raise module.fail(f"dict key {snippet(key)} is not hashable", key) from None
            names = names and isinstance(k, str)
            items[k] = self.evaluate(module, value).via(module.step("key", repr(k), key))
        if names:
            return self.bounded(module, node, Val(Kwargs(items)))
        return self.bounded(module, node, Val({k: plain(v) for k, v in items.items()}))

    def keywords(self, module: Module, call: ast.Call, what: str) -> dict[str, Val]:
        """``name=value`` and ``**spread`` arguments of ``call`` in order; a name given twice is refused."""
        out: dict[str, Val] = {}
        for kw in call.keywords:
            for name, item in self._keyword(module, kw):
                if name in out:
                    raise _given_twice(module, call, what, name, out[name], item)
                out[name] = item
        return out

    def _keyword(self, module: Module, kw: ast.keyword) -> list[tuple[str, Val]]:
        """The ``(name, value)`` pairs one keyword argument gives: one for ``name=value``, each item of a ``**`` dict.

        A spread of anything but a known dict of keyword arguments cannot be read: its names are unknown.
        """
        if kw.arg is not None:
            return [(kw.arg, self.evaluate(module, kw.value).via(module.step("keyword", f"{kw.arg}=", kw)))]
        spread = self.evaluate(module, kw.value)
        if not isinstance(spread.value, Kwargs):
            raise module.fail(
                f"**{snippet(kw.value)} is {kind_of(spread.value)}, not a dict of keyword "
                f"arguments; spread a dict(...) of field values",
                kw,
            )
        step = module.step("spread", f"**{snippet(kw.value)}", kw)
        return [(name, item.via(step, *spread.steps)) for name, item in spread.value.items.items()]

    def _call(self, module: Module, node: ast.Call, variable: str | None) -> Val:
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name is not None and name not in module.bindings and name not in (*KNOWN_CLASSES, "dict"):
            raise self._other_call(module, node)
        func = self.evaluate(module, node.func)
        target = func.value
        if isinstance(target, KnownClass) and target.name == "dict":
            return self._dict_call(module, node)
        if isinstance(target, (KnownClass, KnownMethod)) and self._build is not None:
            return self._build(self, module, node, func, variable)
        raise self._other_call(module, node)

    def _dict_call(self, module: Module, node: ast.Call) -> Val:
        """``dict(spread, **keywords)``: at most one positional argument, itself a readable dict."""
        if len(node.args) > 1 or (node.args and isinstance(node.args[0], ast.Starred)):
            raise module.fail("dict() with more than one positional argument cannot be read statically", node)
        base: dict[str, Val] = {}
        if node.args:
            first = self.evaluate(module, node.args[0])
            if not isinstance(first.value, Kwargs):
                raise module.fail(f"dict({snippet(node.args[0])}) copies {kind_of(first.value)}, not a dict", node)
            base = dict(first.value.items)
        extra = self.keywords(module, node, "dict()")
        return self.bounded(module, node, Val(Kwargs({**base, **extra})))

    @staticmethod
    def _other_call(module: Module, node: ast.Call) -> Unreadable:
        return module.fail(
            f"calls {snippet(node.func)}(...), which cannot be read statically (its value exists only "
            f"when the module runs); only dict(...), ModelDescriptor(...), MethodMetadata(...) and its "
            f"constructors and descriptor.method_metadata(...) are understood: bind the "
            f"MethodMetadata to a module-level name where it is declared and import that name",
            node,
        )

    def _attribute(self, module: Module, node: ast.Attribute) -> Val:
        owner = self.evaluate(module, node.value)
        target = owner.value
        if isinstance(target, KnownClass) and target.name != "dict":
            return Val(KnownMethod(target, node.attr), owner.steps)
        if isinstance(target, Descriptor):
            if node.attr == "method_metadata":
                return Val(KnownMethod(target, node.attr), owner.steps)
            if node.attr in target.fields:
                return target.fields[node.attr]
        if isinstance(target, Declared) and hasattr(target.record, node.attr) and not node.attr.startswith("_"):
            return Val(getattr(target.record, node.attr), owner.steps)
        raise module.fail(
            f"{snippet(node)}: {kind_of(target)} has no attribute {node.attr!r} that can be read statically", node
        )


def read_text(path: str | Path) -> str:
    """A source file as text: unreadable, oversized or non-UTF-8 files are refused with the fix."""
    try:
        return io.read_text(path, limit=MAX_BYTES, what="an info.py")
    except io.ReadError as exc:
        raise Unreadable(exc.reason, str(path), exc.line or 1, exc.col or 1) from None
