"""TA2xx: the validation protocol a method's results were fit under.

Results fit under different protocols (8-fold bagging, a holdout, the outer split) are
not comparable, so the protocol is declared in ``info.py`` (``validation_protocol``),
recorded in every raw result, and only bagged protocols and systems may be published as
official results.
"""

from __future__ import annotations

from checks import InputError, needs, rule
from tabarena_checks.facts.constants import INFO_ACTIONS, PROCESS, PROCESS_UPLOAD
from tabarena_checks.facts.providers import (
    at,
    declared_metadata,
    expected_protocol,
    raw_inference,
    single_method_inference,
)


def _histogram(inference) -> str:
    counts = getattr(inference, "validation_protocol_counts", None)
    if counts:
        return ", ".join(f"{key}: {n}" for key, n in counts)
    return ", ".join(map(str, inference.validation_protocol_keys))


@rule(
    "TA201",
    "validation-protocol-declared",
    actions=PROCESS,
    required=True,
    why="A protocol recorded in the raw results but not declared (or declared differently) means the "
    "published metadata describes a different experiment than the one that ran.",
    example_fail="raw results record '8x1'; info.py sets no validation_protocol",
    example_pass="raw results record '8x1'; MethodMetadata.config(..., validation_protocol=\"8x1\")",
)
@needs(declared_metadata, single_method_inference)
def validation_protocol_declared(ctx, md, inference):
    """The declared ``validation_protocol`` must equal the key the raw results record (legacy raw without one passes)."""
    mixed = _mixed_protocols(inference)
    if mixed is not None:
        yield at(md, mixed)
        return
    yield from _against_declaration(md, inference)


def _mixed_protocols(inference) -> str | None:
    """What is wrong when the raw results do not all record one protocol, else None.

    Checked before the declaration because no declaration can match results fit under several
    protocols (or some under none): the results must be fixed first.
    """
    keys = [k for k in inference.validation_protocol_keys if k is not None]
    if len(keys) > 1:
        return (
            f"the raw results were fit under {len(keys)} validation protocols ({_histogram(inference)}); "
            f"one method's results must share one protocol: rerun the odd ones or split them "
            f"into separate methods"
        )
    legacy = getattr(inference, "n_without_protocol", 0)
    if keys and legacy:
        return (
            f"{legacy} raw result(s) record no validation protocol while the others record "
            f"{keys[0]!r}; rerun them (or keep them apart) so every result records the same protocol"
        )
    return None


def _against_declaration(md, inference):
    """The finding when the declared protocol differs from (or leaves out) the one the results record."""
    from tabarena_checks.metadata import compare  # noqa: PLC0415 - start-up: the comparison loads the metadata model's attrs classes, and `checks rules` imports every rule module

    row = compare.row_for(md, inference, "validation_protocol")
    if row is None or row.matches:
        return
    if row.declared is None:
        yield at(
            md,
            f"validation_protocol: the raw results record {row.inferred!r} but info.py does not "
            f"declare it; add validation_protocol={row.inferred!r}",
        )
    else:
        yield at(md, row.message, "validation_protocol")


@rule(
    "TA203",
    "validation-protocol-well-formed",
    actions=INFO_ACTIONS,
    why="Keys are compared as text; a misspelt key ('8x01', '8x1 +tiny') never matches what the "
    "results record and cannot be classified as official or not.",
    example_fail='validation_protocol="8-fold"',
    example_pass='validation_protocol="8x1+tiny5x5<=500+task-specific+adapt-classes"',
)
@needs(declared_metadata)
def validation_protocol_well_formed(ctx, md):
    """A declared ``validation_protocol`` must be a well-formed key such as ``8x1`` or ``holdout:8x1``."""
    if md.validation_protocol is None:
        return
    from tabarena_checks.raw import protocol  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    try:
        protocol.parse_key(md.validation_protocol)
    except InputError as exc:
        yield at(md, str(exc), "validation_protocol")


def _key_in_force(ctx, md) -> tuple[str | None, str]:
    """The key to judge and where it came from: the raw results' when there are any, else info.py's."""
    inference = raw_inference(ctx)
    if inference is not None:
        keys = [k for k in inference.validation_protocol_keys if k is not None]
        if keys:
            return (keys[0] if len(keys) == 1 else None), "the raw results"
        return None, "legacy raw results"
    return (md.validation_protocol if md else None), "info.py"


@rule(
    "TA202",
    "validation-protocol-official",
    actions=PROCESS_UPLOAD,
    why="Leaderboards only rank results fit under the official protocols; a holdout, outer-split or "
    "custom run published as official would be compared against results it cannot match.",
    example_fail="checks run upload ... --expect-validation-protocol tabarena  # raw records 'holdout:8x1'",
    example_pass="checks run upload ... --expect-validation-protocol tabarena  # raw records '8x1'",
)
def validation_protocol_official(ctx):
    """With ``--expect-validation-protocol``, results must be fit under that official protocol.

    Holdout, outer-split and custom keys are refused as official results. Without the option
    a custom run may be processed (it is published as custom). Systems are exempt; legacy
    results that record no protocol are not checked.
    """
    expected = expected_protocol(ctx)
    if not expected:
        return
    md = declared_metadata(ctx)
    if md is not None and md.is_system:
        return
    from tabarena_checks.raw import protocol  # noqa: PLC0415 - start-up: `checks rules` loads no tabarena_checks.raw module (tests/core/test_core_startup.py)

    try:
        want = protocol.resolve_expected(expected)
    except InputError as exc:
        yield str(exc)
        return
    key, origin = _key_in_force(ctx, md)
    if key is None:
        return  # legacy raw, several keys (TA201 reports those), or nothing declared
    try:
        parsed = protocol.parse_key(key)
    except InputError as exc:
        yield f"{origin}: {exc}"
        return
    if not protocol.is_official(parsed):
        yield (
            f"validation protocol {key!r} ({parsed.flavour}) from {origin} cannot be submitted as an "
            f"official result: only bagged protocols (e.g. 'tabarena' = '{protocol.OFFICIAL['tabarena']}') "
            f"and systems are official; drop --expect-validation-protocol to publish it as a custom run"
        )
    elif key != want:
        yield (
            f"--expect-validation-protocol {expected} expects {want!r}, got {key!r} from {origin}; "
            f"this run cannot be submitted as an official {expected} result"
        )


RULES = [validation_protocol_declared, validation_protocol_official, validation_protocol_well_formed]
