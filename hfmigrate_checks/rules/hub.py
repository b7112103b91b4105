"""HF3xx repo resolution and HF4xx existing state: draft only for exact repos, never next to an existing result."""

from __future__ import annotations

from pathlib import PurePosixPath

from checks import Finding, rule
from hfmigrate_checks.facts.constants import DRAFT


def _held(state) -> str:
    """Where the repo holds the benchmark already: on main, or in which pending PRs."""
    if state.main_has_benchmark:
        return "on main"
    return "in PR " + ", ".join(f"#{pr.num}" for pr in state.matching_prs)


def _drafted(facts):
    return [d for d in facts.decisions if d.draft is not None]


@rule(
    "HF301",
    "exact-match-only",
    actions=DRAFT,
    why="A leaderboard row describes one model. Filing it on a base model, a newer release, a quantized "
    "copy or a mirror credits that repo with a score it never earned.",
    example_fail="'Llama-3-8B-Instruct (GGUF)' drafted on meta-llama/Meta-Llama-3-8B-Instruct (match: ambiguous)",
    example_pass="'Llama-3-8B-Instruct' drafted on meta-llama/Meta-Llama-3-8B-Instruct (match: exact)",
)
def exact_match_only(ctx):
    """Every draft goes to the repo its source model resolved to exactly, at a path made from a valid repo id."""
    from hfmigrate_checks.drafts.validate import draft_path  # noqa: PLC0415 - start-up: the validator loads the draft models, and `checks rules` loads no hfmigrate_checks.drafts module (tests/core/test_core_startup.py)
    from hfmigrate_checks.source.contract import repo_id_problem  # noqa: PLC0415 - start-up: the contract's attrs classes, and the info-py hook loads no hfmigrate_checks.source module (tests/core/test_core_startup.py)

    seen: dict[str, str] = {}
    for d in _drafted(ctx.facts):
        status = getattr(d.resolution, "status", None)
        if status != "exact":
            yield Finding(f"{d.label!r} is drafted but its match is {status!r}, not exact", target=d.label)
            continue
        problem = repo_id_problem(d.draft.repo_id)
        if problem:
            yield Finding(f"{d.label!r}: {problem}", target=d.label)
            continue
        if d.draft.repo_id != d.resolution.repo_id:
            yield Finding(
                f"{d.label!r} resolved to {d.resolution.repo_id!r} but is drafted on {d.draft.repo_id!r}",
                target=d.label,
            )
        if d.draft.path != draft_path(d.draft.repo_id, PurePosixPath(d.draft.path).name):
            yield Finding(f"{d.label!r}: draft path {d.draft.path!r} is not the repo's drafts folder", target=d.label)
        if d.draft.repo_id in seen:
            yield Finding(
                f"{d.label!r} and {seen[d.draft.repo_id]!r} are both drafted on {d.draft.repo_id!r}", target=d.label
            )
        seen[d.draft.repo_id] = d.label


@rule(
    "HF401",
    "no-duplicate-benchmark",
    actions=DRAFT,
    why="If the benchmark already appears in any .eval_results file on main or in any pending PR, a new "
    "file duplicates it (one task present counts as the benchmark present); the owner would see two "
    "competing results.",
    example_fail="org/model has refs/pr/7 adding .eval_results/gpqa.yaml by bob; a new gpqa.yaml is drafted",
    example_pass="org/model has no GPQA entry on main and no pending PR with one; gpqa.yaml is drafted",
)
def no_duplicate_benchmark(ctx):
    """A new draft only where the repo has the benchmark neither on main nor in a pending PR."""
    for d in _drafted(ctx.facts):
        state = d.state
        status = getattr(state, "status", None)
        if d.draft.kind == "draft" and status != "new":
            yield Finding(f"{d.draft.repo_id}: a new file is drafted but the repo state is {status!r}", target=d.label)
        elif d.draft.kind == "draft" and (getattr(state, "main_has_benchmark", False) or state.matching_prs):
            yield Finding(
                f"{d.draft.repo_id}: a new file is drafted but the benchmark is already {_held(state)}", target=d.label
            )
        elif d.draft.kind == "update_existing_pr" and status != "update_existing_pr":
            yield Finding(
                f"{d.draft.repo_id}: an owned-PR update is drafted but the repo state is {status!r}", target=d.label
            )


@rule(
    "HF402",
    "owned-pr-exception",
    actions=DRAFT,
    why="The only way to add tasks next to a pending PR is to update one's own PR: exactly one PR holds the "
    "benchmark, its author is the authenticated account, and its values agree with the source.",
    example_fail="PR #4 by bob holds gpqa.yaml; you are alice -> an update draft would hijack bob's PR",
    example_pass="PR #4 by alice holds diamond=41.2; the draft is PR #4's file plus main=30.1",
)
def owned_pr_exception(ctx):
    """An update draft extends exactly one pending PR by the authenticated account, keeping its entries and values."""
    from hfmigrate_checks.evalresults.evalfile import EvalFile  # noqa: PLC0415 - start-up: the info-py hook loads no hfmigrate_checks.evalresults module (tests/core/test_core_startup.py)

    facts = ctx.facts
    for d in _drafted(facts):
        if d.draft.kind != "update_existing_pr":
            continue
        update = d.state.update
        yield from _ownership(d, facts.whoami)
        entries = [e for _, e in EvalFile.parse(d.draft.path, d.draft.text).entries()]
        if entries[: len(d.draft.kept)] != list(d.draft.kept):
            yield Finding(
                f"{d.draft.path}: the update does not keep PR #{update.pr_num}'s entries unchanged", target=d.label
            )
        kept_tasks = {(e.get("dataset") or {}).get("task_id") for e in d.draft.kept if isinstance(e, dict)}
        for proposal in d.draft.added:
            if proposal.task_id in kept_tasks:
                yield Finding(
                    f"{d.draft.path}: task {proposal.task_id!r} is already in PR #{update.pr_num}; "
                    f"adding it again would conflict",
                    target=d.label,
                )


def _ownership(d, whoami: str | None):
    """Findings when the PR an update extends is not the authenticated account's one PR for the benchmark."""
    update = d.state.update
    if not whoami:
        yield Finding(f"{d.draft.repo_id}: no authenticated account, so PR ownership is unknown", target=d.label)
    elif update.pr_author.lower() != whoami.lower():
        yield Finding(
            f"{d.draft.repo_id}: PR #{update.pr_num} is by {update.pr_author!r}, "
            f"not the authenticated account {whoami!r}",
            target=d.label,
        )
    holding = d.state.matching_prs
    if len(holding) != 1:
        yield Finding(
            f"{d.draft.repo_id}: {len(holding)} pending PRs hold the benchmark (exactly one needed)", target=d.label
        )


@rule(
    "HF403",
    "every-file-and-diff-checked",
    actions=DRAFT,
    why="A file or PR diff that could not be read may hold the benchmark; treating it as absent would "
    "draft a duplicate. Every exact repo must be inspected completely before anything is drafted.",
    example_fail="org/model: refs/pr/3 diff could not be read (HTTP 500) -> still drafted",
    example_pass="org/model: main and all 2 pending PRs read at 3f2a...; no GPQA entry",
)
def every_file_and_diff_checked(ctx):
    """Every exact repo was inspected; a drafted repo's files and PR diffs were all read, at a recorded commit."""
    from hfmigrate_checks.source.contract import repo_id_problem  # noqa: PLC0415 - start-up: the contract's attrs classes, and the info-py hook loads no hfmigrate_checks.source module (tests/core/test_core_startup.py)

    facts = ctx.facts
    for d in facts.decisions:
        if getattr(d.resolution, "status", None) != "exact" or repo_id_problem(d.repo_id):
            continue
        if d.repo_id not in facts.states:
            yield Finding(f"{d.repo_id}: exact match of {d.label!r} was never inspected", target=d.label)
    for d in _drafted(facts):
        yield from _read_completely(d)


def _read_completely(d):
    """Findings when a drafted repo had read failures, an unread PR diff, or no recorded commit."""
    state = d.state
    problems = list(getattr(state, "problems", ()) or ())
    if problems:
        yield Finding(
            f"{d.draft.repo_id}: drafted although reading it failed: {'; '.join(map(str, problems))}", target=d.label
        )
    unread = [f"#{pr.num}" for pr in getattr(state, "pending_prs", ()) if not pr.diff_checked]
    if unread:
        yield Finding(f"{d.draft.repo_id}: the diff of pending PR {', '.join(unread)} was not read", target=d.label)
    if not getattr(state, "sha", None) or not getattr(state, "checked_at", None):
        yield Finding(f"{d.draft.repo_id}: no inspected commit or check time recorded", target=d.label)


RULES = [exact_match_only, no_duplicate_benchmark, owned_pr_exception, every_file_and_diff_checked]
