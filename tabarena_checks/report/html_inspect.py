"""Where the run report's facts come from: ``checks inspect --html`` and ``checks run process --html``.

inspect is a report, not a gate, so its page shows the verdicts ``checks run process`` would
give on the same index (evaluated here, nothing executed, no decision record appended) and
the record that run would write. process writes its page from the ``checks_run_finished``
hook, after its decision record, whether the run passed or was blocked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import click

from checks import ChecksError, ConfigError
from checks import preview as gate_preview
from tabarena_checks.facts.process import ProcessFacts
from tabarena_checks.publish.process import ProcessOptions
from tabarena_checks.report import html_run
from tabarena_checks.report import summary as report
from tabarena_checks.rules import raw_fields

PREVIEW_NOTE = (
    "checks inspect gates nothing: these are the verdicts `checks run process` would give on these "
    "results with the same --method-metadata and rules.toml."
)


def _explanations(rules: Mapping[str, Any], verdicts: Sequence[Any]) -> dict[str, str]:
    return {v.code: rules[v.code].explain() for v in verdicts if v.code in rules}


def preview(data_dir: str, metadata_ref: str | None, raw, method: str | None):
    """The process rules' :class:`checks.Preview` over the index inspect built; nothing is decoded twice or written."""
    facts = ProcessFacts(data_dir=data_dir, metadata_ref=metadata_ref, method=method, built_index=raw)
    return gate_preview(
        "process", facts, ProcessOptions(run_data_dir=data_dir, method_metadata=metadata_ref, method=method)
    )


def write(
    html_path: str,
    data_dir: str,
    metadata_ref: str | None,
    raw,
    methods: Mapping[str, Any],
    picked: Mapping[str, Any],
    reports: Sequence[Mapping[str, Any]],
    unassigned: Sequence[Mapping[str, str]],
) -> None:
    """The inspect report: every picked method's sections and the process rules' preview."""
    method = next(iter(picked)) if len(picked) == 1 and len(methods) > 1 else None
    gate = _gate_sections(data_dir, metadata_ref, raw, method)
    state = "would block" if any(v.blocks for v in gate["verdicts"]) else "would pass"
    text = html_run.render(
        title=f"checks inspect: {data_dir}",
        subtitle=f"{raw.table.num_rows} readable result(s), {len(raw.errors)} unreadable; `checks run process` "
        f"{state}" + (f" (metadata {metadata_ref})" if metadata_ref else " (no --method-metadata given)"),
        methods=[(rep, sub) for rep, sub in zip(reports, picked.values())],
        record_note="The record `checks run process` would append (not written: inspect gates nothing).",
        unreadable=unassigned,
        **gate,
    )
    html_run.write(html_path, text)


def _gate_sections(data_dir: str, metadata_ref: str | None, raw, method: str | None) -> dict[str, Any]:
    """The verdicts, explanations, record and waivers ``checks run process`` would show (``render``'s arguments).

    Apart because only a broken rules.toml fails the report: any other error of the rules is said
    in the verdicts' note, and the rest of the page is still written.
    """
    out = {"verdicts": [], "record": None, "verdict_note": PREVIEW_NOTE, "explanations": {}, "waivers": ""}
    try:
        seen = preview(data_dir, metadata_ref, raw, method)
    except ConfigError:
        raise  # a broken rules.toml fails the command, as it does for every other one
    except ChecksError as exc:
        out["verdict_note"] = f"the process rules could not be evaluated: {exc}"
        return out
    verdicts = list(seen.verdicts)
    out.update(
        verdicts=verdicts,
        record=seen.record,
        explanations=_explanations(seen.rules, verdicts),
        waivers=html_run.waivers_of(seen.ctx, seen.record),
    )
    return out


def after_process(ctx, record: Mapping[str, Any], rules: Mapping[str, Any]) -> None:
    """The process report, from the facts the rules judged; sections whose facts are missing say why."""
    facts = ctx.facts
    methods = []
    problem = ""
    try:
        index, inference = facts.index, facts.inference
    except ChecksError as exc:
        problem = f"The raw results could not be indexed: {exc}"
    else:
        try:
            metadata = facts.metadata
        except ChecksError:
            metadata = None  # TA116 reports why
        prefix = index.method or (inference.methods[0] if len(inference.methods) == 1 else "")
        problems = raw_fields.problems(index)
        methods.append((report.method_report(prefix, inference, metadata, ctx.today, problems), index))
    outcome = record.get("outcome", "")
    html_run.write(
        ctx.options.html,
        html_run.render(
            title=f"checks run process: {ctx.target}",
            subtitle=f"outcome: {outcome}; {sum(v.blocks for v in ctx.verdicts)} blocking verdict(s); "
            f"raw data {ctx.options.run_data_dir}",
            methods=methods,
            verdicts=ctx.verdicts,
            explanations=_explanations(rules, ctx.verdicts),
            record=record,
            verdict_note=problem,
            record_note="Appended to the decision log of this run.",
            waivers=html_run.waivers_of(ctx, record),
        ),
    )

    click.echo(f"HTML report: {ctx.options.html}", err=True)
