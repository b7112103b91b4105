"""The metrics the ensemble simulation scores with, computed to the same bits as TabArena's.

TabArena 0.1.0 scores ensembles with its "fast" metrics: ``log_loss`` on the probability of the
true class (clipped to [1e-15, 1 - 1e-15], kept as float32), ``roc_auc`` from a C++ radix sort
of the predictions cast to float32 and shifted into [1, 2) (so scores closer than one float32
step in that range tie), and ``rmse`` from a C++ loop with eight running sums that the
compiler (``-O3 -march=native``) turns into fused multiply-adds on a CPU that has them. The
functions here reproduce each result exactly with numpy: AUC from integer pair counts,
the fused multiply-add with error-free transformations (Boldo and Melquiond's emulation:
the product split exactly, the low parts added with rounding to odd). Scores of many
candidates at once (rows of a 2-D array) serve the greedy search; ``error`` gives one value.

Any other metric TabArena takes from AutoGluon's scorers. Of those, ``mae`` is simulated here too:
AutoGluon's ``mean_absolute_error`` is scikit-learn's, the mean of the absolute differences summed
pairwise, which numpy's row mean computes to the same bits (TabArena 0.1.0 itself cannot load such
a run: AutoGluon records the scorer's own name beside the task's ``mae``, and TabArena asserts the
two equal).

Every metric here returns an error, lower is better, as TabArena's ``Scorer.error`` does.
"""

from __future__ import annotations

import numpy as np

from tabarena_checks.facts.constants import SIMULATED

#: float32 one-step below 2.0, the upper clamp of the AUC kernel
_AUC_TOP = 2.0 - float(np.finfo(np.float32).eps)


# --------------------------------------------------------------------------- log_loss


def true_class_probability(y: np.ndarray, preds: np.ndarray) -> np.ndarray:
    """Each model's probability for the true class, clipped and kept as float32 (``preds`` is
    ``[models, rows]`` for binary, ``[models, rows, classes]`` otherwise)."""
    if preds.ndim == 2:
        positive = y.astype(np.bool_)
        picked = positive * preds + ~positive * (1 - preds)
    else:
        picked = preds[:, np.arange(preds.shape[1]), y]
    return np.clip(picked.astype(float), 1e-15, 1 - 1e-15).astype(np.float32)


def log_loss_rows(fant: np.ndarray) -> np.ndarray:
    """Mean negative log of each row (the rows are ensembles of true-class probabilities).

    numpy sums a row pairwise in its memory order, so the rows must be C-contiguous to sum as a
    lone row does."""
    return -np.log(np.ascontiguousarray(fant)).mean(axis=-1)


# --------------------------------------------------------------------------- roc_auc


class AucLabels:
    """Binary labels as the AUC counts read them, with what every block of one split shares."""

    def __init__(self, y: np.ndarray):
        label = np.asarray(y).astype(np.int32)
        self.n = len(label)
        self.pos = int(label.sum())
        #: rows of one block: at most 127 (the row number sits above the 23 bits of key and the label bit
        #: of an int32 code), and few enough that a block's codes stay in a core's cache
        self.step = max(1, min(127, _AUC_CACHED // max(1, self.n)))
        #: added to a block's shifted keys: the row number, the label, minus the bits of 1.0
        self.offsets = (label - _ONE_CODE)[None, :] + (np.arange(self.step, dtype=np.int32) << 24)[:, None]
        #: each position, to sum the positions of the positives (int32 products fit below 65,536 rows)
        self.positions = np.arange(self.n, dtype=np.int32 if self.n < 65_536 else np.float64)


def auc_rows(y: np.ndarray | AucLabels, scores: np.ndarray, consume: bool = False) -> np.ndarray:
    """AUC of each row of ``scores`` (``[models, rows]``) against the bool labels ``y``.

    Counted as the kernel counts: for every negative, the positives with a strictly larger key,
    plus half of the positive-negative pairs that share a key; divided by positives x negatives.
    Scored in blocks of rows that stay in the CPU's cache through the sort and the counts;
    ``consume``: ``scores`` is C-ordered float32 and is worked on in place (its values are lost).
    """
    labels = y if isinstance(y, AucLabels) else AucLabels(y)
    scores = np.atleast_2d(scores)
    if consume and not (scores.dtype == np.float32 and scores.flags.c_contiguous):
        raise ValueError("auc_rows can only consume a C-ordered float32 array")
    out = np.empty(scores.shape[0])
    for lo in range(0, scores.shape[0], labels.step):
        block = scores[lo : lo + labels.step]
        out[lo : lo + labels.step] = _auc_block(block if consume else block.astype(np.float32), labels)
    return out


#: values of one block at most
_AUC_CACHED = 1 << 18
#: the bits of float32 1.0 shifted left by one: a key's code is its mantissa, the label in the lowest bit
_ONE_CODE = np.int32(0x3F800000 << 1)


def _auc_block(keys: np.ndarray, labels: AucLabels) -> np.ndarray:
    """AUC of up to 127 rows of float32 scores, from one sort of int32 codes (row, key, label).

    The key is float32 of (float32 score + 1), clamped to [1, 2) (added in float32 directly: a
    float32 plus one is exact in float64 unless the float32 is below 2**-29, where both ways
    round to one). Within a row the codes sort by key and, within a key, negatives first, so
    the negatives before a positive count the pairs below it plus its ties: the positions of
    the positives minus 0 + 1 + ... + (P - 1). The ties are counted where a positive directly
    follows a negative of its key: that key's run holds (negatives before) x (positives after)
    tied pairs (an odd code never follows one of the row before: rows differ above 24 bits).
    """
    m, n = keys.shape
    keys += np.float32(1.0)
    np.clip(keys, np.float32(1.0), np.float32(_AUC_TOP), out=keys)
    code = keys.view(np.int32)
    code <<= 1
    code += labels.offsets[:m]
    code.sort(axis=-1)
    pos = labels.pos
    positives_at = np.einsum("ij,j->i", code & 1, labels.positions)  # sums of exact integers
    below_or_tied = positives_at.astype(np.int64) - pos * (pos - 1) // 2
    flat = code.ravel()
    tied = np.flatnonzero(np.equal(flat[1:] - 1, flat[:-1])) + 1
    tied = tied[(flat[tied] & 1) == 1]
    ties = np.zeros(m, dtype=np.int64)
    if tied.size:
        negatives = tied - np.searchsorted(flat, flat[tied] - 1, side="left")
        positives = np.searchsorted(flat, flat[tied], side="right") - tied
        ties = np.bincount(tied // n, weights=negatives * positives, minlength=m).astype(np.int64)
    return ((below_or_tied - ties).astype(np.float64) + ties / 2.0) / float(pos * (n - pos))


# --------------------------------------------------------------------------- rmse


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a  # 2**27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _two_product(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _odd_sum(a, b):
    """a + b rounded to odd: when inexact, the neighbour whose last mantissa bit is 1."""
    s, e = _two_sum(a, b)
    even = (s.view(np.int64) & 1) == 0
    fix = (e != 0) & even
    if fix.any():
        s = np.where(fix, np.nextafter(s, np.where(e > 0, np.inf, -np.inf)), s)
    return s


def fused_square_add(d: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """``d * d + acc`` rounded once, as a fused multiply-add gives it."""
    hi, lo = _two_product(d, d)
    th, tl = _two_sum(acc, hi)
    return th + _odd_sum(tl, lo)


def rmse_exact(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """RMSE of each row of ``pred`` (``[models, rows]`` or ``[rows]``) against ``y``, in the C++
    kernel's arithmetic: eight lanes of fused square-adds over whole groups of eight, the rest
    added plainly, then the lanes in order."""
    diff = np.atleast_2d(np.asarray(y, dtype=np.float64) - np.asarray(pred, dtype=np.float64))
    n = diff.shape[1]
    whole = n // 8 * 8
    lanes = np.zeros((diff.shape[0], 8))
    blocks = diff[:, :whole].reshape(diff.shape[0], -1, 8)
    for step in range(blocks.shape[1]):
        lanes = fused_square_add(blocks[:, step, :], lanes)
    total = np.zeros(diff.shape[0])
    for i in range(whole, n):
        total = total + diff[:, i] * diff[:, i]
    for j in range(8):
        total = total + lanes[:, j]
    return np.sqrt(total / float(n))


def rmse_rows(y: np.ndarray, fant: np.ndarray) -> np.ndarray:
    """RMSE of each row, as plain numpy computes it: equal to the kernel's to the last bit or two,
    which the greedy search cannot see (it compares scores rounded to six decimals, or within
    a relative 1e-12)."""
    diff = y - fant
    return np.sqrt((diff * diff).mean(axis=-1))


# --------------------------------------------------------------------------- mae


def mae_rows(y: np.ndarray, fant: np.ndarray) -> np.ndarray:
    """Mean absolute error of each row of ``fant`` (``[models, rows]`` or ``[rows]``) against ``y``: the rows
    summed pairwise as scikit-learn's ``mean_absolute_error`` sums one, so to the same bits."""
    return np.abs(np.atleast_2d(np.asarray(fant, dtype=np.float64)) - y).mean(axis=-1)


# --------------------------------------------------------------------------- one interface


class Metric:
    """One metric as the simulation uses it: how predictions are prepared, scores of many candidate
    rows, and the exact error of one prediction."""

    def __init__(self, name: str):
        if name not in SIMULATED:
            shown = name if len(name) <= 60 else f"{name[:57]}..."
            raise ValueError(
                f"metric {shown!r} is not one TabArena's simulation computes natively "
                f"(supported: {', '.join(SIMULATED)})"
            )
        self.name = name
        #: candidate ensembles are summed in float64 and stored as this (roc_auc's kernel ranks float32 keys)
        self.sum_dtype = np.float32 if name == "roc_auc" else np.float64

    def prepare(self, y: np.ndarray, preds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(labels, predictions) in the space the metric scores in."""
        if self.name == "log_loss":
            return y, true_class_probability(y, preds)
        if self.name == "roc_auc":
            return AucLabels(y), preds.astype(np.float32)
        return np.asarray(y, dtype=np.float64), preds

    def scores(self, y: np.ndarray, fant: np.ndarray, exact: bool = False) -> np.ndarray:
        """The error of each candidate ensemble, a row of ``fant`` in :attr:`sum_dtype` (roc_auc: the
        float64 sums rounded once to float32, consumed); ``exact`` computes RMSE in the kernel's
        arithmetic (needed only where scores are compared unrounded)."""
        if self.name == "roc_auc":
            return 1 - auc_rows(y, fant, consume=True)
        if self.name == "log_loss":
            return log_loss_rows(fant)
        if self.name == "mae":
            return mae_rows(y, fant)
        return rmse_exact(y, fant) if exact else rmse_rows(y, fant)

    def errors(self, y: np.ndarray, preds: np.ndarray) -> list[float]:
        """The exact error of each row of ``preds`` (float64 ensemble predictions), as ``error`` gives it."""
        if self.name == "log_loss":
            return [float(0 - (-1 * v)) for v in log_loss_rows(preds)]
        if self.name == "roc_auc":
            return [float(1 - v) for v in auc_rows(y, preds)]
        if self.name == "mae":
            return [float(0 - (-1 * v)) for v in mae_rows(y, preds)]
        return [float(0 - (-1 * v)) for v in rmse_exact(y, preds)]

    def error(self, y: np.ndarray, pred: np.ndarray) -> float:
        """The exact error of one ensemble prediction (float64)."""
        if self.name == "log_loss":
            return float(0 - (-1 * log_loss_rows(pred[None, :])[0]))
        if self.name == "roc_auc":
            return float(1 - auc_rows(y, pred[None, :])[0])
        if self.name == "mae":
            return float(0 - (-1 * mae_rows(y, pred)[0]))
        return float(0 - (-1 * rmse_exact(y, pred)[0]))


# --------------------------------------------------------------------------- metric_error_val of a raw result

from tabarena_checks.raw.reader import RECOMPUTED_VAL as RECOMPUTED  # noqa: E402  (the reader flags the others)


def stored_val_prediction(sa: dict, framework: str):
    """The validation prediction a result stores (``pred_val``, else its entry of ``pred_proba_dict_val``)."""
    pred = sa.get("pred_val")
    if pred is None and isinstance(sa.get("pred_proba_dict_val"), dict):
        pred = sa["pred_proba_dict_val"].get(framework)
    return pred


def recomputed_val_error(metric: str, problem_type: str, y_val, pred_val) -> float:
    """The validation error TabArena 0.1.0 fills in for a config result that has none.

    TabArena scores the stored validation prediction (binary: the positive class) against
    ``y_val`` with AutoGluon's plain metric of that name: RMSE in the arrays' own dtype,
    binary log loss on float64 probabilities clipped to [1e-15, 1 - 1e-15], multiclass log loss
    as scikit-learn computes it (the probability of the true class clipped to the dtype's
    epsilon, the mean in the prediction's dtype), ROC AUC by the trapezoid rule over the
    distinct thresholds (collinear points dropped above 100,000 thresholds).
    """
    if metric not in RECOMPUTED:
        raise ValueError(
            f"metric {metric!r} is not one whose validation error the native engine recomputes "
            f"(supported: {', '.join(RECOMPUTED)})"
        )
    y = np.asarray(y_val)
    pred = np.asarray(pred_val)
    if problem_type == "binary" and pred.ndim != 1:
        pred = pred[:, 1]
    if metric == "rmse":
        return float(0 - (-1 * np.sqrt(((y - pred) ** 2).mean())))
    if metric == "log_loss":
        if pred.ndim == 1:
            p = np.clip(pred.astype(float), 1e-15, 1 - 1e-15)
            return float(0 - (-1 * -(y * np.log(p) + (1 - y) * np.log(1 - p)).mean()))
        eps = np.finfo(pred.dtype).eps
        p = np.clip(pred, eps, 1 - eps)
        true = p[np.arange(len(y)), y.astype(np.int64)]
        loss = -np.log(true)
        return float(0 - (-1 * float(np.average(loss))))
    return float(1 - _trapezoid_auc(y, pred))


def _trapezoid_auc(y, score) -> float:
    order = np.argsort(score, kind="mergesort")[::-1]
    score, y = score[order], y[order]
    cut = np.r_[np.where(np.diff(score))[0], y.size - 1]
    tps = np.cumsum(y)[cut]
    fps = 1 + cut - tps
    if tps.size > 100_000:
        keep = np.where(np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True])[0]
        fps, tps = fps[keep], tps[keep]
    tps, fps = np.r_[0, tps], np.r_[0, fps]
    if fps[-1] <= 0 or tps[-1] <= 0:
        raise ValueError("only one class in y_val: ROC AUC is not defined")
    trapezoid = getattr(np, "trapezoid", None) or np.trapz
    return float(trapezoid(tps / tps[-1], fps / fps[-1]))
