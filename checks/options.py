"""An action's options declared once: the attrs class's fields generate its click parameters.

An action had its options written twice, as click parameters and as the attrs class
``ctx.options`` is built from, kept in sync by hand (and by a test). Here each field of the
class carries its command-line form (:func:`option`, :func:`argument`) and :func:`params`
makes the click parameters from the class, so a new option is one line in one place::

    @attrs.frozen
    class AcceptOptions:
        submission: str = argument(help="The folder to accept.")
        results: str = option(help="The results tree.", default="results")
        force: bool = option(help="Replace what is there.", flag=True)

    Action(..., options=AcceptOptions)      # `checks run` makes the parameters from the class
"""

from __future__ import annotations

from typing import Any

import attrs
import click

from checks.errors import PluginLoadError

#: the key of a field's metadata that holds its command-line form
KEY = "checks.option"


def _strings(value: Any) -> tuple[str, ...]:
    """A repeated option's values as a tuple (click hands a tuple; a caller may pass a list)."""
    return tuple(value)


def option(
    *,
    help: str,
    default: Any = attrs.NOTHING,
    flag: bool = False,
    multiple: bool = False,
    metavar: str | None = None,
    path: bool = False,
    type: click.ParamType | None = None,
    nargs: int = 1,
    required: bool | None = None,
    converter: Any = None,
    callback: Any = None,
) -> Any:
    """A field that is ``--field-name`` on the command line; without a default it is required.

    ``flag``: a boolean switch (default False); ``multiple``: repeatable, a tuple of strings;
    ``path``: a filesystem path (click shows it as one and refuses an empty value); ``type``: any
    other click type (``click.IntRange(1, 64)``, ``click.Choice([...])``), which wins over ``path``;
    ``nargs``: values taken at once (``--from-cache METHOD SUITE``), a tuple, None when not given;
    ``required=True``: the command line needs it although the class has a default (for a caller
    that builds the class without it, as ``checks inspect`` previews an action); ``converter``:
    the field's own attrs converter, in place of the tuple ``multiple`` and ``nargs`` convert to;
    ``callback``: click's check of the value as given (a usage error, exit 2, before the action runs).
    """
    if flag:
        default = False if default is attrs.NOTHING else default
    if multiple:
        default = () if default is attrs.NOTHING else default
    if nargs > 1:
        default = None if default is attrs.NOTHING else default
    spec = {"kind": "option", "help": help, "flag": flag, "multiple": multiple, "metavar": metavar, "path": path}
    spec.update(type=type, nargs=nargs, required=required, callback=callback)
    convert = converter or (_strings if multiple else attrs.converters.optional(tuple) if nargs > 1 else None)
    # keyword-only: a required option may follow one with a default, as on a command line
    return attrs.field(default=default, metadata={KEY: spec}, converter=convert, kw_only=True)


def argument(*, help: str, metavar: str | None = None, path: bool = True, type: click.ParamType | None = None) -> Any:
    """A required positional field. click shows an argument in the usage line only, so ``help`` is kept for
    the reader of the class: say it in the action's help too. ``type`` wins over ``path`` as for :func:`option`."""
    spec = {"kind": "argument", "help": help, "metavar": metavar, "path": path, "type": type}
    return attrs.field(metadata={KEY: spec})


def params(cls: type) -> tuple[click.Parameter, ...]:
    """The click parameters of the options class ``cls``, in field order.

    :raises PluginLoadError: ``cls`` is not an attrs class, or a field was declared without
        :func:`option` or :func:`argument` (it could never be set from the command line).
    """
    if not attrs.has(cls):
        raise PluginLoadError(f"options class {cls!r} must be an attrs class (@attrs.frozen)")
    out: list[click.Parameter] = []
    for field in attrs.fields(cls):
        spec = field.metadata.get(KEY)
        if spec is None:
            raise PluginLoadError(
                f"options class {cls.__module__}.{cls.__qualname__}: field {field.name!r} has no command-line form; "
                f"declare it as checks.options.option(help=...) or checks.options.argument(help=...)"
            )
        out.append(_param(field, spec))
    return tuple(out)


def declared_params(cls: type | None) -> tuple[click.Parameter, ...]:
    """The parameters of an action that gives only its options class (``Action(options=Cls)``, no ``params``):
    :func:`params` of it when its fields are declared here, else none (an action without options)."""
    if cls is None or not attrs.has(cls) or not any(KEY in f.metadata for f in attrs.fields(cls)):
        return ()
    return params(cls)


def _param(field: attrs.Attribute, spec: dict[str, Any]) -> click.Parameter:
    kind = spec.get("type") or (click.Path() if spec["path"] else None)
    if spec["kind"] == "argument":
        return click.Argument([field.name], type=kind, metavar=spec["metavar"])
    flag = "--" + field.name.replace("_", "-")
    required = spec.get("required") or field.default is attrs.NOTHING
    # no default at all when required: click takes an explicit default=None as a value given
    default = {} if required else {"default": field.default}
    return click.Option(
        [flag, field.name],
        is_flag=spec["flag"],
        multiple=spec["multiple"],
        nargs=spec.get("nargs", 1),
        callback=spec.get("callback"),
        required=required,
        show_default=not required and not spec["flag"] and not spec["multiple"],
        metavar=spec["metavar"],
        type=kind,
        help=spec["help"],
        **default,
    )
