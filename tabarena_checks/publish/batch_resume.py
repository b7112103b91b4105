"""What an earlier run already did, read from the decision log, so a rerun of a plan skips it.

A step counts as done only on evidence the upload itself would accept: a decision record this
user's arena-checks signed (:func:`checks.records.signed`), of the same action on the same
options under the same configuration, that ran for real and passed, with the same input digests
as the inputs have now. For
process the cache must also still be exactly what that run wrote (its manifest, whose digest the
record holds): a cache changed since is processed again, and never uploaded on old evidence.
Anything else (no record, a record of other inputs, an unreadable log) means "not done": the step
runs, and its own gate decides.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks import ChecksError, records
from tabarena_checks.cache import integrity
from tabarena_checks.cache.layout import MethodCache
from tabarena_checks.facts.process import ProcessFacts
from tabarena_checks.publish.upload import cache_inputs


def signed_records(log: Path, config_sha256: str) -> list[Mapping[str, Any]]:
    """The signed records of the decision log judged under this configuration (the file's digest), newest
    first; none when the log cannot be read (then nothing is skipped). A step judged under another
    configuration (other waivers, other severities) is judged again."""
    try:
        rows = records.load(log).records
        candidates = [
            r
            for r in rows
            if r.get("action") in ("process", "upload")
            and r.get("outcome") == "ran"
            and isinstance(r.get("config"), dict)
            and r["config"].get("sha256") == config_sha256
        ]
        return list(reversed(records.signed(candidates)))
    except (OSError, ValueError, ChecksError):
        return []


def _same_options(record: Mapping[str, Any], options: Mapping[str, Any]) -> bool:
    recorded = record.get("options")
    return isinstance(recorded, dict) and all(recorded.get(k) == v for k, v in options.items())


def _ran(record: Mapping[str, Any], action: str) -> bool:
    return record.get("action") == action and record.get("outcome") == "ran" and not record.get("dry_run")


def process_evidence(
    log: list[Mapping[str, Any]], options: Mapping[str, Any], facts: ProcessFacts, cache: MethodCache
) -> str:
    """Why the method's processing is verified already ("" when it is not): a passed process record of these
    options and inputs, and the cache still as that run wrote it."""
    try:
        digests = facts.digests()
        source = json.loads(cache.source_record.read_text(encoding="utf-8"))
        manifest = source[integrity.MANIFEST]
        manifest_digest = integrity.manifest_digest(manifest)
    except (OSError, ValueError, KeyError, TypeError, ChecksError):
        return ""
    for record in log:
        inputs = record.get("inputs") or {}
        if not (_ran(record, "process") and _same_options(record, options)):
            continue
        if inputs.get(integrity.DECISION_KEY) != manifest_digest:
            continue
        if any(inputs.get(k) != v for k, v in digests.items()):
            continue
        if integrity.differences(cache.path, manifest):
            return ""
        return f"processed already by the run of {record.get('finished', '?')} (same inputs; cache unchanged)"
    return ""


def upload_evidence(log: list[Mapping[str, Any]], options: Mapping[str, Any], cache: MethodCache) -> str:
    """Why the method's upload is done already ("" when it is not): a passed real upload of these options
    whose recorded cache digests (metadata.yaml, the source record, the result tables) are the cache's now."""
    try:
        now = cache_inputs(cache)
    except OSError:
        return ""
    for record in log:
        if _ran(record, "upload") and _same_options(record, options) and record.get("inputs") == now:
            return f"uploaded and verified already by the run of {record.get('finished', '?')} (same cache)"
    return ""
