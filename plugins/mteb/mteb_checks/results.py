"""The MTEB results tree declared once: MODEL/REVISION/TASK.json and MODEL/REVISION/model_meta.json.

A task file holds ``task_name``, ``dataset_revision``, ``mteb_version`` and ``scores``, one list
of entries per split (``test``, ...), each entry one ``hf_subset`` with its ``main_score``. Real
files hold ``NaN`` scores and ``Infinity`` token limits, so non-finite numbers are kept for the
rules to judge where they stand (MTB103) instead of making the whole file unreadable.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from checks.kit import ResultFiles, Source

META = "model_meta.json"


@attrs.frozen
class TaskResult:
    """One task's scores for one model revision."""

    source: Source
    model: str
    revision: str
    task_name: str
    splits: dict
    #: whether the folder holds the model's model_meta.json (MTB105)
    meta_present: bool


@attrs.frozen
class ModelMeta:
    """A model revision's model_meta.json: the name and revision it declares."""

    source: Source
    model: str
    revision: str
    name: str
    declared_revision: str | None


def record(source: Source) -> TaskResult | ModelMeta:
    """A file's record; a file without what the gates read is unreadable at the key it lacks."""
    model, revision, name = Path(source.path).parts[-3:]
    if name == META:
        return ModelMeta(
            source, model, revision, source.get("/name", str), source.get("/revision", str, required=False)
        )
    splits = source.get("/scores", dict)
    for split, entries in splits.items():
        source.get(f"/scores/{split}", list)
        for i in range(len(entries)):
            source.get(f"/scores/{split}/{i}", dict)
    meta_present = Path(source.path).with_name(META).is_file()
    return TaskResult(source, model, revision, source.get("/task_name", str), splits, meta_present)


FILES = ResultFiles(name="mteb", glob="*/*/*.json", record=record, nonfinite="keep", arena="mteb")
hook = FILES.hook(
    "Check MTEB result files (read-only; path:line:col: CODE message). FILES, or every MODEL/REVISION/*.json "
    "below a folder."
)
