"""What a result's simulation artifacts hold, as facts: kinds, dtypes, shapes, bounds and infinite values.

``checks run process`` turns every config result's artifacts into aligned predictions and label
files (engine.cache_predictions) and scores ensembles of them (engine.cache_hpo). A file whose
artifacts lack an array, hold a number where an array belongs, or arrays whose lengths disagree
would stop that processing halfway, as it stops TabArena's. :func:`facts` records, once per file
while it is indexed, what TA306 needs to say so (tabarena_checks.rules.raw_artifacts judges it when
the gate runs), and never the arrays: only kinds, shapes, bounds and counts of infinite values, and
a checksum of the labels, so the index pass stays about as cheap as before.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

#: the dtype kinds of numbers: bool, signed and unsigned ints, floats
_NUMERIC = "biuf"
#: the two parts of a split processing writes
_PARTS = ("val", "test")


def facts(sa: dict, framework: Any, show: Callable[[Any], str]) -> dict[str, Any]:
    """What processing reads of ``sa`` (flat simulation artifacts), JSON-ready.

    ``framework`` is the result's raw framework (the key of its prediction dicts); ``show`` renders a
    value for a message. Each array is described by :func:`_array` (``described``, and for an array
    ``kind``, ``dtype``, ``shape``, and where asked ``inf`` and ``min``/``max``); a missing value is None.
    """
    bag = sa.get("bag_info")
    label = sa.get("label")
    order = sa.get("ordered_class_labels_transformed")
    return {
        "label": None if "label" not in sa else {"name": _is_label_name(label), "described": _described(label)},
        "parts": {part: _part(sa, part, framework, show) for part in _PARTS},
        "order": None if order is None else {"len": _sized(order), "described": _described(order)},
        "bag_type": None if bag is None or isinstance(bag, dict) else type(bag).__name__,
        "bag": _bag(bag) if isinstance(bag, dict) else None,
    }


def _part(sa: dict, part: str, framework: Any, show: Callable[[Any], str]) -> dict[str, Any]:
    """The stored prediction, labels and row ids of one part (``val`` or ``test``)."""
    labels, ids = sa.get(f"y_{part}"), sa.get(f"y_{part}_idx")
    return {
        "pred": _prediction(sa, part, framework, show),
        "y": None if labels is None else _array(labels, bounds=True),
        "ids": None if ids is None else _array(ids),
    }


def _prediction(sa: dict, part: str, framework: Any, show: Callable[[Any], str]) -> dict[str, Any]:
    """Where the ``part`` prediction is (``source``: "dict", "other", "single" or "missing") and what it is.

    Processing picks ``pred_proba_dict_<part>[framework]``, else ``pred_<part>``: for a dict, how many
    entries it has, whether the framework is one of them (else the first key, shown) and that entry.
    """
    by_model = sa.get(f"pred_proba_dict_{part}")
    if isinstance(by_model, dict):
        has = framework in by_model
        out = {
            "source": "dict",
            "entries": len(by_model),
            "has_framework": has,
            "first_key": None if has or not by_model else show(next(iter(by_model))),
        }
        return {**out, **_array(by_model[framework], inf=True)} if has else out
    if by_model is not None:
        return {"source": "other", "type": type(by_model).__name__}
    value = sa.get(f"pred_{part}")
    return {"source": "missing"} if value is None else {"source": "single", **_array(value, inf=True)}


def _bag(bag: dict) -> dict[str, Any]:
    """The bag's children: how many validation positions each holds (``position_sizes``) and their bounds
    (``position_bounds``, ``[size, min, max]`` per child; both None unless a non-empty list of 1-D integer
    arrays), test and validation predictions (:func:`_children`), and whether TabArena's loader finds
    per-child test predictions to rebuild the test prediction from.

    The bounds differ from config to config where the sizes do not: the index keeps them in a column of
    their own (``val_position_bounds``), so the configs of a task split share the rest."""
    val_idx = bag.get("val_idx_per_child")
    bounds = None
    if isinstance(val_idx, (list, tuple)) and val_idx and all(map(_is_positions, val_idx)):
        bounds = _position_bounds(val_idx)
    test_key = "pred_test_per_child" if "pred_test_per_child" in bag else "pred_proba_test_per_child"
    loaded = bag.get("pred_proba_test_per_child", bag.get("pred_test_per_child"))
    per_child_val = bag.get("pred_val_per_child")
    return {
        "position_sizes": None if bounds is None else [size for size, _, _ in bounds],
        "position_bounds": bounds,
        "positions_described": _described(val_idx) if bounds is None else None,
        "test_key": test_key,
        "test": _children(bag.get(test_key)),
        "val": None if per_child_val is None else _children(per_child_val),
        "fidelity_children": isinstance(loaded, (list, tuple)) and bool(loaded),
    }


def _position_bounds(val_idx: list | tuple) -> list[list[int]]:
    """``[size, min, max]`` of each child's positions (1-D integer arrays; min and max 0 when empty).

    A bag has eight children or more, each a small array: one reduction over all of them costs a
    fraction of two per child, where the call is most of the cost.
    """
    import numpy as np

    sizes = [int(i.size) for i in val_idx]
    if not all(sizes):
        return [[n, int(i.min()) if n else 0, int(i.max()) if n else 0] for n, i in zip(sizes, val_idx)]
    flat = np.concatenate(val_idx)
    starts = list(itertools.accumulate(sizes[:-1], initial=0))  # numpy's cumsum of a short list costs ten times as much
    lows, highs = np.minimum.reduceat(flat, starts).tolist(), np.maximum.reduceat(flat, starts).tolist()
    return [[n, low, high] for n, low, high in zip(sizes, lows, highs)]


def _children(value: Any) -> dict[str, Any]:
    """A per-child list: ``ok`` when it is a non-empty list of 1-D or 2-D numeric arrays, then each one's
    shape and count of infinite values."""
    if not (isinstance(value, (list, tuple)) and value and all(map(_is_prediction, value))):
        return {"ok": False, "described": _described(value)}
    return {"ok": True, "shapes": [list(c.shape) for c in value], "inf": _infinities(value)}


def _infinities(arrays: list | tuple) -> list[int]:
    """Each array's count of infinite values, in one pass over all of them when none holds one (the usual
    case: a result with an infinite prediction is a finding), else one count per array."""
    import numpy as np

    floats = [a for a in arrays if a.dtype.kind == "f"]
    if not floats or not np.isinf(np.concatenate(floats, axis=None)).any():  # axis=None: flattened, of any shapes
        return [0] * len(arrays)
    return [_infinite(a) for a in arrays]


def _array(value: Any, *, inf: bool = False, bounds: bool = False) -> dict[str, Any]:
    """For an array its dtype ``kind`` and name and ``shape``, with ``inf`` (infinite values of a float array)
    and ``min``/``max`` (of a non-empty 1-D integer or bool array) when asked; for anything else
    ``described`` (see :func:`_described`)."""
    import numpy as np

    if not isinstance(value, np.ndarray):
        return {"described": _described(value)}
    out: dict[str, Any] = {"kind": value.dtype.kind, "dtype": _dtype_name(value.dtype), "shape": list(value.shape)}
    if inf and value.dtype.kind in _NUMERIC:
        out["inf"] = _infinite(value)
    if bounds and value.dtype.kind in "biu" and value.ndim == 1 and value.size:
        out["min"], out["max"] = int(value.min()), int(value.max())
    return out


@functools.lru_cache(maxsize=256)
def _dtype_name(dtype) -> str:
    """``str(dtype)``, which numpy computes slowly, once per dtype."""
    return str(dtype)


def _infinite(value) -> int:
    import numpy as np

    return int(np.count_nonzero(np.isinf(value))) if value.dtype.kind == "f" else 0


def _sized(order: Any) -> int | None:
    """The length of a class order that is a list, a tuple or a 1-D array, else None."""
    import numpy as np

    sized = isinstance(order, (list, tuple)) or (isinstance(order, np.ndarray) and order.ndim == 1)
    return len(order) if sized else None


def _is_label_name(value: Any) -> bool:
    """A label column's name, as a data frame has them: a string or an integer."""
    import numpy as np

    return isinstance(value, (str, int, np.integer))


def label_rows(sa: dict | None) -> dict[str, Any]:
    """``val_rows`` and ``test_rows``: how many labels each part holds (None without a 1-D array of them), and
    ``labels_digest``: a digest of the label values, their row ids and the label's name (None when one of them
    is unusable, judged on its own).

    Every config of a task split must predict the same rows against the same labels: processing stacks
    their predictions and writes the split's labels once, the first config's (see TA306's split checks in tabarena_checks.rules.raw_fields).
    """
    import numpy as np

    def rows(value: Any) -> int | None:
        return len(value) if isinstance(value, np.ndarray) and value.ndim == 1 else None

    sa = sa or {}
    return {"val_rows": rows(sa.get("y_val")), "test_rows": rows(sa.get("y_test")), "labels_digest": _labels_digest(sa)}


def _labels_digest(sa: dict) -> str | None:
    """What identifies a split's labels: a CRC-32 of their values (as float64, whatever the dtype), row ids and
    name. A checksum, cheap beside decoding the file, is enough: it tells one config's labels from another's
    made by mistake, and a file made to collide would only have its own config scored against the first's labels."""
    import numpy as np
    from isal import isal_zlib  # zlib's CRC-32, computed with the CPU's carry-less multiply: six times as fast

    crc = 0
    for key in ("y_val", "y_test", "y_val_idx", "y_test_idx"):
        value = sa.get(key)
        if value is None and key.endswith("_idx"):
            crc = isal_zlib.crc32(b"-", crc)
            continue
        if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in _NUMERIC):
            return None
        crc = isal_zlib.crc32(b"|", isal_zlib.crc32(np.ascontiguousarray(value, dtype=np.float64), crc))
    label = sa.get("label")
    if not _is_label_name(label):
        return None
    return f"{isal_zlib.crc32(str(label).encode('utf-8', 'surrogatepass'), crc):08x}"


def _is_prediction(value: Any) -> bool:
    import numpy as np

    return isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC and value.ndim in (1, 2)


def _is_positions(value: Any) -> bool:
    import numpy as np

    return isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu"


def _described(value: Any) -> str:
    """A value's kind and, for an array, its dtype and shape: what a message needs, never the data."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"a {_dtype_name(value.dtype)} array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        inner = {
            type(v).__name__ if not isinstance(v, np.ndarray) else f"{v.ndim}-D {_dtype_name(v.dtype)} array"
            for v in value
        }
        return f"a {type(value).__name__} of {len(value)}" + (f" ({', '.join(sorted(inner))})" if inner else "")
    return "nothing" if value is None else f"a {type(value).__name__}"
