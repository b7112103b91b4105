"""The pre-commit hooks: `checks precommit info-py|eval-results` in-process, then the real `pre-commit`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from tests.support.precommit_fixtures import (
    DRAFT_CASES,
    EVAL_YAML,
    GOOD_DRAFT,
    GOOD_INFO,
    HEADER,
    INFO_CASES,
    expected_col,
    write_draft,
    write_info,
)

from checks.exitcodes import ExitCode
from checks.testing import assert_fails, evaluate_rules, run_cli
from tabarena_checks.metadata import info_static
from tabarena_checks.rules import metadata as rules_metadata
from tabarena_checks.rules import upload as rules_upload

ROOT = Path(__file__).resolve().parents[2]
#: only the built-in plugins, so an installed third-party plugin cannot change what is judged
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")


def precommit(tmp_path, *args):
    return run_cli([*BUILTIN, "precommit", *args], env=ENV, cwd=tmp_path)


def codes(stdout: str) -> set[str]:
    return {line.split(": ", 1)[1].split(" ", 1)[0] for line in stdout.splitlines() if ": " in line}


# --------------------------------------------------------------------------- info.py


@pytest.mark.parametrize("code", sorted(INFO_CASES))
def test_info_rule_fails_on_the_bad_declaration_at_its_line(tmp_path, code):
    bad, _good = INFO_CASES[code]
    path = write_info(tmp_path, "bad", bad)
    res = precommit(tmp_path, "info-py", str(path.relative_to(tmp_path)))
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    line = HEADER.count("\n") + 1
    where = f"models/bad/info.py:{line}:{expected_col(code)}: {code} "
    assert any(out.startswith(where) for out in res.stdout.splitlines()), (where, res.stdout)


@pytest.mark.parametrize("code", sorted(INFO_CASES))
def test_info_rule_passes_on_the_good_declaration(tmp_path, code):
    _bad, good = INFO_CASES[code]
    path = write_info(tmp_path, "good", good)
    res = precommit(tmp_path, "info-py", str(path))
    assert code not in codes(res.stdout), res.stdout
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr


def test_info_checks_every_declaration_and_file_and_reports_each(tmp_path):
    good = write_info(tmp_path, "nori", GOOD_INFO)
    two = write_info(tmp_path, "two", INFO_CASES["TA110"][0] + "\n" + INFO_CASES["TA112"][0].replace("m =", "n ="))
    res = precommit(tmp_path, "info-py", str(good), str(two))
    assert res.exit_code == ExitCode.BLOCKED
    assert codes(res.stdout) == {"TA110", "TA112"}
    assert str(good) not in res.stdout


def test_unparseable_info_is_an_input_error_at_its_line_and_column(tmp_path):
    broken = write_info(tmp_path, "broken", "nori = MethodMetadata.config(method='N',\n")
    empty = write_info(tmp_path, "empty", "x = 1")
    res = precommit(tmp_path, "info-py", str(broken), str(empty))
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr  # a file no rule could judge
    lines = res.stdout.splitlines()
    line = HEADER.count("\n") + 1
    broken, empty = (p.relative_to(tmp_path) for p in (broken, empty))  # shown relative to the working directory
    assert any(out.startswith(f"{broken}:{line}:29: error not valid Python") for out in lines), res.stdout
    assert any(out.startswith(f"{empty}:1:1: TA118 no MethodMetadata declaration") for out in lines), res.stdout
    assert "Traceback" not in res.stdout + res.stderr


def test_waiver_in_rules_toml_lets_a_finding_pass(tmp_path):
    path = write_info(tmp_path, "nori", INFO_CASES["TA110"][0])
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA110"\ntarget = "Nori@*"\nreason = "upstream date"\nowner = "ana"\nexpires = 2999-01-01\n'
    )
    assert precommit(tmp_path, "info-py", str(path)).exit_code == ExitCode.OK


def test_rules_toml_ignore_applies_but_a_required_rule_cannot_be_ignored(tmp_path):
    path = write_info(tmp_path, "nori", 'm = MethodMetadata.config(method="Nori", ag_key="K", date="2026-02-30")')
    (tmp_path / "rules.toml").write_text('ignore = ["TA110"]\n')
    res = precommit(tmp_path, "info-py", str(path))
    assert codes(res.stdout) == {"TA101"}
    (tmp_path / "rules.toml").write_text('ignore = ["TA101"]\n')
    res = precommit(tmp_path, "info-py", str(path))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "TA101 (method-not-suite) is a required rule" in res.stderr


def test_an_empty_selection_is_refused_and_a_required_rule_keeps_the_gate(tmp_path):
    (tmp_path / "rules.toml").write_text('select = ["TA"]\n')
    draft = write_draft(tmp_path, "org--model", "gpqa", GOOD_DRAFT)
    res = precommit(tmp_path, "eval-results", str(draft))
    assert res.exit_code == ExitCode.NO_RULES
    assert "no rule is selected for action 'precommit-eval-results'" in res.stderr
    (tmp_path / "rules.toml").write_text('select = ["TA110"]\n')
    info = write_info(tmp_path, "nori", INFO_CASES["TA101"][0])  # TA101 is required: selected whatever select says
    assert codes(precommit(tmp_path, "info-py", str(info)).stdout) == {"TA101"}
    (tmp_path / "rules.toml").write_text('select = ["ZZ"]\n')
    res = precommit(tmp_path, "eval-results", str(draft))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "select: 'ZZ' matches no rule code" in res.stderr


def test_an_expired_waiver_is_reported_once_and_an_unused_one_only_when_no_file_used_it(tmp_path):
    files = [write_info(tmp_path, f"m{i}", GOOD_INFO.replace("Nori", f"Nori{i}")) for i in range(3)]
    files.append(write_info(tmp_path, "late", INFO_CASES["TA110"][0].replace("Nori", "Late")))
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA112"\ntarget = "*"\nreason = "old"\nowner = "ana"\nexpires = 2020-01-01\n'
        '[[waivers]]\nrule = "TA110"\ntarget = "Late@*"\nreason = "upstream"\nowner = "ana"\nexpires = 2999-01-01\n'
        '[[waivers]]\nrule = "TA111"\ntarget = "Nori1@*"\nreason = "stale"\nowner = "ana"\nexpires = 2999-01-01\n'
        '[[waivers]]\nrule = "TA111"\ntarget = "Nobody"\nreason = "elsewhere"\nowner = "ana"\nexpires = 2999-01-01\n'
    )
    res = precommit(tmp_path, "info-py", *map(str, files))
    lines = res.stdout.splitlines()
    assert sum(" CK001 " in line for line in lines) == 1, res.stdout
    unused = [line for line in lines if " CK002 " in line]  # 'Nobody' is no file of this run: not judged here
    assert len(unused) == 1 and "TA111 on 'Nori1@*'" in unused[0], res.stdout
    assert res.exit_code == ExitCode.BLOCKED  # CK001 is required and an error


def test_each_file_is_judged_under_the_configuration_nearest_it(tmp_path):
    """As ruff: one run over files of two directories, each with its own configuration (and one with none)."""
    bad = INFO_CASES["TA110"][0]
    strict, lax, bare = (
        write_info(tmp_path, name, bad.replace("Nori", name.title())) for name in ("strict", "lax", "bare")
    )
    (tmp_path / "models" / "lax" / ".checks.toml").write_text('ignore = ["TA110"]\n')
    (tmp_path / "models" / "strict" / "pyproject.toml").write_text(
        '[tool.checks]\n[[tool.checks.waivers]]\nrule = "TA111"\ntarget = "Strict@*"\nreason = "r"\nowner = "o"\n'
        "expires = 2999-01-01\n"
    )
    res = precommit(tmp_path, "info-py", *(str(p.relative_to(tmp_path)) for p in (strict, lax, bare)))
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta110 = {line.split(":", 1)[0] for line in res.stdout.splitlines() if " TA110 " in line}
    assert ta110 == {"models/strict/info.py", "models/bare/info.py"}  # lax/ ignores it; bare/ has the defaults
    unused = [line for line in res.stdout.splitlines() if " CK002 " in line]  # strict/'s waiver, reported at its file
    assert len(unused) == 1 and unused[0].startswith("models/strict/pyproject.toml:2:1: "), res.stdout
    (tmp_path / "rules.toml").write_text('ignore = ["TA110"]\n')  # at the working directory: only bare/ is under it
    res = precommit(tmp_path, "info-py", str(strict), str(lax), str(bare))
    rel = str(strict.relative_to(tmp_path))  # named absolutely, shown relative to the working directory
    assert {line.split(":", 1)[0] for line in res.stdout.splitlines() if " TA110 " in line} == {rel}
    res = run_cli(
        [*BUILTIN, "--config", str(tmp_path / "rules.toml"), "precommit", "info-py", str(strict)], env=ENV, cwd=tmp_path
    )  # --config: one configuration for every file, as ruff's
    assert res.exit_code == ExitCode.OK, res.stdout
    res = precommit(tmp_path, "info-py", str(strict), "--extend-select", "TA110")  # the command line tops each file's
    assert {line.split(":", 1)[0] for line in res.stdout.splitlines() if " TA110 " in line} == {rel}
    assert precommit(tmp_path, "info-py", str(lax), "--extend-select", "TA110").exit_code == ExitCode.BLOCKED
    shown = run_cli([*BUILTIN, "config", str(lax)], env=ENV, cwd=tmp_path)  # what applies to one file
    assert f"# source: {tmp_path / 'models' / 'lax' / '.checks.toml'}" in shown.stdout, shown.stdout + shown.stderr
    assert 'ignore = ["TA110"]' in shown.stdout


def test_a_nearer_configurations_local_plugins_must_be_the_loaded_ones(tmp_path):
    info = write_info(tmp_path, "nori", GOOD_INFO)
    (tmp_path / "local.py").write_text("from checks import hookimpl\n\n@hookimpl\ndef checks_rules():\n    return []\n")
    (info.parent / "rules.toml").write_text('checks_plugins = ["../../local.py"]\n')
    res = precommit(tmp_path, "info-py", str(info))  # its rules would not run: refused, never silently skipped
    assert res.exit_code == ExitCode.USAGE_ERROR and "checks_plugins ../../local.py are not loaded" in res.stderr
    (tmp_path / "rules.toml").write_text('checks_plugins = ["local.py"]\n')  # the same file, loaded from here
    assert precommit(tmp_path, "info-py", str(info)).exit_code == ExitCode.OK


def test_drafts_under_different_configurations_are_judged_apart(tmp_path):
    one = write_draft(tmp_path / "a", "org--m", "gpqa", DRAFT_CASES["HF201"][0])
    two = write_draft(tmp_path / "b", "org--m", "gpqa", DRAFT_CASES["HF201"][0])
    (tmp_path / "b" / "rules.toml").write_text('ignore = ["HF201"]\n')
    res = precommit(tmp_path, "eval-results", "-q", str(one), str(two))
    assert res.exit_code == ExitCode.BLOCKED
    assert {line.split(":", 1)[0] for line in res.stdout.splitlines()} == {one.relative_to(tmp_path).as_posix()}
    (tmp_path / "a" / "rules.toml").write_text('select = ["TA"]\n')  # an empty gate under a/ is refused
    assert precommit(tmp_path, "eval-results", str(one), str(two)).exit_code == ExitCode.NO_RULES
    (tmp_path / "a" / ".checks.toml").write_text("")  # two configurations in one directory
    res = precommit(tmp_path, "eval-results", str(two), str(one))
    assert res.exit_code == ExitCode.USAGE_ERROR and "keep exactly one per directory" in res.stderr


def test_precommit_is_read_only(tmp_path):
    path = write_info(tmp_path, "nori", INFO_CASES["TA101"][0])
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    precommit(tmp_path, "info-py", str(path))
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_arena_option_applies_that_arenas_selection(tmp_path):
    path = write_info(tmp_path, "nori", 'm = MethodMetadata.config(method="Nori", suite="s", ag_key="K", tags=["x"])')
    (tmp_path / "rules.toml").write_text('[arenas.tabarena]\nignore = ["TA112"]\n')
    assert precommit(tmp_path, "info-py", str(path)).exit_code == ExitCode.BLOCKED
    assert precommit(tmp_path, "info-py", "--arena", "tabarena", str(path)).exit_code == ExitCode.OK


# --------------------------------------------------------------------------- .eval_results


def _eval_args(tmp_path, code):
    if code != "HF102":
        return []
    (tmp_path / "gpqa-eval.yaml").write_text(EVAL_YAML)
    return ["--eval-yaml", f"Idavidrein/gpqa={tmp_path / 'gpqa-eval.yaml'}"]


def _hook_on_draft(tmp_path, code, text):
    """The eval-results hook run on one draft holding ``text``; the draft's path and the result."""
    path = write_draft(tmp_path, "org--model", "gpqa", text)
    return path, precommit(tmp_path, "eval-results", *_eval_args(tmp_path, code), str(path))


@pytest.mark.parametrize("code", sorted(DRAFT_CASES))
def test_draft_rule_fails_on_the_bad_file(tmp_path, code):
    path, res = _hook_on_draft(tmp_path, code, DRAFT_CASES[code][0])
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    shown = path.relative_to(tmp_path).as_posix()
    assert any(line.startswith(f"{shown}:") and f": {code} " in line for line in res.stdout.splitlines()), res.stdout


@pytest.mark.parametrize("code", sorted(DRAFT_CASES))
def test_draft_rule_passes_on_the_good_file(tmp_path, code):
    _path, res = _hook_on_draft(tmp_path, code, DRAFT_CASES[code][1])
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert res.stdout == ""


def test_credentials_never_reach_the_output(tmp_path):
    path = write_draft(tmp_path, "org--model", "gpqa", DRAFT_CASES["HF503"][0])
    res = precommit(tmp_path, "eval-results", str(path))
    assert "hf_AbCdEf" not in res.stdout + res.stderr


def test_task_ids_are_only_judged_with_a_cached_eval_yaml(tmp_path):
    path = write_draft(tmp_path, "org--model", "gpqa", DRAFT_CASES["HF102"][0])
    assert precommit(tmp_path, "eval-results", str(path)).exit_code == ExitCode.OK
    other = write_draft(
        tmp_path, "org--model", "hle", GOOD_DRAFT.replace("Idavidrein/gpqa", "cais/hle").replace("diamond", "hle")
    )
    args = _eval_args(tmp_path, "HF102")
    res = precommit(tmp_path, "eval-results", *args, str(path), str(other))
    assert codes(res.stdout) == {"HF102"}  # hle's task id is not judged against gpqa's eval.yaml
    assert str(other) not in res.stdout


def test_every_staged_file_is_judged_in_one_run(tmp_path):
    files = [write_draft(tmp_path, f"org--m{i}", "gpqa", GOOD_DRAFT) for i in range(3)]
    files.append(write_draft(tmp_path, "org--late", "gpqa", DRAFT_CASES["HF201"][0]))
    files.append(write_draft(tmp_path, "org--late", "broken", "- [\n"))
    res = precommit(tmp_path, "eval-results", "-q", *map(str, files))
    assert res.exit_code == ExitCode.USAGE_ERROR  # the broken file could not be read: no rule judged it
    failing = {line.split(":", 1)[0] for line in res.stdout.splitlines()}
    assert failing == {files[3].relative_to(tmp_path).as_posix(), files[4].relative_to(tmp_path).as_posix()}


def test_bad_eval_yaml_option_is_a_usage_error(tmp_path):
    path = write_draft(tmp_path, "org--model", "gpqa", GOOD_DRAFT)
    res = precommit(tmp_path, "eval-results", "--eval-yaml", "no-equals-sign", str(path))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "expected DATASET_ID=PATH" in res.stderr
    res = precommit(tmp_path, "eval-results", "--eval-yaml", f"a/b={tmp_path / 'missing.yaml'}", str(path))
    assert res.exit_code == ExitCode.USAGE_ERROR
    assert "missing.yaml" in res.stderr


def test_both_commands_share_one_precommit_group(tmp_path):
    res = precommit(tmp_path, "--help")
    assert "info-py" in res.stdout and "eval-results" in res.stdout


# --------------------------------------------------------------------------- the real pre-commit


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], cwd=cwd, check=True, capture_output=True
    )


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A committed snapshot of this working tree: every try-repo call shares one repo, one rev, one hook env."""
    snapshot = tmp_path_factory.mktemp("hook-repo") / "arena-checks"
    shutil.copytree(
        ROOT,
        snapshot,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".checks", "build", "dist"
        ),
    )
    _git(snapshot, "init", "-q")
    _git(snapshot, "add", "-A")
    _git(snapshot, "commit", "-q", "-m", "snapshot")
    return snapshot


@pytest.fixture(scope="module")
def project(tmp_path_factory, hook_repo):
    """A repository of the kind the hooks guard: info.py files and drafts, good and bad, plus bystanders.

    Its .pre-commit-config.yaml pins the snapshot and gives the eval-results hook a cached eval.yaml.
    """
    root = tmp_path_factory.mktemp("guarded")
    write_info(root, "nori", GOOD_INFO)
    write_info(root, "bad", INFO_CASES["TA110"][0])
    (root / "models" / "bad" / "helpers.py").write_text("x = (\n")  # not an info.py: never judged
    write_draft(root, "org--a", "gpqa", GOOD_DRAFT)
    write_draft(root, "org--b", "gpqa", DRAFT_CASES["HF102"][0])
    write_draft(root, "org--c", "gpqa", DRAFT_CASES["HF201"][0])
    (root / "cache").mkdir()
    (root / "cache" / "gpqa-eval.yaml").write_text(EVAL_YAML)
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True).stdout.strip()
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: checks-info-py\n"
        f"  - id: checks-eval-results\n    args: [--eval-yaml, Idavidrein/gpqa=cache/gpqa-eval.yaml]\n"
    )
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "guarded")
    return root


@pytest.fixture(scope="module")
def pre_commit(tmp_path_factory):
    """Run the real pre-commit with one PRE_COMMIT_HOME, so `pre-commit run` installs the hook env once.

    (`try-repo` always installs into a store of its own, so it is used once.)
    """
    home = tmp_path_factory.mktemp("pre-commit-home")
    exe = Path(sys.executable).with_name("pre-commit")

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
        env = {**os.environ, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
        return subprocess.run([str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)

    run.home = home
    return run


def _status(root: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True, text=True
    ).stdout


@pytest.mark.slow
def test_try_repo_each_hook_fails_only_on_its_bad_files(pre_commit, hook_repo, project):
    res = pre_commit(project, "try-repo", str(hook_repo), "--all-files")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert out.count("Failed") == 2, out
    assert f"models/bad/info.py:3:{expected_col('TA110')}: TA110 " in out
    assert "drafts/org--c/.eval_results/gpqa.yaml:4:3: HF201 " in out
    for innocent in ("models/nori/info.py", "helpers.py", "org--a", "HF102"):  # HF102 needs a cached eval.yaml
        assert innocent not in out, out
    assert _status(project) == ""


@pytest.mark.slow
def test_configured_hooks_check_task_ids_offline_and_pass_good_files(pre_commit, project):
    res = pre_commit(project, "run", "checks-eval-results", "--all-files")
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "drafts/org--b/.eval_results/gpqa.yaml:3:5: HF102 " in out and "gpqa_diamondd" in out
    assert "org--a" not in out
    good = ["models/nori/info.py", "drafts/org--a/.eval_results/gpqa.yaml"]
    res = pre_commit(project, "run", "--files", *good)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert out.count("Passed") == 2, out
    assert _status(project) == ""


HEAVY = (
    "pyarrow",
    "duckdb",
    "boto3",
    "botocore",
    "numpy",
    "huggingface_hub",
    "libcst",
    "isal",
    "rich",
    "pygments",
    "markdown_it",
)  # rich and what it brings: the workflows' extras only


@pytest.mark.slow
def test_the_hook_environment_is_the_light_install(pre_commit, project, tmp_path):
    """pre-commit installs the hooks' repository without extras: none of the workflows' heavy
    dependencies is there, both hooks work without them, and a command that needs one names the extra."""
    res = pre_commit(project, "install-hooks")
    assert res.returncode == 0, res.stdout + res.stderr
    home = Path(pre_commit.home)
    envs = sorted(home.glob("repo*/py_env-*"))
    assert envs, list(home.iterdir())
    python = envs[0] / "bin" / "python"
    probe = f"import importlib.util, sys; print(','.join(m for m in {HEAVY!r} if importlib.util.find_spec(m)))"
    present = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert present == "", f"the hook environment holds {present}"
    checks = envs[0] / "bin" / "checks"
    write_info(tmp_path, "bad", INFO_CASES["TA110"][0])
    res = subprocess.run(
        [str(checks), "precommit", "info-py", "models/bad/info.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert res.returncode == ExitCode.BLOCKED and "TA110" in res.stdout, res.stdout + res.stderr
    res = subprocess.run(
        [str(checks), "run", "process", str(tmp_path), "--method-metadata", "models/bad/info.py:m"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "pip install 'arena-checks[tabarena]'" in res.stderr and "Traceback" not in res.stderr
    res = subprocess.run([str(checks), "inspect", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == ExitCode.USAGE_ERROR and "arena-checks[tabarena]" in res.stderr, res.stderr


# --------------------------------------------------------------------------- info.py as TabArena writes it

SUPERSEDED = """\
from tabarena.models._method_metadata import ModelDescriptor

nori_descriptor = ModelDescriptor(display_name="Nori", compute="gpu", is_bag=False, date_introduced="2026-06")

# Superseded by the rerun below; kept so the hosted artifacts stay loadable.
nori_method_metadata = nori_descriptor.method_metadata(
    method="Nori", suite="nori-2025", ag_key="TA-NORI", cache_type="s3",
    cache_kwargs={"bucket": "tabarena", "prefix": "cache", "upload_as_public": True})
nori_legacy_metadata = MethodMetadata.tabarena_legacy_s3(method="NoriOld", suite="nori-2024", ag_key="TA-NORI")

nori_new_method_metadata = nori_descriptor.method_metadata(
    method="Nori", suite="nori-2026", ag_key="TA-NORI", cache_kwargs={"bucket": "tabarena", "prefix": "cache"})
"""


def test_a_superseded_legacy_s3_declaration_passes_the_hook_but_not_process_or_upload(tmp_path):

    path = write_info(tmp_path, "nori", SUPERSEDED)
    res = precommit(tmp_path, "info-py", str(path))
    assert res.exit_code == ExitCode.OK and res.stdout == "", res.stdout + res.stderr
    store_is_r2 = next(r for r in rules_upload.RULES if r.code == "TA401")
    legacy = info_static.read_variable(path, "nori_legacy_metadata")
    superseded = info_static.read_variable(path, "nori_method_metadata")
    not_reprocessed = next(r for r in rules_metadata.RULES if r.code == "TA119")
    verdict = assert_fails(
        evaluate_rules([not_reprocessed], SimpleNamespace(metadata=superseded), action="process"),
        "TA119",
        "declares the legacy s3 cache",
    )
    assert (verdict.findings[0].line, verdict.findings[0].col) == (9, 57)  # cache_type="s3"
    verdicts = evaluate_rules([store_is_r2], SimpleNamespace(metadata=legacy), action="upload")
    assert_fails(verdicts, "TA401", "cache_type 's3' is not supported for upload")
    text = (HEADER + SUPERSEDED).splitlines()
    line = text.index(next(x for x in text if "legacy_s3" in x)) + 1
    assert verdicts["TA401"].findings[0].line == line and verdicts["TA401"].findings[0].col == 24


BAD_INPUT = {
    "not valid Python": ("m = MethodMetadata.config(method='M', suite='s'\n", "models/bad/info.py", 3, 26),
    "bound 2 times": ("S = 'a'\nS = 'b'\nm = MethodMetadata.config(method='M', suite=S)\n", "models/bad/info.py", 4, 1),
    "import cycle": (
        "from models.other.info import Y\nX = 'x'\nm = MethodMetadata.config(method='M', suite=Y)\n",
        "models/bad/info.py",
        3,
        1,
    ),
    "not a dict": ("K = ['suite', 's']\nm = MethodMetadata.config(method='M', **K)\n", "models/bad/info.py", 4, 39),
    "does not accept 'colour'": (
        "m = MethodMetadata.config(method='M', suite='s', colour='red')\n",
        "models/bad/info.py",
        3,
        50,
    ),
}


@pytest.mark.parametrize("what", sorted(BAD_INPUT))
def test_bad_info_py_is_one_finding_at_line_and_column(tmp_path, what):
    source, rel, line, col = BAD_INPUT[what]
    for package in ("models", "models/bad", "models/other"):
        (tmp_path / package).mkdir(parents=True, exist_ok=True)
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "models/other/info.py").write_text("from models.bad.info import X\nY = X\n")
    path = write_info(tmp_path, "bad", source)
    good = write_info(tmp_path, "nori", GOOD_INFO)
    res = precommit(tmp_path, "info-py", "-q", str(path.relative_to(tmp_path)), str(good.relative_to(tmp_path)))
    parsed = what != "not valid Python"  # a file that does not parse is the read check's, exit 2
    assert res.exit_code == (ExitCode.BLOCKED if parsed else ExitCode.USAGE_ERROR), res.stdout + res.stderr
    lines = res.stdout.splitlines()
    code = "TA118" if parsed else "error"
    assert len(lines) == 1 and lines[0].startswith(f"{rel}:{line}:{col}: {code} "), res.stdout
    assert what in lines[0] and "; " in lines[0]  # what is wrong, then the fix
    assert "Traceback" not in res.stdout + res.stderr


@pytest.mark.slow
def test_config_in_a_hooks_args_is_used(pre_commit, hook_repo, project, tmp_path):
    """ruff's hook takes --config in `args:`; so does this one (it used to be refused as an unknown option)."""
    strict = tmp_path / "lax.toml"
    strict.write_text('ignore = ["TA110"]\n')
    rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=hook_repo, capture_output=True, text=True).stdout.strip()
    config = tmp_path / "pre-commit-config.yaml"
    config.write_text(
        f"repos:\n- repo: {hook_repo}\n  rev: {rev}\n  hooks:\n  - id: checks-info-py\n    args: [--config, {strict}]\n"
    )
    res = pre_commit(project, "run", "-c", str(config), "--files", "models/bad/info.py")
    assert res.returncode == 0 and "Passed" in res.stdout, res.stdout + res.stderr  # TA110 ignored by lax.toml
    strict.write_text('select = ["TA110"]\n')
    res = pre_commit(project, "run", "-c", str(config), "--files", "models/bad/info.py")
    assert res.returncode == 1 and "TA110" in res.stdout, res.stdout + res.stderr
    assert _status(project) == ""
