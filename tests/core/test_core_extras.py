"""The light install: the extras named in the distribution's metadata, and the error a command
that needs one gives when it is missing (the real hook environment: test_precommit.py)."""

from __future__ import annotations

import sys

import pytest
from tests.support.precommit_fixtures import INFO_CASES, write_info

import tabarena_checks.metadata
from checks import extras
from checks.errors import MissingDependency
from checks.exitcodes import ExitCode
from checks.testing import run_cli

BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_each_heavy_module_belongs_to_its_workflows_extra():
    assert extras.providers("pyarrow") == ["tabarena"]
    assert extras.providers("pyarrow.parquet") == ["tabarena"]
    assert sorted(extras.providers("duckdb")) == ["hf", "tabarena"]
    assert extras.providers("huggingface_hub") == ["hf"]
    for core in ("click", "yaml", "os", "no_such_module"):
        assert extras.providers(core) == []


def test_the_advice_names_the_one_extra_that_provides_everything():
    assert extras.advice(["huggingface_hub", "duckdb"]) == "pip install 'arena-checks[hf]'"
    assert extras.advice(["duckdb"]) == "pip install 'arena-checks[hf]' or pip install 'arena-checks[tabarena]'"
    assert extras.advice(["pyarrow", "huggingface_hub"]) == "pip install 'arena-checks[hf,tabarena]'"
    assert "no_such_module" in extras.advice(["no_such_module"])


def test_require_looks_modules_up_without_importing_them(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # what an installation without pyarrow looks like
    with pytest.raises(MissingDependency, match=r"checks run x needs pyarrow, .*arena-checks\[tabarena\]"):
        extras.require("checks run x", ["json", "pyarrow"])
    extras.require("checks run x", ["json"])


def test_an_action_whose_extra_is_missing_is_refused_before_anything_runs(tmp_path, monkeypatch):
    write_info(tmp_path, "nori", INFO_CASES["TA110"][1])
    monkeypatch.setitem(sys.modules, "duckdb", None)
    res = run_cli(
        [
            *BUILTIN,
            "run",
            "process",
            str(tmp_path),
            "--method-metadata",
            "models/nori/info.py:m",
            "--cache-root",
            str(tmp_path / "cache"),
        ],
        env=ENV,
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "checks run process needs duckdb" in res.stderr and "pip install 'arena-checks[tabarena]'" in res.stderr
    assert not (tmp_path / ".checks").exists()  # refused before evaluation: no decision record


def test_a_command_importing_a_missing_extra_names_it_instead_of_a_traceback(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    res = run_cli([*BUILTIN, "inspect", str(tmp_path)], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "needs pyarrow" in res.stderr and "arena-checks[tabarena]" in res.stderr
    assert "Traceback" not in res.stderr


def test_a_missing_module_that_is_no_extra_stays_an_internal_error(tmp_path, monkeypatch):

    monkeypatch.delattr(tabarena_checks.metadata, "load", raising=False)
    monkeypatch.setitem(sys.modules, "tabarena_checks.metadata.load", None)  # a bug of ours, not an extra
    # the command's module imports it at its top: import that module afresh, as a new process would
    monkeypatch.delitem(sys.modules, "tabarena_checks.report.inspect_cli", raising=False)
    res = run_cli([*BUILTIN, "inspect", str(tmp_path)], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.INTERNAL_ERROR
    # raised while the command's module loads, so the plugin is named: a bug report, never "install an extra"
    assert "tabarena_checks.metadata.load" in res.stderr and "pip install" not in res.stderr
