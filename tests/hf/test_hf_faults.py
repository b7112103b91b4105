"""Transient Hub errors never change a decision: the whole migration, clean and under faults, gives one bundle.

The fixture leaderboard (every match class and existing-state status) is migrated through
the CLI against the local Hub: once clean, then with 20% of all requests answered with a
5xx or a dropped connection (three seeds), and under a 429 storm (a rate limit far below
what 16 workers ask for). Every bundle must be byte-identical to the clean one, apart from
the check time and the local Hub's port; the one model whose reads always fail stays needs_review with a reason
that says the read failed.
"""

from __future__ import annotations

import re

import pytest

from checks.testing import run_cli
from tests.support.hf_fixtures import BENCHMARK_ID, FLAKY_REPO, build_leaderboard_hub, leaderboard_faults
from hfmigrate_checks.testing import LocalHub, transient_faults
from tests.support.hf_fixtures import prepare
from hfmigrate_checks.testing.migration import draft_step, migration_steps

FAULTS_20 = transient_faults(0.2)


def _bundle(path) -> dict[str, str]:
    files = {p.relative_to(path).as_posix(): p.read_text() for p in sorted(path.rglob("*")) if p.is_file()}
    files["review.md"] = re.sub(r"checked at \S+", "checked at <time>", files["review.md"])
    # each run has its own local Hub, on its own port
    files = {name: re.sub(r"http://127\.0\.0\.1:\d+", "<hub>", text) for name, text in files.items()}
    if "review.html" in files:  # the same page; difflib numbers its anchors per table made in the process
        files["review.html"] = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", "<time>", files["review.html"])
        files["review.html"] = re.sub(r"\b(difflib_chg_)?(to|from)\d+_", r"\1\2N_", files["review.html"])
    return files


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    models = build_leaderboard_hub(tmp / "hub")
    env = prepare(tmp, models)
    with LocalHub(tmp / "hub", faults=leaderboard_faults()) as hub:
        env["HF_ENDPOINT"] = hub.endpoint
        for args in migration_steps(BENCHMARK_ID)[:2]:
            assert run_cli(args, env=env, cwd=tmp).exit_code == 0
    return tmp, env, models


def _same(bundle: dict[str, str], clean: dict[str, str]) -> None:
    assert sorted(bundle) == sorted(clean)
    for name, text in clean.items():
        got = bundle[name]
        at = next((i for i, (a, b) in enumerate(zip(got, text)) if a != b), min(len(got), len(text)))
        assert got == text, (
            f"{name} differs at character {at}: {got[at - 80 : at + 80]!r} vs {text[at - 80 : at + 80]!r}"
        )


def _migrate(board, name: str, **hub_options):
    tmp, env, _ = board
    faults = [*leaderboard_faults(), *hub_options.pop("faults", ())]
    with LocalHub(tmp / "hub", faults=faults, **hub_options) as hub:
        result = run_cli(draft_step(BENCHMARK_ID, bundle=name), env={**env, "HF_ENDPOINT": hub.endpoint}, cwd=tmp)
        requests = hub.requests
    assert result.exit_code == 0, result.stdout + result.stderr
    assert {r.method for r in requests} <= {"GET", "HEAD"}
    return _bundle(tmp / name), requests


@pytest.fixture(scope="module")
def clean(board):
    return _migrate(board, "clean")


def test_the_clean_run_flags_only_the_always_failing_read(clean, board):
    bundle, _ = clean
    _, _, models = board
    flaky = [line for line in bundle["source-ledger.csv"].splitlines() if line.startswith(FLAKY_REPO + ",")]
    assert flaky and all(",needs_review," in line for line in flaky)
    assert "the read failed: HTTP 500" in flaky[0] and "(after 9 attempts)" in flaky[0]
    assert "no .eval_results file" not in bundle["review.md"]
    drafted = {path.split("/")[1] for path in bundle if path.startswith("drafts/")}
    assert drafted == {
        m.repo_id.replace("/", "--")
        for m in models.values()
        if m.resolution == "exact" and m.state in ("new", "update_existing_pr")
    }


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 7, 42])
def test_twenty_percent_5xx_and_resets_change_nothing(clean, board, seed):
    """Fault: 20% of all Hub requests (every kind: info, search, tree, discussions, file HEAD and GET) answered 503 or
    500 or dropped without an answer, three seeds, during `checks run draft`

    Must: the bundle is identical to the clean run's: every decision, draft, ledger row and reason
    """
    bundle, _ = _migrate(board, f"faults-{seed}", faults=FAULTS_20, seed=seed)
    _, requests = clean
    _same(bundle, clean[0])


def test_the_fault_runs_really_failed_requests(board):
    _, requests = _migrate(board, "faults-check", faults=FAULTS_20, seed=3)
    failed = [r for r in requests if r.status in (0, 500, 503) and FLAKY_REPO not in r.path]
    assert len(failed) > 0.1 * len(requests)  # about a fifth of everything failed at least once
    assert {0, 500, 503} <= {r.status for r in failed}
    assert any(r.path.endswith("/discussions") for r in failed)  # calls huggingface_hub sends once ...
    assert any("/resolve/" in r.path and r.method == "GET" for r in failed)  # ... and file downloads


@pytest.mark.slow
def test_a_429_storm_changes_nothing(clean, board):
    """Fault: a 429 storm: the Hub rate-limits to 80 requests/s with bursts of 4 while 16 workers read (over a third of
    the requests answered 429 with Retry-After)

    Must: the bundle is identical to the clean run's; no model turns needs_review
    """
    bundle, requests = _migrate(board, "storm", rate_limit=80.0, burst=4)
    assert sum(r.status == 429 for r in requests) > 20
    _same(bundle, clean[0])
