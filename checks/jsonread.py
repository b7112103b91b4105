"""A strict JSON parser that remembers where every value was written.

``json.loads`` keeps the last of two equal keys, accepts ``NaN`` and ``Infinity`` (which no
JSON standard allows, yet real result files hold), has no size or depth limit of its own, and
forgets positions, so a rule cannot say ``file:line:col`` of the value it judges. This parser
refuses duplicate keys, applies the caller's policy to non-finite numbers, stops at a depth
limit, and maps every value's key path (an RFC 6901 JSON Pointer, ``/scores/test/0/main_score``)
to its offset. It raises :class:`Malformed` with an offset; :mod:`checks.io` turns that into
its positioned :class:`~checks.io.ReadError`, so this module imports nothing of the framework.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from collections.abc import Iterable
from typing import Any

#: what a non-finite number (NaN, Infinity, -Infinity, or a literal too large for a float) becomes
NONFINITE_POLICIES = ("refuse", "keep")


@functools.cache
def _tokens() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    """(space, string, number) patterns, compiled on the first parse, not by every importer of
    :mod:`checks.io` (each pre-commit hook)."""
    return (
        re.compile(r"[ \t\n\r]*"),
        re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"'),
        re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?"),
    )


_WORDS = {"true": True, "false": False, "null": None}
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class Malformed(Exception):
    """Text that is not strict JSON: ``reason`` and the ``offset`` (a character index) where it was found."""

    def __init__(self, reason: str, offset: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.offset = offset


def pointer(parts: Iterable[str | int]) -> str:
    """The JSON Pointer of a key path: ``("scores", "test", 0)`` -> ``/scores/test/0`` (``~`` and ``/`` escaped)."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in parts)


class JsonDoc:
    """A parsed document: its ``value`` and, for every key path, where it was written.

    A member of an object is placed at its key (where an editor should put the cursor to change
    it), an array item or the whole document at the value's first character.
    """

    __slots__ = ("value", "source", "_text", "_offsets", "_lines", "_keep")

    def __init__(
        self, value: Any, source: str, text: str, offsets: dict[str, int] | None, keep_nonfinite: bool = False
    ) -> None:
        self.value = value
        self.source = source
        self._text = text
        #: key path -> offset; None until a place is first asked for (most documents are never asked)
        self._offsets = offsets
        self._keep = keep_nonfinite
        self._lines: list[int] | None = None

    def __repr__(self) -> str:
        return f"JsonDoc(source={self.source!r})"

    def _places(self) -> dict[str, int]:
        if self._offsets is None:  # the text parsed already: reading it again for places cannot fail
            parser = _Parser(self._text, self._keep, max_depth=10**6)
            parser.document()
            self._offsets = parser.offsets
        return self._offsets

    def pointers(self) -> list[str]:
        """Every key path of the document, in the order written."""
        return list(self._places())

    def where(self, path: str | Iterable[str | int] = "") -> tuple[int, int]:
        """``(line, col)``, both from 1, of the value at ``path`` (a JSON Pointer or a sequence of keys and indexes).

        :raises KeyError: the document has no such key path.
        """
        key = path if isinstance(path, str) else pointer(path)
        return self.line_col(self._places()[key])

    def line_col(self, offset: int) -> tuple[int, int]:
        """``(line, col)`` of a character offset of the text, both from 1."""
        if self._lines is None:
            self._lines = [i for i, char in enumerate(self._text) if char == "\n"]
        line = bisect.bisect_left(self._lines, offset)
        start = self._lines[line - 1] + 1 if line else 0
        return line + 1, offset - start + 1


def parse(text: str, *, source: str = "", nonfinite: str = "refuse", max_depth: int = 32) -> JsonDoc:
    """Parse ``text`` as one strict JSON value.

    :param nonfinite: ``"refuse"``: ``NaN``, ``Infinity`` or a number too large for a float is
        malformed; ``"keep"``: it is read as the float it names, for a rule to judge where it stands.
    :raises Malformed: at the first offending character.
    """
    if nonfinite not in NONFINITE_POLICIES:
        raise ValueError(f"nonfinite must be one of {', '.join(NONFINITE_POLICIES)} (got {nonfinite!r})")
    keep = nonfinite == "keep"
    value = _quick(text, keep, max_depth)
    if value is not _CAREFUL:
        return JsonDoc(value, source, text, None, keep)
    parser = _Parser(text, keep, max_depth)
    try:
        value = parser.document()
    except RecursionError:  # a max_depth beyond what Python's stack holds
        raise Malformed("nested too deeply to parse", 0) from None
    return JsonDoc(value, source, text, parser.offsets, keep)


#: what :func:`_quick` returns when the text needs the careful parser
_CAREFUL = object()
#: a ``\uD800``-``\uDFFF`` escape: the standard library lets an unpaired one through
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


class _Refused(ValueError):
    """Something the standard library would accept that this reader does not: the careful parser says where."""


def _quick(text: str, keep: bool, max_depth: int) -> Any:
    """The value read by the standard library's C parser when the text is plainly strict JSON (about 20 times
    faster than :class:`_Parser`), else :data:`_CAREFUL`: the careful parser then reads it again and accepts
    the same value or says where the text is wrong, so both paths give one answer."""
    if text.startswith("\ufeff") or _SURROGATE.search(text):
        return _CAREFUL
    try:
        value = json.loads(
            text, object_pairs_hook=_unique, parse_constant=functools.partial(_constant, keep), parse_float=_float(keep)
        )
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError, as are _Refused and long integers
        return _CAREFUL
    return value if _depth(value) <= max_depth else _CAREFUL


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):
        raise _Refused("duplicate key")
    return made


def _constant(keep: bool, word: str) -> float:
    if not keep:
        raise _Refused(word)
    return _NONFINITE[word]


def _float(keep: bool):
    def read(token: str) -> float:
        number = float(token)
        if math.isinf(number) and not keep:
            raise _Refused(token)
        return number

    return read


def _depth(value: Any) -> int:
    """How many containers deep ``value`` nests (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


class _Parser:
    """Recursive descent over ``text``; ``offsets`` collects each key path's offset as it is read."""

    def __init__(self, text: str, keep_nonfinite: bool, max_depth: int) -> None:
        self.text = text
        self.keep_nonfinite = keep_nonfinite
        self.max_depth = max_depth
        self.offsets: dict[str, int] = {}
        self.at = 0
        self.space, self.string, self.number = _tokens()

    def document(self) -> Any:
        self.at = 1 if self.text.startswith("\ufeff") else 0  # a byte-order mark is not part of the text
        self._space()
        if self.at >= len(self.text):
            raise Malformed("no JSON value (the file is empty)", self.at)
        self.offsets[""] = self.at
        value = self._value((), 0)
        self._space()
        if self.at < len(self.text):
            raise Malformed("more text after the JSON value ends; a file holds one value", self.at)
        return value

    def _space(self) -> None:
        self.at = self.space.match(self.text, self.at).end()

    def _value(self, path: tuple, depth: int) -> Any:
        char = self.text[self.at] if self.at < len(self.text) else ""
        if char == "{" or char == "[":
            if depth >= self.max_depth:
                raise Malformed(f"nested deeper than {self.max_depth} levels", self.at)
            return self._object(path, depth + 1) if char == "{" else self._array(path, depth + 1)
        if char == '"':
            return self._string()
        return self._scalar()

    def _object(self, path: tuple, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first: dict[str, int] = {}
        self.at += 1
        self._space()
        if self._take("}"):
            return out
        while True:
            if self.at >= len(self.text) or self.text[self.at] != '"':
                raise Malformed(self._expected("a key in double quotes"), self.at)
            start = self.at
            key = self._string()
            if key in first:
                line = self.text.count("\n", 0, first[key]) + 1
                raise Malformed(f"duplicate key {key!r} (first written on line {line}); keep one", start)
            first[key] = start
            self.offsets[pointer((*path, key))] = start
            self._space()
            if not self._take(":"):
                raise Malformed(self._expected("':' after the key"), self.at)
            self._space()
            out[key] = self._value((*path, key), depth)
            if self._after_item("}"):
                return out

    def _array(self, path: tuple, depth: int) -> list[Any]:
        out: list[Any] = []
        self.at += 1
        self._space()
        if self._take("]"):
            return out
        while True:
            self.offsets[pointer((*path, len(out)))] = self.at
            out.append(self._value((*path, len(out)), depth))
            if self._after_item("]"):
                return out

    def _after_item(self, close: str) -> bool:
        """Past the ``,`` between items (False) or the closing bracket (True); a trailing comma is refused."""
        self._space()
        if self._take(close):
            return True
        comma = self.at
        if not self._take(","):
            raise Malformed(self._expected(f"',' or '{close}'"), comma)
        self._space()
        if self.at < len(self.text) and self.text[self.at] == close:
            raise Malformed(f"a trailing comma before '{close}' (JSON allows none); remove it", comma)
        return False

    def _take(self, char: str) -> bool:
        if self.text.startswith(char, self.at):
            self.at += 1
            return True
        return False

    def _expected(self, what: str) -> str:
        if self.at >= len(self.text):
            return f"the text ends where {what} is expected (unclosed bracket or string?)"
        return f"expected {what}, found {self.text[self.at]!r}"

    def _string(self) -> str:
        match = self.string.match(self.text, self.at)
        if match is None:
            raise Malformed(
                "a string that is not closed on its line, or holds a raw control character or a bad escape", self.at
            )
        value = json.loads(match.group())  # the token is known well formed: the standard library decodes its escapes
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Malformed("a string with an unpaired surrogate escape (\\ud800-\\udfff alone)", self.at) from None
        self.at = match.end()
        return value

    def _scalar(self) -> Any:
        start = self.at
        for word, value in _WORDS.items():
            if self.text.startswith(word, start):
                self.at += len(word)
                return value
        for word, value in _NONFINITE.items():
            if self.text.startswith(word, start):
                return self._nonfinite(value, word, start, start + len(word))
        match = self.number.match(self.text, start)
        if match is None or match.end() == start:
            raise Malformed(self._expected("a JSON value"), start)
        token = match.group()
        if match.group(1) is None and match.group(2) is None:
            try:
                number = int(token)
            except ValueError:  # more digits than Python converts (sys.get_int_max_str_digits)
                raise Malformed(f"an integer of {len(token)} digits, too long to read", start) from None
            self.at = match.end()
            return number
        number = float(token)
        if math.isinf(number):
            return self._nonfinite(number, f"{token} (too large for a float)", start, match.end())
        self.at = match.end()
        return number

    def _nonfinite(self, value: float, written: str, start: int, end: int) -> float:
        if not self.keep_nonfinite:
            raise Malformed(f"{written} is not a JSON number (this file's format refuses NaN and infinities)", start)
        self.at = end
        return value
