"""Where the notes of each table of a page may be read, found once for the whole page.

A marker's legend is read from the table's own text (between it and its neighbouring heading or
table above and below) and then from the opening text of the sections enclosing it
(:mod:`~hfmigrate_checks.source.notes` reads the legends). Finding those ranges by scanning every
heading and table for each table was quadratic: 3,000 tables under their own headings took 7 s.
Here they are found by bisection over the page's headings and tables, and each section's opening
legends are read once.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from hfmigrate_checks.source.notes import legends


class Scopes:
    """Where the notes of each table of one page may be read, answered by bisection: a page of
    thousands of tables and headings is read in time linear in its size.

    ``headings`` are (0-based line, level) in line order, ``blocks`` every table's (start, stop).
    """

    def __init__(self, lines: Sequence[str], headings: Sequence[tuple[int, int]], blocks: Sequence[tuple[int, int]]):
        self.lines = lines
        self.heading_lines = [h for h, _ in headings]
        self.starts = sorted(a for a, _ in blocks)
        self.stops = sorted(b for _, b in blocks)
        self.parent = _parents([lv for _, lv in headings])
        self.opening: dict[int, dict[str, list[str]]] = {}

    def own(self, start: int, stop: int) -> list[str]:
        """The table's own lines of text: between it and the nearest heading or other table above and below."""
        k = bisect.bisect_left(self.heading_lines, start) - 1  # the heading above
        above = self.heading_lines[k] + 1 if k >= 0 else 0
        j = bisect.bisect_left(self.heading_lines, stop)
        below = self.heading_lines[j] if j < len(self.heading_lines) else len(self.lines)
        i = bisect.bisect_right(self.stops, start) - 1
        before = self.stops[i] if i >= 0 and self.stops[i] >= above else above
        i = bisect.bisect_left(self.starts, stop)
        after = self.starts[i] if i < len(self.starts) and self.starts[i] <= below else below
        return [*self.lines[before:start], *self.lines[stop:after]]

    def outer(self, start: int, mark: str) -> list[str]:
        """The legends of ``mark`` in the opening text (up to the first sub-heading) of each section
        enclosing the heading above line ``start``, nearest first; each section's text is read once."""
        k = bisect.bisect_left(self.heading_lines, start) - 1
        found: list[str] = []
        k = self.parent[k] if k >= 0 else -1
        while k >= 0:
            found += [text for text in self._opening(k).get(mark, ()) if text not in found]
            k = self.parent[k]
        return found

    def _opening(self, k: int) -> dict[str, list[str]]:
        if k not in self.opening:
            line = self.heading_lines[k]
            end = self.heading_lines[k + 1] if k + 1 < len(self.heading_lines) else len(self.lines)
            self.opening[k] = legends(self.lines[line + 1 : end])
        return self.opening[k]


def _parents(levels: Sequence[int]) -> list[int]:
    """Per heading, the index of the nearest heading above it of a lower level (-1: none)."""
    out, stack = [], []
    for n, level in enumerate(levels):
        while stack and levels[stack[-1]] >= level:
            stack.pop()
        out.append(stack[-1] if stack else -1)
        stack.append(n)
    return out
