"""The static info.py reader on TabArena's idioms: descriptors, legacy s3, spreads, constants, imports, loops."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import pytest
from tests.support.info_checkout_fixtures import write_checkout

from checks.errors import InputError
from checks.testing import run_cli
from tabarena_checks.metadata import info_static
from tabarena_checks.metadata.origins import site


@pytest.fixture
def checkout(tmp_path):
    return write_checkout(tmp_path)


def _declarations(path):
    return {d.variable: d for d in info_static.read_declarations(path)}


def _pick(resolved, names: str) -> tuple:
    """The values of the space-separated field ``names`` in a resolved declaration, in that order."""
    return tuple(resolved[name] for name in names.split())


def _where(record, field):
    step = site(record.origins[field])
    return (step.path.rsplit("/", 1)[-1], step.line, step.col, step.kind)


def test_descriptor_fields_are_defaults_and_the_callers_keywords_win(checkout):
    found = _declarations(checkout / "tafix/models/alpha/info.py")
    assert list(found) == ["alpha_method_metadata", "alpha_new_method_metadata", "alpha_cpu_method_metadata"]
    new = found["alpha_new_method_metadata"].record.resolved()
    assert _pick(
        new, "method_type compute is_bag display_name reference_url date_introduced model_key can_hpo cache_type"
    ) == ("config", "gpu", True, "Alpha", "https://example.org/alpha", "2024-07", "ALPHA", False, "r2")
    cpu = found["alpha_cpu_method_metadata"].record.resolved()
    assert _pick(cpu, "compute display_name name_suffix is_bag") == ("cpu", "Alpha (CPU)", "_CPU", True)
    record = found["alpha_new_method_metadata"].record
    # a descriptor default points at the keyword in ModelDescriptor(...), a call keyword at itself
    assert _where(record, "compute") == ("info.py", 5, 5, "keyword")
    assert record.origins["compute"][0].kind == "descriptor"
    assert _where(record, "suite") == ("info.py", 24, 5, "keyword")


def test_spreads_nested_dicts_constants_and_legacy_s3(checkout):
    found = _declarations(checkout / "tafix/systems/auto/info.py")
    legacy = found["auto_legacy_metadata"].record.resolved()
    assert _pick(
        legacy, "method_type method_class suite compute cache_type cache_kwargs reference_url display_name has_raw"
    ) == (
        "baseline",
        "system",
        "tabarena-2025-11-01",
        "gpu",
        "s3",
        {"bucket": "tabarena", "prefix": "cache_aio", "upload_as_public": True},
        "https://example.org/auto",
        "Auto 1 (best)",
        True,
    )
    record = found["auto_legacy_metadata"].record
    # reference_url came through **_gpu_kwargs -> **_common_kwargs -> **_system_kwargs -> reference_url=_PAPER
    kinds = [step.kind for step in record.origins["reference_url"]]
    assert kinds == ["spread", "spread", "spread", "keyword", "constant"]
    assert _where(record, "reference_url") == ("info.py", 8, 5, "keyword")
    assert _where(record, "suite") == ("info.py", 12, 5, "keyword")
    assert _where(record, "cache_type")[3] == "constructor"
    system = found["auto_new_metadata"].record.resolved()
    assert _pick(system, "method_type method_class tags suite cache_type") == (
        "baseline",
        "system",
        ("closed-source-api", "with-llm"),
        "tabarena-2026-08-05",
        "r2",
    )
    assert _where(found["auto_new_metadata"].record, "date")[3] == "key"
    portfolio = found["auto_portfolio_metadata"].record.resolved()
    assert _pick(portfolio, "method_type has_raw method_class can_hpo") == ("portfolio", False, "system", False)
    direct = found["auto_direct_metadata"].record.resolved()
    assert _pick(direct, "method suite verified display_name") == ("Direct", "direct-1", False, "Direct")


def test_imported_descriptor_and_declarations_are_followed(checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    path = "tafix/contexts/beyond/methods.py"
    found = _declarations(path)
    assert list(found) == ["beyond_alpha_metadata"]
    record = found["beyond_alpha_metadata"].record
    resolved = record.resolved()
    assert _pick(resolved, "method_type compute display_name can_hpo suite") == (
        "config",
        "gpu",
        "Alpha",
        False,
        "beyond-2026",
    )
    # compute is written in the model's own info.py: the finding points there
    assert _where(record, "compute") == ("info.py", 5, 5, "keyword")
    assert site(record.origins["compute"]).path == "tafix/models/alpha/info.py"
    alias = info_static.read_variable(path, "alpha_latest")
    assert (alias.method, alias.effective_suite, alias.variable) == ("Alpha", "tabarena-2026-07-13", "alpha_latest")
    assert alias.source.startswith("tafix/models/alpha/info.py:")
    assert info_static.read_variable(path, "auto_new_metadata").method == "Auto_v2"


def test_loop_and_comprehension_declarations_are_reported_one_by_one(checkout):
    declarations = info_static.read_declarations(checkout / "tafix/contexts/loop/methods.py")
    problems = [d.problem.message for d in declarations if d.problem]
    assert len(problems) == 3, problems
    assert "for name='One' (1 of 2)" in problems[0] and "for name='Two' (2 of 2)" in problems[1]
    assert "comprehension at line 9" in problems[2]
    assert all("point at it as" in p for p in problems)
    readable = [d.record.method for d in declarations if d.record]
    assert readable == ["Kept"]


def _write(tmp_path, text, name="info.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.mark.parametrize(
    "spelling, separator",
    [
        ("MM.config", "\n"),  # an alias of the class
        ("MethodMetadata.config", "\n\x0c\n"),  # a form feed: str.splitlines counts lines differently from ast
        ("\uff2dethodMetadata.config", "\n"),  # a fullwidth M: Python reads the identifier as MethodMetadata
    ],
)
def test_declarations_in_loops_are_found_however_the_file_spells_them(tmp_path, spelling, separator):
    """A loop's declarations are found whatever spells the class: an import alias, a file whose lines
    str.splitlines numbers differently from Python, an identifier Python normalises (NFKC)."""
    lines = [
        "from tabarena.models._method_metadata import MethodMetadata",
        "from tabarena.models._method_metadata import MethodMetadata as MM",
        "kept = MethodMetadata.config(method='Kept', suite='kept-1')",
        f"others = [{spelling}(method=n, suite='s') for n in ('A', 'B')]",
        "for n in ('C',):",
        f"    single = {spelling}(method=n, suite='s')",
    ]
    path = tmp_path / "info.py"
    path.write_text(separator.join(lines) + "\n", encoding="utf-8")
    declarations = info_static.read_declarations(path)
    problems = [d.problem.message for d in declarations if d.problem]
    assert [d.record.method for d in declarations if d.record] == ["Kept"]
    assert len(problems) == 2, problems
    assert "comprehension at line" in problems[0] and "for n='C' (1 of 1)" in problems[1]


def test_one_unreadable_declaration_never_hides_the_others(tmp_path):
    path = _write(
        tmp_path,
        """\
        from tabarena.models._method_metadata import MethodMetadata
        a = MethodMetadata.config(method="A", suite="a-1")
        b = MethodMetadata.config(method="B", suite="b-1", colour="red")
        c = MethodMetadata.baseline(method="C", suite="c-1", **["not", "a", "dict"])
        d = MethodMetadata.config(method="D", suite="d-1")
        """,
    )
    found = info_static.read_declarations(path)
    assert [(d.variable, d.record is not None) for d in found] == [("a", True), ("b", False), ("c", False), ("d", True)]
    b, c = found[1].problem, found[2].problem
    assert (b.line, b.col) == (3, 52) and "does not accept 'colour'" in b.message
    assert (c.line, c.col) == (4, 54) and "is a list" in c.message and "not a dict" in c.message


@pytest.mark.parametrize(
    "files, expected",
    [
        (
            {"info.py": "S = 'a'\nS = 'b'\nm = MethodMetadata.config(method='M', suite=S)\n"},
            ("info.py", 2, 1, "'S' is bound 2 times (lines 1, 2)"),
        ),
        (
            {
                "info.py": "m = MethodMetadata.config(method='M', suite='s')\nm = MethodMetadata.config(method='N', suite='t')\n"
            },
            ("info.py", 2, 1, "'m' is bound 2 times"),
        ),
        (
            {
                "__init__.py": "",
                "a.py": "from pkg.b import Y\nX = 'x'\nm = MethodMetadata.config(method='M', suite=Y)\n",
                "b.py": "from pkg.a import X\nY = X\n",
            },
            ("a.py", 1, 1, "import cycle"),
        ),
        (
            {"info.py": "K = 3\nm = MethodMetadata.config(method='M', **K)\n"},
            ("info.py", 2, 39, "**K is a int (3), not a dict"),
        ),
        (
            {
                "info.py": "d = ModelDescriptor(display_name='D')\nm = d.method_metadata(method='M', method_type='baseline')\n"
            },
            ("info.py", 2, 35, "describes config methods"),
        ),
        (
            {"info.py": "d = ModelDescriptor(display_name='D', colour='red')\nm = d.method_metadata(method='M')\n"},
            ("info.py", 1, 39, "does not accept 'colour'"),
        ),
        (
            {"info.py": "from autogluon.x import SUITE\nm = MethodMetadata.config(method='M', suite=SUITE)\n"},
            ("info.py", 1, 1, "not a module of this checkout"),
        ),
    ],
)
def test_bad_input_is_one_problem_at_line_and_column_with_the_fix(tmp_path, files, expected):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for name, text in files.items():
        (pkg / name).write_text(text)
    target = pkg / ("a.py" if "a.py" in files else "info.py")
    declarations = info_static.read_declarations(target)
    problems = [d.problem for d in declarations if d.problem]
    assert len(problems) >= 1
    problem = problems[-1] if expected[3] == "'m' is bound 2 times" else problems[0]
    name, line, col, text = expected
    assert (problem.path.rsplit("/", 1)[-1], problem.line, problem.col) == (name, line, col), problem
    assert text in problem.message, problem.message


def test_a_chain_of_spreads_too_deep_to_read_is_one_problem(tmp_path):
    chain = "A0 = dict(suite='s')\n" + "".join(f"A{i} = dict(**A{i - 1})\n" for i in range(1, 400))
    path = _write(
        tmp_path,
        chain + "m = MethodMetadata.config(method='M', **A399)\nok = MethodMetadata.config(method='O', suite='o')\n",
    )
    found = {d.variable: d for d in info_static.read_declarations(path)}
    assert "nested too deeply" in found["m"].problem.message and found["ok"].record.method == "O"


def test_the_same_import_twice_is_one_binding(tmp_path):
    path = _write(
        tmp_path,
        """\
        from typing import TYPE_CHECKING
        from tabarena.models._method_metadata import MethodMetadata
        if TYPE_CHECKING:
            from tabarena.models._method_metadata import MethodMetadata
        m = MethodMetadata.config(method="M", suite="m-1")
        """,
    )
    assert [r.method for r in info_static.read_file(path)] == ["M"]


def test_read_variable_names_the_variables_found(checkout):
    with pytest.raises(
        InputError, match="found: alpha_cpu_method_metadata, alpha_method_metadata, alpha_new_method_metadata"
    ):
        info_static.read_variable(checkout / "tafix/models/alpha/info.py", "nope")
    with pytest.raises(InputError, match="not a MethodMetadata"):
        info_static.read_variable(checkout / "tafix/systems/auto/info.py", "_system_kwargs")


def test_columns_count_characters_not_bytes(tmp_path):
    path = _write(tmp_path, 'm = MethodMetadata.config(method="Ñøri", suite="s", date="2026-02-30")\n')
    record = info_static.read_file(path)[0]
    assert _where(record, "date") == ("info.py", 1, 53, "keyword")


# --------------------------------------------------------------------------- against TabArena itself


FIXTURE_MODULES = (
    "tafix/models/alpha/info.py",
    "tafix/systems/auto/info.py",
    "tafix/contexts/beyond/methods.py",
    "tafix/contexts/loop/methods.py",
)
#: run by an interpreter that has TabArena: imports the fixtures for real, prints every field of each variable
DUMP = """
import dataclasses, importlib, json, sys
sys.path.insert(0, sys.argv[1])
out = {}
for key in json.loads(sys.argv[2]):
    module, variable = key.split(":")
    obj = getattr(importlib.import_module(module), variable)
    out[key] = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
print(json.dumps(out, default=list))
"""


def _theirs(checkout, keys):
    """TabArena's own objects for ``keys`` (module:variable): in-process when importable, else TABARENA_PYTHON."""
    side = os.environ.get("TABARENA_PYTHON")
    try:
        import tabarena.models  # noqa: F401, PLC0415 - optional: TabArena is tried in-process first
    except ImportError:
        if not side:
            pytest.skip("TabArena is not installed (set TABARENA_PYTHON to an interpreter that has it)")
        res = subprocess.run(
            [side, "-c", DUMP, str(checkout), json.dumps(keys)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=checkout,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        return json.loads(res.stdout)
    sys.path.insert(0, str(checkout))
    try:
        out = {}
        for key in keys:
            module, variable = key.split(":")
            obj = getattr(importlib.import_module(module), variable)
            out[key] = {f: getattr(obj, f) for f in obj.__dataclass_fields__}
        return out
    finally:
        sys.path.remove(str(checkout))
        for name in [n for n in sys.modules if n == "tafix" or n.startswith("tafix.")]:
            del sys.modules[name]


def test_every_fixture_declaration_equals_tabarenas_own_object(checkout):
    """Where TabArena is installed (or TABARENA_PYTHON names an interpreter that has it): import the fixture
    package for real and compare every field, derived ones included."""
    ours = {}
    for rel in FIXTURE_MODULES:
        for declaration in info_static.read_declarations(checkout / rel):
            if declaration.record is not None:
                ours[f"{rel[:-3].replace('/', '.')}:{declaration.variable}"] = declaration.record.resolved()
    assert len(ours) == 9
    theirs = _theirs(checkout, sorted(ours))
    for key, fields in ours.items():
        for field, value in fields.items():
            if field not in theirs[key]:
                assert field == "validation_protocol"  # newer than TabArena 0.1.0
                continue
            other = theirs[key][field]
            if field == "tags":
                other, value = list(other), list(value)
            assert other == value, (key, field, other, value)


# --------------------------------------------------------------------------- checks tabarena metadata


def _metadata_cli(cwd, *args):

    return run_cli(
        ["-p", "tabarena", "tabarena", "metadata", *args], env={"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}, cwd=cwd
    )


def test_metadata_command_shows_every_field_and_where_it_came_from(checkout):

    res = _metadata_cli(checkout, "tafix/contexts/beyond/methods.py", "--format", "json")
    assert res.exit_code == 0, res.stdout + res.stderr
    [item] = json.loads(res.stdout)["declarations"]
    assert (item["variable"], item["line"], item["constructor"]) == ("beyond_alpha_metadata", 14, "descriptor")
    fields = item["fields"]
    assert fields["compute"]["value"] == "gpu" and fields["compute"]["from"][:2] == ["descriptor default", "import"]
    assert fields["compute"]["provenance"][-1] == {
        "kind": "keyword",
        "name": "compute=",
        "path": "tafix/models/alpha/info.py",
        "line": 5,
        "col": 5,
    }
    assert fields["suite"]["from"] == ["spread", "literal"]
    assert fields["display_name"] == {
        "value": "Alpha",
        "from": ["descriptor default", "import", "literal"],
        "provenance": fields["display_name"]["provenance"],
    }
    assert fields["model_key"]["from"] == ["derived from ag_key"] and fields["model_key"]["value"] == "TA-ALPHA"
    assert fields["has_raw"]["from"] == ["default"]
    human = _metadata_cli(checkout, "tafix/systems/auto/info.py:auto_legacy_metadata")
    assert human.exit_code == 0
    assert "reference_url" in human.stdout and "constant _PAPER (tafix/systems/auto/info.py:3:1)" in human.stdout


def test_metadata_command_exits_1_with_the_place_of_each_unreadable_declaration(checkout, tmp_path):
    res = _metadata_cli(checkout, "tafix/contexts/loop/methods.py")
    assert res.exit_code == 1
    assert res.stdout.count("cannot be read:") == 3 and "Kept" in res.stdout
    (tmp_path / "bad.py").write_text("m = MethodMetadata.config(method='M',\n")
    res = _metadata_cli(tmp_path, "bad.py")
    assert res.exit_code == 1 and "bad.py:1:26: not valid Python" in res.stdout, res.stdout
    assert "Traceback" not in res.stdout + res.stderr
