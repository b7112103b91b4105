"""review.html: the review bundle as one self-contained page, next to review.md.

Per source model: its match class and evidence, the decision (colour and word), each draft
beside the file it would replace or extend (the owned PR's latest content, or a file of the
same name on main) as a side-by-side diff, every ledger row with its locator and
qualifiers, the excluded and unresolved models, and the closing sentence that nothing was
opened on the Hub. Built from the same decisions as review.md, in memory, so the rules
judge its bytes too (HF503 looks for credentials in it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from checks.htmlreport import badge, esc, key_values, page, table
from hfmigrate_checks.drafts.decide import row_decision

#: decision -> badge kind (the word is always shown: colour is never the only signal)
DECISION_KIND = {
    "draft": "ok",
    "update_existing_pr": "info",
    "already_present": "muted",
    "already_in_own_open_pr": "muted",
    "not_applicable": "muted",
    "not_on_hub": "muted",
    "duplicate_open_pr": "warn",
    "ambiguous": "warn",
    "mismatch": "warn",
    "needs_review": "bad",
}
MATCH_KIND = {
    "exact": "ok",
    "ambiguous": "warn",
    "mismatch": "warn",
    "not_on_hub": "muted",
    "not_applicable": "muted",
    "needs_review": "bad",
}
LEGEND = (
    ("ok", "a draft is proposed"),
    ("info", "an update of your own open PR is proposed"),
    ("muted", "nothing to do (already there, not on the Hub, not applicable)"),
    ("warn", "skipped: someone else's PR, or the match is not exact"),
    ("bad", "needs a person"),
)


def _evidence(resolution: Any) -> str:
    evidence = getattr(resolution, "evidence", "") if resolution is not None else ""
    return evidence if isinstance(evidence, str) else "; ".join(map(str, evidence))


def _sha(sha: str | None) -> str:
    return f'<code title="{esc(sha)}">{esc(sha[:12])}</code>' if sha else "-"


def _existing(decision: Any) -> tuple[str, str]:
    """(description, text) of what the draft replaces or extends; ('', '') for a file new to the repo."""
    draft, state = decision.draft, decision.state
    update = getattr(state, "update", None)
    if draft.kind == "update_existing_pr" and update is not None:
        return f"PR #{update.pr_num} by {update.pr_author}: {update.path}", update.text
    name = PurePosixPath(draft.path).name
    for f in getattr(state, "main_files", ()) or ():
        if PurePosixPath(f.path).name == name:
            return f"main: {f.path}", f.text
    return "", ""


def draft_diff(decision: Any, n: int) -> str:
    """The draft beside what it replaces, side by side (difflib escapes the file text)."""
    draft = decision.draft
    where, before = _existing(decision)
    head = (
        f"<h3>{esc(decision.label)} &rarr; <code>{esc(draft.repo_id)}</code></h3>"
        f"<p>{badge(draft.kind, DECISION_KIND.get(draft.kind))} <code>{esc(draft.path)}</code>; adds "
        f"{esc(', '.join(p.task_id for p in draft.added))}"
        + (f" to PR #{esc(draft.pr_num)}" if draft.pr_num else "")
        + "</p>"
    )
    if not where:
        return (
            head + '<p class="note">A new file: the repo has no file of this name on main and no pending PR '
            f'of yours for this benchmark.</p><pre class="draft" id="draft-{n}">{esc(draft.text)}</pre>'
        )
    import difflib

    diff = difflib.HtmlDiff(wrapcolumn=70).make_table(
        before.splitlines(),
        draft.text.splitlines(),
        fromdesc=esc(where),
        todesc=esc(f"draft: {draft.path}"),
        context=False,
    )
    # difflib numbers its tables across the whole process: ids from the draft's number keep the page reproducible
    diff = re.sub(r"\b(from|to)\d+_", rf"\g<1>{n}_", re.sub(r"difflib_chg_to\d+__", f"chg{n}_", diff))
    return head + f'<div class="diff" id="draft-{n}">{diff}</div>'


def render(contract: Any, decisions: Sequence[Any], header: Any, closing_line: str) -> str:
    """The whole page for the bundle of ``decisions`` (``header``: whoami, checked_at, live_sha)."""
    drafted = [d for d in decisions if d.draft is not None]
    index = {id(d): i for i, d in enumerate(drafted)}
    diffs = "".join(draft_diff(d, index[id(d)]) for d in drafted) or '<p class="note">No draft in this bundle.</p>'
    diffs = (
        '<div class="legend"><span><span class="sw diff_add"></span>added by the draft</span>'
        '<span><span class="sw diff_chg"></span>changed</span><span><span class="sw diff_sub"></span>removed'
        "</span></div>" + diffs
    )
    ledger_rows = [_ledger_row(d, r, contract) for d in decisions for r in d.rows]
    ledger = table(
        [
            "model",
            "variant",
            "source column",
            "value as printed",
            "unit",
            "source locator",
            "qualifiers",
            "status",
            "row decision",
            "source url",
        ],
        ledger_rows,
        raw=(7,),
        cls="ledger",
    )
    closing = (
        f'<p class="closing"><strong>{esc(closing_line)}</strong> The bundle is for review only: '
        "nothing was opened, updated or uploaded on the Hugging Face Hub.</p>"
    )
    sections = [
        ("models", "Models and decisions", _models_section(decisions, index)),
        ("drafts", "Drafts beside the existing content", diffs),
        ("ledger", "Ledger rows", ledger),
        ("excluded", "Excluded and unresolved models", _excluded_section(decisions)),
        ("contract", "Benchmark contract", key_values(_contract_pairs(contract, header))),
        ("closing", "Nothing was opened on the Hub", closing),
    ]
    return page(
        f"Review bundle: {contract.benchmark_id}",
        f"{len(decisions)} source models, {len(drafted)} draft(s). {closing_line}",
        sections,
        footer=esc(closing_line),
    )


def _contract_pairs(contract: Any, header: Any) -> list[tuple[str, str]]:
    scale = f"; scale {contract.scale}" if contract.scale else ""
    return [
        ("dataset", contract.benchmark_id),
        ("inspected revision", contract.dataset_sha),
        ("revision at check time", header.live_sha or "unknown"),
        ("official benchmark", "yes" if contract.official else "no"),
        ("task ids", ", ".join(contract.task_ids)),
        ("metric", f"{contract.metric}; {contract.direction}; unit {contract.unit}{scale}"),
        ("source", contract.source_url or "per ledger row"),
        ("authenticated account", header.whoami or "none (anonymous read)"),
        ("checked at", header.checked_at),
    ]


def _models_section(decisions: Sequence[Any], index: dict[int, int]) -> str:
    """The decision counts, the legend and one row per source model (its draft linked)."""
    counts = Counter(d.decision for d in decisions)
    summary = " ".join(f"{badge(f'{n} {name}', DECISION_KIND.get(name))}" for name, n in sorted(counts.items()))
    legend = "".join(f"<span>{badge(kind, kind)} {esc(text)}</span>" for kind, text in LEGEND)
    rows = [_model_row(d, index) for d in decisions]
    return (
        f'<p>{summary}</p><div class="legend">{legend}</div><div class="wide">'
        + table(
            ["source model", "match class", "evidence", "Hub repo", "inspected SHA", "decision", "reason", "draft"],
            rows,
            raw=(1, 4, 5, 7),
            cls="models",
        )
        + "</div>"
    )


def _model_row(d: Any, index: dict[int, int]) -> list[str]:
    res = d.resolution
    status = getattr(res, "status", "") or "needs_review"
    return [
        d.label,
        badge(status, MATCH_KIND.get(status)),
        _evidence(res),
        d.repo_id or "-",
        _sha(getattr(d.state, "sha", "")),
        badge(d.decision, DECISION_KIND.get(d.decision)),
        "(the evidence)" if d.reason == _evidence(res) else d.reason,
        f'<a href="#draft-{index[id(d)]}">{esc(d.draft.path)}</a>' if d.draft is not None else "-",
    ]


def _ledger_row(d: Any, r: Any, contract: Any) -> list[str]:
    return [
        r.source_model,
        r.source_variant or "-",
        r.source_task,
        r.source_value,
        r.source_unit or contract.unit,
        r.source_locator,
        r.qualifiers or "-",
        badge(r.status, "ok" if r.status == "ok" else "warn"),
        row_decision(d, r, contract),
        r.source_url or "-",
    ]


def _excluded_section(decisions: Sequence[Any]) -> str:
    ex_rows = [
        [
            d.label,
            badge(d.decision, DECISION_KIND.get(d.decision)),
            ", ".join(getattr(d.resolution, "candidates_checked", ()) or ()) or "-",
            d.reason,
            d.rows[0].source_locator if d.rows else "-",
        ]
        for d in decisions
        if d.draft is None
    ]
    if not ex_rows:
        return '<p class="note">Every model has a draft.</p>'
    return table(
        ["source model", "classification", "candidates checked", "reason", "source locator"], ex_rows, raw=(1,)
    )
