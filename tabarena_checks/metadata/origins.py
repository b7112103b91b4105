"""Where a declared value came from: the steps ``MethodMetadata.origins`` records, and the one a finding points at.

:class:`Step` is one place a value came through (a keyword, a spread, a constant, an import);
:func:`site` picks the one to edit. With them are :class:`Plain` and :class:`Comparable`, the
slotted value-object bases of every value the static reader builds. They live apart from
:mod:`tabarena_checks.metadata.info_eval` (the evaluator, about a millisecond to import)
because every TA rule locates its finding with :func:`site`, and ``checks rules`` imports every
rule module: this module imports nothing.
"""

from __future__ import annotations


class Plain:
    """A value object: its fields are its ``__slots__``; shown like an attrs class, never changed once built."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.__slots__)})"


class Comparable(Plain):
    """A value object equal to another of its class with equal fields (and hashed alike)."""

    __slots__ = ()

    def _fields(self) -> tuple:
        return tuple(getattr(self, n) for n in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())


class Step(Comparable):
    """One place a value came through: ``kind`` is keyword, key, positional, spread, constant,
    import, descriptor or constructor; ``name`` what was written there."""

    __slots__ = ("kind", "name", "path", "line", "col")

    def __init__(self, kind: str, name: str, path: str, line: int, col: int):
        self.kind, self.name, self.path, self.line, self.col = kind, name, path, line, col

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}:{self.col}"

    def describe(self) -> str:
        label = {
            "keyword": "keyword",
            "key": "dict key",
            "positional": "positional argument",
            "spread": "spread",
            "constant": "constant",
            "import": "import",
            "descriptor": "descriptor default",
            "constructor": "set by",
            "literal": "literal",
        }.get(self.kind, self.kind)
        return f"{label} {self.name} ({self.where})"


#: the key of ``MethodMetadata.origins`` that locates the declaring call itself
CALL = "__call__"
#: kinds of step that name the field itself: the place a finding about that field points at
NAMING = ("keyword", "key", "positional", "constructor")


def site(steps: tuple[Step, ...]) -> Step | None:
    """The innermost step that names the field (where its value was written), else the first step."""
    for step in reversed(steps):
        if step.kind in NAMING:
            return step
    return steps[0] if steps else None
