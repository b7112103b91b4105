"""Helpers for testing rules and plugins, usable directly or as pytest fixtures.

In a plugin's ``conftest.py``: ``pytest_plugins = ["checks.testing"]`` gives the
fixtures ``checks_evaluate`` and ``checks_cli``.
"""

from __future__ import annotations

import datetime as dt
import io
import os
from collections.abc import Iterable, Mapping, Sequence
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import attrs

from checks import config as config_mod
from checks.config import Config, Waiver
from checks.context import RunContext
from checks.model import Outcome, Rule, Severity, Verdict
from checks.judge import evaluate


def evaluate_rules(
    rules: Iterable[Rule],
    facts: Any = None,
    *,
    action: str = "test",
    options: Any = None,
    config: Config | str | None = None,
    settings: Any = None,
    target: str = "test",
    today: dt.date | None = None,
    extra_waivers: Iterable[Waiver] = (),
    dry_run: bool = False,
) -> dict[str, Verdict]:
    """Evaluate ``rules`` against ``facts`` the way the runner does; returns verdicts by code.

    ``config`` may be rules.toml text (for waivers and severity overrides);
    ``extra_waivers`` are waivers an action adds from its command line; ``options`` is the
    action's options object (or a dict for an action without an options class).
    ``dry_run`` judges a plan (``ctx.dry_run``) instead of an execution.
    """
    if isinstance(config, str):
        config = config_mod.parse(config, source="<test rules.toml>")
    config = config or Config()
    rules = list(rules)
    ctx = RunContext(action=action, options=_options(options), config=config, settings=settings,
                     today=today or dt.date.today(), facts=facts, target=target, dry_run=dry_run,
                     extra_waivers=list(extra_waivers))
    chosen = [(r, _severity(r, config)) for r in rules]
    return {v.code: v for v in evaluate(chosen, ctx, [r.code for r in rules])}


def _options(options: Any) -> Any:
    """The action's options as the runner passes them: a fresh dict for none or a mapping, else the object."""
    return dict(options or {}) if options is None or isinstance(options, Mapping) else options


def _severity(rule: Rule, config: Config) -> Severity:
    """The rule's severity, or the one ``config``'s ``[rules.CODE]`` sets."""
    return (config.rules.get(rule.code) and config.rules[rule.code].severity) or rule.severity


def assert_fails(verdicts: Mapping[str, Verdict], code: str, contains: str = "") -> Verdict:
    """Assert rule ``code`` failed (and a finding mentions ``contains``)."""
    v = verdicts[code]
    assert v.outcome is Outcome.FAILED, f"{code} expected to fail, got {v.outcome.value}: {v.message}"
    if contains:
        assert contains in v.message, f"{code} message {v.message!r} lacks {contains!r}"
    return v


def assert_passes(verdicts: Mapping[str, Verdict], code: str) -> Verdict:
    v = verdicts[code]
    assert v.outcome is Outcome.PASSED, f"{code} expected to pass, got {v.outcome.value}: {v.message}"
    return v


@attrs.frozen
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | os.PathLike | None = None) -> CliResult:
    """Run ``checks ARGS`` in-process with ``env`` added to the environment and ``cwd`` as working directory."""
    from checks.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    try:
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        with redirect_stdout(out), redirect_stderr(err):
            code = main(list(args))
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return CliResult(code, out.getvalue(), err.getvalue())


# --------------------------------------------------------------------------- realistic facts
#
# A rule reads ``ctx.facts``; these build the facts each built-in action really gathers, from
# inputs the project generates (a synthetic TabArena run, a fixture Hub served on 127.0.0.1),
# through the action's own ``gather``. The TabArena and HF builders need the ``[tabarena]``
# and ``[hf]`` extras.

#: the built-in plugins the builders load (autoload stays off: installed third-party plugins play no part)
BUILTIN_PLUGINS = ("tabarena", "hfmigrate")
#: the declaration matching a synthetic run of :func:`tabarena_run` (``{method}``, ``{suite}`` filled in)
SYNTH_INFO = """\
from tabarena.models import MethodMetadata

{variable} = MethodMetadata.config(
    method="{method}", suite="{suite}", ag_key="TA-{upper}", config_default="{method}_c1_default_BAG_L1",
    can_hpo=False, is_bag=True, compute="cpu", validation_protocol="8x1",
    cache_type="r2", cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
)
"""


def gather_facts(action: str, options: Mapping[str, Any], *, config: Config | str | None = None,
                 plugin_args: Sequence[str] = BUILTIN_PLUGINS, dry_run: bool | None = None) -> Any:
    """The facts ``checks run ACTION`` would gather with ``options`` (keyword names as in ``ctx.options``).

    ``dry_run`` defaults to what the command does without a flag: plan for an action that plans
    by default (upload), execute otherwise.
    """
    from checks import plugins

    registry = plugins.load(list(plugin_args), environ={plugins.AUTOLOAD_ENV: "1"})
    if isinstance(config, str):
        config = config_mod.parse(config, source="<test rules.toml>", sections=registry.config_sections)
    config = config or config_mod.parse("", source="<defaults>", sections=registry.config_sections)
    spec = registry.actions[action]
    ctx = RunContext(action=action, options=spec.make_options(options), config=config,
                     settings=config.arena(spec.arena).settings,
                     dry_run=spec.plans_by_default if dry_run is None else dry_run)
    return spec.gather(ctx)


@attrs.frozen
class TabArenaRun:
    """A synthetic TabArena run on disk with the info.py that declares it."""

    run_dir: Path
    info: Path
    #: ``path/to/info.py:VARIABLE``, what ``--method-metadata`` takes
    metadata_ref: str
    cache_root: Path
    method: str
    suite: str


def tabarena_run(root: str | os.PathLike, *, method: str = "Nori", suite: str = "nori-2026-11",
                 defects: Sequence[str] = (), tasks: Sequence[int] = (363612,), folds: int = 2,
                 **synth: Any) -> TabArenaRun:
    """Write a run like ``checks tabarena synth`` (``defects`` as its ``--defect``) and a matching info.py under ``root``."""
    from tabarena_checks.synth import generate as synth_mod

    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    run_dir = synth_mod.generate_run(root / "run", method=method, name_prefix=f"TA-{method}", ag_key=f"TA-{method.upper()}",
                                     tasks=tuple(tasks), folds=folds, validation_protocol="8x1",
                                     defects=tuple(defects), **synth)
    info = root / "info.py"
    info.write_text(SYNTH_INFO.format(variable="method_metadata", method=method, suite=suite, upper=method.upper()))
    return TabArenaRun(Path(run_dir), info, f"{info}:method_metadata", root / "cache", method, suite)


def process_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run process`` gathers for a fresh :func:`tabarena_run` (a ``TabArenaFacts``)."""
    made = tabarena_run(root, **run)
    return gather_facts("process", {"run_data_dir": str(made.run_dir), "method_metadata": made.metadata_ref,
                                    "cache_root": str(made.cache_root)})


def upload_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run upload`` gathers (an ``UploadFacts``, planning only) after a real ``process`` of a fresh run."""
    made = _processed_run(root, **run)
    return gather_facts("upload", {"method_metadata": made.metadata_ref, "cache_root": str(made.cache_root)})


def _processed_run(root: str | os.PathLike, **run: Any) -> TabArenaRun:
    """A fresh :func:`tabarena_run` put through a real ``checks run process`` into ``root/cache``."""
    made = tabarena_run(root, **run)
    result = run_cli(["-p", "tabarena", "run", "process", str(made.run_dir), "--method-metadata", made.metadata_ref,
                      "--cache-root", str(made.cache_root), "--decision-log", str(Path(root) / "decisions.jsonl")],
                     env={"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}, cwd=root)
    if result.exit_code != 0:
        raise AssertionError(f"process of the synthetic run exited {result.exit_code}:\n{result.stdout}{result.stderr}")
    return made


#: where a TabArena checkout keeps its package sources, its arena's methods.py and the benchmark log
ARENA_SRC = Path("packages/tabarena/src/tabarena")
ARENA_LOG = Path("packages/tabflow_slurm/BENCHMARK_LOG.md")
#: a methods.py laid out as ``checks run register`` expects: grouped collection, superseded list
ARENA_METHODS = """\
from tabarena.models._method_metadata_collection import MethodMetadataCollection

from tabarena.models.lightgbm.info import lightgbm_method_metadata

tabarena_method_metadata_collection = MethodMetadataCollection(
    method_metadata_lst=[
        # Systems
        # Default tabular models (CPU)
        lightgbm_method_metadata,
        # Neural / GPU / foundation models
    ],
)

methods_superseded = []
"""
ARENA_LIGHTGBM = """\
from tabarena.models import MethodMetadata

lightgbm_method_metadata = MethodMetadata.config(method="LightGBM", suite="lightgbm-2026-01", ag_key="GBM", compute="cpu")
"""


@attrs.frozen
class ArenaCheckout:
    """A miniature TabArena git checkout holding a synthetic run's info.py, for ``register`` and ``log``."""

    repo: Path
    #: the :func:`tabarena_run` whose info.py the checkout holds
    run: TabArenaRun
    #: ``tabarena.models.<method>.info:method_metadata``, what ``--method-metadata`` takes for this checkout
    module_ref: str


def arena_checkout(root: str | os.PathLike, **run: Any) -> ArenaCheckout:
    """A git checkout (one commit) with ``contexts/tabarena/methods.py``, a BENCHMARK_LOG.md and a fresh run's info.py."""
    import subprocess

    root = Path(root)
    made = tabarena_run(root, **run)
    repo = root / "tabarena"
    package = made.method.lower()
    texts = {ARENA_SRC / "contexts" / "tabarena" / "methods.py": ARENA_METHODS,
             ARENA_SRC / "models" / "lightgbm" / "info.py": ARENA_LIGHTGBM,
             ARENA_SRC / "models" / package / "info.py": made.info.read_text(encoding="utf-8"),
             ARENA_LOG: "# Benchmark log\n\nAppend-only, newest first. Always record the git SHA.\n"}
    for rel, text in texts.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    who = {"GIT_AUTHOR_NAME": "checks", "GIT_AUTHOR_EMAIL": "checks@example.org",
           "GIT_COMMITTER_NAME": "checks", "GIT_COMMITTER_EMAIL": "checks@example.org"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "checkout for checks.testing"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **who})
    return ArenaCheckout(repo, made, f"tabarena.models.{package}.info:method_metadata")


def register_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run register`` gathers (a ``RegisterFacts``) for a fresh run's info.py in an :func:`arena_checkout`."""
    made = arena_checkout(root, **run)
    return gather_facts("register", {"method_metadata": made.module_ref, "repo": str(made.repo)})


def log_facts(root: str | os.PathLike, *, benchmark_name: str = "nori-2026-11", purpose: str | None = "a new method",
              **run: Any) -> Any:
    """What ``checks run log`` gathers (a ``LogFacts``) for a fresh run and an :func:`arena_checkout`."""
    made = arena_checkout(root, **run)
    return gather_facts("log", {"run": str(made.run.run_dir), "repo": str(made.repo), "benchmark_name": benchmark_name,
                                "purpose": purpose, "method_metadata": made.run.metadata_ref})


def unpublish_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run unpublish`` gathers (an ``UnpublishFacts``) for a run processed for real into ``root/cache``.

    Its ``remote_keys`` lists the bucket only when S3 credentials (and ``AWS_ENDPOINT_URL`` for a
    local server) are in the environment; otherwise it says ``credentials missing``.
    """
    made = _processed_run(root, **run)
    return gather_facts("unpublish", {"method": made.method, "suite": made.suite, "cache_root": str(made.cache_root)})


def info_facts(root: str | os.PathLike, source: str, name: str = "info.py") -> list[Any]:
    """What the ``precommit-info`` rules read: one ``InfoFacts`` per declaration of ``source`` (written to ``root/name``)."""
    from tabarena_checks.metadata import precommit

    path = Path(root) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    subjects = precommit.subjects([str(path)])
    errors = [s.error for s in subjects if s.error]
    if errors:
        raise AssertionError(f"{path} cannot be read statically: {errors[0]}")
    return [s.facts for s in subjects]


def eval_results_facts(root: str | os.PathLike, files: Mapping[str, str]) -> Any:
    """What the ``precommit-eval-results`` rules read (an ``EvalFilesFacts``) for drafts ``{relative path: YAML}``."""
    from hfmigrate_checks.drafts.facts import eval_files_facts

    paths = []
    for rel, text in files.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return eval_files_facts(paths)


def draft_facts(root: str | os.PathLike) -> Any:
    """What ``checks run draft`` gathers (a ``DraftFacts``) from the HF demo's leaderboard and fixture Hub.

    The Hub is :class:`hfmigrate_checks.testing.LocalHub` on 127.0.0.1 with the demo's
    repositories (an official benchmark, repos with and without results, draft and foreign
    PRs); the contract and ledger come from ``checks hf contract`` and ``checks hf ledger``,
    as ``python -m hfmigrate_checks.demo`` makes them.
    """
    from hfmigrate_checks import demo
    from hfmigrate_checks.testing import LocalHub

    root = Path(root).resolve()
    demo.run(root / "demo")
    env = {"HF_TOKEN": demo.TOKEN, "HF_HOME": str(root / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    saved = dict(os.environ)
    try:
        with LocalHub(root / "demo" / "hub") as hub:
            os.environ.update(env, HF_ENDPOINT=hub.endpoint)
            return gather_facts("draft", {"benchmark_id": demo.BENCHMARK, "contract": str(root / "demo" / "contract.json"),
                                          "ledger": str(root / "demo" / "ledger.csv"), "mapping": None,
                                          "bundle": str(root / "bundle"), "endpoint": hub.endpoint, "max_workers": 4})
    finally:
        os.environ.clear()
        os.environ.update(saved)


try:
    import pytest
except ImportError:  # pragma: no cover - pytest is only needed for the fixtures
    pytest = None

if pytest is not None:

    @pytest.fixture
    def checks_evaluate():
        """``checks_evaluate(rules, facts, **kw)`` -> verdicts by code (see :func:`evaluate_rules`)."""
        return evaluate_rules

    @pytest.fixture
    def checks_cli(tmp_path: Path):
        """``checks_cli(*args, env=None)`` runs the CLI in-process in a temporary working directory."""

        def invoke(*args: str, env: Mapping[str, str] | None = None, cwd: Path | None = None) -> CliResult:
            return run_cli(args, env=env, cwd=cwd or tmp_path)

        return invoke


__all__ = ["CliResult", "Severity", "TabArenaRun", "assert_fails", "assert_passes", "draft_facts", "eval_results_facts",
           "evaluate_rules", "gather_facts", "info_facts", "process_facts", "run_cli", "tabarena_run", "upload_facts"]
