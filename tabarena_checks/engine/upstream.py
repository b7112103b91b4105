"""``--engine tabarena``: TabArena's own processing, handed the judged input, writing the same cache.

TabArena is not a dependency: it is imported only here, when this engine is chosen (process
refuses the choice first when it is not importable).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from checks import ActionFailed
from tabarena_checks.cache.layout import MethodCache
from tabarena_checks.engine.api import Built, Job
from tabarena_checks.metadata.model import FIELDS, MethodMetadata


def tabarena_metadata(meta: MethodMetadata, cache_root_dir: Path):
    """TabArena's own MethodMetadata for ``meta``, writing under ``cache_root_dir``."""
    from tabarena.models import MethodMetadata as TAMethodMetadata  # noqa: PLC0415 - optional dependency: TabArena is installed only for --engine upstream

    accepted = {f.name for f in dataclasses.fields(TAMethodMetadata)}
    values = {
        f: getattr(meta, f) for f in FIELDS if f in meta.declared or f in ("method", "method_type", "method_class")
    }
    values["suite"] = meta.effective_suite
    values["tags"] = list(values.get("tags") or [])
    values = {k: v for k, v in values.items() if k in accepted}
    return TAMethodMetadata(**values, cache_root=str(cache_root_dir))


def build(job: Job, out: Path) -> Built:
    """Run ``tabarena.tools.process_local_raw_data.process_raw`` (native backend) into a scratch cache root,
    then move the method's cache to ``out`` (:func:`tabarena_checks.engine.api.build`)."""
    from tabarena.tools.process_local_raw_data import RawMethod, process_raw  # noqa: PLC0415 - optional dependency: TabArena is installed only for --engine upstream

    scratch = out.parent / f"{out.name}.root"
    try:
        ta_meta = tabarena_metadata(job.metadata, scratch)
        # the judged method's files only (in a shared directory, the others are left alone)
        paths = sorted(job.index.abspath(p) for (p,) in job.index.query("SELECT path FROM results"))
        process_raw(
            RawMethod(path_raw=Path(job.data_dir), method_metadata=ta_meta),
            cache_raw=job.cache_raw,
            cache_hpo_trajectories=False,
            backend="native",
            file_paths=paths,
        )
        built = MethodCache(scratch, job.metadata.effective_suite, job.metadata.method).path
        if not built.is_dir():
            raise ActionFailed(f"TabArena's processing wrote nothing under {built}")
        out.rmdir()  # given empty: TabArena's build takes its place whole
        os.rename(built, out)
    except ActionFailed:
        raise
    except Exception as exc:  # TabArena's own failures are reported, not hidden behind a traceback
        raise ActionFailed(f"TabArena's processing failed: {type(exc).__name__}: {exc}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Built(sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and "raw" not in p.parts))
