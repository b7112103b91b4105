"""Where a processed method lives in the TabArena cache, and how its metadata.yaml is written and read.

Process writes this layout, upload and unpublish read it; keeping the paths in one place
keeps the three agreeing with TabArena's ``<cache>/artifacts/<suite>/methods/<method>/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from checks import InputError
from tabarena_checks.metadata import FIELDS, MethodMetadata

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


#: longer names make the raw copy's directory names (method + config suffix) exceed file-system limits
MAX_NAME = 128


def name_problem(value: object, field: str) -> str | None:
    """Why ``value`` cannot name a directory of the cache (and a segment of the object keys), or None."""
    if not isinstance(value, str) or not value:
        return f"'{field}' must be a non-empty string (got {value!r})"
    if value.startswith(".") or any(c in value for c in "/\\") or any(ord(c) < 32 for c in value):
        return (f"'{field}' must be a plain directory name: no '/', '\\', control characters or leading '.' "
                f"(got {value!r})")
    if value != value.strip():
        return f"'{field}' must not start or end with whitespace (got {value!r})"
    if len(value) > MAX_NAME:
        return f"'{field}' must be at most {MAX_NAME} characters (got {len(value)})"
    return None


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
    """metadata.yaml's content: every field with defaults resolved, the recorded protocol set."""
    doc = meta.as_yaml_dict()
    doc["display_name"] = meta.display_name or meta.derived_display_name()  # TabArena stores the derived name
    doc["validation_protocol"] = validation_protocol
    if doc.get("cache_kwargs") is not None:
        doc["cache_kwargs"] = dict(doc["cache_kwargs"])
    return doc


def render_metadata_yaml(meta: MethodMetadata, validation_protocol: str | None) -> str:
    import yaml

    return yaml.safe_dump(metadata_document(meta, validation_protocol), sort_keys=True)


#: a metadata.yaml is well under 2 KB; anything near this is not one process wrote
MAX_YAML_BYTES = 64 * 1024
MAX_YAML_DEPTH = 16


def _yaml_problem(text: str) -> str | None:
    """Why ``text`` is not a plain YAML document (aliases, duplicate keys, deep nesting), or None.

    The node graph is walked before anything is constructed: composing never expands an
    alias, so an alias bomb costs nothing here, and a node met twice is an alias.
    """
    import yaml

    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        return "nested too deeply"
    except yaml.YAMLError as exc:
        return " ".join(str(exc).split())
    seen: set[int] = set()
    stack = [(root, 1)] if root is not None else []
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            return f"aliases are not allowed (line {node.start_mark.line + 1})"
        seen.add(id(node))
        if depth > MAX_YAML_DEPTH:
            return f"nested deeper than {MAX_YAML_DEPTH} levels (line {node.start_mark.line + 1})"
        if isinstance(node, yaml.MappingNode):
            keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
            dup = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
            if dup is not None:
                return f"duplicate key {dup!r}"
            stack += [(n, depth + 1) for pair in node.value for n in pair]
        elif isinstance(node, yaml.SequenceNode):
            stack += [(n, depth + 1) for n in node.value]
    return None


def read_metadata_yaml(path: Path) -> MethodMetadata:
    """A cache's metadata.yaml as a :class:`MethodMetadata` (unknown keys are ignored).

    The file comes from a cache directory anyone may have edited, so it is read within
    bounds: size, UTF-8, no aliases, no duplicate keys, limited nesting.
    """
    import yaml

    fix = "re-run checks run process --force"
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_YAML_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: no metadata.yaml here; process the method first (checks run process)") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read metadata.yaml ({exc.strerror or exc}); {fix}") from None
    if len(data) > MAX_YAML_BYTES:
        raise InputError(f"{path}: metadata.yaml is larger than the {MAX_YAML_BYTES}-byte limit; {fix}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: metadata.yaml is not UTF-8 text (byte {exc.start}); {fix}") from None
    problem = _yaml_problem(text)
    if problem:
        raise InputError(f"{path}: metadata.yaml: {problem}; {fix}")
    doc = yaml.safe_load(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("method"), str):
        raise InputError(f"{path}: 'method' must be a string in a mapping (got {type(doc).__name__}); {fix}")
    values = {k: doc[k] for k in FIELDS if k in doc}
    values["tags"] = tuple(values.get("tags") or ())
    return MethodMetadata(**values, declared=frozenset(values), source=str(path))
