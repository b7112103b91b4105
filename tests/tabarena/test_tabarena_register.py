"""checks run register on a miniature TabArena checkout: add, swap, idempotence, name collisions, TA5xx rules."""

from __future__ import annotations

import json
import os
import signal

import pytest
from tests.support.reliability_fixtures import run_checks
from tests.support.paths import CHILD_PYTHONPATH
from tests.support.tabarena_checkout_fixtures import HEADER, METHODS, METHODS_PY, SRC, info, write

from checks.errors import InputError
from checks.testing import assert_fails, assert_passes, evaluate_rules, run_cli
from tabarena_checks.rules import register as rules_register
from tabarena_checks.facts.register import RegisterFacts, SeveralDeclarations, import_module_for
from tabarena_checks.publish.register import RegisterOptions, plan_edit


def register(repo, rel: str, variable: str, tmp_path):
    ref = f"{repo / SRC / rel}:{variable}"
    return run_cli(["run", "register", "--method-metadata", ref, "--repo", str(repo)], cwd=tmp_path)


def methods(repo) -> str:
    return (repo / METHODS).read_text()


def test_add_cpu_model_keeps_layout_and_comments(checkout, tmp_path):
    repo, _ = checkout
    result = register(repo, "models/catboost/info.py", "catboost_method_metadata", tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    expected = METHODS_PY.replace(
        "# Per-model `info.py` is the canonical source for each method's `MethodMetadata`.\n",
        "# Per-model `info.py` is the canonical source for each method's `MethodMetadata`.\n"
        "from tabarena.models.catboost.info import catboost_method_metadata\n",
    ).replace(
        "        lightgbm_method_metadata,  # the 2026 rerun\n",
        "        lightgbm_method_metadata,  # the 2026 rerun\n        catboost_method_metadata,\n",
    )
    assert methods(repo) == expected
    compile(methods(repo), "methods.py", "exec")


def test_add_system_and_gpu_model_land_in_their_groups(checkout, tmp_path):
    repo, _ = checkout
    write(
        repo,
        SRC / "systems/chakra/info.py",
        info(chakra_metadata='MethodMetadata.system(method="Chakra", name="Chakra", suite="chakra-1", tags=[])'),
    )
    write(
        repo,
        SRC / "models/xrfm/info.py",
        info(xrfm_method_metadata='MethodMetadata.config(method="xRFM", suite="xrfm-1", ag_key="XRFM", compute="gpu")'),
    )
    assert register(repo, "systems/chakra/info.py", "chakra_metadata", tmp_path).exit_code == 0
    assert register(repo, "models/xrfm/info.py", "xrfm_method_metadata", tmp_path).exit_code == 0
    text = methods(repo)
    assert (
        "from tabarena.systems.autogluon.info import ag_metadata\n"
        "from tabarena.systems.chakra.info import chakra_metadata\n"
    ) in text
    assert (
        "from tabarena.models.tabm.info import (\n    tabm_2025_method_metadata,\n"
        "    tabm_method_metadata as tabm_metadata,\n)\nfrom tabarena.models.xrfm.info import xrfm_method_metadata\n"
    ) in text
    assert (
        "        # Systems\n        ag_metadata,\n        chakra_metadata,\n        # Default tabular models (CPU)\n"
        in text
    )
    assert "        tabm_metadata,\n        xrfm_method_metadata,\n    ],\n" in text


def test_rerun_swaps_the_entry_and_supersedes_the_old_one(checkout, tmp_path):
    repo, _ = checkout
    result = register(repo, "models/nori/info.py", "nori_new_method_metadata", tmp_path)
    assert result.exit_code == 0, result.stdout
    text = methods(repo)
    assert "from tabarena.models.nori.info import nori_method_metadata, nori_new_method_metadata\n" in text
    assert (
        "        # Neural / GPU / foundation models\n        nori_new_method_metadata,\n        tabm_metadata,\n"
        in text
    )
    assert (
        "    tabm_2025_method_metadata,  # replaced by the 2026 run\n"
        "    nori_method_metadata,  # rerun nori-2026-09 replaced it\n]\n"
    ) in text
    assert "swap nori_method_metadata -> nori_new_method_metadata" in result.stdout
    compile(text, "methods.py", "exec")


@pytest.mark.parametrize(
    ("rel", "variable"),
    [("models/catboost/info.py", "catboost_method_metadata"), ("models/nori/info.py", "nori_new_method_metadata")],
)
def test_rerunning_register_changes_nothing(checkout, tmp_path, rel, variable):
    repo, _ = checkout
    assert register(repo, rel, variable, tmp_path).exit_code == 0
    once = methods(repo)
    again = register(repo, rel, variable, tmp_path)
    assert again.exit_code == 0
    assert "registered already" in again.stdout
    assert methods(repo) == once


def test_name_collision_gets_an_alias(checkout, tmp_path):
    repo, _ = checkout
    write(
        repo,
        SRC / "models/lightgbm_v2/info.py",
        info(
            lightgbm_method_metadata=(
                'MethodMetadata.config(method="LightGBMv2", suite="lgbm-v2-2026", ag_key="GBM2", compute="cpu")'
            )
        ),
    )
    result = register(repo, "models/lightgbm_v2/info.py", "lightgbm_method_metadata", tmp_path)
    assert result.exit_code == 0, result.stdout
    text = methods(repo)
    alias = "lightgbm_method_metadata_lgbm_v2_2026"
    assert f"from tabarena.models.lightgbm_v2.info import lightgbm_method_metadata as {alias}\n" in text
    assert f"        lightgbm_method_metadata,  # the 2026 rerun\n        {alias},\n" in text
    assert "from tabarena.models.lightgbm.info import lightgbm_method_metadata\n" in text


def test_dry_run_changes_nothing(checkout, tmp_path):
    repo, _ = checkout
    ref = f"{repo / SRC / 'models/catboost/info.py'}:catboost_method_metadata"
    result = run_cli(["run", "register", "--method-metadata", ref, "--repo", str(repo), "--dry-run"], cwd=tmp_path)
    assert result.exit_code == 0 and "add catboost_method_metadata" in result.stdout
    assert methods(repo) == METHODS_PY


def test_import_path_from_file_or_module_ref(tmp_path):
    assert import_module_for("/x/packages/tabarena/src/tabarena/models/nori/info.py:v") == "tabarena.models.nori.info"
    assert import_module_for("src/tabarena/systems/ag/info.py:v") == "tabarena.systems.ag.info"
    assert import_module_for("tabarena.models.nori.info:v") == "tabarena.models.nori.info"
    with pytest.raises(InputError, match="cannot derive the import path"):
        import_module_for(f"{tmp_path}/info.py:v")


# --- TA5xx register rules: must fail and must pass ------------------------------------------------


def _verdicts(repo, rel, variable):
    options = RegisterOptions(method_metadata=f"{repo / SRC / rel}:{variable}", repo=str(repo))
    return evaluate_rules(
        rules_register.RULES[:3], RegisterFacts.gather(options, plan_edit), action="register", options=options
    )


def _copy_verdicts(repo, rel, declaration):
    """The verdicts on a new info.py at ``rel`` whose ``copy_metadata`` is ``declaration``."""
    write(repo, SRC / rel, info(copy_metadata=declaration))
    return _verdicts(repo, rel, "copy_metadata")


def test_ta501_method_suite_unique(checkout, tmp_path):
    repo, _ = checkout
    assert_passes(_verdicts(repo, "models/catboost/info.py", "catboost_method_metadata"), "TA501")
    assert_passes(_verdicts(repo, "models/nori/info.py", "nori_new_method_metadata"), "TA501")
    lightgbm = 'MethodMetadata.config(method="LightGBM", suite="lightgbm-2026-01", ag_key="GBM", compute="cpu")'
    assert_fails(
        _copy_verdicts(repo, "models/lgbm_copy/info.py", lightgbm),
        "TA501",
        "lightgbm_method_metadata (tabarena.models.lightgbm.info) already declares method='LightGBM'",
    )
    ref = f"{repo / SRC / 'models/lgbm_copy/info.py'}:copy_metadata"
    blocked = run_cli(["run", "register", "--method-metadata", ref, "--repo", str(repo)], cwd=tmp_path)
    assert blocked.exit_code == 1 and methods(repo) == METHODS_PY


def test_ta502_entries_built_in_code_are_named(checkout):
    repo, _ = checkout
    assert_passes(_verdicts(repo, "models/catboost/info.py", "catboost_method_metadata"), "TA502")
    (repo / METHODS).write_text(
        METHODS_PY.replace("        tabm_metadata,\n", "        tabm_metadata,\n        gpu_copy,\n")
        + "gpu_copy = next(iter([tabm_metadata]))\n"
    )
    v = _verdicts(repo, "models/catboost/info.py", "catboost_method_metadata")
    assert v["TA502"].outcome.value == "failed" and not v["TA502"].blocks
    assert "gpu_copy: not checked for uniqueness" in v["TA502"].message


DESCRIPTOR_INFO = (
    HEADER.replace("MethodMetadata", "MethodMetadata, ModelDescriptor")
    + """
alpha_descriptor = ModelDescriptor(display_name="Alpha", compute="gpu", is_bag=True)
_common = dict(cache_type="r2", cache_kwargs={"bucket": "tabarena", "prefix": "cache"})
alpha_method_metadata = alpha_descriptor.method_metadata(method="Alpha", suite="alpha-2026", ag_key="A", **_common)
"""
)


def test_descriptor_spread_and_local_entries_are_checked_for_uniqueness(checkout):
    """Entries built with ModelDescriptor.method_metadata(**spread) or written in methods.py are read, not skipped."""
    repo, _ = checkout
    write(repo, SRC / "models/alpha/info.py", DESCRIPTOR_INFO)
    text = METHODS_PY.replace(
        "from tabarena.models.lightgbm.info import",
        "from tabarena.models.alpha.info import alpha_method_metadata\nfrom tabarena.models.lightgbm.info import",
    )
    text = text.replace(
        "        tabm_metadata,\n", "        tabm_metadata,\n        alpha_method_metadata,\n        local_metadata,\n"
    )
    text += (
        'local_metadata = MethodMetadata.tabarena_legacy_s3(method="Local", suite="local-1", method_type="baseline")\n'
    )
    (repo / METHODS).write_text(text)
    v = _verdicts(repo, "models/catboost/info.py", "catboost_method_metadata")
    assert_passes(v, "TA502")
    assert_passes(v, "TA501")
    assert_fails(
        _copy_verdicts(
            repo, "models/alpha2/info.py", 'MethodMetadata.config(method="Alpha", suite="alpha-2026", ag_key="A")'
        ),
        "TA501",
        "alpha_method_metadata (tabarena.models.alpha.info) already declares method='Alpha'",
    )
    assert_fails(
        _copy_verdicts(repo, "models/local2/info.py", 'MethodMetadata.baseline(method="Local", suite="local-1")'),
        "TA501",
        "local_metadata (tabarena.contexts.tabarena.methods) already declares method='Local'",
    )


def test_ta503_layout(checkout):
    repo, _ = checkout
    assert_passes(_verdicts(repo, "models/catboost/info.py", "catboost_method_metadata"), "TA503")
    (repo / METHODS).write_text(
        METHODS_PY.replace("        # Neural / GPU / foundation models\n", "").replace(
            "methods_superseded: list[MethodMetadata]", "methods_old: list[MethodMetadata]"
        )
    )
    v = _verdicts(repo, "models/catboost/info.py", "catboost_method_metadata")
    assert_fails(v, "TA503", "'# Neural / GPU / foundation models'")
    assert "methods_superseded" in v["TA503"].message


@pytest.mark.parametrize("emptied", ["ag_metadata", "tabm_metadata"])
def test_first_entry_of_an_empty_group_goes_under_its_comment(checkout, tmp_path, emptied):
    repo, _ = checkout
    text = METHODS_PY.replace(f"        {emptied},\n", "")
    if emptied == "tabm_metadata":
        text = text.replace("        nori_method_metadata,\n", "")
    (repo / METHODS).write_text(text)
    if emptied == "ag_metadata":
        write(
            repo,
            SRC / "systems/chakra/info.py",
            info(chakra_metadata='MethodMetadata.system(method="Chakra", name="Chakra", suite="chakra-1", tags=[])'),
        )
        rel, variable, group = "systems/chakra/info.py", "chakra_metadata", "# Systems"
    else:
        rel, variable, group = "models/nori/info.py", "nori_new_method_metadata", "# Neural / GPU / foundation models"
    result = register(repo, rel, variable, tmp_path)
    assert result.exit_code == 0, result.stdout
    edited = methods(repo)
    assert f"        {group}\n        {variable},\n" in edited
    compile(edited, "methods.py", "exec")
    assert (
        edited.replace(f"        {variable},\n", "", 1).split("method_metadata_lst=[")[1]
        == text.split("method_metadata_lst=[")[1]
    )


def test_module_reference_is_read_from_the_checkout(checkout, tmp_path):
    repo, _ = checkout
    result = run_cli(
        [
            "run",
            "register",
            "--method-metadata",
            "tabarena.models.catboost.info:catboost_method_metadata",
            "--repo",
            str(repo),
        ],
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "from tabarena.models.catboost.info import catboost_method_metadata\n" in methods(repo)


# --- several declarations in one run: one edit of methods.py, judged for each ------------------------


def _chakra(repo):
    write(
        repo,
        SRC / "systems/chakra/info.py",
        info(chakra_metadata='MethodMetadata.system(method="Chakra", name="Chakra", suite="chakra-1", tags=[])'),
    )
    return "systems/chakra/info.py", "chakra_metadata"


def register_several(repo, tmp_path, *decls, extra=()):
    refs = [arg for rel, variable in decls for arg in ("--method-metadata", f"{repo / SRC / rel}:{variable}")]
    return run_cli(["run", "register", *refs, "--repo", str(repo), "--format", "json", *extra], cwd=tmp_path)


def _records(tmp_path, action="register"):
    log = tmp_path / ".checks" / "decisions.jsonl"
    rows = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [r for r in rows if r.get("action") == action]


CATBOOST = ("models/catboost/info.py", "catboost_method_metadata")
NORI_RERUN = ("models/nori/info.py", "nori_new_method_metadata")


def test_several_declarations_are_registered_in_one_edit_and_one_record(checkout, tmp_path):
    repo, _ = checkout
    chakra = _chakra(repo)
    one_by_one = tmp_path / "one_by_one"
    one_by_one.mkdir()
    for decl in (CATBOOST, NORI_RERUN, chakra):  # the same edits, one run each, on a copy of the file
        assert register(repo, *decl, one_by_one).exit_code == 0
    expected = methods(repo)
    (repo / METHODS).write_text(METHODS_PY)
    before = (repo / METHODS).stat().st_ino

    result = register_several(repo, tmp_path, CATBOOST, NORI_RERUN, chakra)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert methods(repo) == expected  # every declaration, each where a single register puts it
    assert (repo / METHODS).stat().st_ino != before  # written whole to a new file, renamed over the old one
    compile(methods(repo), "methods.py", "exec")
    (record,) = _records(tmp_path)
    assert record["outcome"] == "ran"
    assert record["target"] == "CatBoost@catboost-2026-03,Nori@nori-2026-09,Chakra@chakra-1"
    assert record["options"]["method_metadata"] == [
        f"{repo / SRC / rel}:{var}" for rel, var in (CATBOOST, NORI_RERUN, chakra)
    ]
    assert {v["code"] for v in record["verdicts"]} >= {"TA501", "TA502", "TA503", "TA504"}


def test_one_declaration_keeps_its_record_as_before(checkout, tmp_path):
    repo, _ = checkout
    assert register_several(repo, tmp_path, CATBOOST).exit_code == 0
    (record,) = _records(tmp_path)
    assert record["target"] == "CatBoost@catboost-2026-03"
    assert record["options"]["method_metadata"] == f"{repo / SRC / CATBOOST[0]}:{CATBOOST[1]}"


BLOCKING_DECLARATIONS = {
    "an existing (method, suite)": (
        CATBOOST,
        'MethodMetadata.config(method="LightGBM", suite="lightgbm-2026-01", ag_key="GBM")',
        "TA501",
        "already declares method='LightGBM'",
    ),
    "a control character": (
        CATBOOST,
        'MethodMetadata.config(method="xRFM", suite="xrfm-1\\r", ag_key="XRFM", compute="gpu")',
        "TA504",
        "suite 'xrfm-1\\r' holds U+000D",
    ),
    "a second declaration of one method": (
        NORI_RERUN,
        'MethodMetadata.config(method="Nori", suite="nori-2026-12", ag_key="TA-NORI", compute="gpu")',
        "TA501",
        "both declare method='Nori'",
    ),
}


@pytest.mark.parametrize("case", BLOCKING_DECLARATIONS.values(), ids=BLOCKING_DECLARATIONS.keys())
def test_one_blocked_declaration_blocks_the_edit_of_all(checkout, tmp_path, case):
    repo, _ = checkout
    good, call, code, message = case
    write(repo, SRC / "models/other/info.py", info(other_metadata=call))
    result = register_several(repo, tmp_path, good, ("models/other/info.py", "other_metadata"))
    assert result.exit_code == 1, result.stdout + result.stderr
    assert methods(repo) == METHODS_PY  # the good declaration is not added either: all or none
    verdict = next(v for v in json.loads(result.stdout)["verdicts"] if v["code"] == code)
    assert verdict["blocks"] and message in verdict["message"]
    (record,) = _records(tmp_path)
    assert record["outcome"] == "blocked"


def test_a_declaration_given_twice_is_a_usage_error(checkout, tmp_path):
    repo, _ = checkout
    result = register_several(repo, tmp_path, CATBOOST, CATBOOST)
    assert result.exit_code == 2 and "is given twice" in result.stdout + result.stderr
    assert methods(repo) == METHODS_PY


def test_a_rule_reading_one_declaration_crashes_and_blocks_on_several(checkout):
    """A rule written for one declaration (ctx.facts.metadata) cannot pass on several it never judged."""
    repo, _ = checkout
    refs = tuple(f"{repo / SRC / rel}:{var}" for rel, var in (CATBOOST, NORI_RERUN))
    facts = RegisterFacts.gather(RegisterOptions(method_metadata=refs, repo=str(repo)), plan_edit)
    assert [d.metadata.method for d in facts.declarations] == ["CatBoost", "Nori"]
    with pytest.raises(SeveralDeclarations, match="ctx.facts.declarations"):
        facts.metadata  # noqa: B018 - the property raises


def test_rerunning_several_adds_only_what_is_missing(checkout, tmp_path):
    """A rerun (after a crash, or of a batch half registered) adds what is missing and nothing twice."""
    repo, _ = checkout
    chakra = _chakra(repo)
    assert register(repo, *CATBOOST, tmp_path).exit_code == 0
    result = register_several(repo, tmp_path, CATBOOST, chakra)
    assert result.exit_code == 0, result.stdout + result.stderr
    summary = json.loads(result.stdout)["summary"]
    assert "catboost_method_metadata was registered already" in summary and "add chakra_metadata" in summary
    once = methods(repo)
    assert once.count("catboost_method_metadata") == 2 and once.count("chakra_metadata") == 2  # import, entry
    again = register_several(repo, tmp_path, CATBOOST, chakra)
    assert again.exit_code == 0 and "are registered already" in json.loads(again.stdout)["summary"]
    assert methods(repo) == once


def test_several_dry_run_plans_every_change_and_writes_nothing(checkout, tmp_path):
    repo, _ = checkout
    result = register_several(repo, tmp_path, CATBOOST, NORI_RERUN, extra=("--dry-run",))
    assert result.exit_code == 0, result.stdout + result.stderr
    plan = "\n".join(json.loads(result.stdout)["plan"])
    assert "add catboost_method_metadata" in plan and "swap nori_method_metadata -> nori_new_method_metadata" in plan
    assert methods(repo) == METHODS_PY


#: a sitecustomize that kills the interpreter (SIGKILL) the moment it would rename a file onto methods.py
KILL_AT_RENAME = """import os, signal, sys

def _kill(event, args):
    if event == "os.rename" and str(args[1]).endswith("methods.py"):
        os.kill(os.getpid(), signal.SIGKILL)

sys.addaudithook(_kill)
"""


def test_a_register_killed_before_its_one_write_adds_none_and_a_rerun_adds_all(checkout, tmp_path):
    repo, _ = checkout
    chakra = _chakra(repo)
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(KILL_AT_RENAME)
    refs = [arg for rel, var in (CATBOOST, chakra) for arg in ("--method-metadata", f"{repo / SRC / rel}:{var}")]
    env = {"PYTHONPATH": os.pathsep.join([str(hook), CHILD_PYTHONPATH])}
    killed = run_checks(["run", "register", *refs, "--repo", repo], cwd=tmp_path, env=env)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert methods(repo) == METHODS_PY  # killed with every edit made in memory: none reached methods.py
    assert [p.name for p in (repo / METHODS).parent.glob(".methods.py.checks-tmp-*")], "no write was under way"

    rerun = register_several(repo, tmp_path, CATBOOST, chakra)
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    text = methods(repo)
    assert "        catboost_method_metadata,\n" in text and "        chakra_metadata,\n" in text
    assert not list((repo / METHODS).parent.glob(".methods.py.checks-tmp-*"))  # the killed run's temporary swept
