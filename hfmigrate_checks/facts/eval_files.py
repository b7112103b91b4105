"""What ``checks hf validate`` and the ``precommit-eval-results`` hook hand the HF rules: the eval-files view.

The rules shared by every HF action read only this view, which :class:`~hfmigrate_checks.facts.draft.DraftFacts`
offers too:

- ``eval_files``: tuple of :class:`~hfmigrate_checks.evalresults.evalfile.EvalFile`, the files to judge;
- ``contract``: the :class:`~hfmigrate_checks.source.contract.Contract`, or ``None``;
- ``task_ids``: the task ids of the benchmark's current eval.yaml (or of the contract);
- ``supplied_tokens``: verifyToken values the user supplied for exactly these runs;
- ``output_files``: path -> text of everything judged (or that would be written).

Nothing here reads the network: the hooks build it from files on disk with :func:`eval_files_facts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from hfmigrate_checks.evalresults.evalfile import EvalFile

if TYPE_CHECKING:  # the contract's module loads only when a contract is given
    from hfmigrate_checks.source.contract import Contract


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
