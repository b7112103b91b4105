"""Hook cost: median wall time of each pre-commit hook's command on 100 files, against `python -c pass`.

Target (issue 6): under 1 s for 100 files once the hook environment is installed. The
files are generated in a temporary directory: 100 info.py files (one declaration each,
every tenth with problems) and 100 .eval_results drafts across 50 models (every tenth bad).
The command is what pre-commit runs (`checks precommit ...` with the files as arguments);
its exit code is 1 because of the bad files, which is expected. Beside them, in the same run,
ruff (the one next to this interpreter, as its pre-commit hook runs it: `ruff check --no-cache`)
on the same 100 info.py files and on one, and this hook on one file: the figures to hold
against ruff's, measured under the same load.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
FILES = 100
CHECKS = [sys.executable, "-m", "checks"]
RUFF = str(Path(sys.executable).with_name("ruff"))

GOOD_INFO = """from tabarena.models import MethodMetadata

m{n} = MethodMetadata.config(
    method="Model{n}",
    suite="model{n}-2026-03",
    ag_key="TA-MODEL{n}",
    date="2026-02-28",
    tags=["with-llm"],
    cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
    validation_protocol="8x1",
)
"""
BAD_INFO = """from tabarena.models import MethodMetadata

m{n} = MethodMetadata.config(method="Model{n}", ag_key="K", date="2026-02-30", tags=["llm"], validation_protocol="8-fold")
"""
DRAFT = """- dataset:
    id: Idavidrein/gpqa
    task_id: {task}
  value: {value}
  date: "2025-01-15"
  source:
    url: https://example.org/leaderboard
"""
EVAL_YAML = "name: GPQA\ntasks:\n  - id: diamond\n  - id: main\n"


def write_files(root: Path) -> tuple[list[str], list[str]]:
    infos, drafts = [], []
    for n in range(FILES):
        info = root / "models" / f"model{n}" / "info.py"
        info.parent.mkdir(parents=True)
        info.write_text((BAD_INFO if n % 10 == 0 else GOOD_INFO).format(n=n))
        infos.append(str(info.relative_to(root)))
        draft = root / "drafts" / f"org--model{n // 2}" / ".eval_results" / f"bench{n % 2}.yaml"
        draft.parent.mkdir(parents=True, exist_ok=True)
        bad = n % 10 == 0
        draft.write_text(DRAFT.format(task="overall" if bad else "diamond", value='"71.2*"' if bad else n / 3))
        drafts.append(str(draft.relative_to(root)))
    (root / "eval.yaml").write_text(EVAL_YAML)
    return infos, drafts


def median_time(argv: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    samples = []
    for _ in range(RUNS):
        start = time.perf_counter()
        rc = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        samples.append(time.perf_counter() - start)
        if rc not in ok:
            raise SystemExit(f"{' '.join(argv[:6])} ... exited {rc}")
    return statistics.median(samples)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        infos, drafts = write_files(root)
        base = median_time([sys.executable, "-c", "pass"], root)
        info = median_time([*CHECKS, "precommit", "info-py", *infos], root, ok=(1,))
        evals = median_time([*CHECKS, "precommit", "eval-results", *drafts], root, ok=(1,))
        evals_yaml = median_time(
            [*CHECKS, "precommit", "eval-results", "--eval-yaml", "Idavidrein/gpqa=eval.yaml", *drafts], root, ok=(1,)
        )
        one = median_time([*CHECKS, "precommit", "info-py", infos[1]], root)
        ruff = median_time([RUFF, "check", "--no-cache", "--quiet", *infos], root, ok=(0, 1))
        ruff_one = median_time([RUFF, "check", "--no-cache", "--quiet", infos[1]], root, ok=(0, 1))
    print(f"python -c pass                                  median {base * 1000:7.1f} ms")
    print(
        f"checks precommit info-py       ({FILES} info.py)   median {info * 1000:7.1f} ms  "
        f"ratio {info / base:5.2f}x  (target < 1 s)"
    )
    print(
        f"checks precommit eval-results  ({FILES} drafts)    median {evals * 1000:7.1f} ms  "
        f"ratio {evals / base:5.2f}x  (target < 1 s)"
    )
    print(
        f"  ... with --eval-yaml                          median {evals_yaml * 1000:7.1f} ms  "
        f"ratio {evals_yaml / base:5.2f}x  (target < 1 s)"
    )
    print(
        f"checks precommit info-py       (1 info.py)     median {one * 1000:7.1f} ms  "
        f"ratio {one / base:5.2f}x  (target <= 6x)"
    )
    print(f"ruff check                     ({FILES} info.py)   median {ruff * 1000:7.1f} ms  ratio {ruff / base:5.2f}x")
    print(
        f"ruff check                     (1 info.py)     median {ruff_one * 1000:7.1f} ms  ratio {ruff_one / base:5.2f}x"
    )


if __name__ == "__main__":
    main()
