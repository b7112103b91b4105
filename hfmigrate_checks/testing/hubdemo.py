"""The HF demo's fixture Hub and flow: contract, ledger and draft run through the real command line.

Test-only like the rest of this sub-package: ``python -m hfmigrate_checks.demo`` runs it, and
:func:`hfmigrate_checks.testing.facts.draft_facts` gathers the draft action's facts from the same inputs.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from checks import io, main
from hfmigrate_checks.testing.localhub import LocalHub, set_whoami, write_dataset, write_model
from hfmigrate_checks.testing.migration import client_env, migration_steps

BENCHMARK = "demo-evals/toy-bench"
ACCOUNT, TOKEN = "demo-bot", "hf_local_demo_token"
EVAL_YAML = "name: Toy Bench\nevaluation_framework: inspect-ai\ntasks:\n  - id: main\n  - id: hard\n"
CONTRACT = """metric: accuracy
direction: higher_is_better
unit: percent
scale: "0-100"
source_name: Toy leaderboard
columns:
  Main: main
  Hard: hard
ignore_columns: [Average]
"""
LEADERBOARD = """# Toy leaderboard

## Results

| Model | Main | Hard | Average |
|---|---:|---:|---:|
| acme/Alpha-7B | 71.2 | 40.5* | 55.85 |
| Beta 7B Instruct | 68.0 | 38.1 | 53.05 |
| Eta 7B | 66.4 | 35.0 | 50.7 |
| Gamma 70B | 80.3 | 52.0 | 66.15 |
| Sigma 7B | 60.1 | 30.2 | 45.15 |
| Delta 8B | 58.0 | 29.9 | 43.95 |
| Lambda Secret Model | 77.7 | 50.0 | 63.85 |
"""


def _results(entries: dict[str, float]) -> str:
    lines = []
    for task, value in entries.items():
        lines += [
            "- dataset:",
            f"    id: {BENCHMARK}",
            f"    task_id: {task}",
            f"  value: {value}",
            "  source:",
            "    url: https://example.org/toy/README.md",
        ]
    return "\n".join(lines) + "\n"


def write_hub(root: Path) -> None:
    """The fixture Hub: one repo per situation the review page shows."""
    write_dataset(root, BENCHMARK, {"eval.yaml": EVAL_YAML, "README.md": "# Toy Bench\n"}, official=True)
    set_whoami(root, ACCOUNT, token=TOKEN)
    card = {"README.md": "# model\n", "config.json": "{}\n"}
    write_model(root, "acme/Alpha-7B", card)
    write_model(root, "betalab/Beta-7B-Instruct", card)
    write_model(
        root,
        "eta/Eta-7B",
        card,
        prs=[
            {
                "num": 4,
                "author": ACCOUNT,
                "status": "draft",
                "title": "Add results",
                "files": {".eval_results/toy-bench.yaml": _results({"main": 66.4})},
            }
        ],
    )
    write_model(
        root, "gammaco/Gamma-70B", {**card, ".eval_results/toy-bench.yaml": _results({"main": 80.3, "hard": 52.0})}
    )
    write_model(
        root,
        "sigma/Sigma-7B",
        card,
        prs=[
            {
                "num": 1,
                "author": "someone-else",
                "status": "open",
                "files": {".eval_results/toy.yaml": _results({"main": 60.1})},
            }
        ],
    )
    write_model(root, "deltaai/Delta-8B-Instruct", card)


def run(workdir: Path, leaderboard: str = LEADERBOARD) -> Path:
    """Run the three steps in ``workdir`` on ``leaderboard`` (Markdown); returns the review.html path."""
    workdir.mkdir(parents=True, exist_ok=True)
    write_hub(workdir / "hub")
    (workdir / "contract.yaml").write_text(CONTRACT, encoding="utf-8")
    (workdir / "README.md").write_text(leaderboard, encoding="utf-8")
    cwd = os.getcwd()
    try:
        with LocalHub(workdir / "hub") as hub, io.environment(client_env(workdir / "hf-home", TOKEN, hub.endpoint)):
            os.chdir(workdir)
            for args in migration_steps(BENCHMARK, mapping=None):
                print("$ checks " + " ".join(args), flush=True)
                code = main(args)
                sys.stdout.flush()
                if code != 0:
                    raise SystemExit(f"demo: `checks {' '.join(args[:2])}` exited {code}")
            writes = [r for r in hub.requests if r.method not in ("GET", "HEAD")]
            print(f"the local Hub saw {len(hub.requests)} requests, {len(writes)} of them writes")
    finally:
        os.chdir(cwd)
    return workdir / "bundle" / "review.html"
