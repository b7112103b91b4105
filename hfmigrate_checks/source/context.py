"""What a table's surroundings say about all of its scores, and what tells sibling tables apart.

A reader of the page takes a table under ``<details><summary>Five-shot</summary>`` as the
five-shot results, and two tables that print the same models and benchmarks as two
different runs, told apart by what surrounds them: their headings, the summaries of
their collapsed sections, the paragraphs around them. A ledger that drops that context
gives one model two different plain scores for one benchmark, both ok. So the summaries
and the caption around a table are attributed to all of its scores (a run setting becomes the variant),
and for every sibling table the context that differs is attributed too; when nothing
tells two siblings apart, or only text that names no run setting does, every score of
the table needs review with that text quoted: a reviewer, not a word list, decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from hfmigrate_checks.source import qualifiers
from hfmigrate_checks.source.document import Table


#: scores that need review: those whose row label (the first cell) and column are in the two sets
Shared = tuple[frozenset[str], frozenset[str], str]


def around(table: Table, tables: Sequence[Table]) -> tuple[dict[str, str], list[Shared]]:
    """(note key -> text attributed to every score of ``table``, the scores it shares with a sibling that
    need review and why). Only the shared scores are affected: a ``Math`` and a ``Code`` table that
    both print an ``Avg`` column leave their own benchmarks alone."""
    items = [*(("collapsed section", s) for s in table.summaries), *(("caption", c) for c in [table.caption] if c)]
    review = []
    for sibling in (t for t in tables if t is not table):
        labels, columns = _labels(table) & _labels(sibling), _columns(table) & _columns(sibling)
        if not labels or not columns:
            continue
        apart = [item for item in _context(table) if item not in _context(sibling)]
        review += [(frozenset(labels), frozenset(columns), reason) for reason in _unexplained(apart, sibling)]
        items += [item for item in apart if item[0] == "heading" and item not in items]
    return _keyed(items), review


def _labels(table: Table) -> set[str]:
    return {row.cells[0].text for row in table.rows if row.cells and row.cells[0].text}


def _columns(table: Table) -> set[str]:
    return {cell.text for cell in table.header[1:] if cell.text}


def _context(table: Table) -> list[tuple[str, str]]:
    """What surrounds a table: its headings, collapsed-section summaries and the paragraphs around it."""
    return [
        *(("heading", h) for h in table.headings),
        *(("collapsed section", s) for s in table.summaries),
        *(("caption", c) for c in [table.caption] if c),
        *(("note", sentence) for sentence, _ in table.prose),
    ]


def _unexplained(apart: list[tuple[str, str]], sibling: Table) -> list[str]:
    """Why the table's scores need review next to ``sibling``: nothing tells the two apart, or only text
    that names no run setting."""
    where = f"the table on line {sibling.line} prints the same models and benchmarks"
    if not apart:
        return [
            f"{where} and nothing around the two tables tells them apart; a reviewer must decide which one is meant"
        ]
    if any(qualifiers.classify(text) == qualifiers.RUN for _, text in apart):
        return []
    said = ", ".join(f"the {kind} {text!r}" for kind, text in apart)
    return [f"{where}; only {said} tells this one apart, and a reviewer must decide whether it changes what was run"]


def _keyed(items: list[tuple[str, str]]) -> dict[str, str]:
    """Note keys for the attributed context: ``[collapsed section]``, ``[heading 2]``, ..."""
    out = {}
    for kind in dict.fromkeys(kind for kind, _ in items):
        texts = [text for k, text in items if k == kind]
        for n, text in enumerate(texts, 1):
            out[f"[{kind}]" if len(texts) == 1 else f"[{kind} {n}]"] = text
    return out
