"""Test-only: ``LocalHub``, a local read-only Hub the real huggingface_hub client talks to, and its fixture writers.

The builders of the facts the HF rules read are in :mod:`hfmigrate_checks.testing.facts` (not
re-exported here: they run the demo flow, which itself uses the names below).

The runtime never imports this sub-package (tests/core/test_core_layout.py); tests, benchmarks, the demo and
other plugins' tests do, through these names.
"""

from hfmigrate_checks.testing.localhub import (
    Fault,
    HubRequest,
    LocalHub,
    set_whoami,
    transient_faults,
    write_dataset,
    write_model,
)

__all__ = ["Fault", "HubRequest", "LocalHub", "set_whoami", "transient_faults", "write_dataset", "write_model"]
