"""The native HPO simulation's parts: exact metrics, the greedy selection, and process writing the files.

The parity tests (tests/tabarena/test_tabarena_parity.py) compare whole caches with TabArena 0.1.0's own,
bit for bit; these tests pin the pieces where exactness is easy to lose, against independent
computations (exact rationals, brute-force pair counts, values pandas 0.1.0's environment gave).
"""

from __future__ import annotations

import gzip
import os
import pickle
import shutil
import signal
import threading
from fractions import Fraction

import numpy as np
import pyarrow.parquet as pq
import pytest

from checks.testing import run_cli
from tabarena_checks.engine import cache_hpo
from tabarena_checks.engine import cache_hpo_metrics as hm
from tabarena_checks import workers
from tabarena_checks.synth.generate import generate_run
from tabarena_checks.testing.commands import process_args


def test_fused_square_add_is_rounded_once():
    rng = np.random.default_rng(3)
    d = rng.normal(size=2000) * 10.0 ** rng.integers(-5, 5, 2000)
    acc = rng.normal(size=2000) * 10.0 ** rng.integers(-5, 5, 2000)
    got = hm.fused_square_add(d, acc)
    exact = [float(Fraction(x) * Fraction(x) + Fraction(a)) for x, a in zip(d.tolist(), acc.tolist())]
    assert got.tolist() == exact
    # the plain expression rounds twice and differs somewhere: the emulation is not a no-op
    assert (d * d + acc).tolist() != exact


def test_auc_counts_pairs_and_half_ties_on_float32_keys():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 300).astype(bool)
    scores = np.round(rng.random((3, 300)), 2)  # many ties
    scores[2] = scores[1] + 1e-9  # closer than a float32 step in [1, 2): ties for the kernel
    keys = np.float32(np.clip(scores.astype(np.float32).astype(np.float64) + 1.0, 1.0, 2.0 - 2.0**-23))
    expected = []
    for row in keys:
        pos, neg = row[y], row[~y]
        wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
        expected.append(wins / (len(pos) * len(neg)))
    got = hm.auc_rows(y, scores)
    assert got.tolist() == pytest.approx(expected, abs=0, rel=1e-15)
    assert got[1] == got[2]


def test_auc_of_many_rows_in_blocks_and_of_float32_sums_counts_as_one_row_alone():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 5000).astype(bool)
    base = np.round(rng.random(5000), 3) * 0.5  # many equal keys, so ties in every row
    added = (np.round(rng.random((300, 5000)), 2) * 0.5).astype(np.float32)  # more rows than one block holds
    alone = [hm.auc_rows(y, (base + row)[None, :])[0] for row in added]
    assert hm.auc_rows(y, base[None, :] + added).tolist() == alone
    labels = hm.AucLabels(y)
    assert labels.step < 300 and hm.auc_rows(labels, base[None, :] + added).tolist() == alone
    # the search sums in float64 and keeps float32 (the kernel's keys), which the metric consumes
    sums = np.empty(added.shape, dtype=np.float32)
    np.add(base, added, out=sums, casting="unsafe")
    metric = hm.Metric("roc_auc")
    assert metric.sum_dtype == np.float32
    assert metric.scores(labels, sums).tolist() == [1 - a for a in alone]
    with pytest.raises(ValueError, match="C-ordered float32"):
        hm.auc_rows(labels, base[None, :] + added, consume=True)
    # one pair counted by brute force: a tie counts half
    keys = np.float32(np.clip((base + added[7]).astype(np.float32).astype(np.float64) + 1.0, 1.0, 2.0 - 2.0**-23))
    pos, neg = keys[y], keys[~y]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    assert (pos[:, None] == neg[None, :]).any()
    assert alone[7] == wins / (len(pos) * len(neg))


def test_scores_of_candidates_of_many_ensembles_in_blocks_equal_each_scored_alone():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 3000)
    preds = rng.random((6, 3000)).astype(np.float32)
    prep = cache_hpo.Prepared(hm.Metric("roc_auc"), list("abcdef"), y, preds, y, preds)
    weighted = rng.random((4, 3000)) * 0.5
    states = np.repeat(np.arange(4), 40)  # 160 rows: blocks of 87 rows that cut through a state's run
    cands = rng.integers(0, 6, 160)
    got = prep.scores(weighted, states, cands, 2, exact=False)
    coef = np.float32(1 / 3)
    alone = [1 - hm.auc_rows(y, (weighted[s] + coef * preds[c])[None, :])[0] for s, c in zip(states, cands)]
    assert got.tolist() == alone


def test_rmse_exact_differs_from_plain_numpy_only_in_the_last_bits():
    rng = np.random.default_rng(5)
    y = rng.normal(size=1001) * 10
    pred = rng.normal(size=(50, 1001))
    exact, plain = hm.rmse_exact(y, pred), hm.rmse_rows(y, pred)
    assert np.allclose(exact, plain, rtol=1e-14, atol=0)
    # lanes of eight, the tail of one, the lanes added last: a reference in exact rationals
    diff = [Fraction(a) - Fraction(b) for a, b in zip(y.tolist(), pred[0].tolist())]
    lanes = [0.0] * 8
    for i in range(1000 // 8 * 8):
        lanes[i % 8] = float(diff[i] * diff[i] + Fraction(lanes[i % 8]))
    total = 0.0
    for i in range(1000, 1001):
        sq = float(diff[i] * diff[i])
        total = total + sq
    for lane in lanes:
        total = total + lane
    assert exact[0] == np.sqrt(total / 1001.0)


def test_log_loss_rows_sum_as_a_lone_row_does():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 3, 500)
    preds = rng.dirichlet([1, 1, 1], size=(4, 500)).astype(np.float32)
    p = hm.true_class_probability(y, preds)
    assert p.dtype == np.float32 and p.min() >= np.float32(1e-15)
    fant = 0.5 * p.astype(np.float64) + 0.25  # not C-contiguous, like TabArena's preprocessed arrays
    assert hm.log_loss_rows(fant).tolist() == [-np.log(np.ascontiguousarray(r)).mean() for r in fant]


def test_an_unsupported_metric_is_refused_by_name():
    with pytest.raises(ValueError, match="'balanced_accuracy' is not one TabArena's simulation computes"):
        hm.Metric("balanced_accuracy")


def test_pandas_float_lands_where_pandas_default_parser_does():
    # pandas 2.3 read_csv (float_precision=None) gave these for 17-digit labels of a generated run
    assert cache_hpo.pandas_float("15.916432158638221") == 15.91643215863822
    assert cache_hpo.pandas_float("10.802984100681497") == 10.802984100681496
    assert cache_hpo.pandas_float("3.57380410658956e-09") == 3.5738041065895605e-09
    assert cache_hpo.pandas_float("-1.2345678") == -1.2345678  # short numbers parse exactly
    assert np.isnan(cache_hpo.pandas_float(""))


def test_greedy_selection_picks_the_best_then_mixes_and_cuts_at_the_first_best():
    rng = np.random.default_rng(7)
    y = rng.normal(size=400)
    good = (y + rng.normal(size=400) * 0.3).astype(np.float32)
    other = (y + rng.normal(size=400) * 0.3).astype(np.float32)
    bad = rng.normal(size=400).astype(np.float32)
    preds = np.stack([bad, good, other])

    def prepared():
        return cache_hpo.Prepared(hm.Metric("rmse"), ["bad", "good", "other"], y, preds, y, preds)

    everything = np.array([0, 1, 2])
    one = cache_hpo.select(prepared(), everything, 1)
    best = int(np.argmin(hm.rmse_exact(y, preds)))
    assert one.tolist() == [1.0 if j == best else 0.0 for j in range(3)]
    forty = cache_hpo.select(prepared(), everything, 40)
    assert forty[0] == 0 and forty[1] > 0 and forty[2] > 0 and forty.sum() == pytest.approx(1.0)
    # searches run together (sharing the scores of the ensembles they have in common) pick as each alone,
    # whatever the candidates' order, and a subset is searched on its own
    lists = [everything, np.array([2, 1, 0]), np.array([0, 2]), np.array([1]), everything]
    together = cache_hpo.select_all(prepared(), lists, 40)
    assert [w.tolist() for w in together] == [cache_hpo.select(prepared(), c, 40).tolist() for c in lists]
    assert together[0].tolist() == forty.tolist() == together[4].tolist()
    assert together[1].tolist() == forty[::-1].tolist()
    assert together[2][1] > 0 and together[3].tolist() == [1.0]
    # a one-pick search run beside a forty-pick one over the same candidates is that search's first step
    mixed = cache_hpo.select_all(prepared(), [everything, everything, np.array([1])], (1, 40, 40))
    assert [w.tolist() for w in mixed] == [one.tolist(), forty.tolist(), [1.0]]


def test_passes_follow_tabarenas_budgets_and_seeds():
    configs = [f"M_r{i}" for i in range(1, 12)] + ["M_c1"]
    plan = cache_hpo.passes(sorted(configs), "M_c1")
    budgets = [b for b, _, _ in plan]
    assert sorted(set(budgets)) == [1, 2, 5, 10, 12]
    assert budgets.count(1) == 1 and budgets.count(12) == 1 and budgets.count(5) == 20
    assert all(chosen[0] == "M_c1" and len(chosen) == b for b, _, chosen in plan)
    assert [c for b, s, c in plan if b == 2 and s == 0] != [c for b, s, c in plan if b == 2 and s == 1]


INFO = """from tabarena.models._method_metadata import MethodMetadata

with_default = MethodMetadata.config(method="Nori", suite="nori-hpo", ag_key="TA-NORI", is_bag=True,
                                     config_default="Nori_c1_default_BAG_L1")
without_default = MethodMetadata.config(method="Nori", suite="nori-hpo", ag_key="TA-NORI", is_bag=True)
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("hpo")
    generate_run(
        root, configs=3, repeats=1, folds=2, tasks=(363612, 363619), bag_children=2, array_scale=0.05, workers=1
    )
    (root / "info.py").write_text(INFO)
    return root


def _process(tmp_path, run, var, data=None, *extra):
    return run_cli(
        process_args(data or run / "data", f"{run / 'info.py'}:{var}", tmp_path / "cache", *extra),
        cwd=tmp_path,
    )


def test_process_writes_hpo_results_and_trajectories(tmp_path, run):
    result = _process(tmp_path, run, "with_default")
    assert result.exit_code == 0, result.stdout + result.stderr
    results = tmp_path / "cache/artifacts/nori-hpo/methods/Nori/results"
    hpo = pq.read_table(results / "hpo_results.parquet").to_pylist()
    assert [r["method"] for r in hpo[:3]] == ["TA-NORI (default)", "TA-NORI (tuned)", "TA-NORI (tuned + ensemble)"]
    assert len(hpo) == 3 * 4  # three rows per task split
    traj = pq.read_table(results / "hpo_trajectories.parquet")
    # budgets 1 (one seed), 2 (20 seeds), 3 = all (one seed); four splits each
    assert traj.num_rows == (1 + 20 + 1) * 4
    assert set(traj.column("method").to_pylist()) == {"HPO-N1-TA-NORI", "HPO-N2-TA-NORI", "HPO-N3-TA-NORI"}
    assert "hpo_trajectories.parquet (88 rows)" in result.stdout


def _pid_and_split(job):
    return os.getpid(), job[0]


def test_trajectories_simulated_in_worker_processes_equal_those_of_one_process(tmp_path, run, monkeypatch):
    (tmp_path / "serial").mkdir()
    (tmp_path / "parallel").mkdir()
    serial = _process(tmp_path / "serial", run, "with_default")
    assert serial.exit_code == 0, serial.stdout + serial.stderr
    monkeypatch.setattr(cache_hpo, "PARALLEL_SPLITS", 2)  # the run has four task splits
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    # every pool forks while no thread of the command runs (the raw copy's threads, a progress bar's)
    before, beside = set(threading.enumerate()), []
    forking = workers.worker_pool

    def pool_noting_threads(count, initializer):
        beside.append(sorted(t.name for t in set(threading.enumerate()) - before))
        return forking(count, initializer)

    monkeypatch.setattr(workers, "worker_pool", pool_noting_threads)
    parallel = _process(tmp_path / "parallel", run, "with_default")
    assert parallel.exit_code == 0, parallel.stdout + parallel.stderr
    assert beside and beside == [[]] * len(beside)
    monkeypatch.setattr(workers, "worker_pool", forking)
    name = "cache/artifacts/nori-hpo/methods/Nori/results/hpo_trajectories.parquet"
    assert pq.read_table(tmp_path / "parallel" / name).equals(pq.read_table(tmp_path / "serial" / name))
    # the splits did go to other processes, in order
    monkeypatch.setattr(cache_hpo, "_split_trajectories", _pid_and_split)
    jobs = [
        (cache_hpo.Split("d", fold, "rmse", "regression", {}, {}, None, None), tmp_path, [], "x") for fold in range(4)
    ]
    with cache_hpo._simulation_pool(len(jobs), 2) as pool:
        done = list(cache_hpo._simulated(jobs, pool))
    assert [s for _, s in done] == [job[0] for job in jobs] and os.getpid() not in {pid for pid, _ in done}
    with cache_hpo._simulation_pool(1, 2) as pool:  # too few splits for workers
        assert pool is None


def _handlers(job):

    return signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)


def test_trajectory_workers_leave_quietly_whatever_handler_the_cli_installed(tmp_path, monkeypatch):
    """The CLI stops on SIGTERM as on Ctrl-C; a forked worker inheriting that would print a traceback when
    its pool stops it, and one taking Ctrl-C itself would die mid-split instead of being cancelled."""
    monkeypatch.setattr(cache_hpo, "_split_trajectories", _handlers)
    jobs = [
        (cache_hpo.Split("d", fold, "rmse", "regression", {}, {}, None, None), tmp_path, [], "x") for fold in range(8)
    ]
    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        with cache_hpo._simulation_pool(len(jobs), 2) as pool:
            done = list(cache_hpo._simulated(jobs, pool))
    finally:
        signal.signal(signal.SIGTERM, before)
    assert done == [(signal.SIG_DFL, signal.SIG_IGN)] * 8


def test_without_config_default_trajectories_are_left_out_and_said(tmp_path, run):
    result = _process(tmp_path, run, "without_default")
    assert result.exit_code == 0, result.stdout + result.stderr
    results = tmp_path / "cache/artifacts/nori-hpo/methods/Nori/results"
    assert (results / "hpo_results.parquet").exists() and not (results / "hpo_trajectories.parquet").exists()
    assert "config_default is not declared" in result.stdout


def test_a_metric_the_simulation_does_not_compute_blocks_before_anything_is_read(tmp_path, run):
    def balanced_accuracy(result):
        if result["problem_type"] == "binary":
            result["metric"] = "balanced_accuracy"
            result["simulation_artifacts"].update(eval_metric="balanced_accuracy", metric="balanced_accuracy")

    data = _changed_copy(tmp_path, run, balanced_accuracy)
    result = _process(tmp_path, run, "with_default", data)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "failed TA307 native-simulation-metric" in result.stdout
    assert "scored on 'balanced_accuracy', which the native engine cannot simulate" in result.stdout
    assert not (tmp_path / "cache/artifacts/nori-hpo/methods/Nori").exists()
    # with the rule ignored (and the group TA306, whose TA344 refuses another metric than the suite's on
    # Bank_Customer_Churn: ignoring the group's code still ignores it),
    # processing itself still refuses, naming the split, and writes nothing
    assert "metric is 'balanced_accuracy', but TabArena-v0.1 scores task 363619" in result.stdout
    result = _process(tmp_path, run, "with_default", data, "--extend-ignore", "TA307", "--extend-ignore", "TA306")
    assert result.exit_code == 4, result.stdout + result.stderr
    assert "cannot simulate TabArena's HPO results for Bank_Customer_Churn split" in result.stdout + result.stderr
    assert "'balanced_accuracy' is not one TabArena's simulation computes" in result.stdout + result.stderr
    assert not (tmp_path / "cache/artifacts/nori-hpo/methods/Nori").exists()


def test_two_tasks_under_one_name_block_before_anything_is_read(tmp_path, run):
    def churn_named_airfoil(result):  # the simulation stacked both tasks' predictions and stopped (exit 4)
        if result["task_metadata"]["tid"] == 363619:
            result["task_metadata"]["name"] = "airfoil_self_noise"

    data = _changed_copy(tmp_path, run, churn_named_airfoil)
    result = _process(tmp_path, run, "with_default", data)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "failed TA341 suite-task-name" in result.stdout
    assert (
        "363619/0_0/results.pkl:1:1: task_metadata.name is 'airfoil_self_noise', but TabArena-v0.1 names task "
        "363619 'Bank_Customer_Churn'"
    ) in result.stdout
    assert not (tmp_path / "cache/artifacts/nori-hpo/methods/Nori").exists()


def _changed_copy(tmp_path, run, change):
    """The module's run copied to ``tmp_path/data``, every result rewritten after ``change(result)``."""
    data = tmp_path / "data"
    shutil.copytree(run / "data", data)
    for path in data.rglob("results.pkl"):
        result = pickle.loads(gzip.decompress(path.read_bytes()))  # our own generated files
        change(result)
        path.write_bytes(gzip.compress(pickle.dumps(result)))
    return data


def test_trapezoid_auc_of_the_recompute_counts_pairs():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 500)
    score = np.round(rng.random(500), 3)
    pos, neg = score[y == 1], score[y == 0]
    pairs = ((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg))
    assert hm.recomputed_val_error("roc_auc", "binary", y, score) == pytest.approx(1 - pairs, abs=1e-12)
    two_columns = np.stack([1 - score, score], axis=1)
    assert hm.recomputed_val_error("roc_auc", "binary", y, two_columns) == hm.recomputed_val_error(
        "roc_auc", "binary", y, score
    )
    with pytest.raises(ValueError, match="'accuracy' is not one whose validation error"):
        hm.recomputed_val_error("accuracy", "binary", y, score)


def test_a_missing_val_error_is_recomputed_from_the_stored_validation_prediction(tmp_path, run):
    data = _changed_copy(tmp_path, run, lambda r: r.pop("metric_error_val"))
    result = _process(tmp_path, run, "with_default", data)
    assert result.exit_code == 0, result.stdout + result.stderr
    rows = pq.read_table(tmp_path / "cache/artifacts/nori-hpo/methods/Nori/processed/configs.parquet").to_pylist()
    assert all(r["metric_error_val"] is not None for r in rows)
    # the regression ones are the RMSE of the stored validation prediction, in its own dtype
    raw = pickle.loads(gzip.decompress(next(data.glob("*_c1_*/363612/0_0/results.pkl")).read_bytes()))
    sa = raw["simulation_artifacts"]
    pred = sa["pred_proba_dict_val"][raw["framework"]]
    expected = float(np.sqrt(((sa["y_val"] - pred) ** 2).mean()))
    assert [
        r["metric_error_val"] for r in rows if r["framework"].startswith("Nori_c1_") and r["task"] == "363612_0"
    ] == [expected]


def test_a_missing_val_error_of_another_metric_blocks_with_the_file_and_the_fix(tmp_path, run):
    def change(result):
        if result["problem_type"] == "binary":
            result["metric"] = "balanced_accuracy"
            del result["metric_error_val"]

    data = _changed_copy(tmp_path, run, change)
    result = _process(tmp_path, run, "with_default", data)
    out = result.stdout + result.stderr
    assert result.exit_code != 0 and "failed TA335 metric-error-val-recomputable" in out
    assert "363619/0_0/results.pkl:1:1: metric_error_val missing: TabArena 0.1.0 recomputes it" in out
    assert "add metric_error_val (the validation error of these predictions) to the result" in out
    assert not (tmp_path / "cache/artifacts/nori-hpo/methods/Nori").exists()
