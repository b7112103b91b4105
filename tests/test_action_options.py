"""Every built-in action hands gather, plan, execute and its rules a typed options object.

The command line builds it from the action's click parameters (one attrs field per
parameter), so the domain code reads ``ctx.options.<name>``: a misspelt option is an error
where the class is built, never a silent ``None`` from ``dict.get``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest

from checks import plugins
from checks.options import declared_params
from tabarena_checks.publish.upload import UploadOptions

ROOT = Path(__file__).resolve().parents[1]
DOMAIN_PACKAGES = ("tabarena_checks", "hfmigrate_checks")
#: the built-in plugins' entry-point names
BUILTIN_PLUGINS = ("tabarena", "hfmigrate")


def _builtin_actions():
    registry = plugins.load(list(BUILTIN_PLUGINS), environ={plugins.AUTOLOAD_ENV: "1"})  # no third parties
    return {name: a for name, a in registry.actions.items() if a.plugin in BUILTIN_PLUGINS}


def test_the_builtin_actions_are_found():
    assert {"process", "upload", "unpublish", "register", "log", "draft"} <= set(_builtin_actions())


@pytest.mark.parametrize("name", ["process", "upload", "unpublish", "register", "log", "draft"])
def test_each_builtin_action_has_an_options_class_matching_its_parameters(name):
    action = _builtin_actions()[name]
    assert action.options is not None and attrs.has(action.options), f"{name}: no attrs options class"
    fields = attrs.fields(action.options)
    parameters = action.params or declared_params(action.options)  # the draft action declares them once
    assert {f.name for f in fields} == {p.name for p in parameters}, (
        f"{name}: the options class and the click parameters differ"
    )
    required = {p.name for p in parameters if p.required}
    assert required <= {f.name for f in fields if f.default is attrs.NOTHING} | {"method_metadata"}, (
        f"{name}: a parameter the command line requires has a default in the options class"
    )
    made = action.options(**{f.name: "x" for f in fields if f.default is attrs.NOTHING})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(made, fields[0].name, None)


def test_the_command_line_builds_the_options_object():

    upload = _builtin_actions()["upload"]
    made = upload.make_options(
        {
            "from_cache": ["Nori", "nori-2026"],
            "cache_root": "/c",
            "verified": True,
            "method_metadata": None,
            "no_upload_raw": False,
            "expect_validation_protocol": None,
        }
    )
    assert made == UploadOptions(from_cache=("Nori", "nori-2026"), cache_root="/c", verified=True)
    with pytest.raises(TypeError, match="do not fit UploadOptions"):
        upload.make_options({"from_cahce": ["Nori", "nori-2026"]})


def _option_lookups(path: Path, root: Path = ROOT) -> list[str]:
    """``options.get("name")`` and ``options["name"]`` in one module (``ctx.options`` or a local ``options``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
        elif isinstance(node, ast.Subscript):
            target = node.value
        else:
            continue
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "options":
            found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_domain_module_looks_options_up_by_name():
    offenders = [
        hit
        for package in DOMAIN_PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for hit in _option_lookups(path)
    ]
    assert offenders == [], "read ctx.options.<name> from the action's options class instead: " + ", ".join(offenders)


def test_the_lookup_finder_sees_both_forms(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(ctx, options):\n    return ctx.options.get('a'), options['b'], ctx.options.a\n")
    assert _option_lookups(module, tmp_path) == ["m.py:2", "m.py:2"]
