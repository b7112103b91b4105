"""Load run: `checks run draft` for a 1,000-model leaderboard against a local Hub that rate-limits at 50 requests/s.

    .venv/bin/python benchmarks/load_migrate.py                      # 1,000 models, 64 workers, 50 req/s
    .venv/bin/python benchmarks/load_migrate.py --models 200 --rate 20

The local Hub (hfmigrate_checks.testing.LocalHub) serves an official benchmark and one
model repo per leaderboard row and answers requests beyond ``--rate`` per second with 429
and a Retry-After header. The draft runs as the real CLI in a child process with
``--max-workers`` concurrent Hub reads (64 is the most the option allows). Printed: wall
time, requests the Hub saw, how many were refused with 429, the highest number of requests
that arrived within any one second (all, and accepted), and whether every model got its
draft (nothing lost, nothing turned into needs_review by throttling). The baseline is the
same draft against the same Hub without a rate limit, measured in the same invocation.
"""

from __future__ import annotations

import os
import sys

# benchmarks/inspect.py is named like the stdlib's inspect module: keep this directory off the import path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import bisect  # noqa: E402
import csv  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.hf_fixtures import board_row  # noqa: E402
from hfmigrate_checks.source import ledger  # noqa: E402
from hfmigrate_checks.testing import LocalHub, set_whoami, write_dataset, write_model  # noqa: E402
from hfmigrate_checks.testing.migration import client_env, contract_step, draft_step  # noqa: E402

CHECKS = str(Path(sys.executable).with_name("checks"))
BENCHMARK = "load-evals/load-bench"
TOKEN = "hf_" + "L0ad" * 9
EVAL_YAML = "name: Load Bench\nevaluation_framework: inspect-ai\ntasks:\n  - id: main\n  - id: hard\n"
CONTRACT_YAML = "metric: accuracy\ndirection: higher_is_better\nunit: percent\ncolumns:\n  Main: main\n  Hard: hard\n"


def repo(i: int) -> str:
    return f"load-org/Model-{i}-7B"


def label(i: int) -> str:
    return f"Model {i} 7B"


def write_inputs(root: Path, models: int) -> None:
    hub = root / "hub"
    write_dataset(hub, BENCHMARK, {"eval.yaml": EVAL_YAML}, official=True)
    set_whoami(hub, "load-bot", token=TOKEN)
    for i in range(models):
        write_model(hub, repo(i), {"README.md": f"# {repo(i)}\n"})
    (root / "models.yaml").write_text("".join(f'"{label(i)}": {{repo: {repo(i)}}}\n' for i in range(models)))
    (root / "contract.yaml").write_text(CONTRACT_YAML)
    rows = [
        board_row(label(i), task, f"{50 + i % 40 + k}.{i % 10}", 10 + i)
        for i in range(models)
        for k, task in enumerate(("Main", "Hard"))
    ]
    ledger.write(root / "ledger.csv", rows)


def checks(args: list[str], root: Path, endpoint: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **client_env(root / "hf-home", TOKEN, endpoint)}
    return subprocess.run([CHECKS, *args], cwd=root, env=env, capture_output=True, text=True)


def max_per_second(times: list[float]) -> int:
    """The most requests that arrived within any window of one second."""
    times = sorted(times)
    return max((bisect.bisect_right(times, t + 1.0) - n for n, t in enumerate(times)), default=0)


def draft(root: Path, models: int, workers: int, rate: float | None, name: str) -> dict:
    with LocalHub(root / "hub", rate_limit=rate, burst=rate) as hub:
        made = checks(contract_step(BENCHMARK), root, hub.endpoint)
        if made.returncode != 0:
            raise SystemExit(f"contract failed: {made.stderr[-2000:]}")
        hub.clear_requests()
        started = time.perf_counter()
        res = checks(draft_step(BENCHMARK, bundle=name, options=["--max-workers", str(workers)]), root, hub.endpoint)
        seconds = time.perf_counter() - started
        requests = hub.requests
    statuses = Counter(r.status for r in requests)
    drafted = (
        {p.parent.parent.name for p in (root / name / "drafts").rglob("*.yaml")} if (root / name).is_dir() else set()
    )
    review = set()
    if (root / name / "source-ledger.csv").is_file():
        with open(root / name / "source-ledger.csv", newline="", encoding="utf-8") as fh:
            review = {row["source_model"] for row in csv.DictReader(fh) if "needs_review" in " ".join(row.values())}
    return {
        "exit": res.returncode,
        "seconds": seconds,
        "requests": len(requests),
        "429": statuses.get(429, 0),
        "errors": sum(n for s, n in statuses.items() if s >= 500),
        "writes": sum(r.method not in ("GET", "HEAD") for r in requests),
        "peak_all": max_per_second([r.time for r in requests]),
        "peak_ok": max_per_second([r.time for r in requests if r.status != 429]),
        "drafted": len(drafted),
        "needs_review": len(review),
        "tail": (res.stdout + res.stderr)[-1500:],
    }


def show(name: str, r: dict, models: int) -> None:
    print(
        f"{name}: exit {r['exit']}, {r['seconds']:.1f}s wall, {r['requests']:,} requests ({r['429']:,} answered 429, "
        f"{r['errors']} 5xx, {r['writes']} writes), max {r['peak_all']} requests/s arriving "
        f"({r['peak_ok']} accepted); drafts {r['drafted']}/{models}, needs_review {r['needs_review']}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=64, help="--max-workers of the draft (at most 64)")
    parser.add_argument("--rate", type=float, default=50.0, help="the Hub's rate limit, requests/s")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unlimited baseline run")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="load-migrate-"))
    try:
        write_inputs(root, args.models)
        base = None if args.no_baseline else draft(root, args.models, args.workers, None, "bundle-baseline")
        limited = draft(root, args.models, args.workers, args.rate, "bundle")
        if base:
            show("baseline (no rate limit)", base, args.models)
        show(f"rate-limited ({args.rate:g} req/s)", limited, args.models)
        if base:
            print(
                f"ratio to baseline: wall x{limited['seconds'] / base['seconds']:.2f}, "
                f"requests x{limited['requests'] / base['requests']:.2f}"
            )
        lost = args.models - limited["drafted"]
        storm = limited["429"] > limited["requests"] - limited["429"]
        print(
            f"nothing lost: {'yes' if lost == 0 else f'NO, {lost} model(s) without a draft'}; "
            f"request storm (more 429s than served requests): {'YES' if storm else 'no'}"
        )
        if lost or limited["exit"] not in (0,):
            print(limited["tail"])
        return 0 if not lost and not storm and limited["writes"] == 0 else 1
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
