"""The benchmark contract: eval.yaml pinned on a local Hub, official check, and a mapping that cannot invent tasks."""

from __future__ import annotations

import json

import pytest

from checks import InputError
from checks.testing import run_cli
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.source import contract
from hfmigrate_checks.testing import LocalHub, write_dataset
from hfmigrate_checks.testing.migration import contract_step

EVAL_YAML = """name: GPQA
description: Graduate-level Google-proof Q&A
evaluation_framework: inspect-ai
tasks:
  - id: diamond
    config: gpqa_diamond
  - id: main
  - id: MathArena/aime_2026
"""
MAPPING = """metric: accuracy
direction: higher_is_better
unit: percent
scale: "0-100"
source_url: https://example.org/board
columns:
  GPQA Diamond: diamond
  GPQA Main: main
ignore_columns: [Average]
"""
TASKS = ("diamond", "main", "MathArena/aime_2026")
SHA = "1" * 40


@pytest.fixture
def hub_root(tmp_path):
    root = tmp_path / "hub"
    write_dataset(root, "Idavidrein/gpqa", {"eval.yaml": EVAL_YAML}, sha=SHA)
    write_dataset(root, "someone/unlisted", {"eval.yaml": EVAL_YAML}, official=False)
    return root


def test_eval_yaml_task_ids_may_contain_slashes():
    spec = contract.parse_eval_yaml(EVAL_YAML, "eval.yaml")
    assert spec.task_ids == TASKS and spec.evaluation_framework == "inspect-ai"


@pytest.mark.parametrize(
    "text, message",
    [
        ("tasks: []", "'tasks' must be a non-empty list"),
        ("tasks:\n  - name: x", "tasks[1].id must be a non-empty string"),
        ("tasks:\n  - id: a\n  - id: a", "tasks[2].id 'a' is declared twice"),
        ("- a", "eval.yaml must be a mapping"),
        ("a: &x 1\nb: *x", "anchors and aliases are not allowed"),
    ],
)
def test_bad_eval_yaml_is_a_clear_error(text, message):
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        contract.parse_eval_yaml(text, "eval.yaml")


@pytest.mark.parametrize(
    "change, message",
    [
        (
            ("  GPQA Main: main\n", "  Mean: overall\n"),
            "task id 'overall' is not declared in eval.yaml (eval.yaml declares "
            "no such aggregate task; never invent an overall/default task)",
        ),
        (("  GPQA Main: main\n", "  GPQA Main:\n"), "columns.GPQA Main: unmapped column"),
        (("  GPQA Main: main\n", "  GPQA Main: gpqa_main\n"), "task id 'gpqa_main' is not declared"),
        (("direction: higher_is_better", "direction: up"), "'direction' must be one of"),
        (("metric: accuracy\n", ""), "'metric' is required"),
        (("unit: percent", "unit: percent\nlower_is_better: true"), "unknown key(s) 'lower_is_better'"),
        (("ignore_columns: [Average]", "ignore_columns: [GPQA Main]"), "both mapped and listed in ignore_columns"),
        (
            ("source_url: https://example.org/board", "source_url: example.org/board"),
            "'source_url' must be an absolute http(s) URL (got 'example.org/board')",
        ),
    ],
)
def test_mapping_refuses_unmapped_and_invented_tasks(change, message):
    text = MAPPING.replace(*change)
    with pytest.raises(InputError) as err:
        contract.parse_mapping(text, "contract.yaml", TASKS)
    assert message in str(err.value) and str(err.value).startswith("contract.yaml: ")


def test_declared_default_task_is_allowed():
    text = MAPPING.replace("  GPQA Main: main\n", "  Overall: default\n")
    assert contract.parse_mapping(text, "m.yaml", ("diamond", "default"))["columns"]["Overall"] == "default"


def _contract(tmp_path, hub_root, benchmark):
    """``checks hf contract BENCHMARK`` on MAPPING against the local Hub; the result and the Hub's requests."""
    (tmp_path / "contract.yaml").write_text(MAPPING)
    with LocalHub(hub_root) as hub:
        args = contract_step(benchmark, str(tmp_path / "contract.yaml"), str(tmp_path / "contract.json"))
        result = run_cli([*args, "--endpoint", hub.endpoint], env={"HF_HUB_DISABLE_TELEMETRY": "1"})
        return result, hub.requests


def test_contract_command_pins_sha_and_round_trips(tmp_path, hub_root):
    result, requests = _contract(tmp_path, hub_root, "Idavidrein/gpqa")
    assert result.exit_code == 0, result.stderr
    assert {r.method for r in requests} <= {"GET", "HEAD"}
    loaded = contract.load(tmp_path / "contract.json")
    assert loaded.dataset_sha == SHA and loaded.official and loaded.task_ids == TASKS
    assert loaded.columns == {"GPQA Diamond": "diamond", "GPQA Main": "main"}
    assert loaded.eval_yaml_url.endswith(f"/datasets/Idavidrein/gpqa/blob/{SHA}/eval.yaml")
    assert loaded.file_name == "gpqa.yaml"
    assert json.loads((tmp_path / "contract.json").read_text())["unit"] == "percent"


def test_contract_refuses_unofficial_benchmark(tmp_path, hub_root):
    result, _ = _contract(tmp_path, hub_root, "someone/unlisted")
    assert result.exit_code == 2
    assert "not in the Hub's official benchmark list" in result.stderr
    assert not (tmp_path / "contract.json").exists()


def test_contract_load_refuses_foreign_json(tmp_path):
    (tmp_path / "c.json").write_text('{"hello": 1}')
    with pytest.raises(InputError, match="not a contract written by `checks hf contract`"):
        contract.load(tmp_path / "c.json")


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("slug", "../../../evil", "'slug' must be lowercase letters"),
        ("benchmark_id", "../x", "'benchmark_id': repo id part '..' breaks the Hub's name grammar"),
        ("task_ids", [], "'task_ids' must be a non-empty list"),
        ("columns", {"Main": "overall"}, "'columns': 'Main' must map to one of the task_ids"),
        ("direction", "up", "'direction' must be one of"),
        ("official", "yes", "'official' must be a bool"),
        ("unit", 5, "'unit' must be a str"),
        ("columns", ["Main"], "incomplete contract"),
    ],
)
def test_hand_edited_contract_is_refused_with_the_field(tmp_path, hub_root, field, value, message):
    (tmp_path / "contract.yaml").write_text(MAPPING)
    with LocalHub(hub_root) as hub:
        with ReadOnlyHub(hub.endpoint) as client:
            good = contract.build(client, "Idavidrein/gpqa", tmp_path / "contract.yaml")
    data = json.loads(good.to_json())
    data[field] = value
    (tmp_path / "contract.json").write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        contract.load(tmp_path / "contract.json")
    assert str(err.value).startswith(f"{tmp_path / 'contract.json'}: ") and message in str(err.value)
