"""Test-only: builders of the facts each TabArena action really gathers, from synthetic runs and checkouts.

The runtime never imports this sub-package (tests/core/test_core_layout.py); tests, benchmarks and other
plugins' tests do, through these names.
"""

from tabarena_checks.testing.facts import (
    ArenaCheckout,
    TabArenaRun,
    arena_checkout,
    gather_facts,
    info_facts,
    log_facts,
    process_facts,
    register_facts,
    tabarena_run,
    unpublish_facts,
    upload_facts,
)

__all__ = [
    "ArenaCheckout",
    "TabArenaRun",
    "arena_checkout",
    "gather_facts",
    "info_facts",
    "log_facts",
    "process_facts",
    "register_facts",
    "tabarena_run",
    "unpublish_facts",
    "upload_facts",
]
