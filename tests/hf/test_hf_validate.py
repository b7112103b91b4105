"""`checks hf validate` judges drafts with rule codes like every checker; the bundle's validation.txt keeps the
skill's PASS/FAIL contract and adds stricter checks; hostile YAML is refused."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from checks import io
from checks.testing import run_cli
from hfmigrate_checks.drafts import validate
from hfmigrate_checks.evalresults.emit import Literal, emit_yaml, yaml_number
from hfmigrate_checks.source.ledger import NUMBER

BENCH = "Idavidrein/gpqa"
GOOD = """- dataset:
    id: Idavidrein/gpqa
    task_id: diamond
  value: 41.2
  date: "2025-01-15"
  source:
    url: https://example.org/board
    name: Board
"""


def bundle_with(tmp_path, files: dict[str, str]):
    root = tmp_path / "bundle"
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "drafts").mkdir(parents=True, exist_ok=True)
    return root


def cli(bundle, *tasks, bench=BENCH, more=()):
    args = ["hf", "validate", str(bundle), "--benchmark-id", bench, *more]
    for t in tasks or ("diamond", "main"):
        args += ["--task-id", t]
    return run_cli(args, cwd=bundle.parent)


def test_a_valid_bundle_passes_silently_and_says_so_with_v(tmp_path):
    root = bundle_with(
        tmp_path,
        {
            "drafts/a--m/.eval_results/gpqa.yaml": GOOD,
            "drafts/a--m/.eval_results/notes.yml": "ignored: true",
            "drafts/a--m/other/x.yaml": "ignored: [",
            "drafts/b--n/.eval_results/gpqa.yaml": GOOD.replace("diamond", "main"),
        },
    )
    result = cli(root)
    assert (result.exit_code, result.stdout) == (0, "")
    assert cli(root, more=("-v",)).stdout.startswith("All checks passed! (")
    shown = cli(root, more=("--show-files",)).stdout.split()
    assert shown == ["bundle/drafts/a--m/.eval_results/gpqa.yaml", "bundle/drafts/b--n/.eval_results/gpqa.yaml"]


def test_problems_are_located_findings_with_rule_codes_and_exit_one(tmp_path):
    bad = GOOD.replace("41.2", '"41.2*"').replace("diamond", "overall")
    other = GOOD.replace("    id: Idavidrein/gpqa", "    id: cais/hle")
    root = bundle_with(
        tmp_path,
        {
            "drafts/a--m/.eval_results/gpqa.yaml": bad,
            "drafts/b--n/.eval_results/gpqa.yaml": GOOD,
            "drafts/c--o/.eval_results/hle.yaml": other,
        },
    )
    result = cli(root)
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    a, c = "bundle/drafts/a--m/.eval_results/gpqa.yaml", "bundle/drafts/c--o/.eval_results/hle.yaml"
    assert f"{a}:3:5: HF102 entry 1: task_id 'overall' is not declared in eval.yaml (declared: diamond, main)" in lines
    assert f"{a}:4:3: HF201 entry 1: value must be a number (got '41.2*')" in lines
    assert f"{c}:2:5: HF507 entry 1: dataset.id must be 'Idavidrein/gpqa' (got 'cais/hle'); fix the id, or " in (
        result.stdout
    )
    assert not [line for line in lines if "b--n" in line]
    assert lines[-1] == "Found 4 problems in 2 files (4 blocking); exit 1", result.stdout
    for fmt in ("json", "junit", "sarif", "github"):
        assert "HF201" in cli(root, more=("--format", fmt)).stdout, fmt


def test_a_missing_bundle_or_an_empty_one_is_a_usage_error(tmp_path):
    root = bundle_with(tmp_path, {})
    result = cli(tmp_path / "bundel")
    assert result.exit_code == 2 and result.stdout == ""
    assert "bundel/drafts: no such directory; did you mean " in result.stderr and "bundle?" in result.stderr
    result = cli(root)
    assert result.exit_code == 2 and "no drafts/**/.eval_results/*.yaml file below it" in result.stderr


def test_a_draft_that_does_not_parse_is_an_unreadable_input(tmp_path):
    root = bundle_with(tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": "- dataset: [\n"})
    result = cli(root)
    assert result.exit_code == 2
    first = result.stdout.splitlines()[0]
    assert first.startswith("bundle/drafts/a--m/.eval_results/gpqa.yaml:2:1: error cannot parse YAML"), first


def test_task_id_and_benchmark_are_required_options(tmp_path):
    result = run_cli(["hf", "validate", str(tmp_path), "--benchmark-id", BENCH])
    assert result.exit_code == 2 and "--task-id" in result.stderr


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda t: t.replace('"2025-01-15"', "2025-01-15"), "date must be a quoted string"),
        (lambda t: t.replace('"2025-01-15"', '"2025-02-30"'), "date must be a real ISO-8601 date"),
        (lambda t: t.replace('"2025-01-15"', "2025-02-30"), "'date' must be a real calendar date (got '2025-02-30')"),
        (lambda t: t + "  extra: 1\n", "unknown key(s) extra"),
        (
            lambda t: t.replace("    task_id: diamond\n", "    task_id: diamond\n    revision: main\n"),
            "dataset.revision must be a 40-character lowercase hex commit sha",
        ),
        (
            lambda t: t.replace("    url: https://example.org/board\n", ""),
            "source.url is required when source is present",
        ),
        (lambda t: t.replace("https://example.org/board", "ftp://x"), "source.url must be an absolute http(s) URL"),
        (lambda t: t.replace("41.2", ".nan"), "value must be finite"),
        (lambda t: t.replace("41.2", "true"), "value must be a number"),
        (lambda t: t + t, "duplicate dataset/task pair"),
        (lambda t: t.replace("Idavidrein/gpqa", "other/bench"), "dataset.id must be 'Idavidrein/gpqa'"),
        (lambda t: "[]\n", "the root must be a non-empty YAML list"),
        (lambda t: "- [\n", "cannot parse YAML"),
    ],
)
def test_stricter_checks(tmp_path, mutate, message):
    root = bundle_with(tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": mutate(GOOD)})
    text, code = validate.validate_bundle(root, BENCH, ["diamond", "main"])
    assert code == 1 and message in text, text


def test_full_sha_revision_passes(tmp_path):
    text = GOOD.replace("    task_id: diamond\n", "    task_id: diamond\n    revision: " + "a" * 40 + "\n")
    root = bundle_with(tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": text})
    assert validate.validate_bundle(root, BENCH, ["diamond"])[1] == 0


def test_duplicates_across_files_of_one_model(tmp_path):
    root = bundle_with(
        tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": GOOD, "drafts/a--m/.eval_results/gpqa_tools.yaml": GOOD}
    )
    text, code = validate.validate_bundle(root, BENCH, ["diamond"])
    assert code == 1
    assert "dataset/task pair ('Idavidrein/gpqa', 'diamond') is already in drafts/a--m/.eval_results/gpqa.yaml" in text


def test_alias_bomb_is_refused_quickly(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(20)
    )
    with pytest.raises(io.YamlError, match="anchors and aliases are not allowed"):
        io.loads_yaml(bomb)
    root = bundle_with(tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": bomb})
    text, code = validate.validate_bundle(root, BENCH, ["diamond"])
    assert code == 1 and "cannot parse YAML: anchors and aliases are not allowed (&a) at line 1" in text


def test_huge_deep_and_duplicate_key_yaml_is_refused(tmp_path):
    with pytest.raises(io.YamlError, match="more than the"):
        io.loads_yaml("x" * (io.MAX_BYTES + 1))
    with pytest.raises(io.YamlError, match="nested deeper than"):
        io.loads_yaml("[" * 200 + "]" * 200)
    with pytest.raises(io.YamlError, match="duplicate key 'value'"):
        io.loads_yaml("value: 1\nvalue: 2\n")
    with pytest.raises(io.YamlError, match="NUL"):
        io.loads_yaml("a: b\x00")
    with pytest.raises(io.YamlError):
        io.loads_yaml("!!python/object/apply:os.system ['echo hi']")
    with pytest.raises(io.YamlError, match="special characters are not allowed"):
        io.loads_yaml('notes: "a\x1fb"')
    big = tmp_path / "bundle" / "drafts" / "a--m" / ".eval_results" / "gpqa.yaml"
    big.parent.mkdir(parents=True)
    big.write_text("# " + "x" * (io.MAX_BYTES + 10))
    text, code = validate.validate_bundle(tmp_path / "bundle", BENCH, ["diamond"])
    assert code == 1 and "byte limit" in text


def test_symlinked_draft_is_not_followed(tmp_path):
    outside = tmp_path / "secret.yaml"
    outside.write_text(GOOD)
    root = bundle_with(tmp_path, {"drafts/a--m/.eval_results/gpqa.yaml": GOOD})
    (root / "drafts/a--m/.eval_results/link.yaml").symlink_to(outside)
    text, _ = validate.validate_bundle(root, BENCH, ["diamond"])
    assert "link.yaml" not in text and "Checked 1 draft file(s)" in text


@pytest.mark.parametrize(
    "value", ["x", 'a "quoted" \\ string', "2025-01-15", "yes", "null", "- item", "#c", "é ü \u2028"]
)
def test_emitter_round_trips_strings(value):
    entries = [{"dataset": {"id": BENCH, "task_id": value}, "value": 1.5, "notes": value, "source": {}}]
    assert io.loads_yaml(emit_yaml(entries)) == entries


@given(st.from_regex(NUMBER, fullmatch=True).filter(lambda t: math.isfinite(float(t))))
def test_printed_numbers_stay_the_same_number_in_yaml(text):
    value = io.loads_yaml(f"v: {yaml_number(text)}")["v"]
    assert not isinstance(value, (bool, str)) and float(value) == float(text)


def test_emitter_keys_that_yaml_would_retype_are_quoted():
    data = [{"Yes": 1, "ON": 2, 3: "x", "plain_key": None, "with space": True}]
    assert io.loads_yaml(emit_yaml(data)) == data


def test_emitter_writes_the_house_style():
    """Strings double-quoted, plain keys, the printed number as printed, sequences indented under their key."""
    entries = [
        {
            "dataset": {"id": BENCH, "task_id": "diamond"},
            "value": Literal("71.20"),
            "date": "2025-01-15",
            "source": {"url": "https://x.org/a", "name": "Board"},
            "tags": ["a", "yes"],
            "Yes": None,
            "notes": {},
        }
    ]
    assert emit_yaml(entries) == (
        '- dataset:\n    id: "' + BENCH + '"\n    task_id: "diamond"\n  value: 71.20\n  date: "2025-01-15"\n'
        '  source:\n    url: "https://x.org/a"\n    name: "Board"\n  tags:\n    - "a"\n    - "yes"\n'
        '  "Yes": null\n  notes: {}\n'
    )
