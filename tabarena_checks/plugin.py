"""The TabArena plugin: registered through the ``checks`` entry point like any third party.

Each workflow step lives in its own sub-package (raw, metadata, publish, rules, report, synth); this file
only names the modules that hold rules, actions and commands. Modules keep heavy
imports (duckdb, pyarrow, numpy, boto3) inside functions so ``checks rules`` stays fast.
"""

from checks import ModuleWiring, hookimpl

wiring = ModuleWiring(
    "tabarena_checks",
    rules=("rules.upload", "rules.metadata", "rules.protocol", "rules.raw", "rules.raw_checks", "rules.register"),
    actions={
        "publish.upload": ("upload", "unpublish"),
        "publish.register": ("register",),
        "publish.benchmark_log": ("log",),
        "publish.process": ("process",),
    },
    commands={
        "tabarena": ("cli:tabarena_group", "TabArena tools: synthetic runs, raw-data inspection, batch publishing."),
        "inspect": (
            "report.inspect_cli:inspect_command",
            "Report the inferred metadata, coverage, fidelity and a MethodMetadata snippet for RUN_DATA_DIR.",
        ),
    },
    hooks=("precommit-info",),
    precommit={
        "info-py": (
            "metadata.precommit:info_py_command",
            "Check MethodMetadata declarations in info.py FILES statically (read-only; path:line:col: CODE message).",
        ),
    },
)
checks_rules, checks_actions, checks_commands = wiring.hooks()
checks_gates = wiring.checks_gates


@hookimpl
def checks_run_finished(ctx, record, rules):
    """``checks run process --html FILE``: the run report, written whether the run passed or was blocked."""
    if ctx.action == "process" and ctx.options.html:
        from tabarena_checks.report.html_inspect import after_process  # noqa: PLC0415 - only `run process --html` writes it; every command, `checks rules` too, loads this module

        after_process(ctx, record, rules)
