"""The review bundle: review.md (and the same as a page, review.html), source-ledger.csv, the drafts and validation.txt.

The whole bundle is rendered in memory first (the rules judge exactly these bytes),
then written into a temporary sibling directory and renamed into place, so a previous
bundle stays intact until the new one is complete.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

import attrs

from checks import ActionFailed
from checks.io import ReadError, csv_text, read_text, swap_in_dir, sweep_siblings, temp_sibling
from hfmigrate_checks.drafts import review_html, validate
from hfmigrate_checks.drafts.decide import ModelDecision, row_decision
from hfmigrate_checks.drafts.markdown import md_cell, md_text
from hfmigrate_checks.facts.constants import REVIEW_HTML, REVIEW_MD, SOURCE_LEDGER, VALIDATION
from hfmigrate_checks.source.contract import Contract
from hfmigrate_checks.source.printed import dropped_columns

if TYPE_CHECKING:
    from hfmigrate_checks.facts.draft import DraftFacts

LEDGER_COLUMNS = (
    "source_model,source_variant,source_task,source_value,source_unit,source_url,"
    "source_locator,qualifiers,hub_repo,match_status,match_evidence,decision"
).split(",")
CLOSING_LINE = "No Hugging Face pull requests were opened while preparing this bundle."
CHECKLIST = (
    "The benchmark is official and the inspected eval.yaml revision is the one named above.",
    "Every task id in the drafts exists in that eval.yaml; no overall/default task was invented.",
    "Metric meaning, direction, unit and scale match the source, and no value was converted or averaged.",
    "Each drafted value appears, as printed, in exactly one source-ledger.csv row with a locator.",
    "Each Hub repo is the exact model that was evaluated (not a base model, quant, mirror or newer release).",
    "Every existing .eval_results file on main and every pending PR diff was read for each drafted repo.",
    "Owned-PR updates contain the PR's latest content plus only the missing tasks, with no conflicting value.",
    "Dates appear only where the evaluation date is known, and no verifyToken was invented or copied.",
    "Every excluded or unresolved model has a reason, and validation.txt reports status=PASS.",
)


@attrs.frozen
class Header:
    """Run facts review.md records next to the contract."""

    whoami: str
    checked_at: str
    live_sha: str


def _table(columns: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return out


def _locators(decision: ModelDecision) -> str:
    first = decision.rows[0].source_locator
    return first if len(decision.rows) == 1 else f"{first} (+{len(decision.rows) - 1} more)"


def _existing(decision: ModelDecision, whoami: str) -> str:
    state = decision.state
    if decision.draft is not None and decision.draft.kind == "update_existing_pr":
        return f"PR #{decision.draft.pr_num} by {state.update.pr_author} ({state.update.pr_url}); authenticated as {whoami}"
    return decision.reason


def review_md(contract: Contract, decisions: Sequence[ModelDecision], header: Header) -> str:
    lines = [f"# Review bundle: {contract.benchmark_id}", "", "## Benchmark contract", ""]
    lines += _contract_lines(contract, header)
    lines += _table(["Source column", "Task id"], sorted(contract.columns.items()))
    if contract.ignore_columns:
        lines += ["", "Ignored source columns: " + ", ".join(md_text(c) for c in contract.ignore_columns)]
    lines += ["", "## Proposed repository changes", ""]
    lines += _table(
        [
            "Source model",
            "Hub repo",
            "Match evidence",
            "Inspected SHA",
            "Draft path",
            "Tasks/values",
            "Existing state",
            "Decision",
        ],
        [_proposed_row(d, header.whoami) for d in decisions if d.state is not None],
    )
    lines += ["", "## Excluded and unresolved models", ""]
    lines += _table(
        ["Source model", "Classification", "Candidates checked", "Reason", "Source locator"],
        [_excluded_row(d) for d in decisions if d.draft is None],
    )
    lines += ["", "## Conflicts and assumptions", ""]
    lines += _conflicts(contract, decisions) or ["- None found."]
    lines += _dropped(decisions)
    lines += [
        "- Values are copied as printed on the source's scale; nothing was averaged, converted or picked as a best run.",
        "- `date` is written only where the source states the evaluation date; `verifyToken` only where supplied for that run.",
        "",
        "## Reviewer checklist",
        "",
        *[f"- [ ] {item}" for item in CHECKLIST],
        "",
        CLOSING_LINE,
    ]
    return "\n".join(lines) + "\n"


def _contract_lines(contract: Contract, header: Header) -> list[str]:
    """The benchmark contract section's bullet list."""
    requested = f" (requested `{contract.requested_revision}`)" if contract.requested_revision else ""
    return [
        f"- Dataset: `{contract.benchmark_id}` ({md_text(contract.name) or 'no name in eval.yaml'})",
        f"- Inspected revision: `{contract.dataset_sha}`{requested}",
        f"- Current revision at check time: `{header.live_sha or 'unknown'}`",
        f"- eval.yaml: {md_text(contract.eval_yaml_url)}",
        f"- Official benchmark (`benchmark:official`): {'yes' if contract.official else 'no'}",
        f"- Evaluation framework: {md_text(contract.evaluation_framework) or 'not declared'}",
        "- Valid task ids: " + ", ".join(f"`{t}`" for t in contract.task_ids),
        *_claim_lines(contract),
        f"- Authenticated account: {md_text(header.whoami) or 'none (anonymous read)'}; checked at {header.checked_at}",
        "",
    ]


def _claim_lines(contract: Contract) -> list[str]:
    """Where the scores come from and what a draft claims about them."""
    commit = f" at commit `{contract.source_commit}`" if contract.source_commit else ""
    scale = f"; scale: {contract.scale}" if contract.scale else ""
    revision = "yes, the inspected revision" if contract.revision_in_claim else "no (not part of the claim)"
    return [
        f"- Source: {md_text(contract.source_url) or 'per ledger row'}{commit}",
        (
            f"- Metric: {md_text(contract.metric)}; direction: {md_text(contract.direction)}; unit: {md_text(contract.unit)}"
            f"{md_text(scale)}"
        ),
        f"- dataset.revision in drafts: {revision}",
    ]


def _proposed_row(d: ModelDecision, whoami: str) -> list[str]:
    """One inspected model's row of the proposed changes."""
    draft = d.draft
    values = "; ".join(f"{p.task_id}={p.row.source_value}" for p in draft.added) if draft else "-"
    return [
        d.label,
        d.repo_id,
        _evidence(d.resolution),
        getattr(d.state, "sha", "") or "-",
        draft.path if draft else "-",
        values,
        _existing(d, whoami),
        "draft" if d.decision == "draft" else d.decision,
    ]


def _excluded_row(d: ModelDecision) -> list[str]:
    """One model without a draft: why, and what was checked."""
    return [
        d.label,
        d.decision,
        ", ".join(getattr(d.resolution, "candidates_checked", ()) or ()) or "-",
        d.reason,
        _locators(d),
    ]


def _conflicts(contract: Contract, decisions: Sequence[ModelDecision]) -> list[str]:
    out = []
    for d in decisions:
        for row in d.rows:
            if contract.undecided(row.source_task):
                out.append(
                    f"- {md_cell(d.label)}: column {md_cell(row.source_task)!s} is not in the contract ({md_text(row.source_locator)})."
                )
            elif row.status != "ok" and row.source_task in contract.columns:
                out.append(
                    f"- {md_cell(d.label)}: '{md_cell(row.source_value)}' in {md_cell(row.source_task)} needs review: "
                    f"{md_cell(row.qualifiers)} ({md_text(row.source_locator)})."
                )
        if d.decision == "needs_review":
            out.append(f"- {md_cell(d.label)}: needs review: {md_cell(d.reason)}")
    return out


def _dropped(decisions: Sequence[ModelDecision]) -> list[str]:
    """The columns the maintainer dropped from the ledger, which a reviewer must agree change no run."""
    names = sorted({name for d in decisions for row in d.rows for name in dropped_columns(row.qualifiers)})
    if not names:
        return []
    return [
        "- Source columns dropped by the maintainer (`--drop-column`), stated not to change what was run: "
        + ", ".join(md_text(n) for n in names)
        + "."
    ]


def _evidence(resolution) -> str:
    evidence = getattr(resolution, "evidence", "") if resolution is not None else ""
    return evidence if isinstance(evidence, str) else "; ".join(map(str, evidence))


def source_ledger_csv(contract: Contract, decisions: Sequence[ModelDecision]) -> str:
    """The ledger rows with their decisions; a cell a spreadsheet would run as a formula is neutralised."""
    return csv_text(
        LEDGER_COLUMNS,
        neutralise=True,
        rows=(
            [
                row.source_model,
                row.source_variant,
                row.source_task,
                row.source_value,
                row.source_unit or contract.unit,
                row.source_url,
                row.source_locator,
                row.qualifiers,
                d.repo_id,
                getattr(d.resolution, "status", "") or "needs_review",
                _evidence(d.resolution),
                row_decision(d, row, contract),
            ]
            for d in decisions
            for row in d.rows
        ),
    )


def plan_files(
    contract: Contract, decisions: Sequence[ModelDecision], header: Header, bundle_path: str | Path
) -> dict[str, str]:
    """Every file of the bundle, by path relative to it, exactly as it will be written."""
    files = {d.draft.path: d.draft.text for d in decisions if d.draft is not None}
    drafts = [validate.EvalFile.parse(path, text) for path, text in files.items()]
    validation, _code = validate.render(drafts, bundle_path, contract.benchmark_id, contract.task_ids)

    return {
        REVIEW_MD: review_md(contract, decisions, header),
        REVIEW_HTML: review_html.render(contract, decisions, header, CLOSING_LINE),
        SOURCE_LEDGER: source_ledger_csv(contract, decisions),
        VALIDATION: validation,
        **dict(sorted(files.items())),
    }


def planned_files(facts: DraftFacts) -> dict[str, str]:
    """The bundle of a draft's facts: :func:`plan_files` with the run's header."""
    header = Header(facts.whoami, facts.checked_at, facts.live.sha)
    return plan_files(facts.contract, facts.decisions, header, facts.bundle_path)


def replaceable_problem(bundle_path: str | Path) -> str | None:
    """Why ``bundle_path`` must not be replaced by a new bundle (None: absent, empty, or a bundle of ours).

    Replacing renames the old directory away and deletes it, so it is refused for anything
    that is not recognisably a review bundle written by this tool.
    """
    path = Path(bundle_path)
    if not path.exists() and not path.is_symlink():
        return None
    if path.is_symlink() or not path.is_dir():
        return f"{path} exists and is not a directory; choose another --bundle"
    if not any(path.iterdir()):
        return None
    review = path / REVIEW_MD
    try:
        ours = review.is_file() and CLOSING_LINE in read_text(review, what="a review.md")
    except ReadError:
        ours = False
    if not ours:
        return (
            f"{path} is a non-empty directory that is not a review bundle (no review.md written by "
            f"`checks run draft`); choose a new --bundle directory, it would be replaced as a whole"
        )
    return None


def write(bundle_path: str | Path, files: Mapping[str, str], contract: Contract) -> None:
    """Write ``files`` as the bundle at ``bundle_path``: temp sibling dir, re-validate, rename into place."""
    bundle_path = Path(bundle_path)
    sweep_siblings(bundle_path)
    problem = replaceable_problem(bundle_path)
    if problem:
        raise ActionFailed(problem)
    built = temp_sibling(bundle_path)
    built.mkdir()
    try:
        root = built.resolve()
        (built / "drafts").mkdir()
        for rel, text in files.items():
            target = (built / PurePosixPath(rel)).resolve()
            if not target.is_relative_to(root) or PurePosixPath(rel).is_absolute() or ".." in PurePosixPath(rel).parts:
                raise ActionFailed(f"refusing to write {rel!r}: it would land outside the bundle")
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8", newline="") as fh:
                fh.write(text)
        written, _ = validate.validate_bundle(built, contract.benchmark_id, contract.task_ids)
        planned = files[VALIDATION]
        if _status(written) != _status(planned):
            raise ActionFailed(f"the written drafts validate differently from the planned ones:\n{written}")
        swap_in_dir(built, bundle_path)
    except BaseException:
        shutil.rmtree(built, ignore_errors=True)
        raise


def _status(validation_text: str) -> str:
    return validation_text.strip().splitlines()[-1].split("status=")[-1] if "status=" in validation_text else "ERROR"
