"""``checks tabarena ...``: TabArena's tools that are not gated actions, declared by name.

synth writes a synthetic run, metadata shows what the static reader reads from an info.py,
publish runs a plan's single commands as one batch: three workflow steps, so each command
lives in its own step's sub-package (``synth/cli.py``, ``metadata/cli.py``,
``publish/batch_cli.py``) and is imported only when it runs or shows its help (a
``checks.LazyGroup``); ``checks tabarena --help`` lists them from the short help here.
"""

from __future__ import annotations

from checks import LazyGroup

#: command -> (where it lives, its short help: the first sentence of its help, held equal by tests/cli/test_cli_lazy.py)
COMMANDS = {
    "synth": (
        "tabarena_checks.synth.cli:synth_cmd",
        "Write a synthetic TabArena run to OUT (files under OUT/data) and print the data directory.",
    ),
    "publish": (
        "tabarena_checks.publish.batch_cli:publish_cmd",
        "Publish every method of PLAN (TOML): process, upload, register and log, watched and resumable.",
    ),
    "metadata": (
        "tabarena_checks.metadata.cli:metadata",
        "Show every MethodMetadata declaration of FILE (or VAR) as read statically: each field, derived ones "
        "included, and where its value came from.",
    ),
}


def tabarena_group() -> LazyGroup:
    """The ``tabarena`` group, its commands declared, none imported (``plugin.py`` declares the group itself)."""
    return LazyGroup(
        "tabarena",
        help="TabArena tools: synthetic runs, raw-data inspection, batch publishing.",
        lazy_commands=COMMANDS,
    )
