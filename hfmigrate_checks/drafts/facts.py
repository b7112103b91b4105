"""The facts the HF rules read, computed once per run.

Two kinds of facts objects exist, and the rules shared by both actions read only what
both provide (the *eval-files view*):

- ``eval_files``: tuple of :class:`~hfmigrate_checks.evalresults.evalfile.EvalFile`, the files to judge
  (for ``draft``: the planned drafts, parsed back from the exact text to be written);
- ``contract``: the :class:`~hfmigrate_checks.source.contract.Contract`, or ``None``;
- ``task_ids``: the task ids of the benchmark's current eval.yaml (or of the contract);
- ``supplied_tokens``: verifyToken values the user supplied for exactly these runs;
- ``output_files``: path -> text of everything that would be written.

:class:`DraftFacts` adds the live Hub facts and the decisions of ``checks run draft``;
:class:`EvalFilesFacts` is the offline view (``precommit-eval-results`` builds it from
files on disk with :func:`eval_files_facts`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from hfmigrate_checks.evalresults.evalfile import EvalFile

if TYPE_CHECKING:  # the draft's modules load with the draft action, not with the eval-results hook
    from hfmigrate_checks.drafts import decide as drafts
    from hfmigrate_checks.source.contract import Contract
    from hfmigrate_checks.source.ledger import LedgerRow


@attrs.frozen
class EvalFilesFacts:
    """The offline eval-files view: parsed files and (optionally) a contract, nothing from the network."""

    eval_files: tuple[EvalFile, ...]
    contract: Contract | None = None
    supplied_tokens: frozenset[str] = frozenset()

    @property
    def task_ids(self) -> tuple[str, ...] | None:
        return self.contract.task_ids if self.contract else None

    @property
    def output_files(self) -> Mapping[str, str]:
        return {f.path: f.text for f in self.eval_files}


def eval_files_facts(
    paths: Sequence[str | Path], contract: Contract | None = None, supplied_tokens: frozenset[str] = frozenset()
) -> EvalFilesFacts:
    """Read and parse ``paths`` (bounded YAML; an unreadable file keeps its error) into the offline view."""
    files = tuple(EvalFile.read(path) for path in paths)
    return EvalFilesFacts(files, contract, supplied_tokens)


@attrs.frozen
class LiveBenchmark:
    """What the Hub says about the benchmark right now (``error`` when it could not be read)."""

    official: bool
    sha: str
    task_ids: tuple[str, ...]
    error: str = ""


class DraftFacts:
    """Everything ``checks run draft`` knows: inputs, live Hub facts, and the planned bundle.

    The Hub facts are gathered once (concurrently) by the action; the decisions and the
    planned bundle are derived from them lazily and cached, so every rule and the writer
    see the same bytes.
    """

    def __init__(
        self,
        *,
        contract: Contract,
        rows: Sequence[LedgerRow],
        live: LiveBenchmark,
        resolutions: Mapping[str, Any],
        states: Mapping[str, Any],
        whoami: str,
        checked_at: str,
        bundle_path: str | Path,
        benchmark_id: str,
        mapped_labels: Sequence[str] = (),
    ):
        self.contract = contract
        self.rows = tuple(rows)
        self.live = live
        self.resolutions = dict(resolutions)
        self.states = dict(states)
        self.whoami = whoami
        self.checked_at = checked_at
        self.bundle_path = Path(bundle_path)
        self.benchmark_id = benchmark_id
        self.mapped_labels = tuple(mapped_labels)

    @property
    def task_ids(self) -> tuple[str, ...]:
        return self.live.task_ids

    @functools.cached_property
    def decisions(self) -> tuple[drafts.ModelDecision, ...]:
        from hfmigrate_checks.drafts import decide as drafts  # noqa: PLC0415 - start-up: the eval-results hook loads these facts but never writes drafts

        return tuple(drafts.decide(self.contract, self.rows, self.resolutions, self.states))

    @functools.cached_property
    def drafts(self) -> tuple[drafts.Draft, ...]:
        return tuple(d.draft for d in self.decisions if d.draft is not None)

    @functools.cached_property
    def eval_files(self) -> tuple[EvalFile, ...]:
        return tuple(EvalFile.parse(d.path, d.text) for d in self.drafts)

    @functools.cached_property
    def planned_additions(self) -> tuple[tuple[drafts.ModelDecision, drafts.Proposal | None, dict], ...]:
        """(decision, proposal, entry as parsed back from the draft) for every entry a draft adds.

        The owned PR's kept entries are skipped; ``proposal`` is None for an entry the
        planner did not propose (which only a bug could produce).
        """
        files = {f.path: f for f in self.eval_files}
        out = []
        for decision in self.decisions:
            draft = decision.draft
            if draft is None or draft.path not in files:
                continue
            added = [e for _, e in files[draft.path].entries()][len(draft.kept) :]
            proposals = list(draft.added) + [None] * max(0, len(added) - len(draft.added))
            out += [(decision, p, e) for p, e in zip(proposals, added)]
        return tuple(out)

    @functools.cached_property
    def supplied_tokens(self) -> frozenset[str]:
        """Tokens supplied in the ledger for a run, plus those already in an owned PR the update keeps."""
        tokens = {row.verify_token for row in self.rows if row.verify_token}
        for draft in self.drafts:
            tokens |= {
                e["verifyToken"] for e in draft.kept if isinstance(e, dict) and isinstance(e.get("verifyToken"), str)
            }
        return frozenset(tokens)

    @functools.cached_property
    def output_files(self) -> Mapping[str, str]:
        from hfmigrate_checks.drafts import bundle  # noqa: PLC0415 - start-up: the eval-results hook loads these facts but never writes drafts

        header = bundle.Header(self.whoami, self.checked_at, self.live.sha)
        return bundle.plan_files(self.contract, self.decisions, header, self.bundle_path)

    def counts(self) -> dict[str, int]:
        """The figures of the final summary, by decision."""
        ds = self.decisions
        by = lambda *names: sum(d.decision in names for d in ds)  # noqa: E731
        return {
            "source models": len(ds),
            "exact matches": sum(getattr(d.resolution, "status", "") == "exact" for d in ds),
            "new drafts": by("draft"),
            "owned-PR update drafts": by("update_existing_pr"),
            "existing-result skips": by("already_present", "already_in_own_open_pr"),
            "duplicate-PR skips": by("duplicate_open_pr"),
            "unresolved checks": by("needs_review"),
            "ambiguous matches": by("ambiguous"),
            "models not on the Hub": by("not_on_hub"),
            "mismatches": by("mismatch"),
            "not applicable": by("not_applicable"),
        }
