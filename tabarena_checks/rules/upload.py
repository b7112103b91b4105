"""TA4xx: what must hold before a method's artifacts go to (or come off) the public R2 store.

The rules read the facts ``checks run upload`` / ``unpublish`` gathered (see
:mod:`tabarena_checks.facts.upload`); they never touch the network or the disk themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

from checks import ChecksError, Finding, fact, needs, rule
from tabarena_checks.cache import integrity
from tabarena_checks.cache.names import bucket_problem, key_prefix_problem, name_problem, segment_problem
from tabarena_checks.facts.constants import (
    CREDENTIAL_ENV,
    PROCESS_UPLOAD,
    STORE_WRITES,
    UNPUBLISH,
    UPLOAD,
    missing_credentials,
)
from tabarena_checks.facts.providers import at, cache_root_option, declared_metadata, verified_allowed


@rule(
    "TA401",
    "upload-store-is-r2",
    actions=UPLOAD,
    why="Only the R2 store is published from here; a method without a bucket and prefix has nowhere "
    "to go, and an s3 or local cache_type would send the artifacts somewhere nobody reads.",
    example_fail="MethodMetadata.config('Nori', ..., cache_type='local')",
    example_pass="MethodMetadata.config('Nori', ..., cache_kwargs={'bucket': 'tabarena', 'prefix': 'cache'})",
)
@needs(declared_metadata)  # an unreadable reference is reported by TA116
def store_is_r2(ctx, meta):
    """The metadata's cache_type is ``r2`` and its cache_kwargs hold a ``bucket`` and a ``prefix``."""
    kind = meta.effective_cache_type

    kw = meta.cache_kwargs if isinstance(meta.cache_kwargs, dict) else {}
    field = "cache_type" if meta.cache_type else "cache_kwargs"
    if kind in (None, "local"):
        yield at(
            meta,
            f"'{meta.method}' has no remote store to upload to (cache_type={kind!r}); set "
            "cache_type='r2' and cache_kwargs={'bucket': ..., 'prefix': ...}",
            field,
        )
    elif kind != "r2":
        yield at(meta, f"cache_type {kind!r} is not supported for upload; only 'r2' is", field)
    for key in ("bucket", "prefix"):
        if kind == "r2" and not kw.get(key):
            yield at(meta, f"cache_kwargs is missing {key!r} (got {sorted(kw)})", "cache_kwargs")


@rule(
    "TA406",
    "cache-names-safe",
    actions=PROCESS_UPLOAD,
    required=True,
    waivable=False,
    why="method and suite become directory names of the cache and segments of the object keys (after "
    "cache_kwargs' prefix, which must be '/'-separated plain names, and its bucket, an S3 bucket name), and the raw "
    "copy's directories are the run's config directories renamed to the method; a '..', a '/', an absolute "
    "path, a NUL byte or a name over the file system's limit would write outside the cache root or the bucket "
    "prefix, or fail half-way. One path comes from text inside the results.pkl files: the predictions go to "
    "processed/model_predictions/<dataset>/, named by task_metadata.name as in TabArena, so each such name "
    "must be a plain directory name too.",
    example_fail='MethodMetadata.config(method="../../x", suite="nori-2026-11", ...)',
    example_pass='MethodMetadata.config(method="Nori", suite="nori-2026-11", ...)',
)
@needs(declared_metadata)  # an unreadable reference is reported by TA116
def cache_names_safe(ctx, meta):
    """``method`` and ``suite`` are plain directory names (no separators, control characters or leading dot,
    at most 128 bytes), and so is every raw-copy directory they name (at most 255 bytes); cache_kwargs'
    prefix is '/'-separated plain names and its bucket an S3 bucket name."""
    problems = [(f, name_problem(v, f)) for f, v in (("method", meta.method), ("suite", meta.effective_suite))]
    for _, problem in problems:
        if problem:
            yield Finding(problem, path=meta.source or None)
    yield from _store_names(meta)
    if ctx.action == "process" and not any(p for _, p in problems):
        yield from _raw_copy_names(ctx, meta.method)
        yield from _dataset_names(ctx)


def _store_names(meta):
    """A finding for a ``cache_kwargs`` prefix or bucket that cannot start an object key in the store."""
    kw = meta.cache_kwargs if isinstance(meta.cache_kwargs, dict) else {}
    for key, check in (("prefix", key_prefix_problem), ("bucket", bucket_problem)):
        problem = key in kw and check(kw[key])
        if problem:
            yield at(
                meta,
                f"cache_kwargs[{key!r}] {problem}: every object key starts with it; use a plain "
                "value such as 'cache' (prefix) or 'tabarena' (bucket)",
                "cache_kwargs",
            )


def _raw_copy_names(ctx, method: str):
    """A finding for each config directory whose raw copy, renamed to ``method``, is no plain directory name."""
    try:
        index, inference = ctx.facts.index, ctx.facts.inference
    except ChecksError:
        return  # TA302 reports a run that cannot be indexed
    for config_dir in sorted({c for c in index.table["config_dir"].to_pylist() if c is not None}):
        renamed = inference.renamed_framework(config_dir, method)
        problem = segment_problem(renamed)
        if problem:
            yield Finding(
                f"the raw copy of '{config_dir}' would be named {renamed!r}, which {problem}; "
                "shorten the method name or the config directory",
                path=config_dir,
            )


def _dataset_names(ctx):
    """A finding for each dataset name (from task_metadata.name) that cannot name a model_predictions directory."""
    try:
        table = ctx.facts.index.table
    except ChecksError:
        return  # TA302 reports a run that cannot be indexed
    first: dict[str, str] = {}
    for name, path in sorted(zip(table["dataset"].to_pylist(), table["path"].to_pylist()), key=lambda t: t[1]):
        if name is not None:
            first.setdefault(name, path)
    for name, path in first.items():
        problem = segment_problem(name)
        if problem:
            yield Finding(
                f"its predictions would be written to processed/model_predictions/{name!r}/, whose name "
                f"{problem}; the name is task_metadata.name in the result: correct it there",
                path=path,
            )


@rule(
    "TA402",
    "upload-protocol-matches-declared",
    actions=UPLOAD,
    why="The leaderboard treats a method as official or custom from the validation protocol its "
    "metadata declares; artifacts processed under another protocol would be published under a false label.",
    example_fail="metadata.yaml (processed): validation_protocol: holdout:8x1\ninfo.py: validation_protocol='8x1'",
    example_pass="metadata.yaml (processed): validation_protocol: 8x1\ninfo.py: validation_protocol='8x1'",
)
@needs(fact("recorded"), declared_metadata)  # a missing metadata.yaml is TA403's finding, a bad reference TA116's
def protocol_matches(ctx, recorded, meta):
    """The validation_protocol recorded in the processed cache equals the one the metadata declares."""
    if recorded.validation_protocol != meta.validation_protocol:
        yield Finding(
            f"the processed artifact records validation_protocol={recorded.validation_protocol!r} but the "
            f"metadata declares {meta.validation_protocol!r}; declare the recorded key in info.py "
            "(or re-process the run that matches the declaration)",
            path=str(ctx.facts.cache.metadata_yaml),
        )


@rule(
    "TA403",
    "upload-parts-present",
    actions=UPLOAD,
    why="A half-present cache uploads a method readers cannot load; every part is checked before any "
    "byte leaves the machine, and a missing file is named as such (not as a credentials problem).",
    example_fail="results/ missing: results: missing file '.../results/model_results.parquet'",
    example_pass="metadata.yaml, results/model_results.parquet, processed/configs_hyperparameters.json, raw/**/results.pkl",
)
def parts_present(ctx):
    """metadata.yaml and results tables exist and are non-empty; processed/ has its hyperparameters; raw/ has results.pkl."""
    for problem in ctx.facts.part_problems:
        yield Finding(problem, path=str(ctx.facts.cache.path))


@rule(
    "TA407",
    "cache-is-what-process-wrote",
    actions=UPLOAD,
    required=True,
    waivable=False,
    why="Upload publishes raw/ as raw.zip, and a results.pkl is code when unpickled: a file swapped or "
    "dropped into the cache after process would be published without ever being judged. The cache must be "
    "exactly the files a passed `checks run process` wrote and recorded, and the record must be one this "
    "user's arena-checks signed (its MAC made with the key in the user's own cache directory): a line "
    "appended to the log by hand, a pull request or a shipped run is not evidence.",
    example_fail="raw/Nori_c1_BAG_L1/363612/0_0/results.pkl: changed since process wrote it (sha256 differs)",
    example_pass="every file matches .checks-source.json, whose digest a passed process decision recorded",
)
def cache_is_what_process_wrote(ctx):
    """Every file of the cache has the sha256 process recorded, none was added, and a passed process run
    recorded that manifest in a decision record signed with this user's key."""
    facts = ctx.facts
    cache = facts.cache
    if not cache.path.is_dir():
        return  # TA403 reports the missing parts
    manifest = facts.manifest
    if manifest is None:
        yield Finding(
            f"{cache.source_record.name} lists no digests of the cache's files (written by an older "
            "version, or not by process): process the method again with --force",
            path=str(cache.path),
        )
        return
    for problem in integrity.differences(cache.path, manifest):
        yield Finding(problem, path=str(cache.path))
    yield from _recorded_by_process(ctx, integrity.manifest_digest(manifest))


def _recorded_by_process(ctx, digest: str):
    """A finding unless a signed, passed process record in the decision log names the manifest ``digest``."""
    from checks import records  # noqa: PLC0415 - start-up: the decision log loads signing, hmac and the run context

    log = records.log_path(ctx.config, os.getcwd())
    try:
        read = records.load(log)
        naming = [r for r in read.records if digest in integrity.passed_process_decisions([r])]
        if records.signed(naming):
            return
    except (OSError, ValueError, ChecksError) as exc:
        yield Finding(
            f"the decision log {log} cannot be read ({exc}); it must show the process run that wrote this cache"
        )
        return
    where = str(ctx.facts.cache.path)
    if naming:
        yield Finding(
            f"a record in {log} names this cache (manifest {digest[:23]}...) but was not signed by "
            f"arena-checks under this account (its MAC does not verify with {records.key_path()}): "
            "process the method from here, then upload",
            path=where,
        )
        return
    skipped = f"; {len(read.skipped)} line(s) of it were skipped ({read.skipped[0]})" if read.skipped else ""
    yield Finding(
        f"no passed `checks run process` in {log} recorded this cache (manifest {digest[:23]}...){skipped}: "
        "process the method from here, with the same rules.toml, then upload",
        path=where,
    )


@rule(
    "TA408",
    "decision-log-apart-from-data",
    actions=PROCESS_UPLOAD,
    required=True,
    waivable=False,
    why="The decision log is the audit trail upload's evidence is read from; kept inside the run's data or the "
    "cache it would travel with them (and be replaced with them), and a rules.toml shipped in a repository "
    "could point it there.",
    example_fail='decision_log = "cache/.checks/decisions.jsonl"   # with --cache-root cache',
    example_pass='decision_log = ".checks/decisions.jsonl"',
)
def decision_log_apart(ctx):
    """The decision log is neither inside the run's data directory nor inside the cache root."""
    from checks import records  # noqa: PLC0415 - start-up: the decision log loads signing, hmac and the run context
    from tabarena_checks.cache.layout import cache_root  # noqa: PLC0415 - start-up: the cache layout loads the metadata model's attrs classes

    log = Path(os.path.realpath(records.log_path(ctx.config, os.getcwd())))
    roots = {"the cache root (--cache-root)": cache_root(cache_root_option(ctx))}
    data_dir = getattr(ctx.facts, "data_dir", None)
    if data_dir is not None:
        roots["the run's data directory"] = Path(data_dir)
    for what, root in roots.items():
        if log.is_relative_to(os.path.realpath(root)):
            yield Finding(
                f"the decision log {log} lies inside {what} {root}: set decision_log in rules.toml (or "
                "--decision-log) to a path outside the data and the cache, such as .checks/decisions.jsonl"
            )


@rule(
    "TA404",
    "store-credentials-in-env",
    actions=STORE_WRITES,
    why="Credentials travel only through the environment (never options, never printed); a real "
    "upload or deletion without them cannot work, and a dry run does not need them.",
    example_fail="checks run upload ... --no-dry-run   # with R2_SECRET_ACCESS_KEY unset",
    example_pass="R2_ACCOUNT_ID=... R2_ACCESS_KEY_ID=... R2_SECRET_ACCESS_KEY=... checks run upload ... --no-dry-run",
)
def credentials_in_env(ctx):
    """A real upload or an unpublish needs R2_ACCOUNT_ID, R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY set."""

    if not ctx.facts.real or ctx.dry_run:
        return
    missing = missing_credentials()
    if missing:
        yield (
            f"missing environment variable(s) {', '.join(missing)} (all of {', '.join(CREDENTIAL_ENV)} are "
            "needed): create an R2 API token with 'Object Read & Write' on the bucket and export them"
        )


@rule(
    "TA405",
    "upload-verified-needs-flag",
    actions=UPLOAD,
    why="verified=True puts a method on the leaderboard as checked by the maintainers; that claim is "
    "made on purpose, with --verified, never by a default.",
    example_fail="MethodMetadata.config(..., verified=True) without --verified",
    example_pass="MethodMetadata.config(..., verified=False), or --verified given",
)
@needs(declared_metadata)  # an unreadable reference is reported by TA116
def verified_needs_flag(ctx, meta):
    """Metadata with ``verified=True`` is published only when ``--verified`` is given."""
    if meta.verified is not False and not verified_allowed(ctx):
        yield Finding(
            f"'{meta.method}' declares verified={meta.verified!r}: pass --verified to publish it as "
            "verified, or set verified=False in its metadata",
            path=meta.source or None,
        )


@rule(
    "TA410",
    "unpublish-method-exists",
    actions=UNPUBLISH,
    why="Deleting a prefix that holds nothing usually means a typo in the method or suite; saying so "
    "beats reporting success for a no-op.",
    example_fail="checks run unpublish --method Nori --suite no-such-suite --yes",
    example_pass="checks run unpublish --method Nori --suite tabarena-2026-09-16 --yes",
)
def method_exists_remotely(ctx):
    """The method has objects under ``<prefix>/artifacts/<suite>/methods/<method>/`` in the bucket."""
    facts = ctx.facts
    keys = facts.remote_keys
    where = facts.destination
    if isinstance(keys, str):
        yield f"cannot list {where}: {keys}"
    elif not keys:
        yield f"nothing is published under {where}: check --method and --suite"


RULES = [
    store_is_r2,
    protocol_matches,
    cache_names_safe,
    parts_present,
    cache_is_what_process_wrote,
    decision_log_apart,
    credentials_in_env,
    verified_needs_flag,
    method_exists_remotely,
]
