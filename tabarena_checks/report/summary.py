"""The ``checks inspect`` report: what one method's raw results say, as data and as text.

:func:`method_report` builds a JSON-ready dict (the ``--format json`` output); :func:`human`
renders the same dict for a terminal. Nothing here decides pass or fail: the diff rows
carry the severity the process gate would apply, and the rules apply it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

from checks import Outcome, filecheck
from tabarena_checks.metadata import compare
from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.metadata.precommit import ACTION, InfoFacts

_LIST = 50


def suggested_method(inference: Any, metadata: MethodMetadata | None) -> str | None:
    """The method name for the snippet: the declared one, else the raw name without TabArena's TA- prefix."""
    if metadata is not None:
        return metadata.method
    if inference.method_type == "config" and inference.name_prefix:
        return inference.name_prefix.removeprefix("TA-")
    return inference.inferred_method


def _py(value: Any) -> str:
    return json.dumps(value) if isinstance(value, str) else repr(value)


def snippet(inference: Any, metadata: MethodMetadata | None, today: dt.date) -> tuple[str | None, str]:
    """A ``MethodMetadata.<type>(...)`` declaration matching the raw results, or None and the reason."""
    kind = inference.method_type
    method = suggested_method(inference, metadata)
    if kind not in ("config", "baseline") or not method:
        why = "results mix configs and baselines" if kind == "mixed" else "no single method name in the raw results"
        return None, why
    constructor = "system" if metadata is not None and metadata.is_system else kind
    args = [
        f"    method={_py(method)},",
        _suite_line(method, metadata, today),
        *_kind_lines(inference, metadata, method),
        f"    compute={_py(inference.compute)},",
    ]
    if inference.validation_protocol is not None:
        args.append(f"    validation_protocol={_py(inference.validation_protocol)},")
    head = f"{_variable(method, metadata)} = MethodMetadata.{constructor}("
    if constructor == "baseline":
        head += "  # a system (AutoML pipeline, ensemble)? use MethodMetadata.system(...)"
    return "\n".join([head, *args, ")"]), ""


def _suite_line(method: str, metadata: MethodMetadata | None, today: dt.date) -> str:
    """The declared suite when it is one of its own, else a dated one to rename."""
    if metadata is not None and metadata.suite and metadata.suite != metadata.method:
        return f"    suite={_py(metadata.suite)},"
    return (
        f"    suite={_py(f'{method}-{today:%Y-%m}')},  # required: an explicit suite distinct from "
        f"method (it defaults to method); name the artifact set, e.g. by date"
    )


def _kind_lines(inference: Any, metadata: MethodMetadata | None, method: str) -> list[str]:
    """A config's model key, default and bagging; a baseline's display name."""
    if inference.method_type != "config":
        name = metadata.name if metadata is not None and metadata.name else method
        return [f"    name={_py(name)},"]
    lines = [f"    ag_key={_py(inference.ag_key)},"]
    default = inference.config_default_for(method)
    if default is not None:
        lines.append(f"    config_default={_py(default)},")
    return [*lines, f"    can_hpo={_py(inference.can_hpo)},", f"    is_bag={_py(inference.is_bag)},"]


def _variable(method: str, metadata: MethodMetadata | None) -> str:
    """The declared variable name, else one made from the method name (a Python identifier)."""
    variable = (
        metadata.variable
        if metadata is not None and metadata.variable
        else re.sub(r"\W+", "_", method).strip("_").lower() or "method"
    )
    return f"m_{variable}" if variable[0].isdigit() else variable


def metadata_problems(metadata: MethodMetadata) -> list[dict[str, str]]:
    """What the info.py rules (the ``precommit-info`` gate) find in ``metadata``, for the report.

    Judged by :func:`checks.filecheck.judge` like the pre-commit hook judges the file: the
    command's plugins, rules.toml selection and waivers apply. Findings about rules.toml
    itself (``CK``) are not about the metadata and are left out.
    """
    subject = filecheck.Subject(
        metadata.source or "info.py", InfoFacts(metadata), target=f"{metadata.method}@{metadata.effective_suite}"
    )
    report = filecheck.judge(ACTION, [subject])
    return [
        {"rule": v.code, "name": v.name, "message": f.message}
        for v in report.verdicts
        if v.outcome in (Outcome.FAILED, Outcome.CRASHED) and not v.code.startswith("CK")
        for f in v.findings
    ]


def _inferred(inference: Any, method: str | None) -> dict[str, Any]:
    """The fields inferred from the raw results, JSON-ready."""
    return {
        "method": inference.inferred_method,
        "method_type": inference.method_type,
        "ag_key": inference.ag_key,
        "compute": inference.compute,
        "is_bag": inference.is_bag,
        "can_hpo": inference.can_hpo,
        "name_prefix": inference.name_prefix,
        "frameworks": list(inference.frameworks),
        "raw_config_default": inference.raw_config_default,
        "config_default": inference.config_default_for(method)
        if method and inference.method_type == "config"
        else None,
        "validation_protocol": inference.validation_protocol,
        "validation_protocol_keys": list(inference.validation_protocol_keys),
        "validation_flavours": list(inference.validation_flavours),
        "results_without_protocol": inference.n_without_protocol,
    }


def method_report(
    prefix: str, inference: Any, metadata: MethodMetadata | None, today: dt.date, problems: Any
) -> dict[str, Any]:
    """Everything ``checks inspect`` shows for one method, JSON-ready; ``problems`` are TA306's (path, message)
    pairs of its results (:func:`tabarena_checks.rules.raw_fields.problems`)."""
    code, why = snippet(inference, metadata, today)
    return {
        "method_prefix": prefix,
        "inferred": _inferred(inference, suggested_method(inference, metadata)),
        "counts": _counts(inference),
        "fold_histogram": [[label, n] for label, n in inference.fold_histogram],
        "coverage": _coverage(inference),
        "fidelity": [
            {
                "dataset": i.dataset,
                "split_idx": i.split_idx,
                "framework": i.framework,
                "kind": i.kind,
                "pct": i.pct,
                "path": i.path,
            }
            for i in inference.fidelity
        ],
        "problems": [{"path": p, "message": m} for p, m in problems],
        "unreadable": [{"path": p, "reason": r} for p, r in inference.errors],
        "unread_classes": [{"path": p, "where": w} for p, w in inference.unread],
        "snippet": code,
        "snippet_unavailable": why or None,
        **_metadata_part(metadata, inference),
    }


def _counts(inference: Any) -> dict[str, Any]:
    """How many results, tasks and splits the method has, and which datasets, problem types and metrics."""
    return {
        "results": inference.n_results,
        "tasks": inference.n_tasks,
        "datasets": list(inference.datasets),
        "splits": [f"{r}_{f}" for r, f in inference.splits],
        "problem_types": list(inference.problem_types),
        "metrics": list(inference.metrics),
        "results_per_config": dict(inference.results_per_config),
    }


def _coverage(inference: Any) -> dict[str, Any]:
    """The (config, task, split) cells missing, and those held by more than one file."""
    return {
        "missing_cells": [{"config": c, "task": t, "split": s} for c, t, s in inference.missing_cells],
        "duplicates": [{"config": c, "task": t, "split": s, "paths": list(p)} for c, t, s, p in inference.duplicates],
    }


def _metadata_part(metadata: MethodMetadata | None, inference: Any) -> dict[str, Any]:
    """Where the method's metadata is declared, how it compares with the results, and its problems (None
    without metadata)."""
    if metadata is None:
        return {"metadata": None, "comparison": None, "metadata_problems": None}
    return {
        "metadata": {"source": metadata.source, "variable": metadata.variable},
        "comparison": [row.as_dict() for row in compare.rows(metadata, inference)],
        "metadata_problems": metadata_problems(metadata),
    }


def _some(items: list, render) -> list[str]:
    lines = [f"    {render(item)}" for item in items[:_LIST]]
    if len(items) > _LIST:
        lines.append(f"    ... and {len(items) - _LIST} more (--format json lists all)")
    return lines


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["    " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]


def human(data_dir: str, reports: list[dict[str, Any]]) -> str:
    """The terminal rendering of :func:`method_report` dicts."""
    out = [f"raw data: {data_dir} ({len(reports)} method(s))"]
    for rep in reports:
        out += ["", f"== {rep['method_prefix']}: {rep['counts']['results']} result(s)", "  inferred:"]
        out += _inferred_lines(rep["inferred"])
        out += _data_lines(rep)
        out += _comparison_lines(rep)
        if rep["metadata_problems"]:
            out.append(f"  problems in the declared metadata: {len(rep['metadata_problems'])}")
            out += _some(rep["metadata_problems"], lambda p: f"{p['rule']} {p['name']}: {p['message']}")
        if rep["snippet"]:
            out += ["  MethodMetadata for info.py:", *("    " + line for line in rep["snippet"].splitlines())]
        else:
            out.append(f"  no MethodMetadata snippet: {rep['snippet_unavailable']}")
    return "\n".join(out)


def _inferred_lines(inf: dict[str, Any]) -> list[str]:
    """The fields inferred from the raw results, as a table."""
    if inf["validation_protocol"]:
        protocol = inf["validation_protocol"]
    elif not inf["validation_protocol_keys"]:
        protocol = "- (legacy: no record)"
    else:
        protocol = "several: " + ", ".join(inf["validation_protocol_keys"])
    fields = [
        ("method", inf["method"]),
        ("method_type", inf["method_type"]),
        ("ag_key", inf["ag_key"]),
        ("compute", inf["compute"]),
        ("is_bag", inf["is_bag"]),
        ("can_hpo", inf["can_hpo"]),
        ("config_default", inf["config_default"] or "- (only inferred for a single config)"),
        ("validation_protocol", protocol),
        ("flavours", ", ".join(inf["validation_flavours"]) or "-"),
    ]
    return _table([[name, str(value)] for name, value in fields])


def _data_lines(rep: dict[str, Any]) -> list[str]:
    """Counts, results per config, folds, coverage, fidelity, field problems and unreadable files."""
    counts, cov = rep["counts"], rep["coverage"]
    out = [
        f"  tasks: {counts['tasks']}, datasets: {len(counts['datasets'])}, splits: "
        f"{' '.join(counts['splits']) or '-'}; problem types: {', '.join(counts['problem_types']) or '-'}; "
        f"metrics: {', '.join(counts['metrics']) or '-'}",
        "  results per config:",
    ]
    out += _some(list(counts["results_per_config"].items()), lambda kv: f"{kv[0]}: {kv[1]}")
    out.append("  fold histogram:" + ("" if rep["fold_histogram"] else " - (no validation-protocol record)"))
    out += _some(rep["fold_histogram"], lambda kv: f"{kv[0]}: {kv[1]}")
    missing, dups = cov["missing_cells"], cov["duplicates"]
    out.append(f"  coverage: {len(missing)} missing (config, task, split) cell(s), {len(dups)} duplicate(s)")
    out += _some(missing, lambda c: f"missing {c['config']} task {c['task']} split {c['split']}")
    out += _some(
        dups, lambda d: f"duplicate {d['config']} task {d['task']} split {d['split']}: {', '.join(d['paths'])}"
    )
    out.append(f"  prediction fidelity (test rtol 5e-4, val rtol 1e-5): {len(rep['fidelity'])} result(s) not close")
    out += _some(
        rep["fidelity"],
        lambda i: (
            f"{i['kind']} {i['dataset']} split {i['split_idx']} {i['framework']}: {i['pct']:.3f}% of rows ({i['path']})"
        ),
    )
    out.append(f"  result field problems: {len(rep['problems'])}")
    out += _some(rep["problems"], lambda p: f"{p['path']}: {p['message']}")
    out.append(f"  unreadable files: {len(rep['unreadable'])}")
    out += _some(rep["unreadable"], lambda u: f"{u['path']}: {u['reason']}")
    out.append(
        f"  classes the reader does not load: {len(rep['unread_classes'])}"
        + (" (TA308 refuses these files for process and upload)" if rep["unread_classes"] else "")
    )
    out += _some(rep["unread_classes"], lambda u: f"{u['path']}: {u['where']}")
    return out


def _comparison_lines(rep: dict[str, Any]) -> list[str]:
    """The inferred fields against the declared metadata, and whether process would fail on them."""
    if rep["comparison"] is None:
        return []
    rows = [["FIELD", "INFERRED (raw)", "DECLARED", "STATUS", "SEVERITY"]]
    rows += [
        [r["field"], repr(r["inferred"]), repr(r["declared"]), r["status"], r["severity"]] for r in rep["comparison"]
    ]
    failing = [r for r in rep["comparison"] if r["status"] != "ok" and r["severity"] == "error"]
    verdict = (
        f"  {len(failing)} error row(s): `checks run process` would fail on "
        f"{', '.join(r['field'] for r in failing)} unless a waiver or an inline suppression excuses it "
        f"(a report applies neither; `checks run process --dry-run` does)"
        if failing
        else "  no error rows (warn and info rows never block)"
    )
    return [f"  compared with {rep['metadata']['source']}:", *_table(rows), verdict]
