"""Render what a command judged: human, json, junit, sarif or github workflow annotations.

``checks run`` and ``checks precommit`` both turn their result into one :class:`Report`, so
every format means the same on both. The terminal gets ``--format`` (human by default);
``--output-file`` writes further formats to files next to it (:func:`parse_output_file`).
docs/outputs.md documents each format and the JSON schema.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import attrs

from checks.errors import UsageError
from checks.io import write_text
from checks.model import Excuse, Finding, Outcome, Severity, Verdict, location
from checks.plugins import _own_version
from checks.redact import redact_data
from checks.visible import guarded, safe_lines, visible

if TYPE_CHECKING:  # pragma: no cover
    from checks.runner import RunResult

FORMATS = ("human", "json", "junit", "sarif", "github")
#: the format an ``--output-file`` gets from its extension when it names none
EXTENSIONS = {".json": "json", ".xml": "junit", ".sarif": "sarif", ".txt": "human", ".log": "human"}
#: the version of the JSON document (docs/outputs.md); bumped when a field changes meaning or goes
JSON_VERSION = 2
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_URI = "https://github.com/arena-checks/arena-checks"
#: SGR codes of the human output's colours (plain ANSI: the hook's install carries no terminal library)
_SGR = {"green": "32", "cyan": "36", "red": "31", "bold red": "1;31", "yellow": "33", "bold": "1"}
_STYLE = {
    Outcome.PASSED: "green",
    Outcome.WAIVED: "cyan",
    Outcome.FAILED: "red",
    Outcome.CRASHED: "bold red",
}
_DECISION = {
    "ran": "action ran",
    "dry-run": "dry run: nothing was changed",
    "blocked": "blocked: the action did not run",
    "failed": "the action failed",
}
#: a pre-commit run has no action to run or block
_FILES_DECISION = {
    "passed": "nothing blocking",
    "blocked": "blocking findings",
    "error": "an input could not be read",
    "crashed": "a rule crashed",
}


@attrs.frozen
class Report:
    """One command's result in the shape every format renders.

    ``command`` is ``run`` or ``precommit``. ``verdicts`` hold every evaluated rule once (a
    pre-commit run merges each rule's verdicts over the files, its findings located in them).
    ``unreadable`` lists inputs a pre-commit run could not read into facts (no rule saw them).
    ``rules`` maps codes to their one-line summaries (SARIF's rule descriptions).
    """

    command: str
    action: str
    target: str
    outcome: str
    exit_code: int
    verdicts: tuple[Verdict, ...]
    started: dt.datetime
    duration: float
    unreadable: tuple[Finding, ...] = ()
    plan: tuple[str, ...] = ()
    summary: str = ""
    error: str = ""
    record: Mapping[str, Any] | None = None
    rules: Mapping[str, str] = attrs.field(factory=dict)

    @classmethod
    def from_run(cls, result: RunResult, rules: Mapping[str, str]) -> Report:
        started = dt.datetime.fromisoformat(result.record["started"])
        finished = dt.datetime.fromisoformat(result.record["finished"])
        return cls(
            command="run",
            action=result.action,
            target=result.target,
            outcome=result.outcome,
            exit_code=int(result.exit_code),
            verdicts=shown_relative(result.verdicts),
            started=started,
            duration=(finished - started).total_seconds(),
            plan=result.plan,
            summary=result.summary,
            error=result.error,
            record=result.record,
            rules=rules,
        )


def shown_relative(verdicts: Sequence[Verdict]) -> tuple[Verdict, ...]:
    """``verdicts`` with each finding's path relative to the working directory when it lies below it (as ruff
    shows paths: ``models/x/info.py``, whatever spelling the command line used), absolute otherwise."""
    here = os.getcwd() + os.sep
    out = []
    for v in verdicts:
        if any(f.path and f.path.startswith(here) for f in v.findings):
            v = attrs.evolve(v, findings=tuple(relative_finding(f, here) for f in v.findings))
        out.append(v)
    return tuple(out)


def relative_finding(f: Finding, here: str) -> Finding:
    """``f`` with its path below ``here`` (the working directory and a separator) shown relative to it."""
    return attrs.evolve(f, path=f.path[len(here) :]) if f.path and f.path.startswith(here) else f


def label(v: Verdict) -> str:
    """What a verdict counts as: a failed warning or info rule is a 'warning'/'info', not 'failed'."""
    if v.outcome is Outcome.FAILED and v.severity is not Severity.ERROR:
        return v.severity.value
    return v.outcome.value


def tally(verdicts: Sequence[Verdict]) -> dict[str, int]:
    counts = dict.fromkeys(("passed", "failed", "warning", "info", "waived", "crashed"), 0)
    for v in verdicts:
        counts[label(v)] += 1
    return counts


def _summary_line(report: Report) -> str:
    """``33 passed, 2 failed (TA116, TA201), 1 waived; blocked: the action did not run (exit 1)``: the counts, the
    codes that blocked beside their count (pytest's short summary names the failed tests), and the decision."""
    counts = tally(report.verdicts)
    if report.unreadable:
        counts["unreadable"] = len(report.unreadable)
    text = ", ".join(f"{n} {name}{_codes(report, name)}" for name, n in counts.items() if n) or "no verdict"
    suppressed = len({s for v in report.verdicts for s in v.suppressions})
    if suppressed:
        text += f", {suppressed} suppression{'s' if suppressed > 1 else ''} used"
    decisions = _FILES_DECISION if report.command == "precommit" else _DECISION
    return f"{text}; {decisions.get(report.outcome, report.outcome)} (exit {report.exit_code})"


def _codes(report: Report, counted: str) -> str:
    """`` (TA116, TA201)``: the codes of a run's blocking verdicts (failed, crashed), after their count."""
    if report.command != "run" or counted not in ("failed", "crashed"):
        return ""
    return f" ({', '.join(v.code for v in report.verdicts if label(v) == counted)})"


def title(report: Report) -> str:
    """``checks run ACTION`` or ``checks precommit`` and the action whose rules judged."""
    return f"checks run {report.action}" if report.command == "run" else f"checks precommit ({report.action})"


# --------------------------------------------------------------------------- human


class Lines:
    """Where the human format goes: ``write(text)`` per line, ``paint(text, style)`` in colour when asked.

    Data in the text is already escaped (:mod:`checks.visible`); the colours are ours, added after.
    """

    def __init__(self, write, *, color: bool = False) -> None:
        self.write, self.color = write, color

    def paint(self, text: str, style: str) -> str:
        return f"\x1b[{_SGR[style]}m{text}\x1b[0m" if self.color else text


def human(report: Report, out: Lines, *, quiet: bool = False, verbose: bool = False) -> None:
    """Readable in a terminal and in CI logs.

    ``checks run``: the failing, warning and crashed verdicts with their findings (``-v``: every
    verdict; ``-q``: no title and no plan), the plan, then one summary line naming what blocked, so
    the failures are what a reader sees (pytest's short summary, ruff's problems only). ``checks
    precommit``: :func:`precommit_human`.
    """
    if report.command == "precommit":
        precommit_human(report, out, quiet=quiet, verbose=verbose)
        return
    if not quiet:
        out.write(f"{out.paint(f'checks run {report.action}', 'bold')} target={visible(report.target)}")
    for v in report.verdicts:
        if verbose or v.outcome not in (Outcome.PASSED, Outcome.WAIVED):
            _human_verdict(v, out)
    _human_tail(report, out, quiet=quiet)


def _human_tail(report: Report, out: Lines, *, quiet: bool) -> None:
    """The plan (not with ``-q``), the action's own summary and its error, then the summary line, last."""
    if not quiet:
        for line in report.plan:
            out.write(f"  plan: {visible(line)}")
    if report.summary:
        out.write(safe_lines(report.summary))
    if report.error:
        out.write(f"error: {safe_lines(report.error)}")
    out.write(_summary_line(report))


def _human_verdict(v: Verdict, out: Lines) -> None:
    """One verdict's line (a failed non-error rule in yellow), its findings, waivers and inline suppressions."""
    style = _STYLE[v.outcome] if v.severity is Severity.ERROR or v.outcome is not Outcome.FAILED else "yellow"
    out.write(f"  {out.paint(f'{label(v):>8}', style)} {v.code} {v.name}")
    for f in counted_findings(v):  # data: shown visibly, and a line of it never starts a CI command
        out.write(guarded(f"           {visible(_located(f))}"))
    for e in _excuses(v):  # each excused finding on a line of its own, marked with what excused it
        how = f"suppressed inline at {e.by}" if e.kind == "inSource" else f"waived by {e.by}"
        text = _located(e.finding) if e.finding.message else "(the whole rule)"
        out.write(guarded(f"           {out.paint(f'[{visible(how)}]', 'cyan')} {visible(text)}"))


def counted_findings(v: Verdict) -> list[Finding]:
    """The findings of ``v`` that count: those no waiver excused (an inline suppression's are never among
    ``v.findings``). A partly waived verdict keeps its waived findings beside the others; they are not these."""
    waived = {e.finding for e in v.excused if e.kind == "external"}
    if v.outcome is Outcome.WAIVED and not v.excused:  # built without its excuses: every finding is waived
        return []
    return [f for f in v.findings if f not in waived]


def _problems(report: Report) -> list[tuple[Finding, str, Severity]]:
    """Every finding of a failed or crashed verdict, and every unreadable input (code 'error')."""
    out = [(f, "error", Severity.ERROR) for f in report.unreadable]
    for v in report.verdicts:
        if v.outcome in (Outcome.FAILED, Outcome.CRASHED):
            out += [(f, v.code, v.severity) for f in counted_findings(v)]
    return out


def statistics(report: Report) -> list[str]:
    """``--statistics``: ``COUNT  CODE  name`` per rule with counted findings (unreadable files as ``error``),
    most first, then by code, as ruff prints its own."""
    names = {v.code: v.name for v in report.verdicts}
    counts: dict[str, int] = {}
    for _f, code, _severity in _problems(report):
        counts[code] = counts.get(code, 0) + 1
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    width = max((len(str(n)) for _code, n in rows), default=1)
    return [f"{n:>{width}}  {code}  {names.get(code, 'unreadable input')}" for code, n in rows]


def precommit_lines(report: Report, out: Lines | None = None) -> list[str]:
    """``path:line:col: CODE message [severity]``, sorted by file and place; rules.toml's own last.

    With ``out`` the place is bold and the code red (yellow below ``error``), as ruff colours its own.
    """
    paint = out.paint if out is not None else (lambda text, style: text)
    rows = []
    for f, code, severity in _problems(report):
        note = "" if severity is Severity.ERROR else f" [{severity.value}]"
        key = (f.path is None or code.startswith("CK"), f.path or "", f.line or 0, f.col or 0, code, f.message)
        where, text = guarded(visible(location(f) or "-")), visible(f"{f.message}{note}")
        style = "bold red" if severity is Severity.ERROR else "yellow"
        rows.append((key, f"{paint(where, 'bold')}: {paint(code, style)} {text}"))
    return [text for _key, text in sorted(rows)]


def precommit_human(report: Report, out: Lines, *, quiet: bool = False, verbose: bool = False) -> None:
    """A hook's human output: one line per problem and a count line (ruff's ``Found 3 errors.``); nothing on
    success unless ``-v`` (pre-commit shows a passing hook's output only on request); ``-q``: the problems only.
    """
    lines = precommit_lines(report, out)
    for line in lines:
        out.write(line)
    if quiet or not (lines or verbose):
        return
    files = len({f.path for f, _code, _severity in _problems(report)})
    if not lines:
        rules = len(report.verdicts)
        out.write(out.paint("All checks passed!", "green") + f" ({rules} rule{'s' if rules != 1 else ''})")
        return
    blocking = sum(1 for _f, _code, severity in _problems(report) if severity is Severity.ERROR)
    noun = "problem" if len(lines) == 1 else "problems"
    out.write(
        out.paint(f"Found {len(lines)} {noun}", "bold")
        + f" in {files} file{'s' if files != 1 else ''} ({blocking} blocking); exit {report.exit_code}"
    )


def render_human(report: Report, *, quiet: bool = False, verbose: bool = False) -> str:
    """The human format as plain text (for ``--output-file``): no colours."""
    lines: list[str] = []
    human(report, Lines(lines.append), quiet=quiet, verbose=verbose)
    return "".join(f"{line}\n" for line in lines)


# --------------------------------------------------------------------------- json


def _finding_json(f: Finding) -> dict[str, Any]:
    """A finding with a path has a whole place, as its human line shows it (a whole file's is 1:1)."""
    line, col = (f.line or 1, f.col or 1) if f.path else (f.line, f.col)
    return {"message": f.message, "target": f.target, "path": f.path, "line": line, "col": col}


def as_dict(report: Report) -> dict[str, Any]:
    """The JSON document, version :data:`JSON_VERSION` (docs/outputs.md); each verdict appears once."""
    doc: dict[str, Any] = {
        "version": JSON_VERSION,
        "command": report.command,
        "action": report.action,
        "target": report.target,
        "outcome": report.outcome,
        "exit_code": report.exit_code,
        "started": report.started.isoformat(),
        "duration_s": round(report.duration, 6),
        "counts": tally(report.verdicts),
        "verdicts": [
            {
                "code": v.code,
                "name": v.name,
                "plugin": v.plugin,
                "severity": v.severity.value,
                "outcome": v.outcome.value,
                "blocks": v.blocks,
                "message": "; ".join(_located(f) for f in counted_findings(v)),
                "findings": [_finding_json(f) for f in counted_findings(v)],
                "waivers": list(v.waivers),
                "suppressions": list(v.suppressions),
                "excused": [
                    {"kind": e.kind, "by": e.by, "reason": e.reason, "finding": _finding_json(e.finding)}
                    for e in v.excused
                ],
                "duration_s": round(v.duration, 6),
            }
            for v in report.verdicts
        ],
        "unreadable": [_finding_json(f) for f in report.unreadable],
        "plan": list(report.plan),
        "summary": report.summary,
        "error": report.error,
    }
    if report.record is not None:  # the decision record, less the verdicts printed above
        doc["record"] = {k: v for k, v in report.record.items() if k != "verdicts"}
    return doc


def as_json(report: Report) -> str:

    return json.dumps(redact_data(as_dict(report)), indent=2, default=str)


# --------------------------------------------------------------------------- junit


def as_junit(report: Report) -> str:
    """One ``<testcase>`` per finding (its file and line, the attributes CI links) and one per rule that
    passed; an unreadable input (pre-commit) is an ``<error>`` case ``read PATH`` of its own.

    A finding of a failed error-severity rule is a ``<failure>``, of a crashed rule an ``<error>``; a
    finding a waiver or an inline suppression excused is ``<skipped>`` with the reason and where the
    excuse is; a finding of a failed warning or info rule passes with the finding in ``<system-out>``.
    """
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only; ElementTree stays out of every other output's start-up

    classname = f"checks.{report.action}"
    cases = [case for v in report.verdicts for case in _junit_cases(classname, v)]
    for f in report.unreadable:
        case = ET.Element("testcase", classname=f"{classname}.input", name=f"read {f.path}", time="0")
        if f.path:
            case.attrib.update(file=f.path, **({"line": str(f.line)} if f.line else {}))
        ET.SubElement(case, "error", message=f.message[:500], type="unreadable").text = f.message
        cases.append(case)
    suite = _junit_suite(report, classname, cases)
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="target", value=report.target)
    suite.extend(cases)
    root = ET.Element(
        "testsuites",
        name="checks",
        tests=suite.get("tests"),
        failures=suite.get("failures"),
        errors=suite.get("errors"),
        time=suite.get("time"),
    )
    root.append(suite)
    _xml_safe(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def _xml_safe(root) -> None:
    """Every attribute and text of the tree without the characters XML 1.0 cannot hold (controls, lone
    surrogates of undecodable file names), shown visibly instead: a hostile file name must not make the
    whole report malformed, or CI loses every result in it."""
    for element in root.iter():
        element.attrib.update({key: visible(value) for key, value in element.attrib.items()})
        if element.text:
            element.text = visible(element.text, keep_newlines=True)


def _junit_suite(report: Report, classname: str, cases: list):
    """The ``<testsuite>`` element with its counts: the totals CI dashboards show before any case."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only; ElementTree stays out of every other output's start-up

    def count(tag: str) -> str:
        return str(sum(case.find(tag) is not None for case in cases))

    return ET.Element(
        "testsuite",
        name=classname,
        tests=str(len(cases)),
        failures=count("failure"),
        errors=count("error"),
        skipped=count("skipped"),
        time=f"{report.duration:.6f}",
        timestamp=report.started.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds"),
    )


def _junit_cases(classname: str, v: Verdict) -> list:
    """A verdict's test cases: one per counted finding (or one for the rule when it passed), one per excused
    finding. A rule's time goes to its first case, so the suite's cases still add up to the rules' time."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only; ElementTree stays out of every other output's start-up

    cls = f"{classname}.{v.plugin or 'core'}"
    counted = _counted(v)
    excuses = _excuses(v)
    cases = []
    for f in counted:
        cases.append(_junit_case(cls, v, f))
        _junit_outcome(cases[-1], v, f)
    if v.outcome is Outcome.PASSED or not (counted or excuses):
        cases.append(ET.Element("testcase", classname=cls, name=f"{v.code} {v.name}", time="0"))
    for e in excuses:
        cases.append(_junit_case(cls, v, e.finding))
        how = f"suppressed inline at {e.by}" if e.kind == "inSource" else f"waived by {e.by}"
        ET.SubElement(cases[-1], "skipped", message=f"{how}: {e.reason}" if e.reason else how)
    cases[0].set("time", f"{v.duration:.6f}")
    return cases


def _counted(v: Verdict) -> tuple[Finding, ...]:
    """The findings that make a failed or crashed verdict's cases (one without findings still fails, as one)."""
    if v.outcome not in (Outcome.FAILED, Outcome.CRASHED):
        return ()
    return tuple(counted_findings(v)) or (Finding(v.message or v.outcome.value),)


def _junit_case(cls: str, v: Verdict, f: Finding):
    """A finding's ``<testcase>``, named ``CODE name at PATH:LINE:COL`` (the place keeps one rule's cases
    apart: readers key cases by name), with ``file`` and ``line`` when it has them."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only; ElementTree stays out of every other output's start-up

    where = location(f)
    case = ET.Element(
        "testcase", classname=cls, name=f"{v.code} {v.name} at {where}" if where else f"{v.code} {v.name}", time="0"
    )
    if f.path:
        case.set("file", f.path)
        if f.line:
            case.set("line", str(f.line))
    return case


def _excuses(v: Verdict) -> list[Excuse]:
    """The excuses of a verdict, or, for a waived verdict built without them (not by the judge), one per
    waiver it names, so a waived rule is still a skipped case that says what waived it."""
    if v.excused or v.outcome is not Outcome.WAIVED:
        return list(v.excused)
    return [Excuse("external", ", ".join(v.waivers) or "a waiver", "", f) for f in v.findings or (Finding(""),)]


def _junit_outcome(case, v: Verdict, f: Finding) -> None:
    """The child that says how one finding's case ended: ``<error>`` (the rule crashed), ``<failure>``
    (it blocks) or, for a failed warning or info rule, which passes, ``<system-out>``."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - JUnit output only; ElementTree stays out of every other output's start-up

    text = _located(f)
    if v.outcome is Outcome.CRASHED:
        ET.SubElement(case, "error", message=f.message[:500], type="crashed").text = text
    elif v.blocks:
        ET.SubElement(case, "failure", message=f.message[:500], type=v.severity.value).text = text
    else:
        ET.SubElement(case, "system-out").text = f"{v.severity.value}: {text}"


def _located(f: Finding) -> str:
    """``place: message``, or just the message when the finding has no place."""
    where = location(f)
    return f"{where + ': ' if where else ''}{f.message}"


# --------------------------------------------------------------------------- sarif


def _level(severity: Severity) -> str:
    return {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}[severity]


def _uri(path: str) -> str:
    """An artifact URI: relative paths stay relative (resolved against the checkout), absolute ones get file://."""
    p = Path(path)
    return p.as_uri() if p.is_absolute() else quote(p.as_posix())


def _sarif_location(f: Finding) -> list[dict[str, Any]]:
    if not f.path:
        return []
    region = {"startLine": f.line or 1, "startColumn": f.col or 1}  # whole, as the human line shows it
    return [{"physicalLocation": {"artifactLocation": {"uri": _uri(f.path)}, "region": region}}]


#: a SARIF result's ``properties.outcome`` for an excused finding
_EXCUSED = {"inSource": "suppressed", "external": "waived"}


def _suppression(excuse: Excuse) -> dict[str, Any]:
    """SARIF's suppression object: ``inSource`` at the comment, ``external`` naming the waiver."""
    out: dict[str, Any] = {"kind": excuse.kind, "status": "accepted", "justification": excuse.reason}
    if excuse.kind == "inSource":
        path, _, line = excuse.by.rpartition(":")
        where = _sarif_location(Finding("", path=path, line=int(line) if line.isdigit() else None))
        if where:
            out["location"] = where[0]
    else:
        out["properties"] = {"waiver": excuse.by}
    return out


def _excused_findings(v: Verdict) -> list[tuple[Finding, list[Excuse]]]:
    """The findings a verdict's SARIF results are made of, each with the excuses that cover it: the findings
    of a verdict that did not pass, those waived (a hook's merge may have left them out), those suppressed inline."""
    waived: dict[Finding, list[Excuse]] = {}
    for e in v.excused:
        if e.kind == "external":
            waived.setdefault(e.finding, []).append(e)
    shown = [(f, waived.get(f, [])) for f in v.findings] if v.outcome is not Outcome.PASSED else []
    shown += [(f, excuses) for f, excuses in waived.items() if f not in v.findings]
    return shown + [(e.finding, [e]) for e in v.excused if e.kind == "inSource"]


def _sarif_results(v: Verdict, rule_index: int, target: str) -> list[dict[str, Any]]:
    """One result per finding of :func:`_excused_findings`.

    A waived finding carries an ``external`` suppression per waiver, an inline-suppressed one an
    ``inSource`` suppression with the comment's reason and place: code scanning lists them as
    suppressed, not as open alerts.
    """
    level = "error" if v.outcome is Outcome.CRASHED else _level(v.severity)
    # a verdict built without its excuses (not by the runner): the waivers it names
    unexplained = [{"kind": "external", "status": "accepted", "justification": f"waived by {', '.join(v.waivers)}"}]
    results = []
    for f, excuses in _excused_findings(v):
        result: dict[str, Any] = {
            "ruleId": v.code,
            "ruleIndex": rule_index,
            "level": level,
            "message": {"text": f.message},
            "locations": _sarif_location(f),
            "properties": {
                "outcome": _EXCUSED.get(excuses[0].kind) if excuses else v.outcome.value,
                "target": f.target or target,
            },
        }
        suppressions = [_suppression(e) for e in excuses] or (unexplained if v.outcome is Outcome.WAIVED else [])
        if suppressions:
            result["suppressions"] = suppressions
        results.append(result)
    return results


def as_sarif_dict(report: Report) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one run, the evaluated rules as reporting descriptors, one result per finding.

    Waived and inline-suppressed findings are results with a suppression (:func:`_sarif_results`);
    unreadable inputs are results of the pseudo-rule ``input-error``.
    """
    rules, index = [], {}
    for v in report.verdicts:
        index[v.code] = len(rules)
        rules.append(
            {
                "id": v.code,
                "name": v.name,
                "shortDescription": {"text": report.rules.get(v.code) or v.name},
                "helpUri": f"{TOOL_URI}#{v.code}",
                "defaultConfiguration": {"level": _level(v.severity)},
                "properties": {"plugin": v.plugin or "core"},
            }
        )
    results = [r for v in report.verdicts for r in _sarif_results(v, index[v.code], report.target)]
    if report.unreadable:
        index["input-error"] = len(rules)
        rules.append(
            {
                "id": "input-error",
                "name": "input-error",
                "shortDescription": {"text": "an input file could not be read, so no rule judged it"},
                "defaultConfiguration": {"level": "error"},
            }
        )
        results += [
            {
                "ruleId": "input-error",
                "ruleIndex": index["input-error"],
                "level": "error",
                "message": {"text": f.message},
                "locations": _sarif_location(f),
            }
            for f in report.unreadable
        ]
    finished = report.started + dt.timedelta(seconds=report.duration)
    invocation: dict[str, Any] = {
        "executionSuccessful": report.exit_code in (0, 1),
        "exitCode": report.exit_code,
        "startTimeUtc": _utc(report.started),
        "endTimeUtc": _utc(finished),
        "properties": {"command": report.command, "action": report.action, "outcome": report.outcome},
    }
    if report.error:
        invocation["toolExecutionNotifications"] = [{"level": "error", "message": {"text": report.error}}]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "arena-checks",
                        "version": _own_version(),
                        "informationUri": TOOL_URI,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                # columns count code points (Python's str), not the UTF-16 units readers assume by default
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }


def _utc(moment: dt.datetime) -> str:
    return moment.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_sarif(report: Report) -> str:

    return json.dumps(redact_data(as_sarif_dict(report)), indent=2, default=str)


# --------------------------------------------------------------------------- github


def _gh_data(text: str) -> str:
    """A command's message: controls shown visibly, then the runner's escapes (its line breaks stay breaks)."""
    return visible(text, keep_newlines=True).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_property(text: str) -> str:
    return _gh_data(visible(text)).replace(":", "%3A").replace(",", "%2C")


def as_github(report: Report) -> str:
    """GitHub Actions workflow commands: ``::error file=F,line=L,col=C,title=CODE name::message``.

    Blocking findings are errors, failed warning rules warnings, failed info rules notices;
    passed and waived rules print nothing. The summary line ends the output as a notice when there
    was something to annotate or the command did not succeed: a clean run prints nothing, so a
    workflow's annotations list only what needs a look.
    """
    lines = []
    for f, code, severity in _problems(report):
        v_name = next((v.name for v in report.verdicts if v.code == code), "unreadable input")
        level = {"error": "error", "warning": "warning", "info": "notice"}[severity.value]
        props = []
        if f.path:
            props.append(f"file={_gh_property(f.path)}")
            if f.line:
                props.append(f"line={f.line}")
                if f.col:
                    props.append(f"col={f.col}")
        props.append(f"title={_gh_property(f'{code} {v_name}')}")
        lines.append(f"::{level} {','.join(props)}::{_gh_data(f.message)}")
    if lines or report.exit_code:
        lines.append(f"::notice title={_gh_property(title(report))}::{_gh_data(_summary_line(report))}")
    return "".join(f"{line}\n" for line in lines)


# --------------------------------------------------------------------------- dispatch


def render(fmt: str, report: Report, *, quiet: bool = False) -> str:
    if fmt == "human":
        return render_human(report, quiet=quiet)
    return {"json": as_json, "junit": as_junit, "sarif": as_sarif, "github": as_github}[fmt](report) + (
        "" if fmt == "github" else "\n"
    )


def parse_output_file(spec: str) -> tuple[str, Path]:
    """``--output-file`` value -> (format, path): ``FORMAT=PATH`` names the format, else the extension does."""
    head, sep, tail = spec.partition("=")
    if sep and head in FORMATS:
        if not tail:
            raise UsageError(f"--output-file {spec!r}: the path after '{head}=' is empty")
        return head, Path(tail)
    path = Path(spec)
    name = path.name.lower()
    fmt = "sarif" if name.endswith(".sarif.json") else EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        known = ", ".join(f"{ext} ({f})" for ext, f in EXTENSIONS.items())
        raise UsageError(
            f"--output-file {spec!r}: cannot tell the format from the extension (known: {known}); "
            f"name it, e.g. --output-file github=annotations.txt or --output-file junit=report.xml"
        )
    return fmt, path


def write_files(report: Report, specs: Sequence[tuple[str, Path]], *, quiet: bool = False, redact=None) -> None:
    """Write each requested format to its file atomically, after the terminal output."""
    for fmt, path in specs:
        text = render(fmt, report, quiet=quiet)
        write_text(path, redact(text) if redact else text)
