"""results/hpo_results.parquet and results/hpo_trajectories.parquet: TabArena 0.1.0's HPO simulation.

TabArena simulates, from the cached predictions, what tuning the method would have given:

- per task split (``hpo_results``): the default config's own result, and for a method that can
  be tuned the greedy ensemble (Caruana's ensemble selection on the validation predictions) of
  all its configs in name order, with one iteration ("tuned": the best config) and with 40
  ("tuned + ensemble");
- over the whole method (``hpo_trajectories``): for budgets of 1, 2, 5, 10, 25, 50, 100, 150
  and all configs, and seeds 0-19, the 40-iteration ensemble of the default config plus that
  many randomly ordered others (one seed when the choice cannot vary).

The greedy search follows AutoGluon's ``EnsembleSelection`` step by step (float32 products
added into float64 running means, scores rounded to six decimals after the first pick, ties
within a relative 1e-12 kept to models already chosen and broken by ``RandomState(0)``, the
trajectory cut at its first minimum), so the same predictions and seeds give the same
weights, and the metrics (:mod:`tabarena_checks.engine.cache_hpo_metrics`) give the same errors.
All passes of a task split run in lockstep, one greedy step for all at a time: passes with the
same picks so far share one ensemble (so a candidate is scored once per ensemble and step), every
candidate of a step is scored in a few large blocks, and the picks are chosen for all passes at
once, only ties going through the per-pass rule.

Two quirks are TabArena's and kept: the per-split results see the labels as the raw results
hold them (say float32), the trajectories as TabArena reads them back from the label CSV; and
the per-split default is the config named ``_c1`` (TabArena's own guess), the trajectories'
the declared ``config_default``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from checks import progress
from tabarena_checks.engine.cache_hpo_metrics import Metric
from tabarena_checks.engine.cache_predictions import _cells
from tabarena_checks.engine.cache_tables import frame
from tabarena_checks.workers import quiet_pool, worker_count

#: TabArena's trajectory budgets (None: every config)
BUDGETS = (1, 2, 5, 10, 25, 50, 100, 150, None)
SEEDS = 20
ITERATIONS = 40
#: AutoGluon's EnsembleSelection: scores are rounded after the first pick when it is above this
_ROUND_ABOVE = 1e-4
_DECIMALS = 6


@attrs.frozen
class Split:
    """What the simulation needs of one task split: the configs' result rows and the labels."""

    dataset: str
    fold: int
    metric: str
    problem_type: str
    #: config -> its row (metric_error, metric_error_val, time_train_s, time_infer_s), in processing order
    rows: dict[str, dict[str, Any]]
    #: config -> its config type (model type)
    types: dict[str, str]
    #: the labels as TabArena reads them back from the cache (label CSVs)
    y_val: Any
    y_test: Any


# --------------------------------------------------------------------------- the greedy search

#: at most this many prediction values in one block of candidate ensembles scored at once
_BLOCK = 1 << 18


class Prepared:
    """One split's predictions of every config in the metric's space."""

    def __init__(self, metric: Metric, names: Sequence[str], y_val, pred_val, y_test, pred_test):
        self.metric = metric
        self.names = list(names)
        self.pos = {name: i for i, name in enumerate(self.names)}
        self.yv, self.pv = metric.prepare(np.asarray(y_val), pred_val)
        self.yt, self.pt = metric.prepare(np.asarray(y_test), pred_test)

    def scores(self, weighted: np.ndarray, states: np.ndarray, cands: np.ndarray, s: int, exact: bool) -> np.ndarray:
        """The error of each config ``cands[k]`` added as pick ``s + 1`` to the ensemble whose weighted mean
        is ``weighted[states[k]]`` (``states`` ascending), scored in blocks of bounded size; each run of
        one state in a block adds its mean to its candidates in one broadcast."""
        added = np.float32(1.0 / float(s + 1)) * self.pv  # each config's share as the next pick (float32)
        out = np.empty(len(cands))
        step = max(1, min(127, _BLOCK // max(1, self.pv[0].size)))
        cuts = np.union1d(np.flatnonzero(np.r_[True, states[1:] != states[:-1]]), np.arange(0, len(cands), step))
        cuts = np.append(cuts, len(cands))
        for lo in range(0, len(cands), step):
            hi = min(lo + step, len(cands))
            fant = np.empty((hi - lo, *self.pv[0].shape), dtype=self.metric.sum_dtype)
            inside = cuts[(cuts >= lo) & (cuts <= hi)]
            for a, b in zip(inside[:-1].tolist(), inside[1:].tolist()):
                np.add(weighted[states[a]], added[cands[a:b]], out=fant[a - lo : b - lo], casting="unsafe")
            out[lo:hi] = self.metric.scores(self.yv, fant, exact=exact)
        return out


@attrs.define
class _Searches:
    """The greedy searches of one split, run in lockstep, one iteration for all at a time.

    A search's state is the ensemble its picks so far make; searches with the same picks share
    it (its running mean, whether its scores are rounded), so each candidate is scored once per
    state and iteration however many searches consider it: most searches pick the same leading
    configs. Candidates are positions into the split's configs, padded with one past the last
    (a column of NaN scores, which no minimum sees).
    """

    prep: Prepared
    cand: np.ndarray  #: [searches, widest] candidate positions, padded
    sizes: np.ndarray  #: the candidates of each search
    picks: np.ndarray  #: [searches, iterations] each pick, as a column of ``cand``
    trajectory: np.ndarray  #: [searches, iterations] each pick's score
    state: np.ndarray  #: each search's state (a row of ``weighted``)
    rounding: np.ndarray  #: each search: scores rounded to six decimals (its first pick scored above 1e-4)
    mean: np.ndarray  #: [states, rows] the running mean of each state's picks
    weighted: np.ndarray  #: [states, rows] the mean as the next pick sees it
    rngs: dict = attrs.Factory(dict)  #: each search's RandomState(0), made at its first tie

    @classmethod
    def start(cls, prep: Prepared, cands: Sequence[np.ndarray], size: int) -> _Searches:
        sizes = np.array([len(c) for c in cands], dtype=np.int64)
        cand = np.full((len(cands), int(sizes.max())), len(prep.names), dtype=np.int64)
        for k, c in enumerate(cands):
            cand[k, : len(c)] = c
        zeros = np.zeros((1, *prep.pv[0].shape))
        return cls(
            prep,
            cand,
            sizes,
            np.zeros((len(cands), size), dtype=np.int64),
            np.zeros((len(cands), size)),
            np.zeros(len(cands), dtype=np.int64),
            np.zeros(len(cands), dtype=bool),
            zeros,
            zeros.copy(),
        )

    def advance(self, s: int, active: np.ndarray) -> None:
        """Move the ``active`` searches to the states their pick ``s`` made (``s`` picks so far)."""
        last = self.cand[active, self.picks[active, s - 1]]
        key = self.state[active] * (len(self.prep.names) + 1) + last
        _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
        mean = self.mean[self.state[active][first]] * ((s - 1) / s)
        mean += self.prep.pv[last[first]] / np.float32(s)
        self.mean, self.weighted = mean, (s / float(s + 1)) * mean
        self.state[active] = inverse.reshape(-1)

    def score(self, s: int, active: np.ndarray) -> np.ndarray:
        """[states, configs + 1] the score of every candidate of an active search at its state (NaN elsewhere)."""
        width = len(self.prep.names) + 1
        need = np.zeros((len(self.mean), width), dtype=bool)
        need[self.state[active][:, None], self.cand[active]] = True
        need[:, -1] = False
        exact = np.ones(len(self.mean), dtype=bool)
        exact[self.state[active]] = ~self.rounding[active]  # the same for every search in a state
        values = np.full(need.shape, np.nan)
        for flag in (True, False):
            states, cands = np.nonzero(need & (exact == flag)[:, None])
            if states.size:
                values[states, cands] = self.prep.scores(self.weighted, states, cands, s, exact=flag)
        return values

    def choose(self, s: int, active: np.ndarray, values: np.ndarray) -> None:
        """Pick ``s`` of every active search: the best score (rounded once the search rounds), ties kept to
        configs already picked and broken by the search's RandomState(0)."""
        scores = values[self.state[active][:, None], self.cand[active]]
        rounded = self.rounding[active]
        if rounded.any():
            scores[rounded] = scores[rounded].round(_DECIMALS)
        best = np.fmin.reduce(scores, axis=1)  # nanmin's values, without its warning for a row of NaN
        with np.errstate(invalid="ignore"):  # infinite scores: tie_break decides
            close = np.abs(scores - best[:, None]) <= 1e-12 * np.abs(best)[:, None]
        chosen = close.argmax(axis=1)
        for r in np.flatnonzero((close.sum(axis=1) != 1) | ~np.isfinite(best)):
            chosen[r] = self.tie_break(int(active[r]), scores[r, : self.sizes[active[r]]], s)
        score = scores[np.arange(len(active)), chosen]
        if s == 0:
            self.rounding[active] = np.abs(score) > _ROUND_ABOVE
            score = np.where(self.rounding[active], score.round(_DECIMALS), score)
        self.picks[active, s] = chosen
        self.trajectory[active, s] = score

    def tie_break(self, k: int, scores: np.ndarray, s: int) -> int:
        """Search ``k``'s pick among several equally good candidates (AutoGluon's rule)."""
        best = np.flatnonzero(_close_to_min(scores))
        if not len(best):  # AutoGluon's draw from no candidate fails too, with numpy's own words
            raise ValueError(
                f"every candidate ensemble scored NaN at step {s + 1} of a greedy search: a config's "
                "validation prediction holds NaN (rows no bag child predicted, see TA305)"
            )
        if len(best) > 1 and s:
            used = set(self.picks[k, :s].tolist())
            preferred = [j for j in best if j in used]
            if preferred:
                best = preferred
        if len(best) == 1:
            return int(best[0])  # a choice among one draws nothing
        if k not in self.rngs:
            self.rngs[k] = np.random.RandomState(seed=0)
        return int(self.rngs[k].choice(best))

    def weights(self, k: int, steps: int) -> np.ndarray:
        """Search ``k``'s ensemble weights after ``steps`` iterations, one per candidate: pick counts up to
        the trajectory's first minimum."""
        m = int(self.sizes[k])
        done = 1 if m == 1 else steps
        cut = int(np.argmin(self.trajectory[k, :done])) + 1
        weights = np.bincount(self.picks[k, :cut], minlength=m) / cut
        if np.sum(weights) < 1:  # the fractions sum a hair under one: AutoGluon renormalises them
            weights = weights / np.sum(weights)
        return weights


def select_all(prep: Prepared, cands: Sequence[np.ndarray], size: int | Sequence[int]) -> list[np.ndarray]:
    """The ensemble weights of AutoGluon's greedy selection on the validation predictions, for each list of
    candidates (positions into the split's configs): one weight per candidate. ``size``: the iterations
    of every search, or of each (a shorter search is the first steps of a longer one with its candidates)."""
    limits = np.broadcast_to(np.asarray(size, dtype=np.int64), (len(cands),))
    searches = _Searches.start(prep, cands, int(limits.max()))
    everyone = np.arange(len(cands))
    for s in range(int(limits.max())):
        active = everyone[(limits > s) & ((searches.sizes > 1) | (s == 0))]  # one candidate: one pick
        if not active.size:
            break
        if s:
            searches.advance(s, active)
        searches.choose(s, active, searches.score(s, active))
    return [searches.weights(k, int(limits[k])) for k in everyone]


def select(prep: Prepared, cand: np.ndarray, size: int) -> np.ndarray:
    """The ensemble weights of one list of candidates (see :func:`select_all`)."""
    return select_all(prep, [cand], size)[0]


def _close_to_min(scores: np.ndarray) -> np.ndarray:
    """``numpy.isclose(scores, nanmin(scores), atol=0, rtol=1e-12)``, without its overhead for finite minima
    (and without nanmin's warning when every score is NaN: then nothing is close)."""
    if np.isnan(scores).all():
        return np.zeros(scores.shape, dtype=bool)
    best = np.nanmin(scores)
    if not np.isfinite(best):
        return np.isclose(scores, best, atol=0, rtol=1e-12)
    return np.abs(scores - best) <= 1e-12 * np.abs(best)


def combine(preds: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The weighted ensemble prediction (float64), summed as AutoGluon sums it."""
    return np.sum([p.astype(np.float64) * w for p, w in zip(preds, weights) if w != 0], axis=0)


# --------------------------------------------------------------------------- ensembles on one split


def ensembles(
    split: Split,
    prep: Prepared,
    config_lists: Sequence[Sequence[str]],
    size: int | Sequence[int],
    fallback: str | None = None,
) -> list[dict[str, Any]]:
    """TabArena's ``evaluate_ensemble`` row on this split for each config list (errors computed together)."""
    usable = [_usable(split, configs, fallback) for configs in config_lists]
    cands = [np.array([prep.pos[c] for c in use], dtype=np.int64) for use, _ in usable]
    rows, val_preds, test_preds = [], [], []
    for (use, imputed), cand, weights in zip(usable, cands, select_all(prep, cands, size)):
        nonzero = np.flatnonzero(weights)
        val_preds.append(combine(prep.pv[cand[nonzero]], weights[nonzero]))
        test_preds.append(combine(prep.pt[cand[nonzero]], weights[nonzero]))
        rows.append(
            {
                "metric": split.metric,
                **_times(split, use, weights),
                "problem_type": split.problem_type,
                "imputed": imputed,
                "impute_method": fallback if imputed else math.nan,
            }
        )
    test_errors = prep.metric.errors(prep.yt, np.array(test_preds))
    val_errors = prep.metric.errors(prep.yv, np.array(val_preds))
    return [
        {
            "metric_error": t,
            **{k: r[k] for k in ("metric", "time_train_s", "time_infer_s", "problem_type")},
            "metric_error_val": v,
            "imputed": r["imputed"],
            "impute_method": r["impute_method"],
        }
        for r, t, v in zip(rows, test_errors, val_errors)
    ]


def _usable(split: Split, configs: Sequence[str], fallback: str | None) -> tuple[list[str], bool]:
    """The configs with a result on this split; with none, the ``fallback`` config stands in (imputed)."""
    use = [c for c in configs if c in split.rows]
    if use:
        return use, False
    if fallback is None or fallback not in split.rows:
        raise ValueError(
            f"{split.dataset} split {split.fold}: none of the configs {list(configs)[:3]} has "
            "a result here and the default config has none either"
        )
    return [fallback], True


def _times(split: Split, use: Sequence[str], weights: np.ndarray) -> dict[str, Any]:
    """An ensemble's train time (every config considered) and inference time (those with weight), summed
    in the split's row order as TabArena sums them."""
    chosen = set(use)
    picked = {c for c, w in zip(use, weights) if w != 0}
    train = [r["time_train_s"] for c, r in split.rows.items() if c in chosen]
    infer = [r["time_infer_s"] for c, r in split.rows.items() if c in picked]
    return {"time_train_s": _plain(sum(np.asarray(train))), "time_infer_s": _plain(sum(np.asarray(infer)))}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else float(value)


# --------------------------------------------------------------------------- per split: hpo_results


def guessed_default(configs: Sequence[str]) -> str | None:
    """TabArena's guess of the default config among ``configs`` (sorted): the one named ``_c1``;
    several: the one ending in ``_c1``, else the shortest tail after ``_c1_``, first by name;
    none: the first named ``_r1``, else the first config."""
    defaults = [c for c in configs if _tagged(c, "_c1")]
    if len(defaults) == 1:
        return defaults[0]
    if defaults:
        return _nearest_c1(defaults)
    r1 = [c for c in configs if _tagged(c, "_r1")]
    return r1[0] if r1 else (configs[0] if configs else None)


def _tagged(name: str, tag: str) -> bool:
    """``name`` carries ``tag`` as a name part (followed by ``_`` or at the end)."""
    return f"{tag}_" in name or name.endswith(tag)


def _nearest_c1(defaults: Sequence[str]) -> str:
    """Among several ``_c1`` configs: the one ending in ``_c1``, else those with the shortest tail after
    ``_c1_``; the first by name."""
    ending = [c for c in defaults if c.endswith("_c1")]
    if not ending:
        tails = [len(c.rsplit("_c1_", maxsplit=1)[-1]) for c in defaults]
        ending = [c for c, t in zip(defaults, tails) if t == min(tails)]
    return sorted(ending)[0]


def split_results(split: Split, preds: Sequence, y_val, y_test, can_hpo: bool) -> list[dict[str, Any]]:
    """The hpo_results rows of one split (default, then tuned and tuned + ensemble when ``can_hpo``).

    ``preds`` are the configs' aligned predictions (``cache_predictions.Predictions``); ``y_val``
    and ``y_test`` the labels as the raw results hold them.
    """
    configs = sorted(split.rows)
    config_type = split.types[configs[0]]
    default = guessed_default(configs)
    row = split.rows[default]
    out = [
        {
            "dataset": split.dataset,
            "fold": split.fold,
            "method": f"{config_type} (default)",
            "metric_error": row["metric_error"],
            "time_train_s": row["time_train_s"],
            "time_infer_s": row["time_infer_s"],
            "metric": split.metric,
            "problem_type": split.problem_type,
            "metric_error_val": row["metric_error_val"],
            "method_type": "config",
            "method_subtype": "default",
            "config_type": split.types[default],
            "imputed": False,
        }
    ]
    if not can_hpo:
        return out
    out[0].update(impute_method=math.nan, method_metadata=None)
    prep = Prepared(
        Metric(split.metric),
        [p.framework for p in preds],
        y_val,
        np.array([p.pred_val for p in preds], dtype=np.float32),
        y_test,
        np.array([p.pred_test for p in preds], dtype=np.float32),
    )
    sizes = (1, ITERATIONS)
    tuned = ensembles(split, prep, [configs, configs], sizes)  # the one-pick search is the other's first step
    for size, name, subtype, r in zip(sizes, ("tuned", "tuned + ensemble"), ("tuned", "tuned_ensemble"), tuned):
        out.append(
            {
                "dataset": split.dataset,
                "fold": split.fold,
                "method": f"{config_type} ({name})",
                "metric_error": r["metric_error"],
                "time_train_s": r["time_train_s"],
                "time_infer_s": r["time_infer_s"],
                "metric": r["metric"],
                "problem_type": r["problem_type"],
                "metric_error_val": r["metric_error_val"],
                "method_type": "hpo",
                "method_subtype": subtype,
                "config_type": config_type,
                "imputed": r["imputed"],
                "impute_method": r["impute_method"],
                "method_metadata": {
                    "n_iterations": size,
                    "n_configs": None,
                    "time_limit": None,
                    "config_type": config_type,
                    "fit_order": "original",
                },
            }
        )
    return out


# --------------------------------------------------------------------------- the whole method: trajectories


def passes(configs: Sequence[str], default: str) -> list[tuple[int, int, list[str]]]:
    """(budget, seed, config list) of every trajectory pass, in TabArena's order: a budget of one config or
    of all is one pass, any other twenty (the default then the others shuffled by the seed)."""
    total = len(configs)
    others = [c for c in configs if c != default]
    out = []
    for budget in budgets(total):
        for seed in range(1 if budget in (1, total) else SEEDS):
            order = [str(x) for x in np.random.default_rng(seed=seed).permuted(others)]
            out.append((budget, seed, ([default] + order)[:budget]))
    return out


def budgets(total: int) -> list[int]:
    """TabArena's budgets (numbers of configs) that ``total`` configs fill, ascending."""
    sizes = {total if b is None else b for b in BUDGETS}
    return sorted(b for b in sizes if b <= total)


def trajectory_rows(
    splits: Sequence[Split],
    predictions_dir: Path,
    configs: Sequence[str],
    default: str,
    config_type: str,
    workers: int | None = None,
) -> list[dict[str, Any]]:
    """hpo_trajectories rows: per pass, one row per split in (dataset, fold) order.

    Each split is simulated on its own from its cached predictions (``predictions_dir``, read
    by :func:`load_split`): with ``PARALLEL_SPLITS`` splits or more, in ``workers`` processes
    (default: one per CPU).
    """
    plan = passes(configs, default)
    ordered = sorted(splits, key=lambda s: (s.dataset, s.fold))
    jobs = [(split, predictions_dir, [chosen for _, _, chosen in plan], default) for split in ordered]
    with _simulation_pool(len(jobs), workers) as pool:  # before the progress bar
        per_split = list(progress.counted(_simulated(jobs, pool), "HPO trajectories", len(ordered), unit="task splits"))
    out = []
    for k, (budget, seed, _) in enumerate(plan):
        meta = {
            "n_iterations": ITERATIONS,
            "n_configs": budget,
            "time_limit": None,
            "config_type": config_type,
            "fit_order": "random",
        }
        for split, rows in zip(ordered, per_split):
            out.append(
                {
                    "dataset": split.dataset,
                    "fold": split.fold,
                    **rows[k],
                    "method_type": "hpo",
                    "method_subtype": "tuned_ensemble",
                    "config_type": config_type,
                    "method_metadata": meta,
                    "method": f"HPO-N{budget}-{config_type}",
                    "n_configs": budget,
                    "n_iterations": ITERATIONS,
                    "seed": seed,
                }
            )
    return out


#: from this many task splits on, the trajectories are simulated in worker processes
PARALLEL_SPLITS = 8


@contextmanager
def _simulation_pool(splits: int, workers: int | None):
    """Worker processes for the trajectories of ``splits`` task splits (``workers``, default one per CPU),
    every one started now (:func:`~tabarena_checks.workers.quiet_pool`), before the caller's progress
    bar starts drawing from a thread of its own; None when the splits are too few or there is one CPU.
    """
    with quiet_pool(worker_count(workers, splits) if splits >= PARALLEL_SPLITS else 1) as pool:
        yield pool


def _simulated(jobs: Sequence[tuple[Split, Path, list[list[str]], str]], pool) -> Iterable[list[dict[str, Any]]]:
    """Each split's rows (one per pass) in order, in ``pool``'s workers when there is one."""
    if pool is None:
        return map(_split_trajectories, jobs)
    return pool.map(_split_trajectories, jobs)


def _split_trajectories(job: tuple[Split, Path, list[list[str]], str]) -> list[dict[str, Any]]:
    """One split's ensemble rows, one per pass (config list), from its cached predictions."""
    split, predictions_dir, lists, default = job
    names, pred_val, pred_test = load_split(predictions_dir)(split)
    prep = Prepared(Metric(split.metric), names, split.y_val, pred_val, split.y_test, pred_test)
    return ensembles(split, prep, lists, ITERATIONS, fallback=default)


def load_split(predictions_dir: Path):
    """A loader of a split's cached predictions (processed/model_predictions/<dataset>/<fold>/)."""

    def load(split: Split):
        where = predictions_dir / split.dataset / str(split.fold)
        meta = json.loads((where / "metadata.json").read_text(encoding="utf-8"))
        val = np.fromfile(where / "pred-val.dat", dtype=np.float32).reshape(meta["pred_val_shape"])
        test = np.fromfile(where / "pred-test.dat", dtype=np.float32).reshape(meta["pred_test_shape"])
        return meta["models"], val, test

    return load


# --------------------------------------------------------------------------- the tables


def _impute_text(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With an imputed row, ``impute_method`` is a text column (pandas: object) with nulls elsewhere."""
    if any(isinstance(r.get("impute_method"), str) for r in rows):
        return [
            {**r, "impute_method": r["impute_method"] if isinstance(r["impute_method"], str) else None}
            if "impute_method" in r
            else r
            for r in rows
        ]
    return rows


def _struct(budget_type):
    return pa.struct(
        [
            ("n_iterations", pa.int64()),
            ("n_configs", budget_type),
            ("time_limit", pa.null()),
            ("config_type", pa.string()),
            ("fit_order", pa.string()),
        ]
    )


def hpo_results_table(rows: Sequence[dict[str, Any]], meta):
    """results/hpo_results.parquet (``ta_name``/``ta_suite`` added as TabArena adds them)."""
    plain = [
        {k: v for k, v in r.items() if k != "method_metadata"}
        | {"ta_name": meta.method, "ta_suite": meta.effective_suite}
        for r in rows
    ]
    table = frame(_impute_text(plain))
    if rows and "method_metadata" in rows[0]:
        at = table.column_names.index("impute_method") + 1
        table = table.add_column(
            at,
            pa.field("method_metadata", _struct(pa.null())),
            pa.array([r["method_metadata"] for r in rows], _struct(pa.null())),
        )
    return table


def trajectories_table(rows: Sequence[dict[str, Any]], meta):
    """results/hpo_trajectories.parquet."""
    plain = [
        {k: v for k, v in r.items() if k != "method_metadata"}
        | {"ta_name": meta.method, "ta_suite": meta.effective_suite, "always_include_default": True}
        for r in rows
    ]
    table = frame(_impute_text(plain))
    at = table.column_names.index("config_type") + 1
    return table.add_column(
        at,
        pa.field("method_metadata", _struct(pa.int64())),
        pa.array([r["method_metadata"] for r in rows], _struct(pa.int64())),
    )


def read_back(values: Iterable) -> np.ndarray:
    """Labels as TabArena reads them from the label CSV the cache holds (floats parsed from their text
    the way pandas' CSV reader parses them)."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f":
        return np.array([pandas_float(c) for c in _cells(arr)], dtype=np.float64)
    if arr.dtype.kind in "iub":
        return arr.astype(np.int64)
    return arr


#: pandas keeps this many significant digits of a number in a CSV (the rest only moves the exponent)
_PANDAS_DIGITS = 17


def pandas_float(text: str) -> float:
    """``text`` as pandas' default CSV float parser reads it (``float_precision=None``).

    pandas accumulates up to 17 digits in a double (rounding once the value passes 2**53) and
    then divides or multiplies by one power of ten, so a 17-digit number can land one step
    away from Python's correctly rounded ``float(text)``; shorter numbers agree with it.
    """
    s = text.strip()
    if not s:
        return math.nan
    mantissa, _, exp_text = s.lower().partition("e")
    whole, _, decimals = mantissa.lstrip("+-").partition(".")
    exponent = int(exp_text or 0)
    if len(whole) + len(decimals) <= 15 and abs(exponent - len(decimals)) <= 22:
        return float(s)  # an exact integer scaled by an exact power of ten: one rounding, as float() does
    number, shift = _leading_digits(whole, decimals)
    return _scaled(-number if mantissa.startswith("-") else number, exponent + shift)


def _leading_digits(whole: str, decimals: str) -> tuple[float, int]:
    """The first 17 digits accumulated in a double as pandas does, and the power of ten they still need."""
    head = whole[:_PANDAS_DIGITS]
    kept = decimals[: _PANDAS_DIGITS - len(head)]
    digits = head + kept
    number = float(int(digits[:15] or 0))  # below 10**15 < 2**53 every step of the loop is exact
    for ch in digits[15:]:
        number = number * 10.0 + (ord(ch) - 48)
    return number, len(whole) - len(head) - len(kept)


def _scaled(number: float, exponent: int) -> float:
    """``number`` times ten to ``exponent``, by one multiplication or division as pandas scales."""
    if exponent > 308:
        return math.copysign(math.inf, number)
    if exponent > 0:
        return number * float(f"1e{exponent}")
    if exponent < -308:
        return number / float(f"1e{-308 - exponent}") / 1e308
    return number / float(f"1e{-exponent}")
