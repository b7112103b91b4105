"""Judge: select the rules that gate an action, evaluate each one, apply waivers and suppressions.

What every evaluation shares: ``checks run`` (:mod:`checks.runner`, which then decides,
executes and records), the pre-commit hooks (:mod:`checks.filecheck`, which judge files and
nothing else, so they load no part of a run they do not make) and ``checks.testing``.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

from checks import config_changes, config_select, manifest, suppress
from checks.config_model import Config, Waiver
from checks.config_select import effective
from checks.context import RunContext
from checks.errors import ChecksError, NoRulesSelected
from checks.globs import compile_glob
from checks.model import Action, Excuse, Finding, Outcome, Rule, Severity, Verdict
from checks.plugins import Registry
from checks.required import check_required, check_strict_waivers

FRAMEWORK_PREFIX = "CK"


def bound_to(rule: Rule, action: str) -> bool:
    return "*" in rule.actions or action in rule.actions


def select_rules(rules: Mapping[str, Rule], action: Action, config: Config) -> list[tuple[Rule, Severity]]:
    """The rules that gate ``action`` under ``config``, with their effective severity.

    Required rules are always kept; ignoring one by its exact code, or lowering its
    severity below ``error``, is a configuration error. So is a waiver of a required rule or a
    publishing gate that names no one target or runs past a year.
    """
    layers = config.layers(action.arena)
    ignore = {code for layer in layers for code in layer.ignore}
    chosen = []
    for rule in rules.values():
        if not bound_to(rule, action.name):
            continue
        severity, required = effective(rule, config, action.arena)
        if required:
            check_required(rule, severity, ignore, config)
            chosen.append((rule, severity))
            continue
        if rule.publishing:
            check_strict_waivers(rule, config, "a publishing gate")
        if config_select.is_selected(rule.code, layers, rule.group):
            chosen.append((rule, severity))
    return chosen


def _waiver_only(chosen) -> frozenset[str]:
    """The chosen rules no inline comment may excuse (``Rule.inline`` False, or a publishing gate): only a waiver does."""
    return frozenset(rule.code for rule, _ in chosen if not rule.inline or rule.publishing)


def adjust_config(registry: Registry, config: Config) -> Config:
    """The configuration after the plugins' ``checks_adjust_config``: one call through ``pm.hook``, as pluggy
    makes it (every implementation, ``wrapper=True`` ones included, handed ``config``), its results applied
    in call order as the changes each makes to ``config`` (:mod:`checks.config_changes`)."""
    adjusted = config
    for result in registry.pm.hook.checks_adjust_config(config=config):
        if not isinstance(result, Config):
            raise ChecksError(
                f"{_implementers(registry, 'checks_adjust_config')}: checks_adjust_config must return a Config "
                f"or None (got {type(result).__name__})"
            )
        adjusted = config_changes.apply(adjusted, config, result)
    return adjusted


def _implementers(registry: Registry, hook: str) -> str:
    """The plugins implementing ``hook``, for a message about a result no single one is known to have given."""
    names = sorted({impl.plugin_name for impl in getattr(registry.pm.hook, hook).get_hookimpls()})
    return f"plugin {names[0]!r}" if len(names) == 1 else f"one of plugins {', '.join(map(repr, names))}"


def gate_rules(registry: Registry, action: Action, config: Config) -> list[tuple[Rule, Severity]]:
    """The selected rules for ``action``; an empty gate (framework rules aside) is an error, never a pass."""
    chosen = select_rules(registry.rules, action, config)
    domain = [r for r, _ in chosen if not r.code.startswith(FRAMEWORK_PREFIX)]
    if not any(not effective(r, config, action.arena)[1] for r in domain):
        only = " besides the required ones" if domain else ""
        bound = ", ".join(
            sorted(
                code
                for code, r in registry.rules.items()
                if bound_to(r, action.name) and not code.startswith(FRAMEWORK_PREFIX)
            )
        )
        raise NoRulesSelected(
            f"no rule is selected for action {action.name!r}{only}: check {_selection_origin(config)} "
            f"(an empty gate is never a pass; the rules bound to it: {bound or 'none'})"
        )
    return chosen


def _selection_origin(config: Config) -> str:
    """Where the selection came from, as the user wrote it: the command line's options, the file's keys
    (or the defaults when there is no file)."""
    path = config.path if config.path and config.path != "<defaults>" else None
    where = f"'select'/'ignore' in {path}" if path else "the defaults (no configuration file; every rule selected)"
    return f"{' '.join(config.overrides)} on the command line, over {where}" if config.overrides else where


def _findings(result: Iterable[Finding | str] | None) -> tuple[Finding, ...]:
    if result is None:
        return ()
    if isinstance(result, (str, Finding)):
        result = [result]
    out = []
    for item in result:
        if isinstance(item, str):
            out.append(Finding(item))
        elif isinstance(item, Finding):
            out.append(item)
        else:
            raise TypeError(f"a rule must yield checks.Finding or str (got {item!r})")
    return tuple(out)


def _matching(waivers: Iterable[Waiver], rule: Rule, target: str) -> list[Waiver]:
    """The waivers of ``rule`` (by its code or its group) whose target matches ``target``."""
    return [w for w in waivers if w.rule in rule.names and compile_glob(w.target, segments=False).fullmatch(target)]


def evaluate(
    chosen: Iterable[tuple[Rule, Severity]],
    ctx: RunContext,
    known_codes: Iterable[str],
    *,
    required: frozenset[str] | None = None,
) -> list[Verdict]:
    """Evaluate each rule on its own (a raising rule cannot hide the others), apply waivers, sort by code.

    Domain rules run first so the framework rules (which judge waivers and suppressions) see
    what the domain rules used. ``required`` is :func:`required_codes` of ``chosen`` under
    ``ctx.config`` when the caller has it already (a pre-commit hook judges many files under one).
    """
    chosen = list(chosen)
    manifest.load(rule for rule, _ in chosen)
    ctx.waiver_report.expired = [w for w in ctx.config.waivers if w.expired(ctx.today)]
    live = [w for w in (*ctx.config.waivers, *ctx.extra_waivers) if not w.expired(ctx.today)]
    framework, domain = _split_framework(chosen)
    matched: set[str] = set()
    known = known_codes if isinstance(known_codes, frozenset) else frozenset(known_codes)
    if required is None:
        required = required_codes(chosen, ctx.config)
    tracker = suppress.Tracker(
        known, required, tuple(ctx.sources), report=ctx.suppression_report, waiver_only=_waiver_only(chosen)
    )
    verdicts = [
        _judge(rule, severity, ctx, live, matched, tracker)
        for rule, severity in sorted(domain, key=lambda p: p[0].code)
    ]
    evaluated = {name for r, _ in domain for name in r.names}
    tracker.finish(evaluated)
    _report_waivers(ctx, live, evaluated, matched, known, _seen_targets(ctx, verdicts))
    verdicts += [_judge(rule, severity, ctx, [], matched) for rule, severity in framework]
    return sorted(verdicts, key=lambda v: v.code)


def required_codes(chosen: Iterable[tuple[Rule, Severity]], config: Config) -> frozenset[str]:
    """The codes of the rules in ``chosen`` that their plugin or ``config`` makes required."""
    return frozenset(r.code for r, _ in chosen if _is_required(r, config))


def _split_framework(chosen: list[tuple[Rule, Severity]]) -> tuple[list, list]:
    """(framework rules, domain rules) of ``chosen``, each in its given order."""
    framework, domain = [], []
    for rule, severity in chosen:
        (framework if rule.code.startswith(FRAMEWORK_PREFIX) else domain).append((rule, severity))
    return framework, domain


def _seen_targets(ctx: RunContext, verdicts: Iterable[Verdict]) -> set[str]:
    """What the run looked at: its target, the targets it was told it saw, and every finding's (excused ones too)."""
    seen = {ctx.target, *ctx.seen}
    for verdict in verdicts:
        seen.update(f.target for f in verdict.findings if f.target)
        seen.update(e.finding.target for e in verdict.excused if e.finding.target)
    return seen


def _report_waivers(
    ctx: RunContext,
    live: list[Waiver],
    evaluated: set[str],
    matched: set[str],
    known: frozenset[str],
    seen: set[str],
) -> None:
    """Fill the waivers the domain rules left unused or that name an unknown rule, for the framework rules.

    A waiver is unused only when its target is among what the run ``seen``: an arena keeps waivers for
    many submissions, and one for a submission this run never looked at is not stale, just elsewhere.
    """
    report = ctx.waiver_report
    report.unused = [
        w
        for w in live
        if w.rule in evaluated
        and w.id not in matched
        and w not in ctx.extra_waivers
        and any(_names_seen(w.target, target) for target in seen)
    ]
    report.unknown = [w for w in ctx.config.waivers if w.rule not in known]


def _names_seen(pattern: str, target: str) -> bool:
    """Whether a waiver's target ``pattern`` names ``target``, or a place inside it (``FILE#/key/path``: a value
    of a file the run read, as findings of a JSON file name it)."""
    if compile_glob(pattern, segments=False).fullmatch(target):
        return True
    return "#" in pattern and compile_glob(pattern.split("#")[0], segments=False).fullmatch(target)


def _is_required(rule: Rule, config: Config) -> bool:
    """Whether ``rule`` is required by its plugin or by ``config``."""
    return rule.required or _required_by_config(rule.code, config)


def _required_by_config(code: str, config: Config) -> bool:
    return any(
        settings.get(code) is not None and settings[code].required
        for settings in (config.rules, *(a.rules for a in config.arenas.values()))
    )


def _judge(
    rule: Rule,
    severity: Severity,
    ctx: RunContext,
    waivers: list[Waiver],
    matched: set[str],
    tracker: suppress.Tracker | None = None,
) -> Verdict:
    start = time.perf_counter()
    fields = _judged(rule, severity, ctx, waivers, matched, tracker)
    return Verdict(**fields, duration=time.perf_counter() - start)  # built once: a hook judges ~1,000 per run


def _judged(
    rule: Rule,
    severity: Severity,
    ctx: RunContext,
    waivers: list[Waiver],
    matched: set[str],
    tracker: suppress.Tracker | None,
) -> dict[str, Any]:
    """The :class:`Verdict`'s fields for one rule (its duration is added by :func:`_judge`).

    Crash, per-file ignore, inline suppression, waiver and pass/fail are the ways one rule's
    findings end, in this order; each step is a helper so the order reads in one place.
    """
    base = dict(code=rule.code, name=rule.name, plugin=rule.plugin)
    try:
        findings = _findings(rule.check(ctx))
    except Exception as exc:  # fail closed: a crashed rule blocks
        return dict(severity=Severity.ERROR, outcome=Outcome.CRASHED, findings=(_crash_finding(exc),), **base)
    findings = _not_ignored_per_file(rule, ctx.config, findings)
    suppressed: tuple[str, ...] = ()
    excused: list[Excuse] = []
    if tracker is not None and findings:
        findings, covered = tracker.split(rule.code, findings)
        suppressed = tuple(dict.fromkeys(s.id for _, s in covered))
        excused = [Excuse("inSource", s.id, s.reason, f) for f, s in covered]
    if not findings:
        outcome = Outcome.WAIVED if suppressed else Outcome.PASSED
        return dict(severity=severity, outcome=outcome, suppressions=suppressed, excused=tuple(excused), **base)
    all_waived, used = _apply_waivers(rule, findings, ctx, waivers, matched, excused)
    outcome = Outcome.WAIVED if all_waived else Outcome.FAILED
    return dict(
        severity=severity,
        outcome=outcome,
        findings=findings,
        waivers=tuple(used),
        suppressions=suppressed,
        excused=tuple(excused),
        **base,
    )


def _crash_finding(exc: Exception) -> Finding:
    """The finding a crashed rule reports: the exception and the line that raised it, to find it fast."""
    import traceback  # noqa: PLC0415 - a crash only; traceback would load with every command

    where = traceback.extract_tb(exc.__traceback__)[-1]
    return Finding(f"rule crashed: {type(exc).__name__}: {exc} (at {where.filename}:{where.lineno})")


def _not_ignored_per_file(rule: Rule, config: Config, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """``findings`` without those ``per-file-ignores`` covers; a required rule's findings are never dropped."""
    if not config.per_file_ignores or _is_required(rule, config):
        return findings
    ignored = [p for p in config.per_file_ignores if any(_names_rule(p.codes, name) for name in rule.names)]
    return tuple(f for f in findings if not any(p.matches(f.path) for p in ignored))


def _names_rule(codes: Iterable[str], code: str) -> bool:
    """Whether a ``per-file-ignores`` entry's ``codes`` cover ``code`` (a prefix of it, or ``ALL``)."""
    return any(code.startswith(c) or c == "ALL" for c in codes)


def _apply_waivers(
    rule: Rule,
    findings: tuple[Finding, ...],
    ctx: RunContext,
    waivers: list[Waiver],
    matched: set[str],
    excused: list[Excuse],
) -> tuple[bool, list[str]]:
    """(whether every finding is waived, the waiver ids used in order); ``excused``, ``matched`` and the
    run's waiver report are filled in place, as the run's later waiver checks read them."""
    used: list[str] = []
    all_waived = True
    for finding in findings:
        hits = _matching(waivers, rule, finding.target or ctx.target) if rule.waivable else []
        if not hits:
            all_waived = False
            continue
        excused += [
            Excuse("external", w.id, f"{w.reason} (owner {w.owner}, expires {w.expires})", finding) for w in hits
        ]
        for w in hits:
            matched.add(w.id)
            if w.id not in used:
                used.append(w.id)
                ctx.waiver_report.used.setdefault(rule.code, []).append(w.id)
    return all_waived, used
