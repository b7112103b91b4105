"""The pre-commit hook environment beside ruff's: size, first build, a one-file run, a run through pre-commit.

Targets (issue 31): the environment `pre-commit` builds for the hooks <= 20 MB, built in <= 10 s,
and one hook run on one file <= 6x `python -c pass` (with the hook environment's own interpreter),
each figure printed beside ruff's hook measured the same way in the same run. The hooks are
`language: python`, so pre-commit installs this repository without extras: the core install
(pluggy, attrs, cattrs, pyyaml, click; rich and what it brings come with the workflows' extras). The
repository is snapshotted into a temporary git repository (pre-commit installs hooks from a
commit) and installed with a fresh PRE_COMMIT_HOME, so the build is a first build. ruff's hook is
what astral-sh/ruff-pre-commit is: a `language: python` repository whose package depends on ruff
(RUFF_VERSION, the one the anchors were read from), entry `ruff check --force-exclude`; it is
written locally, since this machine reaches no git host. Packages come from pip's configured
index, cache or wheel directory, as on a developer's machine, for both.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
RUNS = 21
HEAVY = ("pyarrow", "duckdb", "boto3", "numpy", "huggingface_hub", "libcst", "isal", "rich", "pygments", "markdown_it")
INFO = """from tabarena.models import MethodMetadata

nori = MethodMetadata.config(
    method="Nori",
    suite="nori-2026-03",
    ag_key="TA-NORI",
    date="2026-02-28",
    tags=["with-llm"],
    validation_protocol="8x1",
)
"""
DRAFT = """- dataset:
    id: Idavidrein/gpqa
    task_id: diamond
  value: 41.2
  date: "2025-01-15"
  source:
    url: https://example.org/leaderboard
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.org", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def snapshot(dest: Path) -> str:
    shutil.copytree(
        ROOT,
        dest,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".checks", "build", "dist", "demo-out"
        ),
    )
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return git(dest, "rev-parse", "HEAD")


def size_mb(path: Path) -> float:
    total = sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())
    return total / 1e6


def median_ms(argv: list[str], cwd: Path, env: dict | None = None, check: bool = True) -> tuple[float, float]:
    """Median wall and CPU time (user + system of the child, the steadier figure on a loaded machine), in ms."""
    walls, cpus = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=check, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


RUFF_VERSION = "0.17.6"
RUFF_HOOKS = """- id: ruff
  name: ruff
  entry: ruff check --force-exclude
  language: python
  types_or: [python, pyi]
"""


def ruff_hook_repo(dest: Path) -> str:
    """A repository shaped like astral-sh/ruff-pre-commit: its package only pins ruff."""
    dest.mkdir(parents=True)
    (dest / ".pre-commit-hooks.yaml").write_text(RUFF_HOOKS)
    (dest / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "ruff-pre-commit"\nversion = "{RUFF_VERSION}"\ndependencies = ["ruff=={RUFF_VERSION}"]\n'
        "[tool.setuptools]\npy-modules = []\n"
    )
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "ruff hook")
    return git(dest, "rev-parse", "HEAD")


def guarded_by(root: Path, hooks: str) -> None:
    """A repository holding one info.py (and a draft) whose .pre-commit-config.yaml is ``hooks``."""
    (root / "models" / "nori").mkdir(parents=True)
    (root / "models" / "nori" / "info.py").write_text(INFO)
    (root / "org--m" / ".eval_results").mkdir(parents=True)
    (root / "org--m" / ".eval_results" / "gpqa.yaml").write_text(DRAFT)
    (root / ".pre-commit-config.yaml").write_text(hooks)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "guarded")


def build(root: Path, home: Path) -> tuple[float, Path]:
    """``pre-commit install-hooks`` in ``root`` with a fresh ``home``: seconds taken and the environment built."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    start = time.perf_counter()
    subprocess.run([str(PRE_COMMIT), "install-hooks"], cwd=root, env=env, check=True, capture_output=True)
    took = time.perf_counter() - start
    (hook_env,) = home.glob("repo*/py_env-*")
    return took, hook_env


def through_pre_commit(root: Path, home: Path, hook: str) -> tuple[float, float]:
    """``pre-commit run HOOK --files models/nori/info.py``: what a commit waits for, start-up of pre-commit included
    (its exit code is the hook's verdict, not checked)."""
    env = {**os.environ, "PRE_COMMIT_HOME": str(home)}
    return median_ms([str(PRE_COMMIT), "run", hook, "--files", "models/nori/info.py"], root, env=env, check=False)


def packages_of(python: Path) -> list[str]:
    return [
        p.split("==")[0]
        for p in subprocess.run(
            [str(python), "-m", "pip", "list", "--format", "freeze"], capture_output=True, text=True
        ).stdout.split()
    ]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rev = snapshot(tmp / "arena-checks")
        ruff_rev = ruff_hook_repo(tmp / "ruff-pre-commit")
        ours, theirs = tmp / "guarded", tmp / "guarded-ruff"
        guarded_by(
            ours,
            f"repos:\n- repo: {tmp / 'arena-checks'}\n  rev: {rev}\n  hooks:\n  - id: checks-info-py\n"
            f"  - id: checks-eval-results\n",
        )
        guarded_by(theirs, f"repos:\n- repo: {tmp / 'ruff-pre-commit'}\n  rev: {ruff_rev}\n  hooks:\n  - id: ruff\n")
        ruff_build, ruff_env = build(theirs, tmp / "home-ruff")  # ruff first: a warm pip cache then favours ours
        our_build, hook_env = build(ours, tmp / "home")
        python, checks = hook_env / "bin" / "python", hook_env / "bin" / "checks"
        present = subprocess.run(
            [str(python), "-c", f"import importlib.util as u; print(' '.join(m for m in {HEAVY!r} if u.find_spec(m)))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        packages, ruff_packages = packages_of(python), packages_of(ruff_env / "bin" / "python")
        size, ruff_size = size_mb(hook_env), size_mb(ruff_env)
        base = median_ms([str(python), "-c", "pass"], ours)
        info = median_ms([str(checks), "precommit", "info-py", "models/nori/info.py"], ours)
        evals = median_ms([str(checks), "precommit", "eval-results", "org--m/.eval_results/gpqa.yaml"], ours)
        ruff_one = median_ms([str(ruff_env / "bin" / "ruff"), "check", "--no-cache", "models/nori/info.py"], theirs)
        piped = through_pre_commit(ours, tmp / "home", "checks-info-py")
        ruff_piped = through_pre_commit(theirs, tmp / "home-ruff", "ruff")
    print(f"hook environment        {size:7.1f} MB  (target <= 20 MB; {len(packages)} packages: {', '.join(packages)})")
    print(f"ruff's hook environment {ruff_size:7.1f} MB  ({len(ruff_packages)} packages: {', '.join(ruff_packages)})")
    print(f"heavy modules in it     {present or 'none'}")
    print(
        f"first build             {our_build:7.1f} s   (target <= 10 s; ruff's {ruff_build:.1f} s; "
        f"pre-commit install-hooks, fresh home)"
    )
    print(
        f"python -c pass          wall {base[0]:7.1f} ms          cpu {base[1]:6.1f} ms  (medians of {RUNS}, "
        f"the hook environment's interpreter)"
    )
    rows = (("info-py, one file", info), ("eval-results, one file", evals), ("ruff check, one file", ruff_one))
    for label, (wall, cpu) in rows:
        print(
            f"{label:23s} wall {wall:7.1f} ms ({wall / base[0]:5.2f}x)  cpu {cpu:6.1f} ms ({cpu / base[1]:5.2f}x)  "
            f"(target <= 6x for ours)"
        )
    for label, (wall, cpu) in (("pre-commit run, ours", piped), ("pre-commit run, ruff", ruff_piped)):
        print(
            f"{label:23s} wall {wall:7.1f} ms          cpu {cpu:6.1f} ms  "
            f"(ours / ruff's: wall {piped[0] / ruff_piped[0]:.2f}x)"
        )


if __name__ == "__main__":
    main()
