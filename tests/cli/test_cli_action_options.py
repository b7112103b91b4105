"""Every built-in action hands gather, plan, execute and its rules a typed options object.

Each option is declared once, on the action's attrs options class (``checks.options.option``),
and the command line's click parameters are made from its fields, so the domain code reads
``ctx.options.<name>``: a misspelt option is an error where the class is built, never a silent
``None`` from ``dict.get``, and no option can be added in one place and forgotten in the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import attrs
import pytest

from checks import plugins
from checks.options import KEY, declared_params, params
from tabarena_checks.publish.upload import UploadOptions

ROOT = Path(__file__).resolve().parents[2]
DOMAIN_PACKAGES = ("tabarena_checks", "hfmigrate_checks")
#: where the built-in actions and the shipped plugins' actions are declared
ACTION_SOURCES = (*DOMAIN_PACKAGES, "plugins")
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
    parameters = declared_params(action.options)
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


@pytest.mark.parametrize("name", ["process", "upload", "unpublish", "register", "log", "draft"])
def test_each_builtin_action_declares_its_options_once(name):
    action = _builtin_actions()[name]
    assert not action.params, f"{name}: declare the options on {action.options.__name__} alone, not in params= too"
    assert all(KEY in f.metadata for f in attrs.fields(action.options)), f"{name}: a field has no command-line form"


@pytest.mark.parametrize("name", ["process", "upload", "unpublish", "register", "log", "draft"])
def test_each_field_of_an_options_class_is_exactly_one_click_parameter(name):
    action = _builtin_actions()[name]
    fields = [f.name for f in attrs.fields(action.options)]
    names = [p.name for p in params(action.options)]
    assert names == fields, f"{name}: the parameters made from {action.options.__name__} are not one per field"
    flags = [opt for p in params(action.options) for opt in p.opts if opt.startswith("-")]
    assert len(flags) == len(set(flags)), f"{name}: two fields make the same command-line flag"


def _params_beside_options(path: Path, root: Path = ROOT) -> list[str]:
    """``Action(..., params=..., options=...)`` calls in one module: options written twice."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Action":
            keywords = {k.arg for k in node.keywords}
            if {"params", "options"} <= keywords:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def _hits(packages, finder) -> list[str]:
    """What ``finder`` finds in every module of ``packages`` (folders of the checkout)."""
    return [hit for package in packages for path in sorted((ROOT / package).rglob("*.py")) for hit in finder(path)]


def test_no_action_in_the_tree_declares_params_beside_an_options_class():
    offenders = _hits(ACTION_SOURCES, _params_beside_options)
    assert offenders == [], "declare each option once, on the options class (checks.options.option): " + ", ".join(
        offenders
    )


def test_the_params_finder_sees_a_doubled_declaration(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        "A = Action(name='a', params=(), options=O)\nB = checks.Action(name='b', options=O)\n"
        "C = checks.Action(name='c', params=(), options=O)\n"
    )
    assert _params_beside_options(module, tmp_path) == ["m.py:1", "m.py:3"]


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
    offenders = _hits(DOMAIN_PACKAGES, _option_lookups)
    assert offenders == [], "read ctx.options.<name> from the action's options class instead: " + ", ".join(offenders)


def test_the_lookup_finder_sees_both_forms(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f(ctx, options):\n    return ctx.options.get('a'), options['b'], ctx.options.a\n")
    assert _option_lookups(module, tmp_path) == ["m.py:2", "m.py:2"]
