"""The interface as a ruff or pytest user expects it (issue 42): help that says what happens, a bare group's help,
`checks rule --all/--format json` with a did-you-mean, CHECKS_CONFIG."""

from __future__ import annotations

import json
import subprocess
from checks.exitcodes import ExitCode
from checks.testing import run_cli

ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")


def cli(tmp_path, *args, env=None):
    return run_cli([*BUILTIN, *args], env={**ENV, **(env or {})}, cwd=tmp_path)


# --------------------------------------------------------------------------- checks rule


def test_rule_suggests_the_closest_codes_for_a_typo(tmp_path):
    res = cli(tmp_path, "rule", "TA20")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "unknown rule 'TA20'. Did you mean 'TA20" in res.stderr and "Traceback" not in res.stderr
    assert "Did you mean 'metadata-present'" in cli(tmp_path, "rule", "metadata-presnt").stderr


def test_rule_all_explains_every_rule_and_json_carries_the_text(tmp_path):
    listed = json.loads(cli(tmp_path, "rules", "--format", "json").stdout)
    every = cli(tmp_path, "rule", "--all")
    assert every.exit_code == ExitCode.OK
    assert every.stdout.count("\n## What it does\n") == len(listed)
    one = json.loads(cli(tmp_path, "rule", "TA201", "--format", "json").stdout)
    assert one["code"] == "TA201" and one["explanation"].startswith("# validation-protocol-declared (TA201)")
    rows = json.loads(cli(tmp_path, "rule", "--all", "--format", "json").stdout)
    assert [r["code"] for r in rows] == sorted(r["code"] for r in listed)
    assert cli(tmp_path, "rule").exit_code == ExitCode.USAGE_ERROR
    assert cli(tmp_path, "rule", "TA201", "--all").exit_code == ExitCode.USAGE_ERROR


# --------------------------------------------------------------------------- CHECKS_CONFIG


def test_checks_config_names_the_configuration_and_a_missing_file_is_refused(tmp_path):
    (tmp_path / "elsewhere.toml").write_text('ignore = ["TA303"]\n')
    shown = cli(tmp_path, "config", env={"CHECKS_CONFIG": "elsewhere.toml"})
    assert shown.exit_code == ExitCode.OK and "elsewhere.toml" in shown.stdout and '"TA303"' in shown.stdout
    option = cli(tmp_path, "--config", "elsewhere.toml", "config", env={"CHECKS_CONFIG": "nothere.toml"})
    assert option.exit_code == ExitCode.OK  # --config wins; the variable is not read
    missing = cli(tmp_path, "rules", env={"CHECKS_CONFIG": "nothere.toml"})
    assert missing.exit_code == ExitCode.USAGE_ERROR
    assert "CHECKS_CONFIG='nothere.toml': no such file" in missing.stderr


# --------------------------------------------------------------------------- help and errors


def test_a_bare_group_prints_its_help_without_an_error_prefix(tmp_path):
    for words in ((), ("hf",)):
        res = cli(tmp_path, *words)
        assert res.exit_code == ExitCode.USAGE_ERROR
        assert "error" not in (res.stdout + res.stderr).lower().split("commands:")[0], res.stdout + res.stderr
        assert (res.stdout + res.stderr).startswith("Usage: checks")


def test_a_missing_choice_option_lists_the_choices_on_one_line(tmp_path):
    res = cli(tmp_path, "hf", "ledger", "x.csv", "--out", "y")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "Missing option '--format'. Choose from: csv, markdown, parquet" in res.stderr, res.stderr
    assert "\\t" not in res.stderr


def test_help_says_what_ignore_does_and_lists_no_local_plugins(tmp_path):
    top = cli(tmp_path, "--help").stdout
    assert "--no-local-plugins" in top
    run_help = " ".join(cli(tmp_path, "run", "process", "--help").stdout.split())
    assert "replacing every `ignore`" not in run_help and "added to the configuration's `ignore`" in run_help
    hook_help = " ".join(cli(tmp_path, "precommit", "info-py", "--help").stdout.split())
    assert "beyondarena" not in hook_help


def test_rules_refuses_a_configuration_that_ignores_a_required_rule(tmp_path):
    (tmp_path / "rules.toml").write_text('ignore = ["TA101"]\n')
    for command in (("rules",), ("config",)):
        res = cli(tmp_path, *command)
        assert res.exit_code == ExitCode.USAGE_ERROR, command
        assert "TA101 (method-not-suite) is a required rule and cannot be ignored" in res.stderr


# --------------------------------------------------------------------------- missing inputs


INFO = (
    'from tabarena.models.utils import MethodMetadata\nnori = MethodMetadata.config(method="Nori", date="2026-01-02")\n'
)


def test_a_missing_info_py_or_variable_is_a_usage_error_with_the_closest(tmp_path):
    (tmp_path / "models" / "nori").mkdir(parents=True)
    (tmp_path / "models" / "nori" / "info.py").write_text(INFO)
    (tmp_path / "data").mkdir()
    (tmp_path / "round3_refs").mkdir()  # a package a module reference names
    (tmp_path / "round3_refs" / "__init__.py").write_text("")
    (tmp_path / "round3_refs" / "alpha.py").write_text("class MethodMetadata:\n    pass\n\n\nnori = MethodMetadata()\n")
    cases = {
        "modles/nori/info.py:nori": "no such file modles/nori/info.py; did you mean models/nori/info.py:nori?",
        "nothere/info.py:x": "no such file nothere/info.py (give path/to/info.py:VARIABLE)",
        "models/nori/info.py:nory": "assigns no 'nory'. Did you mean models/nori/info.py:nori?",
        "round3_refs.beta:nori": "no module 'round3_refs.beta' can be imported from here",
        "round3_nothere.alpha:nori": "no module 'round3_nothere.alpha' can be imported from here",
        "round3_refs.alpha:nory": "module 'round3_refs.alpha' has no 'nory'. Did you mean round3_refs.alpha:nori?",
    }
    for ref, said in cases.items():
        for command in (("run", "process", "data"), ("run", "upload"), ("inspect", "data")):
            res = cli(tmp_path, *command, "--method-metadata", ref)
            assert res.exit_code == ExitCode.USAGE_ERROR, (command, ref, res.stdout)
            assert said in res.stderr and "TA116" not in res.stdout + res.stderr, res.stderr
            assert not (tmp_path / ".checks").exists()  # refused before any rule ran: no decision record


def test_an_info_py_that_does_not_parse_is_a_usage_error_at_its_place(tmp_path):
    (tmp_path / "info.py").write_text("nori = (\n")
    (tmp_path / "data").mkdir()
    res = cli(tmp_path, "run", "process", "data", "--method-metadata", "info.py:nori")
    assert res.exit_code == ExitCode.USAGE_ERROR and "info.py:1:" in res.stderr, res.stderr


def test_checks_config_of_a_file_that_is_not_there_is_refused(tmp_path):
    (tmp_path / "models").mkdir()
    res = cli(tmp_path, "config", "modls")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "checks config modls: no such file; did you mean models?" in res.stderr


# --------------------------------------------------------------------------- locations

TWO_WAIVERS = "".join(
    f'\n[[waivers]]\nrule = "{code}"\ntarget = "*"\nreason = "known"\nowner = "ana"\nexpires = 2999-01-01\n'
    for code in ("TA110", "TA112")
)


def test_an_unused_waiver_points_at_its_own_line_relative_to_the_working_directory(tmp_path):
    (tmp_path / "rules.toml").write_text("# the project's rules" + TWO_WAIVERS)
    lines = (tmp_path / "rules.toml").read_text().splitlines()
    first, second = (i + 1 for i, line in enumerate(lines) if line == "[[waivers]]")
    sub = tmp_path / "sub"
    (sub / "models" / "a").mkdir(parents=True)
    (sub / "models" / "a" / "info.py").write_text(INFO.replace('date="2026-01-02"', 'suite="s", date="2026-01-02"'))
    res = cli(sub, "precommit", "info-py", "models/a/info.py")
    assert f"../rules.toml:{first}:1: CK002 waiver for TA110" in res.stdout, res.stdout
    assert f"../rules.toml:{second}:1: CK002 waiver for TA112" in res.stdout, res.stdout
    assert str(tmp_path) not in res.stdout


def test_a_file_that_is_not_utf8_is_reported_at_the_bad_byte(tmp_path):
    (tmp_path / "models" / "b").mkdir(parents=True)
    (tmp_path / "models" / "b" / "info.py").write_bytes(b"x = 1\n# ok\n# caf\xe9\n")
    res = cli(tmp_path, "precommit", "info-py", "models/b/info.py")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert res.stdout.startswith("models/b/info.py:3:6: error not UTF-8 text"), res.stdout


def test_every_located_finding_has_a_line_and_a_column(tmp_path):
    def toy(*more):
        args = ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), "--fail", "--finding-path", "a/b.py"]
        return run_cli([*args, *more], env=ENV, cwd=tmp_path)

    assert "a/b.py:1:1: asked to fail" in toy().stdout  # a whole file's finding is at its start
    assert "a/b.py:7:1: asked to fail" in toy("--finding-line", "7").stdout
    (toy001,) = [v for v in json.loads(toy("--format", "json").stdout)["verdicts"] if v["code"] == "TOY001"]
    assert (toy001["findings"][0]["line"], toy001["findings"][0]["col"]) == (1, 1)


# --------------------------------------------------------------------------- directory walks


def _tree(tmp_path):
    """A git checkout with a good info.py, a bad one under an ignored vendor/ and one under an excluded scratch/."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("vendor/\n")
    (tmp_path / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("scratch/\n")
    good = INFO.replace('date="2026-01-02"', 'suite="s", date="2026-01-02"')
    for where, text in (("models/a", good), ("vendor/models/z", "nori = (\n"), ("scratch/models/y", "nori = (\n")):
        (tmp_path / where).mkdir(parents=True)
        (tmp_path / where / "info.py").write_text(text)


def test_a_directory_walk_skips_what_git_ignores_unless_told_not_to(tmp_path):
    _tree(tmp_path)
    res = cli(tmp_path, "precommit", "info-py", ".")
    assert res.exit_code == ExitCode.OK and res.stdout == "", res.stdout + res.stderr
    every = cli(tmp_path, "precommit", "info-py", "--no-respect-gitignore", ".")
    assert every.exit_code == ExitCode.USAGE_ERROR
    assert "vendor/models/z/info.py:1:" in every.stdout and "scratch/models/y/info.py:1:" in every.stdout
    named = cli(tmp_path, "precommit", "info-py", "vendor/models/z/info.py")  # a file named is always judged
    assert named.exit_code == ExitCode.USAGE_ERROR


def test_show_files_lists_what_would_be_judged_and_judges_nothing(tmp_path):
    _tree(tmp_path)
    res = cli(tmp_path, "precommit", "info-py", "--show-files", ".")
    assert res.exit_code == ExitCode.OK and res.stdout.split() == ["models/a/info.py"], res.stdout
    every = cli(tmp_path, "precommit", "info-py", "--show-files", "--no-respect-gitignore", ".").stdout.split()
    assert every == ["models/a/info.py", "scratch/models/y/info.py", "vendor/models/z/info.py"]


# --------------------------------------------------------------------------- grouped help


def test_help_lists_options_under_headings(tmp_path):
    text = cli(tmp_path, "run", "process", "--help").stdout
    headings = [line for line in text.splitlines() if line and not line.startswith(" ") and line.endswith(":")]
    assert headings == ["Options of process:", "Run:", "Output:", "Selection:", "Global:", "Options:"], headings
    output = text.split("Output:")[1].split("Selection:")[0]
    assert "--format" in output and "--method-metadata" not in output and "--select" not in output
    hook = cli(tmp_path, "precommit", "info-py", "--help").stdout
    assert "Options of info-py:" in hook and "\nOutput:\n" in hook and "--config PATH" in hook.split("Global:")[1]


def test_a_file_named_by_its_absolute_path_is_shown_relative_to_the_working_directory(tmp_path):
    (tmp_path / "models" / "b").mkdir(parents=True)
    bad = tmp_path / "models" / "b" / "info.py"
    bad.write_bytes(b"x = 1\n# caf\xe9\n")
    res = cli(tmp_path, "precommit", "info-py", str(bad))
    assert res.stdout.startswith("models/b/info.py:2:6: error not UTF-8 text"), res.stdout
    outside = cli(tmp_path / "models", "precommit", "info-py", str(tmp_path / "models" / "b" / "info.py"))
    assert outside.stdout.startswith("b/info.py:2:6: "), outside.stdout


def test_a_hooks_missing_file_names_the_closest(tmp_path):
    (tmp_path / "models" / "nori").mkdir(parents=True)
    (tmp_path / "models" / "nori" / "info.py").write_text(INFO)
    res = cli(tmp_path, "precommit", "info-py", "modls/nori/info.py")
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert res.stdout.startswith("modls/nori/info.py:1:1: error no such file; did you mean models/nori/info.py?")


def test_a_run_directory_that_is_not_there_names_the_closest(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "info.py").write_text("m = 1\n")
    for command in (("inspect", "dta"), ("run", "process", "dta", "--method-metadata", "info.py:m")):
        res = cli(tmp_path, *command)
        assert res.exit_code == ExitCode.USAGE_ERROR, command
        assert "'dta' does not exist. Did you mean 'data'?" in res.stderr, res.stderr
