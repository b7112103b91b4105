"""Where the configuration comes from (rules.toml, .checks.toml, [tool.checks]), its ruff-like keys,
the same keys on the command line, `checks config` and `checks rules` after the configuration."""

from __future__ import annotations

import datetime as dt
import json
import tomllib

import pytest

from checks import config_load, config_model, config_parse, records
from checks.config_model import Layer
from checks.config_select import is_selected
from checks.errors import ConfigError
from checks.exitcodes import ExitCode
from checks.testing import run_cli

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ["-p", "tabarena", "-p", "hfmigrate"]


def toy(cwd, *args, plugins=("toy_plugin",)):
    argv = [a for p in plugins for a in ("-p", p)]
    return run_cli([*argv, "run", "toy", "--marker", str(cwd / "marker"), *args], env=NO_AUTOLOAD, cwd=cwd)


def checks(cwd, *args):
    return run_cli(["-p", "toy_plugin", *args], env=NO_AUTOLOAD, cwd=cwd)


# --------------------------------------------------------------------------- where it is read from


@pytest.mark.parametrize(
    "name, text",
    [
        ("rules.toml", 'ignore = ["TOY001"]\n'),
        (".checks.toml", 'ignore = ["TOY001"]\n'),
        ("pyproject.toml", '[project]\nname = "x"\n\n[tool.checks]\nignore = ["TOY001"]\n'),
    ],
)
def test_each_file_kind_is_read(tmp_path, name, text):
    assert toy(tmp_path, "--fail").exit_code == ExitCode.BLOCKED
    (tmp_path / name).write_text(text)
    res = toy(tmp_path, "--fail")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert records.read(tmp_path / ".checks" / "decisions.jsonl")[-1]["config"]["path"] == str(tmp_path / name)


def test_errors_inside_pyproject_name_the_tool_checks_key(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.checks]\nselect = ["ZZ"]\n[tool.checks.rules.TOY001]\nsevrity = "info"\n'
    )
    res = toy(tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert (
        "pyproject.toml, line 4: tool.checks.rules.TOY001.sevrity: unknown key; did you mean 'severity'?" in res.stderr
    )
    (tmp_path / "pyproject.toml").write_text('[tool.checks]\nselect = ["ZZ"]\n')
    res = toy(tmp_path)
    assert "pyproject.toml, line 2: tool.checks.select: 'ZZ' matches no rule code" in res.stderr


def test_a_pyproject_without_tool_checks_is_not_a_configuration(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n')
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 100\n')
    assert toy(tmp_path, "--fail").exit_code == ExitCode.OK


def test_the_nearest_directory_wins_and_parents_are_not_merged(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n')
    child = tmp_path / "a" / "b"
    child.mkdir(parents=True)
    assert toy(child, "--fail").exit_code == ExitCode.OK  # found upwards
    (tmp_path / "a" / ".checks.toml").write_text('ignore = ["TOY003"]\n')
    res = toy(child, "--fail", "--warn", "--format", "json")
    assert res.exit_code == ExitCode.BLOCKED  # a/.checks.toml is nearer, and it does not ignore TOY001
    codes = {v["code"] for v in json.loads(res.stdout)["verdicts"]}
    assert "TOY001" in codes and "TOY003" not in codes


@pytest.mark.parametrize(
    "pair", [("rules.toml", ".checks.toml"), ("rules.toml", "pyproject.toml"), (".checks.toml", "pyproject.toml")]
)
def test_two_configurations_in_one_directory_are_an_error(tmp_path, pair):
    for name in pair:
        body = '[tool.checks]\nignore = ["TOY001"]\n' if name == "pyproject.toml" else 'ignore = ["TOY001"]\n'
        (tmp_path / name).write_text(body)
    child = tmp_path / "sub"
    child.mkdir()
    res = toy(child, "--fail")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert f"{tmp_path}: {pair[0]} and {pair[1]} both hold a checks configuration" in res.stderr
    assert not (child / "marker").exists()


def test_config_option_accepts_a_pyproject(tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "pyproject.toml").write_text('[tool.checks]\nignore = ["TOY001"]\n')
    res = run_cli(
        [
            "-p",
            "toy_plugin",
            "--config",
            str(other / "pyproject.toml"),
            "run",
            "toy",
            "--marker",
            str(tmp_path / "m"),
            "--fail",
        ],
        env=NO_AUTOLOAD,
        cwd=tmp_path,
    )
    assert res.exit_code == ExitCode.OK, res.stderr
    (other / "pyproject.toml").write_text('[project]\nname = "x"\n')
    res = run_cli(
        ["-p", "toy_plugin", "--config", str(other / "pyproject.toml"), "rules"], env=NO_AUTOLOAD, cwd=tmp_path
    )
    assert res.exit_code == ExitCode.USAGE_ERROR and "has no [tool.checks] table" in res.stderr


# --------------------------------------------------------------------------- keys


def test_extend_select_and_extend_ignore(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["TOY003"]\nextend-select = ["TOY001"]\n')
    res = toy(tmp_path, "--fail", "--format", "json")
    assert res.exit_code == ExitCode.BLOCKED
    assert {v["code"] for v in json.loads(res.stdout)["verdicts"]} >= {"TOY001", "TOY003", "TOY004"}
    (tmp_path / "rules.toml").write_text('ignore = ["TOY003"]\nextend-ignore = ["TOY001"]\n')
    res = toy(tmp_path, "--fail", "--format", "json")
    assert res.exit_code == ExitCode.OK
    assert {v["code"] for v in json.loads(res.stdout)["verdicts"]} & {"TOY001", "TOY003"} == set()
    (tmp_path / "rules.toml").write_text('extend_select = ["TOY001"]\n')  # ruff's spelling only
    assert "extend_select: unknown key" in toy(tmp_path).stderr


def test_per_file_ignores_drop_findings_in_matching_files_only(tmp_path):
    (tmp_path / "rules.toml").write_text('[per-file-ignores]\n"legacy/**/*.py" = ["TOY001"]\n')
    res = toy(tmp_path, "--fail", "--finding-path", "legacy/old/info.py")
    assert res.exit_code == ExitCode.OK, res.stdout
    res = toy(tmp_path, "--fail", "--finding-path", "current/info.py")
    assert res.exit_code == ExitCode.BLOCKED
    res = toy(tmp_path, "--fail")  # a finding without a file is never ignored per file
    assert res.exit_code == ExitCode.BLOCKED
    sub = tmp_path / "legacy"
    sub.mkdir()  # globs are relative to the configuration's directory, not the working directory
    assert toy(sub, "--fail", "--finding-path", "x/info.py").exit_code == ExitCode.OK
    assert toy(sub, "--fail", "--finding-path", "../current/info.py").exit_code == ExitCode.BLOCKED


def test_per_file_ignores_glob_without_slash_matches_the_file_name(tmp_path):
    (tmp_path / "rules.toml").write_text('[per-file-ignores]\n"*_test.py" = ["TOY"]\n')
    assert toy(tmp_path, "--fail", "--finding-path", "deep/down/a_test.py").exit_code == ExitCode.OK
    assert toy(tmp_path, "--fail", "--finding-path", "deep/down/a.py").exit_code == ExitCode.BLOCKED


def test_per_file_ignores_cannot_drop_a_required_rule(tmp_path):
    (tmp_path / "rules.toml").write_text('[per-file-ignores]\n"*.py" = ["TOY004"]\n')
    res = toy(tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "per-file-ignores: TOY004 (toy-required) is a required rule" in res.stderr
    (tmp_path / "rules.toml").write_text('[per-file-ignores]\n"*.py" = ["ZZ9"]\n')
    assert "per-file-ignores.'*.py': 'ZZ9' matches no rule code" in toy(tmp_path).stderr


# --------------------------------------------------------------------------- layers (ruff's rule selection)

FILE = Layer("rules.toml", select=("TA1", "TA3"), ignore=("TA301",))


@pytest.mark.parametrize(
    "layers, expected",
    [
        # one layer: the most specific selector wins, ignore on a tie; no match means not selected
        ([FILE], {"TA101": True, "TA301": False, "TA302": True, "TA201": False}),
        ([Layer("f", select=("TA3",), ignore=("TA3",))], {"TA301": False}),
        ([Layer("f", select=("ALL",), ignore=("TA",), extend_select=("TA3",))], {"TA301": True, "TA101": False}),
        ([Layer("f", select=("ALL",), ignore=("TA301",), extend_select=("TA3",))], {"TA301": False, "TA302": True}),
        # a later layer without select changes only what it names...
        ([FILE, Layer("cli", ignore=("TA302",))], {"TA301": False, "TA302": False, "TA101": True}),
        ([FILE, Layer("cli", extend_select=("TA301",))], {"TA301": True}),
        ([FILE, Layer("cli", extend_select=("TA2",), ignore=("TA201",))], {"TA201": False, "TA202": True}),
        # ...one with select replaces everything below it, the ignores too
        ([FILE, Layer("arena", select=("TA3",))], {"TA301": True, "TA101": False}),
        ([FILE, Layer("arena", select=("TA3",)), Layer("cli", ignore=("TA30",))], {"TA301": False, "TA310": True}),
    ],
)
def test_layers_stack_as_ruffs_rule_selections(layers, expected):
    assert {code: is_selected(code, layers) for code in expected} == expected


def test_an_arena_table_is_a_layer_above_the_file_and_the_command_line_above_both(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n[arenas.toy]\nignore = ["TOY003"]\n')

    def ran(*args):
        res = toy(tmp_path, "--format", "json", *args)
        assert res.exit_code in (ExitCode.OK, ExitCode.BLOCKED), res.stdout + res.stderr
        return {v["code"] for v in json.loads(res.stdout)["verdicts"] if v["code"].startswith("TOY")}

    assert ran() == {"TOY002", "TOY004"}  # the arena's ignore adds to the file's
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n[arenas.toy]\nselect = ["TOY00"]\nignore = ["TOY003"]\n')
    assert ran() == {"TOY001", "TOY002", "TOY004"}  # the arena's select replaced the file's selection, ignore and all
    assert ran("--ignore", "TOY002") == {"TOY001", "TOY004"}  # the command line removes on top
    assert ran("--extend-select", "TOY003") == {"TOY001", "TOY002", "TOY003", "TOY004"}  # or brings back
    assert ran("--select", "TOY003") == {"TOY003", "TOY004"}  # or starts again (required rules stay)
    assert ran("--select", "TOY", "--ignore", "TOY00", "--extend-select", "TOY002") == {"TOY002", "TOY004"}


# --------------------------------------------------------------------------- the command line


def test_command_line_is_the_last_layer_select_replaces_the_rest_add_on_top(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n[arenas.toy]\nselect = ["TOY003"]\n')
    assert toy(tmp_path, "--fail").exit_code == ExitCode.OK
    res = toy(tmp_path, "--fail", "--select", "TOY001,TOY002", "--format", "json")
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr  # --select replaced the arena's select too
    out = json.loads(res.stdout)
    assert {v["code"] for v in out["verdicts"]} == {"CK001", "TOY001", "TOY002", "TOY004"}  # the file's ignore went too
    assert out["record"]["config"]["overrides"] == ["--select=TOY001,TOY002"]
    (tmp_path / "rules.toml").write_text('ignore = ["TOY001"]\n')
    res = toy(tmp_path, "--fail", "--ignore", "TOY003", "--format", "json")  # on top of the file's ignore, as ruff
    assert res.exit_code == ExitCode.OK and {"TOY001", "TOY003"}.isdisjoint(
        v["code"] for v in json.loads(res.stdout)["verdicts"]
    )
    assert (
        toy(tmp_path, "--fail", "--extend-select", "TOY001").exit_code == ExitCode.BLOCKED
    )  # a later layer brings it back
    (tmp_path / "rules.toml").write_text('select = ["TOY003"]\n')
    res = toy(tmp_path, "--fail", "--extend-select", "TOY001", "--format", "json")
    assert {"TOY001", "TOY003"} <= {v["code"] for v in json.loads(res.stdout)["verdicts"]}


def test_command_line_per_file_ignores(tmp_path):
    args = ("--fail", "--finding-path", "gen/x.py")
    assert toy(tmp_path, *args, "--per-file-ignores", "gen/*.py:TOY001").exit_code == ExitCode.OK
    assert toy(tmp_path, *args, "--per-file-ignores", "other/*.py:TOY001").exit_code == ExitCode.BLOCKED
    res = toy(tmp_path, *args, "--per-file-ignores", "gen/*.py")
    assert res.exit_code == ExitCode.USAGE_ERROR and "expected GLOB:CODE" in res.stderr


@pytest.mark.parametrize(
    "args, expected",
    [
        (("--select", "ZZ"), "--select: 'ZZ' matches no rule code"),
        (("--select", ""), "--select: an empty list selects no rule"),
        (("--extend-ignore", "toy001"), "--extend-ignore: expected 'ALL' or a rule code"),
        (("--ignore", "TOY004"), "TOY004 (toy-required) is a required rule"),
    ],
)
def test_command_line_selection_errors(tmp_path, args, expected):
    res = toy(tmp_path, *args)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout
    assert expected in res.stderr
    assert not (tmp_path / "marker").exists()


def test_precommit_commands_take_the_selection_options(tmp_path):
    info = tmp_path / "info.py"
    info.write_text(
        "from tabarena.nips2025_utils.artifacts.method_metadata import MethodMetadata\n"
        'm = MethodMetadata.config(method="Nori", suite="nori-1", ag_key="K", date="2026-02-30")\n'
    )

    def run(*args):
        return run_cli([*BUILTIN, "precommit", "info-py", str(info), *args], env=NO_AUTOLOAD, cwd=tmp_path)

    assert "TA110" in run().stdout
    assert run("--ignore", "TA110").exit_code == ExitCode.OK
    assert run("--per-file-ignores", "info.py:TA110").exit_code == ExitCode.OK
    res = run("--select", "HF")
    assert res.exit_code == ExitCode.NO_RULES, res.stdout + res.stderr


# --------------------------------------------------------------------------- checks config, checks rules


def test_checks_config_prints_the_resolved_configuration_and_its_source(tmp_path):
    res = checks(tmp_path, "config")
    assert res.exit_code == ExitCode.OK
    assert "# source: built-in defaults" in res.stdout and 'select = ["ALL"]' in res.stdout
    (tmp_path / "pyproject.toml").write_text(
        '[tool.checks]\nextend-ignore = ["TOY003"]\n[tool.checks.per-file-ignores]\n"gen/*.py" = ["TOY001"]\n'
        '[tool.checks.rules.TOY001]\nseverity = "warning"\n'
        '[[tool.checks.waivers]]\nrule = "TOY002"\ntarget = "x*"\nreason = "r"\nowner = "o"\nexpires = 2099-01-31\n'
    )
    res = checks(tmp_path, "config", "--extend-select", "TOY00")
    assert res.exit_code == ExitCode.OK, res.stderr
    text = res.stdout
    assert f"# source: {tmp_path / 'pyproject.toml'} [tool.checks]" in text
    assert "# command line: --extend-select=TOY00" in text
    assert (
        "#   toy: CK001* CK002 CK003 CK004 TOY001 TOY002 TOY003 TOY004*\n" in text
    )  # the later layer re-selects TOY003
    for line in (
        'select = ["ALL"]',
        "extend-select = []",
        'extend-ignore = ["TOY003"]',
        '"gen/*.py" = ["TOY001"]',
        "[rules.TOY001]",
        'severity = "warning"',
        "[[waivers]]",
        "expires = 2099-01-31",
    ):
        assert line in text, line

    assert tomllib.loads(text)["extend-ignore"] == ["TOY003"]  # the TOML printed is TOML
    data = json.loads(checks(tmp_path, "config", "--format", "json").stdout)
    assert data["source"]["path"] == str(tmp_path / "pyproject.toml") and data["source"]["table"] == "tool.checks"
    assert data["rules"] == {"TOY001": {"severity": "warning"}}
    res = checks(tmp_path, "config", "--select", "TOY001")  # a new selection: the file's lists no longer count
    assert 'extend-ignore = ["TOY003"]' in res.stdout and "# command line: --select=TOY001" in res.stdout
    assert "#   toy: CK001* TOY001 TOY004*\n" in res.stdout  # what the run would evaluate, every layer applied
    data = json.loads(checks(tmp_path, "config", "--select", "TOY001", "--ignore", "TOY00", "--format", "json").stdout)
    assert data["overlays"] == [
        {"name": "command line", "select": ["TOY001"], "extend-select": [], "ignore": ["TOY00"]}
    ]
    assert data["selected"]["toy"] == ["CK001*", "TOY001", "TOY004*"]  # one layer: TOY001 is more specific than TOY00


def test_checks_config_and_checks_rules_exit_2_on_an_invalid_configuration(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["TOY", "NOPE"]\n')
    for args in (("config",), ("rules",), ("rules", "--format", "json")):
        res = checks(tmp_path, *args)
        assert res.exit_code == ExitCode.USAGE_ERROR, args
        assert "rules.toml, line 1: select: 'NOPE' matches no rule code" in res.stderr


def test_checks_rules_shows_the_configured_severity(tmp_path):
    (tmp_path / "rules.toml").write_text(
        '[rules.TOY001]\nseverity = "warning"\n[rules.TOY003]\nrequired = true\nseverity = "error"\n'
    )
    res = checks(tmp_path, "rules")
    line = next(x for x in res.stdout.splitlines() if x.startswith("TOY001"))
    assert "warning (default error)" in line
    assert any(x.startswith("TOY003*") and "error (default warning)" in x for x in res.stdout.splitlines())
    rows = {r["code"]: r for r in json.loads(checks(tmp_path, "rules", "--format", "json").stdout)}
    assert rows["TOY001"]["severity"] == "warning" and rows["TOY001"]["default_severity"] == "error"
    assert rows["TOY003"]["required"] is True


def test_find_memo_gives_the_nearest_and_walks_each_directory_once(tmp_path, monkeypatch):

    (tmp_path / "rules.toml").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".checks.toml").write_text("")
    for leaf in ("sub/a/x", "sub/a/y", "other/z"):
        (tmp_path / leaf).mkdir(parents=True)
    probed: list = []
    held = config_load._held
    monkeypatch.setattr(config_load, "_held", lambda folder: probed.append(folder) or held(folder))
    seen: dict = {}
    cases = (
        ("sub/a/x", "sub/.checks.toml"),
        ("sub/a/y", "sub/.checks.toml"),
        ("other/z", "rules.toml"),
        ("sub/a", "sub/.checks.toml"),
    )
    for leaf, want in cases:
        assert config_load.find(tmp_path / leaf, seen) == (tmp_path / want).resolve()
    assert len(probed) == len(set(probed)) == 7  # x, a, sub; y; z, other, the root: each probed once, none above
    for leaf, want in cases:
        assert config_load.find(tmp_path / leaf) == (tmp_path / want).resolve()  # the same without the memo
    (tmp_path / "sub" / "a" / "rules.toml").write_text("")
    (tmp_path / "sub" / "a" / ".checks.toml").write_text("")
    with pytest.raises(ConfigError, match="keep exactly one per directory"):
        config_load.find(tmp_path / "sub/a/x", {})


def test_the_light_path_builds_what_cattrs_builds():
    tables = [
        (config_model.RuleSettings, {"severity": "info", "required": True}),
        (config_model.RuleSettings, {"severity": None}),
        (
            config_model.Waiver,
            {"rule": "TA1", "target": "t", "reason": "r", "owner": "o", "expires": dt.date(2030, 1, 2)},
        ),
        (config_model.Waiver, {"rule": "TA1", "target": "t", "reason": "r", "owner": "o", "expires": "2030-01-02"}),
        (config_parse._TopLevel, {"select": ["TA"], "checks_plugins": ["x.py"], "exclude": []}),
        (config_parse._ArenaCommon, {"select": None, "ignore": ["HF2"]}),
    ]
    for cls, table in tables:
        plain = config_parse._plain(table, cls)
        assert plain is not None and plain == config_parse._converter().structure(table, cls)
    assert config_parse._plain({"severity": "loud"}, config_model.RuleSettings) is None  # cattrs explains it
    assert config_parse._plain({"sevrity": "info"}, config_model.RuleSettings) is None
    assert config_parse._plain({"rule": "TA1"}, config_model.Waiver) is None  # a required key left out
