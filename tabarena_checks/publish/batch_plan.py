"""The plan file of ``checks tabarena publish``: which methods to publish and which steps to run.

A plan is TOML (documented in docs/tabarena-publish.md, its JSON Schema beside this module as
``batch.schema.json``). Everything a step will need is checked here, before any step runs, so a
wrong path or a misspelt variable is one exit-2 message naming the plan's line, never a batch
that stops half-way: every key is known (an unknown one is refused, fail closed), every data
directory exists, every ``--method-metadata`` reference reads, no step is named twice, and the
steps that edit the checkout have one.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from checks import ChecksError, UsageError, io, suggest
from tabarena_checks.cache.layout import MethodCache
from tabarena_checks.metadata import load as metadata_load

#: the steps of one method, in the order they run
STEPS = ("process", "upload", "register", "log")
TOP_KEYS = {"cache_root", "repo", "arena", "steps", "expect_validation_protocol", "no_upload_raw", "log", "methods"}
LOG_KEYS = {"run", "benchmark_name", "purpose"}
METHOD_KEYS = {"name", "data", "method_metadata", "method", "task_metadata", "steps", "verified"}
MAX_PLAN_BYTES = 1024 * 1024


@attrs.frozen
class MethodPlan:
    """One method of the plan: its inputs (paths resolved against the plan's folder) and its steps."""

    name: str
    data: Path
    method_metadata: str
    steps: tuple[str, ...]
    #: the line of its ``[[methods]]`` header, for messages
    line: int
    method: str | None = None
    task_metadata: Path | None = None
    #: upload's ``--verified``: the declaration's ``verified=True`` (TabArena's default) may be published
    verified: bool = False
    #: the method its declaration names, and ``artifacts/<suite>/methods/<method>``: the cache it writes and its
    #: prefix in R2
    declares: str = ""
    publishes: str = ""


@attrs.frozen
class LogPlan:
    """The batch's one BENCHMARK_LOG.md entry."""

    run: Path
    benchmark_name: str
    purpose: str | None = None


@attrs.frozen
class Plan:
    path: Path
    methods: tuple[MethodPlan, ...]
    cache_root: Path | None = None
    repo: Path | None = None
    arena: str = "tabarena"
    expect_validation_protocol: str | None = None
    no_upload_raw: bool = False
    log: LogPlan | None = None


class _Lines:
    """Where each key of the plan was written: TOML parsers keep no positions, so the text is searched."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.headers = [i + 1 for i, line in enumerate(self.lines) if re.match(r"\s*\[\[\s*methods\s*\]\]", line)]
        log = [i + 1 for i, line in enumerate(self.lines) if re.match(r"\s*\[\s*log\s*\]", line)]
        self.log_header = log[0] if log else 0

    def _section_end(self, start: int) -> int:
        for i in range(start, len(self.lines)):
            if re.match(r"\s*\[", self.lines[i]):
                return i
        return len(self.lines)

    def key(self, key: str, section: int = 0) -> int:
        """The line of ``key = ...`` in the section starting at line ``section`` (0: the top), else its header."""
        end = self._section_end(section)
        for i in range(section, end):
            if re.match(rf"\s*{re.escape(key)}\s*=", self.lines[i]):
                return i + 1
        return section or 1


def _fail(plan: Path, line: int, message: str) -> UsageError:
    return UsageError(f"{plan}:{line}: {message}")


def read(path: str | Path) -> Plan:
    """The plan at ``path``, every input checked; :raises UsageError: naming the line and the fix."""
    path = Path(path)
    try:
        text = io.read_text(path, limit=MAX_PLAN_BYTES, what="the plan")
    except (OSError, ChecksError) as exc:
        why = f"{path}: {exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise UsageError(
            f"cannot read the plan: {why}; give the path of a plan file (docs/tabarena-publish.md)"
        ) from None
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"at line (\d+)", str(exc))
        line = at[1] if at else len(text.splitlines()) or 1  # tomllib says "at end of document" for the last line
        raise UsageError(f"{path}:{line}: not valid TOML ({exc}); fix the plan") from None
    return _Reader(path, text).plan(raw)


class _Reader:
    def __init__(self, path: Path, text: str):
        self.path, self.where = path, _Lines(text)
        self.base = path.resolve().parent

    def fail(self, line: int, message: str) -> UsageError:
        return _fail(self.path, line, message)

    def _unknown(self, table: Mapping[str, Any], known: set[str], section: int, what: str) -> None:
        for key in table:
            if key not in known:
                raise self.fail(
                    self.where.key(key, section),
                    f"{what}: unknown key {key!r}{suggest.did_you_mean(key, sorted(known))} "
                    f"(known: {', '.join(sorted(known))}); remove or correct it",
                )

    def _str(self, table: Mapping[str, Any], key: str, section: int, what: str, *, required: bool = False):
        value = table.get(key)
        if value is None:
            if required:
                raise self.fail(section or 1, f'{what}: {key} is missing; add {key} = "..."')
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.fail(self.where.key(key, section), f"{what}.{key}: expected a non-empty string")
        return value

    def _path(self, value: str | None) -> Path | None:
        return None if value is None else (self.base / value).resolve()

    def plan(self, raw: dict[str, Any]) -> Plan:
        self._unknown(raw, TOP_KEYS, 0, "plan")
        default_steps = self._steps(raw.get("steps", list(STEPS[:2])), 0, "steps")
        tables = raw.get("methods")
        if not isinstance(tables, list) or not tables:
            raise self.fail(1, "the plan lists no method: add a [[methods]] table per method")
        methods = tuple(self._method(i, t, default_steps) for i, t in enumerate(tables))
        self._distinct(methods)
        repo = self._path(self._str(raw, "repo", 0, "plan"))
        plan = Plan(
            path=self.path,
            methods=methods,
            cache_root=self._path(self._str(raw, "cache_root", 0, "plan")),
            repo=repo,
            arena=self._str(raw, "arena", 0, "plan") or "tabarena",
            expect_validation_protocol=self._str(raw, "expect_validation_protocol", 0, "plan"),
            no_upload_raw=self._flag(raw, "no_upload_raw"),
            log=self._log(raw.get("log"), methods),
        )
        self._checkout(plan)
        return plan

    def _flag(self, raw: Mapping[str, Any], key: str, section: int = 0, what: str = "plan") -> bool:
        value = raw.get(key, False)
        if not isinstance(value, bool):
            raise self.fail(self.where.key(key, section), f"{what}.{key}: expected true or false")
        return value

    def _steps(self, value: Any, section: int, what: str) -> tuple[str, ...]:
        line = self.where.key("steps", section)
        if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
            raise self.fail(line, f'{what}: expected a list of steps such as ["process", "upload"]')
        seen: set[str] = set()
        for step in value:
            if step not in STEPS:
                hint = suggest.did_you_mean(step, STEPS)
                raise self.fail(line, f"{what}: unknown step {step!r}{hint} (known: {', '.join(STEPS)})")
            if step in seen:
                raise self.fail(line, f"{what}: the step {step!r} is named twice; name each step once")
            seen.add(step)
        return tuple(s for s in STEPS if s in seen)

    def _method(self, i: int, table: Any, default_steps: tuple[str, ...]) -> MethodPlan:
        header = self.where.headers[i] if i < len(self.where.headers) else 1
        what = f"methods[{i + 1}]"
        if not isinstance(table, dict):
            raise self.fail(header, f"{what}: expected a [[methods]] table")
        self._unknown(table, METHOD_KEYS, header, what)
        data = self._path(self._str(table, "data", header, what, required=True))
        if not data.is_dir():
            raise self.fail(
                self.where.key("data", header),
                f"{what}.data: the directory {data} does not exist; give the run's data folder "
                "(relative paths are read from the plan's folder)",
            )
        ref = self._ref(self._str(table, "method_metadata", header, what, required=True), header, what)
        steps = self._steps(table["steps"], header, f"{what}.steps") if "steps" in table else default_steps
        task = self._path(self._str(table, "task_metadata", header, what))
        if task is not None and not task.is_file():
            raise self.fail(self.where.key("task_metadata", header), f"{what}.task_metadata: no file {task}")
        meta = metadata_load.load(ref)
        return MethodPlan(
            name=self._str(table, "name", header, what) or meta.method,
            data=data,
            method_metadata=ref,
            steps=steps,
            line=header,
            method=self._str(table, "method", header, what),
            task_metadata=task,
            verified=self._flag(table, "verified", header, what),
            declares=meta.method,
            publishes=MethodCache.of(Path(), meta).rel,
        )

    def _ref(self, ref: str, header: int, what: str) -> str:
        """The reference with its info.py made absolute, read once here so a bad one stops the plan."""
        path, sep, variable = ref.rpartition(":")
        if sep and path.endswith(".py"):
            ref = f"{self._path(path)}:{variable}"
        try:
            metadata_load.load(ref)
        except ChecksError as exc:
            raise self.fail(self.where.key("method_metadata", header), f"{what}.method_metadata: {exc}") from None
        return ref

    def _distinct(self, methods: tuple[MethodPlan, ...]) -> None:
        """Each method once, and each in a cache of its own: two declarations of one method and suite would
        process into one cache directory and upload to one R2 prefix (the second refused, or replacing the first)."""
        seen: dict[str, int] = {}
        caches: dict[str, int] = {}
        for m in methods:
            if m.name in seen:
                raise self.fail(
                    m.line,
                    f"the method {m.name!r} is listed twice (first at line {seen[m.name]}); "
                    'list each method once, or set name = "..." to tell them apart',
                )
            if m.publishes in caches:
                raise self.fail(
                    m.line,
                    f"{m.name!r} declares the same method and suite as the method at line {caches[m.publishes]} "
                    f"(both would write {m.publishes} in the cache and in R2); give each declaration its own suite",
                )
            seen[m.name], caches[m.publishes] = m.line, m.line
        registered: dict[str, int] = {}
        for m in (m for m in methods if "register" in m.steps):
            if m.declares in registered:
                raise self.fail(
                    m.line,
                    f"{m.name!r} and the method at line {registered[m.declares]} both declare {m.declares!r} and both "
                    "have the step register: one entry would replace the other (TA501 refuses them all); "
                    'give one of them steps = ["process", "upload"]',
                )
            registered[m.declares] = m.line

    def _log(self, table: Any, methods: tuple[MethodPlan, ...]) -> LogPlan | None:
        header = self.where.log_header
        wanted = any("log" in m.steps for m in methods)
        if table is None:
            if wanted:
                raise self.fail(1, "a method has the step 'log' but the plan has no [log] table with benchmark_name")
            return None
        if not isinstance(table, dict):
            raise self.fail(header or 1, "log: expected a [log] table")
        self._unknown(table, LOG_KEYS, header, "log")
        run = self._path(self._str(table, "run", header, "log")) or methods[0].data
        if not run.is_dir():
            raise self.fail(self.where.key("run", header), f"log.run: the directory {run} does not exist")
        return LogPlan(
            run=run,
            benchmark_name=self._str(table, "benchmark_name", header, "log", required=True),
            purpose=self._str(table, "purpose", header, "log"),
        )

    def _checkout(self, plan: Plan) -> None:
        edits = sorted({s for m in plan.methods for s in m.steps if s in ("register", "log")})
        if edits and plan.repo is None:
            raise self.fail(1, f'the steps {", ".join(edits)} edit a TabArena checkout: add repo = "path/to/tabarena"')
        if edits and not plan.repo.is_dir():
            raise self.fail(self.where.key("repo"), f"plan.repo: the directory {plan.repo} does not exist")
