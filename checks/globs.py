"""Globs from the configuration (``per-file-ignores``, ``exclude``, waiver targets), matched in linear time.

A glob written by a repository is input from a stranger: translated to a regular expression,
``**/`` repeated a dozen times against a deep path made Python's backtracking engine run for
minutes, and a class like ``[z-a]`` crashed it. Here a glob is parsed once into tokens and
matched by stepping a set of positions through the text (a Thompson simulation of the
automaton), so a match costs at most ``len(text) * len(tokens)`` steps whatever the pattern,
and a malformed glob is a :class:`GlobError` the configuration reports with its key.

Syntax, as before: ``*`` and ``?`` stay within one ``/``-separated segment, ``**`` spans any,
``**/`` is any number of leading directories (none included), ``[abc]``, ``[a-z]`` and
``[!a-z]`` (or ``[^a-z]``) match one character of a class; anything else stands for itself.
With ``segments=False`` (waiver targets, which hold no paths) ``*`` and ``?`` match any character.
"""

from __future__ import annotations

import functools

#: a glob longer than this is refused: no path or target needs one, and matching cost grows with it
MAX_GLOB_CHARS = 1024

_LIT, _ONE, _STAR, _ANY, _CLASS, _DIRS = range(6)


class GlobError(ValueError):
    """A glob that cannot be read: an empty or reversed class range, an empty class, or one too long."""


class Glob:
    """One parsed glob; :meth:`fullmatch` says whether it matches a whole text."""

    def __init__(self, pattern: str, *, segments: bool = True) -> None:
        self.pattern = pattern
        self.segments = segments
        self.tokens = _tokens(pattern, segments)

    def __repr__(self) -> str:
        return f"Glob({self.pattern!r}, segments={self.segments})"

    def fullmatch(self, text: str) -> bool:
        """Whether the glob matches all of ``text``: each character advances every live position once."""
        tokens = self.tokens
        states = self._closure({0})
        for ch in text:
            following = set()
            for i in states:
                if i < len(tokens):
                    following.update(_step(tokens, i, ch))
            if not following:
                return False
            states = self._closure(following)
        return len(tokens) in states

    def _closure(self, states: set[int]) -> set[int]:
        """``states`` with every position reachable without a character (a star matching nothing, ``**/`` skipped)."""
        todo, seen = list(states), set(states)
        while todo:
            i = todo.pop()
            if i >= len(self.tokens):
                continue
            kind = self.tokens[i][0]
            nxt = (i + 1,) if kind in (_STAR, _ANY) else (i + 1, i + 2) if kind == _DIRS else ()
            for j in nxt:
                if j not in seen:
                    seen.add(j)
                    todo.append(j)
        return seen


def _step(tokens: list[tuple], i: int, ch: str) -> tuple[int, ...]:
    """Where position ``i`` goes on character ``ch`` (nowhere: an empty tuple)."""
    kind, arg = tokens[i]
    if kind == _LIT:
        return (i + 1,) if ch == arg else ()
    if kind == _ONE:
        return (i + 1,) if ch != "/" or not arg else ()
    if kind == _STAR:
        return (i,) if ch != "/" or not arg else ()
    if kind in (_ANY, _DIRS):  # ``**`` stays on any character; ``**/``'s run of directories also may end at "/"
        return (i,)
    negate, ranges = arg
    return (i + 1,) if any(lo <= ch <= hi for lo, hi in ranges) != negate else ()


def _tokens(pattern: str, segments: bool) -> list[tuple]:
    """The glob as tokens; ``**/`` is two: a run of anything, then the ``/`` that ends it (both skippable)."""
    if len(pattern) > MAX_GLOB_CHARS:
        raise GlobError(f"is {len(pattern)} characters long; a glob may have at most {MAX_GLOB_CHARS}")
    out: list[tuple] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if segments and pattern.startswith("**/", i):
            out += [(_DIRS, None), (_LIT, "/")]
            i += 3
        elif segments and pattern.startswith("**", i):
            out.append((_ANY, None))
            i += 2
        elif c == "*":
            out.append((_STAR, segments))
            i += 1
        elif c == "?":
            out.append((_ONE, segments))
            i += 1
        elif c == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            out.append((_CLASS, _class(pattern[i + 1 : end])))
            i = end + 1
        else:
            out.append((_LIT, c))
            i += 1
    return out


def _class(body: str) -> tuple[bool, tuple[tuple[str, str], ...]]:
    """``[body]`` as (negated, ranges); a reversed range (``z-a``) or nothing after ``!`` is a :class:`GlobError`."""
    negate = body[0] in "!^"
    rest = body[1:] if negate else body
    if not rest:
        raise GlobError(f"the class [{body}] holds no character")
    ranges, i = [], 0
    while i < len(rest):
        if i + 2 < len(rest) and rest[i + 1] == "-":
            lo, hi = rest[i], rest[i + 2]
            if lo > hi:
                raise GlobError(
                    f"the class [{body}] has the range {lo}-{hi}, whose ends are reversed (write {hi}-{lo})"
                )
            ranges.append((lo, hi))
            i += 3
        else:
            ranges.append((rest[i], rest[i]))
            i += 1
    return negate, tuple(ranges)


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str, *, segments: bool = True) -> Glob:
    """``pattern`` parsed (cached: a directory walk asks the same globs for every file)."""
    return Glob(pattern, segments=segments)
