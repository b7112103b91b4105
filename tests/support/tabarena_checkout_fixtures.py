"""A miniature TabArena checkout for the register and log tests: a git repository with info.py files, a
``contexts/tabarena/methods.py`` laid out like the real one and a ``BENCHMARK_LOG.md``, committed at known dates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SRC = Path("packages/tabarena/src/tabarena")
METHODS = SRC / "contexts" / "tabarena" / "methods.py"
LOG = Path("packages/tabflow_slurm/BENCHMARK_LOG.md")
#: (ISO date, what the commit adds); the reflog records these as the times HEAD moved
COMMIT_DATES = ("2026-01-01T12:00:00+00:00", "2026-03-01T12:00:00+00:00")

METHODS_PY = """\
from __future__ import annotations

from typing import TYPE_CHECKING

from tabarena.models._method_metadata_collection import MethodMetadataCollection

# Per-model `info.py` is the canonical source for each method's `MethodMetadata`.
from tabarena.models.lightgbm.info import lightgbm_method_metadata
from tabarena.models.nori.info import nori_method_metadata
from tabarena.models.tabm.info import (
    tabm_2025_method_metadata,
    tabm_method_metadata as tabm_metadata,
)

# Systems (whole pipelines rather than single models) have their own per-system `info.py`.
from tabarena.systems.autogluon.info import ag_metadata

if TYPE_CHECKING:
    from tabarena.models._method_metadata import MethodMetadata

tabarena_method_metadata_collection = MethodMetadataCollection(
    method_metadata_lst=[
        # Systems
        ag_metadata,
        # Default tabular models (CPU)
        lightgbm_method_metadata,  # the 2026 rerun
        # Neural / GPU / foundation models
        nori_method_metadata,
        tabm_metadata,
    ],
)

# Append a method here whenever a rerun takes over its slot in the collection.
methods_superseded: list[MethodMetadata] = [
    tabm_2025_method_metadata,  # replaced by the 2026 run
]
"""

LOG_MD = """\
# Benchmark log

Append-only, newest first. Always record the git SHA.

## 2026-01-05 \u2014 lightgbm-2026-01

**Model(s):** LightGBM
**Git SHA:** `0000000000000000000000000000000000000000`
"""

HEADER = "from tabarena.models._method_metadata import MethodMetadata\n\n"


def info(**variables: str) -> str:
    """An info.py text: each keyword is a variable bound to the given MethodMetadata call."""
    return HEADER + "".join(f"{name} = {call}\n" for name, call in variables.items())


INFOS = {
    "models/lightgbm/info.py": info(
        lightgbm_method_metadata=(
            'MethodMetadata.config(method="LightGBM", suite="lightgbm-2026-01", ag_key="GBM", compute="cpu")'
        )
    ),
    "models/nori/info.py": info(
        nori_method_metadata='MethodMetadata.config(method="Nori", suite="nori-2026-06", ag_key="TA-NORI", compute="gpu")',
        nori_new_method_metadata=(
            'MethodMetadata.config(method="Nori", suite="nori-2026-09", ag_key="TA-NORI", compute="gpu", '
            'validation_protocol="8x1")'
        ),
    ),
    "models/tabm/info.py": info(
        tabm_2025_method_metadata='MethodMetadata.config(method="TabM", suite="tabm-2025", ag_key="TABM", compute="gpu")',
        tabm_method_metadata='MethodMetadata.config(method="TabM", suite="tabm-2026", ag_key="TABM", compute="gpu")',
    ),
    "systems/autogluon/info.py": info(
        ag_metadata='MethodMetadata.system(method="AutoGluon", name="AutoGluon 1.4", suite="ag-2025", tags=[])'
    ),
}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env).stdout


def write(repo: Path, rel: str | Path, text: str) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_checkout(repo: Path) -> list[str]:
    """Build the checkout; returns the SHAs of its commits, oldest first."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for rel, text in INFOS.items():
        write(repo, SRC / rel, text)
    write(repo, METHODS, METHODS_PY)
    write(repo, LOG, LOG_MD)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial", date=COMMIT_DATES[0])
    shas = [git(repo, "rev-parse", "HEAD").strip()]
    write(
        repo,
        SRC / "models/catboost/info.py",
        info(
            catboost_method_metadata=(
                'MethodMetadata.config(method="CatBoost", suite="catboost-2026-03", ag_key="CAT", compute="cpu")'
            )
        ),
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add catboost info", date=COMMIT_DATES[1])
    shas.append(git(repo, "rev-parse", "HEAD").strip())
    return shas


@pytest.fixture
def checkout(tmp_path):
    repo = tmp_path / "tabarena"
    shas = make_checkout(repo)
    return repo, shas
