"""MethodMetadata from info.py (static and imported) and validation-protocol keys."""

from __future__ import annotations

import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.errors import ChecksError, InputError
from tabarena_checks.metadata import info_static, load as metadata_load
from tabarena_checks.raw import protocol
from tabarena_checks.metadata.model import FIELDS, MethodMetadata

INFO = textwrap.dedent(
    """\
    from tabarena.models import MethodMetadata

    nori = MethodMetadata.config(
        method="Nori",
        suite="nori-2026-03",
        ag_key="TA-NORI",
        config_default="Nori_c1_default_BAG_L1",
        can_hpo=False,
        is_bag=True,
        compute="gpu",
        date="2026-03-01",
        tags=["with-llm", "closed-source-api", "with-llm"],
        validation_protocol="8x1",
        cache_kwargs={"bucket": "tabarena", "prefix": "cache"},
    )
    preset = MethodMetadata.baseline(method="Preset", name="Preset (best)", suite="preset-1", date_introduced="2024-03")
    auto = MethodMetadata.system(method="AutoX", name="AutoX", tags=["closed-source-api"], suite="autox-1")
    port = MethodMetadata.portfolio(method="Port", suite="port-1", name="Portfolio")
    """
)

STAND_IN = textwrap.dedent(
    """\
    class MethodMetadata:
        '''A stand-in for TabArena's class: stores what it was given, sets what each constructor sets.'''

        def __init__(self, **kw):
            for key, value in kw.items():
                setattr(self, key, value)

        @classmethod
        def config(cls, **kw):
            return cls(method_type="config", **kw)

        @classmethod
        def baseline(cls, method, name=None, **kw):
            return cls(method=method, name=name, method_type="baseline", **kw)

        @classmethod
        def system(cls, method, name=None, tags=None, **kw):
            return cls(method=method, name=name, tags=tags or [], method_type="baseline",
                       method_class="system", **kw)

        @classmethod
        def portfolio(cls, method, name=None, has_raw=False, **kw):
            return cls(method=method, name=name, has_raw=has_raw, method_type="portfolio", **kw)
    """
)


def test_static_read_gives_every_declaration_with_constructor_effects(tmp_path):
    path = tmp_path / "info.py"
    path.write_text(INFO)
    records = {r.variable: r for r in info_static.read_file(path)}
    assert list(records) == ["nori", "preset", "auto", "port"]
    nori = records["nori"]
    assert (nori.method, nori.suite, nori.method_type, nori.ag_key, nori.compute) == (
        "Nori",
        "nori-2026-03",
        "config",
        "TA-NORI",
        "gpu",
    )
    assert nori.tags == ("closed-source-api", "with-llm")
    assert nori.is_bag is True and nori.can_hpo is False
    assert nori.source == f"{path}:3" and nori.constructor == "config"
    assert "method_type" not in nori.declared and {"ag_key", "suite", "tags"} <= nori.declared
    assert nori.effective_cache_type == "r2"
    preset = records["preset"]
    assert (preset.method, preset.name, preset.method_type, preset.method_class) == (
        "Preset",
        "Preset (best)",
        "baseline",
        "model",
    )
    auto = records["auto"]
    assert (auto.method_type, auto.method_class, auto.tags) == ("baseline", "system", ("closed-source-api",))
    port = records["port"]
    assert (port.method_type, port.has_raw, port.name) == ("portfolio", False, "Portfolio")


def test_static_read_does_not_execute_the_file(tmp_path):
    marker = tmp_path / "ran"
    path = tmp_path / "info.py"
    path.write_text(f"open({str(marker)!r}, 'w').write('x')\nm = MethodMetadata.config(method='M', suite='s')\n")
    assert info_static.read_variable(path, "m").method == "M"
    assert not marker.exists()


def test_import_alias_and_annotated_assignment_and_if_block(tmp_path):
    path = tmp_path / "info.py"
    path.write_text(
        "from tabarena.models import MethodMetadata as MM\n"
        "if True:\n"
        "    a: MM = MM.baseline(method='A', suite='a-1')\n"
        "def f():\n"
        "    hidden = MM.config(method='H')\n"
    )
    records = info_static.read_file(path)
    assert [(r.variable, r.method, r.source) for r in records] == [("a", "A", f"{path}:3")]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("m = MethodMetadata.config(method='M', date=TODAY)\n", ["info.py:1:44:", "'TODAY' is not defined"]),
        ("m = MethodMetadata.config(method='M', **common)\n", ["info.py:1:41:", "'common' is not defined"]),
        (
            "m = MethodMetadata.config(method='M', colour='red')\n",
            ["info.py:1:39:", "does not accept 'colour'", "TypeError"],
        ),
        ("m = MethodMetadata.config(method='M', method_type='baseline')\n", ["sets 'method_type' itself"]),
        ("m = MethodMetadata.baseline('M', 'N')\n", ["info.py:1:29:", "keyword arguments only"]),
        (
            "m = MethodMetadata(method='M', suite='s', **{'method': 'N'})\n",
            ["info.py:1:46:", "'method' twice", "TypeError"],
        ),
        ("m = MethodMetadata('M', method='N')\n", ["info.py:1:25:", "'method' by position and by keyword"]),
        ("m = MethodMetadata.config(ag_key='X')\n", ["info.py:1:5:", "needs method="]),
        ("m = MethodMetadata.tabarena_legacy_s3(method='M')\n", ["needs suite="]),
        (
            "m = MethodMetadata.tabarena_legacy_s3(method='M', suite='s', cache_type='r2')\n",
            ["info.py:1:62:", "sets 'cache_type' itself"],
        ),
        ("m = MethodMetadata.from_yaml(path='x')\n", ["from_yaml()", "cannot be read statically"]),
        ("\n\nm = MethodMetadata.config(method='M'\n", ["info.py:3:", "not valid Python"]),
    ],
)
def test_static_errors_name_file_line_and_fix(tmp_path, source, expected):
    path = tmp_path / "info.py"
    path.write_text(source)
    with pytest.raises(InputError) as err:
        info_static.read_file(path)
    for part in expected:
        assert part in str(err.value), str(err.value)


def test_static_file_errors(tmp_path):
    with pytest.raises(InputError, match=r"missing\.py:1:1: no such file"):
        info_static.read_file(tmp_path / "missing.py")
    bad = tmp_path / "latin.py"
    bad.write_bytes(b"x = '\xe9'\n")
    with pytest.raises(InputError, match="not UTF-8"):
        info_static.read_file(bad)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_static_parser_only_raises_project_errors_on_any_text(text):
    try:
        info_static.parse_source(text, "fuzz.py")
    except ChecksError:
        pass


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "method='M'",
                "ag_key=1",
                "tags=[1, [2]]",
                "cache_kwargs=[1]",
                "suite=None",
                "can_hpo='x'",
                "name_suffix=b'x'",
                "display_name=3",
                "model_key=ag",
            ]
        ),
        max_size=5,
    )
)
def test_static_parser_survives_odd_literal_values(parts):
    try:
        info_static.parse_source(f"m = MethodMetadata.config({', '.join(parts)})\n", "fuzz.py")
    except ChecksError:
        pass


def _comparable(record: MethodMetadata):
    return {f: getattr(record, f) for f in FIELDS}, record.declared, record.variable


def test_static_and_imported_reads_agree(tmp_path, monkeypatch):
    pkg = tmp_path / "a2pkg_agree"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "standin.py").write_text(STAND_IN)
    (pkg / "info.py").write_text(INFO.replace("from tabarena.models import", "from a2pkg_agree.standin import"))
    monkeypatch.syspath_prepend(str(tmp_path))
    for variable in ("nori", "preset", "auto", "port"):
        static = metadata_load.load(f"{pkg / 'info.py'}:{variable}")
        imported = metadata_load.load(f"a2pkg_agree.info:{variable}")
        dotted = metadata_load.load(f"a2pkg_agree.info.{variable}")
        assert _comparable(static) == _comparable(imported) == _comparable(dotted), variable
        assert imported.source == f"a2pkg_agree.info:{variable}"
    for name in [n for n in sys.modules if n.startswith("a2pkg_agree")]:
        del sys.modules[name]


def test_import_drops_tabarena_derived_defaults(tmp_path, monkeypatch):
    """An object whose derived fields were filled (as TabArena's __post_init__ does) reads like the info.py."""
    (tmp_path / "a2_filled.py").write_text(
        STAND_IN + "m = MethodMetadata.config(method='M', suite='M', ag_key='K', model_key='K', can_hpo=True,"
        " cache_type='local', display_name='K', tags=['with-llm'])\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    record = metadata_load.load("a2_filled:m")
    assert (record.suite, record.model_key, record.can_hpo, record.cache_type, record.display_name) == (None,) * 5
    assert record.declared == {"method", "ag_key", "tags"}
    assert record.effective_suite == "M" and record.effective_can_hpo is True
    sys.modules.pop("a2_filled", None)


@pytest.mark.parametrize(
    "ref, expected",
    [
        ("", "empty reference"),
        ("not a ref", "not a reference"),
        ("models/info.py", "name the variable too"),
        ("models/info.py:1bad", "is not a variable name"),
        ("no_such_module_a2:x", "cannot import 'no_such_module_a2'"),
        ("json:nothing_here", "has no attribute 'nothing_here'"),
        ("json:dumps", "resolved to a function, not a MethodMetadata"),
    ],
)
def test_bad_references_say_how_to_fix(ref, expected):
    with pytest.raises(InputError, match=expected):
        metadata_load.load(ref)


def test_missing_variable_lists_the_ones_found(tmp_path):
    path = tmp_path / "info.py"
    path.write_text(INFO)
    with pytest.raises(InputError, match=r"found: auto, nori, port, preset"):
        metadata_load.load(f"{path}:other")


def test_module_that_raises_on_import_is_an_input_error(tmp_path, monkeypatch):
    (tmp_path / "a2_raises.py").write_text("raise AssertionError(\"date '2026-02-30' is not a valid calendar date\")\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError, match="importing 'a2_raises' failed: AssertionError: date"):
        metadata_load.load("a2_raises:m")


def test_no_reference_is_none():
    assert metadata_load.load(None) is None


# --------------------------------------------------------------------------- protocol keys

GOOD_KEYS = [
    ("8x1", "bagged", 8, 1, None, False, False),
    ("8x1+tiny5x5<=500+task-specific+adapt-classes", "bagged", 8, 1, (5, 5, 500), True, True),
    ("16x3+adapt-classes", "bagged", 16, 3, None, False, True),
    ("holdout:8x1", "holdout", 8, 1, None, False, False),
    ("bag-child-holdout:8x1", "bag-child-holdout", 8, 1, None, False, False),
    ("custom:3x1", "custom", 3, 1, None, False, False),
    ("outer", "outer", None, None, None, False, False),
    ("system", "system", None, None, None, False, False),
    ("custom", "custom", None, None, None, False, False),
]


@pytest.mark.parametrize("text, flavour, folds, sets, tiny, task, adapt", GOOD_KEYS)
def test_parse_key_round_trips(text, flavour, folds, sets, tiny, task, adapt):
    key = protocol.parse_key(text)
    assert (key.flavour, key.folds, key.sets, key.tiny, key.task_specific, key.adapt_classes) == (
        flavour,
        folds,
        sets,
        tiny,
        task,
        adapt,
    )
    assert key.text == str(key) == text


@pytest.mark.parametrize(
    "text, expected",
    [
        ("8x01", "not a protocol"),
        ("1x1", "at least 2 folds"),
        ("8x1+adapt-classes+task-specific", "not a protocol"),
        ("8x1+tiny1x5<=500", "tiny regime needs at least 2 folds"),
        ("bagged:8x1", "without a flavour (write '8x1')"),
        ("system:8x1", "takes no protocol"),
        ("Holdout:8x1", "not a flavour name"),
        ("8 x 1", "not a protocol"),
        (" 8x1", "padded with spaces"),
        ("", "empty"),
        (8, "must be a string"),
    ],
)
def test_parse_key_rejects_malformed_keys(text, expected):
    with pytest.raises(InputError, match="validation protocol") as err:
        protocol.parse_key(text)
    assert expected in str(err.value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=60), st.text(alphabet="0123456789x+:<=tinyaskpecfdhol-", max_size=60)))
def test_parse_key_only_raises_input_errors(text):
    try:
        key = protocol.parse_key(text)
    except InputError:
        return
    assert protocol.parse_key(key.text) == key


def test_official_flavours():
    assert protocol.is_official("8x1") and protocol.is_official("system") and protocol.is_official("3x1")
    for key in ("holdout:8x1", "outer", "custom", "custom:8x1", "bag-child-holdout:8x1"):
        assert not protocol.is_official(key), key


def test_resolve_expected():
    assert protocol.resolve_expected("tabarena") == "8x1"
    assert protocol.resolve_expected("BeyondArena") == protocol.OFFICIAL["beyondarena"]
    assert protocol.resolve_expected("3x1") == "3x1"
    with pytest.raises(InputError, match="--expect-validation-protocol.*or a name: tabarena, beyondarena"):
        protocol.resolve_expected("tabarena-v2")
