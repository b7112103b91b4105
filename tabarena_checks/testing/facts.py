"""Test-only builders of what each TabArena action really gathers, from a synthetic run on disk.

A rule reads ``ctx.facts``; these make the inputs (a run like ``checks tabarena synth``
writes, the info.py declaring it, a miniature TabArena checkout) and hand them to the
action's own ``gather`` through :func:`checks.testing.gather_facts`, so a plugin author's
rule is tested against the facts the built-in rules read. They need the ``[tabarena]`` extra.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from checks.testing import gather_facts as _gather
from checks.testing import run_cli
from tabarena_checks.metadata import precommit
from tabarena_checks.synth import generate as synth_mod

#: the plugin whose actions these builders gather for
PLUGIN = "tabarena"
#: the declaration matching a synthetic run of :func:`tabarena_run` (``{method}``, ``{suite}`` filled in)
SYNTH_INFO = """\
from tabarena.models import MethodMetadata

{variable} = MethodMetadata.config(
    method="{method}", suite="{suite}", ag_key="TA-{upper}", config_default="{method}_c1_default_BAG_L1",
    can_hpo=False, is_bag=True, compute="cpu", validation_protocol="8x1",
    cache_type="r2", cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
)
"""


def gather_facts(action: str, options, **kwargs: Any) -> Any:
    """:func:`checks.testing.gather_facts` with this plugin loaded."""
    return _gather(action, options, plugin_args=(PLUGIN,), **kwargs)


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


def tabarena_run(
    root: str | os.PathLike,
    *,
    method: str = "Nori",
    suite: str = "nori-2026-11",
    defects: Sequence[str] = (),
    tasks: Sequence[int] = (363612,),
    folds: int = 2,
    **synth: Any,
) -> TabArenaRun:
    """Write a run like ``checks tabarena synth`` (``defects`` as its ``--defect``) and a matching info.py under ``root``."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    run_dir = synth_mod.generate_run(
        root / "run",
        method=method,
        name_prefix=f"TA-{method}",
        ag_key=f"TA-{method.upper()}",
        tasks=tuple(tasks),
        folds=folds,
        validation_protocol="8x1",
        defects=tuple(defects),
        **synth,
    )
    info = root / "info.py"
    info.write_text(SYNTH_INFO.format(variable="method_metadata", method=method, suite=suite, upper=method.upper()))
    return TabArenaRun(Path(run_dir), info, f"{info}:method_metadata", root / "cache", method, suite)


def process_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run process`` gathers for a fresh :func:`tabarena_run` (a ``TabArenaFacts``)."""
    made = tabarena_run(root, **run)
    return gather_facts(
        "process",
        {"run_data_dir": str(made.run_dir), "method_metadata": made.metadata_ref, "cache_root": str(made.cache_root)},
    )


def upload_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run upload`` gathers (an ``UploadFacts``, planning only) after a real ``process`` of a fresh run."""
    made = _processed_run(root, **run)
    return gather_facts("upload", {"method_metadata": made.metadata_ref, "cache_root": str(made.cache_root)})


def _processed_run(root: str | os.PathLike, **run: Any) -> TabArenaRun:
    """A fresh :func:`tabarena_run` put through a real ``checks run process`` into ``root/cache``."""
    made = tabarena_run(root, **run)
    result = run_cli(
        [
            "-p",
            "tabarena",
            "run",
            "process",
            str(made.run_dir),
            "--method-metadata",
            made.metadata_ref,
            "--cache-root",
            str(made.cache_root),
            "--decision-log",
            str(Path(root) / "decisions.jsonl"),
        ],
        env={"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=root,
    )
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
    root = Path(root)
    made = tabarena_run(root, **run)
    repo = root / "tabarena"
    package = made.method.lower()
    arena_repo(repo, {package: made.info.read_text(encoding="utf-8")})
    return ArenaCheckout(repo, made, f"tabarena.models.{package}.info:method_metadata")


def arena_repo(repo: Path, infos: Mapping[str, str]) -> Path:
    """A git checkout (one commit) with ``contexts/tabarena/methods.py``, a BENCHMARK_LOG.md, LightGBM's
    info.py and ``models/<package>/info.py`` holding each text of ``infos``."""
    texts = {
        ARENA_SRC / "contexts" / "tabarena" / "methods.py": ARENA_METHODS,
        ARENA_SRC / "models" / "lightgbm" / "info.py": ARENA_LIGHTGBM,
        ARENA_LOG: "# Benchmark log\n\nAppend-only, newest first. Always record the git SHA.\n",
        **{ARENA_SRC / "models" / package / "info.py": text for package, text in infos.items()},
    }
    for rel, text in texts.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    who = {
        "GIT_AUTHOR_NAME": "checks",
        "GIT_AUTHOR_EMAIL": "checks@example.org",
        "GIT_COMMITTER_NAME": "checks",
        "GIT_COMMITTER_EMAIL": "checks@example.org",
    }
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "checkout for checks.testing"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env={**os.environ, **who})
    return repo


def register_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run register`` gathers (a ``RegisterFacts``) for a fresh run's info.py in an :func:`arena_checkout`."""
    made = arena_checkout(root, **run)
    return gather_facts("register", {"method_metadata": made.module_ref, "repo": str(made.repo)})


def log_facts(
    root: str | os.PathLike, *, benchmark_name: str = "nori-2026-11", purpose: str | None = "a new method", **run: Any
) -> Any:
    """What ``checks run log`` gathers (a ``LogFacts``) for a fresh run and an :func:`arena_checkout`."""
    made = arena_checkout(root, **run)
    return gather_facts(
        "log",
        {
            "run": str(made.run.run_dir),
            "repo": str(made.repo),
            "benchmark_name": benchmark_name,
            "purpose": purpose,
            "method_metadata": made.run.metadata_ref,
        },
    )


def unpublish_facts(root: str | os.PathLike, **run: Any) -> Any:
    """What ``checks run unpublish`` gathers (an ``UnpublishFacts``) for a run processed for real into ``root/cache``.

    Its ``remote_keys`` lists the bucket only when S3 credentials (and ``AWS_ENDPOINT_URL`` for a
    local server) are in the environment; otherwise it says ``credentials missing``.
    """
    made = _processed_run(root, **run)
    return gather_facts("unpublish", {"method": made.method, "suite": made.suite, "cache_root": str(made.cache_root)})


def info_facts(root: str | os.PathLike, source: str, name: str = "info.py") -> list[Any]:
    """What the ``precommit-info`` rules read: one ``InfoFacts`` per declaration of ``source`` (written to ``root/name``)."""
    path = Path(root) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    subjects = precommit.subjects([str(path)])
    errors = [s.error for s in subjects if s.error]
    if errors:
        raise AssertionError(f"{path} cannot be read statically: {errors[0]}")
    return [s.facts for s in subjects]
