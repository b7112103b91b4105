"""Read every ``MethodMetadata`` declaration of an ``info.py`` without importing it.

Importing an ``info.py`` runs its code and needs TabArena installed, and TabArena's own
checks stop at the first bad field. Evaluating the file statically
(:mod:`tabarena_checks.metadata.info_eval`) gives each declared value and where it was written, so the
rules can report every problem at once, in a pre-commit hook, on a machine without TabArena.

The constructors follow TabArena 0.1.0's signatures: ``MethodMetadata(...)`` (the dataclass,
positional in field order), the keyword-only ``.config``, ``.baseline``, ``.system``,
``.portfolio`` and ``.tabarena_legacy_s3``, and ``ModelDescriptor(...).method_metadata(...)``
(the descriptor's fields are defaults, the caller's keywords win, always a config). What
TabArena refuses with a TypeError or ValueError (an unknown keyword, a keyword given twice, a
positional argument to a keyword-only constructor, a descriptor asked for a baseline) is
refused here with the place and the fix.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import attrs

from checks import InputError
from tabarena_checks.metadata.info_eval import (
    Declared,
    Descriptor,
    KnownClass,
    KnownMethod,
    Module,
    Reader,
    Unreadable,
    Val,
    kind_of,
    module_statements,
    plain,
    snippet,
)
from tabarena_checks.metadata.model import FIELDS, MethodMetadata, canonical
from tabarena_checks.metadata.origins import CALL, Comparable, Plain, Step, site

CLASS_NAME = "MethodMetadata"
DESCRIPTOR = "ModelDescriptor"
#: accepted by TabArena but runtime-only: never part of the record
RUNTIME_ONLY = ("artifact_dir", "cache_root")
#: TabArena's dataclass field order (positional arguments of ``MethodMetadata(...)``)
DATACLASS_ORDER = ("method", "suite", "artifact_dir", "cache_root", *FIELDS[2:])
DESCRIPTOR_FIELDS = ("display_name", "compute", "is_bag", "reference_url", "date_introduced")
LEGACY_S3 = "tabarena_legacy_s3"


class Signature(Plain):
    """A constructor: the fields it fixes, its own parameters (with defaults) and which are required."""

    __slots__ = ("fixed", "params", "required")

    def __init__(self, fixed: dict[str, Any], params: dict[str, Any], required: tuple[str, ...] = ("method",)):
        self.fixed, self.params, self.required = fixed, params, required


SIGNATURES = {
    "config": Signature(
        {"method_type": "config"},
        {
            "method": None,
            "ag_key": None,
            "model_key": None,
            "config_default": None,
            "name_suffix": None,
            "can_hpo": None,
            "is_bag": False,
        },
    ),
    "baseline": Signature({"method_type": "baseline"}, {"method": None, "name": None}),
    "system": Signature(
        {"method_type": "baseline", "method_class": "system"}, {"method": None, "name": None, "tags": ()}
    ),
    "portfolio": Signature({"method_type": "portfolio"}, {"method": None, "name": None, "has_raw": False}),
    LEGACY_S3: Signature(
        {"cache_type": "s3", "cache_kwargs": None},
        {
            "method": None,
            "suite": None,
            "has_raw": True,
            "has_processed": True,
            "has_results": True,
            "bucket": "tabarena",
            "prefix": "cache",
        },
        ("method", "suite"),
    ),
}
#: fields a constructor sets without the caller (not "declared" by the info.py)
IMPLIED_ONLY = {"portfolio": ("has_raw",)}
CONSTRUCTOR_NAMES = tuple(SIGNATURES)


class Declaration(Comparable):
    """One declaration in a file: its variable and place, and the record or why it cannot be read.

    A plain slotted class like the evaluator's values (:mod:`~tabarena_checks.metadata.info_eval`
    says why): this module loads on every run of the info.py hook.
    """

    __slots__ = ("variable", "path", "line", "col", "record", "problem")

    def __init__(
        self,
        variable: str | None,
        path: str,
        line: int,
        col: int,
        record: MethodMetadata | None = None,
        problem: Unreadable | None = None,
    ):
        self.variable, self.path, self.line, self.col = variable, path, line, col
        self.record, self.problem = record, problem

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"


# --------------------------------------------------------------------------- building a record


def _label(func: Val) -> str:
    target = func.value
    if isinstance(target, KnownClass):
        return f"{target.name}()"
    if isinstance(target.owner, Descriptor):
        return f"{target.owner.name or 'descriptor'}.method_metadata()"
    return f"{target.owner.name}.{target.name}()"


def build(reader: Reader, module: Module, call: ast.Call, func: Val, variable: str | None) -> Val:
    """Evaluate a call to a known class or constructor (the hook :class:`Reader` calls back into)."""
    target = func.value
    if isinstance(target, KnownClass) and target.name == DESCRIPTOR:
        return Val(_descriptor(reader, module, call, variable))
    label = _label(func)
    if isinstance(target, KnownMethod) and isinstance(target.owner, Descriptor):
        return Val(Declared(_from_descriptor(reader, module, call, target.owner, label, variable, func.steps)))
    if isinstance(target, KnownClass) and target.name == CLASS_NAME:
        return Val(Declared(_direct(reader, module, call, label, variable)))
    if isinstance(target, KnownMethod) and target.owner.name == CLASS_NAME:
        return Val(Declared(_constructor(reader, module, call, target.name, label, variable)))
    raise module.fail(f"{label} is not a MethodMetadata constructor that can be read statically", call)


def _constructor(
    reader: Reader, module: Module, call: ast.Call, name: str, label: str, variable: str | None
) -> MethodMetadata:
    """A call to the class method ``name`` of MethodMetadata (``.config``, ``.baseline``, ...).

    Only the constructors whose signature is known (:data:`SIGNATURES`) can be read; any other is
    refused with the spellings that can.
    """
    if name not in SIGNATURES:
        raise module.fail(
            f"{label} cannot be read statically; declare it with MethodMetadata(...), .config, "
            f".baseline, .system, .portfolio, .tabarena_legacy_s3 or descriptor.method_metadata",
            call,
        )
    kwargs = _keyword_only(reader, module, call, label)
    return _record(module, call, name, kwargs, label, variable)


def _keyword_only(reader: Reader, module: Module, call: ast.Call, label: str) -> dict[str, Val]:
    if call.args:
        raise module.fail(
            f"{label} takes keyword arguments only (TabArena raises TypeError on "
            f"{snippet(call.args[0])} given by position); write it as method=... or the field's name",
            call.args[0],
        )
    return reader.keywords(module, call, label)


def _descriptor(reader: Reader, module: Module, call: ast.Call, variable: str | None) -> Descriptor:
    label = f"{DESCRIPTOR}()"
    fields = _arguments(
        reader, module, call, label, DESCRIPTOR_FIELDS, f" ({', '.join(DESCRIPTOR_FIELDS)}); pass the others by keyword"
    )
    for name, val in fields.items():
        if name not in DESCRIPTOR_FIELDS:
            raise _at(
                val,
                module,
                call,
                f"{label} does not accept {name!r} (TabArena raises TypeError); its "
                f"fields are {', '.join(DESCRIPTOR_FIELDS)}: set {name} in each "
                f"descriptor.method_metadata(...) call instead",
            )
    if "display_name" not in fields:
        raise module.fail(f"{label} needs display_name= (TabArena raises TypeError without it)", call)
    return Descriptor(fields, variable or "")


def _from_descriptor(
    reader: Reader,
    module: Module,
    call: ast.Call,
    descriptor: Descriptor,
    label: str,
    variable: str | None,
    via: tuple[Step, ...] = (),
) -> MethodMetadata:
    kwargs = _keyword_only(reader, module, call, label)
    method_type = kwargs.pop("method_type", None)
    if method_type is not None and plain(method_type) != "config":
        raise _at(
            method_type,
            module,
            call,
            f"{label}: a ModelDescriptor describes config methods (TabArena raises ValueError for "
            f"method_type={plain(method_type)!r}); declare a {plain(method_type)} with "
            f"MethodMetadata.{'system' if plain(method_type) == 'baseline' else plain(method_type)}(...)",
        )
    step = module.step("descriptor", descriptor.name or snippet(call.func.value), call.func)
    defaults = {name: val.via(step, *via) for name, val in descriptor.fields.items()}
    return _record(module, call, "config", {**defaults, **kwargs}, label, variable, via="descriptor")


def _direct(reader: Reader, module: Module, call: ast.Call, label: str, variable: str | None) -> MethodMetadata:
    given = _arguments(reader, module, call, label, DATACLASS_ORDER, "; pass fields by keyword")
    return _record(module, call, "direct", given, label, variable)


def _arguments(
    reader: Reader, module: Module, call: ast.Call, label: str, order: tuple[str, ...], hint: str
) -> dict[str, Val]:
    """Positional arguments named after ``order``, then the keywords; a field given both ways is refused."""
    given: dict[str, Val] = {}
    for index, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred) or index >= len(order):
            raise module.fail(f"{label} takes at most {len(order)} positional arguments{hint}", arg)
        given[order[index]] = reader.evaluate(module, arg).via(module.step("positional", order[index], arg))
    for name, val in reader.keywords(module, call, label).items():
        if name in given:
            raise _at(val, module, call, f"{label} gets {name!r} by position and by keyword; keep one")
        given[name] = val
    return given


def _at(val: Val, module: Module, node: ast.AST, message: str) -> Unreadable:
    """The error at the place ``val`` was written (a keyword, a spread, a constant), else at ``node``."""
    step = site(val.steps)
    if step is None:
        return module.fail(message, node)
    return Unreadable(message, step.path, step.line, step.col)


def _record(
    module: Module,
    call: ast.Call,
    constructor: str,
    given: dict[str, Val],
    label: str,
    variable: str | None,
    via: str | None = None,
) -> MethodMetadata:
    signature = SIGNATURES.get(constructor)
    _check_arguments(module, call, constructor, signature, given, label)
    func_step = module.step("constructor", label, call.func)
    module.reader.bounded(module, call, Val(list(given.values())))  # the record as a whole, written out
    values = {name: plain(val) for name, val in given.items()}
    origins = {name: val.steps for name, val in given.items()}
    origins[CALL] = (module.step("constructor", label, call),)
    declared = {name for name in given if name in FIELDS}
    if signature:
        _apply_signature(signature, values, origins, func_step)
    if constructor == LEGACY_S3:
        declared |= _legacy_s3_cache(values, origins, func_step)
    _implied_origins(constructor, given, origins, func_step)
    _drop_runtime_only(values, origins)
    record = MethodMetadata(
        **{k: v for k, v in values.items() if k in FIELDS},
        constructor=via or constructor,
        declared=frozenset(declared),
        source=f"{module.path}:{call.lineno}",
        variable=variable,
        origins=origins,
    )
    return canonical(record)


def _apply_signature(signature, values: dict, origins: dict, func_step: Step) -> None:
    """The constructor's defaults where the call gave nothing, and what it fixes itself (traced to the call's
    function name, as TabArena's constructor sets them whatever the call says)."""
    for name, default in signature.params.items():
        values.setdefault(name, default)
    values.update({k: v for k, v in signature.fixed.items() if v is not None})
    for name in signature.fixed:
        origins[name] = (func_step,)


def _legacy_s3_cache(values: dict, origins: dict, func_step: Step) -> set[str]:
    """The legacy S3 constructor's bucket and prefix folded into ``cache_kwargs`` as it does; the fields it
    thereby declares."""
    values["cache_kwargs"] = {"bucket": values.pop("bucket"), "prefix": values.pop("prefix"), "upload_as_public": True}
    origins["cache_kwargs"] = (func_step, *(s for k in ("bucket", "prefix") for s in origins.pop(k, ())))
    return {"cache_type", "cache_kwargs"}


def _implied_origins(constructor: str, given: dict[str, Val], origins: dict, func_step: Step) -> None:
    """Fields the constructor implies without a keyword are traced to its name when the call left them out."""
    for name in IMPLIED_ONLY.get(constructor, ()):
        if name not in given:
            origins[name] = (func_step,)


def _drop_runtime_only(values: dict, origins: dict) -> None:
    """Runtime-only keywords are not part of the record; tags are stored as a tuple (the record is frozen)."""
    for name in RUNTIME_ONLY:
        values.pop(name, None)
        origins.pop(name, None)
    if isinstance(values.get("tags"), list):
        values["tags"] = tuple(values["tags"])


def _check_arguments(
    module: Module, call: ast.Call, constructor: str, signature, given: dict[str, Val], label: str
) -> None:
    """The keywords the constructor accepts, none it sets itself, every one it requires: as TabArena's TypeError."""
    accepted = set(FIELDS) | set(RUNTIME_ONLY) | (set(signature.params) if signature else set())
    for name, val in given.items():
        if name not in accepted:
            raise _at(
                val,
                module,
                call,
                f"{label} does not accept {name!r} (TabArena raises TypeError: unexpected keyword argument); "
                f"remove it or use one of the fields: {', '.join(FIELDS)}",
            )
        if signature and name in signature.fixed:
            raise _at(
                val,
                module,
                call,
                f"{label} sets {name!r} itself (TabArena raises TypeError: multiple values for {name!r}); "
                f"remove {name}=" + ("" if constructor == LEGACY_S3 else " or use another constructor"),
            )
    required = signature.required if signature else ("method",)
    for name in required:
        if name not in given:
            raise module.fail(f"{label} needs {name}= (TabArena raises TypeError without it)", call)


# --------------------------------------------------------------------------- finding declarations

_DECLARING = (*CONSTRUCTOR_NAMES, "method_metadata")


def _declaring_call(node: ast.AST, module: Module) -> bool:
    """Whether ``node`` looks like a call building a MethodMetadata (decided by its spelling alone)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr == "method_metadata":
        return True
    if isinstance(func, ast.Attribute) and _names_class(func.value, module):
        return True
    return _names_class(func, module)


def _names_class(node: ast.AST, module: Module) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr == CLASS_NAME
    if isinstance(node, ast.Name):
        if node.id == CLASS_NAME:
            return True
        return any(b.kind == "import" and b.original == CLASS_NAME for b in module.bindings.get(node.id, ()))
    return False


def _bound_calls(module: Module):
    """``(variable, call, statement)`` for each module-level assignment of a declaring call, outside loops."""
    for stmt, loop in module_statements(module.tree.body):
        if loop is not None or not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
            continue
        if not _declaring_call(stmt.value, module):
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, ast.Name):
                yield target, stmt.value, stmt


def _unbound_calls(module: Module, bound: set[int]):
    """Declaring calls that are not the value of a module-level assignment: in loops, comprehensions, lists."""
    spellings = _spellings(module)
    for stmt, loop in module_statements(module.tree.body):
        if isinstance(stmt, _NOT_RUN_HERE) or not _may_declare(stmt, module, spellings):
            continue
        for node, scope in _declaring_calls_in(stmt, module, bound):
            yield node, loop, scope


#: statements whose inside does not run where they stand (definitions) or cannot declare (imports)
_NOT_RUN_HERE = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _declaring_calls_in(stmt: ast.stmt, module: Module, bound: set[int]):
    """``(call, comprehension)`` for each declaring call in the expressions of ``stmt`` not in ``bound``;
    the comprehension is the outermost one holding the call (None outside any).

    A walk with its own stack: the tree of one statement can be deeper than Python's recursion allows.
    """
    stack = [(child, None) for child in _own_children(stmt)]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, _LEAVES) or id(node) in bound:
            continue  # a bound declaration is judged on its own; nothing inside a leaf or a function runs
        inner = scope
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            inner = scope or node
        if _declaring_call(node, module):
            yield node, inner
        stack.extend((child, inner) for child in ast.iter_child_nodes(node))


def _spellings(module: Module) -> tuple[str, ...]:
    """What the text of a declaring call holds (:func:`_declaring_call`): ``method_metadata``, the class's
    name, or a name the module imports the class as."""
    aliases = (
        name
        for name, bindings in module.bindings.items()
        if any(b.kind == "import" and b.original == CLASS_NAME for b in bindings)
    )
    return ("method_metadata", CLASS_NAME, *aliases)


def _may_declare(stmt: ast.stmt, module: Module, spellings: tuple[str, ...]) -> bool:
    """Whether the lines of ``stmt`` hold one of ``spellings`` (true when the lines cannot be told apart).

    Walking every expression of a file is the costliest step of reading it; most statements of an
    info.py (descriptors, shared keyword arguments, the model's registration) hold no spelling of a
    declaring call, so their trees need no walk. A non-ASCII file is walked whole: Python reads
    identifiers in their NFKC form, which the text need not show.
    """
    if not module.plain_lines:
        return True
    text = "\n".join(module.lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno])
    return any(spelling in text for spelling in spellings)


_LEAVES = (ast.Constant, ast.Name, ast.expr_context, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _own_children(stmt: ast.stmt):
    """The expressions of ``stmt`` itself (nested statements are visited on their own)."""
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers"):
            continue
        if isinstance(value, ast.AST):
            yield value
        elif isinstance(value, list):
            yield from (v for v in value if isinstance(v, ast.AST))


def _loop_problems(
    reader: Reader, module: Module, call: ast.Call, loop: ast.stmt | None, comprehension: ast.AST | None
) -> list[Declaration]:
    how = (
        "declare each one as a module-level assignment (NAME = MethodMetadata...(...)) and point at it as "
        f"{module.path}:NAME"
    )
    line, col = call.lineno, module.col(call)
    if loop is None and comprehension is None:
        message = (
            f"a MethodMetadata built inside {snippet(call)[:40]}... is not bound to a module-level name, so "
            f"nothing can point at it; {how}"
        )
        return [Declaration(None, module.path, line, col, problem=Unreadable(message, module.path, line, col))]
    builder = (
        f"the for loop at line {loop.lineno}"
        if loop is not None
        else f"the comprehension at line {comprehension.lineno}"
    )
    items: list[Any] = []
    if isinstance(loop, ast.For):
        try:
            value = plain(reader.evaluate(module, loop.iter))
            items = list(value) if isinstance(value, (list, tuple)) else []
        except InputError:
            items = []
    if not items:
        message = (
            f"a MethodMetadata built by {builder} cannot be read statically (it is made while the loop runs); {how}"
        )
        return [Declaration(None, module.path, line, col, problem=Unreadable(message, module.path, line, col))]
    target = snippet(loop.target)
    out = []
    for index, item in enumerate(items, 1):
        message = (
            f"the MethodMetadata {builder} builds for {target}={item!r} ({index} of {len(items)}) cannot be "
            f"read statically (it is made while the loop runs); {how}"
        )
        out.append(Declaration(None, module.path, line, col, problem=Unreadable(message, module.path, line, col)))
    return out


def _declarations(reader: Reader, module: Module) -> list[Declaration]:
    out: list[tuple[int, int, Declaration]] = []
    bound: set[int] = set()
    for target, call, stmt in _bound_calls(module):
        bound.add(id(call))
        variable = target.id
        line, col = stmt.lineno, module.col(target)
        try:
            val = module.value(variable, target)
            if not isinstance(val.value, Declared):
                raise module.fail(
                    f"{variable!r} is bound to {snippet(call)[:40]}..., which is not a MethodMetadata", call
                )
            record, source = val.value.record, f"{module.path}:{stmt.lineno}"
            if (record.variable, record.source) != (variable, source):
                record = attrs.evolve(record, variable=variable, source=source)
            out.append((line, col, Declaration(variable, module.path, line, col, record=record)))
        except Unreadable as exc:
            out.append((line, col, Declaration(variable, module.path, line, col, problem=exc)))
        except RecursionError:
            reader.stack.clear()
            exc = Unreadable(
                f"{variable!r} is built from values nested too deeply to read; write its fields out",
                module.path,
                line,
                col,
            )
            out.append((line, col, Declaration(variable, module.path, line, col, problem=exc)))
    for call, loop, comprehension in _unbound_calls(module, bound):
        for declaration in _loop_problems(reader, module, call, loop, comprehension):
            out.append((declaration.line, declaration.col, declaration))
    out.sort(key=lambda item: (item[0], item[1]))
    return [d for _, _, d in out]


# --------------------------------------------------------------------------- public API


def new_reader() -> Reader:
    return Reader(build_declaration=build)


def read_declarations(path: str | Path, reader: Reader | None = None) -> list[Declaration]:
    """Every declaration in ``path``, in file order, each readable or with its own problem.

    A file that cannot be read or parsed at all raises :class:`~tabarena_checks.metadata.info_eval.Unreadable`.
    """
    reader = reader or new_reader()
    return _declarations(reader, reader.module(path))


def parse_source(text: str, path: str) -> list[MethodMetadata]:
    """The readable declarations of ``text`` (as the file ``path``); the first unreadable one raises."""
    reader = new_reader()
    reader.modules[str(Path(path).resolve())] = module = Module(reader, path, text)
    return _records(_declarations(reader, module))


def _records(declarations: list[Declaration]) -> list[MethodMetadata]:
    for declaration in declarations:
        if declaration.problem is not None:
            raise declaration.problem
    return [d.record for d in declarations]


def read_file(path: str | Path, reader: Reader | None = None) -> list[MethodMetadata]:
    """Every declaration of ``path``; the first that cannot be read raises :class:`InputError`."""
    return _records(read_declarations(path, reader))


def read_variable(path: str | Path, variable: str, reader: Reader | None = None) -> MethodMetadata:
    """The MethodMetadata bound to ``variable`` in ``path`` (followed through imports and aliases)."""
    reader = reader or new_reader()
    module = reader.module(path)
    if variable not in module.bindings:
        raise _not_assigned(reader, module, path, variable)
    val = _value_of(reader, module, path, variable)
    if not isinstance(val.value, Declared):
        binding = module.bindings[variable][-1]
        raise Unreadable(
            f"{variable!r} is {plain_kind(val)}, not a MethodMetadata; point at a variable holding "
            f"MethodMetadata.config(...)/.baseline(...)/.system(...)",
            module.path,
            binding.line,
            binding.col,
        )
    record = val.value.record
    steps = tuple(s for s in val.steps if s.kind == "import")
    if record.variable != variable or steps:
        record = attrs.evolve(record, variable=variable)
    return record


def declared_variables(reader: Reader, module: Module) -> list[str]:
    """The names ``module`` assigns a MethodMetadata declaration to, sorted (what a ``FILE:VARIABLE`` may name)."""
    return sorted({d.variable for d in _declarations(reader, module) if d.variable})


def _not_assigned(reader: Reader, module: Module, path: str | Path, variable: str) -> InputError:
    """The error for a ``variable`` the file never assigns, naming the declarations it does hold."""
    found = declared_variables(reader, module)
    return InputError(
        f"{path}: no MethodMetadata declaration is assigned to {variable!r} (found: {', '.join(found) or 'none'}); "
        f"use path/to/info.py:VARIABLE with one of those names"
    )


def _value_of(reader: Reader, module: Module, path: str | Path, variable: str) -> Val:
    """The value bound to ``variable``; a value nested deeper than Python's recursion allows is an input error.

    The reader's stack of modules being read is cleared then, so the same reader can read on.
    """
    try:
        return module.value(variable)
    except RecursionError:
        reader.stack.clear()
        raise InputError(
            f"{path}: {variable!r} is built from values nested too deeply to read; write its fields out"
        ) from None


def plain_kind(val: Val) -> str:

    return kind_of(val.value)


__all__ = ["Declaration", "new_reader", "parse_source", "read_declarations", "read_file", "read_variable"]
