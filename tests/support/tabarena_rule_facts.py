"""In-process facts for TabArena rule tests: a good declaration, an inference with the fields the rules read,
and the actions' typed options, shared by the rule tests of every family."""

from __future__ import annotations

from types import SimpleNamespace

import attrs

from tabarena_checks.metadata.model import MethodMetadata
from tabarena_checks.publish.process import ProcessOptions
from tabarena_checks.publish.upload import UploadOptions

GOOD = MethodMetadata(
    method="Nori",
    suite="nori-2026",
    method_type="config",
    ag_key="TA-NORI",
    can_hpo=False,
    is_bag=True,
    compute="cpu",
    validation_protocol="8x1",
    constructor="config",
    declared=frozenset({"method", "suite", "ag_key", "can_hpo", "is_bag", "validation_protocol"}),
    source="models/nori/info.py:3",
    variable="nori",
)


@attrs.frozen
class FakeInference:
    """The fields of tabarena_checks.raw.inference.Inference the rules read."""

    methods: tuple = ("TA-Nori",)
    method_type: str | None = "config"
    ag_key: str | None = "TA-NORI"
    compute: str | None = "cpu"
    is_bag: bool | None = True
    can_hpo: bool | None = False
    name_prefix: str | None = "TA-Nori"
    inferred_method: str | None = "TA-Nori"
    raw_config_default: str | None = "TA-Nori_c1_default_BAG_L1"
    validation_protocol: str | None = "8x1"
    validation_protocol_keys: tuple = ("8x1",)
    n_without_protocol: int = 0
    errors: tuple = ()
    unread: tuple = ()
    missing_cells: tuple = ()
    duplicates: tuple = ()
    fidelity: tuple = ()
    metrics: tuple = ("rmse",)
    tasks: tuple = ()

    def config_default_for(self, method):
        if self.raw_config_default is None:
            return None
        return method + self.raw_config_default[len(self.name_prefix) :]


def facts(metadata=GOOD, index=None, **inference):
    return SimpleNamespace(metadata=metadata, inference=FakeInference(**inference), index=index)


def options_of(action, **values):
    """The action's typed options, as the command line builds them (``ctx.options.<name>``)."""
    if action == "upload":
        return UploadOptions(**values)
    return ProcessOptions(**{"run_data_dir": "run", **values})
