"""plugins/mteb, built with checks.kit: its six gates, the accept action and the pre-commit hook, on MTEB-format files.

The fixtures (tests/fixtures/mteb) are written for these tests in the format of the MTEB
results repository: MODEL/REVISION/TASK.json and MODEL/REVISION/model_meta.json.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from checks.exitcodes import ExitCode
from checks.testing import run_cli

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "mteb"))

FIXTURE = ROOT / "tests" / "fixtures" / "mteb"
MODEL, REVISION = "acme__tiny-embed", "5f2c0d9e41b7a3c8d6e0f1a2b3c4d5e6f7a8b9c0"
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
LOAD = ("-p", "mteb_checks.plugin")


def cli(tmp_path: Path, *args: str):
    return run_cli([*LOAD, *args], env=ENV, cwd=tmp_path)


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the fixture tree as a submission folder: submission/MODEL/REVISION/*.json."""
    shutil.copytree(FIXTURE, tmp_path / "submission")
    return tmp_path / "submission" / MODEL / REVISION


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new))


def hook(tmp_path: Path, *args: str):
    return cli(tmp_path, "precommit", "mteb", *args)


def test_the_fixture_tree_passes_the_hook_though_model_meta_holds_infinity(tmp_path, tree):
    res = hook(tmp_path, "submission")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert res.stdout == ""


@pytest.mark.parametrize(
    ("file", "old", "new", "line"),
    [
        ("SciFact.json", '"task_name": "SciFact"', '"task_name": "NFCorpus"', "SciFact.json:18:3: MTB101 task_name"),
        ("model_meta.json", '"name": "acme/tiny-embed"', '"name": "acme/base-embed"', "model_meta.json:1:2: MTB102"),
        (
            "SciFact.json",
            '"main_score": 0.61842',
            '"main_score": NaN',
            "SciFact.json:11:9: MTB103 test entry 0: main_score is NaN, not a finite number",
        ),
        ("STS22.json", '"hf_subset": "de"', '"hf_subset": "en"', "STS22.json:9:8: MTB104 test: hf_subset 'en'"),
    ],
)
def test_each_gate_fails_on_its_mistake_at_the_key_it_is_about(tmp_path, tree, file, old, new, line):
    edit(tree / file, old, new)
    res = hook(tmp_path, "submission")
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    assert f"submission/{MODEL}/{REVISION}/{line}" in res.stdout


def test_a_folder_without_model_meta_fails_mtb105(tmp_path, tree):
    (tree / "model_meta.json").unlink()
    res = hook(tmp_path, "submission")
    assert res.exit_code == ExitCode.BLOCKED
    assert res.stdout.count("MTB105 no model_meta.json beside it") == 2


def test_a_file_that_is_not_strict_json_is_one_error_line_exit_2(tmp_path, tree):
    edit(tree / "SciFact.json", '"task_name": "SciFact"', '"task_name": "SciFact",')  # a trailing comma
    edit(tree / "STS22.json", '"scores": {', '"scores": [],\n  "old": {')  # JSON, but not what the gates read
    res = hook(tmp_path, "submission", "--format", "json")
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    unreadable = {Path(u["path"]).name: u for u in json.loads(res.stdout)["unreadable"]}
    assert (unreadable["SciFact.json"]["line"], unreadable["SciFact.json"]["col"]) == (18, 25)
    assert "trailing comma" in unreadable["SciFact.json"]["message"]
    assert unreadable["STS22.json"]["message"] == "/scores is a list, expected an object"
    assert unreadable["STS22.json"]["line"] == 6


def test_a_waiver_names_one_value_by_its_key_path(tmp_path, tree):
    edit(tree / "SciFact.json", '"main_score": 0.61842', '"main_score": NaN')
    target = f"submission/{MODEL}/*/SciFact.json#/scores/test/0/main_score"
    (tmp_path / "rules.toml").write_text(
        f'[[waivers]]\nrule = "MTB103"\ntarget = "{target}"\nreason = "upstream NaN, rerun queued"\n'
        'owner = "ana"\nexpires = 2999-01-01\n'
    )
    res = hook(tmp_path, "submission")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    edit(tree / "SciFact.json", '"main_score": NaN', '"main_score": 0.5')  # fixed: the waiver is now unused
    res = hook(tmp_path, "submission")
    assert "CK002 waiver for MTB103" in res.stdout


# --------------------------------------------------------------------------- the accept action


def accept(tmp_path: Path, *args: str):
    return cli(tmp_path, "run", "mteb-accept", "submission", "--results", "results", *args)


def test_accept_copies_the_submission_into_the_results_tree_once_the_gates_pass(tmp_path, tree):
    res = accept(tmp_path)
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    copied = tmp_path / "results" / MODEL / REVISION
    assert sorted(p.name for p in copied.iterdir()) == ["STS22.json", "SciFact.json", "model_meta.json"]
    assert (copied / "SciFact.json").read_bytes() == (tree / "SciFact.json").read_bytes()
    assert "accepted 3 files into results" in res.stdout
    again = accept(tmp_path)  # identical files are no overwrite
    assert again.exit_code == ExitCode.OK, again.stdout


def test_accept_refuses_to_replace_a_published_score_and_copies_nothing(tmp_path, tree):
    assert accept(tmp_path).exit_code == ExitCode.OK
    published = (tmp_path / "results" / MODEL / REVISION / "SciFact.json").read_bytes()
    edit(tree / "SciFact.json", '0.61842,\n        "ndcg', '0.7,\n        "ndcg')
    res = accept(tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout
    assert "MTB106" in res.stdout and "another version of this file" in res.stdout
    assert (tmp_path / "results" / MODEL / REVISION / "SciFact.json").read_bytes() == published


def test_accept_on_an_unreadable_input_is_exit_2_listing_each_file_once(tmp_path, tree):
    edit(tree / "SciFact.json", '"hf_subset": "default"', "'hf_subset': 'default'")
    res = accept(tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert f"submission/{MODEL}/{REVISION}/SciFact.json:9:9: expected a key in double quotes" in res.stderr
    assert res.stderr.count("SciFact.json") == 1 and "Traceback" not in res.stderr
    assert not (tmp_path / "results").exists()


def test_accept_on_a_folder_without_result_files_is_exit_2_not_a_pass(tmp_path):
    (tmp_path / "submission" / "notes").mkdir(parents=True)
    (tmp_path / "submission" / "notes" / "README.md").write_text("results follow")
    res = accept(tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "submission: no mteb result file (*/*/*.json) below it" in res.stderr


def test_the_plugin_is_under_300_lines_of_code():
    lines = [
        line
        for path in (ROOT / "plugins" / "mteb" / "mteb_checks").glob("*.py")
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    assert len(lines) < 300, len(lines)


def test_the_tutorial_s_code_is_the_plugin_s_code():
    """docs/writing-plugins.md builds this plugin: each block headed `# mteb_checks/FILE.py` is part of that file."""
    text = (ROOT / "docs" / "writing-plugins.md").read_text()
    blocks = re.findall(r"```python\n# (mteb_checks/\S+\.py)\n(.*?)```", text, re.S)
    assert {name for name, _ in blocks} == {
        "mteb_checks/results.py",
        "mteb_checks/rules.py",
        "mteb_checks/plugin.py",
        "mteb_checks/accept.py",
    }
    for name, body in blocks:
        assert body.strip() in (ROOT / "plugins" / "mteb" / name).read_text(), f"the tutorial's {name} differs"
    test_block = re.search(r"```python\n(def test_a_waiver_names_one_value.*?)```", text, re.S).group(1)
    assert test_block.strip() in Path(__file__).read_text()
