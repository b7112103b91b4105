"""The framework's own rules (family ``CK``): waiver and inline-suppression hygiene, bound to every action."""

from __future__ import annotations

from checks import waiver_places
from checks.model import Finding, Severity, rule
from checks.plugins import hookimpl

#: CK rules gate whatever action runs
ALL_ACTIONS = ("*",)


def _at_waiver(ctx, waiver, message: str) -> Finding:
    """A finding at ``waiver``'s ``[[waivers]]`` entry of the configuration file, where it is fixed."""
    return Finding(message, **waiver_places.place(ctx.config.path, waiver.rule, waiver.target))


def _at_comment(suppression, message: str) -> Finding:
    """A finding at the ``# checks: ignore`` comment itself, where it is fixed."""
    return Finding(message, path=suppression.path, line=suppression.line, col=suppression.col)


@rule(
    "CK001",
    "waiver-expired",
    actions=ALL_ACTIONS,
    required=True,
    why="A waiver is a promise to fix something by a date. Once the date has passed, the "
    "exception it grants must be renewed on purpose or removed, never kept by inertia.",
    example_fail='[[waivers]]\nrule = "TA301"\ntarget = "Nori@nori-2026-11"\nreason = "float noise"\n'
    'owner = "ana"\nexpires = 2020-01-31',
    example_pass='[[waivers]]\nrule = "TA301"\ntarget = "Nori@nori-2026-11"\nreason = "float noise"\n'
    'owner = "ana"\nexpires = 2099-01-31',
)
def waiver_expired(ctx):
    """Every waiver in rules.toml must carry an ``expires`` date that has not passed."""
    for waiver in ctx.waiver_report.expired:
        yield _at_waiver(
            ctx,
            waiver,
            f"waiver for {waiver.rule} on {waiver.target!r} (owner {waiver.owner}) expired on "
            f"{waiver.expires.isoformat()}: renew 'expires' with a reason or remove the waiver",
        )


@rule(
    "CK002",
    "waiver-unused",
    actions=ALL_ACTIONS,
    severity=Severity.WARNING,
    why="A waiver that matches nothing hides nothing today but would silently hide a "
    "future failure; like ruff's RUF100 it is reported so it can be removed.",
    example_fail='[[waivers]]\nrule = "TA301"\ntarget = "NoSuchMethod"\n...',
    example_pass='[[waivers]]\nrule = "TA301"\ntarget = "Nori@nori-2026-11"   # and TA301 fails for it\n...',
)
def waiver_unused(ctx):
    """A waiver whose rule ran in this action but matched no finding, or that names no known rule."""
    for waiver in ctx.waiver_report.unused:
        yield _at_waiver(ctx, waiver, f"waiver for {waiver.rule} on {waiver.target!r} matched no finding: remove it")
    for waiver in ctx.waiver_report.unknown:
        yield _at_waiver(
            ctx, waiver, f"waiver names {waiver.rule}, which no loaded plugin defines: fix the code or remove it"
        )


@rule(
    "CK003",
    "suppression-unused",
    actions=ALL_ACTIONS,
    severity=Severity.WARNING,
    why="An inline suppression whose rule ran and found nothing on its lines hides nothing today "
    "but would silently hide the next real problem there; like ruff's RUF100 it is reported so it "
    "can be removed.",
    example_fail='date="2026-03-01",  # checks: ignore[TA110] legacy date (TA110 passes on this line)',
    example_pass='date="2026-02-30",  # checks: ignore[TA110] copied from the 2019 paper as printed',
)
def suppression_unused(ctx):
    """A ``# checks: ignore[CODE] reason`` comment whose rule ran in this action but matched no finding."""
    for suppression, code in ctx.suppression_report.unused:
        yield _at_comment(suppression, f"suppression of {code} matched no finding: remove {code} from it")


@rule(
    "CK004",
    "suppression-invalid",
    actions=ALL_ACTIONS,
    why="A suppression must say why the finding is acceptable, and name rules that exist and may be "
    "suppressed; one that does not suppresses nothing, and a reviewer should see why.",
    example_fail='date="2026-02-30",  # checks: ignore[TA110]',
    example_pass='date="2026-02-30",  # checks: ignore[TA110] copied from the 2019 paper as printed',
)
def suppression_invalid(ctx):
    """A ``# checks: ignore`` comment that gives no reason, is malformed, or names an unknown or required rule."""
    for suppression, problem in ctx.suppression_report.invalid:
        yield _at_comment(suppression, f"this suppression {problem}; it suppresses nothing")


@hookimpl
def checks_rules():
    return [waiver_expired, waiver_unused, suppression_unused, suppression_invalid]
