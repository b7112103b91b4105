"""``checks run log``'s facts: the run, the checkout and what the entry will say.

The entry records the git SHA that was HEAD when the run was set up, recovered from the checkout's
reflog at the time of the earliest ``results.pkl`` of the run; the TA5xx rules judge the log and the
SHA before the action writes the entry these facts render.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from functools import cached_property
from pathlib import Path
from typing import Any

import attrs

from checks import InputError
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.raw import index
from tabarena_checks.raw.index import build_index
from tabarena_checks.raw.inference import infer
from tabarena_checks.raw.reader import CONFIG_DIR

LOG_PATH = Path("packages/tabflow_slurm/BENCHMARK_LOG.md")
DASH = "\u2014"
_REFLOG_LINE = re.compile(r"^(?P<sha>[0-9a-f]{40})\tHEAD@\{(?P<ts>\d+)\}\t(?P<subject>.*)$")


@attrs.frozen
class SetupSha:
    """The SHA recorded in the entry and, in words, how it was determined."""

    sha: str
    how: str


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise InputError(
            f"{repo}: git {' '.join(args)} failed: {proc.stderr.strip() or proc.returncode}; "
            "--repo must be a git checkout of TabArena"
        )
    return proc.stdout


def _iso(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def head_at(repo: Path, when: float) -> SetupSha:
    """The commit HEAD pointed to at ``when`` (the newest reflog move at or before it), else HEAD now."""
    head = _git(repo, "rev-parse", "HEAD").strip()
    moves = []
    for line in _git(repo, "log", "-g", "--format=%H%x09%gd%x09%gs", "--date=unix", "HEAD").splitlines():
        match = _REFLOG_LINE.match(line)
        if match:
            moves.append((int(match["ts"]), match["sha"], match["subject"]))
    before = [m for m in moves if m[0] <= when]
    if before:
        ts, sha, subject = max(before)
        return SetupSha(
            sha, f"reflog: HEAD was {sha[:12]} at the earliest results.pkl ({_iso(when)}), since {_iso(ts)} ({subject})"
        )
    start = f"the reflog starts at {_iso(min(moves)[0])}" if moves else "the reflog is empty"
    return SetupSha(
        head,
        f"fallback: {start}, after the earliest results.pkl ({_iso(when)}); "
        f"recorded the current HEAD {head[:12]} instead: check it by hand",
    )


def data_dir(run: Path) -> Path:
    return run / "data" if (run / "data").is_dir() else run


def method_names(files) -> list[str]:
    """Method names from the config directories (``<method>_c1_BAG_L1`` -> ``<method>``) without decoding."""
    names = set()
    for f in files:
        config = Path(f.path).parts[0]
        match = CONFIG_DIR.match(config)
        names.add(match["prefix"] if match else config)
    return sorted(names)


@attrs.define(slots=False)
class LogFacts:
    """The run, the checkout and what the entry will say (:meth:`gather` builds them from ``checks run log``'s
    options)."""

    options: Any = attrs.field(repr=False)
    repo: Path
    run: Path
    #: the benchmark name of the entry's heading, and why the run was made
    name: str
    purpose: str
    #: the declarations ``--method-metadata`` names, in the order given (none, one, or each method of a batch)
    metadata: tuple[MethodMetadata, ...]
    log_path: Path
    data_dir: Path
    #: the run's results.pkl files (walked, not decoded)
    files: list = attrs.field(repr=False)

    @classmethod
    def gather(cls, options: Any) -> LogFacts:
        repo, run = Path(options.repo), Path(options.run)
        data = data_dir(run)
        return cls(
            options=options,
            repo=repo,
            run=run,
            name=options.benchmark_name.strip(),
            purpose=(options.purpose or "").strip(),
            metadata=tuple(metadata_load.load(ref) for ref in metadata_load.references(options.method_metadata)),
            log_path=repo / LOG_PATH,
            data_dir=data,
            files=index.scan(data) if data.is_dir() else [],
        )

    @cached_property
    def log_text(self) -> str | None:
        try:
            return self.log_path.read_text(encoding="utf-8")
        except OSError:
            return None

    @property
    def logged(self) -> bool:
        pattern = re.compile(rf"^## .* {DASH} {re.escape(self.name)}\s*$", re.M)
        return bool(self.log_text and pattern.search(self.log_text))

    @cached_property
    def started(self) -> float | None:
        """The earliest results.pkl mtime of the run (seconds), when there is one."""
        return min(f.mtime_ns for f in self.files) / 1e9 if self.files else None

    @cached_property
    def sha(self) -> SetupSha | str:
        """The SHA at setup time, or why it could not be determined."""
        try:
            return head_at(self.repo, self.started if self.started is not None else dt.datetime.now().timestamp())
        except InputError as exc:
            return str(exc)

    @cached_property
    def protocol(self) -> str:
        """The protocol every declaration names (each once, in order), else the run's own record."""
        declared = [m.validation_protocol for m in self.metadata]
        if declared and all(declared):
            return ", ".join(dict.fromkeys(declared))

        inferred = infer(build_index(self.data_dir)).validation_protocol
        return inferred or "not recorded in the raw results (legacy run)"

    def entry(self) -> str:
        day = dt.datetime.fromtimestamp(self.started or 0, dt.timezone.utc).date().isoformat()
        metas = self.metadata
        models = ", ".join(m.method for m in metas) if metas else ", ".join(method_names(self.files))
        if metas:
            plural = "s" if len(metas) > 1 else ""
            suites = ", ".join(f"`{m.effective_suite}`" for m in metas)
            variables = ", ".join(f"`{m.variable or m.source}`" for m in metas)
            notes = f"processed suite id{plural} {suites}; metadata variable{plural} {variables}"
        else:
            notes = "no --method-metadata given: suite id and metadata variable not recorded"
        sha = self.sha.sha if isinstance(self.sha, SetupSha) else "unknown"
        return "\n".join(
            [
                f"## {day} {DASH} {self.name}",
                "",
                f"**Model(s):** {models}",
                f"**Git SHA:** `{sha}`",
                f"**Purpose:** {self.purpose or 'not given'}",
                f"**Notes:** {notes}",
                f"**Validation protocol:** {self.protocol}",
                "",
            ]
        )
