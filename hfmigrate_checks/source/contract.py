"""The benchmark contract: what the Hub says a benchmark is, plus what only the source can say.

``eval.yaml`` names the tasks but has no metric, unit or direction field, so those come
from a small user-written mapping file, together with the source column -> task mapping.
The contract pins the dataset commit it was read at and refuses anything the benchmark
does not declare: an unknown task, an invented ``overall``/``default`` task, a column
mapped to nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from checks import InputError, io

#: the Hub's repo-name grammar: letters, digits, '.', '_', '-', no leading/trailing '.' or '-', no '--' or '..'
REPO_PART = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?$")
#: task ids people invent when a leaderboard has an aggregate column
AGGREGATE_TASKS = frozenset({"overall", "default", "average", "avg", "mean", "total", "all"})


def repo_id_problem(repo_id: object) -> str | None:
    """Why ``repo_id`` is not a Hub ``owner/name`` id (and so must never become a path), or None."""
    if not isinstance(repo_id, str) or not repo_id:
        return f"repo id must be 'owner/name' (got {repo_id!r})"
    parts = repo_id.split("/")
    if len(parts) != 2:
        return f"repo id must be exactly 'owner/name' (got {repo_id[:120]!r})"
    for part in parts:
        if not REPO_PART.match(part) or "--" in part or ".." in part:
            return f"repo id part {part[:120]!r} breaks the Hub's name grammar (letters, digits, '.', '_', '-')"
    return None


DIRECTIONS = ("higher_is_better", "lower_is_better")
MAPPING_KEYS = {
    "metric": "what the number measures, e.g. 'accuracy'",
    "direction": f"one of {', '.join(DIRECTIONS)}",
    "unit": "the unit as published, e.g. 'percent' or 'fraction'",
    "scale": "optional: the published range, e.g. '0-100'",
    "columns": "source column -> eval.yaml task id",
    "ignore_columns": "optional: source columns that are not results of this benchmark",
    "source_url": "optional: the page the leaderboard was published on",
    "source_name": "optional: display name written as source.name",
    "source_commit": "optional: commit of the source repository the table was read at",
    "slug": "optional: draft file name stem (default: the benchmark name, lowercased)",
    "revision_in_claim": "optional: true when the scores were produced on the pinned dataset revision",
}
REQUIRED_MAPPING_KEYS = ("metric", "direction", "unit", "columns")
SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")


@attrs.frozen
class EvalSpec:
    """The parts of a benchmark's root ``eval.yaml`` the migration relies on."""

    name: str
    description: str
    evaluation_framework: str
    task_ids: tuple[str, ...]


@attrs.frozen
class Contract:
    """Everything a draft must agree with, pinned to one dataset commit."""

    benchmark_id: str
    dataset_sha: str
    eval_yaml_url: str
    official: bool
    name: str
    evaluation_framework: str
    task_ids: tuple[str, ...] = attrs.field(converter=tuple)
    metric: str
    direction: str
    unit: str
    columns: Mapping[str, str] = attrs.field(converter=lambda m: dict(sorted(dict(m).items())))
    ignore_columns: tuple[str, ...] = attrs.field(converter=tuple, default=())
    scale: str = ""
    source_url: str = ""
    source_name: str = ""
    source_commit: str = ""
    slug: str = ""
    revision_in_claim: bool = False
    requested_revision: str = ""
    checked_at: str = ""

    @property
    def file_name(self) -> str:
        return f"{self.slug or default_slug(self.benchmark_id)}.yaml"

    def undecided(self, column: str) -> bool:
        """Whether the source ``column`` is a score nobody decided about: neither mapped to a task nor ignored."""
        return column not in self.columns and column not in self.ignore_columns

    def to_json(self) -> str:
        return json.dumps(attrs.asdict(self), indent=2, sort_keys=True) + "\n"


def default_slug(benchmark_id: str) -> str:
    """A stable lowercase file stem from the benchmark's repo name (``Idavidrein/gpqa`` -> ``gpqa``)."""
    stem = re.sub(r"[^a-z0-9._-]+", "-", benchmark_id.rsplit("/", 1)[-1].lower()).strip("-.")
    return stem[:64] or "benchmark"


def _task_ids(tasks: Any, where: str) -> list[str]:
    """eval.yaml's task ids: each task a mapping with a non-empty, unique ``id``."""
    if not isinstance(tasks, list) or not tasks:
        raise InputError(f"{where}: 'tasks' must be a non-empty list of {{id: ...}} mappings")
    ids: list[str] = []
    for n, task in enumerate(tasks, start=1):
        task_id = task.get("id") if isinstance(task, dict) else None
        if not isinstance(task_id, str) or not task_id.strip():
            raise InputError(f"{where}: tasks[{n}].id must be a non-empty string (got {task_id!r})")
        if task_id in ids:
            raise InputError(f"{where}: tasks[{n}].id {task_id!r} is declared twice")
        ids.append(task_id)
    return ids


def _yaml_mapping(text: str, where: str, what: str, shape: str) -> dict[str, Any]:
    """``text`` parsed strictly as YAML, refused unless it is a mapping; ``what`` and ``shape`` word the errors."""
    try:
        data = io.loads_yaml(text, source=where)
    except io.YamlError as exc:
        raise InputError(f"{where}: cannot read {what}: {exc.reason}") from None
    if not isinstance(data, dict):
        raise InputError(f"{where}: {shape} (got {type(data).__name__})")
    return data


def parse_eval_yaml(text: str, where: str) -> EvalSpec:
    """Parse a benchmark's ``eval.yaml``; ``where`` names it in errors."""
    data = _yaml_mapping(text, where, "eval.yaml", "eval.yaml must be a mapping with 'name' and 'tasks'")
    ids = _task_ids(data.get("tasks"), where)
    return EvalSpec(
        name=str(data.get("name") or ""),
        description=str(data.get("description") or ""),
        evaluation_framework=str(data.get("evaluation_framework") or ""),
        task_ids=tuple(ids),
    )


def parse_mapping(text: str, where: str, task_ids: tuple[str, ...]) -> dict[str, Any]:
    """Check the user's mapping file against the benchmark's declared task ids."""
    data = _yaml_mapping(
        text, where, "the mapping", f"the mapping must be a YAML mapping with keys {', '.join(REQUIRED_MAPPING_KEYS)}"
    )
    _check_keys(data, where)
    _check_values(data, where)
    ignore = data.get("ignore_columns", [])
    if not isinstance(ignore, list) or not all(isinstance(c, str) for c in ignore):
        raise InputError(f"{where}: 'ignore_columns' must be a list of column names")
    columns = data["columns"]
    if not isinstance(columns, dict):
        raise InputError(f"{where}: 'columns' must map each source column to an eval.yaml task id")
    for column, task in columns.items():
        _check_column(column, task, ignore, task_ids, where)
    return data


def _check_keys(data: dict, where: str) -> None:
    """No unknown key, every required one set."""
    unknown = sorted(set(map(str, data)) - set(MAPPING_KEYS))
    if unknown:
        known = "; ".join(f"{k}: {v}" for k, v in MAPPING_KEYS.items())
        raise InputError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; the keys are {known}")
    for key in REQUIRED_MAPPING_KEYS:
        if data.get(key) in (None, "", {}):
            raise InputError(f"{where}: '{key}' is required ({MAPPING_KEYS[key]})")


def _check_values(data: dict, where: str) -> None:
    """The scalar keys: strings where strings are meant, a URL, a direction, a slug, a boolean."""
    for key in ("metric", "direction", "unit", "scale", "source_url", "source_name", "source_commit", "slug"):
        if key in data and not isinstance(data[key], str):
            raise InputError(f"{where}: '{key}' must be a string (got {data[key]!r}); quote it")
    if data.get("source_url") and not re.match(r"^https?://[^/\s]+", data["source_url"]):
        raise InputError(
            f"{where}: 'source_url' must be an absolute http(s) URL (got {data['source_url']!r}); it "
            "becomes source.url of every draft whose ledger row has none"
        )
    if data["direction"] not in DIRECTIONS:
        raise InputError(f"{where}: 'direction' must be one of {', '.join(DIRECTIONS)} (got {data['direction']!r})")
    if "slug" in data and not SLUG.match(data["slug"]):
        raise InputError(f"{where}: 'slug' must be lowercase letters, digits, '.', '_' or '-' (got {data['slug']!r})")
    if not isinstance(data.get("revision_in_claim", False), bool):
        raise InputError(f"{where}: 'revision_in_claim' must be true or false")


def _check_column(column: Any, task: Any, ignore: list[str], task_ids: tuple[str, ...], where: str) -> None:
    """One ``columns`` entry: a column name mapped to a task id eval.yaml declares."""
    declared = ", ".join(task_ids)
    if not isinstance(column, str):
        raise InputError(f"{where}: columns: key {column!r} must be a column name string; quote it")
    if column in ignore:
        raise InputError(f"{where}: column {column!r} is both mapped and listed in ignore_columns")
    if task is None or task == "":
        raise InputError(
            f"{where}: columns.{column}: unmapped column; map it to one of [{declared}] or list it under ignore_columns"
        )
    if not isinstance(task, str) or task not in task_ids:
        hint = (
            " (eval.yaml declares no such aggregate task; never invent an overall/default task)"
            if isinstance(task, str) and task.lower() in AGGREGATE_TASKS
            else ""
        )
        raise InputError(
            f"{where}: columns.{column}: task id {task!r} is not declared in eval.yaml{hint}; "
            f"valid task ids: [{declared}]"
        )


def build(hub, benchmark_id: str, mapping_path: str | Path, revision: str | None = None) -> Contract:
    """Read ``eval.yaml`` at a pinned commit, confirm the benchmark is official, apply the mapping."""
    mapping_path = Path(mapping_path)
    try:
        mapping_text = io.read_text(mapping_path, what="a mapping file")
    except io.ReadError as exc:
        raise InputError(f"{mapping_path}: cannot read the mapping file: {exc.reason}") from None
    info = hub.dataset_info(benchmark_id, revision=revision)
    sha = info.sha
    text = hub.read_file(benchmark_id, "eval.yaml", repo_type="dataset", revision=sha)
    url = f"{hub.endpoint}/datasets/{benchmark_id}/blob/{sha}/eval.yaml"
    spec = parse_eval_yaml(text, url)
    mapping = parse_mapping(mapping_text, str(mapping_path), spec.task_ids)
    return Contract(
        benchmark_id=benchmark_id,
        dataset_sha=sha,
        eval_yaml_url=url,
        official=benchmark_id in hub.official_benchmarks(),
        name=spec.name,
        evaluation_framework=spec.evaluation_framework,
        task_ids=spec.task_ids,
        metric=mapping["metric"],
        direction=mapping["direction"],
        unit=mapping["unit"],
        columns=mapping["columns"],
        ignore_columns=mapping.get("ignore_columns", ()),
        scale=mapping.get("scale", ""),
        source_url=mapping.get("source_url", ""),
        source_name=mapping.get("source_name", ""),
        source_commit=mapping.get("source_commit", ""),
        slug=mapping.get("slug", ""),
        revision_in_claim=mapping.get("revision_in_claim", False),
        requested_revision=revision or "",
        checked_at=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
    )


def load(path: str | Path) -> Contract:
    """Read a contract written by ``checks hf contract``."""
    path = Path(path)
    try:
        data = json.loads(io.read_text(path, what="a contract"))
    except (io.ReadError, ValueError) as exc:
        reason = exc.reason if isinstance(exc, io.ReadError) else exc
        raise InputError(f"{path}: cannot read the contract (run `checks hf contract` to make one): {reason}") from None
    fields = {f.name for f in attrs.fields(Contract)}
    if not isinstance(data, dict) or set(data) - fields or not {"benchmark_id", "task_ids", "columns"} <= set(data):
        raise InputError(f"{path}: not a contract written by `checks hf contract`; regenerate it")
    try:
        loaded = Contract(**data)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{path}: incomplete contract ({exc}); regenerate it with `checks hf contract`") from None
    problem = _loaded_problem(loaded, data)
    if problem:
        raise InputError(f"{path}: {problem}; fix it or regenerate the contract with `checks hf contract`")
    return loaded


def _type_problem(data: dict) -> str | None:
    """A string or boolean field of contract.json holding something else."""
    for field in attrs.fields(Contract):
        value = data.get(field.name, field.default)
        if field.type in ("str", "bool") and not isinstance(value, str if field.type == "str" else bool):
            return f"'{field.name}' must be a {field.type} (got {value!r})"
    return None


def _loaded_problem(contract: Contract, data: dict) -> str | None:
    """What a hand-edited contract.json got wrong (types, names that become paths, undeclared tasks)."""
    return _type_problem(data) or _name_problem(contract) or _task_problem(contract)


def _name_problem(contract: Contract) -> str | None:
    """The benchmark id and slug become repo ids and paths: they must be well formed."""
    if repo_id_problem(contract.benchmark_id):
        return f"'benchmark_id': {repo_id_problem(contract.benchmark_id)}"
    if contract.slug and not SLUG.match(contract.slug):
        return f"'slug' must be lowercase letters, digits, '.', '_' or '-' (got {contract.slug!r})"
    return None


def _task_problem(contract: Contract) -> str | None:
    """The task ids, direction, column map and ignored columns: every score must land on a declared task."""
    if not contract.task_ids or not all(isinstance(t, str) and t.strip() for t in contract.task_ids):
        return f"'task_ids' must be a non-empty list of task id strings (got {list(contract.task_ids)!r})"
    if contract.direction not in DIRECTIONS:
        return f"'direction' must be one of {', '.join(DIRECTIONS)} (got {contract.direction!r})"
    return _column_problem(contract)


def _column_problem(contract: Contract) -> str | None:
    """Every mapped column names a declared task, and the ignored columns are names."""
    for column, task in contract.columns.items():
        if not isinstance(column, str) or not isinstance(task, str) or task not in contract.task_ids:
            return f"'columns': {column!r} must map to one of the task_ids (got {task!r})"
    if not all(isinstance(c, str) for c in contract.ignore_columns):
        return "'ignore_columns' must be a list of column names"
    return None
