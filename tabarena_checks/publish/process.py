"""``checks run process``: turn a run's raw results into a TabArena method cache, once every rule passed.

The cache itself is written by an engine (:mod:`tabarena_checks.engine.api`: the native one, or
``--engine tabarena``, TabArena's own processing), handed the judged input. This action owns
the rest: the cache is built in a temporary sibling directory and renamed into place, and
``.checks-source.json`` records which inputs it was built from, so an existing cache is either
kept as it is or replaced whole, never mixed with new files.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import click

from checks import Action, ActionFailed, UsageError, io
from checks.htmlreport import check_target
from checks.options import argument, option
from tabarena_checks.cache import integrity
from tabarena_checks.cache.layout import MethodCache, cache_root
from tabarena_checks.engine.api import ENGINES, Job, build
from tabarena_checks.facts.process import ProcessFacts
from tabarena_checks.facts.sources import info_sources
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.compare import metadata_mismatch_waivers


@attrs.frozen
class ProcessOptions:
    """``checks run process``'s options, declared once: ``checks run`` makes its parameters from these fields."""

    # a directory that is not there is the command line's mistake (exit 2), not a blocked run of "31 passed"
    run_data_dir: str = argument(
        help="The run's raw results.", metavar="RUN_DATA_DIR", type=click.Path(exists=True, file_okay=False)
    )
    #: required on the command line; ``checks inspect`` previews process without one
    method_metadata: str | None = option(
        help="path/to/info.py:VARIABLE or package.module:VARIABLE.",
        default=None,
        required=True,
        metavar="REF",
        callback=metadata_load.checked_reference,
    )
    expect_validation_protocol: str | None = option(
        help="Refuse unless the results were fit under this protocol (e.g. tabarena or 8x1).",
        default=None,
        metavar="KEY",
    )
    cache_root: str | None = option(
        help="Cache root (default: $TABARENA_CACHE, else ~/.cache/tabarena).",
        default=None,
        type=click.Path(file_okay=False),
    )
    method: str | None = option(
        help="In a directory holding several methods, process this one (its config-dir prefix, "
        "as `checks inspect` lists them); by default the one the declaration matches.",
        default=None,
        metavar="PREFIX",
    )
    no_cache_raw: bool = option(help="Do not copy the raw results into raw/.", flag=True)
    force: bool = option(help="Replace an existing cache of this method and suite whole.", flag=True)
    engine: str = option(
        help="native: DuckDB over the index; tabarena: TabArena's own processing (must be installed).",
        default="native",
        type=click.Choice(list(ENGINES)),
    )
    ignore_metadata_mismatch: bool = option(
        help="Waive the metadata-vs-raw mismatch rules for this run (recorded as waivers).", flag=True
    )
    html: str | None = option(
        help="Also write a self-contained HTML report of the run to FILE (passed or blocked).",
        default=None,
        metavar="FILE",
    )
    task_metadata: str | None = option(
        help="TabArena's task-metadata frame (parquet or CSV, TaskMetadataCollection.to_legacy_df()) "
        "of the run's tasks outside the TabArena-v0.1 suite; written as "
        "processed/task_metadata.parquet (TA309).",
        default=None,
        metavar="FILE",
    )


def _facts(ctx):

    o: ProcessOptions = ctx.options
    if o.html:
        check_target(o.html)
    if o.engine == "tabarena" and o.task_metadata is not None:
        raise UsageError(
            "--engine tabarena cannot take --task-metadata: TabArena's process_raw has no way to be "
            "handed task metadata; use --engine native (the default), which writes it as TabArena "
            "does when given those tasks"
        )
    if o.engine == "tabarena" and importlib.util.find_spec("tabarena") is None:
        raise UsageError(
            "--engine tabarena needs TabArena importable in this environment (pip install tabarena); "
            "use --engine native (the default) otherwise"
        )
    if o.ignore_metadata_mismatch:
        ctx.extra_waivers.extend(metadata_mismatch_waivers(ctx))
    return ProcessFacts(
        data_dir=o.run_data_dir, metadata_ref=o.method_metadata, method=o.method, task_metadata_file=o.task_metadata
    )


def _cache(ctx) -> MethodCache:
    return MethodCache.of(cache_root(ctx.options.cache_root), ctx.facts.metadata)


def _digests(ctx) -> dict[str, str]:
    return ctx.facts.input_digests


def source_record(ctx) -> dict[str, Any]:
    """What the cache is built from; two builds with equal records hold the same content."""
    digests = _digests(ctx)
    return {
        "raw_data": digests.get("raw_data"),
        "method_metadata": digests.get("method_metadata"),
        "cache_raw": not ctx.options.no_cache_raw,
        "engine": ctx.options.engine,
    }


def _existing(cache: MethodCache) -> dict | None:
    try:
        return json.loads(cache.source_record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _same_inputs(old: dict | None, new: dict) -> bool:
    return old is not None and all(old.get(k) == v for k, v in new.items())


def _plan(ctx) -> Iterator[str]:
    cache = _cache(ctx)
    new = source_record(ctx)
    yield f"engine {new['engine']}: would write {cache.path}"
    if cache.path.exists():
        if _same_inputs(_existing(cache), new) and not ctx.options.force:
            yield (
                "a cache built from the same inputs exists there: it would be built again, and kept unchanged "
                "only if it holds exactly the bytes of that build (else replaced whole by it)"
            )
        elif ctx.options.force:
            yield "the existing cache there would be replaced whole (--force)"
        else:
            yield "a cache from other (or unknown) inputs exists there: process would refuse without --force"
    yield (
        "metadata.yaml, processed/ (configs, baselines, task metadata, configs_hyperparameters.json, "
        "model_predictions/, context), results/model_results.parquet"
        + (
            ", results/hpo_results.parquet and hpo_trajectories.parquet (TabArena's HPO simulation)"
            if ctx.facts.metadata is not None and ctx.facts.metadata.method_type == "config"
            else ""
        )
        + ("" if ctx.options.no_cache_raw else ", raw/")
    )
    yield from _others(ctx)


def _build(ctx, cache: MethodCache, new: dict[str, Any]) -> tuple[list[str], bool]:
    """Build the cache in a temporary sibling and swap it into place; returns (what was written, replaced)."""
    tmp = io.temp_sibling(cache.path)
    try:
        written, manifest = _fresh(ctx, new, tmp)
        _sign(ctx, manifest)
        return written, io.swap_in_dir(tmp, cache.path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _fresh(ctx, new: dict[str, Any], tmp: Path) -> tuple[list[str], dict[str, str]]:
    """Build the cache into the new directory ``tmp``; returns (what was written, its manifest).

    The source record lists the sha256 of every file written, computed from the bytes this run
    wrote (the raw copies' from the bytes checked against the judged digest as they were copied):
    the manifest upload checks the cache against.
    """
    tmp.mkdir()
    built = build(ctx.options.engine, _job(ctx), tmp)
    manifest = integrity.manifest_of(tmp, built.copied)
    _raw_judged(ctx, manifest)
    record = {
        **new,
        "data_dir": str(Path(ctx.facts.data_dir).resolve()),
        "built": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        integrity.MANIFEST: manifest,
    }
    (tmp / integrity.SOURCE_RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return built.written, manifest


def _sign(ctx, manifest: dict[str, str]) -> None:
    """Name ``manifest`` in this run's decision record (signed with the user's key when it is appended)."""
    _digests(ctx)[integrity.DECISION_KEY] = integrity.manifest_digest(manifest)


def _job(ctx) -> Job:
    """The engine's inputs: the judged facts and the declaration."""
    facts = ctx.facts
    return Job(
        index=facts.index,
        inference=facts.inference,
        metadata=facts.metadata,
        data_dir=Path(facts.data_dir),
        cache_raw=not ctx.options.no_cache_raw,
        workers=facts.workers,
        task_metadata=facts.task_metadata,
    )


def _raw_judged(ctx, manifest: dict[str, str]) -> None:
    """Every file under raw/ must hold bytes the rules judged in this run (whichever engine copied it)."""
    judged = set(ctx.facts.index.table["sha256"].to_pylist())
    foreign = sorted(rel for rel, digest in manifest.items() if rel.startswith("raw/") and digest not in judged)
    if foreign:
        raise ActionFailed(
            f"{len(foreign)} file(s) under raw/ hold content the rules did not judge "
            f"({', '.join(foreign[:5])}); nothing was published: run the command again"
        )


#: how a file of an existing cache differs from this run's build of the same inputs
AGAINST_BUILD = (
    "not in this run's build of the same inputs",
    "differs from this run's build (sha256)",
    "missing (this run's build has it)",
)


def _kept_or_rebuilt(ctx, cache: MethodCache, new: dict[str, Any]) -> str:
    """Build the cache again and keep the existing one only if it holds exactly those bytes; else swap in the build.

    The existing cache, its ``.checks-source.json`` manifest included, is not evidence: whoever can
    write the cache root (or ships one inside a checkout) could have changed a table, added a file
    and rewritten the manifest to match. So it is compared, file by file, with a build made in this
    run from the verified raw inputs, and only the digests of that build are signed.
    """
    tmp = io.temp_sibling(cache.path)
    try:
        _, manifest = _fresh(ctx, new, tmp)
        differ = integrity.differences(cache.path, manifest, AGAINST_BUILD)
        if _recorded_manifest(cache) != manifest:
            differ.append(f"{integrity.SOURCE_RECORD}: its manifest is not the one of this run's build")
        _sign(ctx, manifest)
        if not differ:
            return f"{cache.path} holds exactly what the same inputs build again; kept unchanged (--force rebuilds it)"
        io.swap_in_dir(tmp, cache.path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    shown = "; ".join(differ[:5]) + (f"; and {len(differ) - 5} more" if len(differ) > 5 else "")
    return (
        f"{cache.path} was built from the same inputs, but it differs from this run's build of them "
        f"({shown}); replaced it whole with the build"
    )


def _recorded_manifest(cache: MethodCache) -> Any:
    """The manifest the existing cache's source record lists (None when it has no readable one)."""
    try:
        return json.loads(cache.source_record.read_text(encoding="utf-8")).get(integrity.MANIFEST)
    except (OSError, ValueError, AttributeError):
        return None


def _execute(ctx) -> str:
    cache = _cache(ctx)
    new = source_record(ctx)
    notes = io.sweep_siblings(cache.path)
    if cache.path.exists() and not ctx.options.force:
        return "\n".join([*notes, _keep_existing(ctx, cache, new)])
    written, replaced = _write_cache(ctx, cache, new)
    verb = "replaced" if replaced else "wrote"
    return "\n".join([*notes, f"{verb} {cache.path}:", *(f"  {w}" for w in written), *_others(ctx)])


def _keep_existing(ctx, cache, new: dict) -> str:
    """The line saying an existing cache is kept (or was rebuilt), or the refusal to touch it without ``--force``.

    Apart from the write because a cache is never mixed with files of another run: one built from
    other inputs is the user's to replace; one built from the same inputs is kept only when a build
    of this run holds exactly its bytes (:func:`_kept_or_rebuilt`).
    """
    if not _same_inputs(_existing(cache), new):
        raise ActionFailed(
            f"{cache.path} exists and was built from other (or unknown) inputs; it is kept as it is. "
            "Pass --force to replace it whole (a cache is never mixed with files from another run)"
        )
    try:
        return _kept_or_rebuilt(ctx, cache, new)
    except OSError as exc:  # a full disk, a file-size limit, a read-only cache root
        raise ActionFailed(
            f"cannot build the cache again to compare it: {exc.strerror or exc} ({exc.filename or cache.path.parent}); "
            "the existing cache is kept as it is. Free space or choose another --cache-root, then rerun"
        ) from None


def _write_cache(ctx, cache, new: dict) -> tuple[list[str], bool]:
    """Build the cache (its written lines, and whether it replaced one), a failed write said plainly.

    Apart so that a full disk, a file-size limit or a read-only cache root is one clear error
    naming the place and saying the previous cache is intact, never a traceback.
    """
    try:
        cache.path.parent.mkdir(parents=True, exist_ok=True)
        return _build(ctx, cache, new)
    except OSError as exc:  # a full disk, a file-size limit, a read-only cache root
        where = exc.filename or cache.path.parent
        kept = "the previous cache is kept" if cache.path.exists() else "no cache was written"
        raise ActionFailed(
            f"cannot write the cache: {exc.strerror or exc} ({where}); {kept}. "
            f"Free space or choose another --cache-root, then rerun"
        ) from None


def _others(ctx) -> list[str]:
    """The lines naming the methods of a shared directory that were left alone."""
    others = ctx.facts.other_methods()
    if not others:
        return []
    return [
        f"processed only {ctx.facts.selected_method} of {len(others) + 1} methods in the directory; "
        "not processed: " + ", ".join(f"{prefix} ({n} results)" for prefix, n in others)
    ]


def _target(ctx) -> str:
    try:
        meta = ctx.facts.metadata
    except Exception:  # a bad reference is reported by the rules (TA116); the target stays readable
        meta = None
    return f"{meta.method}@{meta.effective_suite}" if meta is not None else str(ctx.options.run_data_dir)


PROCESS = Action(
    name="process",
    help="Process a run's raw results (RUN_DATA_DIR) into the TabArena cache "
    "<cache root>/artifacts/<suite>/methods/<method>/ after every process rule passed.",
    gather=_facts,
    plan=_plan,
    execute=_execute,
    target=_target,
    inputs=_digests,
    sources=info_sources,
    arena="tabarena",
    requires=("pyarrow", "duckdb", "numpy", "isal"),
    options=ProcessOptions,
)

ACTIONS = [PROCESS]
