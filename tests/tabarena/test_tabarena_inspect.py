"""``checks inspect`` on generated runs, through the real CLI."""

from __future__ import annotations

import json

import pytest

from checks.testing import run_cli
from tabarena_checks.synth import generate as synth

INFO = """\
from tabarena.models import MethodMetadata

nori = MethodMetadata.config(method="Nori", suite="nori-2026", ag_key="TA-NORI", can_hpo=True, is_bag=True,
                             compute="gpu", validation_protocol="8x1")
bad = MethodMetadata.config(method="Nori", ag_key="TA-NORI", date="2026-02-30", validation_protocol="8x01")
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("a2inspect")
    data = synth.generate_run(
        root / "run",
        configs=2,
        tasks=(363612, 363614),
        folds=2,
        validation_protocol="8x1",
        defects=("corrupt", "missing_split"),
    )
    synth.generate_run(
        root / "run", tasks=(363612,), folds=2, kind="baseline", name_prefix="AutoX", validation_protocol="system"
    )
    (root / "info.py").write_text(INFO)
    return data, root / "info.py"


def inspect(*args, cwd):
    return run_cli(["inspect", *map(str, args)], cwd=cwd)


def test_json_report_per_method(run, tmp_path):
    data, _ = run
    result = inspect(data, "--format", "json", "--cache-dir", tmp_path / "c", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["version"] == 1  # the schema version, as every other JSON document of checks carries
    by = {m["method_prefix"]: m for m in doc["methods"]}
    assert sorted(by) == ["AutoX_c1_default", "TA-Nori"]
    nori = by["TA-Nori"]
    assert nori["inferred"]["method_type"] == "config" and nori["inferred"]["can_hpo"] is True
    assert nori["inferred"]["validation_protocol"] == "8x1"
    assert nori["fold_histogram"] == [["8x1", nori["counts"]["results"]]]
    assert nori["counts"]["results_per_config"] == {"TA-Nori_c1_default_BAG_L1": 4, "TA-Nori_r1_default_BAG_L1": 2}
    assert [u["path"] for u in nori["unreadable"]] == ["TA-Nori_r1_default_BAG_L1/363614/0_1/results.pkl"]
    assert {(c["task"], c["split"]) for c in nori["coverage"]["missing_cells"]} == {
        ("363614", "0_0"),
        ("363614", "0_1"),
    }
    assert 'validation_protocol="8x1"' in nori["snippet"] and 'ag_key="TA-NORI"' in nori["snippet"]
    assert nori["comparison"] is None
    autox = by["AutoX_c1_default"]
    assert autox["inferred"]["method_type"] == "baseline"
    assert autox["snippet"].startswith("autox_c1_default = MethodMetadata.baseline(")


def test_json_comparison_rows_carry_severity(run, tmp_path):
    data, info = run
    result = inspect(data, "--format", "json", "--method", "TA-Nori", "--method-metadata", f"{info}:nori", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    (nori,) = json.loads(result.stdout)["methods"]
    rows = {r["field"]: r for r in nori["comparison"]}
    assert rows["compute"] == {
        "field": "compute",
        "inferred": "cpu",
        "declared": "gpu",
        "severity": "error",
        "status": "differs",
        "note": rows["compute"]["note"],
        "rule": "TA105",
    }
    assert rows["method"]["severity"] == "warn" and rows["method"]["status"] == "differs"
    assert rows["model_key"]["severity"] == "info"
    assert "config_default" not in rows  # two configs: not inferred
    assert rows["validation_protocol"]["status"] == "ok"
    assert nori["metadata_problems"] == []


def test_report_lists_problems_in_the_declared_metadata(run, tmp_path):
    data, info = run
    result = inspect(data, "--format", "json", "--method", "TA-Nori", "--method-metadata", f"{info}:bad", cwd=tmp_path)
    (nori,) = json.loads(result.stdout)["methods"]
    assert [p["rule"] for p in nori["metadata_problems"]] == ["TA101", "TA110", "TA203"]
    human = inspect(data, "--method", "TA-Nori", "--method-metadata", f"{info}:bad", cwd=tmp_path).stdout
    assert "problems in the declared metadata: 3" in human
    assert "TA110 date-calendar: 'date' must be a real calendar date YYYY-MM-DD (got '2026-02-30')" in human


def test_human_report_with_metadata(run, tmp_path):
    data, info = run
    result = inspect(data, "--method", "TA-N", "--method-metadata", f"{info}:nori", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "== TA-Nori:" in out and "AutoX" not in out
    assert "fold histogram:\n    8x1: 6" in out
    assert "unreadable files: 1\n    TA-Nori_r1_default_BAG_L1/363614/0_1/results.pkl: " in out
    assert "missing TA-Nori_r1_default_BAG_L1 task 363614 split 0_0" in out
    assert "compute              'cpu'" in out and "differs" in out
    assert "1 error row(s): `checks run process` would fail on compute" in out
    assert 'nori = MethodMetadata.config(\n        method="Nori",\n        suite="nori-2026",' in out


def test_snippet_marks_suite_required_and_renames_config_default(tmp_path):
    data = synth.generate_run(tmp_path / "one", tasks=(363612,), folds=1, validation_protocol="8x1")
    result = inspect(data, cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert 'config_default="Nori_c1_default_BAG_L1"' in result.stdout
    assert "suite=" in result.stdout and "# required: an explicit suite distinct from method" in result.stdout
    assert "can_hpo=False" in result.stdout and "compare" not in result.stdout


def test_legacy_run_snippet_omits_the_protocol(tmp_path):
    data = synth.generate_run(tmp_path / "old", tasks=(363612,), folds=1, validation_protocol=None)
    out = inspect(data, cwd=tmp_path).stdout
    assert "validation_protocol  - (legacy: no record)" in out
    assert "validation_protocol=" not in out


@pytest.mark.parametrize(
    "args, expected",
    [
        (["{missing}"], "does not exist"),
        (["{data}", "--method", "Nope"], "--method 'Nope' matches none of the methods"),
        (["{data}", "--method-metadata", "{info}:absent"], "assigns no 'absent'"),
    ],
)
def test_input_errors_exit_2(run, tmp_path, args, expected):
    data, info = run
    args = [a.format(missing=tmp_path / "nope", data=data, info=info) for a in args]
    result = inspect(*args, cwd=tmp_path)
    assert result.exit_code == 2
    assert expected in result.stderr and "Traceback" not in result.stderr


def test_directory_with_only_unreadable_files_is_reported_not_refused(tmp_path):
    bad = tmp_path / "data" / "X_c1" / "363612" / "0_0"
    bad.mkdir(parents=True)
    (bad / "results.pkl").write_bytes(b"junk")
    result = inspect(tmp_path / "data", "--format", "json", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["methods"] == [] and [u["path"] for u in doc["unreadable"]] == ["X_c1/363612/0_0/results.pkl"]
    human = inspect(tmp_path / "data", cwd=tmp_path).stdout
    assert "no readable result; unreadable files: 1\n    X_c1/363612/0_0/results.pkl: " in human


def test_c1_only_infers_config_default_of_an_hpo_method(run, tmp_path):
    data, _ = run
    plain = json.loads(
        inspect(data, "--format", "json", "--method", "TA-Nori", "--cache-dir", tmp_path / "c", cwd=tmp_path).stdout
    )["methods"][0]
    assert plain["inferred"]["raw_config_default"] is None, "TabArena infers it for single-config runs only"
    c1 = json.loads(
        inspect(
            data, "--format", "json", "--method", "TA-Nori", "--c1-only", "--cache-dir", tmp_path / "c", cwd=tmp_path
        ).stdout
    )["methods"][0]
    assert c1["inferred"]["raw_config_default"] == "TA-Nori_c1_default_BAG_L1"
    assert c1["inferred"]["config_default"] == "Nori_c1_default_BAG_L1", "renamed to the method"
    assert 'config_default="Nori_c1_default_BAG_L1"' in c1["snippet"]
    assert c1["inferred"]["can_hpo"] is True, "the rest is inferred from every config"
