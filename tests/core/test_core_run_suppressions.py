"""CK003 in `checks run`: a suppression is unused only if the run judged the lines it covers.

An info.py holding several declarations: a run judges one of them (`--method-metadata
info.py:nori`). A suppression on a sibling declaration covers nothing this run looked at;
reporting it unused told users to remove a comment the sibling's own run needs.
"""

from __future__ import annotations

import json

import pytest

from checks.testing import run_cli
from tabarena_checks.testing import tabarena_run
from tabarena_checks.testing.commands import process_args

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
SIBLING = """
other = MethodMetadata.config(
    method="Other", suite="other-2026", ag_key="TA-OTHER",
    date="2026-02-30",  # checks: ignore[TA110] copied from the paper as printed
)
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return tabarena_run(tmp_path_factory.mktemp("ck003"))


def process(run, tmp_path, variable: str):
    return run_cli(
        [
            "-p",
            "tabarena",
            *process_args(run.run_dir, f"{run.info}:{variable}", tmp_path / "cache", "--dry-run", "--format", "json"),
        ],
        env=ENV,
        cwd=tmp_path,
    )


def ck003(res) -> list[str]:

    data = json.loads(res.stdout)
    (verdict,) = [v for v in data["verdicts"] if v["code"] == "CK003"]
    return [f"{f['line']}: {f['message']}" for f in verdict["findings"]]


@pytest.fixture
def info(run):
    original = run.info.read_text()
    yield run.info, original
    run.info.write_text(original)


def test_a_siblings_suppression_is_not_unused_in_this_declarations_run(run, info, tmp_path):
    path, original = info
    path.write_text(original + SIBLING)
    res = process(run, tmp_path, "method_metadata")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert ck003(res) == []
    sibling = process(run, tmp_path, "other")  # and the sibling's own run uses it
    assert ck003(sibling) == [] and '"TA110"' in sibling.stdout


def test_an_unused_suppression_on_the_judged_declaration_is_still_reported(run, info, tmp_path):
    path, original = info
    marked = original.replace('compute="cpu",', 'compute="cpu",  # checks: ignore[TA110] no date here')
    assert marked != original
    path.write_text(marked + SIBLING)
    line = marked.splitlines().index(next(x for x in marked.splitlines() if "ignore[TA110]" in x)) + 1
    assert ck003(process(run, tmp_path, "method_metadata")) == [
        f"{line}: suppression of TA110 matched no finding: remove TA110 from it"
    ]
