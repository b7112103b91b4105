"""The records the framework passes around: rules, findings, verdicts and actions.

Everything here is a frozen attrs class so that a rule cannot change what another rule
or the runner sees.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from checks.errors import PluginLoadError

if TYPE_CHECKING:  # pragma: no cover
    import click

#: what rules and actions receive: a :class:`checks.context.RunContext`. Not imported here, even
#: for type checking: context needs config, which needs this module's Severity (no circle).
RunContext = Any

RULE_CODE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
KEBAB_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
ACTION_NAME = re.compile(r"^[a-z][a-z0-9-]*$")


class Severity(str, enum.Enum):
    """How much a failing rule matters; only ``error`` blocks an action."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Outcome(str, enum.Enum):
    """What happened when a rule was evaluated."""

    PASSED = "passed"
    FAILED = "failed"
    #: every finding of a failing rule was covered by a valid waiver
    WAIVED = "waived"
    #: the rule raised; this always blocks (fail closed)
    CRASHED = "crashed"


def _check_code(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not RULE_CODE.match(value):
        msg = f"'{attribute.name}' must be 2-4 capital letters and 3 digits, like 'TA101' (got {value!r})"
        raise ValueError(msg)


def _check_kebab(instance: object, attribute: attrs.Attribute, value: str) -> None:
    if not isinstance(value, str) or not KEBAB_NAME.match(value):
        msg = f"'{attribute.name}' must be a kebab-case name like 'method-not-suite' (got {value!r})"
        raise ValueError(msg)


def _tuple(value: Iterable[Any]) -> tuple:
    """``tuple`` as an attrs converter. A Python function, not the builtin: attrs reads a converter's
    signature, and a builtin's is parsed with tokenize, whose first use compiles a large regular
    expression (a few ms of every command's start)."""
    return tuple(value)


def _severity(value: Severity | str) -> Severity:
    """``Severity(value)`` as an attrs converter (a function for the reason given at :func:`_tuple`)."""
    return Severity(value)


@attrs.frozen
class Finding:
    """One problem a rule found.

    ``target`` is what a waiver selector is matched against; it defaults to the run's
    target. ``path``, ``line`` and ``col`` locate the problem for editors, CI annotations and
    SARIF; ``line`` and ``col`` count from 1 (``col`` is the first character of the offending
    token: the keyword of an info.py field, the key of a YAML entry).
    """

    message: str
    target: str | None = None
    path: str | None = None
    line: int | None = None
    col: int | None = None


CheckFn = Callable[[RunContext], "Iterable[Finding | str] | None"]


@attrs.frozen
class Rule:
    """A gate: a stable code, a name, the actions it guards and the function that judges.

    ``check`` receives the run context and yields findings (or plain message strings);
    yielding nothing means the rule passed. It must not write anything.
    """

    code: str = attrs.field(validator=_check_code)
    name: str = attrs.field(validator=_check_kebab)
    summary: str
    check: CheckFn = attrs.field(repr=False)
    actions: tuple[str, ...] = attrs.field(converter=_tuple)
    severity: Severity = attrs.field(default=Severity.ERROR, converter=_severity)
    required: bool = False
    #: False for the few rules that guard the machine itself (paths, content integrity): no waiver applies
    waivable: bool = True
    #: False for gates an inline comment may not silence (a waiver with an owner and an expiry still can)
    inline: bool = True
    #: a gate of what gets published: never silenced inline, and its waivers name their target (no ``*``)
    #: and end within a year, as a required rule's do
    publishing: bool = False
    why: str = ""
    example_fail: str = ""
    example_pass: str = ""
    #: filled in by the plugin manager: the plugin that contributed the rule
    plugin: str = ""
    #: the code of the family the rule belongs to (a rule split out of one that checked many things keeps
    #: the old code here): a configuration that selects, ignores, waives or sets that code covers this rule too
    group: str | None = attrs.field(default=None, validator=attrs.validators.optional(_check_code))

    @property
    def names(self) -> tuple[str, ...]:
        """The codes a configuration may name this rule by: its own, then its group's."""
        return (self.code,) if self.group is None else (self.code, self.group)

    def _excusable(self) -> str:
        """How the rule may be excused, as ``checks rule`` says it ("" for an ordinary rule)."""
        if self.required:
            return (
                " Required: cannot be ignored, only waived."
                if self.waivable
                else " Required: cannot be ignored or waived."
            )
        if self.publishing:
            return (
                " Only waived, never suppressed inline. A publishing gate: its waiver names one target "
                "and ends within 366 days."
            )
        return "" if self.inline else " Only waived, never suppressed inline."

    def explain(self) -> str:
        """Markdown in the spirit of ``ruff rule``: what, why, a failing and a passing example."""
        parts = [
            f"# {self.name} ({self.code})",
            "",
            f"Default severity: {self.severity.value}. Gates: {', '.join(self.actions)}.{self._excusable()}",
            f"From plugin: {self.plugin or 'unknown'}.",
            "",
            "## What it does",
            self.summary,
        ]
        if self.why:
            parts += ["", "## Why is this bad?", self.why]
        if self.example_fail:
            parts += ["", "## Example (fails)", "```", self.example_fail.strip("\n"), "```"]
        if self.example_pass:
            parts += ["", "## Example (passes)", "```", self.example_pass.strip("\n"), "```"]
        if self.group:
            parts += ["", f"Group: {self.group} (selecting, ignoring or waiving {self.group} covers this rule)."]
        return "\n".join(parts) + "\n"


def rule(
    code: str,
    name: str,
    *,
    actions: Sequence[str],
    severity: Severity | str = Severity.ERROR,
    required: bool = False,
    waivable: bool = True,
    inline: bool = True,
    publishing: bool = False,
    why: str = "",
    example_fail: str = "",
    example_pass: str = "",
    group: str | None = None,
) -> Callable[[CheckFn], Rule]:
    """Turn a check function into a :class:`Rule`; its docstring's first paragraph is the summary."""

    def wrap(fn: CheckFn) -> Rule:
        doc = (fn.__doc__ or "").strip()
        summary = doc.split("\n\n", 1)[0].replace("\n", " ").strip() or name
        try:
            return _rule_of(fn, summary)
        except ValueError as exc:  # a plugin's declaration mistake: exit 2 naming the function, never a traceback
            raise PluginLoadError(f"@rule on {fn.__module__}.{fn.__qualname__}: {exc}") from None

    def _rule_of(fn: CheckFn, summary: str) -> Rule:
        return Rule(
            code=code,
            name=name,
            summary=summary,
            check=fn,
            actions=tuple(actions),
            severity=severity,
            required=required,
            waivable=waivable,
            inline=inline,
            publishing=publishing,
            why=why,
            example_fail=example_fail,
            example_pass=example_pass,
            group=group,
        )

    return wrap


def known_codes(rules: Iterable[Rule]) -> frozenset[str]:
    """Every code a configuration may name: each rule's own and the groups they belong to."""
    return frozenset(name for r in rules for name in r.names)


def needs(*facts: Callable[[RunContext], Any]) -> Callable[[Callable[..., Any]], CheckFn]:
    """Turn ``check(ctx, *values)`` into ``check(ctx)`` that is given each of ``facts(ctx)`` and finds
    nothing when one of them is None.

    A fact a run does not have (no raw data, an unreadable reference) is another rule's finding,
    so the rules reading it do not apply; this says so once instead of ``x = fact(ctx); if x is None:
    return`` at the top of every rule. Goes below ``@rule`` (the docstring is kept for its summary).
    """

    def wrap(fn: Callable[..., Any]) -> CheckFn:
        @functools.wraps(fn)
        def check(ctx: RunContext):
            values = [fact(ctx) for fact in facts]
            if any(value is None for value in values):
                return None
            return fn(ctx, *values)

        return check

    return wrap


def location(finding: Finding) -> str:
    """``path:line:col``, the form editors jump to, always whole (ruff's): a finding about a whole file is at its
    first line, one without a column at the line's first; '' without a path."""
    if not finding.path:
        return ""
    return f"{finding.path}:{finding.line or 1}:{finding.col or 1}"


def _located(finding: Finding) -> str:
    where = location(finding)
    return f"{where}: {finding.message}" if where else finding.message


@attrs.frozen
class Excuse:
    """Why one finding does not count, under SARIF's names for the two kinds of suppression.

    ``inSource``: an inline ``# checks: ignore[CODE] reason`` comment covered it (``by`` is its
    ``path:line``; the finding is then not among the verdict's findings). ``external``: a waiver
    in the configuration covered it (``by`` is the waiver's id).
    """

    kind: str
    by: str
    reason: str
    finding: Finding


@attrs.frozen
class Verdict:
    """The judgement of one rule in one run."""

    code: str
    name: str
    severity: Severity
    outcome: Outcome
    findings: tuple[Finding, ...] = ()
    #: waiver ids that covered findings of this rule
    waivers: tuple[str, ...] = ()
    plugin: str = ""
    #: inline suppressions (``path:line``) that covered findings of this rule; those findings are not in ``findings``
    suppressions: tuple[str, ...] = ()
    #: every finding a suppression or a waiver excused, with why (SARIF shows them as suppressed results)
    excused: tuple[Excuse, ...] = ()
    #: seconds the rule took (JUnit's time); not part of the judgement
    duration: float = attrs.field(default=0.0, eq=False, repr=False)

    @property
    def blocks(self) -> bool:
        if self.outcome is Outcome.CRASHED:
            return True
        return self.outcome is Outcome.FAILED and self.severity is Severity.ERROR

    @property
    def message(self) -> str:
        """Every finding on one line, each prefixed with its location when it has one."""
        return "; ".join(_located(f) for f in self.findings)


@attrs.frozen
class Action:
    """Something the runner may execute once the rules bound to it pass.

    ``gather(ctx)`` builds the facts object the rules read (computed once, lazily where
    useful); ``plan(ctx)`` lists what would happen; ``execute(ctx)`` does it and returns
    a short summary. ``target(ctx)`` names what the action acts on, for waivers and the
    decision record; ``inputs(ctx)`` maps input names to digests. ``requires`` names the
    modules the action and its rules import beyond the core install (``pyarrow``, ...): the
    runner checks them first, so a light install names the extra to add instead of crashing.
    ``options`` is the attrs class of the action's options (one field per ``params``
    destination): the command line builds it (:meth:`make_options`) and gather, plan,
    execute and the rules read ``ctx.options.<name>``. Without it ``ctx.options`` is the
    dict of values, as for actions written before.
    ``plans_by_default`` makes planning the default (``checks run ACTION`` plans, ``--no-dry-run``
    executes) for actions whose mistakes are public and hard to undo, like an upload.
    """

    name: str = attrs.field(validator=attrs.validators.matches_re(ACTION_NAME))
    help: str
    gather: Callable[[RunContext], Any]
    plan: Callable[[RunContext], Iterable[str]]
    execute: Callable[[RunContext], str | None]
    params: tuple["click.Parameter", ...] = attrs.field(default=(), converter=_tuple)
    target: Callable[[RunContext], str] = lambda ctx: ctx.action
    inputs: Callable[[RunContext], Mapping[str, str]] = lambda ctx: {}
    #: the rules.toml arena section that applies (``[arenas.<arena>]``)
    arena: str | None = None
    plugin: str = ""
    requires: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    #: files the action judges whole (an info.py): their inline suppressions are scanned even where no finding points
    sources: Callable[[RunContext], Iterable[str]] = lambda ctx: ()
    options: type | None = None
    plans_by_default: bool = False

    def make_options(self, values: Mapping[str, Any]) -> Any:
        """``ctx.options`` for these option values: an instance of :attr:`options`, else the dict as given."""
        if self.options is None:
            return dict(values)
        try:
            return self.options(**values)
        except TypeError as exc:  # a misspelt field: the action's params and its options class disagree
            raise TypeError(
                f"action {self.name!r}: options {dict(values)!r} do not fit {self.options.__name__}: {exc}"
            ) from None
