"""TA1xx/TA2xx/TA3xx rules: each fails on a bad case and passes on a good one.

Unit tests use small in-process facts objects with the attributes the rules read
(``metadata``, ``inference``); the end-to-end tests at the bottom use runs written by
``tabarena_checks.synth.generate`` and the real index and inference.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from types import SimpleNamespace

import attrs
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checks.config_model import Config
from checks.context import RunContext
from checks.errors import InputError
from checks.judge import evaluate
from checks.model import Outcome
from checks.testing import assert_fails, assert_passes, evaluate_rules
from tabarena_checks.facts.inspect import TabArenaFacts
from tabarena_checks.metadata import compare
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import FIELDS, MethodMetadata
from tabarena_checks.raw.index import RawIndex, schema
from tabarena_checks.rules import metadata as rules_metadata
from tabarena_checks.rules import protocol as rules_protocol
from tabarena_checks.rules import raw as rules_raw
from tabarena_checks.rules import raw_checks
from tabarena_checks.synth import generate as synth
from tests.support.tabarena_rule_facts import GOOD, FakeInference, facts, options_of

RULES = [*rules_metadata.RULES, *rules_protocol.RULES]
BY_CODE = {r.code: r for r in RULES}


def one_row_index(**row):
    """A raw index of one result at ``p/1/0_0/results.pkl`` whose columns are ``row`` (the others empty)."""
    row = {"path": "p/1/0_0/results.pkl", "config_dir": "p", "decode_errors": [], "invalid_text": [], **row}
    return RawIndex(data_dir=Path("."), table=pa.Table.from_pylist([row], schema=schema()).drop_columns(["error"]))


def run(code, facts_obj, action="process", **options):
    return evaluate_rules([BY_CODE[code]], facts_obj, action=action, options=options_of(action, **options))


class BadRef:
    """Facts whose metadata reference does not resolve."""

    inference = FakeInference()

    @property
    def metadata(self):
        raise InputError("--method-metadata 'x.py:y': cannot read it")


# --------------------------------------------------------------------------- fields (info.py alone)

FIELD_CASES = [
    ("TA101", dict(suite=None), "method == suite (both 'Nori')"),
    ("TA101", dict(suite="Nori", declared=GOOD.declared | {"suite"}), "is set to the method name"),
    ("TA110", dict(date="2026-02-30"), "'date' must be a real calendar date YYYY-MM-DD (got '2026-02-30')"),
    ("TA110", dict(date="2026-2-3"), "got '2026-2-3'"),
    ("TA111", dict(date_introduced="March 2024"), "YYYY, YYYY-MM or YYYY-MM-DD (got 'March 2024')"),
    ("TA111", dict(date_introduced="2024-13"), "got '2024-13'"),
    ("TA112", dict(tags=("llm",)), "'tags' holds 'llm'"),
    ("TA112", dict(tags="with-llm"), "must be a list of strings"),
    ("TA113", dict(method_class="system"), "declare it with MethodMetadata.system(...)"),
    ("TA114", dict(method_type="baseline", can_hpo=None, is_bag=False), "'ag_key' is only for configs"),
    (
        "TA114",
        dict(method_type="portfolio", ag_key=None, can_hpo=True, is_bag=False),
        "can_hpo=True is only for configs",
    ),
    ("TA115", dict(cache_type="r2", cache_kwargs={"bucket": "b"}), "cache_kwargs is missing 'prefix'"),
    (
        "TA115",
        dict(cache_type="local", cache_kwargs={"bucket": "b", "prefix": "p"}),
        "'local' cannot have bucket and prefix",
    ),
    ("TA115", dict(cache_type="gcs"), "must be one of local, r2, s3"),
    ("TA115", dict(cache_kwargs=["b"]), "must be a dict"),
    ("TA117", dict(compute="tpu"), "'compute' must be one of cpu, gpu (got 'tpu')"),
    ("TA117", dict(is_bag="yes"), "'is_bag' must be True or False"),
    ("TA117", dict(name="Nori (ours)"), "'name' is not allowed on a config"),
    ("TA117", dict(method=""), "'method' must be a non-empty string"),
    ("TA203", dict(validation_protocol="8-fold"), "validation protocol '8-fold'"),
]


@pytest.mark.parametrize("code, change, message", FIELD_CASES)
def test_field_rule_fails_with_location(code, change, message):
    bad = attrs.evolve(GOOD, **change)
    verdict = assert_fails(run(code, SimpleNamespace(metadata=bad), action="precommit-info"), code, message)
    assert verdict.findings[0].path == "models/nori/info.py" and verdict.findings[0].line == 3


@pytest.mark.parametrize("code", sorted({c for c, _, _ in FIELD_CASES}))
def test_field_rule_passes_on_good_metadata(code):
    assert_passes(run(code, SimpleNamespace(metadata=GOOD), action="precommit-info"), code)


def test_ta119_a_legacy_s3_declaration_is_not_processed():
    legacy = attrs.evolve(
        GOOD, cache_type="s3", cache_kwargs={"bucket": "tabarena", "prefix": "cache", "upload_as_public": True}
    )
    verdict = assert_fails(
        run("TA119", SimpleNamespace(metadata=legacy), action="process"), "TA119", "declares the legacy s3 cache"
    )
    assert verdict.findings[0].path == "models/nori/info.py"
    assert_passes(run("TA119", SimpleNamespace(metadata=GOOD), action="process"), "TA119")
    r2 = attrs.evolve(GOOD, cache_kwargs={"bucket": "tabarena", "prefix": "cache"})
    assert_passes(run("TA119", SimpleNamespace(metadata=r2), action="process"), "TA119")
    assert "precommit-info" not in BY_CODE["TA119"].actions


def test_field_rules_pass_on_valid_variants():
    variants = [
        attrs.evolve(GOOD, date="2024-02-29", date_introduced="2024", tags=("closed-source-api", "with-llm")),
        attrs.evolve(GOOD, date_introduced="2024-03-31", cache_kwargs={"bucket": "b", "prefix": "p"}),
        MethodMetadata(
            method="AutoX",
            suite="autox-1",
            method_type="baseline",
            method_class="system",
            name="AutoX",
            constructor="system",
            validation_protocol="system",
        ),
        MethodMetadata(method="Port", suite="port-1", method_type="portfolio", has_raw=False, name="Port"),
        # TabArena groups a portfolio with the systems this way (only a system config is refused)
        MethodMetadata(method="Port", suite="port-1", method_type="portfolio", method_class="system", name="Port"),
    ]
    codes = ["TA101", "TA110", "TA111", "TA112", "TA113", "TA114", "TA115", "TA117", "TA203"]
    for md in variants:
        verdicts = evaluate_rules([BY_CODE[c] for c in codes], SimpleNamespace(metadata=md), action="precommit-info")
        for code in codes:
            assert_passes(verdicts, code)


def test_precommit_rules_read_only_the_metadata():
    """Helper D runs them on facts that have .metadata and nothing else."""
    precommit = [r for r in RULES if "precommit-info" in r.actions]
    assert {r.code for r in precommit} == {
        "TA101",
        "TA110",
        "TA111",
        "TA112",
        "TA113",
        "TA114",
        "TA115",
        "TA117",
        "TA118",
        "TA203",
    }
    verdicts = evaluate_rules(precommit, SimpleNamespace(metadata=GOOD), action="precommit-info")
    assert all(v.outcome is Outcome.PASSED for v in verdicts.values())


def test_metadata_present():
    assert_fails(
        run("TA116", SimpleNamespace(metadata=None, inference=FakeInference())), "TA116", "pass --method-metadata"
    )
    assert_fails(run("TA116", BadRef()), "TA116", "cannot read it")
    assert_fails(run("TA116", SimpleNamespace()), "TA116", "gathered no metadata")
    assert_passes(run("TA116", facts()), "TA116")


def test_an_unreadable_info_py_fails_ta116_at_its_line_and_column(tmp_path):

    path = tmp_path / "info.py"
    path.write_text("m = MethodMetadata.config(method='M', suite='s', colour='red')\n")

    class Facts:
        @property
        def metadata(self):
            return metadata_load.load(f"{path}:m")

    verdict = assert_fails(run("TA116", Facts()), "TA116", "does not accept 'colour'")
    assert (verdict.findings[0].path, verdict.findings[0].line, verdict.findings[0].col) == (str(path), 1, 50)


def test_bad_reference_fails_only_ta116_never_crashes_the_others():
    verdicts = evaluate_rules(RULES, BadRef(), action="process", options=options_of("process"))
    assert verdicts["TA116"].outcome is Outcome.FAILED
    assert not [v for v in verdicts.values() if v.outcome is Outcome.CRASHED]
    assert {c for c, v in verdicts.items() if v.outcome is Outcome.FAILED} == {"TA116"}


# --------------------------------------------------------------------------- against the raw results

MISMATCH_CASES = [
    ("TA102", GOOD, dict(inferred_method="TA-Other"), "method: inferred='TA-Other' (raw) != provided='Nori'"),
    ("TA103", GOOD, dict(method_type="baseline"), "method_type: inferred='baseline'"),
    ("TA104", GOOD, dict(ag_key="TA-OTHER"), "ag_key: inferred='TA-OTHER'"),
    ("TA105", GOOD, dict(compute="gpu"), "compute: inferred='gpu' (raw) != provided='cpu'"),
    ("TA106", attrs.evolve(GOOD, can_hpo=None), {}, "can_hpo: inferred=False (raw) != provided=True"),
    ("TA107", attrs.evolve(GOOD, is_bag=False), {}, "is_bag: inferred=True (raw) != provided=False"),
    (
        "TA108",
        attrs.evolve(GOOD, config_default="Nori_c1_BAG_L1"),
        {},
        "config_default: inferred='Nori_c1_default_BAG_L1' (raw) != provided='Nori_c1_BAG_L1'",
    ),
    ("TA109", attrs.evolve(GOOD, model_key="NORI"), {}, "model_key: inferred='TA-NORI' (raw) != provided='NORI'"),
    (
        "TA201",
        attrs.evolve(GOOD, validation_protocol=None),
        {},
        "the raw results record '8x1' but info.py does not declare it",
    ),
    (
        "TA201",
        attrs.evolve(GOOD, validation_protocol="16x1"),
        {},
        "validation_protocol: inferred='8x1' (raw) != provided='16x1'",
    ),
    (
        "TA201",
        GOOD,
        dict(validation_protocol=None, validation_protocol_keys=("8x1", "holdout:8x1")),
        "2 validation protocols",
    ),
    ("TA201", GOOD, dict(n_without_protocol=2), "2 raw result(s) record no validation protocol"),
]


@pytest.mark.parametrize("code, md, inferred, message", MISMATCH_CASES)
def test_mismatch_rule_fails(code, md, inferred, message):
    assert_fails(run(code, facts(md, **inferred)), code, message)


@pytest.mark.parametrize("code", sorted({c for c, *_ in MISMATCH_CASES}))
def test_mismatch_rule_passes_when_raw_agrees(code):
    assert_passes(run(code, facts(inferred_method="Nori")), code)


def test_method_name_warns_on_the_ta_prefix():
    verdicts = run("TA102", facts())
    assert_fails(verdicts, "TA102", "only the TA- prefix of the model class differs")
    assert not verdicts["TA102"].blocks


def test_severities_of_the_mismatch_rules():
    assert BY_CODE["TA102"].severity.value == "warning"
    assert BY_CODE["TA109"].severity.value == "info"
    assert {BY_CODE[c].severity.value for c in ("TA103", "TA104", "TA105", "TA106", "TA107", "TA108")} == {"error"}
    verdicts = run("TA102", facts(inferred_method="TA-Other"))
    assert not verdicts["TA102"].blocks


def test_undeclared_config_default_is_info_only():
    md = attrs.evolve(GOOD, config_default=None)
    assert_passes(run("TA108", facts(md)), "TA108")
    row = compare.row_for(md, FakeInference(), "config_default")
    assert (row.severity, row.status, row.inferred) == ("info", "not declared", "Nori_c1_default_BAG_L1")


def test_config_default_only_compared_for_single_config_runs():
    md = attrs.evolve(GOOD, config_default="Whatever", can_hpo=True)
    assert_passes(run("TA108", facts(md, raw_config_default=None, can_hpo=True)), "TA108")


def test_rows_skip_unknown_values_and_config_fields_for_baselines():
    baseline = MethodMetadata(method="Preset", suite="p-1", method_type="baseline", name="Preset")
    fields = [r.field for r in compare.rows(baseline, FakeInference(method_type="baseline", compute=None))]
    assert fields == ["method", "method_type", "validation_protocol"]


def test_config_fields_are_not_compared_when_the_raw_results_are_not_configs():
    rows = compare.rows(GOOD, FakeInference(method_type="mixed"))
    assert [r.field for r in rows] == ["method", "method_type", "compute", "validation_protocol"]
    assert "mix configs and baselines" in rows[1].message
    assert_fails(run("TA103", facts(method_type="mixed")), "TA103", "keep them in separate directories")
    assert_passes(run("TA106", facts(method_type="baseline", can_hpo=True)), "TA106")


def test_legacy_raw_passes_undeclared_protocol():
    md = attrs.evolve(GOOD, validation_protocol=None)
    verdicts = evaluate_rules(
        [BY_CODE["TA201"], BY_CODE["TA202"]],
        facts(md, validation_protocol=None, validation_protocol_keys=()),
        options=options_of("process", expect_validation_protocol="tabarena"),
    )
    assert_passes(verdicts, "TA201")
    assert_passes(verdicts, "TA202")


def test_mismatch_rules_skip_when_the_raw_data_is_not_one_method():
    verdicts = evaluate_rules([BY_CODE["TA103"]], facts(methods=("A", "B"), method_type="baseline"))
    assert_passes(verdicts, "TA103")


# --------------------------------------------------------------------------- official protocol


@pytest.mark.parametrize("key", ["holdout:8x1", "outer", "custom", "custom:3x1", "bag-child-holdout:8x1"])
def test_unofficial_keys_cannot_be_submitted(key):
    md = attrs.evolve(GOOD, validation_protocol=key)
    facts_obj = facts(md, validation_protocol=key, validation_protocol_keys=(key,))
    verdicts = run("TA202", facts_obj, expect_validation_protocol="tabarena")
    assert_fails(verdicts, "TA202", "cannot be submitted as an official result")
    assert_passes(run("TA202", facts_obj), "TA202")  # without --expect it is processed as a custom run


def test_expected_protocol_is_asserted():
    beyond = "8x1+tiny5x5<=500+task-specific+adapt-classes"
    assert_fails(
        run("TA202", facts(), expect_validation_protocol="beyondarena"), "TA202", f"expects {beyond!r}, got '8x1'"
    )
    assert_fails(run("TA202", facts(), expect_validation_protocol="3x1"), "TA202", "expects '3x1'")
    assert_fails(run("TA202", facts(), expect_validation_protocol="nonsense"), "TA202", "--expect-validation-protocol")
    assert_passes(run("TA202", facts(), expect_validation_protocol="tabarena"), "TA202")
    assert_passes(run("TA202", facts()), "TA202")


def test_systems_are_exempt_from_the_official_protocol():
    system = MethodMetadata(method="AutoX", suite="a-1", method_type="baseline", method_class="system", name="AutoX")
    f = facts(system, validation_protocol="outer", validation_protocol_keys=("outer",))
    assert_passes(run("TA202", f, expect_validation_protocol="tabarena"), "TA202")


def test_upload_without_raw_judges_the_declared_key():
    md = attrs.evolve(GOOD, validation_protocol="holdout:8x1")
    expect = {"expect_validation_protocol": "tabarena"}
    assert_fails(
        run("TA202", SimpleNamespace(metadata=md), action="upload", **expect),
        "TA202",
        "from info.py cannot be submitted",
    )
    assert_passes(run("TA202", SimpleNamespace(metadata=GOOD), action="upload", **expect), "TA202")


# --------------------------------------------------------------------------- --ignore-metadata-mismatch


def test_ignore_metadata_mismatch_becomes_recorded_waivers():

    today = dt.date(2026, 3, 1)
    ctx = RunContext(
        action="process",
        options=options_of("process"),
        config=Config(),
        today=today,
        facts=facts(method_type="baseline", compute="gpu"),
        target="Nori@nori-2026",
    )
    waivers = compare.metadata_mismatch_waivers(ctx, today)
    assert [w.rule for w in waivers] == list(compare.MISMATCH_RULES)
    assert {(w.target, w.expires, w.reason) for w in waivers} == {
        ("*", today, "--ignore-metadata-mismatch given on the command line")
    }
    assert all(w.owner for w in waivers)
    ctx.extra_waivers.extend(waivers)
    verdicts = {v.code: v for v in evaluate([(r, r.severity) for r in RULES], ctx, [r.code for r in RULES])}
    assert verdicts["TA103"].outcome is Outcome.WAIVED and verdicts["TA105"].outcome is Outcome.WAIVED
    assert verdicts["TA103"].findings, "the findings are still reported"
    assert ctx.waiver_report.used["TA103"] == ["TA103:*"]
    assert not verdicts["TA103"].blocks


# --------------------------------------------------------------------------- raw-data rules (in-process facts)


@attrs.frozen
class Issue:
    dataset: str = "anneal"
    split_idx: int = 2
    framework: str = "TA-Nori_c1_default_BAG_L1"
    kind: str = "test"
    pct: float = 4.99
    path: str = "TA-Nori_c1_default_BAG_L1/363614/0_2/results.pkl"


RAW_CASES = [
    (
        "TA301",
        dict(errors=(("a/1/0_0/results.pkl", "corrupt gzip data"),)),
        "a/1/0_0/results.pkl:1:1: cannot be read: corrupt gzip data",
    ),
    ("TA302", dict(methods=("TA-Nori", "TA-Other")), "holds 2 methods (TA-Nori, TA-Other)"),
    ("TA302", dict(methods=()), "no readable result"),
    (
        "TA303",
        dict(missing_cells=(("TA-Nori_c1", "363614", "0_2"),)),
        "1 (config, task, split) cell(s) have no result: TA-Nori_c1 task 363614 split 0_2",
    ),
    (
        "TA304",
        dict(duplicates=(("TA-Nori_c1", "363612", "0_0", ("x/results.pkl", "y/results.pkl")),)),
        "has 2 results: x/results.pkl, y/results.pkl",
    ),
    ("TA305", dict(fidelity=(Issue(),)), "anneal split 2 TA-Nori_c1_default_BAG_L1: 4.990% of test rows not close"),
    ("TA322", dict(index=one_row_index(metric_error=float("nan"))), "p/1/0_0/results.pkl:1:1: metric_error is NaN"),
    (
        "TA307",
        dict(metrics=("mse", "rmse")),
        "the configs are scored on 'mse', which the native engine cannot simulate",
    ),
    (
        "TA308",
        dict(unread=(("p/results.pkl", "method_metadata.info.x holds a a.B, which the reader does not load"),)),
        "p/results.pkl:1:1: method_metadata.info.x holds a a.B",
    ),
]


@pytest.mark.parametrize("code, inferred, message", RAW_CASES)
def test_raw_rule_fails(code, inferred, message):

    assert_fails(evaluate_rules([*rules_raw.RULES, *raw_checks.RULES], facts(**inferred)), code, message)


def test_raw_rules_pass_on_clean_inference():

    verdicts = evaluate_rules([*rules_raw.RULES, *raw_checks.RULES], facts(index=one_row_index()))
    assert all(v.outcome is Outcome.PASSED for v in verdicts.values())


def test_native_simulation_metric_judges_only_native_config_processing():

    rule = [r for r in rules_raw.RULES if r.code == "TA307"]
    other = dict(metrics=("balanced_accuracy",))
    assert_fails(
        evaluate_rules(rule, facts(**other), action="process", options=options_of("process")),
        "TA307",
        "'balanced_accuracy'",
    )
    for passing, options in [
        (facts(**other), options_of("process", engine="tabarena")),
        (facts(**other, method_type="baseline"), options_of("process")),
        (facts(metadata=attrs.evolve(GOOD, method_type="baseline"), **other), options_of("process")),
        (facts(metrics=("log_loss", "roc_auc", "rmse", "mae")), options_of("process")),
    ]:
        assert_passes(evaluate_rules(rule, passing, action="process", options=options), "TA307")


def test_coverage_lists_are_capped():

    cells = tuple((f"c{i}", "1", "0_0") for i in range(25))
    v = assert_fails(evaluate_rules(rules_raw.RULES, facts(missing_cells=cells)), "TA303", "and 5 more")
    assert "c19" in v.message and "c20" not in v.message


def test_single_method_reports_why_the_raw_data_could_not_be_read():

    verdicts = evaluate_rules(rules_raw.RULES, TabArenaFacts(data_dir=None))
    assert_fails(verdicts, "TA302", "no raw data directory given")
    assert not [v for v in verdicts.values() if v.outcome is Outcome.CRASHED]


# --------------------------------------------------------------------------- end to end on generated runs

NORI_INFO = """\
from tabarena.models import MethodMetadata

nori = MethodMetadata.config(
    method="Nori", suite="nori-2026", ag_key="TA-NORI", config_default="Nori_c1_default_BAG_L1",
    can_hpo=False, is_bag=True, compute="cpu", validation_protocol="8x1",
)
wrong = MethodMetadata.config(
    method="Nori", suite="nori-2026", ag_key="NORI", config_default="Nori_c1_BAG_L1",
    can_hpo=False, is_bag=False, compute="gpu",
)
legacy = MethodMetadata.config(
    method="Nori", suite="nori-2026", ag_key="TA-NORI", can_hpo=False, is_bag=True,
)
as_baseline = MethodMetadata.baseline(method="Nori", suite="nori-2026", name="Nori", validation_protocol="8x1")
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):

    root = tmp_path_factory.mktemp("a2runs")
    info = root / "info.py"
    info.write_text(NORI_INFO)
    small = dict(tasks=(363612, 363614), folds=2)
    out = {"info": info}
    out["clean"] = synth.generate_run(root / "clean", validation_protocol="8x1", **small)
    out["legacy"] = synth.generate_run(root / "legacy", validation_protocol=None, **small)
    out["holdout"] = synth.generate_run(root / "holdout", validation_protocol="holdout", **small)
    out["defects"] = synth.generate_run(
        root / "defects",
        configs=2,
        validation_protocol="8x1",
        **small,
        defects=("corrupt", "bad_fields", "fidelity_drift", "missing_split", "duplicate"),
    )
    synth.generate_run(root / "two", validation_protocol="8x1", **small)
    out["two"] = synth.generate_run(
        root / "two", validation_protocol="8x1", name_prefix="TA-Other", ag_key="TA-OTHER", **small
    )
    return out


def judge(runs, run, variable, **options):

    f = TabArenaFacts(
        data_dir=runs[run], metadata_ref=f"{runs['info']}:{variable}", cache_dir=runs[run].parent / "cache"
    )
    return evaluate_rules(
        [*RULES, *rules_raw.RULES, *raw_checks.RULES],
        f,
        action="process",
        options=options_of("process", run_data_dir=str(runs[run]), **options),
    )


def test_clean_run_with_matching_metadata_passes(runs):
    verdicts = judge(runs, "clean", "nori", expect_validation_protocol="tabarena")
    failing = {c: v.message for c, v in verdicts.items() if v.outcome is not Outcome.PASSED}
    assert list(failing) == ["TA102"], failing  # the TA- prefix: a warning only
    assert not any(v.blocks for v in verdicts.values())


def test_mismatched_metadata_fails_each_field(runs):
    verdicts = judge(runs, "clean", "wrong")
    assert_fails(verdicts, "TA104", "ag_key: inferred='TA-NORI' (raw) != provided='NORI'")
    assert_fails(verdicts, "TA105", "compute: inferred='cpu' (raw) != provided='gpu'")
    assert_fails(verdicts, "TA107", "is_bag: inferred=True (raw) != provided=False")
    assert_fails(verdicts, "TA108", "inferred='Nori_c1_default_BAG_L1' (raw) != provided='Nori_c1_BAG_L1'")
    assert_fails(verdicts, "TA109", "model_key")
    assert_fails(verdicts, "TA201", "the raw results record '8x1' but info.py does not declare it")
    assert_passes(verdicts, "TA103")
    assert_passes(verdicts, "TA106")


def test_config_run_declared_as_baseline_fails_method_type(runs):
    assert_fails(
        judge(runs, "clean", "as_baseline"), "TA103", "method_type: inferred='config' (raw) != provided='baseline'"
    )


def test_legacy_raw_passes_without_a_declared_protocol(runs):
    verdicts = judge(runs, "legacy", "legacy", expect_validation_protocol="tabarena")
    assert_passes(verdicts, "TA201")
    assert_passes(verdicts, "TA202")
    assert_fails(judge(runs, "clean", "legacy"), "TA201", "does not declare it")


def test_holdout_run_cannot_be_official(runs):
    verdicts = judge(runs, "holdout", "nori", expect_validation_protocol="tabarena")
    assert_fails(
        verdicts, "TA202", "'holdout:8x1' (holdout) from the raw results cannot be submitted as an official result"
    )
    assert_fails(verdicts, "TA201", "inferred='holdout:8x1' (raw) != provided='8x1'")


def test_defective_run_fails_the_raw_rules(runs):
    verdicts = judge(runs, "defects", "nori")
    assert_fails(verdicts, "TA301", "corrupt gzip data")
    assert_fails(verdicts, "TA303", "cell(s) have no result")
    assert_fails(verdicts, "TA304", "has 2 results")
    v = assert_fails(verdicts, "TA305", "of test rows not close")
    assert v.findings[0].path.endswith("results.pkl")
    assert_fails(verdicts, "TA322", "metric_error is NaN")
    assert_fails(verdicts, "TA320", "task_metadata.fold is not an integer")
    assert_passes(verdicts, "TA302")


def test_two_methods_in_one_directory_fail_single_method(runs):
    verdicts = judge(runs, "two", "nori")
    assert_fails(verdicts, "TA302", "holds 2 methods (TA-Nori, TA-Other)")
    assert verdicts["TA104"].outcome is Outcome.PASSED  # not judged on a mix: TA302 blocks instead
    assert not [v for v in verdicts.values() if v.outcome is Outcome.CRASHED]


def test_bad_reference_on_a_real_run_fails_only_metadata_present(runs):

    f = TabArenaFacts(data_dir=runs["clean"], metadata_ref=f"{runs['info']}:missing")
    verdicts = evaluate_rules([*RULES, *rules_raw.RULES], f, action="process", options=options_of("process"))
    assert_fails(verdicts, "TA116", "no MethodMetadata declaration is assigned to 'missing'")
    assert {c for c, v in verdicts.items() if v.blocks} == {"TA116"}


def test_info_rules_never_crash_on_odd_field_values():
    """Whatever literals an info.py holds, the rules report them; none raises."""
    odd = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.text(max_size=12),
        st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=3),
        st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=2),
    )
    # every declared field but the method (drawn apart), the artifact flags, reference_url and display_name
    names = [
        name
        for name in FIELDS
        if name not in ("method", "has_raw", "has_processed", "has_results", "reference_url", "display_name")
    ]
    rules = [r for r in RULES if "precommit-info" in r.actions or r.code == "TA202"]

    @settings(max_examples=150, deadline=None)
    @given(st.fixed_dictionaries({}, optional={n: odd for n in names}), odd)
    def check(fields, method):
        md = MethodMetadata(method=method, **fields)
        verdicts = evaluate_rules(rules, SimpleNamespace(metadata=md), action="upload", options=options_of("upload"))
        crashed = [v.message for v in verdicts.values() if v.outcome is Outcome.CRASHED]
        assert not crashed

    check()
