"""The public providers: ``checks.fact``, ``checks.provides``, ``checks.at`` and ``checks.kit.records``.

A plugin declares its rules' facts with them instead of writing its own accessor, so what a fact an
action lacks, or cannot compute, means is the same for every plugin: the rule does not apply.
"""

from __future__ import annotations

from functools import cached_property
from types import SimpleNamespace

import attrs

from checks import Finding, InputError, at, fact, needs, provides, rule
from checks.kit import Records, records
from checks.model import Outcome
from checks.testing import assert_fails, evaluate_rules


class Lazy:
    """Facts with a member computed on use, and one that cannot be computed."""

    computed = 0

    @cached_property
    def metadata(self):
        Lazy.computed += 1
        return "Nori"

    @cached_property
    def index(self):
        raise InputError("no raw data directory given")


def test_provides_names_a_member_without_computing_it():
    Lazy.computed = 0
    facts = Lazy()
    assert provides(facts, "metadata") and provides(facts, "index") and Lazy.computed == 0
    assert provides(SimpleNamespace(path="x"), "path")
    assert not provides(facts, "path") and not provides(None, "metadata")


def test_fact_is_none_when_absent_or_not_computable():
    ctx = SimpleNamespace(facts=Lazy())
    assert fact("metadata")(ctx) == "Nori"
    assert fact("index")(ctx) is None  # its rule (the one owning the input) reports why
    assert fact("path")(ctx) is None  # another action's fact
    assert fact("metadata").__name__ == "metadata"


@rule("PV101", "pv-named", actions=("test",))
@needs(fact("metadata"), fact("index"))
def named(ctx, metadata, index):
    """Never reached without an index."""
    yield f"{metadata} {index}"


def test_a_rule_needing_an_uncomputable_fact_does_not_apply():
    assert evaluate_rules([named], Lazy())["PV101"].outcome is Outcome.PASSED
    assert_fails(evaluate_rules([named], SimpleNamespace(metadata="Nori", index="i")), "PV101", "Nori i")


def test_at_places_a_finding_at_a_recorded_line():
    assert at("models/nori/info.py:12", "m") == Finding("m", path="models/nori/info.py", line=12)
    for unplaced in ("tabarena.models.nori.info:nori", "", None, ":3", "info.py:"):
        assert at(unplaced, "m") == Finding("m")


@attrs.frozen
class Score:
    value: float


@attrs.frozen
class Meta:
    name: str


def test_records_gives_one_kind_and_nothing_for_other_facts():
    facts = Records([Score(1.0), Meta("m"), Score(2.0)], [])
    assert records(Score)(SimpleNamespace(facts=facts)) == [Score(1.0), Score(2.0)]
    assert records(Meta)(SimpleNamespace(facts=facts)) == [Meta("m")]
    assert records(Score)(SimpleNamespace(facts=SimpleNamespace(metadata="Nori"))) is None  # another plugin's action
