"""Render a run's result: human (rich), JSON, or JUnit XML (one testcase per rule)."""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from checks.model import Outcome, Severity, Verdict
from checks.runner import RunResult

FORMATS = ("human", "json", "junit")
_STYLE = {
    Outcome.PASSED: "green",
    Outcome.WAIVED: "cyan",
    Outcome.FAILED: "red",
    Outcome.CRASHED: "bold red",
}


def _label(v: Verdict) -> str:
    if v.outcome is Outcome.FAILED and v.severity is not Severity.ERROR:
        return v.severity.value
    return v.outcome.value


def _tally(verdicts) -> dict[str, int]:
    """Counts for the summary line: a failed warning or info rule is counted as such, not as 'failed'."""
    counts = dict.fromkeys(("passed", "failed", "warning", "info", "waived", "crashed"), 0)
    for v in verdicts:
        counts[_label(v)] += 1
    return counts


def human(result: RunResult, console) -> None:
    """Readable in a terminal and in CI logs: one line per verdict, then the findings and the decision."""
    from rich.markup import escape

    console.print(f"[bold]checks run {result.action}[/bold] target={escape(result.target)}", highlight=False)
    for v in result.verdicts:
        style = _STYLE[v.outcome] if v.severity is Severity.ERROR or v.outcome is not Outcome.FAILED else "yellow"
        console.print(f"  [{style}]{_label(v):>8}[/{style}] {v.code} {v.name}", highlight=False)
        for f in v.findings:
            where = f"{f.path}:{f.line}: " if f.path and f.line else (f"{f.path}: " if f.path else "")
            console.print(f"           {where}{f.message}", highlight=False, markup=False)
        if v.waivers:
            console.print(f"           waived by: {', '.join(v.waivers)}", highlight=False, markup=False)
        if v.suppressions:
            console.print(f"           suppressed inline at: {', '.join(v.suppressions)}", highlight=False, markup=False)
    for line in result.plan:
        console.print(f"  plan: {line}", highlight=False, markup=False)
    tally = ", ".join(f"{n} {label}" for label, n in _tally(result.verdicts).items() if n)
    suppressed = len(result.record.get("suppressions_used", ()))
    if suppressed:
        tally += f", {suppressed} suppression{'s' if suppressed > 1 else ''} used"
    decision = {
        "ran": "action ran",
        "dry-run": "dry run: nothing was changed",
        "blocked": "blocked: the action did not run",
        "failed": "the action failed",
    }[result.outcome]
    console.print(f"{tally}; {decision} (exit {int(result.exit_code)})", highlight=False, markup=False)
    if result.summary:
        console.print(result.summary, highlight=False, markup=False)
    if result.error:
        console.print(f"error: {result.error}", highlight=False, markup=False)


def as_json(result: RunResult) -> str:
    return json.dumps(
        {
            "action": result.action,
            "target": result.target,
            "outcome": result.outcome,
            "exit_code": int(result.exit_code),
            "plan": list(result.plan),
            "summary": result.summary,
            "error": result.error,
            "verdicts": result.record.get("verdicts", []),
            "record": result.record,
        },
        indent=2,
        default=str,
    )


def as_junit(result: RunResult) -> str:
    """One ``<testcase>`` per rule: failed and crashed rules of severity error are failures/errors."""
    suite = ET.Element(
        "testsuite",
        name=f"checks.{result.action}",
        tests=str(len(result.verdicts)),
        failures=str(sum(v.outcome is Outcome.FAILED and v.blocks for v in result.verdicts)),
        errors=str(sum(v.outcome is Outcome.CRASHED for v in result.verdicts)),
        skipped=str(sum(v.outcome is Outcome.WAIVED for v in result.verdicts)),
    )
    for v in result.verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"checks.{result.action}.{v.plugin or 'core'}", name=f"{v.code} {v.name}")
        text = "\n".join(f.message for f in v.findings)
        if v.outcome is Outcome.CRASHED:
            ET.SubElement(case, "error", message=v.message[:500]).text = text
        elif v.outcome is Outcome.FAILED and v.blocks:
            ET.SubElement(case, "failure", message=v.message[:500], type=v.severity.value).text = text
        elif v.outcome is Outcome.WAIVED:
            ET.SubElement(case, "skipped", message=f"waived by {', '.join(v.waivers)}")
        elif v.outcome is Outcome.FAILED:
            ET.SubElement(case, "system-out").text = f"{v.severity.value}: {text}"
    root = ET.Element("testsuites")
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
