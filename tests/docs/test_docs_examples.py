"""The configuration examples in the README and the shipped rules.toml do what they say, run for real."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest

from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.synth import generate as synth
from tabarena_checks.testing.commands import process_args

ROOT = Path(__file__).resolve().parents[2]
NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
INFO = """\
from tabarena.models import MethodMetadata

nori = MethodMetadata.config(
    method="Nori", suite="nori-2026-11", ag_key="TA-NORI", config_default="Nori_c1_default_BAG_L1",
    can_hpo=False, is_bag=True, compute="cpu", validation_protocol="8x1",
)
"""


def readme_toml() -> str:
    """The README's configuration example: the toml block after 'Configure selection'."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("Configure selection") :]
    return re.search(r"```toml\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def drifting_run(tmp_path_factory):
    """A run whose predictions drift from their bag children (TA305) for method Nori."""
    root = tmp_path_factory.mktemp("readme")
    (root / "info.py").write_text(INFO)
    run = synth.generate_run(
        root / "run", tasks=(363612,), folds=2, validation_protocol="8x1", defects=("fidelity_drift",)
    )
    return root, run


def process(root: Path, run: Path, config: str, *extra: str):
    (root / "rules.toml").write_text(config)
    res = run_cli(
        [
            "-p",
            "tabarena",
            *process_args(run, f"{root / 'info.py'}:nori", root / "cache", "--dry-run", "--format", "json", *extra),
        ],
        env=NO_AUTOLOAD,
        cwd=root,
    )
    return res, json.loads(res.stdout) if res.stdout.startswith("{") else None


def test_the_readme_waiver_covers_the_finding_it_documents(drifting_run):
    root, run = drifting_run
    res, out = process(root, run, readme_toml())
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert out["target"] == "Nori@nori-2026-11"
    verdicts = {v["code"]: v for v in out["verdicts"]}
    assert verdicts["TA305"]["outcome"] == "waived", verdicts["TA305"]
    assert verdicts["TA305"]["findings"] == []  # a waived finding is excused, never counted
    assert all("not close to the prediction rebuilt" in e["finding"]["message"] for e in verdicts["TA305"]["excused"])
    assert verdicts["TA305"]["excused"]
    assert out["record"]["waivers_used"] == ["TA305:Nori@nori-2026-11"]
    assert "TA303" not in verdicts  # the example's ignore applies too
    assert verdicts["CK002"]["outcome"] == "passed"


def test_the_old_example_with_a_bare_method_name_matched_nothing(drifting_run):
    root, run = drifting_run
    old = readme_toml().replace('target = "Nori@nori-2026-11"', 'target = "Nori"')
    assert old != readme_toml()
    _, out = process(root, run, old)
    verdicts = {v["code"]: v for v in out["verdicts"]}
    assert verdicts["TA305"]["outcome"] == "failed"
    assert verdicts["CK002"]["outcome"] == "passed"  # 'Nori' is no target this run saw: not judged unused here


def test_the_shipped_rules_toml_example_waiver_is_valid_when_uncommented(drifting_run):
    root, run = drifting_run
    text = (ROOT / "rules.toml").read_text()
    block = text[text.index("# [[waivers]]") :]
    waiver = "\n".join(line.removeprefix("# ") for line in block.splitlines() if line.startswith("# "))
    res, out = process(root, run, text + "\n" + waiver + "\n")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert out["record"]["waivers_used"] == ["TA305:Nori@nori-2026-11"]


def test_the_layered_selection_example_of_rules_toml_md_holds():
    """docs/rules-toml.md's worked example: each cell of its table is what `checks config` computes for process."""
    text = (ROOT / "docs" / "rules-toml.md").read_text()
    section = text[text.index("A worked example") :]
    example = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    lines = [line for line in section.splitlines() if line.startswith("|")]
    columns = [c.strip() for c in lines[0].strip("|").split("|")][1:]
    rows = {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip("|").split("|")] for line in lines[2:])}
    assert set(rows) >= {"TA110", "TA301", "TA305"} and len(columns) == 5

    def process_rules(toml: str, args: list[str]) -> set[str]:
        with tempfile.TemporaryDirectory() as tmp:
            Path(tmp, "rules.toml").write_text(toml)
            res = run_cli(
                ["-p", "tabarena", "-p", "hfmigrate", "config", "--format", "json", *args], env=NO_AUTOLOAD, cwd=tmp
            )
        assert res.exit_code == ExitCode.OK, res.stderr
        return {code.rstrip("*") for code in json.loads(res.stdout)["selected"]["process"]}

    file_only = example[: example.index("[arenas.")]
    for i, column in enumerate(columns):
        args = " ".join(re.findall(r"`([^`]*)`", column)) if column.startswith("`--") else ""
        chosen = process_rules(file_only if i == 0 else example, args.split())
        for code, cells in rows.items():
            assert (code in chosen) == cells[i].startswith("selected"), (column, code, cells[i])
