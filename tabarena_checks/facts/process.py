"""``checks run process``'s facts: inspect's, with the index cache only read and one method of several chosen.

Apart from inspect's facts because only process chooses a method of a directory that holds several
(``--method``, or the one the declaration matches) and refuses a choice that would leave results out.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import attrs

from checks import UsageError
from tabarena_checks.facts.inspect import TabArenaFacts
from tabarena_checks.raw.index import build_index
from tabarena_checks.raw.inference import infer as infer_unmemoized

if TYPE_CHECKING:
    from tabarena_checks.metadata.model import MethodMetadata


@attrs.define(slots=False)
class ProcessFacts(TabArenaFacts):
    """The facts inspect uses, except that the raw index cache is only read, never written: a blocked
    run writes nothing. After ``checks inspect`` (which keeps the cache) nothing is decoded again,
    but every cached row is checked against its file's content (sha256): a file swapped since it
    was decoded is decoded again, so the rules judge what process copies."""

    #: an index of ``data_dir`` built already (``checks inspect --html`` previews process on its own)
    built_index: Any = attrs.field(default=None, repr=False)

    @cached_property
    def full_index(self):

        if self.built_index is not None:
            return self.built_index
        return build_index(self.data_dir, write_cache=False, workers=self.workers, progress=self.progress, verify=True)

    @cached_property
    def input_digests(self) -> dict[str, str]:
        """The input digests, computed once per run (the plan, the source record and the decision record share them)."""
        return self.digests()

    @cached_property
    def selected_method(self) -> str | None:
        """The method prefix whose results are processed when the directory holds several methods.

        ``--method PREFIX`` names it (a unique prefix of one is enough, like ``checks inspect``);
        otherwise it is the one method the declaration matches: for configs the raw ag_key equals
        the declared ``ag_key``, for baselines the directory name starts with the method (or its
        ``name``). None when the directory holds one method, or when no single method matches
        (TA302 then says how to choose).
        """
        if self.method is not None:
            return self._named_method()
        if len(self.methods) < 2:
            return None
        return self._declared_method()

    def _named_method(self) -> str:
        """The one method ``--method`` names, exactly or as a unique prefix.

        A usage error when it names none or several, or when its config directories also hold
        results read as another method: processing it alone would silently leave those out.
        """
        methods = self.methods
        matches = [m for m in methods if m == self.method] or [m for m in methods if m.startswith(self.method)]
        if len(matches) != 1:
            found = ", ".join(methods) or "none"
            how = "matches several" if matches else "matches none"
            raise UsageError(f"--method {self.method!r} {how} of the methods in '{self.data_dir}' ({found})")
        sharing = _sharing(methods, matches[0])
        if sharing:
            raise UsageError(
                f"--method {matches[0]!r}: its config directories also hold results read as "
                f"{', '.join(sharing)} (a damaged result, or another method's); fix or move them"
            )
        return matches[0]

    def _declared_method(self) -> str | None:
        """The one method of several that the declaration matches, or None.

        Apart from ``--method`` because it never raises: an unreadable declaration is its rule's
        finding, and an ambiguous match is TA302's, so nothing is chosen then.
        """
        methods = self.methods
        try:
            meta = self.metadata
        except Exception:  # a bad reference is reported by its rule; nothing is chosen
            return None
        if meta is None:
            return None
        matches = [prefix for prefix, sub in methods.items() if _declares(meta, prefix, sub)]
        # never chosen when a config directory of it holds results of another "method": that is a damaged
        # result of this one (say, simulation artifacts missing), which must be judged, not left out
        return matches[0] if len(matches) == 1 and not _sharing(methods, matches[0]) else None

    @cached_property
    def index(self):
        chosen = self.selected_method
        return self.full_index if chosen is None else self.methods[chosen]

    def other_methods(self) -> list[tuple[str, int]]:
        """The methods of the directory that are not processed, with their number of results."""
        chosen = self.selected_method
        if chosen is None:
            return []
        return [(prefix, len(sub)) for prefix, sub in self.methods.items() if prefix != chosen]


def _sharing(methods: dict, chosen: str) -> list[str]:
    """The other methods with a result in one of ``chosen``'s config directories."""
    dirs = set(methods[chosen].table["config_dir"].to_pylist())
    return [
        prefix
        for prefix, sub in methods.items()
        if prefix != chosen and dirs & set(sub.table["config_dir"].to_pylist())
    ]


def _declares(meta: MethodMetadata, prefix: str, sub) -> bool:
    """Whether the results of one method of a directory are the ones ``meta`` declares."""
    inference = infer_unmemoized(sub)
    if meta.method_type == "config":
        return inference.method_type == "config" and inference.ag_key is not None and inference.ag_key == meta.ag_key
    names = [n for n in (meta.method, meta.name) if isinstance(n, str) and n]
    return inference.method_type == "baseline" and any(prefix.startswith(n) for n in names)
