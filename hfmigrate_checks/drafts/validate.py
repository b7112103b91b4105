"""The draft validator: the public skill's CLI, output and exit-code contract, with stricter checks.

Output, line for line: ``PASS <path>`` or ``FAIL <path>`` followed by ``  - <error>``
lines, then ``Checked N draft file(s); status=PASS|FAIL``; exit 0 when every file passed,
1 otherwise. A missing ``drafts/`` directory or no draft file is one ``ERROR:`` line and
exit 1. Only ``drafts/**/.eval_results/*.yaml`` files are checked.

On top of the skill's checks this one refuses unknown keys, unquoted dates, a
``dataset.revision`` that is not a 40-hex commit, a ``source`` without ``url``, and the
same benchmark task in two files of one model. The per-entry checks are plain functions
so the rules judge planned drafts with exactly the same code.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from hfmigrate_checks.evalresults.evalfile import EvalFile, date_problem
from hfmigrate_checks.source.contract import repo_id_problem

ENTRY_KEYS = frozenset({"dataset", "value", "date", "verifyToken", "source", "notes"})
DATASET_KEYS = frozenset({"id", "task_id", "revision"})
SOURCE_KEYS = frozenset({"url", "name", "user", "org"})
COMMIT_SHA = re.compile(r"^[0-9a-f]{40}$")
#: a draft file's name: plain, short, YAML
FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}\.yaml$")


def value_problem(entry: dict) -> str | None:
    value = entry.get("value")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"value must be a number (got {value!r})"
    if not math.isfinite(float(value)):
        return f"value must be finite (got {value!r})"
    return None


def _url_problems(source: dict) -> list[str]:
    """source.url must be there, an absolute http(s) URL."""
    if "url" not in source:
        return ["source.url is required when source is present"]
    url = source["url"]
    parts = urlsplit(url) if isinstance(url, str) else None
    if not parts or parts.scheme not in ("http", "https") or not parts.netloc:
        return [f"source.url must be an absolute http(s) URL (got {url!r})"]
    return []


def source_problems(entry: dict) -> list[str]:
    if "source" not in entry:
        return []
    source = entry["source"]
    if not isinstance(source, dict):
        return [f"source must be a mapping with a url (got {source!r})"]
    problems = _url_problems(source)
    for key in ("name", "user", "org"):
        if key in source and not isinstance(source[key], str):
            problems.append(f"source.{key} must be a string (got {source[key]!r})")
    unknown = sorted(set(map(str, source)) - SOURCE_KEYS)
    if unknown:
        problems.append(f"source has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(SOURCE_KEYS))}")
    return problems


def entry_problems(entry: Any, benchmark_id: str, task_ids: Iterable[str]) -> list[str]:
    """Everything wrong with one entry, skill checks first, then the stricter ones."""
    if not isinstance(entry, dict):
        return ["must be a mapping"]
    dataset = entry.get("dataset")
    if not isinstance(dataset, dict):
        return ["dataset must be a mapping with id and task_id"]
    problems = []
    if dataset.get("id") != benchmark_id:
        problems.append(f"dataset.id must be {benchmark_id!r} (got {dataset.get('id')!r})")
    task_id = dataset.get("task_id")
    allowed = sorted(set(task_ids))
    if not isinstance(task_id, str) or task_id not in allowed:
        problems.append(f"dataset.task_id {task_id!r} is not one of {allowed}")
    problems += filter(None, [value_problem(entry), date_problem(entry)])
    return problems + shape_problems(entry)


def shape_problems(entry: dict) -> list[str]:
    """What is wrong with an entry whatever the benchmark: source, unknown keys, revision, token and notes types."""
    dataset = entry["dataset"]
    problems = source_problems(entry)
    unknown = sorted(set(map(str, entry)) - ENTRY_KEYS)
    if unknown:
        problems.append(f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(ENTRY_KEYS))}")
    unknown = sorted(set(map(str, dataset)) - DATASET_KEYS)
    if unknown:
        problems.append(f"dataset has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(DATASET_KEYS))}")
    if "revision" in dataset and not (isinstance(dataset["revision"], str) and COMMIT_SHA.match(dataset["revision"])):
        problems.append(
            f"dataset.revision must be a 40-character lowercase hex commit sha (got {dataset['revision']!r})"
        )
    for key in ("verifyToken", "notes"):
        if key in entry and not (isinstance(entry[key], str) and entry[key].strip()):
            problems.append(f"{key} must be a non-empty string (got {entry[key]!r})")
    return problems


def standalone_problems(entry: Any) -> list[str]:
    """Shape problems of an entry judged without a benchmark contract (pre-commit); values and dates have their own rules."""
    if not isinstance(entry, dict):
        return ["must be a mapping"]
    dataset = entry.get("dataset")
    if not isinstance(dataset, dict):
        return ["dataset must be a mapping with id and task_id"]
    problems = [
        f"dataset.{key} must be a non-empty string (got {dataset.get(key)!r})"
        for key in ("id", "task_id")
        if not (isinstance(dataset.get(key), str) and dataset[key].strip())
    ]
    return problems + shape_problems(entry)


def file_problems(file: EvalFile, benchmark_id: str, task_ids: Iterable[str]) -> list[str]:
    if file.error:
        return [file.error]
    if not isinstance(file.data, list) or not file.data:
        return ["the root must be a non-empty YAML list of results"]
    task_ids = list(task_ids)
    problems, seen = [], set()
    for n, entry in enumerate(file.data, start=1):
        problems += [f"entry {n}: {p}" for p in entry_problems(entry, benchmark_id, task_ids)]
        key = _task_key(entry)
        if key is not None:
            if key in seen:
                problems.append(f"entry {n}: duplicate dataset/task pair {key!r}")
            seen.add(key)
    return problems


def _task_key(entry: Any) -> tuple[str, str] | None:
    if isinstance(entry, dict) and isinstance(entry.get("dataset"), dict):
        return (str(entry["dataset"].get("id")), str(entry["dataset"].get("task_id")))
    return None


def draft_path(repo_id: str, file_name: str) -> str:
    """``drafts/<owner>--<name>/.eval_results/<file>``, only for ids and names that cannot escape."""
    problem = repo_id_problem(repo_id)
    if problem:
        raise ValueError(problem)
    if not FILE_NAME.match(file_name) or ".." in file_name:
        raise ValueError(f"draft file name {file_name[:120]!r} must be a plain '<name>.yaml'")
    owner, name = repo_id.split("/")
    path = PurePosixPath("drafts", f"{owner}--{name}", ".eval_results", file_name)
    assert ".." not in path.parts and not path.is_absolute()
    return str(path)


def is_draft_path(rel: str) -> bool:
    """The skill's selection: ``drafts/**.yaml`` whose parent directory is ``.eval_results``."""
    parts = PurePosixPath(rel).parts
    return len(parts) >= 3 and parts[0] == "drafts" and parts[-2] == ".eval_results" and rel.endswith(".yaml")


def report(files: Sequence[EvalFile], benchmark_id: str, task_ids: Iterable[str]) -> tuple[list[str], bool]:
    """Validate parsed drafts (paths relative to the bundle); returns the output lines and whether all passed."""
    task_ids = list(task_ids)
    lines, ok = [], True
    seen_by_model: dict[str, dict[tuple[str, str], str]] = {}
    for file in sorted(files, key=lambda f: f.path):
        problems = file_problems(file, benchmark_id, task_ids)
        model_dir = str(PurePosixPath(file.path).parent)
        seen = seen_by_model.setdefault(model_dir, {})
        for n, entry in file.entries():
            key = _task_key(entry)
            if key is None:
                continue
            other = seen.get(key)
            if other and other != file.path:
                problems.append(f"entry {n}: dataset/task pair {key!r} is already in {other}")
            seen.setdefault(key, file.path)
        ok = ok and not problems
        lines.append(f"{'FAIL' if problems else 'PASS'} {file.path}")
        lines += [f"  - {p}" for p in problems]
    lines.append(f"Checked {len(files)} draft file(s); status={'PASS' if ok else 'FAIL'}")
    return lines, ok


def render(
    files: Sequence[EvalFile], bundle: str | Path, benchmark_id: str, task_ids: Iterable[str]
) -> tuple[str, int]:
    """The validator's output text and exit code for ``files`` found under ``bundle``."""
    if not files:
        return f"ERROR: no drafts/**/.eval_results/*.yaml files found under {bundle}\n", 1
    lines, ok = report(files, benchmark_id, task_ids)
    return "\n".join(lines) + "\n", 0 if ok else 1


def validate_bundle(bundle: str | Path, benchmark_id: str, task_ids: Iterable[str]) -> tuple[str, int]:
    """Validate a bundle on disk; returns (output text, exit code) exactly as the CLI prints them."""
    bundle = Path(bundle)
    drafts = bundle / "drafts"
    if not drafts.is_dir():
        return f"ERROR: drafts directory not found: {drafts}\n", 1
    files = []
    for path in sorted(drafts.rglob("*.yaml")):
        rel = path.relative_to(bundle).as_posix()
        if not is_draft_path(rel) or path.is_symlink() or not path.is_file():
            continue
        files.append(EvalFile.read(path, rel))
    return render(files, bundle, benchmark_id, task_ids)
