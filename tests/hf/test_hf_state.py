"""Existing state: every status on the fixture leaderboard, PR pages and drafts, and fail-closed reads."""

from __future__ import annotations

import contextlib
import datetime as dt
import threading

import pytest
from tests.support.hf_fixtures import (
    BENCHMARK_ID,
    OTHER_BENCHMARK,
    TOKEN,
    WHOAMI,
    bench_file,
    build_leaderboard_hub,
    eval_results_yaml,
)

from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.hub.state import STATUSES, inspect_repo
from hfmigrate_checks.testing import Fault, LocalHub, write_model

VALUES = {"main": 71.2, "hard": 40.5}


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    root = tmp_path_factory.mktemp("state")
    models = build_leaderboard_hub(root)
    with LocalHub(root) as local:
        yield root, models, local
        assert local.write_requests() == []


@pytest.fixture
def hub(board):
    with ReadOnlyHub(board[2].endpoint, TOKEN, backoff=0.01) as hub:
        yield hub


@contextlib.contextmanager
def _faults(board, *faults: Fault):
    """The module's local Hub answers with ``faults`` inside the block, and cleanly again after it."""
    for fault in faults:
        board[2].add_fault(fault)
    try:
        yield
    finally:
        board[2].clear_faults()


@pytest.fixture
def anonymous(board):
    with ReadOnlyHub(board[2].endpoint, backoff=0.01) as hub:
        yield hub


def _exact(models):
    return [m for m in models.values() if m.resolution == "exact"]


def test_the_fixture_covers_every_state_status(board):
    assert {m.state for m in _exact(board[1])} == set(STATUSES)


@pytest.mark.parametrize("authenticated", [True, False])
def test_each_exact_model_ends_in_its_expected_status(board, hub, anonymous, authenticated):
    client = hub if authenticated else anonymous
    for model in _exact(board[1]):
        got = inspect_repo(client, model.repo_id, BENCHMARK_ID, proposed=model.values)
        expected = model.state if authenticated else model.state_anonymous
        assert got.status == expected, f"{model.label}: {got.reason}"
        assert got.reason and got.repo_id == model.repo_id


def test_the_record_carries_sha_account_and_check_time(board, hub):
    got = inspect_repo(hub, "sigma/Sigma-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.sha == hub.model_info("sigma/Sigma-7B").sha and got.revision == "main"
    assert got.whoami == WHOAMI
    assert abs(dt.datetime.fromisoformat(got.checked_at) - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(minutes=1)
    (pr,) = got.pending_prs
    assert (pr.num, pr.author, pr.status, pr.matches_benchmark, pr.diff_checked, pr.diff_mentions_benchmark) == (
        1,
        "someone-else",
        "open",
        True,
        True,
        True,
    )
    assert pr.git_reference == "refs/pr/1" and [f.path for f in pr.files] == [".eval_results/toy.yaml"]


def test_a_pinned_revision_is_inspected_and_recorded(hub):
    sha = hub.model_info("gammaco/Gamma-2-70B").sha
    got = inspect_repo(hub, "gammaco/Gamma-2-70B", BENCHMARK_ID, revision=sha)
    assert (got.status, got.revision, got.sha) == ("already_present", sha, sha)
    missing = inspect_repo(hub, "gammaco/Gamma-2-70B", BENCHMARK_ID, revision="0" * 40)
    assert missing.status == "needs_review" and "revision not found" in missing.reason


def test_update_existing_pr_gives_the_prs_latest_file_and_the_missing_tasks(board, hub):
    got = inspect_repo(hub, "eta/Eta-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "update_existing_pr"
    update = got.update
    assert (update.pr_num, update.pr_author, update.path, update.missing_tasks) == (
        4,
        WHOAMI,
        ".eval_results/toy-bench.yaml",
        ("hard",),
    )
    assert update.pr_url == f"{hub.endpoint}/eta/Eta-7B/discussions/4"
    assert [e["dataset"]["task_id"] for e in update.entries] == ["main"] and update.entries[0]["value"] == 71.2
    assert update.text == bench_file({"main": 71.2})
    assert got.pending_prs[0].status == "draft"  # a draft PR is pending


def test_already_in_own_open_pr_keeps_the_pr_record(hub):
    got = inspect_repo(hub, "rho/Rho-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "already_in_own_open_pr" and got.update.missing_tasks == () and got.update.pr_num == 2


def test_already_present_matches_dataset_id_not_file_names(hub):
    got = inspect_repo(hub, "gammaco/Gamma-2-70B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "already_present" and got.main_has_benchmark
    assert [f.path for f in got.main_files] == [".eval_results/results.yaml"]


def test_a_match_beyond_the_first_page_of_prs_is_found(board, hub):
    local = board[2]
    local.clear_requests()
    got = inspect_repo(hub, "upsilon/Upsilon-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "duplicate_open_pr" and [pr.num for pr in got.matching_prs] == [1]
    pages = {r.query["p"][0] for r in local.requests if r.path == "/api/models/upsilon/Upsilon-7B/discussions"}
    assert pages == {"0", "1"}
    assert len(got.pending_prs) == 1 + sum(1 for n in range(2, 62) if n % 3 == 0)


def test_closed_merged_and_non_pr_discussions_do_not_count(hub):
    got = inspect_repo(hub, "omicron/Omicron-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "new" and got.pending_prs == ()


def test_other_benchmarks_on_main_do_not_count(hub):
    got = inspect_repo(hub, "betalab/Beta-7B-Instruct", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "new" and [f.path for f in got.main_files] == [".eval_results/gpqa.yaml"]
    assert inspect_repo(hub, "betalab/Beta-7B-Instruct", OTHER_BENCHMARK).status == "already_present"


def _write(board, repo_id, files=None, prs=(), **kw):
    write_model(board[0], repo_id, {"README.md": "x", **(files or {})}, prs=prs, **kw)
    return repo_id


def test_unchanged_files_at_a_pr_ref_are_not_downloaded_again(board, hub):
    gpqa = eval_results_yaml([(OTHER_BENCHMARK, "diamond", 0.4)])
    repo = _write(
        board,
        "reuse/Files",
        {".eval_results/gpqa.yaml": gpqa},
        prs=[{"num": 1, "author": "x", "status": "open", "files": {".eval_results/toy.yaml": bench_file(VALUES)}}],
    )
    board[2].clear_requests()
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=VALUES)
    assert got.status == "duplicate_open_pr"
    assert [f.path for f in got.pending_prs[0].files] == [".eval_results/gpqa.yaml", ".eval_results/toy.yaml"]
    downloads = [r.path for r in board[2].requests if "/resolve/" in r.path and r.method == "GET"]
    assert sorted(p.rsplit("/", 1)[1] for p in downloads) == ["gpqa.yaml", "toy.yaml"]
    assert any("refs%2Fpr%2F1/.eval_results/toy.yaml" in p for p in downloads)


def test_case_variants_of_the_benchmark_id_count_as_present(board, hub):
    upper = eval_results_yaml([(BENCHMARK_ID.upper(), "main", 1.0)])
    repo = _write(board, "case/On-Main", {".eval_results/x.yml": upper})
    assert inspect_repo(hub, repo, BENCHMARK_ID).status == "already_present"
    repo = _write(
        board,
        "case/In-Own-PR",
        prs=[{"num": 1, "author": WHOAMI, "status": "open", "files": {".eval_results/x.yaml": upper}}],
    )
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed={"hard": 1.0})
    assert got.status == "needs_review" and "spells the benchmark id" in got.reason


@pytest.mark.parametrize(
    ("pr_file", "proposed", "status", "reason"),
    [
        (bench_file({"main": 71}), {"main": 71.0, "hard": 2.0}, "update_existing_pr", "lacks task(s) hard"),
        (
            eval_results_yaml([(BENCHMARK_ID, "main", 1.0), (BENCHMARK_ID, "main", 2.0)]),
            {"main": 1.0},
            "needs_review",
            "conflicting values",
        ),
        (bench_file({"main": '"71.2"'}), {"main": 71.2}, "needs_review", "conflicting values"),  # a string value
    ],
)
def test_owned_pr_values_must_agree(board, hub, pr_file, proposed, status, reason):
    repo = _write(
        board,
        "own/Values",
        prs=[{"num": 3, "author": WHOAMI, "status": "open", "files": {".eval_results/t.yaml": pr_file}}],
    )
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=proposed)
    assert got.status == status and reason in got.reason


def test_an_owned_pr_spreading_the_benchmark_over_two_files_needs_review(board, hub):
    repo = _write(
        board,
        "own/Split",
        prs=[
            {
                "num": 1,
                "author": WHOAMI,
                "status": "open",
                "files": {
                    ".eval_results/a.yaml": bench_file({"main": 1.0}),
                    ".eval_results/b.yaml": bench_file({"hard": 2.0}),
                },
            }
        ],
    )
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed={"main": 1.0, "hard": 2.0})
    assert got.status == "needs_review" and "2 files" in got.reason


def test_a_diff_naming_the_benchmark_without_a_matching_file_needs_review(board, hub):
    diff = f"diff --git a/results.md b/results.md\n--- a/results.md\n+++ b/results.md\n@@ -0,0 +1 @@\n+{BENCHMARK_ID}: 70\n"
    repo = _write(
        board,
        "diff/Only",
        prs=[{"num": 1, "author": "x", "status": "open", "files": {"results.md": "x"}, "diff": diff}],
    )
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and "diff adds lines naming" in got.reason
    assert got.pending_prs[0].diff_mentions_benchmark and not got.pending_prs[0].files


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({".eval_results/big.yaml": "#" * ((1 << 20) + 1)}, "over the 1048576-byte limit"),
        ({".eval_results/map.yaml": "dataset: {id: x}\n"}, "root is not a list"),
        ({".eval_results/bad.yaml": "- a: [\n"}, "cannot parse YAML"),
    ],
)
def test_unreadable_files_on_main_are_needs_review(board, hub, files, reason):
    repo = _write(board, "broken/Main", files)
    board[2].clear_requests()
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and reason in got.reason
    if "big.yaml" in files:
        assert not any("big.yaml" in r.path for r in board[2].requests if "/resolve/" in r.path)


def test_a_gated_repo_is_needs_review_even_without_files(board, hub):
    repo = _write(board, "gated/Empty", gated=True)
    got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and "gated" in got.reason


def test_a_missing_repo_is_needs_review(hub):
    got = inspect_repo(hub, "nobody/Nothing-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and got.sha is None and "not found" in got.reason


@pytest.mark.parametrize("path", ["/discussions$", "/discussions/1$", "^/api/models/sigma/Sigma-7B$"])
def test_a_flaky_hub_is_retried_and_still_gives_the_right_status(board, hub, path):
    with _faults(board, Fault(path, status=500, times=1), Fault(path, truncate=True, times=1)):
        assert inspect_repo(hub, "sigma/Sigma-7B", BENCHMARK_ID, proposed=VALUES).status == "duplicate_open_pr"


@pytest.mark.parametrize(
    ("repo", "path"),
    [
        ("omicron/Omicron-7B", "/discussions$"),
        ("sigma/Sigma-7B", "/discussions/1$"),
        ("omicron/Omicron-7B", "^/api/models/omicron/Omicron-7B$"),
    ],
)
def test_a_persistently_failing_hub_is_needs_review_never_new(board, hub, repo, path):
    with _faults(board, Fault(path, status=503, times=None)):
        got = inspect_repo(hub, repo, BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and "503" in got.reason


def test_a_failing_whoami_leaves_ownership_unsettled(board):
    with (
        _faults(board, Fault("whoami", status=503, times=None)),
        ReadOnlyHub(board[2].endpoint, TOKEN, backoff=0.01) as hub,
    ):
        got = inspect_repo(hub, "eta/Eta-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review" and "authenticated account" in got.reason


def test_a_pr_file_that_cannot_be_downloaded_says_the_read_failed(board):
    pr_file = Fault("^/rho/Rho-7B/resolve/refs%2Fpr%2F2/", status=503, times=None)
    with _faults(board, pr_file), ReadOnlyHub(board[2].endpoint, TOKEN, backoff=0.01, retries=2) as hub:
        got = inspect_repo(hub, "rho/Rho-7B", BENCHMARK_ID, proposed=VALUES)
    assert got.status == "needs_review"
    assert "could not be read" in got.reason and "the read failed: HTTP 503" in got.reason
    assert "declares it" not in got.reason  # the PR's diff names the benchmark; its file was just not read


def test_nothing_proposed_is_not_every_proposed_value(board, hub):
    got = inspect_repo(hub, "rho/Rho-7B", BENCHMARK_ID)
    assert got.status == "already_in_own_open_pr"
    assert "every proposed value" not in got.reason
    assert "no values were proposed, so none were compared" in got.reason and "task(s) hard, main" in got.reason


def test_inspecting_a_repo_starts_no_thread(board, hub, monkeypatch):
    """One level of concurrency: `checks run draft` runs repos on its pool; the client and the inspection add none."""
    started = []
    original = threading.Thread.start
    monkeypatch.setattr(threading.Thread, "start", lambda self: (started.append(self.name), original(self))[1])
    got = inspect_repo(hub, "upsilon/Upsilon-7B", BENCHMARK_ID, proposed=VALUES)  # 61 PRs over two pages
    assert got.status == "duplicate_open_pr" and len(got.pending_prs) > 10
    assert [name for name in started if "process_request_thread" not in name] == []  # the local Hub's own aside
