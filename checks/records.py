"""Decision records: one JSON line per run of an action, appended to an audit log."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from checks import signing
from checks.config_model import Config, DEFAULT_DECISION_LOG
from checks.context import RunContext
from checks.errors import ConfigError
from checks.model import Action, Verdict
from checks.plugins import _own_version
from checks.redact import MASK, SECRET_NAME, redact_data

SCHEMA_VERSION = 1


def log_path(config: Config, cwd: str | os.PathLike) -> Path:
    path = Path(config.decision_log)
    return path if path.is_absolute() else Path(cwd) / path


#: the suffix every decision log has: a log is JSON lines, and no dotfile or script is one
LOG_SUFFIX = ".jsonl"


def user_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """This user's state directory for arena-checks: ``$XDG_STATE_HOME/arena-checks``, else
    ``~/.local/state/arena-checks`` (where a decision log kept outside every checkout belongs)."""
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_STATE_HOME") or Path.home() / ".local" / "state") / "arena-checks"


def user_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """This user's configuration directory for arena-checks: ``$XDG_CONFIG_HOME/arena-checks``, else
    ``~/.config/arena-checks``; a configuration file there (given with ``--config``) is the user's own."""
    env = os.environ if environ is None else environ
    return Path(env.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "arena-checks"


def check_place(config: Config, path: Path, cwd: str | os.PathLike) -> None:
    """Refuse, before anything runs, a decision log a repository could aim at the user's files.

    The log must end in ``.jsonl`` and, links followed, lie inside the project (the configuration's
    directory, else the working directory). Set by ``--decision-log`` or by a configuration file in the
    user's own configuration directory, it may also lie in the user's state directory
    (:func:`user_state_dir`). A checkout's rules.toml is anyone's text: ``decision_log = "~/.bashrc"``
    would make every run append to a file the user's shell runs. The default log is the working
    directory's, wherever that is.

    :raises ConfigError: (exit 2) naming the key or option, the path and the fix.
    """
    own = config.decision_log_from or (config.path if config.path and _users_own(config.path) else "")
    key = config.decision_log_from or f"{config.path or '<defaults>'}: {config.key('decision_log')}"
    if path.suffix != LOG_SUFFIX:
        raise ConfigError(
            f"{key}: the decision log {path} must be a {LOG_SUFFIX} file; set it to a path such as "
            f".checks/decisions.jsonl"
        )
    if config.decision_log == DEFAULT_DECISION_LOG and not config.decision_log_from:
        return
    project = config.root if config.path else Path(cwd).resolve()
    allowed = [project, user_state_dir().resolve()] if own else [project]
    real = path.resolve()
    if not any(real.is_relative_to(place) for place in allowed):
        where = " or ".join(str(place) for place in allowed)
        raise ConfigError(
            f"{key}: the decision log {path} lies outside {where}"
            + (f" (it resolves to {real})" if real != path.absolute() else "")
            + "; a repository's configuration keeps its log inside the project: set decision_log to a path "
            "inside it (e.g. .checks/decisions.jsonl), or pass --decision-log with a path in your state directory"
        )


def _users_own(path: str) -> bool:
    """Whether the configuration file ``path`` lies in this user's configuration directory."""
    return Path(path).resolve().is_relative_to(user_config_dir().resolve())


def build(
    *,
    ctx: RunContext,
    action: Action,
    verdicts: list[Verdict],
    outcome: str,
    started: dt.datetime,
    finished: dt.datetime,
    versions: Mapping[str, str],
    error: str = "",
) -> dict[str, Any]:
    """The record for one run; secrets are redacted from every string in it."""
    try:
        inputs = dict(action.inputs(ctx))
    except Exception as exc:  # the record must still be written
        inputs = {"<error>": f"inputs could not be digested: {type(exc).__name__}: {exc}"}
    record = {
        "schema": SCHEMA_VERSION,
        "action": ctx.action,
        "target": ctx.target,
        "dry_run": ctx.dry_run,
        "mode": "plan" if ctx.dry_run else "execute",
        "options": _options(ctx.options),
        "inputs": inputs,
        "verdicts": [_verdict(v) for v in verdicts],
        "waivers_used": sorted({w for v in verdicts for w in v.waivers}),
        "suppressions_used": [
            {"rule": code, "path": s.path, "line": s.line, "reason": s.reason}
            for code, used in sorted(ctx.suppression_report.used.items())
            for s in used
        ],
        "config": {"path": ctx.config.path, "sha256": ctx.config.sha256, "overrides": list(ctx.config.overrides)},
        "versions": {"arena-checks": _own_version(), "plugins": dict(sorted(versions.items()))},
        "started": started.isoformat(),
        "finished": finished.isoformat(),
        "outcome": outcome,
    }
    if error:
        record["error"] = error.splitlines()[0] if error else ""
    return json.loads(json.dumps(redact_data(record), default=str))


def _verdict(v: Verdict) -> dict[str, Any]:
    """One rule's verdict as the record keeps it."""
    return {
        "code": v.code,
        "name": v.name,
        "severity": v.severity.value,
        "outcome": v.outcome.value,
        "message": v.message,
        "waivers": list(v.waivers),
        "suppressions": list(v.suppressions),
        "plugin": v.plugin,
    }


def _options(options: Any) -> dict[str, Any]:
    """The action's options as given (JSON values; a value under a secret-looking name masked).

    ``options`` is the action's options object (attrs) or the dict of values. Credentials never
    arrive as options (the command line refuses them), and every string of the record is
    redacted afterwards; the mask by name is the last line of defence.
    """
    values = attrs.asdict(options, recurse=False) if attrs.has(type(options)) else dict(options)
    out = {}
    for name, value in sorted(values.items()):
        if isinstance(value, tuple):
            value = list(value)
        if value is not None and not isinstance(value, (str, int, float, bool, list)):
            value = str(value)
        out[name] = MASK if value and SECRET_NAME.search(name) else value
    return out


#: a decision log is read at most this far (a year of runs is a few MiB); one record at most this long
MAX_LOG_BYTES = 256 * 1024 * 1024
MAX_LINE_BYTES = 4 * 1024 * 1024
_NOT_A_FILE = "is not a regular file (a FIFO, a device or a directory): set decision_log to a file path"


def key_path() -> Path:
    """Where this user's record-signing key lives (see :mod:`checks.signing`)."""
    return signing.key_path()


def check_target(path: Path) -> None:
    """Refuse, before anything runs, a decision log that exists but is not a regular file, and a signing
    key that cannot be read (the record could not be signed once the action has run).

    A FIFO would block every run (a dry run too) on open, and /dev/zero would be read without end.
    :raises ConfigError: naming the path, what it is and the fix.
    """

    signing.key()

    try:
        info = os.stat(path)
    except OSError:  # missing (made at the end) or unreachable: the append at the end says so
        return
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"decision_log {path} {_NOT_A_FILE}")


def append(path: Path, record: Mapping[str, Any]) -> list[str]:
    """Sign ``record`` and append it as one line to ``path``, wholly or not at all; what was repaired.

    The log is opened without blocking and must be a regular file. A last line left without its
    newline by an earlier interrupted write is closed first (its fragment stays a line of its own,
    which readers skip), so the new record is never glued to it. A short write (full disk, a file
    size limit) is retried for the rest; if the rest cannot be written the file is cut back to its
    old length and OSError raised, so no torn record is left behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(signing.sign(record), sort_keys=True, default=str) + "\n").encode()
    notes: list[str] = []
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, f"the log {_NOT_A_FILE}")
        start = os.fstat(fd).st_size
        if start and os.pread(fd, 1, start - 1) != b"\n":
            line = b"\n" + line
            notes.append(f"{path}: its last line had no end (an interrupted write); it was closed and is skipped")
        try:
            _write_all(fd, line)
            os.fsync(fd)
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, start)
            raise
    finally:
        os.close(fd)
    return notes


def _write_all(fd: int, data: bytes) -> None:
    """Write all of ``data``: os.write may write less (a file-size limit, a nearly full disk) and says so only
    in its return value, which a single call left unchecked, tearing the record."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, "no byte could be written")
        view = view[written:]


@attrs.frozen
class Log:
    """A decision log as read: its records (JSON objects) and why each other line was skipped."""

    records: list[dict[str, Any]]
    skipped: list[str]


def signed(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records among ``rows`` this user's arena-checks wrote (their MAC verifies with the key; see
    :mod:`checks.signing`). Pick the candidates first: a check costs one canonical dump and one HMAC.

    :raises ConfigError: the key cannot be read or made.
    """
    key = signing.key()
    return [r for r in rows if signing.authentic(r, key)]


def load(path: Path, *, limit: int = MAX_LOG_BYTES) -> Log:
    """Read the log without blocking and within ``limit`` bytes, skipping lines that are not records.

    :raises OSError: not a regular file, unreadable; :raises ValueError: over ``limit`` (named).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return Log([], [])
    records: list[dict[str, Any]] = []
    skipped: list[str] = []
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"it {_NOT_A_FILE}")
    with os.fdopen(fd, "rb") as fh:
        total = number = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            total, number = total + len(raw), number + 1
            if max(total, info.st_size) > limit:
                raise ValueError(
                    f"it holds more than the {limit}-byte limit of a decision log; move it aside and start a new one"
                )
            problem = _record_of(raw, records)
            if problem:
                skipped.append(f"line {number}: {problem}")
    return Log(records, skipped)


def _record_of(raw: bytes, records: list[dict[str, Any]]) -> str:
    """Append the record ``raw`` holds to ``records``; why it holds none ("" for a blank line)."""
    if len(raw) > MAX_LINE_BYTES:
        return f"over {MAX_LINE_BYTES} bytes"
    if not raw.strip():
        return ""
    try:
        value = json.loads(raw)
    except ValueError:
        return "not JSON" + ("" if raw.endswith(b"\n") else " (cut short by an interrupted write)")
    if not isinstance(value, dict):
        return f"JSON but not an object ({type(value).__name__})"
    records.append(value)
    return ""


def read(path: Path) -> list[dict[str, Any]]:
    """The records of the log (see :func:`load`)."""
    return load(path).records
