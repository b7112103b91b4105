"""Benchmark: `checks run draft` on a 200-model leaderboard against the local Hub with 50 ms per request.

    .venv/bin/python benchmarks/migrate.py                      # 200 models, 50 ms, 16 workers
    .venv/bin/python benchmarks/migrate.py --models 60 --latency 0.02 --seed 3

The same flow (contract and ledger made once, then the gated draft action with resolution,
inspection, rules and the bundle write) runs three times against the same leaderboard:
clean with the default bounded thread pool; with 20% of all Hub requests failing (503,
500 or a dropped connection, picked by ``--seed``); and one request at a time
(``--max-workers 1``). Printed: wall time and Hub requests of each (counted from the
server's request log, so retries and paging are included), the fault run's time against
the clean run's (target: within 2x) and the decisions it lost (target: 0, every ledger
row's decision compared), and the pool's speed-up over one request at a time (target: at
least 5x).
"""

from __future__ import annotations

import os
import sys

# benchmarks/ holds a file named like the stdlib's inspect module: keep that directory off the path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import argparse  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from checks.testing import run_cli  # noqa: E402
from tests.support.hf_fixtures import BENCHMARK_ID, TOKEN, build_leaderboard_hub, mapping_yaml  # noqa: E402
from hfmigrate_checks.testing import LocalHub, transient_faults  # noqa: E402
from hfmigrate_checks.testing.migration import client_env, contract_step, draft_step, ledger_step  # noqa: E402

#: 20% of all requests fail: 8% 503, 7% 500, 5% a dropped connection
FAULTS_20 = transient_faults(0.2)
CONTRACT = "metric: accuracy\ndirection: higher_is_better\nunit: percent\ncolumns:\n  Main: main\n  Hard: hard\n"


def leaderboard(models) -> str:
    lines = ["model,Main,Hard"] + [f'"{m.label}",{m.values["main"]},{m.values["hard"]}' for m in models.values()]
    return "\n".join(lines) + "\n"


def draft(tmp: Path, env: dict, bundle: str, workers: int):
    args = draft_step(BENCHMARK_ID, bundle=bundle, options=["--max-workers", str(workers)])
    started = time.perf_counter()
    result = run_cli(args, env=env, cwd=tmp)
    elapsed = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"draft failed (exit {result.exit_code}):\n{result.stdout}\n{result.stderr}")
    return elapsed, result.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.05, help="seconds added to every Hub request")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--seed", type=int, default=1, help="which requests the fault run fails")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="migrate-bench-"))
    try:
        run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp: Path) -> None:
    base = build_leaderboard_hub(tmp / "hub")
    models = build_leaderboard_hub(tmp / "hub", fillers=max(0, args.models - len(base)))
    (tmp / "contract.yaml").write_text(CONTRACT)
    (tmp / "models.yaml").write_text(mapping_yaml(models))
    (tmp / "board.csv").write_text(leaderboard(models))
    with LocalHub(tmp / "hub", latency=args.latency, page_size=100) as hub:
        env = client_env(tmp / "hf-home", TOKEN, hub.endpoint)
        for step in (
            contract_step(BENCHMARK_ID),
            ledger_step("board.csv", fmt="csv", heading=None, source_url="https://example.org/board"),
        ):
            result = run_cli(step, env=env, cwd=tmp)
            if result.exit_code != 0:
                raise SystemExit(result.stderr)
        runs = {}
        for label, workers, faults in (
            ("clean", args.workers, ()),
            ("faults 20%", args.workers, FAULTS_20),
            ("sequential", 1, ()),
        ):
            hub.clear_requests()
            hub.clear_faults()
            hub.seed = args.seed
            for fault in faults:
                hub.add_fault(fault)
            elapsed, out = draft(tmp, env, f"bundle-{label.split()[0]}", workers)
            requests = hub.requests
            runs[label] = (elapsed, len(requests), out, sum(r.status in (0, 500, 503) for r in requests))
            writes = [r for r in requests if r.method not in ("GET", "HEAD")]
            if writes:
                raise SystemExit(f"the Hub saw non-read requests: {writes[:3]}")
    decisions = {label: decisions_of(tmp / f"bundle-{label.split()[0]}") for label in runs}
    lost = sum(decisions["faults 20%"].get(key) != value for key, value in decisions["clean"].items())
    same_drafts = drafts_of(tmp / "bundle-clean") == drafts_of(tmp / "bundle-faults")
    n = len(models)
    print(
        f"models: {n}; latency per request: {args.latency * 1000:.0f} ms; pool: {args.workers} workers; "
        f"fault seed: {args.seed}"
    )
    for label, (elapsed, count, _out, failed) in runs.items():
        print(
            f"{label:>11}: {elapsed:7.2f} s wall, {count} Hub requests ({failed} failed), "
            f"{count / n:.2f} requests/model, {elapsed / n * 1000:.0f} ms/model"
        )
    ratio = runs["faults 20%"][0] / runs["clean"][0]
    print(
        f"fault run against the clean run: {ratio:.2f}x the time (target <= 2x); decisions lost: {lost} of "
        f"{len(decisions['clean'])} ledger rows (target 0); identical drafts: {same_drafts}"
    )
    speedup = runs["sequential"][0] / runs["clean"][0]
    print(f"speed-up of the pool over one request at a time: {speedup:.1f}x (target >= 5x)")
    print(runs["clean"][2].split("Review bundle:", 1)[-1].strip())


def decisions_of(bundle: Path) -> dict[tuple[str, str], str]:
    """(model, column) -> decision, from the bundle's source-ledger.csv."""
    import csv

    with open(bundle / "source-ledger.csv", newline="", encoding="utf-8") as fh:
        return {(row["source_model"], row["source_task"]): row["decision"] for row in csv.DictReader(fh)}


def drafts_of(bundle: Path) -> dict[str, str]:
    return {p.relative_to(bundle).as_posix(): p.read_text() for p in sorted((bundle / "drafts").rglob("*.yaml"))}


if __name__ == "__main__":
    main()
