"""End to end: a 30+ model leaderboard migrated against the local Hub with the real huggingface_hub client.

contract -> ledger -> `checks run draft` -> bundle -> `checks hf validate`, all through the CLI.
Every match class and every existing-state status of tests/support/hf_fixtures.py is covered; the
Hub must see only GET/HEAD requests.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from pathlib import Path

import pytest
from tests.support.hf_fixtures import (
    BENCHMARK_ID,
    TOKEN,
    bench_file,
    build_leaderboard_hub,
    leaderboard_faults,
    README_MODELS,
    STARRED,
    prepare,
    write_benchmark,
)

from checks.io import load_yaml
from checks.testing import run_cli
from hfmigrate_checks.testing import LocalHub, write_model
from hfmigrate_checks.testing.migration import client_env, contract_step, draft_step, ledger_step, migration_steps


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    models = build_leaderboard_hub(tmp / "hub", fillers=8)
    env = prepare(tmp, models)
    with LocalHub(tmp / "hub", faults=leaderboard_faults()) as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        steps = migration_steps(BENCHMARK_ID)
        results = [run_cli(args, env=env, cwd=tmp) for args in steps]
        first_review = (tmp / "bundle" / "review.md").read_text()
        (tmp / "bundle" / "stale.txt").write_text("from an older run")
        # a run that fails before writing leaves the previous bundle as it was ...
        broken = run_cli([*steps[2][:5], "missing.json", *steps[2][6:]], env=env, cwd=tmp)
        kept = (tmp / "bundle" / "stale.txt").exists() and (tmp / "bundle" / "review.md").read_text() == first_review
        # a directory that is not a bundle (here: the Hub's own fixture) is refused before any Hub read
        refused = run_cli([*steps[2][:-1], "hub"], env=env, cwd=tmp)
        kept = (
            kept and refused.exit_code == 2 and "is a non-empty directory that is not a review bundle" in refused.stderr
        )
        kept = kept and (tmp / "hub" / "whoami.json").exists()
        # ... and a complete rerun replaces it as a whole
        results.append(run_cli(steps[2], env={**env, "CHECKS_PROGRESS": "always"}, cwd=tmp))  # with a bar
        methods = Counter(r.method for r in hub.requests)
    return tmp, models, results, methods, (broken, kept)


def test_the_hub_gather_shows_progress_only_where_asked(migrated):

    _tmp, _models, results, _methods, _ = migrated
    assert "Hub: resolve and inspect" not in results[2].stderr  # not a terminal
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", results[3].stderr)
    assert "Hub: resolve and inspect" in shown and re.search(r"\b(\d+)/\1 models\b", shown), shown


def expected_counts(models) -> dict[str, int]:
    exact = [m for m in models.values() if m.resolution == "exact"]
    state = Counter(m.state for m in exact)
    return {
        "source models": len(models),
        "exact matches": len(exact),
        "new drafts": state["new"],
        "owned-PR update drafts": state["update_existing_pr"],
        "existing-result skips": state["already_present"] + state["already_in_own_open_pr"],
        "duplicate-PR skips": state["duplicate_open_pr"],
        "unresolved checks": state["needs_review"] + sum(m.resolution == "needs_review" for m in models.values()),
        "ambiguous matches": sum(m.resolution == "ambiguous" for m in models.values()),
        "models not on the Hub": sum(m.resolution == "not_on_hub" for m in models.values()),
    }


def test_every_step_succeeds_and_the_hub_only_read(migrated):
    _tmp, models, results, methods, _ = migrated
    assert len(models) >= 30
    for result in results:
        assert result.exit_code == 0, result.stdout + result.stderr
    assert set(methods) <= {"GET", "HEAD"}, methods
    classes = {m.resolution for m in models.values()}
    states = {m.state for m in models.values() if m.state}
    assert classes == {"exact", "ambiguous", "not_on_hub", "mismatch", "not_applicable", "needs_review"}
    assert states == {
        "new",
        "already_present",
        "update_existing_pr",
        "already_in_own_open_pr",
        "duplicate_open_pr",
        "needs_review",
    }


def test_summary_counts_and_no_write_sentence(migrated):
    _tmp, models, results, _, _ = migrated
    out = results[2].stdout
    for name, value in expected_counts(models).items():
        assert f"{name}:" in out and any(
            line.split(":")[0].strip() == name and line.split(":")[1].strip() == str(value) for line in out.splitlines()
        ), (name, value, out)
    assert "No Hugging Face pull requests were opened or updated." in out


def test_drafts_exist_only_where_they_should(migrated):
    tmp, models, _, _, _ = migrated
    bundle = tmp / "bundle"
    written = sorted(p.relative_to(bundle).as_posix() for p in (bundle / "drafts").rglob("*") if p.is_file())
    expected = sorted(
        f"drafts/{m.repo_id.replace('/', '--')}/.eval_results/" + ("toy-bench.yaml")
        for m in models.values()
        if m.resolution == "exact" and m.state in ("new", "update_existing_pr")
    )
    assert written == expected
    assert sorted(p.name for p in bundle.iterdir()) == [
        "drafts",
        "review.html",
        "review.md",
        "source-ledger.csv",
        "validation.txt",
    ]
    assert not [p for p in tmp.iterdir() if p.name.startswith(".bundle")], "temporary build dirs must be gone"


def test_new_draft_content_and_qualified_cell_left_out(migrated):
    tmp, models, _, _, _ = migrated
    alpha = models[STARRED]
    data = load_yaml(tmp / "bundle" / "drafts" / "acme--Alpha-7B" / ".eval_results" / "toy-bench.yaml")
    assert data == [
        {
            "dataset": {"id": BENCHMARK_ID, "task_id": "main"},
            "value": alpha.values["main"],
            "source": {"url": "https://example.org/toy/README.md", "name": "Toy leaderboard"},
        }
    ]
    ledger = list(csv.DictReader(io.StringIO((tmp / "bundle" / "source-ledger.csv").read_text())))
    starred = [r for r in ledger if r["source_model"] == STARRED and r["source_task"] == "Hard"]
    assert (
        starred[0]["decision"] == "needs_review" and "marker * has no footnote definition" in starred[0]["qualifiers"]
    )
    assert starred[0]["source_value"] == f"{alpha.values['hard']}*"


def test_owned_pr_update_is_the_complete_file(migrated):
    tmp, models, _, _, _ = migrated
    eta = next(m for m in models.values() if m.state == "update_existing_pr")
    path = tmp / "bundle" / "drafts" / eta.repo_id.replace("/", "--") / ".eval_results" / "toy-bench.yaml"
    data = load_yaml(path)
    assert [(e["dataset"]["task_id"], e["value"]) for e in data] == [("main", 71.2), ("hard", eta.values["hard"])]
    assert data[0]["source"] == {"url": "https://example.org/leaderboard"}  # the PR's entry, kept as it is
    review = (tmp / "bundle" / "review.md").read_text()
    assert "PR #4 by arena-bot" in review and "authenticated as arena-bot" in review


def test_review_and_ledger_account_for_every_model(migrated):
    tmp, models, _, _, _ = migrated
    bundle = tmp / "bundle"
    review = (bundle / "review.md").read_text()
    assert review.rstrip().splitlines()[-1] == "No Hugging Face pull requests were opened while preparing this bundle."
    for heading in (
        "## Benchmark contract",
        "## Proposed repository changes",
        "## Excluded and unresolved models",
        "## Conflicts and assumptions",
        "## Reviewer checklist",
    ):
        assert heading in review
    assert review.count("- [ ] ") == 9
    assert (
        "| Source model | Hub repo | Match evidence | Inspected SHA | Draft path | Tasks/values | Existing state | Decision |"
        in review
    )
    excluded = review.split("## Excluded and unresolved models")[1].split("## Conflicts")[0]
    assert "| Source model | Classification | Candidates checked | Reason | Source locator |" in excluded
    for m in models.values():
        drafted = m.resolution == "exact" and m.state in ("new", "update_existing_pr")
        assert (f"| {m.label} |" in excluded) != drafted, m.label
    text = (bundle / "source-ledger.csv").read_text()
    assert text.splitlines()[0] == (
        "source_model,source_variant,source_task,source_value,source_unit,source_url,"
        "source_locator,qualifiers,hub_repo,match_status,match_evidence,decision"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 3 * len(models)
    assert {r["source_model"] for r in rows} == set(models)
    assert {r["decision"] for r in rows if r["source_task"] == "Average"} == {"ignored_column"}
    by_model = {r["source_model"]: r for r in rows if r["source_task"] == "Main"}
    for m in models.values():
        assert by_model[m.label]["match_status"] == m.resolution, m.label


def test_validation_passes_and_the_cli_agrees(migrated):
    tmp, _models, _, _, _ = migrated
    validation = (tmp / "bundle" / "validation.txt").read_text()
    assert validation.rstrip().endswith("status=PASS")
    result = run_cli(
        [
            "hf",
            "validate",
            str(tmp / "bundle"),
            "--benchmark-id",
            BENCHMARK_ID,
            "--task-id",
            "main",
            "--task-id",
            "hard",
        ]
    )
    assert (
        result.exit_code == 0 and result.stdout == ""
    )  # validation.txt keeps the skill's PASS lines; a checker is quiet


def test_failed_run_keeps_the_bundle_and_rerun_replaces_it(migrated):
    tmp, _models, results, _, (broken, kept) = migrated
    assert broken.exit_code == 2 and "missing.json: cannot read the contract" in broken.stderr
    assert kept
    assert results[3].exit_code == 0 and results[3].stdout.splitlines()[1:] == results[2].stdout.splitlines()[1:]
    assert not (tmp / "bundle" / "stale.txt").exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith(".bundle")], "temporary build dirs must be gone"


def test_resolve_and_inspect_commands_show_one_step(tmp_path):

    write_benchmark(tmp_path / "hub")
    write_model(tmp_path / "hub", "acme/Alpha-7B", {"README.md": "x"})
    write_model(tmp_path / "hub", "acme/Beta-7B", {".eval_results/x.yaml": bench_file({"main": 1.0})})
    env = {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    with LocalHub(tmp_path / "hub") as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        resolved = run_cli(["hf", "resolve", "acme/Alpha-7B", "Nobody 3B"], env=env)
        present = run_cli(["hf", "inspect", "acme/Beta-7B", "--benchmark-id", BENCHMARK_ID], env=env)
        new = run_cli(["hf", "inspect", "acme/Alpha-7B", "--benchmark-id", BENCHMARK_ID], env=env)
        hostile = run_cli(["hf", "inspect", "../../x", "--benchmark-id", BENCHMARK_ID], env=env)
        assert {r.method for r in hub.requests} <= {"GET", "HEAD"}
    assert resolved.exit_code == 0, resolved.stderr
    assert "acme/Alpha-7B: exact -> acme/Alpha-7B @ " in resolved.stdout and "Nobody 3B: not_on_hub" in resolved.stdout
    assert present.stdout.startswith("acme/Beta-7B: already_present at ")
    assert new.stdout.startswith("acme/Alpha-7B: new at ")
    assert hostile.exit_code == 2 and "repo id must be exactly 'owner/name'" in hostile.stderr


def test_without_a_token_no_pr_is_taken_for_ours(tmp_path):
    models = build_leaderboard_hub(tmp_path / "hub")
    prepare(tmp_path, models)
    env = {"HF_HOME": str(tmp_path / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1", "HF_TOKEN": ""}
    with LocalHub(tmp_path / "hub", faults=leaderboard_faults()) as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        for args in (
            contract_step(BENCHMARK_ID),
            ledger_step(heading=None, source_url=None),
            draft_step(BENCHMARK_ID),
        ):
            result = run_cli(args, env=env, cwd=tmp_path)
            assert result.exit_code == 0, result.stdout + result.stderr
        assert not any(r.authorized for r in hub.requests)
    written = sorted(p.parent.parent.name for p in (tmp_path / "bundle" / "drafts").rglob("*.yaml"))
    expected = sorted(
        m.repo_id.replace("/", "--") for m in models.values() if m.resolution == "exact" and m.state_anonymous == "new"
    )
    assert written == expected
    assert "owned-PR update drafts: 0" in " ".join(result.stdout.split())
    assert "none (anonymous read)" in (tmp_path / "bundle" / "review.md").read_text()
    drafted = (tmp_path / "bundle" / "drafts" / "acme--Alpha-7B" / ".eval_results" / "toy-bench.yaml").read_text()
    assert "source:" not in drafted  # no --source-url and no link: no source is invented


# ---------------------------------------------------------------- a README as maintainers write them

README_CONTRACT = """metric: accuracy
direction: higher_is_better
unit: percent
source_url: https://example.org/toy-bench/README.md
columns:
  Main: main
  Hard (multi-step): hard
ignore_columns: [Avg]
"""


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory):
    """tests/fixtures/leaderboard_readme.md migrated end to end, picked by '## Benchmark Results', no --source-url."""
    tmp = tmp_path_factory.mktemp("readme")
    build_leaderboard_hub(tmp / "hub")
    for repo in ("sable/Sable-22B", "wren/Wren-3B"):
        write_model(tmp / "hub", repo, {"README.md": f"# {repo}\n"})
    (tmp / "contract.yaml").write_text(README_CONTRACT)
    readme = Path(__file__).parents[1] / "fixtures" / "leaderboard_readme.md"
    env = client_env(tmp / "hf-home", TOKEN)
    with LocalHub(tmp / "hub") as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        results = [
            run_cli(args, env=env, cwd=tmp)
            for args in (
                contract_step(BENCHMARK_ID),
                ledger_step(str(readme), heading="## Benchmark Results", source_url=None),
                draft_step(BENCHMARK_ID, mapping=None),
            )
        ]
    for result in results:
        assert result.exit_code == 0, result.stdout + result.stderr
    rows = list(csv.DictReader(io.StringIO((tmp / "bundle" / "source-ledger.csv").read_text())))
    by_model = {}
    for row in rows:
        by_model.setdefault(row["source_model"], []).append(row)
    return tmp / "bundle", by_model, results


def _draft(bundle, repo):
    return load_yaml(bundle / "drafts" / repo.replace("/", "--") / ".eval_results" / "toy-bench.yaml")


def test_readme_group_rows_are_not_models_and_every_printed_model_is_accounted_for(readme_run):
    _, by_model, results = readme_run
    assert "11 model(s)" in results[1].stdout
    assert set(by_model) == set(README_MODELS)  # Sable-22B is printed twice (with and without tools)


def test_readme_a_tool_assisted_score_is_drafted_with_its_notes_never_plain(readme_run):
    bundle, by_model, _ = readme_run
    entries = _draft(bundle, "wren/Wren-3B")
    pass_at_1 = "All numbers are pass@1 unless a footnote says otherwise."
    assert [(e["dataset"]["task_id"], e["value"], e["notes"]) for e in entries] == [
        ("main", 44.4, f"with tools (a Python interpreter).; The main split, 0-shot.; {pass_at_1}"),
        ("hard", 20.2, f"with tools (a Python interpreter).; {pass_at_1}"),
    ]  # the paragraph above the table says how every score was run
    # two printings of one model (with and without tools) are never merged into one plain score
    sable = by_model["Sable-22B"]
    assert {r["decision"] for r in sable if r["source_task"] != "Avg"} == {"needs_review"}
    assert not (bundle / "drafts" / "sable--Sable-22B").exists()


def test_readme_drafts_take_the_contract_source_and_the_printed_number(readme_run):
    bundle, _, _ = readme_run
    beta = _draft(bundle, "betalab/Beta-7B-Instruct")
    assert beta[0]["value"] == 7.6 and beta[0]["source"] == {"url": "https://example.org/toy-bench/README.md"}
    omicron = _draft(bundle, "omicron/Omicron-7B")  # its hard score is 'n/a'; its provenance footnote is kept
    assert [e["dataset"]["task_id"] for e in omicron] == ["main"] and "Reported by" not in str(omicron)


def test_readme_match_classes_with_evidence(readme_run):
    _, by_model, _ = readme_run
    status = {label: rows[0]["match_status"] for label, rows in by_model.items()}
    assert status["Acme-GPT (API)"] == "not_applicable" and status["Nimbus-Pro"] == "not_applicable"
    assert "under the group 'API models'" in by_model["Nimbus-Pro"][0]["match_evidence"]
    assert status["Kestrel-9B-Instruct"] == "mismatch"
    assert "kestrel-lab/Kestrel-9B" in by_model["Kestrel-9B-Instruct"][0]["match_evidence"]
    assert {r["decision"] for r in by_model["Retracted-7B"]} <= {"needs_review", "ignored_column"}
    assert {r["decision"] for r in by_model["Zeta-13B"] if r["source_task"] == "Main"} == {"mismatch"}
