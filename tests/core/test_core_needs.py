"""``checks.needs``: a rule given its facts, and not applying when one of them is missing."""

from __future__ import annotations

from types import SimpleNamespace

from checks import Finding, needs, rule
from checks.model import Outcome
from checks.testing import assert_fails, evaluate_rules

seen = []


def metadata(ctx):
    return ctx.facts.metadata


def data(ctx):
    return ctx.facts.data


@rule("NE101", "name-matches-data", actions=("test",))
@needs(metadata, data)
def name_matches_data(ctx, md, rows):
    """The declared name is the one the data carries."""
    seen.append((md, rows))
    if md != rows:
        yield Finding(f"declared {md!r}, data says {rows!r}")


def test_the_check_gets_each_fact_in_order():
    seen.clear()
    assert_fails(evaluate_rules([name_matches_data], SimpleNamespace(metadata="Nori", data="Kiri")), "NE101", "Kiri")
    assert seen == [("Nori", "Kiri")]


def test_a_missing_fact_means_the_rule_does_not_apply():
    seen.clear()
    for facts in (SimpleNamespace(metadata=None, data="Kiri"), SimpleNamespace(metadata="Nori", data=None)):
        verdict = evaluate_rules([name_matches_data], facts)["NE101"]
        assert verdict.outcome is Outcome.PASSED and not verdict.findings
    assert seen == []


def test_the_summary_still_comes_from_the_docstring():
    assert name_matches_data.summary == "The declared name is the one the data carries."
