"""Configuration files: unknown keys at their line, `extend`, `exclude` for directory walks, the JSON Schema."""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from pathlib import Path

import jsonschema
import pytest

from checks import config_model
from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tests.support.precommit_fixtures import GOOD_INFO, INFO_CASES, write_info

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")
ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "checks" / "rules.schema.json").read_text())
WAIVER = '[[waivers]]\nrule = "{code}"\ntarget = "Nori@*"\nreason = "r"\nowner = "o"\nexpires = 2999-01-01\n'


def checks(cwd, *args):
    return run_cli([*BUILTIN, *args], env=ENV, cwd=cwd)


# --------------------------------------------------------------------------- unknown keys


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            'select = ["TA"]\nextend_select = ["TA1"]\n',
            "line 2: extend_select: unknown key; did you mean 'extend-select'?",
        ),
        (
            'select = ["TA"]\n\n[rules.TA110]\nsevrity = "info"\n',
            "line 4: rules.TA110.sevrity: unknown key; did you mean 'severity'? (valid keys: severity, required)",
        ),
        ("colour = 1\n", "line 1: colour: unknown key (valid keys: select, extend-select, "),
    ],
)
def test_an_unknown_key_is_refused_at_its_line_with_the_closest_and_the_valid_keys(tmp_path, text, expected):
    (tmp_path / "rules.toml").write_text(text)
    res = checks(tmp_path, "rules")
    assert res.exit_code == ExitCode.USAGE_ERROR and f"rules.toml, {expected}" in res.stderr, res.stderr


# --------------------------------------------------------------------------- extend


def test_extend_builds_on_another_file(tmp_path):
    (tmp_path / "rules.toml").write_text(
        'ignore = ["TA112"]\n[rules.TA111]\nseverity = "warning"\n' + WAIVER.format(code="TA110")
    )
    sub = tmp_path / "models"
    sub.mkdir()
    (sub / "rules.toml").write_text(
        'extend = "../rules.toml"\nextend-ignore = ["TA117"]\n[rules.TA114]\nseverity = "info"\n'
    )
    data = json.loads(checks(sub, "config", "--format", "json").stdout)
    assert data["ignore"] == ["TA112"] and data["extend-ignore"] == ["TA117"]  # inherited, and its own
    assert data["rules"] == {"TA111": {"severity": "warning"}, "TA114": {"severity": "info"}}
    assert [w["rule"] for w in data["waivers"]] == ["TA110"]
    assert data["source"]["extends"] == [str(tmp_path / "rules.toml")]
    bad = write_info(sub, "m", INFO_CASES["TA110"][0])  # waived by the base file's waiver
    assert checks(sub, "precommit", "info-py", str(bad)).exit_code == ExitCode.OK


def test_a_key_the_file_sets_replaces_the_bases(tmp_path):
    (tmp_path / "base.toml").write_text('ignore = ["TA112"]\n')
    (tmp_path / "rules.toml").write_text('extend = "base.toml"\nignore = ["TA111"]\n')
    assert json.loads(checks(tmp_path, "config", "--format", "json").stdout)["ignore"] == ["TA111"]


def test_a_change_to_the_base_changes_the_digest_records_carry(tmp_path):
    (tmp_path / "base.toml").write_text('ignore = ["TA112"]\n')
    (tmp_path / "rules.toml").write_text('extend = "base.toml"\n')
    before = json.loads(checks(tmp_path, "config", "--format", "json").stdout)["source"]["sha256"]
    (tmp_path / "base.toml").write_text('ignore = ["TA111"]\n')
    assert json.loads(checks(tmp_path, "config", "--format", "json").stdout)["source"]["sha256"] != before


@pytest.mark.parametrize(
    "files, expected",
    [
        ({"rules.toml": 'extend = "a.toml"\n', "a.toml": 'extend = "rules.toml"\n'}, "is a cycle"),
        ({"rules.toml": 'extend = "gone.toml"\n'}, "rules.toml: extend: "),
        ({"rules.toml": "extend = 3\n"}, "extend: expected the path of another configuration file"),
    ],
)
def test_a_bad_extend_is_refused_naming_the_file(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    res = checks(tmp_path, "rules")
    assert res.exit_code == ExitCode.USAGE_ERROR and expected in res.stderr, res.stderr


def test_local_plugins_are_not_inherited_through_extend(tmp_path):
    (tmp_path / "base.toml").write_text('checks_plugins = ["nowhere_plugin"]\n')
    (tmp_path / "rules.toml").write_text('extend = "base.toml"\n')
    data = json.loads(checks(tmp_path, "config", "--format", "json").stdout)
    assert data["checks_plugins"] == []


# --------------------------------------------------------------------------- directories and exclude


def tree(tmp_path) -> Path:
    """A bad info.py in models/a, one under .venv and node_modules (default excludes), a good one in models/b."""
    for where in ("models/a", "models/.venv/x", "node_modules/m"):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "info.py").write_text(
            "from tabarena.models import MethodMetadata\n" + INFO_CASES["TA110"][0] + "\n"
        )
    write_info(tmp_path, "b", GOOD_INFO)
    return tmp_path


def test_a_directory_stands_for_every_info_py_below_it_less_the_default_excludes(tmp_path):
    res = checks(tree(tmp_path), "precommit", "info-py", ".")
    assert res.exit_code == ExitCode.BLOCKED
    assert [line.split(":")[0] for line in problems(res.stdout)] == ["models/a/info.py"], res.stdout


def test_extend_exclude_adds_and_exclude_replaces_the_defaults(tmp_path):
    tree(tmp_path)
    (tmp_path / "rules.toml").write_text('extend-exclude = ["models/a"]\n')
    assert checks(tmp_path, "precommit", "info-py", ".").exit_code == ExitCode.OK
    (tmp_path / "rules.toml").write_text('exclude = ["models/a"]\n')
    res = checks(tmp_path, "precommit", "info-py", ".")
    assert {line.split(":")[0] for line in problems(res.stdout)} == {
        "models/.venv/x/info.py",
        "node_modules/m/info.py",
    }


def test_a_file_named_on_the_command_line_is_judged_even_if_excluded(tmp_path):
    tree(tmp_path)
    (tmp_path / "rules.toml").write_text('extend-exclude = ["models/a"]\n')
    assert checks(tmp_path, "precommit", "info-py", "models/a/info.py").exit_code == ExitCode.BLOCKED


def test_no_file_or_an_empty_directory_is_an_error_not_a_pass(tmp_path):
    res = checks(tmp_path, "precommit", "info-py")
    assert res.exit_code == ExitCode.USAGE_ERROR and "no file given: name info.py files" in res.stderr
    (tmp_path / "empty").mkdir()
    res = checks(tmp_path, "precommit", "eval-results", "empty")
    assert res.exit_code == ExitCode.USAGE_ERROR and "empty: no .eval_results/*.yaml file below it" in res.stderr


def test_a_directory_of_drafts_is_judged_as_the_hook_would(tmp_path):
    drafts = tmp_path / "drafts/org--m/.eval_results"
    drafts.mkdir(parents=True)
    (drafts / "gpqa.yaml").write_text('- dataset: {id: a/b, task_id: t}\n  value: "x"\n')
    (drafts / "notes.txt").write_text("not a draft")
    res = checks(tmp_path, "precommit", "eval-results", "drafts")
    assert res.exit_code == ExitCode.BLOCKED and "drafts/org--m/.eval_results/gpqa.yaml:2:3: HF201" in res.stdout


# --------------------------------------------------------------------------- checks config


def test_checks_config_shows_what_the_hooks_select(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TA112"]\n')
    selected = json.loads(checks(tmp_path, "config", "--format", "json").stdout)["selected"]
    assert "TA110" in selected["precommit-info"] and "TA112" not in selected["precommit-info"]
    assert "TA118*" in selected["precommit-info"] and "HF201" in selected["precommit-eval-results"]


# --------------------------------------------------------------------------- the JSON Schema


def as_json(value):
    """TOML's dates as the strings a JSON validator (and an editor's TOML plugin) sees."""
    if isinstance(value, dict):
        return {k: as_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_json(v) for v in value]
    return value.isoformat() if isinstance(value, dt.date) else value


def validate(text: str) -> None:
    jsonschema.Draft7Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(as_json(tomllib.loads(text)))


def test_the_schema_lists_exactly_the_keys_the_parser_accepts():
    assert set(SCHEMA["properties"]) == set(config_model.TOP_KEYS)


def test_the_shipped_configuration_and_every_key_validate():
    validate((ROOT / "rules.toml").read_text())
    validate(
        'extend = "../rules.toml"\nselect = ["ALL"]\nextend-select = ["TA3"]\nignore = ["TA112"]\n'
        'extend-ignore = ["HF"]\nexclude = ["build"]\nextend-exclude = ["legacy/*"]\ndecision_log = "x.jsonl"\n'
        'checks_plugins = ["p.py"]\n[per-file-ignores]\n"tests/*" = ["TA110"]\n[rules.TA110]\nseverity = "info"\n'
        '[arenas.tabarena]\nignore = ["TA303"]\n' + WAIVER.format(code="TA110")
    )


@pytest.mark.parametrize(
    "text",
    [
        'extend_select = ["TA1"]\n',
        '[rules.TA110]\nsevrity = "info"\n',
        'select = "TA"\n',
        '[[waivers]]\nrule = "TA110"\n',
    ],
)
def test_the_schema_refuses_what_the_parser_refuses(tmp_path, text):
    with pytest.raises(jsonschema.ValidationError):
        validate(text)
    (tmp_path / "rules.toml").write_text(text)
    assert checks(tmp_path, "rules").exit_code == ExitCode.USAGE_ERROR


def test_an_error_in_the_second_waiver_names_its_own_line(tmp_path):
    good = WAIVER.format(code="TA110")
    bad = WAIVER.format(code="TA111").replace("expires = 2999-01-01", 'expires = "2026-02-30"')
    (tmp_path / "rules.toml").write_text(good + "\n" + bad)
    line = (good + "\n" + bad).splitlines().index('expires = "2026-02-30"') + 1
    res = checks(tmp_path, "rules")
    assert f"rules.toml, line {line}: waivers[1].expires: must be a real calendar date" in res.stderr, res.stderr


def test_an_unknown_code_names_its_line(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["TA"]\n\nignore = ["ZZ9"]\n')
    res = checks(tmp_path, "rules")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "rules.toml, line 3: ignore: 'ZZ9' matches no rule code" in res.stderr, res.stderr


def problems(stdout: str) -> list[str]:
    """A hook's problem lines, without the count line that ends them."""
    return [line for line in stdout.splitlines() if not line.startswith("Found ")]
