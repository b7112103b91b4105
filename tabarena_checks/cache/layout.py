"""Where a processed method lives in the TabArena cache, and how its metadata.yaml is written and read.

Process writes this layout, upload and unpublish read it; keeping the paths in one place
keeps the three agreeing with TabArena's ``<cache>/artifacts/<suite>/methods/<method>/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from checks import InputError, io
from tabarena_checks.cache.names import name_problem
from tabarena_checks.metadata.model import FIELDS, MethodMetadata

CACHE_ENV = "TABARENA_CACHE"
#: the record of which raw inputs a cache was built from (never uploaded)
SOURCE_RECORD = ".checks-source.json"


def cache_root(option: str | os.PathLike | None = None) -> Path:
    """``--cache-root``, else ``$TABARENA_CACHE``, else ``~/.cache/tabarena`` (TabArena's own default)."""
    if option:
        return Path(option).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "tabarena"


def _safe_name(instance: object, attribute: attrs.Attribute, value: object) -> None:
    problem = name_problem(value, attribute.name)
    if problem:
        raise InputError(f"{problem}; it names the cache directory artifacts/<suite>/methods/<method>/")


@attrs.frozen
class MethodCache:
    """The paths of one method's cache directory; suite and method must be plain directory names."""

    root: Path
    suite: str = attrs.field(validator=_safe_name)
    method: str = attrs.field(validator=_safe_name)

    @classmethod
    def of(cls, root: Path, meta: MethodMetadata) -> MethodCache:
        return cls(root, meta.effective_suite, meta.method)

    @property
    def rel(self) -> str:
        """The path below the cache root; also the object key below the bucket prefix."""
        return f"artifacts/{self.suite}/methods/{self.method}"

    @property
    def path(self) -> Path:
        return self.root / self.rel

    @property
    def metadata_yaml(self) -> Path:
        return self.path / "metadata.yaml"

    @property
    def processed(self) -> Path:
        return self.path / "processed"

    @property
    def configs_hyperparameters(self) -> Path:
        return self.processed / "configs_hyperparameters.json"

    @property
    def results(self) -> Path:
        return self.path / "results"

    @property
    def raw(self) -> Path:
        return self.path / "raw"

    @property
    def source_record(self) -> Path:
        return self.path / SOURCE_RECORD


def metadata_document(meta: MethodMetadata, validation_protocol: str | None) -> dict[str, Any]:
    """metadata.yaml's content, the one place it is shaped: every field as TabArena resolves it
    (:meth:`MethodMetadata.resolved`, the derived display name included), the tags as a sorted list,
    and the recorded protocol when there is one."""
    doc = meta.resolved()
    doc["tags"] = sorted(set(meta.tags))
    # TabArena 0.1.0's from_yaml rejects keys it does not know: the protocol key (read by TabArena
    # after PR #524) is written only when the results recorded one, and cache_kwargs is a mapping
    doc.pop("validation_protocol", None)
    if validation_protocol is not None:
        doc["validation_protocol"] = validation_protocol
    doc["cache_kwargs"] = dict(doc["cache_kwargs"])
    return doc


def render_metadata_yaml(meta: MethodMetadata, validation_protocol: str | None) -> str:
    """metadata.yaml's text: a value info.py used twice is written out twice, never as a YAML anchor and
    alias (the strict reader refuses aliases, so such a file could not be uploaded or read back)."""
    import yaml

    class NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data):
            return True

    return yaml.dump(metadata_document(meta, validation_protocol), Dumper=NoAliases, sort_keys=True)


#: a metadata.yaml is well under 2 KB; anything near this is not one process wrote
MAX_YAML_BYTES = 64 * 1024


def read_metadata_yaml(path: Path) -> MethodMetadata:
    """A cache's metadata.yaml as a :class:`MethodMetadata` (unknown keys are ignored).

    The file comes from a cache directory anyone may have edited, so it is read within
    bounds (:func:`checks.io.load_yaml`): size, UTF-8, no aliases, no duplicate keys,
    limited nesting.
    """
    fix = "re-run checks run process --force"
    try:
        doc = io.load_yaml(path, max_bytes=MAX_YAML_BYTES)
    except io.ReadError as exc:
        if exc.missing:
            raise InputError(f"{path}: no metadata.yaml here; process the method first (checks run process)") from None
        raise InputError(f"{exc}; {fix}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("method"), str):
        raise InputError(f"{path}: 'method' must be a string in a mapping (got {type(doc).__name__}); {fix}")
    values = {k: doc[k] for k in FIELDS if k in doc}
    values["tags"] = tuple(values.get("tags") or ())
    return MethodMetadata(**values, declared=frozenset(values), source=str(path))
