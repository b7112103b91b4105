"""``checks run log``: add a run's entry to ``packages/tabflow_slurm/BENCHMARK_LOG.md``.

The log is append-only and newest-first; an entry records the git SHA that was HEAD when the
run was set up. That SHA is recovered from the checkout's reflog at the time of the earliest
``results.pkl`` of the run (:mod:`tabarena_checks.facts.log`), and the output says how it was
found. An entry whose heading already names the benchmark is never added twice.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import attrs
import click

from checks import Action, io
from checks.options import option
from tabarena_checks.facts.log import LogFacts
from tabarena_checks.metadata import load as metadata_load


@attrs.frozen
class LogOptions:
    """``checks run log``'s options, declared once: ``checks run`` makes its parameters from these fields."""

    run: str = option(help="The run directory (or its data/).", type=click.Path(file_okay=False))
    repo: str = option(help="TabArena checkout.", type=click.Path(file_okay=False))
    benchmark_name: str = option(help="The benchmark name used in the entry heading.")
    purpose: str | None = option(help="Why the run was made.", default=None)
    method_metadata: str | tuple[str, ...] | None = option(
        help="The method's info.py:VARIABLE (names the model, suite and variable); repeat it for each method "
        "of a run that published several.",
        default=None,
        multiple=True,
        metavar="REF",
        converter=metadata_load.one_or_several,
        callback=metadata_load.checked_reference,
    )


def insert_entry(text: str, entry: str) -> str:
    """``text`` with ``entry`` before the first ``## `` heading (after the title and preamble)."""
    match = re.search(r"^## ", text, re.M)
    if match:
        return text[: match.start()] + entry + "\n" + text[match.start() :]
    return text.rstrip("\n") + "\n\n" + entry


def _plan(ctx) -> Iterator[str]:
    facts: LogFacts = ctx.facts
    if facts.logged:
        yield f"{facts.log_path}: an entry for {facts.name!r} exists; nothing to add"
        return
    yield f"would add at the top of {facts.log_path}:"
    yield from facts.entry().splitlines()
    yield f"Git SHA: {facts.sha.how}"


def _execute(ctx) -> str:
    facts: LogFacts = ctx.facts
    if facts.logged:
        return f"{facts.log_path}: an entry for {facts.name!r} exists already; unchanged"
    entry = facts.entry()
    io.write_text(facts.log_path, insert_entry(facts.log_text, entry))
    return "\n".join([f"added to {facts.log_path}:", entry, f"Git SHA: {facts.sha.how}"])


LOG = Action(
    name="log",
    help="Add a run's entry at the top of packages/tabflow_slurm/BENCHMARK_LOG.md (once per benchmark name), "
    "with the git SHA that was HEAD when the run was set up.",
    gather=lambda ctx: LogFacts.gather(ctx.options),
    plan=_plan,
    execute=_execute,
    target=lambda ctx: ctx.facts.name,
    arena="tabarena",
    requires=("pyarrow", "duckdb", "numpy", "isal"),
    options=LogOptions,
)

ACTIONS = [LOG]
