"""The layers import one way: rules -> facts -> readers and models; actions -> facts and the engine; never back.

A rule must judge what an action will do without importing the action (so the gate reads, and
is tested, without the code that publishes); the framework knows no domain, its test helpers
included. Each line of :data:`NEVER` names importers (module prefixes) and what they must not
import; the graph is the one tests/core/test_core_layout.py reads from the source, function-level and
``TYPE_CHECKING`` imports included.
"""

from __future__ import annotations

from tests.support.imports import import_graph

#: (importers, imported): no module under an importer prefix imports a module under an imported prefix
NEVER: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # the framework, its test helpers included, knows no domain
    (("checks",), ("tabarena_checks", "hfmigrate_checks")),
    # rules read facts, readers and models, never what acts, writes or reports
    (
        ("tabarena_checks.rules",),
        (
            "tabarena_checks.publish",
            "tabarena_checks.engine",
            "tabarena_checks.report",
            "tabarena_checks.synth",
            "tabarena_checks.cli",
            "tabarena_checks.testing",
            "tabarena_checks.plugin",
        ),
    ),
    (
        ("hfmigrate_checks.rules",),
        (
            "hfmigrate_checks.drafts.action",
            "hfmigrate_checks.drafts.bundle",
            "hfmigrate_checks.drafts.decide",
            "hfmigrate_checks.drafts.review_html",
            "hfmigrate_checks.drafts.precommit",
            "hfmigrate_checks.cli",
            "hfmigrate_checks.commands",
            "hfmigrate_checks.testing",
            "hfmigrate_checks.plugin",
        ),
    ),
    # the facts contract sits below the rules and the actions that hand it over
    (
        ("tabarena_checks.facts", "tabarena_checks.cache"),
        ("tabarena_checks.rules", "tabarena_checks.publish", "tabarena_checks.engine", "tabarena_checks.report"),
    ),
    (
        ("hfmigrate_checks.facts",),
        (
            "hfmigrate_checks.rules",
            "hfmigrate_checks.drafts",
            "hfmigrate_checks.cli",
            "hfmigrate_checks.commands",
        ),
    ),
    # the engine gets facts and metadata and writes cache files: it knows no action, rule or report
    (("tabarena_checks.engine",), ("tabarena_checks.publish", "tabarena_checks.rules", "tabarena_checks.report")),
    # actions hand facts to rules; they never call one
    (("tabarena_checks.publish", "hfmigrate_checks.drafts"), ("tabarena_checks.rules", "hfmigrate_checks.rules")),
    # the worker pools serve raw/, engine/ and synth/ and know no workflow step: any step may use them
    (("tabarena_checks.workers",), ("tabarena_checks",)),
    # runtime code never reaches into another domain
    (("tabarena_checks",), ("hfmigrate_checks",)),
    (("hfmigrate_checks",), ("tabarena_checks",)),
)


def _under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def violations(graph: dict[str, dict[str, int]], never=NEVER) -> list[str]:
    """``importer:line imports target`` for every edge of ``graph`` that a line of ``never`` forbids."""
    found = []
    for importers, imported in never:
        for module, edges in sorted(graph.items()):
            if not _under(module, importers):
                continue
            found += [
                f"{module}:{line} imports {target}"
                for target, line in sorted(edges.items())
                if _under(target, imported)
            ]
    return found


def test_every_layer_imports_only_downwards():
    graph = import_graph()
    assert "tabarena_checks.facts.constants" in graph["tabarena_checks.rules.upload"]  # the graph sees the real edges
    found = violations(graph)
    assert not found, "imports against the layers (docs/architecture.md):\n" + "\n".join(found)


def test_a_rule_importing_an_action_is_named():
    graph = {
        "pkg.rules.a": {"pkg.facts": 3, "pkg.publish.process": 9},
        "pkg.publish.process": {"pkg.facts": 1},
        "core.judge": {"pkg.testing.helpers": 12},
    }
    never = ((("pkg.rules",), ("pkg.publish",)), (("core",), ("pkg",)))
    assert violations(graph, never) == [
        "pkg.rules.a:9 imports pkg.publish.process",
        "core.judge:12 imports pkg.testing.helpers",
    ]
