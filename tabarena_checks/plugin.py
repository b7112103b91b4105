"""The TabArena plugin: registered through the ``checks`` entry point like any third party.

Each workflow step lives in its own module; this file only names them. Modules keep heavy
imports (duckdb, pyarrow, numpy, boto3) inside functions so ``checks rules`` stays fast.
"""

from checks import hookimpl
from checks import ModuleWiring

wiring = ModuleWiring(
    "tabarena_checks",
    rules=("rules_upload", "rules_metadata", "rules_protocol", "rules_raw", "rules_register"),
    actions=("upload", "register", "benchmark_log", "process"),
    commands={"synth_cli": ("tabarena",), "inspect_cli": ("inspect",), "precommit": ("precommit",),
              "metadata_cli": ("tabarena",)},
)
checks_rules, checks_actions, checks_commands = wiring.hooks()


@hookimpl
def checks_run_finished(ctx, record, rules):
    """``checks run process --html FILE``: the run report, written whether the run passed or was blocked."""
    if ctx.action == "process" and ctx.options.html:
        from tabarena_checks.html_inspect import after_process

        after_process(ctx, record, rules)
