"""MTEB's gates (``MTB``), bound to the pre-commit hook and to the accept action.

They are given the records of ``mteb_checks.results`` (``@needs(records(TaskResult))``) and place each
finding at its key path, so a waiver can name one value: ``target = "PATH#/scores/test/0/main_score"``.
"""

from __future__ import annotations

import json
import math
from collections import Counter

from checks import fact, needs, rule
from checks.kit import records
from mteb_checks.results import FILES, ModelMeta, TaskResult

BOTH = (FILES.action, "mteb-accept")


@rule(
    "MTB101",
    "mtb-task-name-matches-file",
    actions=BOTH,
    why="The leaderboard finds a task's scores by file name; a file whose task_name says another task "
    "is read as the wrong task, or silently never read.",
    example_fail='SciFact.json: {"task_name": "NFCorpus", ...}',
    example_pass='SciFact.json: {"task_name": "SciFact", ...}',
)
@needs(records(TaskResult))
def task_name_matches_file(ctx, results):
    """A task file's ``task_name`` is its file name without ``.json``."""
    for r in results:
        stem = r.source.path.replace("\\", "/").rpartition("/")[2].removesuffix(".json")
        if r.task_name != stem:
            yield r.source.at("/task_name", f"task_name {r.task_name!r} is not the file's task {stem!r}")


@rule(
    "MTB102",
    "mtb-meta-matches-folder",
    actions=BOTH,
    why="Results are filed under MODEL/REVISION; metadata naming another model or revision attaches "
    "the scores to a model that did not produce them.",
    example_fail='intfloat__e5-small/abc123/model_meta.json: {"name": "intfloat/e5-base", "revision": "abc123"}',
    example_pass='intfloat__e5-small/abc123/model_meta.json: {"name": "intfloat/e5-small", "revision": "abc123"}',
)
@needs(records(ModelMeta))
def meta_matches_folder(ctx, metas):
    """model_meta.json's ``name`` (``/`` as ``__``) and ``revision`` are the folders it sits in."""
    for m in metas:
        if m.name.replace("/", "__") != m.model:
            yield m.source.at("/name", f"name {m.name!r} does not match the folder {m.model!r}")
        if m.declared_revision is not None and m.declared_revision != m.revision:
            yield m.source.at("/revision", f"revision {m.declared_revision!r} is not the folder {m.revision!r}")


@rule(
    "MTB103",
    "mtb-main-score-finite",
    actions=BOTH,
    why="main_score ranks the leaderboard; NaN, an infinity or a missing score sorts arbitrarily "
    "and hides a failed evaluation behind a number.",
    example_fail='"scores": {"test": [{"hf_subset": "default", "main_score": NaN}]}',
    example_pass='"scores": {"test": [{"hf_subset": "default", "main_score": 0.7436}]}',
)
@needs(records(TaskResult))
def main_score_finite(ctx, results):
    """Every score entry has a finite number as ``main_score``."""
    for r in results:
        for split, entries in r.splits.items():
            for i, entry in enumerate(entries):
                score = entry.get("main_score")
                ok = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
                if not ok:
                    where = f"/scores/{split}/{i}" + ("/main_score" if "main_score" in entry else "")
                    shown = json.dumps(score) if "main_score" in entry else "missing"  # NaN as the file writes it
                    yield r.source.at(where, f"{split} entry {i}: main_score is {shown}, not a finite number")


@rule(
    "MTB104",
    "mtb-subset-once",
    actions=BOTH,
    why="Each language subset is scored once per split; a repeated hf_subset means two runs were "
    "concatenated, and the leaderboard averages whichever it reads first.",
    example_fail='"test": [{"hf_subset": "en", ...}, {"hf_subset": "en", ...}]',
    example_pass='"test": [{"hf_subset": "en", ...}, {"hf_subset": "de", ...}]',
)
@needs(records(TaskResult))
def subset_once(ctx, results):
    """Within one split, each ``hf_subset`` appears once."""
    for r in results:
        for split, entries in r.splits.items():
            counts = Counter(e.get("hf_subset") for e in entries)
            for i, entry in enumerate(entries):
                subset = entry.get("hf_subset")
                if counts[subset] > 1 and [e.get("hf_subset") for e in entries].index(subset) != i:
                    yield r.source.at(f"/scores/{split}/{i}/hf_subset", f"{split}: hf_subset {subset!r} repeated")


@rule(
    "MTB105",
    "mtb-model-meta-present",
    actions=BOTH,
    why="Without model_meta.json the leaderboard cannot say how large the model is, which languages "
    "it claims or under which license its scores were made.",
    example_fail="intfloat__e5-small/abc123/SciFact.json and no model_meta.json beside it",
    example_pass="intfloat__e5-small/abc123/SciFact.json with intfloat__e5-small/abc123/model_meta.json",
)
@needs(records(TaskResult))
def model_meta_present(ctx, results):
    """Every MODEL/REVISION folder holding task results holds a model_meta.json."""
    for r in results:
        if not r.meta_present:
            yield r.source.at("", f"no model_meta.json beside it in {r.model}/{r.revision}")


@rule(
    "MTB106",
    "mtb-no-overwrite",
    actions=("mteb-accept",),
    why="A published score is cited; accepting a submission must not replace one silently. A rerun "
    "that changes a score is a decision a maintainer records with a waiver.",
    example_fail="accepting SciFact.json whose results/.../SciFact.json exists with other content",
    example_pass="accepting SciFact.json that is new to the results tree, or identical to it",
)
@needs(fact("sources"), fact("existing"), fact("dest"))
def no_overwrite(ctx, sources, existing, dest):
    """A submitted file whose place in the results tree holds different content blocks the accept."""
    for source in sources:
        there = existing.get(source.path)
        if there is not None and there != source.digest:
            yield source.at("", f"the results tree holds another version of this file: {dest[source.path]}")


RULES = [
    task_name_matches_file,
    meta_matches_folder,
    main_score_finite,
    subset_once,
    model_meta_present,
    no_overwrite,
]
