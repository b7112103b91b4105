"""BeyondArena's rules (``BA``), bound to actions the TabArena plugin defines.

They read the facts those actions gather (``metadata``, a MethodMetadata, and on ``process`` the raw
results' ``inference``) through ``checks.fact``, and BeyondArena's settings. They judge only BeyondArena's methods: those whose suite matches
``suite_pattern``; every other method passes untouched.
"""

from __future__ import annotations

from pathlib import PurePath

from checks import Finding, at, fact, rule
from beyondarena_checks import settings as settings_mod

#: what the TabArena actions gather, each None when an action does not (or could not: its own rules say why)
declarations = fact("declarations")
declared_metadata = fact("metadata")
raw_inference = fact("inference")
arena = fact("arena")
collection_path = fact("path")


def _located(metadata, message: str) -> Finding:
    """A finding at the info.py declaration when the metadata was read from one."""
    return at(getattr(metadata, "source", None), message)


def _judged(ctx) -> list:
    """Every metadata the run acts on: each declaration of a register (one or several at once), else the
    run's one metadata (none when absent)."""
    several = declarations(ctx)
    if several is not None:
        return [d.metadata for d in several]
    metadata = declared_metadata(ctx)
    return [] if metadata is None else [metadata]


def _beyond_metadata(ctx) -> list:
    """The run's metadata that are BeyondArena methods (a register may act on several)."""
    claims = settings_mod.of(ctx).claims
    return [m for m in _judged(ctx) if claims(getattr(m, "suite", None) or getattr(m, "method", None))]


@rule(
    "BA101",
    "beyondarena-suite-known",
    actions=("precommit-info", "process", "upload", "register"),
    why="BeyondArena publishes under a few fixed suites (one per benchmark edition); a method filed "
    "under a misspelt or stale suite lands in an artifact directory no leaderboard reads.",
    example_fail='MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2025", ...)',
    example_pass='MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", ...)',
)
def suite_known(ctx):
    """A BeyondArena method (suite matching ``suite_pattern``) must use one of the configured ``suites``."""
    known = settings_mod.of(ctx).suites
    for metadata in _beyond_metadata(ctx):
        suite = metadata.suite or metadata.method
        if suite not in known:
            yield _located(
                metadata,
                f"suite {suite!r} looks like BeyondArena's but is not one of its suites "
                f"({', '.join(known)}); fix the suite or add it to [arenas.beyondarena] suites",
            )


@rule(
    "BA201",
    "beyondarena-official-protocol",
    actions=("process", "upload"),
    required=True,
    why="BeyondArena ranks only results fit under its own protocol (8-fold bagging, 5x5 bagging on "
    "tiny tasks, task-specific validation, folds adapted to the classes); results fit under "
    "TabArena's plain '8x1' are not comparable with its leaderboard.",
    example_fail='MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", '
    'validation_protocol="8x1", ...)',
    example_pass='MethodMetadata.config(method="Nori", suite="beyond_iid_benchmark_2026", '
    'validation_protocol="8x1+tiny5x5<=500+task-specific+adapt-classes", ...)',
)
def official_protocol(ctx):
    """A BeyondArena method's declared and recorded validation protocol must be BeyondArena's official one.

    Systems are exempt (their results carry no protocol). To publish a deliberate custom
    run, add a waiver with a reason.
    """
    metadata = next(iter(_beyond_metadata(ctx)), None)  # process and upload act on one method
    if metadata is None or getattr(metadata, "method_class", None) == "system":
        return
    official = settings_mod.of(ctx).official_protocol
    declared = metadata.validation_protocol
    if declared != official:
        what = "declares no validation_protocol" if declared is None else f"declares validation_protocol {declared!r}"
        yield _located(metadata, f"{metadata.method} {what}; BeyondArena's official results need {official!r}")
    inference = raw_inference(ctx)
    for key in getattr(inference, "validation_protocol_keys", None) or ():
        if key is not None and key != official:
            yield _located(
                metadata,
                f"the raw results of {metadata.method} were fit under {key!r}, not BeyondArena's "
                f"official {official!r}; rerun under the official protocol",
            )


@rule(
    "BA301",
    "beyondarena-collection",
    actions=("register",),
    why="BeyondArena's leaderboard is built from its own collection, contexts/beyondarena/methods.py; a "
    "BeyondArena method registered in TabArena's collection (or the reverse) shows up on the wrong "
    "leaderboard and is missing from the right one.",
    example_fail="checks run register --repo tabarena --method-metadata .../info.py:beyond_nori  # --arena tabarena",
    example_pass="checks run register --repo tabarena --arena beyondarena --method-metadata .../info.py:beyond_nori",
)
def collection(ctx):
    """BeyondArena methods are registered with ``--arena beyondarena`` into its ``collection``, and nothing else is."""
    name, path = arena(ctx), collection_path(ctx)
    if name is None:
        return
    settings = settings_mod.of(ctx)
    for metadata in _judged(ctx):
        yield from _collection_findings(settings, metadata, name, path)


def _collection_findings(settings, metadata, arena: str, path):
    suite = metadata.suite or metadata.method
    ours = settings.claims(suite)
    if ours and arena != settings_mod.ARENA:
        yield _located(
            metadata,
            f"{metadata.method} (suite {suite!r}) is a BeyondArena method: register it with "
            f"--arena {settings_mod.ARENA} so it goes to {settings.collection}, not to {arena!r}'s collection",
        )
    elif not ours and arena == settings_mod.ARENA:
        yield _located(
            metadata,
            f"{metadata.method} (suite {suite!r}) is not a BeyondArena method (its suite does not "
            f"match {settings.suite_pattern!r}); register it in its own arena's collection",
        )
    elif ours and path is not None and not PurePath(path).as_posix().endswith(settings.collection):
        yield _located(metadata, f"the collection being edited is {path}, but BeyondArena's is {settings.collection}")


RULES = [suite_known, official_protocol, collection]
