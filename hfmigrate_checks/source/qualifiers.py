"""What a footnote on a leaderboard score says: a change to what was run, where it came from, or unknown.

A score printed as ``81.2†`` with the legend ``† with tools`` is not the plain score of
that model: the run used tools. The migration must never publish it as a plain result.
So every footnote text is sorted here: ``run`` (tools, shots, chain-of-thought, majority
vote, sampling, search, thinking budget, ...) becomes the draft's ``notes``;
``provenance`` (reported by the authors, taken from the paper, ...) is kept in the
ledger only; anything else is ``unknown`` and makes the score ``needs_review``, because a
reviewer, not a word list, has to say whether it changes the run.
"""

from __future__ import annotations

import functools
import re

RUN = "run"
PROVENANCE = "provenance"
UNKNOWN = "unknown"

_RUN = re.compile(
    r"\b(?:tools?|tool[- ]use|function[- ]call\w*|code[- ]interpreter|python|search|brows\w*|web|retrieval|rag"
    r"|agent\w*|scaffold\w*|harness|\d+[- ]?shots?|shots?|zero[- ]shot|few[- ]shot|cot|chain[- ]of[- ]thought"
    r"|thinking|no[- ]?think|reasoning|effort|budget|majority|maj@\d+|votes?|voting|pass@\d+|best[- ]of[- ]?\d*|bo\d+"
    r"|self[- ]consistency|sampl\w*|samples?|temp(?:erature)?|greedy|decoding|ensembl\w*|prompt\w*|subset|split"
    r"|\d+\s*[kKmM]?\s*(?:tokens? )?context|context[- ](?:length|window|size)|compute"
    r"|test[- ]time|parallel|attempts?|rerank\w*|verifier|judge|avg@\d+|mean@\d+|cons@\d+"
    r"|iterations?|retr(?:y|ies)|max_\w+|turns?|hours?|\d+\s*h)\b"
    r"|@\d+",
    re.I,
)
_PROVENANCE = re.compile(
    r"\b(?:reported|official|(?:run|evaluated|submitted) by|taken from|as published|reproduced"
    r"|our (?:own )?evaluation|evaluated by"
    r"|results? (?:from|by)|according to|cited|source|(?:tech(?:nical)? )?report|paper|model card|blog)\b",
    re.I,
)


_PARENS = re.compile(r"\s*\(([^()]{1,80})\)")


def run_details(label: str) -> tuple[str, list[str]]:
    """A label without its parenthesised run details, and those details: ``Chinchilla (70B, few-shot)``
    is the model ``Chinchilla`` run ``70B, few-shot``. A parenthesis that says nothing about the run
    (``(API)``, ``(multi-step)``) stays part of the label."""
    details: list[str] = []

    def take(match: re.Match) -> str:
        if classify(match.group(1)) == RUN:
            details.append(match.group(1).strip())
            return " "
        return match.group(0)

    stripped = " ".join(_PARENS.sub(take, label).split())
    return (stripped, details) if stripped else (label, [])


@functools.lru_cache(maxsize=4096)
def classify(text: str) -> str:
    """``run``, ``provenance`` or ``unknown`` for one footnote's text (a run word wins over a source word)."""
    if _RUN.search(text):
        return RUN
    if _PROVENANCE.search(text):
        return PROVENANCE
    return UNKNOWN
