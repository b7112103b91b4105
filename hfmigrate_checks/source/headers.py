"""Two-level table headers: a group row (models or benchmarks) over a row of sub-columns.

GitHub renders an HTML ``colspan`` as one cell over its columns; Markdown has no spans, so
READMEs write the group name in one cell of its group (often the middle one) with empty
cells beside it and put the sub-columns in the first body row (``func | param | value``).
Read naively, the score under an empty header cell belongs to no one and the group name
lands on one column only. Here each column gets its group and sub-column: the groups are the
repeating runs of the sub-column names, and each must hold exactly one group name, else the
header is reported as unreadable rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hfmigrate_checks.source.mdtable import Cell
from hfmigrate_checks.source.printed import NO_SCORE

#: a score, maybe with a unit or an uncertainty ("71.2", "71.2%", "70.1 ± 0.3"); "0-shot" is a name
_NUMBERISH = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)\s*(?:%|±.*)?$")
#: what a setting row prints under a column: shots, chain-of-thought, a metric (an architecture row,
#: ``MoE | Dense``, is not one: it describes the models, and stays a row)
_SETTING = re.compile(
    r"(?:\b(?:\d+[- ]?shots?|zero[- ]shot|one[- ]shot|few[- ]shot|cot|chain[- ]of[- ]thought|acc\w*|accuracy"
    r"|em|exact[- ]match|f1|bleu\w*|rouge\w*|chrf\w*|pass@\d+|maj@\d+|mc[12]|ppl|perplexity|metric)\b|@\d+)",
    re.I,
)


def is_subheader(header: Sequence[Cell], row: Sequence[Cell]) -> bool:
    """Whether a GFM table's first body row is a sub-header row: sub-columns under group names, or
    one setting per column (``5-shot``, ``acc``, ``CoT``) under a full header.

    Either the header leaves a score position empty (a group name sits beside it) and the row fills
    that position with a name, holding at least two names and no number; or the row's first cell
    (the model label) is empty and the other cells it fills are settings, never a score: a no-score
    mark (``-``) there says a column has no setting, and at least one cell must name one. A lone
    emphasised cell is a group row, not a sub-header.
    """
    filled = [c for c in row if c.text]
    if not filled or any(_NUMBERISH.match(c.text) for c in filled):
        return False
    named = [c for c in filled if c.text not in NO_SCORE]
    settings_row = bool(named) and all(_SETTING.search(c.text) for c in named) and not _group_row(filled)
    if not row[0].text and any(h.text for h in header[1:]) and settings_row:
        return True
    if len(named) < len(filled) or len(filled) < 2 or not any(h.text for h in header[1:]):
        return False
    return any(not header[i].text and row[i].text for i in range(1, min(len(header), len(row))))


def _group_row(filled: Sequence[Cell]) -> bool:
    return len(filled) == 1 and filled[0].emphasis in ("**", "*")


def settings(row: Sequence[Cell]) -> list[Cell]:
    """A sub-header row as settings: a no-score mark (``-``) under a column is no setting."""
    return [Cell("", "") if c.text in NO_SCORE else c for c in row]


def flatten(top: Sequence[Cell], sub: Sequence[Cell], line: int) -> tuple[list[Cell], list[tuple[str, str]], str]:
    """(one header cell per column, its (group, sub-column), a problem) for two header rows.

    A column's name is ``group / sub`` (``Model A / func``); a column whose sub cell is empty
    or the group cell itself (a ``rowspan``) keeps the group's name alone.
    """
    width = max(len(top), len(sub))
    top = [*top, *[Cell("", "")] * (width - len(top))]
    sub = [*sub, *[Cell("", "")] * (width - len(sub))]
    groups, problem = _groups(top, sub, line)
    cells, parts = [], []
    for n in range(width):
        group, below = groups[n], sub[n]
        if below is group or not below.text or below.text == group.text:
            name, part = group.text, (group.text, "")
        elif not group.text:
            name, part = below.text, (below.text, "")
        else:
            name, part = f"{group.text} / {below.text}", (group.text, below.text)
        markers = tuple(dict.fromkeys([*group.markers, *(() if below is group else below.markers)]))
        cells.append(Cell(name, name, markers))
        parts.append(part)
    return cells, parts, problem


def stack(rows: Sequence[Sequence[Cell]]) -> tuple[list[Cell], list[tuple[str, str]]]:
    """(one header cell per column, its (group, sub-column)) for three or more HTML header rows.

    HTML spans are explicit, so nothing is guessed: a column is named by the cells over it from
    the top row down, each once (a ``rowspan`` repeats one cell, an empty cell adds nothing):
    ``Model A / Tool use / func``. The top cell is the group (a model, or a benchmark) and the
    rest the sub-column, as under a two-level header.
    """
    width = max(len(row) for row in rows)
    cells, parts = [], []
    for n in range(width):
        above: list[Cell] = []
        for row in rows:
            here = row[n] if n < len(row) else None
            if here is not None and here.text and not any(here is seen or here.text == seen.text for seen in above):
                above.append(here)
        names = [c.text for c in above]
        name = " / ".join(names)
        cells.append(Cell(name, name, tuple(dict.fromkeys(m for c in above for m in c.markers))))
        parts.append((names[0], " / ".join(names[1:])) if names else ("", ""))
    return cells, parts


def _groups(top: list[Cell], sub: list[Cell], line: int) -> tuple[list[Cell], str]:
    """The group cell over each column: itself when every sub-column has one, else by the sub-names' period."""
    first = next((i for i in range(1, len(sub)) if sub[i].text), len(sub))
    if all(top[i].text for i in range(first, len(sub))):
        return top, ""
    return _spread(top, [c.text for c in sub[first:]], first, line)


def _spread(top: list[Cell], names: list[str], first: int, line: int) -> tuple[list[Cell], str]:
    """Each group name over its run of sub-columns (from column ``first``), or why that is not one name."""
    period = _period(names)
    out = list(top)
    for start in range(first, len(top), period):
        named = [top[i] for i in range(start, start + period) if top[i].text]
        if len(named) != 1:
            found = ", ".join(repr(c.text) for c in named) or "none"
            return top, (
                f"the two-level header on line {line}: the columns {start + 1}-{start + period} "
                f"(sub-columns {', '.join(names[:period])}) have group names {found}; expected exactly one "
                "per group. Give each group one name (or use an HTML colspan)"
            )
        out[start : start + period] = named * period
    return out, ""


def _period(names: list[str]) -> int:
    """The length of the shortest run of sub-column names that repeats over all of them."""
    return next(
        p
        for p in range(1, len(names) + 1)
        if len(names) % p == 0 and all(names[i] == names[i % p] for i in range(len(names)))
    )
