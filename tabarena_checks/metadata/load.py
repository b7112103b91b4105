"""Turn a ``--method-metadata`` reference into a :class:`MethodMetadata` record.

Two spellings, as TabArena's scripts accept plus one of our own:

- ``path/to/info.py:VARIABLE`` is read statically (nothing is imported or executed);
- ``package.module:VARIABLE`` or ``package.module.VARIABLE`` is imported and the object
  converted: TabArena's own ``MethodMetadata`` (read field by field), any object of a class
  named ``MethodMetadata`` offering those attributes, or our record.

Both give the same record for the same ``info.py`` (see :func:`from_object`).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import re
import sys
from typing import Any

import attrs
import click

from checks import ChecksError, InputError, UsageError, suggest
from checks.io import closest_path
from tabarena_checks.metadata import info_static
from tabarena_checks.metadata.model import CONSTRUCTOR_IMPLIES, FIELDS, MethodMetadata, canonical

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_MODULE_REF = re.compile(rf"^(?P<module>{_IDENT}(?:\.{_IDENT})*)[:.](?P<var>{_IDENT})$")
_HELP = "use path/to/info.py:VARIABLE (read statically) or package.module:VARIABLE (imported)"


def one_or_several(refs: str | tuple[str, ...] | list[str] | None) -> str | tuple[str, ...] | None:
    """A repeatable ``--method-metadata`` as given: not at all (None), once (a string, as a run with one
    declaration always recorded it) or several times (a tuple)."""
    if refs is None or isinstance(refs, str):
        return refs
    refs = tuple(refs)
    return (refs[0] if len(refs) == 1 else refs) if refs else None


def references(value: str | tuple[str, ...] | None) -> tuple[str, ...]:
    """The references :func:`one_or_several` keeps, as a tuple (empty when none was given)."""
    return () if value is None else (value,) if isinstance(value, str) else tuple(value)


def checked_reference(ctx: click.Context, param: click.Parameter, value):
    """``--method-metadata``'s click callback: an info.py that is not there or cannot be parsed, or a variable it never
    assigns, is the command line's mistake (exit 2, with the closest path or names), never a rule's failed verdict.
    A repeated option is checked reference by reference.

    What the file declares under that name is left to the action's rules (TA116 and the rest judge it).
    """
    if isinstance(value, tuple):
        return tuple(checked_reference(ctx, param, one) for one in value)
    is_path = value is not None and value.strip().rpartition(":")[0].endswith(".py")
    match = _MODULE_REF.match(value.strip()) if value is not None and not is_path else None
    if match:
        _check_module_reference(f"{param.opts[0]} {value}", match["module"], match["var"])
    return checked_path_reference(ctx, param, value)


def checked_path_reference(ctx: click.Context, param: click.Parameter, value):
    """:func:`checked_reference` for a ``path/to/info.py:VARIABLE`` only: ``checks run register`` reads a module
    reference from the TabArena checkout (``--repo``), not from what this interpreter can import. A repeated
    option (several declarations in one register) is checked reference by reference."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(checked_path_reference(ctx, param, one) for one in value)
    path, sep, variable = value.strip().rpartition(":")
    if not (sep and path.endswith(".py")):
        return value  # a module (or malformed) reference is load()'s to read and explain
    option = f"{param.opts[0]} {value}"
    if not os.path.exists(path):  # a device or FIFO is there: the reader refuses it without reading it
        hint = suggest.hint([closest_path(path)], show=lambda close: f"{close}:{variable}")
        raise UsageError(f"{option}: no such file {path}{hint} (give path/to/info.py:VARIABLE)")
    reader = info_static.new_reader()
    try:
        module = reader.module(path)
    except ChecksError as exc:
        raise UsageError(f"{option}: cannot read it: {exc}") from None
    if variable not in module.bindings:
        names = info_static.declared_variables(reader, module)
        raise _no_variable(option, f"{path} assigns no {variable!r}", path, variable, names, "declarations")
    return value


def _no_variable(option: str, what: str, where: str, variable: str, names: list[str], kind: str) -> UsageError:
    """The usage error for a reference whose variable is not there, with the closest MethodMetadata name."""
    hint = suggest.did_you_mean(variable, names, after=" ", show=lambda name: f"{where}:{name}")
    return UsageError(f"{option}: {what}.{hint} (MethodMetadata {kind} there: {', '.join(names) or 'none'})")


def load(ref: str | None) -> MethodMetadata | None:
    """The metadata ``ref`` names; ``None`` when no reference was given."""
    if ref is None:
        return None
    if not isinstance(ref, str) or not ref.strip():
        raise InputError(f"--method-metadata: empty reference; {_HELP}")
    ref = ref.strip()
    path, sep, variable = ref.rpartition(":")
    if sep and path.endswith(".py"):
        if not re.fullmatch(_IDENT, variable):
            raise InputError(f"--method-metadata {ref!r}: {variable!r} is not a variable name; {_HELP}")
        return info_static.read_variable(path, variable)
    if ref.endswith(".py"):
        raise InputError(f"--method-metadata {ref!r}: name the variable too, as {ref}:VARIABLE")
    match = _MODULE_REF.match(ref)
    if not match:
        raise InputError(f"--method-metadata {ref!r}: not a reference to a MethodMetadata; {_HELP}")
    return import_object(match["module"], match["var"])


def import_object(module_name: str, variable: str) -> MethodMetadata:
    """Import ``module_name`` (the working directory is searched too) and convert ``variable``."""
    ref = f"{module_name}:{variable}"
    module = _import_module(module_name, variable, ref)
    if not hasattr(module, variable):
        names = sorted(n for n, v in vars(module).items() if _is_metadata(v))
        raise InputError(
            f"--method-metadata {ref!r}: module {module_name!r} has no attribute {variable!r} "
            f"(MethodMetadata variables there: {', '.join(names) or 'none'})"
        )
    return from_object(getattr(module, variable), source=ref, variable=variable)


def _import_module(module_name: str, variable: str, ref: str):
    """The module, imported with the working directory on ``sys.path`` for the time of the import only.

    Apart so that ``sys.path`` is restored whatever happens, and a module that is missing or whose
    own code fails (e.g. TabArena's field assertions) is an input error naming the static way round.
    """
    try:
        with _cwd_importable():
            return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise InputError(
            f"--method-metadata {ref!r}: cannot import {module_name!r} ({exc}); install the package, "
            f"run from the directory that contains it, or pass path/to/info.py:{variable} to read it statically"
        ) from None
    except Exception as exc:  # the module's own code failed (e.g. TabArena's field assertions)
        raise InputError(
            f"--method-metadata {ref!r}: importing {module_name!r} failed: {type(exc).__name__}: {exc}; "
            f"pass path/to/info.py:{variable} to read it statically and see every problem"
        ) from None


@contextlib.contextmanager
def _cwd_importable():
    """The working directory on ``sys.path`` for the time of an import only (restored whatever happens)."""
    cwd = os.getcwd()
    added = cwd not in sys.path
    if added:
        sys.path.insert(0, cwd)
    try:
        yield
    finally:
        if added and sys.path and sys.path[0] == cwd:
            sys.path.pop(0)


def _check_module_reference(option: str, module_name: str, variable: str) -> None:
    """A module that cannot be found, or one without ``variable``, is the command line's mistake (exit 2); a module
    whose own code fails to import is an input that is there, and TA116 reports it."""
    if _module_missing(module_name):
        raise UsageError(
            f"{option}: no module {module_name!r} can be imported from here; install its package, run from the "
            f"directory that contains it, or pass path/to/info.py:{variable}"
        )
    try:
        with _cwd_importable():
            module = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - its own code failed: TA116 reports it with the loader's message
        return
    if not hasattr(module, variable):
        names = sorted(n for n, v in vars(module).items() if _is_metadata(v))
        what = f"module {module_name!r} has no {variable!r}"
        raise _no_variable(option, what, module_name, variable, names, "variables")


def _module_missing(module_name: str) -> bool:
    """Whether no module ``module_name`` can be found (its parent packages are imported to look, as the action
    would import them anyway); a package whose own code fails to import is not missing: TA116 reports it."""
    try:
        with _cwd_importable():
            return importlib.util.find_spec(module_name) is None
    except ModuleNotFoundError:
        return True
    except Exception:  # the package's own code failed: an input that is there, judged by TA116
        return False


def _is_metadata(value: Any) -> bool:
    return isinstance(value, MethodMetadata) or (
        not isinstance(value, type) and type(value).__name__ == info_static.CLASS_NAME
    )


def _constructor(values: dict[str, Any]) -> str:
    if values.get("method_class") == "system":
        return "system"
    kind = values.get("method_type")
    return kind if kind in ("config", "baseline", "portfolio") else "direct"


def from_object(obj: Any, *, source: str, variable: str | None) -> MethodMetadata:
    """Convert an imported MethodMetadata (TabArena's, a look-alike, or ours) to our record.

    An imported object cannot tell which fields were written in ``info.py``, so
    ``declared`` holds the fields whose value differs from what the constructor would
    have set anyway, after :func:`canonical` dropped TabArena's derived defaults.
    """
    if isinstance(obj, MethodMetadata):
        return attrs.evolve(obj, source=obj.source or source, variable=obj.variable or variable)
    if not _is_metadata(obj):
        raise InputError(
            f"--method-metadata {source!r}: resolved to a {type(obj).__name__}, not a MethodMetadata; "
            f"point it at the variable holding MethodMetadata.config(...)/.baseline(...)/.system(...)"
        )
    return _converted(obj, source, variable)


def _converted(obj: Any, source: str, variable: str | None) -> MethodMetadata:
    """Our record of a MethodMetadata look-alike, read attribute by attribute (missing ones take our defaults).

    Apart from :func:`from_object`'s checks because this is where ``declared`` is guessed: the
    fields that differ from what the object's constructor would have set anyway.
    """
    defaults = {f.name: f.default for f in attrs.fields(MethodMetadata) if f.name in FIELDS}
    values = {name: getattr(obj, name, defaults[name]) for name in FIELDS}
    if isinstance(values["tags"], list):
        values["tags"] = tuple(values["tags"])
    constructor = _constructor(values)
    record = canonical(MethodMetadata(**values, constructor=constructor, source=source, variable=variable))
    baseline = {**defaults, **CONSTRUCTOR_IMPLIES[constructor]}
    declared = frozenset(n for n in FIELDS if n == "method" or getattr(record, n) != baseline[n])
    return attrs.evolve(record, declared=declared)
