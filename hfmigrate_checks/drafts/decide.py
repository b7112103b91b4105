"""Decide, per source model, what the bundle proposes, and render the draft files.

Pure: it reads the contract, the ledger, the resolutions and the repo states and
returns decisions; nothing here touches the network or the disk. A draft is only made
for an exact match whose repo is ``new`` (a fresh file) or ``update_existing_pr`` (the
complete file after the update, built from the owned PR's latest content).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import attrs

from hfmigrate_checks.drafts.validate import FILE_NAME, draft_path
from hfmigrate_checks.evalresults.emit import Literal, emit_yaml, yaml_number
from hfmigrate_checks.source.contract import Contract, repo_id_problem
from hfmigrate_checks.source import uncertainty
from hfmigrate_checks.source.ledger import OK, LedgerRow

SKIPPED_STATES = ("already_present", "already_in_own_open_pr", "duplicate_open_pr", "needs_review")


# ---------------------------------------------------------------- proposals


@attrs.frozen
class Proposal:
    """One value the bundle would add: the task it goes to and the ledger row it comes from."""

    task_id: str
    row: LedgerRow

    def entry(self, contract: Contract) -> dict[str, Any]:
        dataset: dict[str, Any] = {"id": contract.benchmark_id, "task_id": self.task_id}
        if contract.revision_in_claim:
            dataset["revision"] = contract.dataset_sha
        entry: dict[str, Any] = {"dataset": dataset, "value": Literal(yaml_number(self.row.cell.number))}
        if self.row.eval_date:
            entry["date"] = self.row.eval_date
        if self.row.verify_token:
            entry["verifyToken"] = self.row.verify_token
        url = self.row.source_url or contract.source_url  # the ledger row's page, else the contract's
        if url:
            source = {"url": url}
            if contract.source_name:
                source["name"] = contract.source_name
            entry["source"] = source
        notes = "; ".join(filter(None, [self.row.source_variant, self._uncertainty()]))
        if notes:
            entry["notes"] = notes
        return entry

    def _uncertainty(self) -> str:
        """The uncertainty printed with the value or in its paired column, which the entry has no field
        for, so it goes to notes."""
        cell = self.row.cell
        paired = uncertainty.from_qualifiers(self.row.qualifiers)
        return "; ".join([f"printed as {cell.number} ± {cell.uncertainty}"] if cell.uncertainty else paired)


def proposals(contract: Contract, rows: Iterable[LedgerRow]) -> tuple[list[Proposal], list[str]]:
    """The clean, mapped values of one model, and why the rest cannot be drafted as they are."""
    by_task: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in rows:
        task = contract.columns.get(row.source_task)
        if task is not None and row.status == OK:
            by_task[task].append(row)
    out, problems = [], []
    for task, task_rows in by_task.items():
        if len(task_rows) > 1:
            variants = ", ".join(repr(r.source_variant or "(no variant)") for r in task_rows)
            problems.append(f"{len(task_rows)} values for task {task!r} ({variants}); keep exactly one in the ledger")
        else:
            out.append(Proposal(task, task_rows[0]))
    order = {task: n for n, task in enumerate(contract.task_ids)}
    return sorted(out, key=lambda p: (order.get(p.task_id, len(order)), p.task_id)), problems


# ---------------------------------------------------------------- decisions


@attrs.frozen
class Draft:
    """A file the bundle proposes: the complete content after the change."""

    repo_id: str
    path: str
    text: str
    kind: str  # draft | update_existing_pr
    added: tuple[Proposal, ...]
    #: entries already in the owned PR that the update keeps unchanged
    kept: tuple[dict, ...] = ()
    pr_num: int | None = None


@attrs.frozen
class ModelDecision:
    """What the bundle says about one source model."""

    label: str
    rows: tuple[LedgerRow, ...]
    resolution: Any
    state: Any
    decision: str
    reason: str
    draft: Draft | None = None

    @property
    def repo_id(self) -> str:
        return getattr(self.resolution, "repo_id", None) or ""


def decide(
    contract: Contract,
    rows: Sequence[LedgerRow],
    resolutions: Mapping[str, Any],
    states: Mapping[str, Any],
) -> list[ModelDecision]:
    """One decision per source model label, in ledger order."""
    by_label: dict[str, list[LedgerRow]] = defaultdict(list)
    for row in rows:
        by_label[row.source_model].append(row)
    claimed = _exact_claims(by_label, resolutions)
    out = []
    for label, label_rows in by_label.items():
        res = resolutions.get(label)
        others = [o for o in claimed.get(getattr(res, "repo_id", None), ()) if o != label]
        if res is not None and res.status == "exact" and others:
            reason = (
                f"{res.repo_id} is also the exact match of {', '.join(map(repr, others))}; the source must name it once"
            )
            out.append(ModelDecision(label, tuple(label_rows), res, states.get(res.repo_id), "needs_review", reason))
            continue
        out.append(_decide_one(contract, label, tuple(label_rows), res, states))
    return out


def _exact_claims(labels: Iterable[str], resolutions: Mapping[str, Any]) -> dict[str, list[str]]:
    """The labels exactly matched to each repo: two labels on one repo would write its scores twice."""
    claimed: dict[str, list[str]] = defaultdict(list)
    for label in labels:
        res = resolutions.get(label)
        if res is not None and res.status == "exact":
            claimed[res.repo_id].append(label)
    return claimed


def _draftable(contract, rows, repo_id: str) -> tuple[list, str]:
    """The model's proposals, and why nothing can be drafted for it ("" when something can)."""
    problem = repo_id_problem(repo_id)
    if problem:
        return [], problem
    props, problems = proposals(contract, rows)
    if problems:
        return props, "; ".join(problems)
    if not props:
        return props, "no clean, mapped value to draft (see the ledger's qualifiers)"
    return props, ""


def _decide_one(contract, label, rows, resolution, states) -> ModelDecision:
    def result(decision, reason, state=None, draft=None):
        return ModelDecision(label, rows, resolution, state, decision, reason, draft)

    if resolution is None:
        return result("needs_review", "no resolution was made for this model")
    if resolution.status != "exact":
        return result(resolution.status, _evidence(resolution) or f"match status {resolution.status}")
    repo_id = resolution.repo_id
    props, problem = _draftable(contract, rows, repo_id)
    if problem:
        return result("needs_review", problem)
    state = states.get(repo_id)
    if state is None:
        return result("needs_review", "the repo's existing results were not inspected")
    if state.status in SKIPPED_STATES:
        return result(state.status, _state_reason(state), state)
    if state.status == "new":
        path = draft_path(repo_id, contract.file_name)
        text = emit_yaml([p.entry(contract) for p in props])
        return result(
            "draft",
            "no result for this benchmark on main or in any pending PR",
            state,
            Draft(repo_id, path, text, "draft", tuple(props)),
        )
    if state.status == "update_existing_pr":
        return _update(contract, label, rows, resolution, state, props)
    return result("needs_review", f"unknown repo state {state.status!r}", state)


def _present_values(entries: list, benchmark_id: str) -> dict:
    """Task id -> value of the benchmark's entries in a file."""
    present = {}
    for entry in entries:
        dataset = entry.get("dataset") if isinstance(entry, dict) else None
        if isinstance(dataset, dict) and dataset.get("id") == benchmark_id:
            present[dataset.get("task_id")] = entry.get("value")
    return present


def _update(contract, label, rows, resolution, state, props) -> ModelDecision:
    def result(decision, reason, draft=None):
        return ModelDecision(label, rows, resolution, state, decision, reason, draft)

    update = state.update
    file_name = PurePosixPath(update.path).name
    if not FILE_NAME.match(file_name) or ".." in file_name:
        return result("needs_review", f"the owned PR's file name {file_name[:120]!r} is not a plain '<name>.yaml'")
    existing = list(update.entries)
    present = _present_values(existing, contract.benchmark_id)
    added, conflicts = [], []
    for p in props:
        if p.task_id not in present:
            added.append(p)
        elif not _same_number(present[p.task_id], p.row.value):
            conflicts.append(
                f"task {p.task_id!r}: PR #{update.pr_num} has {present[p.task_id]!r}, "
                f"the source prints {p.row.source_value!r}"
            )
    if conflicts:
        return result("needs_review", "conflicting values in the owned PR: " + "; ".join(conflicts))
    if not added:
        return result("already_in_own_open_pr", f"PR #{update.pr_num} already holds every value")
    text = emit_yaml([*existing, *(p.entry(contract) for p in added)])
    path = draft_path(resolution.repo_id, file_name)
    reason = f"complete file after adding {len(added)} task(s) to PR #{update.pr_num} by {update.pr_author}"
    return result(
        "update_existing_pr",
        reason,
        Draft(resolution.repo_id, path, text, "update_existing_pr", tuple(added), tuple(existing), update.pr_num),
    )


def _same_number(a: Any, b: float | None) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and b is not None and float(a) == float(b)


def _evidence(resolution) -> str:
    evidence = getattr(resolution, "evidence", "")
    return evidence if isinstance(evidence, str) else "; ".join(map(str, evidence))


def _state_reason(state) -> str:
    return getattr(state, "reason", "") or f"repo state {state.status}"


def row_decision(decision: ModelDecision, row: LedgerRow, contract: Contract) -> str:
    """The ``decision`` column of one ledger row in the bundle's source-ledger.csv."""
    if row.source_task in contract.ignore_columns:
        return "ignored_column"
    if row.source_task not in contract.columns:
        return "unmapped_column"
    if row.status != OK:
        return "needs_review"
    if decision.draft is not None:
        if any(p.row is row for p in decision.draft.added):
            return decision.decision
        return "already_in_own_open_pr" if decision.draft.kind == "update_existing_pr" else "needs_review"
    return decision.decision
