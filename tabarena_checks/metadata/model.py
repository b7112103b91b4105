"""The MethodMetadata record arena-checks works with, whichever way it was read.

It mirrors TabArena's ``MethodMetadata`` fields (minus the runtime-only ``artifact_dir``
and ``cache_root``) as a frozen attrs class, so it can be built from an imported
TabArena object or from a statically parsed ``info.py`` without importing TabArena.
Validation of field values is the job of the rules, not of this record: a bad
``info.py`` must still load so every problem can be reported at once.
"""

from __future__ import annotations

from typing import Any

import attrs

#: every field, in TabArena's declaration order (runtime paths excluded)
FIELDS = (
    "method",
    "suite",
    "method_type",
    "ag_key",
    "model_key",
    "config_default",
    "can_hpo",
    "compute",
    "is_bag",
    "has_raw",
    "has_processed",
    "has_results",
    "name",
    "name_suffix",
    "method_class",
    "tags",
    "cache_type",
    "cache_kwargs",
    "date",
    "date_introduced",
    "reference_url",
    "display_name",
    "verified",
    "validation_protocol",
)


@attrs.frozen
class MethodMetadata:
    """A method's declared metadata. ``declared`` lists the fields info.py set explicitly."""

    method: str
    suite: str | None = None
    method_type: str = "config"
    ag_key: str | None = None
    model_key: str | None = None
    config_default: str | None = None
    can_hpo: bool | None = None
    compute: str = "cpu"
    is_bag: bool = False
    has_raw: bool = True
    has_processed: bool = True
    has_results: bool = True
    name: str | None = None
    name_suffix: str | None = None
    method_class: str = "model"
    tags: tuple[str, ...] = ()
    cache_type: str | None = None
    cache_kwargs: dict[str, Any] | None = None
    date: str | None = None
    date_introduced: str | None = None
    reference_url: str | None = None
    display_name: str | None = None
    verified: bool = True
    validation_protocol: str | None = None
    #: how it was declared: "config", "baseline", "system", "portfolio", "tabarena_legacy_s3",
    #: "descriptor" (ModelDescriptor.method_metadata) or "direct"
    constructor: str = "direct"
    #: fields set explicitly in the source
    declared: frozenset[str] = frozenset()
    #: where it came from, e.g. "models/nori/info.py:12" or "pkg.mod:var"
    source: str = ""
    #: the variable name it is bound to in info.py (for register and the log)
    variable: str | None = None
    #: where each field's value was written when read statically: field -> steps (origins.Step), outermost first
    origins: dict[str, tuple] = attrs.field(factory=dict, eq=False, repr=False)

    @property
    def effective_suite(self) -> str:
        """TabArena defaults ``suite`` to ``method`` when unset."""
        return self.suite or self.method

    @property
    def effective_model_key(self) -> str | None:
        return self.model_key or self.ag_key

    @property
    def effective_can_hpo(self) -> bool:
        return self.method_type == "config" if self.can_hpo is None else bool(self.can_hpo)

    @property
    def effective_cache_type(self) -> str:
        """``r2`` when cache_kwargs holds bucket and prefix and no type is set; else the type or ``local``."""
        return self.cache_type or _cache_type_of(self.cache_kwargs)

    def resolved(self) -> dict[str, Any]:
        """Every field as TabArena's ``__post_init__`` leaves it: the derived defaults filled in."""
        out = {f: getattr(self, f) for f in FIELDS}
        out.update(
            suite=self.effective_suite,
            model_key=self.effective_model_key,
            can_hpo=self.effective_can_hpo,
            cache_type=self.effective_cache_type,
            cache_kwargs=self.cache_kwargs or {},
        )
        if out["display_name"] is None:
            out["display_name"] = self.derived_display_name()
        return out

    @property
    def is_system(self) -> bool:
        return self.method_class == "system"

    def derived_display_name(self) -> str:
        """What TabArena shows when ``display_name`` is unset: name, else model key + suffix, else method."""
        if self.name:
            return self.name
        if self.method_type == "config" and self.effective_model_key:
            return f"{self.effective_model_key}{self.name_suffix or ''}"
        return self.method


def _cache_type_of(cache_kwargs: Any) -> str:
    """The cache type TabArena derives when none is set: ``r2`` when cache_kwargs holds bucket and prefix."""
    kw = cache_kwargs if isinstance(cache_kwargs, dict) else {}
    return "r2" if kw.get("bucket") and kw.get("prefix") else "local"


#: what each constructor sets on its own (so these are not "declared" by info.py)
CONSTRUCTOR_IMPLIES: dict[str, dict[str, Any]] = {
    "config": {"method_type": "config"},
    "baseline": {"method_type": "baseline"},
    "system": {"method_type": "baseline", "method_class": "system"},
    "portfolio": {"method_type": "portfolio", "has_raw": False},
    "direct": {},
}


def canonical(record: MethodMetadata) -> MethodMetadata:
    """Drop values that equal what TabArena would derive, so every source gives the same record.

    TabArena fills ``suite``, ``model_key``, ``can_hpo``, ``cache_type`` and
    ``display_name`` from other fields when they are unset, so an imported object has them
    while a statically read ``info.py`` does not. Tags are sorted and deduplicated as
    TabArena does (left alone when they are not a list of strings, for the rules to report).
    The derived settings are compared as TabArena derives them with the first three unset, which gives
    the same values: a dropped ``model_key`` equalled ``ag_key``, its fallback. One copy is made (the
    info.py hook makes one per declaration).
    """
    changes = _derivable_fields(record)
    changes.update(_derivable_settings(record))
    return attrs.evolve(record, **changes) if changes else record


def _derivable_fields(record: MethodMetadata) -> dict[str, Any]:
    """``suite``, ``model_key`` and ``can_hpo`` where they equal their defaults; the tags in canonical form."""
    changes: dict[str, Any] = {}
    if record.suite == record.method:
        changes["suite"] = None
    if record.model_key is not None and record.model_key == record.ag_key:
        changes["model_key"] = None
    if record.can_hpo is not None and record.can_hpo is (record.method_type == "config"):
        changes["can_hpo"] = None
    tags = record.tags
    if isinstance(tags, (list, tuple, set, frozenset)):
        changes["tags"] = tuple(sorted(set(tags))) if all(isinstance(t, str) for t in tags) else tuple(tags)
    return changes


def _derivable_settings(record: MethodMetadata) -> dict[str, Any]:
    """``cache_type`` and ``display_name`` where they equal what TabArena derives from the other fields."""
    changes: dict[str, Any] = {}
    if record.cache_type is not None and record.cache_type == _cache_type_of(record.cache_kwargs):
        changes["cache_type"] = None
    if record.display_name is not None and record.display_name == record.derived_display_name():
        changes["display_name"] = None
    return changes
