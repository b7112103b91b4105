"""The organisation's rules (``ORG``): one family on TabArena's actions, one on its own audit action."""

from __future__ import annotations

import fnmatch
import re
from urllib.parse import urlsplit

from checks import Finding, at, fact, needs, rule
from orgpolicy_checks import settings as settings_mod

FRIDAY = 4
#: the actions the ORG rules gate: TabArena's upload (and its info-py hook), and this plugin's own audit
#: (``audit.ACTION_NAME``, not imported: a rule module loads no action's module)
UPLOAD = ("upload",)
UPLOAD_AND_HOOK = ("upload", "precommit-info")
AUDIT = ("orgpolicy-audit",)


#: the run's metadata; None when the action gathered none or it could not be read (its own rules say why)
_metadata = fact("metadata")


@rule(
    "ORG101",
    "org-reference-url",
    actions=UPLOAD,
    why="Reviewers and users need the paper or repository behind every method the organisation "
    "publishes; a leaderboard entry nobody can trace back is withdrawn.",
    example_fail='MethodMetadata.config(method="Nori", suite="nori-2026", ag_key="NORI")',
    example_pass='MethodMetadata.config(method="Nori", suite="nori-2026", ag_key="NORI", '
    'reference_url="https://arxiv.org/abs/2601.00001")',
)
def reference_url(ctx):
    """Every uploaded method names an absolute http(s) ``reference_url``."""
    metadata = _metadata(ctx)
    if metadata is None:
        return
    url = metadata.reference_url
    parts = urlsplit(url) if isinstance(url, str) else None
    if not parts or parts.scheme not in ("http", "https") or not parts.netloc:
        got = "it is unset" if url is None else f"got {url!r}"
        yield Finding(f"{metadata.method}: set reference_url to the paper or repository (an http(s) URL; {got})")


@rule(
    "ORG102",
    "org-no-friday-upload",
    actions=UPLOAD,
    why="Nobody is around on the weekend to roll back a bad publication; uploads wait for Monday "
    "unless someone takes responsibility with a waiver.",
    example_fail="checks run upload ...   # on a Friday",
    example_pass="checks run upload ...   # Monday to Thursday, or a waiver for ORG102 with an owner",
)
def no_friday_upload(ctx):
    """Uploads are frozen on Fridays (``friday_freeze``); plans are allowed.

    A plan (``checks run upload`` without ``--no-dry-run``: the upload only plans by default) is
    ``ctx.dry_run``.
    """
    if ctx.dry_run or not settings_mod.of(ctx.config).friday_freeze or ctx.today.weekday() != FRIDAY:
        return
    yield Finding(
        f"uploads are frozen on Fridays ({ctx.today.isoformat()}): wait for Monday or add a "
        f"[[waivers]] entry for ORG102 with a reason, an owner and an expiry"
    )


@rule(
    "ORG103",
    "org-llm-tag",
    actions=UPLOAD_AND_HOOK,
    why="The organisation reports methods that call a large language model separately; the name "
    "says LLM, so the 'with-llm' tag must say it too or the method slips into the plain leaderboard.",
    example_fail='MethodMetadata.config(method="TabLLM", suite="tabllm-2026", ag_key="TABLLM")',
    example_pass='MethodMetadata.config(method="TabLLM", suite="tabllm-2026", ag_key="TABLLM", tags=["with-llm"])',
)
def llm_tag(ctx):
    """A method whose name matches ``llm_pattern`` (default ``*LLM*``) carries the ``with-llm`` tag."""
    metadata = _metadata(ctx)
    if metadata is None or not isinstance(metadata.method, str):
        return
    pattern = settings_mod.of(ctx.config).llm_pattern
    tags = metadata.tags if isinstance(metadata.tags, (list, tuple)) else ()
    if fnmatch.fnmatchcase(metadata.method, pattern) and "with-llm" not in tags:
        yield at(
            getattr(metadata, "source", None),
            f"{metadata.method!r} matches {pattern!r} but lacks the 'with-llm' tag; add tags=['with-llm']",
        )


@rule(
    "ORG201",
    "org-waiver-ticket",
    actions=AUDIT,
    why="A waiver is an exception someone must follow up; a ticket in its reason is where that "
    "follow-up lives, so an expiry does not pass unnoticed.",
    example_fail='[[waivers]]\nrule = "ORG102"\ntarget = "*"\nreason = "release day"\nowner = "ana"\nexpires = 2026-12-31',
    example_pass='[[waivers]]\nrule = "ORG102"\ntarget = "*"\nreason = "release day, OPS-42"\nowner = "ana"\n'
    "expires = 2026-12-31",
)
def waiver_ticket(ctx):
    """Every rules.toml waiver's reason cites a ticket (``ABC-123``, ``#123`` or a URL)."""
    pattern = re.compile(settings_mod.of(ctx.config).ticket_pattern)
    for waiver in ctx.config.waivers:
        if not pattern.search(waiver.reason):
            yield Finding(
                f"waiver for {waiver.rule} on {waiver.target!r} (owner {waiver.owner}) cites no ticket "
                f"in its reason {waiver.reason!r}; add one like OPS-123",
                target=waiver.id,
            )


@rule(
    "ORG202",
    "org-uploads-audited",
    actions=AUDIT,
    why="An upload that ran without the organisation's rules (``-p no:orgpolicy``) skipped every "
    "house rule; the decision log shows it, and the audit makes it visible.",
    example_fail='{"action": "upload", "outcome": "ran", "verdicts": [{"code": "TA401", ...}]}',
    example_pass='{"action": "upload", "outcome": "ran", "verdicts": [{"code": "ORG101", ...}, ...]}',
)
@needs(fact("records"), fact("path"))
def uploads_audited(ctx, records, log):
    """Every upload that ran, as the decision log records it, was judged by the ORG rules."""
    for number, record in records:
        if record.get("action") != "upload" or record.get("outcome") != "ran" or record.get("dry_run"):
            continue
        codes = [v.get("code", "") for v in record.get("verdicts", []) if isinstance(v, dict)]
        if not any(code.startswith("ORG") for code in codes):
            yield Finding(
                f"upload of {record.get('target')!r} at {record.get('started')} ran without the ORG rules "
                f"(orgpolicy was not loaded)",
                target=str(record.get("target")),
                path=log,
                line=number,
            )


RULES = [reference_url, no_friday_upload, llm_tag, waiver_ticket, uploads_audited]
