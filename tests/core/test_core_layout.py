"""The shape of the three packages: no import circles, and the runtime never imports test-only code.

The import graph is read from the source (ast), so it sees every import: top level, inside
functions and under ``TYPE_CHECKING``. A circle is a strongly connected component of that
graph with more than one module; each is named with the imports that close it. The same holds
one level up: with each module collapsed into its sub-package (a top-level module is a node of
its own), the workflow steps import each other one way only (docs/architecture.md).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from tests.support.imports import PACKAGES, import_graph, lazy_package, project_modules

ROOT = Path(__file__).resolve().parents[2]
#: test-only code: the local Hub simulator and the fixtures for plugin tests
TESTING = ("hfmigrate_checks.testing", "tabarena_checks.testing", "checks.testing")
#: ``python -m ...demo`` runs a whole flow against the local servers, so it may use them; nothing imports a demo
DEMOS = ("tabarena_checks.demo", "hfmigrate_checks.demo")
#: what may sit at the top of a domain package; everything else lives in the sub-package of its workflow step
#: (``workers.py``: the worker processes the steps share, raw/, engine/ and synth/, knowing none of them)
TOP_LEVEL = {
    "tabarena_checks": {"__init__.py", "plugin.py", "cli.py", "demo.py", "workers.py"},
    "hfmigrate_checks": {"__init__.py", "plugin.py", "cli.py", "demo.py"},
}


def circles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _top_level_names(path: Path) -> set[str]:
    """Names a module binds at its top level (inside ``if`` and ``try`` blocks too)."""
    names, todo = set(), list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            todo += [
                *node.body,
                *getattr(node, "orelse", []),
                *getattr(node, "finalbody", []),
                *(s for h in getattr(node, "handlers", []) for s in h.body),
            ]
    return names


def _describe(graph, component) -> str:
    inside = set(component)
    return "; ".join(
        f"{a}:{line} imports {b}" for a in component for b, line in sorted(graph[a].items()) if b in inside
    )


def test_no_import_circles():
    graph = import_graph()
    assert {"checks.runner", "tabarena_checks.raw.reader", "hfmigrate_checks.hub.client"} <= set(graph)
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(_describe(graph, c) for c in found)


def sub_package_graph(graph: dict[str, dict[str, int]]) -> dict[str, dict[str, list[str]]]:
    """Sub-package -> {sub-package it imports: the module imports behind that edge}.

    A module is collapsed into the sub-package it sits in (``tabarena_checks.publish.process`` ->
    ``tabarena_checks.publish``); a top-level module (``tabarena_checks.plugin``, ``checks.runner``)
    and a package itself are nodes of their own.
    """

    def node(module: str) -> str:
        return ".".join(module.split(".")[:2])

    collapsed: dict[str, dict[str, list[str]]] = {}
    for module, edges in sorted(graph.items()):
        imports = collapsed.setdefault(node(module), {})
        for target, line in sorted(edges.items()):
            if node(target) != node(module):
                imports.setdefault(node(target), []).append(f"{module}:{line} imports {target}")
    return collapsed


def describe_sub_package_circle(collapsed: dict[str, dict[str, list[str]]], component: list[str]) -> str:
    inside = set(component)
    return (
        " <-> ".join(component)
        + ":\n"
        + "\n".join(
            f"  {why}" for a in component for b, whys in sorted(collapsed[a].items()) if b in inside for why in whys
        )
    )


def test_no_import_circles_between_sub_packages():
    """raw -> metadata -> facts -> engine -> publish -> report, facts -> rules; source -> hub -> drafts -> rules."""
    collapsed = sub_package_graph(import_graph())
    assert {"tabarena_checks.publish", "tabarena_checks.rules", "hfmigrate_checks.drafts"} <= set(collapsed)
    assert "tabarena_checks.facts" in collapsed["tabarena_checks.rules"]  # a real edge, collapsed
    found = circles(collapsed)
    assert not found, "import circles between sub-packages:\n" + "\n".join(
        describe_sub_package_circle(collapsed, c) for c in found
    )


def test_the_sub_package_check_finds_a_circle_no_two_modules_make(tmp_path):
    pkg = tmp_path / "demo_pkg"
    for sub in ("step_a", "step_b"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text(f'"""{sub}."""\n')
    (pkg / "__init__.py").write_text("")
    (pkg / "step_a" / "one.py").write_text("from demo_pkg.step_b import two\n")
    (pkg / "step_b" / "two.py").write_text("")
    (pkg / "step_b" / "three.py").write_text("def f():\n    from demo_pkg.step_a import four\n")
    (pkg / "step_a" / "four.py").write_text("")
    (pkg / "facts.py").write_text("from demo_pkg.step_b import two\n")
    (pkg / "step_b" / "five.py").write_text("from demo_pkg import facts\n")
    graph = import_graph(tmp_path, ("demo_pkg",))
    assert circles(graph) == []  # module by module, no circle
    collapsed = sub_package_graph(graph)
    assert circles(collapsed) == [["demo_pkg.facts", "demo_pkg.step_a", "demo_pkg.step_b"]]
    assert collapsed["demo_pkg.step_b"]["demo_pkg.step_a"] == [
        "demo_pkg.step_b.three:2 imports demo_pkg.step_a",
        "demo_pkg.step_b.three:2 imports demo_pkg.step_a.four",
    ]
    message = describe_sub_package_circle(collapsed, circles(collapsed)[0])
    assert "demo_pkg.step_a.one:1 imports demo_pkg.step_b.two" in message
    assert "demo_pkg.step_b.five:1 imports demo_pkg.facts" in message and "demo_pkg.facts:1 imports" in message
    (pkg / "step_b" / "three.py").write_text("")
    (pkg / "step_b" / "five.py").write_text("")
    assert circles(sub_package_graph(import_graph(tmp_path, ("demo_pkg",)))) == []


def test_every_import_of_a_project_module_names_one_that_exists():
    """After a module moves, an old path left in a function body, a benchmark or a test fails here, not in use."""
    modules = project_modules(ROOT)
    lazy = {name for name, path in modules.items() if lazy_package(path)}
    defined = {name: _top_level_names(path) for name, path in modules.items()}
    sources = [p for d in (*PACKAGES, "tests", "benchmarks", "plugins") for p in sorted((ROOT / d).rglob("*.py"))]
    stale = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                wanted = [(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                wanted = [(a.name, None) for a in node.names]
            else:
                continue
            for module, name in wanted:
                if module.split(".")[0] not in PACKAGES:
                    continue
                where = f"{path.relative_to(ROOT)}:{node.lineno}"
                if module not in modules:
                    stale.append(f"{where}: no module {module}")
                elif name and module not in lazy and f"{module}.{name}" not in modules and name not in defined[module]:
                    stale.append(f"{where}: {module} has no {name}")
    assert not stale, "imports of modules or names that do not exist:\n" + "\n".join(stale)


def test_a_domain_package_keeps_only_its_wiring_facts_and_demo_at_the_top():
    for package, allowed in TOP_LEVEL.items():
        extra = sorted(p.name for p in (ROOT / package).glob("*.py") if p.name not in allowed)
        assert not extra, (
            f"{package}: {', '.join(extra)} belong in the sub-package of their workflow step "
            f"(docs/architecture.md, 'The domain plugins')"
        )


def test_each_sub_package_says_its_job_and_imports_nothing():
    for package in TOP_LEVEL:
        for init in sorted((ROOT / package).glob("*/__init__.py")):
            tree = ast.parse(init.read_text(encoding="utf-8"))
            where = init.relative_to(ROOT)
            assert ast.get_docstring(tree), f"{where}: say the sub-package's job in its docstring"
            imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
            if init.parent.name != "testing":  # the Hub simulator's public names are re-exported there
                assert not imports, f"{where}: importing the sub-package should import nothing else"


def test_the_docs_name_only_modules_and_files_that_exist():
    """A dotted ``tabarena_checks.x.y`` or a path ``hfmigrate_checks/x/y.py`` in the docs names something real."""
    modules = project_modules(ROOT)
    defined = {name: _top_level_names(path) for name, path in modules.items()}
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "plugins").glob("*/README.md"))]
    wrong = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for match in re.finditer(r"(?<![\w./-])((?:tabarena_checks|hfmigrate_checks)(?:/\w+)+\.py)\b", text):
            if not (ROOT / match.group(1)).is_file():
                wrong.append(f"{page.relative_to(ROOT)}: {match.group(1)} (no such file)")
        for match in re.finditer(r"(?<![\w./-])((?:tabarena_checks|hfmigrate_checks)(?:\.\w+)+)", text):
            parts = match.group(1).split(".")
            known = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules)
            module, rest = ".".join(parts[:known]), parts[known:]
            if rest and rest[0] not in defined[module]:
                wrong.append(f"{page.relative_to(ROOT)}: {match.group(1)} ({module} has no {rest[0]})")
    assert not wrong, "the docs name modules that moved or never were:\n" + "\n".join(wrong)


def test_the_circle_check_finds_a_circle_through_sub_packages_and_a_function_level_import(tmp_path):
    pkg = tmp_path / "demo_pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text('"""A sub-package."""\n')
    (pkg / "sub" / "a.py").write_text("from demo_pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub.a import x\n")
    (pkg / "c.py").write_text("import demo_pkg.b\n")
    graph = import_graph(tmp_path, ("demo_pkg",))
    assert graph["demo_pkg.c"] == {"demo_pkg": 1, "demo_pkg.b": 1}
    assert circles(graph) == [["demo_pkg.b", "demo_pkg.sub.a"]]


def _runtime(graph, testing=TESTING, demos=DEMOS) -> list[str]:
    return [m for m in graph if not m.startswith(testing) and m not in demos]


def leaks_into_runtime(graph, testing=TESTING, demos=DEMOS) -> list[str]:
    """Each chain by which a runtime module imports test-only code, directly or not."""
    leaks = []
    for module in _runtime(graph, testing, demos):
        via, todo = {module: ""}, [module]  # module -> the module that imports it
        while todo:
            node = todo.pop()
            for nxt in graph[node]:
                if nxt not in via:
                    via[nxt] = node
                    todo.append(nxt)
        for reached in via:
            if reached.startswith(testing):
                chain = [reached]
                while via[chain[-1]]:
                    chain.append(via[chain[-1]])
                leaks.append(" <- ".join(chain))
    return sorted(leaks)


def test_the_runtime_never_imports_the_testing_sub_packages():
    graph = import_graph()
    assert "hfmigrate_checks.testing.localhub" in graph  # the Hub simulator lives in the testing sub-package
    leaks = leaks_into_runtime(graph)
    assert not leaks, "the runtime imports test-only code:\n" + "\n".join(leaks)


def test_the_leak_check_follows_a_function_level_import_through_another_module(tmp_path):
    pkg = tmp_path / "demo_pkg"
    (pkg / "testing").mkdir(parents=True)
    for init in (pkg / "__init__.py", pkg / "testing" / "__init__.py"):
        init.write_text("")
    (pkg / "testing" / "server.py").write_text("")
    (pkg / "demo.py").write_text("from demo_pkg.testing import server\n")
    (pkg / "helpers.py").write_text("def f():\n    from demo_pkg.testing.server import x\n")
    (pkg / "action.py").write_text("from demo_pkg import helpers\n")
    graph = import_graph(tmp_path, ("demo_pkg",))
    leaks = leaks_into_runtime(graph, ("demo_pkg.testing",), ("demo_pkg.demo",))
    assert leaks == [
        "demo_pkg.testing <- demo_pkg.helpers",
        "demo_pkg.testing <- demo_pkg.helpers <- demo_pkg.action",
        "demo_pkg.testing.server <- demo_pkg.helpers",
        "demo_pkg.testing.server <- demo_pkg.helpers <- demo_pkg.action",
    ]


def test_importing_every_runtime_module_loads_no_testing_module():
    """The same, by running it: import every runtime module and call every plugin hook, then look at sys.modules."""
    runtime = sorted(_runtime(import_graph()))
    code = (
        "import importlib, json, sys\n"
        "import click\n"
        "from checks import LazyGroup\n"
        f"for name in {runtime!r}:\n"
        "    importlib.import_module(name)\n"
        "for plugin in ('tabarena_checks.plugin', 'hfmigrate_checks.plugin'):\n"
        "    module = importlib.import_module(plugin)\n"
        "    root = LazyGroup('checks')\n"
        "    module.checks_rules(), module.checks_actions(name=None), module.checks_commands(cli=root, name=None)\n"
        "    [root.get_command(click.Context(root), name) for name in root.lazy_commands]\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout)
    assert "hfmigrate_checks.drafts.action" in loaded and "tabarena_checks.publish.process" in loaded
    assert not [m for m in loaded if m.startswith(TESTING)]
