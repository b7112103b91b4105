"""The pre-commit hook environment: its size, its first build, and a one-file hook run.

Targets (issue 17): the environment `pre-commit` builds for the hooks <= 60 MB, built in <= 10 s,
and one hook run on one file <= 10x `python -c pass` (both with the hook environment's own
interpreter). The hooks are `language: python`, so pre-commit installs this repository without
extras: the core install (pluggy, attrs, cattrs, pyyaml, click, rich). The repository is
snapshotted into a temporary git repository (pre-commit installs hooks from a commit) and
installed with a fresh PRE_COMMIT_HOME, so the build is a first build; package downloads come
from pip's configured index or cache, as on a developer's machine.
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
RUNS = 21
HEAVY = ("pyarrow", "duckdb", "boto3", "numpy", "huggingface_hub", "libcst", "isal")
INFO = '''from tabarena.models import MethodMetadata

nori = MethodMetadata.config(
    method="Nori",
    suite="nori-2026-03",
    ag_key="TA-NORI",
    date="2026-02-28",
    tags=["with-llm"],
    validation_protocol="8x1",
)
'''
DRAFT = '''- dataset:
    id: Idavidrein/gpqa
    task_id: diamond
  value: 41.2
  date: "2025-01-15"
  source:
    url: https://example.org/leaderboard
'''


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.org", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout.strip()


def snapshot(dest: Path) -> str:
    shutil.copytree(ROOT, dest, ignore=shutil.ignore_patterns(
        ".git", ".venv", "__pycache__", "*.egg-info", ".pytest_cache", ".checks", "build", "dist", "demo-out"))
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "snapshot")
    return git(dest, "rev-parse", "HEAD")


def guarded(root: Path, repo: Path, rev: str) -> None:
    (root / "models" / "nori").mkdir(parents=True)
    (root / "models" / "nori" / "info.py").write_text(INFO)
    (root / "org--m" / ".eval_results").mkdir(parents=True)
    (root / "org--m" / ".eval_results" / "gpqa.yaml").write_text(DRAFT)
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {repo}\n  rev: {rev}\n  hooks:\n  - id: checks-info-py\n  - id: checks-eval-results\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "guarded")


def size_mb(path: Path) -> float:
    total = sum(p.lstat().st_size for p in path.rglob("*") if p.is_file() or p.is_symlink())
    return total / 1e6


def median_ms(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Median wall and CPU time (user + system of the child, the steadier figure on a loaded machine), in ms."""
    walls, cpus = [], []
    for _ in range(RUNS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls) * 1000, statistics.median(cpus) * 1000


def main() -> None:
    pre_commit = Path(sys.executable).with_name("pre-commit")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rev = snapshot(tmp / "arena-checks")
        guarded(tmp / "guarded", tmp / "arena-checks", rev)
        env = {**os.environ, "PRE_COMMIT_HOME": str(tmp / "home")}
        start = time.perf_counter()
        subprocess.run([str(pre_commit), "install-hooks"], cwd=tmp / "guarded", env=env, check=True,
                       capture_output=True)
        build = time.perf_counter() - start
        (hook_env,) = (tmp / "home").glob("repo*/py_env-*")
        python, checks = hook_env / "bin" / "python", hook_env / "bin" / "checks"
        present = subprocess.run([str(python), "-c", "import importlib.util as u; "
                                  f"print(' '.join(m for m in {HEAVY!r} if u.find_spec(m)))"],
                                 capture_output=True, text=True, check=True).stdout.strip()
        packages = subprocess.run([str(python), "-m", "pip", "list", "--format", "freeze"], capture_output=True,
                                  text=True).stdout.split()
        size = size_mb(hook_env)
        cwd = tmp / "guarded"
        base = median_ms([str(python), "-c", "pass"], cwd)
        info = median_ms([str(checks), "precommit", "info-py", "models/nori/info.py"], cwd)
        evals = median_ms([str(checks), "precommit", "eval-results", "org--m/.eval_results/gpqa.yaml"], cwd)
    print(f"hook environment        {size:7.1f} MB  (target <= 60 MB; {len(packages)} packages: "
          f"{', '.join(p.split('==')[0] for p in packages)})")
    print(f"heavy modules in it     {present or 'none'}")
    print(f"first build             {build:7.1f} s   (target <= 10 s; pre-commit install-hooks, fresh home)")
    print(f"python -c pass          wall {base[0]:7.1f} ms          cpu {base[1]:6.1f} ms  (medians of {RUNS}, "
          f"the hook environment's interpreter)")
    for label, (wall, cpu) in (("info-py, one file", info), ("eval-results, one file", evals)):
        print(f"{label:23s} wall {wall:7.1f} ms ({wall / base[0]:5.2f}x)  cpu {cpu:6.1f} ms ({cpu / base[1]:5.2f}x)  "
              f"(target <= 10x)")


if __name__ == "__main__":
    main()
