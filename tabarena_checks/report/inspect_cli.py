"""``checks inspect``: report what a run's raw results say, before anything is declared or processed.

A report, not a gate: it exits 0 whenever it could read the directory, whatever it found.
Input errors (a missing directory, a bad ``--method-metadata``) end as ``checks: error:``
with exit code 2, through the core's error handling.
"""

from __future__ import annotations

import datetime as dt
import json
from concurrent.futures import ThreadPoolExecutor

import attrs
import click

from checks import UsageError, progress
from checks.htmlreport import check_target
from checks.visible import safe_data, safe_lines, visible
from tabarena_checks.metadata import load as metadata_load
from tabarena_checks.raw import index as index_mod
from tabarena_checks.raw import inference_memo
from tabarena_checks.report import summary as report
from tabarena_checks.rules import raw_fields


def _pick(methods: dict, wanted: str | None) -> dict:
    if wanted is None:
        return methods
    if wanted in methods:
        return {wanted: methods[wanted]}
    matches = [m for m in methods if m.startswith(wanted)]
    if len(matches) == 1:
        return {matches[0]: methods[matches[0]]}
    known = ", ".join(methods) or "none"
    how = "matches several" if matches else "matches none"
    raise UsageError(f"--method {wanted!r} {how} of the methods in the directory ({known})")


@click.command("inspect")
@click.argument("run_data_dir", metavar="RUN_DATA_DIR", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--method-metadata",
    "method_metadata",
    default=None,
    callback=metadata_load.checked_reference,
    metavar="REF",
    help="Compare with this MethodMetadata: path/to/info.py:VARIABLE or package.module:VARIABLE.",
)
@click.option("--format", "output_format", type=click.Choice(["human", "json"]), default="human", show_default=True)
@click.option(
    "--method",
    "method",
    default=None,
    metavar="PREFIX",
    help="Inspect only this method when the directory holds several (its config-dir prefix).",
)
@click.option(
    "--cache-dir",
    default=None,
    metavar="DIR",
    help="Where to keep the index cache (default: one directory per data directory in your cache "
    "directory, $CHECKS_CACHE_DIR or $XDG_CACHE_HOME/arena-checks).",
)
@click.option(
    "--c1-only",
    "c1_only",
    is_flag=True,
    help="Infer config_default of an HPO method from its default (_c1_) config, not only for single-config runs.",
)
@click.option(
    "--html",
    "html_path",
    default=None,
    metavar="FILE",
    help="Also write a self-contained HTML report (heatmap, plots, the process rules' verdicts) to FILE.",
)
@progress.quiet_option("Draw no progress bar (the report is printed whole).")
def inspect_command(run_data_dir, method_metadata, output_format, method, cache_dir, c1_only, html_path):
    """Report the inferred metadata, coverage, fidelity and a MethodMetadata snippet for RUN_DATA_DIR."""
    if html_path is not None:
        check_target(html_path)
    metadata = metadata_load.load(method_metadata)
    raw = index_mod.build_index(run_data_dir, cache_dir=cache_dir)
    methods = index_mod.split_methods(raw)
    picked = _pick(methods, method)
    reports = _method_reports(picked, metadata, c1_only)
    unassigned = [] if methods else [{"path": p, "reason": r} for p, r in raw.errors]
    if html_path is not None:
        # --html only: the page's modules (process options, the run page) load before the workers start
        from tabarena_checks.report import html_inspect  # noqa: PLC0415

        html_inspect.write(html_path, run_data_dir, method_metadata, raw, methods, picked, reports, unassigned)
        click.echo(f"HTML report: {html_path}", err=True)
    if output_format == "json":
        click.echo(
            json.dumps(
                {"version": 1, "data_dir": str(run_data_dir), "methods": reports, "unreadable": unassigned},
                indent=2,
                default=str,
            )
        )
    else:
        _echo_human(run_data_dir, reports, unassigned)


def _method_reports(picked: dict, metadata, c1_only: bool) -> list[dict]:
    """Each picked method's report; ``c1_only`` infers config_default from the default (_c1_) config."""
    today = dt.date.today()
    inferences, problems = infer_and_judge(picked)
    if c1_only:
        inferences = {prefix: with_c1_default(inf) for prefix, inf in inferences.items()}
    return [report.method_report(prefix, inferences[prefix], metadata, today, problems[prefix]) for prefix in picked]


def infer_and_judge(picked: dict) -> tuple[dict, dict]:
    """Each method's inference and the TA306 group's problems (:func:`field_problems`), by method prefix.

    The problems are computed in a second thread, through indexes of their own (a DuckDB cursor is used by
    one thread only), while this one infers: DuckDB leaves the interpreter while it runs a query, and the
    two read the same rows and write separate memos, so a cold inspect waits for the longer of the two.
    """
    judged = {prefix: attrs.evolve(sub) for prefix, sub in picked.items()}
    for sub in judged.values():
        sub.con  # opened here, so only this thread ever asks the shared database for a cursor
    with ThreadPoolExecutor(1) as pool:
        problems = pool.submit(lambda: {prefix: field_problems(sub) for prefix, sub in judged.items()})
        inferences = {prefix: inference_memo.infer(sub) for prefix, sub in picked.items()}
        return inferences, problems.result()


MEMO_FILE = "result-fields-valid.json"


def field_problems(index) -> tuple[tuple[str, str], ...]:
    """The TA306 group's problems in ``index`` (:func:`tabarena_checks.rules.raw_fields.problems`), kept beside a cached
    index under its fingerprint and the digest of the rule's code, so a warm inspect runs no query. The gate
    (``checks run process``) never reads this memo: it judges the index itself."""
    return inference_memo.remember(
        index,
        MEMO_FILE,
        raw_fields.code_digest(),
        lambda: raw_fields.problems(index),
        dump=lambda found: [list(pair) for pair in found],
        load=lambda entry: tuple((str(path), str(message)) for path, message in entry),
    )


def _echo_human(run_data_dir, reports: list[dict], unassigned: list[dict]) -> None:
    """The reports as text, then the unreadable files when no method could be read at all.

    Every string from the run (directory and file names, values) is shown visibly and no line can
    start a CI workflow command (:mod:`checks.visible`): a run is data from strangers.
    """
    # a report holds multi-line text of its own (the suggested declaration): its breaks stay, every line guarded
    click.echo(safe_lines(report.human(visible(str(run_data_dir)), safe_data(reports, keep_newlines=True))))
    if unassigned:
        click.echo(f"no readable result; unreadable files: {len(unassigned)}")
        for item in safe_data(unassigned):
            click.echo(safe_lines(f"    {item['path']}: {item['reason']}"))


def with_c1_default(inference):
    """``inference`` with ``raw_config_default`` taken from the one default config (``_c1_`` in its name,
    or ending in ``_c1``) of an HPO run: TabArena infers it only for a single-config run, so
    maintainers inspected the ``_c1_`` directories alone to get it. Unchanged when there is not
    exactly one such config."""
    if inference.raw_config_default is not None or inference.method_type != "config":
        return inference
    defaults = [f for f in inference.frameworks if "_c1_" in f or f.endswith("_c1")]
    return attrs.evolve(inference, raw_config_default=defaults[0]) if len(defaults) == 1 else inference
