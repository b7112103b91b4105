"""``checks tabarena publish PLAN``: the single commands of every method of a plan, each step a process of its own.

The maintainer's batch flow, with the gates of the single commands: ``jobs`` lanes, each running
one step at a time, take the next step in the plan's order, a method's upload (dry
run, then the real one with ``--no-dry-run``) as soon as its processing passed before the next
method's processing. So with one lane (the default on a machine of two cores, :mod:`.batch_lanes`)
each method is published before the next is processed and the batch's memory is one step's;
with two, a method's uploads run while the next method is processing. Register and log edit the
checkout once the uploads are over, one edit each: register every method whose own steps all passed
in one ``checks run register`` (one write of methods.py, one decision record), the log entry (one for
the batch) only when every method did, so the log never names a batch that is half-published.

Every step is ``checks run ACTION`` forked from the step server (:mod:`.batch_steps`), so nothing
bypasses a rule, a waiver or a decision record, and a rerun of the plan skips what the signed
decision records show done for the same inputs (:mod:`.batch_resume`). A method whose processing is
not verified, in this batch or an earlier one, is never uploaded.
"""

from __future__ import annotations

import collections
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import attrs

from checks import ChecksError
from tabarena_checks.cache.layout import MethodCache, cache_root
from tabarena_checks.facts.process import ProcessFacts
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.publish import batch_resume, batch_steps
from tabarena_checks.publish.batch_plan import MethodPlan, Plan
from tabarena_checks.publish.batch_steps import BLOCKED, DONE, NOT_RUN, SKIPPED, StepResult

#: the name the batch's own step (the log entry) is reported under
BATCH = "(batch)"


class Events(Protocol):
    """Who watches the batch: the live view or the one-line-per-event printer."""

    def started(self, method: str, step: str) -> None: ...
    def said(self, method: str, step: str, line: str) -> None: ...
    def finished(self, method: str, result: StepResult) -> None: ...


@attrs.frozen
class Settings:
    """How the batch runs (the command line's choices), apart from what it runs (the plan)."""

    dry_run: bool = True
    #: lanes: steps run at the same time
    jobs: int = 1
    #: seconds without progress after which a step is stopped as STALLED
    stall_after: float = 600.0
    #: the ``checks`` options every child gets before ``run`` (``-p``, ``--no-local-plugins``, ``--config``)
    root_args: tuple[str, ...] = ()
    cwd: Path = attrs.field(factory=Path.cwd)
    #: the decision log the children append to (read to skip what is done)
    decision_log: Path = Path(".checks/decisions.jsonl")
    #: the digest of the configuration file the steps judge under (a step judged under another is not skipped)
    config_sha256: str = ""


@attrs.define
class MethodOutcome:
    """A method's steps as they ended, in the order they ran."""

    name: str
    steps: list[StepResult] = attrs.Factory(list)

    def passed(self) -> bool:
        """Every step done now or earlier: what register and log wait for."""
        return all(s.status in (DONE, SKIPPED) for s in self.steps)


def _opt(flag: str, value: object) -> list[str]:
    return [] if value is None else [flag, str(value)]


def _refs(methods) -> list[str]:
    """``--method-metadata`` of each method, in plan order (register and log name every method they cover)."""
    return [arg for m in methods for arg in ("--method-metadata", m.method_metadata)]


class _Work:
    """What the lanes take next: a processed method's upload first, else the next method's processing (so a
    method is published before another is processed); None once nothing is left and no lane can add more."""

    def __init__(self, methods: list[MethodPlan]):
        self.processing = collections.deque(methods)
        self.uploads: collections.deque[MethodPlan] = collections.deque()
        self.busy = 0
        self.changed = threading.Condition()

    def take(self) -> tuple[str, MethodPlan] | None:
        with self.changed:
            while not (self.uploads or self.processing):
                if not self.busy:
                    return None
                self.changed.wait()
            self.busy += 1
            return ("upload", self.uploads.popleft()) if self.uploads else ("process", self.processing.popleft())

    def done(self, upload: MethodPlan | None) -> None:
        """A lane finished its step; ``upload``: the method whose upload is now due."""
        with self.changed:
            self.busy -= 1
            if upload is not None:
                self.uploads.append(upload)
            self.changed.notify_all()


class Batch:
    """One run of a plan; :meth:`run` returns each method's steps (and the batch's log step last)."""

    def __init__(self, plan: Plan, settings: Settings, events: Events, children: batch_steps.Children | None = None):
        self.plan, self.settings, self.events = plan, settings, events
        self.children = children or batch_steps.Children()
        self.outcomes = {m.name: MethodOutcome(m.name) for m in plan.methods}
        self.env = batch_steps.step_env()
        self.records = batch_resume.signed_records(settings.decision_log, settings.config_sha256)
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- the options of each step

    def _cache_root(self) -> str | None:
        return None if self.plan.cache_root is None else str(self.plan.cache_root)

    def process_options(self, m: MethodPlan) -> dict[str, object]:
        """The options a process run of ``m`` records (a done one is matched on them)."""
        return {
            "run_data_dir": str(m.data),
            "method_metadata": m.method_metadata,
            "cache_root": self._cache_root(),
            "method": m.method,
            "task_metadata": None if m.task_metadata is None else str(m.task_metadata),
            "expect_validation_protocol": self.plan.expect_validation_protocol,
            "force": False,
            "no_cache_raw": False,
            "engine": "native",
            "ignore_metadata_mismatch": False,  # a run that waived the mismatch rules is no evidence for the batch
        }

    def upload_options(self, m: MethodPlan) -> dict[str, object]:
        """The options an upload of ``m`` records (a done one is matched on them)."""
        return {
            "method_metadata": m.method_metadata,
            "cache_root": self._cache_root(),
            "no_upload_raw": self.plan.no_upload_raw,
            "verified": m.verified,
            "expect_validation_protocol": self.plan.expect_validation_protocol,
        }

    def _process_args(self, m: MethodPlan) -> list[str]:
        o = self.process_options(m)
        return [
            str(m.data),
            "--method-metadata",
            m.method_metadata,
            *_opt("--cache-root", o["cache_root"]),
            *_opt("--method", m.method),
            *_opt("--task-metadata", o["task_metadata"]),
            *_opt("--expect-validation-protocol", o["expect_validation_protocol"]),
        ]

    def _upload_args(self, m: MethodPlan, *, real: bool) -> list[str]:
        o = self.upload_options(m)
        return [
            "--method-metadata",
            m.method_metadata,
            *_opt("--cache-root", o["cache_root"]),
            *(["--no-upload-raw"] if self.plan.no_upload_raw else []),
            *(["--verified"] if m.verified else []),
            *_opt("--expect-validation-protocol", o["expect_validation_protocol"]),
            *(["--no-dry-run"] if real else []),
        ]

    def _edit_mode(self) -> list[str]:
        return ["--dry-run"] if self.settings.dry_run else []

    # ----------------------------------------------------------------- running steps

    def _note(self, method: str, result: StepResult) -> StepResult:
        with self._lock:
            self.outcomes.setdefault(method, MethodOutcome(method)).steps.append(result)
        self.events.finished(method, result)
        return result

    def _step(self, method: str, label: str, action: str, args: list[str]) -> StepResult:
        return self._shared_step([method], label, action, args)

    def _shared_step(self, methods: list[str], label: str, action: str, args: list[str]) -> StepResult:
        """One child run that is the step ``label`` of every method of ``methods`` (register: one edit for all)."""
        for method in methods:
            self.events.started(method, label)

        def said(line: str) -> None:
            for method in methods:
                self.events.said(method, label, line)

        result = self.children.run(
            label,
            batch_steps.checks_args(self.settings.root_args, action, args),
            cwd=self.settings.cwd,
            env=self.env,
            stall_after=self.settings.stall_after,
            on_line=said,
        )
        for method in methods:
            self._note(method, result)
        return result

    def _cache(self, m: MethodPlan) -> MethodCache:
        return MethodCache.of(cache_root(self._cache_root()), metadata_load.load(m.method_metadata))

    def _processed(self, m: MethodPlan) -> str:
        """Why ``m``'s processing is verified by an earlier run ("" when it is not)."""
        facts = ProcessFacts(
            data_dir=m.data, metadata_ref=m.method_metadata, method=m.method, task_metadata_file=m.task_metadata
        )
        try:
            cache = self._cache(m)
        except (ChecksError, ValueError):
            return ""
        return batch_resume.process_evidence(self.records, self.process_options(m), facts, cache)

    def _process(self, m: MethodPlan) -> bool:
        """Process ``m`` (or find it processed); whether its upload is due."""
        evidence = self._processed(m)
        if "process" in m.steps:
            if evidence:
                self._note(m.name, StepResult("process", SKIPPED, detail=evidence))
            elif self._step(m.name, "process", "process", self._process_args(m)).status != DONE:
                return False
        elif "upload" in m.steps and not evidence:
            detail = "processing is not verified (no passed process run of these inputs): add the step process"
            self._note(m.name, StepResult("upload", BLOCKED, detail=detail))
            return False
        return "upload" in m.steps

    def _lane(self, work: _Work) -> None:
        """One lane: steps taken one after another until none is left."""
        while (task := work.take()) is not None:
            kind, m = task
            upload = False
            try:
                if kind == "process":
                    upload = self._process(m)
                else:
                    self._upload(m)
            finally:
                work.done(m if upload else None)

    def _upload(self, m: MethodPlan) -> None:
        if self.settings.dry_run:
            self._step(m.name, "upload dry-run", "upload", self._upload_args(m, real=False))
            return
        try:
            evidence = batch_resume.upload_evidence(self.records, self.upload_options(m), self._cache(m))
        except (ChecksError, ValueError):  # the declaration changed since the plan was read: the step says why
            evidence = ""
        if evidence:
            self._note(m.name, StepResult("upload", SKIPPED, detail=evidence))
            return
        if self._step(m.name, "upload dry-run", "upload", self._upload_args(m, real=False)).status == DONE:
            self._step(m.name, "upload", "upload", self._upload_args(m, real=True))

    def _uploaded(self, m: MethodPlan) -> bool:
        """Whether ``m``'s upload is verified: passed in this batch (only planned, in a dry run), or by an earlier
        run of the same cache."""
        if any(s.step in ("upload", "upload dry-run") for s in self.outcomes[m.name].steps):
            return self.outcomes[m.name].passed()
        try:
            return bool(batch_resume.upload_evidence(self.records, self.upload_options(m), self._cache(m)))
        except (ChecksError, ValueError):
            return False

    def _register(self) -> None:
        """One ``checks run register`` for every method whose steps all passed and whose upload is verified: one
        edit of methods.py, one decision record naming them all; any other method is not registered."""
        ready = []
        for m in self.plan.methods:
            if "register" not in m.steps:
                continue
            if not self.outcomes[m.name].passed():
                self._note(m.name, StepResult("register", NOT_RUN, detail="an earlier step of the method did not pass"))
            elif not self._uploaded(m):
                detail = "the upload is not verified (no passed upload of this cache): add the step upload"
                self._note(m.name, StepResult("register", BLOCKED, detail=detail))
            else:
                ready.append(m)
        if not ready:
            return
        args = [*_refs(ready), "--repo", str(self.plan.repo), "--arena", self.plan.arena, *self._edit_mode()]
        self._shared_step([m.name for m in ready], "register", "register", args)

    def _log(self) -> None:
        log = self.plan.log
        if log is None or not any("log" in m.steps for m in self.plan.methods):
            return
        if not all(o.passed() for o in self.outcomes.values()):
            detail = "waits for every method of the batch to pass: rerun the plan once they do"
            self._note(BATCH, StepResult("log", NOT_RUN, detail=detail))
            return
        args = ["--run", str(log.run), "--repo", str(self.plan.repo), "--benchmark-name", log.benchmark_name]
        self._step(
            BATCH, "log", "log", [*args, *_refs(self.plan.methods), *_opt("--purpose", log.purpose), *self._edit_mode()]
        )

    def run(self) -> list[MethodOutcome]:
        """Every step of the plan; a Ctrl-C or SIGTERM stops the running steps (each ends whole or not at all, as
        the single commands do when stopped), starts no other, and is raised again."""
        jobs = max(1, self.settings.jobs)
        work = _Work(list(self.plan.methods))
        try:
            with ThreadPoolExecutor(jobs, thread_name_prefix="lane") as lanes:
                try:
                    for future in [lanes.submit(self._lane, work) for _ in range(jobs)]:
                        future.result()  # a bug in the batch is raised here, not swallowed by the pool
                except BaseException:  # Ctrl-C, SIGTERM (checks turns it into a KeyboardInterrupt), a bug
                    self.children.stop_all()
                    raise
            self._register()
            self._log()
        finally:
            self.children.close()
        return list(self.outcomes.values())


def exit_code(outcomes: list[MethodOutcome]) -> int:
    """0 every step done or skipped, 1 some blocked, 4 some failed or stalled (the worse wins)."""
    statuses = {s.status for o in outcomes for s in o.steps}
    if statuses & {batch_steps.FAILED, batch_steps.STALLED}:
        return 4
    return 1 if BLOCKED in statuses else 0
