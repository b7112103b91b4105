"""What a model repo already holds for one benchmark: on its default branch and in pending PRs.

The skill's duplicate rule: draft nothing new when the benchmark's ``dataset.id`` appears
in any ``.eval_results`` file on the default branch or in any open PR. So this reads every
``.eval_results/*.yaml`` on main (pinned to the inspected sha), lists pull requests of every
status over every page (open and draft are pending), reads each pending PR's diff and its
``.eval_results`` files at ``refs/pr/N``, and matches on the parsed ``dataset.id`` (never on
file names or tags). Anything that could not be read makes the repo ``needs_review``; a
failed read is never taken for "absent".

Statuses: ``already_present`` (on main), ``update_existing_pr`` (exactly one matching
pending PR, authored by the authenticated account, values agree, tasks missing),
``already_in_own_open_pr`` (that PR already holds every proposed value),
``duplicate_open_pr`` (another author, unknown ownership, or several matching PRs),
``needs_review`` (conflicting values, or anything not read reliably, gated repos
included) and ``new``.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

import attrs

from hfmigrate_checks.evalresults.evalfile import EvalFile
from hfmigrate_checks.hub.client import HubNotFound, HubReadError

STATUSES = (
    "already_present",
    "update_existing_pr",
    "already_in_own_open_pr",
    "duplicate_open_pr",
    "needs_review",
    "new",
)
EVAL_DIR = ".eval_results"
#: .yml files are not Hub eval results, but a benchmark hidden in one still counts as present
EVAL_SUFFIXES = (".yaml", ".yml")


@attrs.frozen
class PendingPR:
    """An open or draft PR, with its ``.eval_results`` files at ``refs/pr/N``."""

    num: int
    author: str
    status: str
    title: str
    git_reference: str
    url: str
    files: tuple[EvalFile, ...]
    matches_benchmark: bool
    diff_checked: bool
    diff_mentions_benchmark: bool


@attrs.frozen
class PrUpdate:
    """The owned PR an update would go to: its file holding the benchmark, as it is now."""

    pr_num: int
    pr_author: str
    pr_url: str
    path: str
    text: str
    entries: tuple[dict, ...]
    missing_tasks: tuple[str, ...]


@attrs.frozen
class RepoState:
    """What :func:`inspect_repo` found; ``reason`` says in one line why ``status``."""

    repo_id: str
    benchmark_id: str
    revision: str
    sha: str | None
    status: str = attrs.field(validator=attrs.validators.in_(STATUSES))
    reason: str
    main_files: tuple[EvalFile, ...] = ()
    main_has_benchmark: bool = False
    pending_prs: tuple[PendingPR, ...] = ()
    whoami: str | None = None
    checked_at: str = ""
    problems: tuple[str, ...] = ()
    update: PrUpdate | None = None

    @property
    def matching_prs(self) -> tuple[PendingPR, ...]:
        return tuple(pr for pr in self.pending_prs if pr.matches_benchmark)


def benchmark_entries(file: EvalFile, benchmark_id: str) -> list[dict]:
    """Entries of ``file`` whose ``dataset.id`` is the benchmark (Hub ids ignore case)."""
    wanted = benchmark_id.lower()
    out = []
    for _, entry in file.entries():
        dataset = entry.get("dataset")
        if isinstance(dataset, dict) and isinstance(dataset.get("id"), str) and dataset["id"].lower() == wanted:
            out.append(entry)
    return out


def _read_eval_files(
    hub, repo_id: str, revision: str, problems: list[str], where: str, known: dict[tuple[str, str], EvalFile]
) -> tuple[EvalFile, ...]:
    """Every ``.eval_results`` YAML file at ``revision``; what cannot be read or parsed lands in ``problems``.

    ``known`` maps (path, blob id) to files already read: main's reads are recorded there,
    so a PR's unchanged files are not downloaded again nor their problems reported twice.
    """
    listing = hub.list_files(repo_id, revision=revision, path=EVAL_DIR)
    out = []
    for item in listing:
        if not item.path.endswith(EVAL_SUFFIXES):
            continue
        if item.oid and (item.path, item.oid) in known:
            out.append(known[item.path, item.oid])
            continue
        if item.size > hub.max_file_bytes:
            problems.append(f"{where} {item.path} is {item.size} bytes, over the {hub.max_file_bytes}-byte limit")
            out.append(EvalFile(item.path, "", None, "too large to read"))
            continue
        try:
            text = hub.read_file(repo_id, item.path, revision=revision)
        except (HubReadError, HubNotFound) as exc:
            problems.append(f"{where} {item.path} could not be read: {exc}")
            out.append(EvalFile(item.path, "", None, f"cannot read: {exc}"))
            continue
        parsed = EvalFile.parse(item.path, text)
        if parsed.error:
            problems.append(f"{where} {item.path}: {parsed.error}")
        elif not isinstance(parsed.data, list):
            problems.append(f"{where} {item.path}: the root is not a list of results")
        out.append(parsed)
        if item.oid:
            known.setdefault((item.path, item.oid), parsed)
    return tuple(out)


def _added_lines(diff: str) -> str:
    return "\n".join(line[1:] for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))


def _inspect_pr(
    hub, repo_id: str, benchmark_id: str, pr, known: Mapping[tuple[str, str], EvalFile]
) -> tuple[PendingPR, list[str]]:
    """Read one pending PR's diff and files; ``known`` holds main's files by (path, blob id), read only."""
    problems: list[str] = []
    where = f"PR #{pr.num}"
    diff_checked = mentions = False
    try:
        details = hub.pr_details(repo_id, pr.num)
        diff_checked = True
        mentions = benchmark_id.lower() in _added_lines(details.diff or "").lower()
    except (HubReadError, HubNotFound) as exc:
        problems.append(f"{where}: the diff could not be read: {exc}")
    read_problems: list[str] = []
    try:
        files = _read_eval_files(
            hub, repo_id, pr.git_reference, read_problems, f"{where} ({pr.git_reference})", dict(known)
        )
    except (HubReadError, HubNotFound) as exc:
        read_problems.append(f"{where}: its files at {pr.git_reference} could not be listed: {exc}")
        files = ()
    problems += read_problems
    matches = any(benchmark_entries(f, benchmark_id) for f in files)
    if mentions and not matches and not read_problems:  # a file that was not read may be the one
        problems.append(
            f"{where}'s diff adds lines naming {benchmark_id}, but no .eval_results file at "
            f"{pr.git_reference} declares it"
        )
    url = f"{hub.endpoint}/{repo_id}/discussions/{pr.num}"
    record = PendingPR(
        pr.num,
        pr.author,
        pr.status,
        pr.title,
        pr.git_reference,
        url,
        files,
        matches or mentions,
        diff_checked,
        mentions,
    )
    return record, problems


def _same_number(a: Any, b: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    return numbers and math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)


def _owned_pr_status(pr: PendingPR, benchmark_id: str, proposed: Mapping[str, Any]) -> tuple[str, str, PrUpdate | None]:
    """Judge the one matching PR that the authenticated account wrote."""
    holding = [(f, benchmark_entries(f, benchmark_id)) for f in pr.files]
    holding = [(f, entries) for f, entries in holding if entries]
    problem = _owned_pr_problem(pr, benchmark_id, holding)
    if problem:
        return "needs_review", problem, None
    file, entries = holding[0]
    present: dict[str, list[Any]] = {}
    for entry in entries:
        present.setdefault(entry["dataset"].get("task_id"), []).append(entry.get("value"))
    conflicts = _conflicting_values(pr, present, proposed)
    if conflicts:
        return "needs_review", "conflicting values in your own PR: " + "; ".join(conflicts), None
    missing = tuple(task for task in proposed if task not in present)
    update = PrUpdate(pr.num, pr.author, pr.url, file.path, file.text, tuple(file.data), missing)
    return (*_owned_update_status(pr, benchmark_id, present, proposed, missing), update)


def _owned_pr_problem(pr: PendingPR, benchmark_id: str, holding: list) -> str:
    """Why our own PR cannot simply be updated: the benchmark in no file or in several, or spelled
    differently ("" when it is in one file under the contract's id)."""
    if len(holding) != 1:
        where = "no file" if not holding else f"{len(holding)} files"
        return f"your PR #{pr.num} holds {benchmark_id} in {where}; one file was expected"
    spelled = sorted({e["dataset"]["id"] for e in holding[0][1]} - {benchmark_id})
    if spelled:
        return f"your PR #{pr.num} spells the benchmark id {', '.join(spelled)!s}, not {benchmark_id}"
    return ""


def _conflicting_values(pr: PendingPR, present: Mapping[str, list[Any]], proposed: Mapping[str, Any]) -> list[str]:
    """The proposed values the PR holds a different number for."""
    conflicts = []
    for task, value in proposed.items():
        if task in present and not all(_same_number(v, value) for v in present[task]):
            shown = ", ".join(map(repr, present[task]))
            conflicts.append(f"task {task!r}: PR #{pr.num} has {shown}, the source has {value!r}")
    return conflicts


def _owned_update_status(
    pr: PendingPR,
    benchmark_id: str,
    present: Mapping[str, list[Any]],
    proposed: Mapping[str, Any],
    missing: tuple[str, ...],
) -> tuple[str, str]:
    """Whether the own PR, agreeing on its values, holds everything already or lacks tasks."""
    if not proposed:
        held = ", ".join(sorted(map(str, present)))
        return (
            "already_in_own_open_pr",
            f"your PR #{pr.num} already adds {benchmark_id} (task(s) {held}); "
            "no values were proposed, so none were compared",
        )
    if not missing:
        return "already_in_own_open_pr", f"your PR #{pr.num} already holds every proposed value"
    return "update_existing_pr", f"your PR #{pr.num} agrees on its values and lacks task(s) {', '.join(missing)}"


def inspect_repo(
    hub,
    repo_id: str,
    benchmark_id: str,
    *,
    revision: str | None = None,
    proposed: Mapping[str, Any] | None = None,
) -> RepoState:
    """Inspect ``repo_id`` for ``benchmark_id``; ``proposed`` maps task id -> value the draft would add.

    ``hub`` is a :class:`~hfmigrate_checks.hub.client.ReadOnlyHub`; the reads of one repo are
    sequential (callers run several repos at once).
    """
    checked_at = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    rev = revision or "main"

    def state(status: str, reason: str, **fields: Any) -> RepoState:
        return RepoState(
            repo_id, benchmark_id, rev, fields.pop("sha", None), status, reason, checked_at=checked_at, **fields
        )

    try:
        info = hub.model_info(repo_id, revision=revision)
        problems: list[str] = []
        known: dict[tuple[str, str], EvalFile] = {}
        main_files = _read_eval_files(hub, repo_id, info.sha or rev, problems, f"{rev}:", known)
        prs = hub.pull_requests(repo_id)
    except (HubReadError, HubNotFound) as exc:
        return state("needs_review", f"the repo could not be inspected: {exc}", problems=(str(exc),))
    on_main = ", ".join(f.path for f in main_files if benchmark_entries(f, benchmark_id))
    if on_main:
        return state(
            "already_present",
            f"{benchmark_id} is on {rev} in {on_main}",
            sha=info.sha,
            main_files=main_files,
            main_has_benchmark=True,
            problems=tuple(problems),
        )
    pending, matching = _pending_prs(hub, repo_id, benchmark_id, prs, known, problems)
    if info.gated:
        problems.append(f"the repo is gated ({info.gated}); its files cannot be relied on without accepted access")
    account = _account(hub, problems) if len(matching) == 1 else None
    common = dict(sha=info.sha, main_files=main_files, pending_prs=pending, whoami=account)
    if problems:
        return state(
            "needs_review",
            "not everything could be read reliably: " + "; ".join(problems),
            problems=tuple(problems),
            **common,
        )
    status, reason, update = _pending_status(benchmark_id, rev, pending, matching, account, proposed)
    return state(status, reason, update=update, **common)


def _pending_prs(
    hub, repo_id: str, benchmark_id: str, prs, known: dict, problems: list[str]
) -> tuple[tuple[PendingPR, ...], list[PendingPR]]:
    """Every pending PR, inspected, and those that add the benchmark; what could not be read goes to ``problems``."""
    inspected = [_inspect_pr(hub, repo_id, benchmark_id, pr, known) for pr in prs if pr.pending]
    pending = tuple(record for record, _ in inspected)
    problems += [problem for _, pr_problems in inspected for problem in pr_problems]
    return pending, [pr for pr in pending if pr.matches_benchmark]


def _account(hub, problems: list[str]) -> str | None:
    """The authenticated account's name (None without a token, or when it cannot be read: a problem then)."""
    try:
        found = hub.whoami()
    except HubReadError as exc:
        problems.append(f"the authenticated account could not be read: {exc}")
        return None
    return found.name if found else None


def _pending_status(
    benchmark_id: str,
    rev: str,
    pending: tuple[PendingPR, ...],
    matching: list[PendingPR],
    account: str | None,
    proposed: Mapping[str, Any] | None,
) -> tuple[str, str, PrUpdate | None]:
    """The status when the benchmark is not on the revision: from the pending PRs that add it."""
    if not matching:
        return "new", f"{benchmark_id} is neither on {rev} nor in any of {len(pending)} pending PR(s)", None
    if len(matching) > 1:
        nums = ", ".join(f"#{pr.num} by {pr.author}" for pr in matching)
        return "duplicate_open_pr", f"{len(matching)} pending PRs already add {benchmark_id}: {nums}", None
    pr = matching[0]
    if account is None:
        return (
            "duplicate_open_pr",
            f"PR #{pr.num} by {pr.author} already adds {benchmark_id}; without a token its ownership is unknown",
            None,
        )
    if pr.author.lower() != account.lower():
        return "duplicate_open_pr", f"PR #{pr.num} by {pr.author} (not {account}) already adds {benchmark_id}", None
    return _owned_pr_status(pr, benchmark_id, dict(proposed or {}))
