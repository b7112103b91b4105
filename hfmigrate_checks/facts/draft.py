"""What ``checks run draft`` hands the HF rules: the live Hub facts, the decisions and the planned bundle.

:class:`DraftFacts` offers the eval-files view the rules shared with the offline actions read
(``eval_files``, ``contract``, ``task_ids``, ``supplied_tokens``, ``output_files``; see
:mod:`hfmigrate_checks.facts.eval_files`), parsed back from the exact text to be written, plus what
only the draft knows (``live``, ``decisions``, ``drafts``, ``planned_additions``). The action hands
it the planner and the bundle's writer (a :class:`Planner`), so the facts import no action and the
eval-results hook, which loads this package, loads neither.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from hfmigrate_checks.evalresults.evalfile import EvalFile

if TYPE_CHECKING:
    from hfmigrate_checks.source.contract import Contract
    from hfmigrate_checks.source.ledger import LedgerRow


@attrs.frozen
class LiveBenchmark:
    """What the Hub says about the benchmark right now (``error`` when it could not be read)."""

    official: bool
    sha: str
    task_ids: tuple[str, ...]
    error: str = ""


@attrs.frozen
class Planner:
    """What only the draft action imports, handed to its facts: the drafts' planner and the bundle's writer.

    ``decide(contract, rows, resolutions, states)`` gives one decision per source model
    (``hfmigrate_checks.drafts.decide.decide``); ``bundle(facts)`` gives every file of the bundle, by
    path, exactly as it will be written.
    """

    decide: Callable[..., Iterable[Any]]
    bundle: Callable[[DraftFacts], Mapping[str, str]]


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
        planner: Planner,
        mapped_labels: Sequence[str] = (),
    ):
        self.planner = planner
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
    def decisions(self) -> tuple[Any, ...]:
        """One ``ModelDecision`` per source model, in the ledger's order."""
        return tuple(self.planner.decide(self.contract, self.rows, self.resolutions, self.states))

    @functools.cached_property
    def drafts(self) -> tuple[Any, ...]:
        return tuple(d.draft for d in self.decisions if d.draft is not None)

    @functools.cached_property
    def eval_files(self) -> tuple[EvalFile, ...]:
        return tuple(EvalFile.parse(d.path, d.text) for d in self.drafts)

    @functools.cached_property
    def planned_additions(self) -> tuple[tuple[Any, Any, dict], ...]:
        """(``ModelDecision``, ``Proposal`` or None, entry as parsed back from the draft) for every entry a draft adds.

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
        return self.planner.bundle(self)

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
