"""What a batch says at its end: per method the steps done, skipped, blocked or failed, in every format.

The single commands' reports are about one run's verdicts; a batch is about steps, so its summary
has a shape of its own in the same five formats (``--format human|json|junit|sarif|github``):
JUnit has one test case per method and step, SARIF one result per step that did not pass (its
rule the blocking code, else the step), GitHub one annotation per such step. Every text taken
from a step (a message of the data) is shown visibly, so a name cannot forge a line or a command.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from checks.visible import guarded, visible
from tabarena_checks.publish.batch import MethodOutcome
from tabarena_checks.publish.batch_steps import BLOCKED, DONE, FAILED, NOT_RUN, SKIPPED, STALLED, StepResult

FORMATS = ("human", "json", "junit", "sarif", "github")
JSON_VERSION = 1
TOOL_URI = "https://github.com/arena-checks/arena-checks/blob/main/docs/tabarena-publish.md"
_SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def event_line(method: str, result: StepResult) -> str:
    """``DONE Nori process 41 s`` or ``FAILED Foo upload: TA407 ...``: one line per finished step."""
    head = f"{result.status.upper()} {method} {result.step}"
    if result.status == DONE:
        return guarded(visible(f"{head} {result.seconds:.0f} s"))
    return guarded(visible(f"{head}: {result.detail}" if result.detail else head))


def counts(outcomes: Sequence[MethodOutcome]) -> dict[str, int]:
    out = dict.fromkeys((DONE, SKIPPED, BLOCKED, FAILED, STALLED, NOT_RUN), 0)
    for o in outcomes:
        for s in o.steps:
            out[s.status] += 1
    return out


def as_dict(
    outcomes: Sequence[MethodOutcome], *, plan: str, dry_run: bool, code: int, seconds: float, jobs: int
) -> dict:
    return {
        "version": JSON_VERSION,
        "plan": plan,
        "dry_run": dry_run,
        "jobs": jobs,
        "exit_code": code,
        "duration_s": round(seconds, 3),
        "counts": counts(outcomes),
        "methods": [
            {
                "name": o.name,
                "steps": [
                    {
                        "step": s.step,
                        "status": s.status,
                        "seconds": round(s.seconds, 3),
                        "exit_code": s.exit_code,
                        "codes": list(s.codes),
                        "detail": s.detail,
                    }
                    for s in o.steps
                ],
            }
            for o in outcomes
        ],
    }


def human(doc: dict) -> str:
    lines = []
    for m in doc["methods"]:
        for s in m["steps"]:
            took = f" ({s['seconds']:.0f} s)" if s["status"] == DONE else ""
            detail = f": {s['detail']}" if s["detail"] and s["status"] != DONE else ""
            lines.append(guarded(visible(f"{s['status'].upper():8} {m['name']} {s['step']}{took}{detail}")))
    tally = ", ".join(f"{n} {status}" for status, n in doc["counts"].items() if n)
    mode = (
        "dry run: nothing was uploaded and no checkout edited (--no-dry-run publishes)"
        if doc["dry_run"]
        else "for real (--no-dry-run)"
    )
    lines.append(f"batch {doc['plan']}: {tally or 'no step'}; {mode}; exit {doc['exit_code']}")
    return "\n".join(lines) + "\n"


def junit(doc: dict) -> str:
    """One ``<testcase>`` per method and step: blocked is a failure, failed or stalled an error, skipped
    (done earlier) and not-run skipped."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only, as in checks.output

    cases = []
    for m in doc["methods"]:
        for s in m["steps"]:
            case = ET.Element("testcase", classname=f"publish.{m['name']}", name=s["step"], time=f"{s['seconds']:.3f}")
            tag = {BLOCKED: "failure", FAILED: "error", STALLED: "error", SKIPPED: "skipped", NOT_RUN: "skipped"}
            if s["status"] in tag:
                ET.SubElement(case, tag[s["status"]], message=visible(s["detail"])[:500], type=s["status"])
            cases.append(case)
    suite = ET.Element(
        "testsuite",
        name="checks.publish",
        tests=str(len(cases)),
        failures=str(sum(c.find("failure") is not None for c in cases)),
        errors=str(sum(c.find("error") is not None for c in cases)),
        skipped=str(sum(c.find("skipped") is not None for c in cases)),
        time=f"{doc['duration_s']:.3f}",
    )
    suite.extend(cases)
    root = ET.Element("testsuites", name="checks", tests=suite.get("tests"), failures=suite.get("failures"))
    root.set("errors", suite.get("errors"))
    root.append(suite)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _problems(doc: dict):
    for m in doc["methods"]:
        for s in m["steps"]:
            if s["status"] in (BLOCKED, FAILED, STALLED):
                yield m, s


def sarif(doc: dict) -> str:
    results, rules = [], {}
    for m, s in _problems(doc):
        rule = s["codes"][0] if s["codes"] else f"publish-{s['step'].replace(' ', '-')}-{s['status']}"
        rules.setdefault(rule, {"id": rule, "helpUri": TOOL_URI})
        results.append(
            {
                "ruleId": rule,
                "level": "error",
                "message": {"text": f"{m['name']} {s['step']} {s['status']}: {s['detail']}"},
                "properties": {"method": m["name"], "step": s["step"], "status": s["status"]},
            }
        )
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "arena-checks", "informationUri": TOOL_URI, "rules": list(rules.values())}},
        "invocations": [{"executionSuccessful": doc["exit_code"] in (0, 1), "exitCode": doc["exit_code"]}],
        "results": results,
    }
    return json.dumps({"$schema": _SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=2) + "\n"


def _gh(text: str, *, prop: bool = False) -> str:
    out = visible(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return out.replace(":", "%3A").replace(",", "%2C") if prop else out


def github(doc: dict) -> str:
    lines = []
    for m, s in _problems(doc):
        title = _gh(f"{m['name']} {s['step']} {s['status']}", prop=True)
        lines.append(f"::error title={title}::{_gh(s['detail'] or s['status'])}")
    tally = ", ".join(f"{n} {status}" for status, n in doc["counts"].items() if n)
    summary = _gh(f"{tally or 'no step'}; exit {doc['exit_code']}")
    lines.append(f"::notice title={_gh('checks tabarena publish', prop=True)}::{summary}")
    return "".join(f"{line}\n" for line in lines)


def render(fmt: str, doc: dict) -> str:
    if fmt == "json":
        return json.dumps(doc, indent=2) + "\n"
    return {"human": human, "junit": junit, "sarif": sarif, "github": github}[fmt](doc)
