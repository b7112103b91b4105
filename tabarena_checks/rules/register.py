"""TA5xx: registering a method in an arena's methods.py, and logging its run in BENCHMARK_LOG.md.

The rules read the facts ``checks run register`` and ``log`` gathered (:mod:`tabarena_checks.facts.register`,
:mod:`tabarena_checks.facts.log`); they write nothing.
"""

from __future__ import annotations

import unicodedata

from checks import Finding, Severity, rule
from tabarena_checks.facts.constants import COLLECTION_ARG, GROUPS, LOG, REGISTER, SUPERSEDED


@rule(
    "TA501",
    "register-method-suite-unique",
    actions=REGISTER,
    why="TabArena looks a method up by (method, suite) and raises LookupError when two entries match; "
    "a second entry with the same pair would break every leaderboard that loads the collection.",
    example_fail="collection holds nori_method_metadata (Nori, nori-2026-09); registering another info.py "
    "variable declaring method='Nori', suite='nori-2026-09'",
    example_pass="registering method='Nori', suite='nori-2026-11' (a rerun: the entry is swapped)",
)
def method_suite_unique(ctx):
    """After registering, no two collection entries share the same (method, suite); of several declarations
    registered at once, each is judged, and no two may declare the same method."""
    facts = ctx.facts
    replaced = {d.replaced for d in facts.declarations} - {None}
    seen: dict[tuple[str, str], str] = {}
    for entry in facts.entries:
        if entry.metadata is None or entry.name in replaced:
            continue
        key = (entry.metadata.method, entry.metadata.effective_suite)
        if key in seen:
            yield Finding(
                f"{entry.name} and {seen[key]} both declare method={key[0]!r}, suite={key[1]!r} in the "
                "collection already",
                path=str(facts.path),
            )
        seen[key] = entry.name
        for d in facts.declarations:
            new = d.metadata
            if key == (new.method, new.effective_suite) and (entry.module, entry.metadata.variable) != (
                d.module,
                new.variable,
            ):
                yield Finding(
                    f"{entry.name} ({entry.module}) already declares method={new.method!r}, "
                    f"suite={new.effective_suite!r}: give the rerun its own suite",
                    path=str(facts.path),
                    target=d.target,
                )
    yield from _declared_twice(facts)


def _declared_twice(facts):
    """Two declarations of one register naming the same method: one would swap out the other's entry."""
    first: dict[str, str] = {}
    for d in facts.declarations:
        other = first.setdefault(d.metadata.method, d.ref)
        if other != d.ref:
            yield Finding(
                f"{d.ref} and {other} both declare method={d.metadata.method!r}: register one of them",
                path=str(facts.path),
                target=d.target,
            )


@rule(
    "TA502",
    "register-entries-resolvable",
    actions=REGISTER,
    severity=Severity.WARNING,
    why="Uniqueness and rerun swaps can only be judged for entries whose metadata can be read; an "
    "entry built in code is skipped by those checks, so it is named here.",
    example_fail="tabpfnv2_gpu_metadata = next(m for m in methods_2025_06_12 if ...)  # in the collection",
    example_pass="from tabarena.models.nori.info import nori_method_metadata  # a literal MethodMetadata",
)
def entries_resolvable(ctx):
    """Every collection entry resolves statically to a MethodMetadata declaration."""
    for entry in ctx.facts.entries:
        if entry.metadata is None:
            yield Finding(f"{entry.name}: not checked for uniqueness: {entry.problem}", path=str(ctx.facts.path))


@rule(
    "TA503",
    "register-methods-layout",
    actions=REGISTER,
    why="The entry goes under its group comment and a rerun's old metadata into methods_superseded; "
    "without those landmarks the edit would land in the wrong place.",
    example_fail="methods.py without '# Neural / GPU / foundation models' in method_metadata_lst",
    example_pass="method_metadata_lst=[# Systems ..., # Default tabular models (CPU) ..., "
    "# Neural / GPU / foundation models ...] and methods_superseded: list[MethodMetadata] = [...]",
)
def methods_layout(ctx):
    """methods.py has ``method_metadata_lst=[...]`` with the three group comments and a ``methods_superseded`` list."""

    facts = ctx.facts
    layout = facts.layout
    where = str(facts.path)
    if not layout.has_collection:
        yield Finding(f"no MethodMetadataCollection({COLLECTION_ARG}=[...]) call with a list literal", path=where)
        return
    for group in GROUPS:
        if group not in layout.groups:
            yield Finding(f"{COLLECTION_ARG} lacks the group comment {group!r}", path=where)
    if not layout.has_superseded:
        yield Finding(f"no module-level `{SUPERSEDED} = [...]` list to keep replaced metadata in", path=where)


#: Unicode categories no value written into methods.py may hold: controls (\r, \x1b, \x85), format
#: characters (zero-width, bidi), surrogates, private-use and unassigned code points, line and
#: paragraph separators: each either breaks the line it is written on or hides what it says
UNWRITABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


@rule(
    "TA504",
    "register-values-plain",
    actions=REGISTER,
    why="register writes the suite into a comment of methods.py (a rerun's '# rerun SUITE replaced it') "
    "and the variable into an import; a carriage return or other line break there ends the comment and "
    "makes the rest of the value code (libcst refused it only mid-edit, with a traceback), and a bidi or "
    "zero-width character shows reviewers other text than Python reads.",
    example_fail='MethodMetadata.config(method="Nori", suite="nori-2026-09\\r", ...)',
    example_pass='MethodMetadata.config(method="Nori", suite="nori-2026-09", ...)',
)
def values_plain(ctx):
    """The method, the suite and the variable register writes into methods.py hold no control, format or line-break character."""
    for d in ctx.facts.declarations:
        meta = d.metadata
        for field, value in (
            ("method", meta.method),
            ("suite", meta.effective_suite),
            ("variable", meta.variable),
        ):
            bad = sorted({c for c in str(value or "") if unicodedata.category(c) in UNWRITABLE_CATEGORIES})
            if bad:
                shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
                yield Finding(
                    f"{field} {value!r} holds {shown} (control, format or line-break characters), which register "
                    f"would write into {ctx.facts.path}; remove them from the declaration at "
                    f"{meta.source or 'info.py'}",
                    target=d.target,
                )


@rule(
    "TA510",
    "log-run-has-results",
    actions=LOG,
    why="The entry's date and git SHA come from the run's earliest results.pkl; a directory without "
    "results is the wrong path, or a run that never produced anything worth logging.",
    example_fail="checks run log --run runs/empty ...",
    example_pass="checks run log --run runs/nori-2026-11 ...  # runs/nori-2026-11/data/**/results.pkl",
)
def run_has_results(ctx):
    """The run directory (or its ``data/``) contains at least one results.pkl."""
    facts = ctx.facts
    if not facts.files:
        yield Finding(f"no results.pkl under {facts.data_dir}: point --run at the run directory", path=str(facts.run))


@rule(
    "TA511",
    "log-file-present",
    actions=LOG,
    why="The benchmark log is append-only history kept in the TabArena checkout; creating a fresh one "
    "elsewhere would split that history.",
    example_fail="--repo points at a directory without packages/tabflow_slurm/BENCHMARK_LOG.md",
    example_pass="--repo ~/src/tabarena",
)
def log_file_present(ctx):
    """``packages/tabflow_slurm/BENCHMARK_LOG.md`` exists in the checkout."""
    if ctx.facts.log_text is None:
        yield Finding(
            f"{ctx.facts.log_path} is missing or unreadable: --repo must be a TabArena checkout",
            path=str(ctx.facts.log_path),
        )


@rule(
    "TA512",
    "log-git-sha-known",
    actions=LOG,
    why="Every log entry records the code the run was set up with; an entry without a SHA cannot be reproduced.",
    example_fail="--repo is a copy of TabArena without .git",
    example_pass="--repo is a git clone of TabArena",
)
def git_sha_known(ctx):
    """The checkout is a git repository with a HEAD, so the entry can record a SHA."""
    if isinstance(ctx.facts.sha, str):
        yield Finding(ctx.facts.sha, path=str(ctx.facts.repo))


@rule(
    "TA513",
    "log-benchmark-name-valid",
    actions=LOG,
    why="The name becomes the entry heading and is how reruns find it; a line break or an em dash "
    "would make the heading ambiguous.",
    example_fail="--benchmark-name 'nori \u2014 rerun'",
    example_pass="--benchmark-name nori-2026-11-rerun",
)
def benchmark_name_valid(ctx):
    """The benchmark name is one line of text without the heading's em dash."""
    name = ctx.facts.name
    if not name or "\n" in name or "\u2014" in name:
        yield f"--benchmark-name must be a non-empty single line without '\u2014' (got {name!r})"


RULES = [
    method_suite_unique,
    entries_resolvable,
    methods_layout,
    values_plain,
    run_has_results,
    log_file_present,
    git_sha_known,
    benchmark_name_valid,
]
