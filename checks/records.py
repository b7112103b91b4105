"""Decision records: one JSON line per run of an action, appended to an audit log."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks.config import Config
from checks.context import RunContext
from checks.model import Action, Verdict
from checks.plugins import _own_version
from checks.redact import MASK, SECRET_NAME, redact_data

SCHEMA_VERSION = 1


def log_path(config: Config, cwd: str | os.PathLike) -> Path:
    path = Path(config.decision_log)
    return path if path.is_absolute() else Path(cwd) / path


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
            for code, used in sorted(ctx.suppression_report.used.items()) for s in used
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
    import attrs

    values = attrs.asdict(options, recurse=False) if attrs.has(type(options)) else dict(options)
    out = {}
    for name, value in sorted(values.items()):
        if isinstance(value, tuple):
            value = list(value)
        if value is not None and not isinstance(value, (str, int, float, bool, list)):
            value = str(value)
        out[name] = MASK if value and SECRET_NAME.search(name) else value
    return out


def append(path: Path, record: Mapping[str, Any]) -> None:
    """Append one line with a single write on an O_APPEND descriptor, then fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, sort_keys=True, default=str) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
