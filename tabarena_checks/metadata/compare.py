"""What the raw results say against what ``info.py`` declares, one row per field.

The rules (TA102-TA109, TA201) and the ``checks inspect`` table read the same rows, so
the gate and the report can never disagree. Severities follow TabArena's verify step:
``method`` only warns (raw names carry the ``TA-`` prefix of the model class);
``method_type`` and ``compute`` are errors; for configs (declared and inferred) so are ``ag_key``,
``config_default`` (after the rename to the method's name), ``can_hpo`` and ``is_bag``;
``model_key`` is for information. A row whose inferred value is unknown (``None``) is
left out; ``config_default`` is only inferred for single-config runs.
"""

from __future__ import annotations

import datetime as dt
import getpass
import os
from typing import TYPE_CHECKING, Any

import attrs

from checks import Waiver
from tabarena_checks.metadata.model import MethodMetadata

if TYPE_CHECKING:
    from checks import Waiver

ERROR, WARN, INFO = "error", "warn", "info"
#: field -> the rule that gates it
RULE_FOR_FIELD = {
    "method": "TA102",
    "method_type": "TA103",
    "ag_key": "TA104",
    "compute": "TA105",
    "can_hpo": "TA106",
    "is_bag": "TA107",
    "config_default": "TA108",
    "model_key": "TA109",
    "validation_protocol": "TA201",
}
#: what ``--ignore-metadata-mismatch`` waives: the rules of the rows above but the protocol's
MISMATCH_RULES = ("TA102", "TA103", "TA104", "TA105", "TA106", "TA107", "TA108", "TA109")


@attrs.frozen
class DiffRow:
    """One field: the inferred and declared values, how much a difference matters, and a note."""

    field: str
    inferred: Any
    declared: Any
    severity: str
    note: str = ""

    @property
    def matches(self) -> bool:
        return self.inferred == self.declared

    @property
    def status(self) -> str:
        if self.matches:
            return "ok"
        if self.declared is None:
            return "not declared"
        return "differs"

    @property
    def message(self) -> str:
        return f"{self.field}: inferred={self.inferred!r} (raw) != provided={self.declared!r}" + (
            f" ({self.note})" if self.note else ""
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "inferred": self.inferred,
            "declared": self.declared,
            "severity": self.severity,
            "status": self.status,
            "note": self.note,
            "rule": RULE_FOR_FIELD.get(self.field),
        }


def rows(metadata: MethodMetadata, inference: Any) -> list[DiffRow]:
    """The comparison rows for ``metadata`` against ``inference`` (see the module docstring)."""
    out: list[DiffRow] = []

    def add(field: str, inferred: Any, declared: Any, severity: str, note: str = "") -> None:
        if inferred is not None:
            out.append(DiffRow(field, inferred, declared, severity, note))

    raw_name = inference.inferred_method
    prefix_only = isinstance(raw_name, str) and raw_name.removeprefix("TA-") == metadata.method
    add(
        "method",
        raw_name,
        metadata.method,
        WARN,
        "warn only: only the TA- prefix of the model class differs; processing renames results to the method"
        if prefix_only
        else "warn only: processing renames the raw results to the declared method",
    )
    add(
        "method_type",
        inference.method_type,
        metadata.method_type,
        ERROR,
        "the raw results mix configs and baselines: keep them in separate directories"
        if inference.method_type == "mixed"
        else "config iff the results carry simulation artifacts; systems are recorded as baselines",
    )
    add(
        "compute",
        inference.compute,
        metadata.compute,
        ERROR,
        "gpu when any result used a GPU (baselines always record 0 GPUs)",
    )
    if metadata.method_type == inference.method_type == "config":
        add("ag_key", inference.ag_key, metadata.ag_key, ERROR)
        add(
            "model_key", inference.ag_key, metadata.effective_model_key, INFO, "info only: model_key defaults to ag_key"
        )
        if inference.raw_config_default is not None:
            # the name the processed cache holds: method, then name_suffix, then the raw config's rest.
            # TabArena 0.1.0's own verification leaves the suffix out, naming a config its processing
            # never writes (and its HPO trajectories then fail): docs/tabarena-data.md lists this deviation
            suffixed = f"{metadata.method}{metadata.name_suffix}" if isinstance(metadata.name_suffix, str) else None
            default = inference.config_default_for(suffixed or metadata.method)
            if metadata.config_default is None:
                add("config_default", default, None, INFO, "not declared: resolved from the processed results")
            else:
                add(
                    "config_default",
                    default,
                    metadata.config_default,
                    ERROR,
                    "after renaming the raw name prefix to the method name"
                    + (" and its name_suffix" if suffixed else ""),
                )
        add(
            "can_hpo",
            inference.can_hpo,
            metadata.effective_can_hpo,
            ERROR,
            "true when the run holds more than one config",
        )
        add(
            "is_bag",
            inference.is_bag,
            metadata.is_bag,
            ERROR,
            "true when any result was bagged with more than one child",
        )
    add(
        "validation_protocol",
        inference.validation_protocol,
        metadata.validation_protocol,
        ERROR,
        "the key every raw result records",
    )
    return out


def row_for(metadata: MethodMetadata, inference: Any, field: str) -> DiffRow | None:
    return next((r for r in rows(metadata, inference) if r.field == field), None)


def metadata_mismatch_waivers(ctx, today: dt.date | None = None) -> list[Waiver]:
    """Waivers for ``--ignore-metadata-mismatch``: each mismatch rule, any target, for today only.

    The flag never skips a rule: the rules still run, their findings are shown, and the
    decision record lists these waivers with the user who gave the flag. It lives here, under
    the process action that applies it and the rules it waives, so neither imports the other.
    """
    try:
        owner = getpass.getuser()
    except Exception:  # no passwd entry (containers): fall back to the environment
        owner = os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
    return [
        Waiver(
            rule=code,
            target="*",
            reason="--ignore-metadata-mismatch given on the command line",
            owner=owner,
            expires=today or ctx.today,
        )
        for code in MISMATCH_RULES
    ]
