"""``checks run process``: turn a run's raw results into a TabArena method cache, once every rule passed.

The native engine judges from the DuckDB index the rules already built, then reads every file once
more to build TabArena's tables from the raw values (their types included, which the index
normalises); the raw copy only copies bytes into renamed directories.
``--engine tabarena`` hands the same, already judged, input to
TabArena's own processing. Either way the cache is built in a temporary sibling directory and
renamed into place, and ``.checks-source.json`` records which inputs it was built from, so an
existing cache is either kept as it is or replaced whole, never mixed with new files.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs
import click

from checks import Action, ActionFailed, UsageError, io, progress
from tabarena_checks.publish import integrity
from tabarena_checks.publish.cache_layout import MethodCache, cache_root, render_metadata_yaml
from tabarena_checks.facts import TabArenaFacts, info_sources
from tabarena_checks.metadata.model import FIELDS, MethodMetadata

ENGINES = ("native", "tabarena")
#: the raw copy is kernel work (directory and file creation, page cache): a thread per core, at most 8
COPY_THREADS = min(8, os.cpu_count() or 2)


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
        from tabarena_checks.raw.index import build_index

        if self.built_index is not None:
            return self.built_index
        return build_index(self.data_dir, write_cache=False, workers=self.workers, progress=self.progress,
                           verify=True)

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
            raise UsageError(f"--method {matches[0]!r}: its config directories also hold results read as "
                             f"{', '.join(sharing)} (a damaged result, or another method's); fix or move them")
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
    return [prefix for prefix, sub in methods.items()
            if prefix != chosen and dirs & set(sub.table["config_dir"].to_pylist())]


def _declares(meta: MethodMetadata, prefix: str, sub) -> bool:
    """Whether the results of one method of a directory are the ones ``meta`` declares."""
    from tabarena_checks.raw.inference import infer

    inference = infer(sub)
    if meta.method_type == "config":
        return inference.method_type == "config" and inference.ag_key is not None and inference.ag_key == meta.ag_key
    names = [n for n in (meta.method, meta.name) if isinstance(n, str) and n]
    return inference.method_type == "baseline" and any(prefix.startswith(n) for n in names)


@attrs.frozen
class ProcessOptions:
    """``checks run process``'s options (one field per parameter of :data:`PROCESS`)."""

    run_data_dir: str
    #: required on the command line; ``checks inspect`` previews process without one
    method_metadata: str | None = None
    expect_validation_protocol: str | None = None
    cache_root: str | None = None
    method: str | None = None
    no_cache_raw: bool = False
    force: bool = False
    engine: str = "native"
    ignore_metadata_mismatch: bool = False
    html: str | None = None


def _facts(ctx):
    from tabarena_checks.metadata.compare import metadata_mismatch_waivers

    o: ProcessOptions = ctx.options
    if o.html:
        from checks.htmlreport import check_target

        check_target(o.html)
    if o.engine == "tabarena" and importlib.util.find_spec("tabarena") is None:
        raise UsageError("--engine tabarena needs TabArena importable in this environment (pip install tabarena); "
                         "use --engine native (the default) otherwise")
    if o.ignore_metadata_mismatch:
        ctx.extra_waivers.extend(metadata_mismatch_waivers(ctx))
    return ProcessFacts(data_dir=o.run_data_dir, metadata_ref=o.method_metadata, method=o.method)


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


# --------------------------------------------------------------------------- native engine: tables


@attrs.define
class Read:
    """What one pass over the raw results gives: the renamed results in TabArena's order, the task
    splits whose predictions were written, and for a config method the simulation's inputs and
    per-split HPO rows."""

    results: list = attrs.Factory(list)
    tasks: list = attrs.Factory(list)
    splits: list = attrs.Factory(list)
    hpo_rows: list = attrs.Factory(list)


def read_results(index, meta: MethodMetadata, predictions_dir: Path | None = None, pool=None) -> Read:
    """Every result of the index, decoded again (restricted unpickler; only bytes with the digest the rules
    judged) and renamed, in TabArena's order; with ``predictions_dir``, each task split's config
    predictions are written there as it is read, and for a config method its HPO results simulated.

    With ``pool`` (:func:`~tabarena_checks.publish.reread.decoding_pool`), worker processes read and
    finish whole task splits; a few task splits are in memory at a time, as in TabArena's per-task processing.
    """
    from functools import partial

    from tabarena_checks.publish.cache_tables import task_groups
    from tabarena_checks.publish.reread import decoded

    digests = dict(index.query("SELECT path, sha256 FROM results"))
    groups = [[(path, str(index.abspath(path)), digests[path]) for path in group] for group in task_groups(digests)]
    finish = None if predictions_dir is None else partial(_finish_split, predictions_dir, meta)
    out = Read()
    for results, part in progress.counted(decoded(groups, meta, finish, pool), "process", len(digests),
                                          unit="results.pkl", weight=lambda split: len(split[0])):
        out.results += results
        if part is not None:
            out.tasks += part.tasks
            out.splits += part.splits
            out.hpo_rows += part.hpo_rows
    return out


def _finish_split(predictions_dir: Path, meta: MethodMetadata, results: list, preds: list) -> Read | None:
    """Write one task split's predictions and, for a config method, simulate its HPO results (in a
    worker process when there are any); what it adds to the whole read, or None without config predictions."""
    if not preds:
        return None
    from tabarena_checks.publish.cache_predictions import write_task

    part = Read()
    dataset, split = results[-1].row["dataset"], results[-1].row["fold"]
    write_task(predictions_dir, dataset, split, preds)
    part.tasks.append((dataset, split))
    if meta.method_type == "config":
        _simulate_split(part, results, preds, meta)
    return part


def _simulate_split(out: Read, results: list, preds: list, meta: MethodMetadata) -> None:
    """The split's inputs to the trajectories, and its hpo_results rows (TabArena's per-task simulation)."""
    import math

    from tabarena_checks.publish.cache_hpo import Split, read_back, split_results

    configs = [r for r in results if r.is_config]
    row = configs[0].row
    keys = ("metric_error", "metric_error_val", "time_train_s", "time_infer_s")
    split = Split(dataset=row["dataset"], fold=row["fold"], metric=row["metric"], problem_type=row["problem_type"],
                  rows={r.row["framework"]: {k: r.row.get(k, math.nan) for k in keys} for r in configs},
                  types={r.row["framework"]: r.config_type for r in configs},
                  y_val=read_back(preds[0].y_val), y_test=read_back(preds[0].y_test))
    out.splits.append(split)
    try:
        out.hpo_rows += split_results(split, preds, preds[0].y_val, preds[0].y_test, meta.effective_can_hpo)
    except ValueError as exc:  # a metric the simulation does not compute, a split without results
        raise ActionFailed(f"cannot simulate TabArena's HPO results for {split.dataset} split {split.fold}: {exc}; "
                           "nothing was written (--engine tabarena runs TabArena's own simulation)") from None


def build_tables(results: list, meta: MethodMetadata) -> dict[str, Any]:
    """The processed and results tables (pyarrow), as TabArena 0.1.0 writes them."""
    from tabarena_checks.publish import cache_tables as ct

    return {"configs": ct.configs_table(results), "baselines": ct.baselines_table(results),
            "model_results": ct.model_results_table(results, meta)}


# --------------------------------------------------------------------------- native engine: raw copy


@contextmanager
def copying_raw(index, inference, meta: MethodMetadata, raw_dir: Path) -> Iterator[dict[str, str]]:
    """Copy ``raw/<renamed config dir>/<tid>/<repeat>_<fold>/results.pkl`` for every readable result
    in background threads while the body runs; yields the manifest of the copies (path relative to
    the cache -> sha256), complete once the body returns.

    Each file is the run's own results.pkl, byte for byte, and only if its bytes still have the
    digest recorded when the rules' index decoded it: a file changed since is refused, never
    copied unjudged. The directory names come from the run's directory layout (the config
    directory renamed to the method, as processing renames frameworks) and integers, never from
    text inside a pickle. Creating thousands of directories and files is kernel work, so threads
    overlap it with each other and with the tables the body writes; each thread fills whole task
    directories, because threads creating entries in the same directory wait on its lock. The
    first failure (a full disk) drops the queued copies and is raised when the body ends.
    """
    from concurrent.futures import ThreadPoolExecutor

    from tabarena_checks.raw import reader
    from tabarena_checks.publish.integrity import sha256_of

    rows = index.query("SELECT path, config_dir, tid, coalesce(repeat, 0), fold, sha256 FROM results ORDER BY path")
    by_task: dict[Path, list[tuple[str, str, str]]] = {}
    for path, config_dir, tid, rep, fold, digest in rows:
        task_dir = raw_dir / plain_segment(inference.renamed_framework(config_dir, meta.method)) / str(int(tid))
        by_task.setdefault(task_dir, []).append((path, f"{int(rep)}_{int(fold)}", digest))
    copied: dict[str, str] = {}

    def fill(task_dir: Path) -> None:
        task_dir.mkdir(parents=True, exist_ok=True)
        for path, split, digest in by_task[task_dir]:
            data = reader.read_raw(index.abspath(path))
            if sha256_of(data) != digest:
                raise ActionFailed(f"{path} changed after the rules judged it (its sha256 differs from the one "
                                   "recorded when it was decoded); nothing was published: run the command again "
                                   "to judge the new content")
            (task_dir / split).mkdir(exist_ok=True)
            write_new(task_dir / split / "results.pkl", data)
            copied[(task_dir / split / "results.pkl").relative_to(raw_dir.parent).as_posix()] = digest
            advance(1)

    with progress.bar("raw copy", len(rows), unit="results.pkl") as advance:
        pool = ThreadPoolExecutor(COPY_THREADS)
        try:
            done = pool.map(fill, list(by_task))
            yield copied
            list(done)
        except reader.RawFileError as exc:
            raise ActionFailed(f"{exc}; nothing was published: run the command again to judge it") from None
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def write_new(path: Path, data: bytes) -> None:
    """Create ``path`` holding ``data`` (it must not exist: the cache is built in a fresh directory)."""
    with open(path, "xb") as out:
        out.write(data)


def plain_segment(name: str) -> str:
    """``name`` when it can be one directory name of the cache; a path inside a name is refused, not followed."""
    from tabarena_checks.publish.cache_layout import segment_problem

    problem = segment_problem(name)
    if problem:
        raise ActionFailed(f"cannot name a directory of the raw copy {name!r}: {problem}")
    return name


def native(ctx, out: Path) -> tuple[list[str], dict[str, str]]:
    """Write the whole method cache into ``out`` with the native engine; returns what was written and
    the digests of the raw copies."""
    from tabarena_checks.publish.reread import decoding_pool

    facts = ctx.facts
    meta, index, inference = facts.metadata, facts.index, facts.inference
    if meta.method_type not in ("config", "baseline"):
        raise ActionFailed(f"method_type {meta.method_type!r}: only configs and baselines are processed from raw results")
    # worker processes fork while no other thread runs (a lock another thread held at that moment would
    # stay held in the worker): the decoding workers before the raw copy's threads start (see
    # decoding_pool), the HPO simulation's once those threads and the decoding pool have ended
    copied = None
    with decoding_pool(len(index), facts.workers) as pool:
        if ctx.options.no_cache_raw:
            read, written = _tables(index, inference, meta, out, pool)
        else:
            with copying_raw(index, inference, meta, out / "raw") as copied:
                read, written = _tables(index, inference, meta, out, pool)
    simulated = _hpo_files(read, meta, out)
    if copied is None:
        return [*simulated, *written], {}
    return [*simulated, *written, f"raw/ ({len(copied)} results.pkl)"], copied


def _tables(index, inference, meta: MethodMetadata, out: Path, pool=None) -> tuple[Read, list[str]]:
    """metadata.yaml, processed/ and results/ but for the HPO files: the read (for :func:`_hpo_files`) and
    what was written."""
    import pyarrow.parquet as pq

    from tabarena_checks.publish.cache_predictions import context_json, metadata_json, task_metadata_table
    from tabarena_checks.publish.cache_tables import configs_hyperparameters, json_value

    (out / "processed").mkdir(parents=True)
    (out / "results").mkdir()
    read = read_results(index, meta, out / "processed" / "model_predictions", pool)
    if pool is not None:
        pool.shutdown()  # the read's workers leave now: the memory they hold is the tables' to use
    results, tasks = read.results, read.tasks
    tables = build_tables(results, meta)
    pq.write_table(task_metadata_table([r.row for r in results]), out / "processed" / "task_metadata.parquet")
    pq.write_table(tables["configs"], out / "processed" / "configs.parquet")
    pq.write_table(tables["baselines"], out / "processed" / "baselines.parquet")
    pq.write_table(tables["model_results"], out / "results" / "model_results.parquet")
    hps = configs_hyperparameters(results)
    # json.dump(indent=2) in insertion order, no final newline: TabArena's writer, so the files diff cleanly
    (out / "processed" / "configs_hyperparameters.json").write_text(json.dumps(json_value(hps), indent=2),
                                                                   encoding="utf-8")
    (out / "processed" / "metadata.json").write_text(metadata_json(), encoding="utf-8")
    (out / "processed" / "context.json").write_text(context_json(tasks), encoding="utf-8")
    (out / "metadata.yaml").write_text(render_metadata_yaml(meta, inference.validation_protocol), encoding="utf-8")
    return read, [f"metadata.yaml (validation_protocol={inference.validation_protocol!r})",
                  f"processed/model_predictions/ ({len(tasks)} task splits), processed/context.json, "
                  "processed/metadata.json",
                  f"processed/configs.parquet ({tables['configs'].num_rows} rows)",
                  f"processed/baselines.parquet ({tables['baselines'].num_rows} rows)",
                  f"processed/configs_hyperparameters.json ({len(hps)} configs)",
                  f"results/model_results.parquet ({tables['model_results'].num_rows} rows)"]


def _hpo_files(read: Read, meta: MethodMetadata, out: Path) -> list[str]:
    """results/hpo_results.parquet and results/hpo_trajectories.parquet of a config method.

    The trajectories always include the declared default config; without ``config_default``
    TabArena's own processing stops with an assertion, the native one leaves the file out and
    says so (upload then publishes no trajectories).
    """
    import pyarrow.parquet as pq

    from tabarena_checks.publish.cache_hpo import hpo_results_table, trajectories_table, trajectory_rows

    if meta.method_type != "config" or not read.splits:
        return []
    pq.write_table(hpo_results_table(read.hpo_rows, meta), out / "results" / "hpo_results.parquet")
    written = [f"results/hpo_results.parquet ({len(read.hpo_rows)} rows)"]
    default = meta.config_default
    configs = sorted({name for split in read.splits for name in split.rows})
    if default is None:
        return [*written, "no results/hpo_trajectories.parquet: config_default is not declared (the trajectories "
                          "always include the default config; TabArena's own processing stops here)"]
    if default not in configs:
        raise ActionFailed(f"config_default {default!r} names no config of the processed results "
                           f"({', '.join(configs[:5])}); fix config_default in the method's info.py")
    try:
        rows = trajectory_rows(read.splits, out / "processed" / "model_predictions", configs, default,
                               f"{meta.effective_model_key}{meta.name_suffix or ''}")
    except ValueError as exc:
        raise ActionFailed(f"cannot simulate TabArena's HPO trajectories: {exc}; nothing was written") from None
    pq.write_table(trajectories_table(rows, meta), out / "results" / "hpo_trajectories.parquet")
    return [*written, f"results/hpo_trajectories.parquet ({len(rows)} rows)"]


# --------------------------------------------------------------------------- TabArena engine


def tabarena_metadata(meta: MethodMetadata, cache_root_dir: Path):
    """TabArena's own MethodMetadata for ``meta``, writing under ``cache_root_dir``."""
    import dataclasses

    from tabarena.models._method_metadata import MethodMetadata as TAMethodMetadata

    accepted = {f.name for f in dataclasses.fields(TAMethodMetadata)}
    values = {f: getattr(meta, f) for f in FIELDS if f in meta.declared or f in ("method", "method_type", "method_class")}
    values["suite"] = meta.effective_suite
    values["tags"] = list(values.get("tags") or [])
    values = {k: v for k, v in values.items() if k in accepted}
    return TAMethodMetadata(**values, cache_root=str(cache_root_dir))


def with_tabarena(ctx, out: Path) -> list[str]:
    """Run ``tabarena.tools.process_local_raw_data.process_raw`` (native backend) into a scratch cache root."""
    from tabarena.tools.process_local_raw_data import RawMethod, process_raw

    facts = ctx.facts
    scratch = out.parent / f"{out.name}.root"
    try:
        ta_meta = tabarena_metadata(facts.metadata, scratch)
        # the judged method's files only (in a shared directory, the others are left alone)
        paths = sorted(facts.index.abspath(p) for (p,) in facts.index.query("SELECT path FROM results"))
        process_raw(RawMethod(path_raw=Path(facts.data_dir), method_metadata=ta_meta),
                    cache_raw=not ctx.options.no_cache_raw, cache_hpo_trajectories=False, backend="native",
                    file_paths=paths)
        built = MethodCache(scratch, facts.metadata.effective_suite, facts.metadata.method).path
        if not built.is_dir():
            raise ActionFailed(f"TabArena's processing wrote nothing under {built}")
        os.rename(built, out)
    except ActionFailed:
        raise
    except Exception as exc:  # TabArena's own failures are reported, not hidden behind a traceback
        raise ActionFailed(f"TabArena's processing failed: {type(exc).__name__}: {exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and "raw" not in p.parts)


# --------------------------------------------------------------------------- the action


def _plan(ctx) -> Iterator[str]:
    cache = _cache(ctx)
    new = source_record(ctx)
    yield f"engine {new['engine']}: would write {cache.path}"
    if cache.path.exists():
        if _same_inputs(_existing(cache), new) and not ctx.options.force:
            yield "a cache built from the same inputs exists there: it would be kept unchanged"
        elif ctx.options.force:
            yield "the existing cache there would be replaced whole (--force)"
        else:
            yield "a cache from other (or unknown) inputs exists there: process would refuse without --force"
    yield ("metadata.yaml, processed/ (configs, baselines, task metadata, configs_hyperparameters.json, "
           "model_predictions/, context), results/model_results.parquet"
           + (", results/hpo_results.parquet and hpo_trajectories.parquet (TabArena's HPO simulation)"
              if ctx.facts.metadata is not None and ctx.facts.metadata.method_type == "config" else "")
           + ("" if ctx.options.no_cache_raw else ", raw/"))
    yield from _others(ctx)


def _build(ctx, cache: MethodCache, new: dict[str, Any]) -> tuple[list[str], bool]:
    """Build the cache in a temporary sibling and swap it into place; returns (what was written, replaced).

    The source record lists the sha256 of every file written (the manifest upload checks the
    cache against); the digest of that manifest goes into this run's decision record.
    """
    tmp = io.temp_sibling(cache.path)
    try:
        if ctx.options.engine == "tabarena":
            written, copied = with_tabarena(ctx, tmp), {}
        else:
            tmp.mkdir()
            written, copied = native(ctx, tmp)
        manifest = integrity.manifest_of(tmp, copied)
        _raw_judged(ctx, manifest)
        record = {**new, "data_dir": str(Path(ctx.facts.data_dir).resolve()),
                  "built": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                  integrity.MANIFEST: manifest}
        (tmp / cache.source_record.name).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n",
                                                    encoding="utf-8")
        _digests(ctx)[integrity.DECISION_KEY] = integrity.manifest_digest(manifest)
        return written, io.swap_in_dir(tmp, cache.path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _raw_judged(ctx, manifest: dict[str, str]) -> None:
    """Every file under raw/ must hold bytes the rules judged in this run (whichever engine copied it)."""
    judged = set(ctx.facts.index.table["sha256"].to_pylist())
    foreign = sorted(rel for rel, digest in manifest.items() if rel.startswith("raw/") and digest not in judged)
    if foreign:
        raise ActionFailed(f"{len(foreign)} file(s) under raw/ hold content the rules did not judge "
                           f"({', '.join(foreign[:5])}); nothing was published: run the command again")


def _kept(ctx, cache: MethodCache) -> str | None:
    """Why an existing cache built from the same inputs cannot be kept as it is (it changed since), or None.

    When it can, its manifest's digest goes into this run's decision record, like a fresh build's.
    """
    try:
        manifest = json.loads(cache.source_record.read_text(encoding="utf-8"))[integrity.MANIFEST]
        problems = integrity.differences(cache.path, manifest)
    except (OSError, ValueError, KeyError, TypeError):
        return "it has no readable manifest of its files (built by an older version)"
    if problems:
        return "it changed since process wrote it: " + "; ".join(problems[:5])
    try:
        _raw_judged(ctx, manifest)
    except ActionFailed as exc:
        return str(exc)
    _digests(ctx)[integrity.DECISION_KEY] = integrity.manifest_digest(manifest)
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
    """The line saying an existing cache is kept, or the refusal to touch it without ``--force``.

    Apart from the write because a cache is never mixed with files of another run: it is kept
    only when built from the same inputs and still as process wrote it, otherwise the user decides.
    """
    if not _same_inputs(_existing(cache), new):
        raise ActionFailed(
            f"{cache.path} exists and was built from other (or unknown) inputs; it is kept as it is. "
            "Pass --force to replace it whole (a cache is never mixed with files from another run)"
        )
    why = _kept(ctx, cache)
    if why is not None:
        raise ActionFailed(f"{cache.path} was built from the same inputs, but {why}; it is kept as it is. "
                           "Pass --force to rebuild it whole")
    return f"{cache.path} was built from the same inputs already; kept unchanged (--force rebuilds it)"


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
        raise ActionFailed(f"cannot write the cache: {exc.strerror or exc} ({where}); {kept}. "
                           f"Free space or choose another --cache-root, then rerun") from None


def _others(ctx) -> list[str]:
    """The lines naming the methods of a shared directory that were left alone."""
    others = ctx.facts.other_methods()
    if not others:
        return []
    return [f"processed only {ctx.facts.selected_method} of {len(others) + 1} methods in the directory; "
            "not processed: " + ", ".join(f"{prefix} ({n} results)" for prefix, n in others)]


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
    params=(
        # a directory that is not there is the command line's mistake (exit 2), not a blocked run of "31 passed"
        click.Argument(["run_data_dir"], metavar="RUN_DATA_DIR", type=click.Path(exists=True, file_okay=False)),
        click.Option(["--method-metadata"], required=True, metavar="REF",
                     help="path/to/info.py:VARIABLE or package.module:VARIABLE."),
        click.Option(["--expect-validation-protocol"], default=None, metavar="KEY",
                     help="Refuse unless the results were fit under this protocol (e.g. tabarena or 8x1)."),
        click.Option(["--cache-root"], default=None, type=click.Path(file_okay=False),
                     help="Cache root (default: $TABARENA_CACHE, else ~/.cache/tabarena)."),
        click.Option(["--method"], default=None, metavar="PREFIX",
                     help="In a directory holding several methods, process this one (its config-dir prefix, "
                          "as `checks inspect` lists them); by default the one the declaration matches."),
        click.Option(["--no-cache-raw"], is_flag=True, help="Do not copy the raw results into raw/."),
        click.Option(["--force"], is_flag=True, help="Replace an existing cache of this method and suite whole."),
        click.Option(["--engine"], type=click.Choice(ENGINES), default="native", show_default=True,
                     help="native: DuckDB over the index; tabarena: TabArena's own processing (must be installed)."),
        click.Option(["--ignore-metadata-mismatch"], is_flag=True,
                     help="Waive the metadata-vs-raw mismatch rules for this run (recorded as waivers)."),
        click.Option(["--html"], default=None, metavar="FILE",
                     help="Also write a self-contained HTML report of the run to FILE (passed or blocked)."),
    ),
    target=_target,
    inputs=_digests,
    sources=info_sources,
    arena="tabarena",
    requires=("pyarrow", "duckdb", "numpy", "isal"),
    options=ProcessOptions,
)

ACTIONS = [PROCESS]
