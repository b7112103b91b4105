"""One exact AUC score of the HPO simulation against numpy's sort of its rows, the least it can cost.

The HPO trajectories of a binary task split score every candidate ensemble of every greedy step
by ROC AUC, exactly as TabArena's kernel does (issue 15), and on the 10,000-file run of
benchmarks/process.py (112 configs) the 30 binary splits are most of the processing. This
simulates the 122 trajectory passes of one such split, 112 configs x 6,667 validation rows of
generated predictions, and prints how many candidate ensembles were scored and what one score
costs, beside the same run's timing of numpy's sort of as many rows of int32 codes: the sort is
part of every exact score (no bound lets a candidate go unscored, see benchmarks/README.md),
so the ratio says how much above that floor a score is, and the floor what the 30 splits cost
at least. With ``--tabarena-python`` also TabArena 0.1.0's own kernel on the same predictions.

    .venv/bin/python benchmarks/hpo_auc.py [--rows 6667] [--configs 112] [--tabarena-python PY]
"""

from __future__ import annotations

import sys

# benchmarks/ holds inspect.py, which would shadow the standard library's inspect for this script
sys.path[:] = [p for p in sys.path if p not in ("", __file__.rsplit("/", 1)[0])]

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from tabarena_checks.engine import cache_hpo
from tabarena_checks.engine.cache_hpo_metrics import Metric

#: the binary task splits of the 10,000-file run (one task x 10 repeats x 3 folds)
BINARY_SPLITS = 30

TABARENA_TIMER = """
import sys, time
import numpy as np
# the kernel timed here is TabArena's own; it has no public name
from tabarena.metrics._fast_roc_auc import fast_roc_auc_cpp
data = np.load(sys.argv[1])
y, preds = data["y"], data["preds"]
best = float("inf")
for _ in range(3):
    start = time.perf_counter()
    for p in preds:
        fast_roc_auc_cpp(y, p)
    best = min(best, time.perf_counter() - start)
print(best / len(preds))
"""


class Counted(cache_hpo.Prepared):
    """The split's predictions, counting the candidate ensembles scored."""

    scored = 0

    def scores(self, weighted, states, cands, s, exact):
        self.scored += len(cands)
        return super().scores(weighted, states, cands, s, exact)


def generated_split(rows: int, configs: int) -> tuple[cache_hpo.Split, Counted, list[str]]:
    """A binary split of weak configs (validation AUC about 0.55-0.6) and its prepared predictions."""
    rng = np.random.default_rng(0)
    names = ["Bench_c1_BAG_L1", *(f"Bench_r{i}_BAG_L1" for i in range(1, configs))]
    y_val, y_test = rng.random(rows) < 0.5, rng.random(rows // 2) < 0.5

    def predictions(y):
        signal = 0.25 * (2 * y.astype(np.float64) - 1)
        return (1 / (1 + np.exp(-(signal + rng.normal(size=(configs, len(y))))))).astype(np.float32)

    pred_val, pred_test = predictions(y_val), predictions(y_test)
    row = {"metric_error": 0.4, "metric_error_val": 0.4, "time_train_s": 1.0, "time_infer_s": 0.1}
    split = cache_hpo.Split(
        "bench",
        0,
        "roc_auc",
        "binary",
        {name: row for name in names},
        {name: "BENCH" for name in names},
        y_val.astype(np.int64),
        y_test.astype(np.int64),
    )
    prep = Counted(Metric("roc_auc"), names, split.y_val, pred_val, split.y_test, pred_test)
    return split, prep, names


def simulated(split: cache_hpo.Split, prep: Counted, names: list[str]) -> tuple[float, int]:
    """Seconds (best of two) and candidate scores of the split's trajectory passes."""
    lists = [chosen for _, _, chosen in cache_hpo.passes(sorted(names), names[0])]
    best = float("inf")
    for _ in range(2):
        prep.scored = 0
        start = time.perf_counter()
        cache_hpo.ensembles(split, prep, lists, cache_hpo.ITERATIONS, fallback=names[0])
        best = min(best, time.perf_counter() - start)
    return best, prep.scored


def sorted_rows(count: int, rows: int) -> float:
    """Seconds numpy takes to sort ``count`` rows of ``rows`` int32 codes, in blocks as the scores sort them."""
    rng = np.random.default_rng(1)
    block = 39
    codes = (
        rng.integers(0, 1 << 24, size=(block, rows), dtype=np.int32) + (np.arange(block, dtype=np.int32) << 24)[:, None]
    )
    work = np.empty_like(codes)
    start = time.perf_counter()
    for _ in range(count // block + 1):
        np.copyto(work, codes)
        work.sort(axis=-1)
    return (time.perf_counter() - start) * count / ((count // block + 1) * block)


def tabarena_score(python: str, split: cache_hpo.Split, prep: Counted) -> float:
    """Seconds of one call of TabArena 0.1.0's own roc_auc kernel on a candidate ensemble of this split."""
    rng = np.random.default_rng(2)
    ensembles = np.stack([prep.pv[rng.choice(len(prep.pv), 10)].mean(axis=0) for _ in range(200)])
    with tempfile.TemporaryDirectory() as tmp:
        arrays = Path(tmp) / "split.npz"
        np.savez(arrays, y=split.y_val.astype(bool), preds=ensembles)  # the kernel takes bool labels
        done = subprocess.run([python, "-c", TABARENA_TIMER, str(arrays)], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"TabArena's kernel could not be timed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=6667, help="validation rows of the split")
    parser.add_argument("--configs", type=int, default=112)
    parser.add_argument(
        "--tabarena-python",
        default=None,
        metavar="PYTHON",
        help="Also time TabArena 0.1.0's roc_auc kernel (e.g. .venv-tabarena/bin/python).",
    )
    args = parser.parse_args()

    split, prep, names = generated_split(args.rows, args.configs)
    took, scored = simulated(split, prep, names)
    sort = sorted_rows(scored, args.rows)
    per_score, per_sort = took / scored * 1e6, sort / scored * 1e6
    cpus = os.cpu_count() or 1
    print(
        f"one binary split: {args.configs} configs x {args.rows} validation rows, "
        f"{len(cache_hpo.passes(names, names[0]))} trajectory passes, {scored:,} candidate ensembles scored"
    )
    print(f"simulation {took:.2f} s: {per_score:.1f} us a score")
    print(
        f"numpy's sort of as many rows of int32 codes (the floor): {sort:.2f} s, {per_sort:.1f} us a row; "
        f"a score costs {per_score / per_sort:.2f}x its sort"
    )
    print(
        f"{BINARY_SPLITS} such splits (the 10,000-file run's binary ones): {BINARY_SPLITS * took:.0f} CPU-s, "
        f"at least {BINARY_SPLITS * sort:.0f} CPU-s for the sorts alone ({BINARY_SPLITS * sort / cpus:.1f} s "
        f"on {cpus} CPU(s))"
    )
    if args.tabarena_python:
        theirs = tabarena_score(args.tabarena_python, split, prep) * 1e6
        print(
            f"TabArena 0.1.0's roc_auc kernel on this split: {theirs:.1f} us a score "
            f"({theirs / per_score:.2f}x the native score)"
        )


if __name__ == "__main__":
    sys.exit(main())
