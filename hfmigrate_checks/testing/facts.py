"""Test-only builders of what the HF actions and hooks really read: drafts on disk, the demo against a local Hub.

Through :func:`checks.testing.gather_facts`, the action's own ``gather``, so a plugin author's
rule is tested against the facts the built-in rules read. They need the ``[hf]`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from checks.testing import gather_facts
from hfmigrate_checks.facts.eval_files import eval_files_facts
from hfmigrate_checks.testing import hubdemo as demo
from hfmigrate_checks.testing.localhub import LocalHub

#: the plugin whose actions these builders gather for
PLUGIN = "hfmigrate"


def eval_results_facts(root: str | os.PathLike, files: Mapping[str, str]) -> Any:
    """What the ``precommit-eval-results`` rules read (an ``EvalFilesFacts``) for drafts ``{relative path: YAML}``."""
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
    root = Path(root).resolve()
    demo.run(root / "demo")
    env = {"HF_TOKEN": demo.TOKEN, "HF_HOME": str(root / "hf-home"), "HF_HUB_DISABLE_TELEMETRY": "1"}
    saved = dict(os.environ)
    try:
        with LocalHub(root / "demo" / "hub") as hub:
            os.environ.update(env, HF_ENDPOINT=hub.endpoint)
            options = {
                "benchmark_id": demo.BENCHMARK,
                "contract": str(root / "demo" / "contract.json"),
                "ledger": str(root / "demo" / "ledger.csv"),
                "mapping": None,
                "bundle": str(root / "bundle"),
                "endpoint": hub.endpoint,
                "max_workers": 4,
            }
            return gather_facts("draft", options, plugin_args=(PLUGIN,))
    finally:
        os.environ.clear()
        os.environ.update(saved)
