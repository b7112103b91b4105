"""``checks run upload``'s and ``unpublish``'s facts: the metadata, the local cache, the store's place and keys.

Apart from the actions because the TA4xx rules judge what upload will publish (the parts present, the
cache as process wrote it, the raw files raw.zip would hold) without importing the action that
publishes it; the action stages and sends the objects these facts describe.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import ChecksError, UsageError
from tabarena_checks.cache import integrity
from tabarena_checks.cache.layout import MethodCache, cache_root, read_metadata_yaml
from tabarena_checks.cache.names import bucket_problem, key_prefix_problem
from tabarena_checks.facts.constants import missing_credentials
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.raw import reader


@attrs.define(slots=False)
class UploadFacts:
    """What the TA4xx rules and the upload read: the metadata, the local cache and the environment
    (:meth:`gather` builds them from ``checks run upload``'s options).

    ``real`` is true when the upload executes (``--no-dry-run``), false when it only plans.
    """

    options: Any = attrs.field(repr=False)
    root: Path
    metadata: MethodMetadata
    cache: MethodCache
    #: raw/ goes too (raw.zip), unless ``--no-upload-raw``
    upload_raw: bool
    real: bool = False

    @classmethod
    def gather(cls, options: Any, *, real: bool = False) -> UploadFacts:
        ref, from_cache = options.method_metadata, options.from_cache
        if bool(ref) == bool(from_cache):
            raise UsageError("give exactly one of --method-metadata REF or --from-cache METHOD SUITE")
        root = cache_root(options.cache_root)
        if ref:
            metadata = metadata_load.load(ref)
            cache = MethodCache.of(root, metadata)
        else:
            method, suite = from_cache
            cache = MethodCache(root, suite, method)
            metadata = read_metadata_yaml(cache.metadata_yaml)
        return cls(options, root, metadata, cache, upload_raw=not options.no_upload_raw, real=real)

    @cached_property
    def recorded(self) -> MethodMetadata | None:
        """The cache's metadata.yaml as written by process (None when missing or unreadable: TA403 says which)."""
        try:
            return read_metadata_yaml(self.cache.metadata_yaml)
        except (ChecksError, TypeError, ValueError):  # unreadable, or fields MethodMetadata refuses
            return None

    @property
    def bucket(self) -> str | None:
        kw = self.metadata.cache_kwargs if isinstance(self.metadata.cache_kwargs, dict) else {}
        return kw.get("bucket")

    @property
    def key_root(self) -> str:
        kw = self.metadata.cache_kwargs if isinstance(self.metadata.cache_kwargs, dict) else {}
        return f"{str(kw.get('prefix', '')).strip('/')}/{self.cache.rel}"

    @property
    def destination(self) -> str:
        return store_place(self.bucket, self.key_root)

    @cached_property
    def part_problems(self) -> list[str]:
        """Every missing or empty part, in TabArena's wording (``<part>: missing file '<path>'``)."""
        c, out = self.cache, []

        def need_file(part: str, path: Path) -> None:
            if not path.is_file():
                out.append(f"{part}: missing file '{path}'")
            elif path.stat().st_size == 0:
                out.append(f"{part}: empty file '{path}'")

        need_file("metadata", c.metadata_yaml)
        tables = sorted(c.results.glob("*.parquet")) if c.results.is_dir() else []
        if not tables:
            out.append(f"results: missing file '{c.results / 'model_results.parquet'}'")
        for table in tables:
            need_file("results", table)
        if c.processed.is_dir():
            need_file("processed", c.configs_hyperparameters)
        if self.upload_raw:
            if not c.raw.is_dir():
                out.append(f"raw: missing directory '{c.raw}' (pass --no-upload-raw to publish without raw results)")
            elif next(c.raw.rglob("results.pkl"), None) is None:
                out.append(f"raw: no results.pkl under '{c.raw}'")
        return out

    @cached_property
    def raw_unread(self) -> tuple[tuple[str, str], ...]:
        """(path in the cache, what sits where) of each class the reader does not load in a field nothing reads,
        in the results.pkl files raw.zip would publish (TA308 judges them, as for process).

        Read as the index reads a run, so each is named with its field path; a file that cannot be read at all
        is staging's to refuse, and raw/ left out (``--no-upload-raw``) publishes none.
        """
        if not self.upload_raw or not self.cache.raw.is_dir():
            return ()
        found = []
        for path in sorted(self.cache.raw.rglob("results.pkl")):
            notes: list[str] = []
            try:
                reader.load_result(path, notes=notes)
            except reader.RawFileError:
                continue
            rel = path.relative_to(self.cache.path).as_posix()
            found += [(rel, note) for note in notes]
        return tuple(found)

    @cached_property
    def manifest(self) -> dict[str, str] | None:
        """The sha256 of every file process wrote into the cache (its source record), or None."""
        try:
            record = json.loads(self.cache.source_record.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        files = record.get(integrity.MANIFEST) if isinstance(record, dict) else None
        if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
            return None
        return files


def store_place(bucket: str | None, key_root: str) -> str:
    """A method's place in the store as every message of upload and unpublish names it."""
    return f"r2://{bucket}/{key_root}/"


def _refuse_store_names(what: str, bucket: object, prefix: object) -> None:
    """A usage error when ``bucket`` or ``prefix`` cannot name where objects go (TA406's checks)."""
    for name, problem in (("prefix", key_prefix_problem(prefix)), ("bucket", bucket_problem(bucket))):
        if problem:
            raise UsageError(f"{what}: the {name} {problem}")


@attrs.define(slots=False)
class UnpublishFacts:
    """Where the method lives remotely, and what is there (listed once, only with credentials);
    :meth:`gather` builds them from ``checks run unpublish``'s options.

    ``list_keys(bucket, prefix)`` lists the store: the action hands over its client, so these facts never
    import the store's module (an action's).
    """

    options: Any = attrs.field(repr=False)
    cache: MethodCache
    bucket: str
    key_root: str
    list_keys: Callable[[str, str], list[str]] = attrs.field(repr=False)
    real: bool = True

    @classmethod
    def gather(cls, options: Any, list_keys: Callable[[str, str], list[str]]) -> UnpublishFacts:
        method, suite = options.method, options.suite
        cache = MethodCache(cache_root(options.cache_root), suite, method)
        bucket, prefix = options.bucket, options.prefix
        if not (bucket and prefix) and cache.metadata_yaml.is_file():
            kw = read_metadata_yaml(cache.metadata_yaml).cache_kwargs
            kw = kw if isinstance(kw, dict) else {}
            bucket, prefix = bucket or kw.get("bucket"), prefix or kw.get("prefix")
        if not (bucket and prefix):
            raise UsageError(
                f"unpublish {method} (suite={suite}): no bucket/prefix known; pass --bucket and --prefix "
                f"(no local metadata.yaml at {cache.metadata_yaml} to read cache_kwargs from)"
            )
        _refuse_store_names(f"unpublish {method} (suite={suite})", bucket, prefix)
        return cls(options, cache, bucket, f"{str(prefix).strip('/')}/{cache.rel}", list_keys)

    @property
    def destination(self) -> str:
        return store_place(self.bucket, self.key_root)

    @cached_property
    def remote_keys(self) -> list[str] | str:
        """The keys under the method's prefix, or why they could not be listed."""
        if missing_credentials():
            return "credentials missing"
        try:
            return sorted(self.list_keys(self.bucket, self.key_root + "/"))
        except Exception as exc:
            return f"{type(exc).__name__}: {exc}"
