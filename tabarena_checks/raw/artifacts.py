"""What processing reads of a result's simulation artifacts, checked when the file is indexed.

``checks run process`` turns every config result's artifacts into aligned predictions and label
files (engine.cache_predictions) and scores ensembles of them (engine.cache_hpo). A file whose
artifacts lack an array, hold a number where an array belongs, or arrays whose lengths disagree
would stop that processing halfway, as it stops TabArena's. Checked here, each such defect is a
problem of the file's index row: result-fields-valid (TA306) names it in ``checks inspect`` and
blocks the action before anything is written. Only kinds, shapes and infinite values are checked
and a checksum of the labels taken, nothing computed, so the index pass stays about as cheap as before.
"""

from __future__ import annotations

from typing import Any

#: the dtype kinds of numbers: bool, signed and unsigned ints, floats
_NUMERIC = "biuf"
#: labels of a classification task: integer class numbers (bool for binary)
_CLASS_LABELS = "biu"
#: the two parts of a split processing writes
_PARTS = ("val", "test")


def problems(sa: dict, framework: Any, problem_type: Any) -> list[str]:
    """Each defect of ``sa`` (flat simulation artifacts) that would stop processing, as a sentence.

    ``framework`` is the result's raw framework (the key of its prediction dicts) and
    ``problem_type`` its task's; either may be None when the row already has a problem for it.
    """
    found: list[str] = []
    _check_label_name(sa, found)
    preds = {part: _prediction(sa, part, framework, found) for part in _PARTS}
    labels = {part: _vector(sa, f"y_{part}", found) for part in _PARTS}
    _check_parts(preds, labels, problem_type, found)
    _check_class_order(sa, preds, found)
    ids = {part: _ids(sa, f"y_{part}_idx", labels[part], found) for part in _PARTS}
    bag = sa.get("bag_info")
    if isinstance(bag, dict):
        _check_bag(bag, preds["val"], problem_type, ids, found)
    elif bag is not None:
        found.append(f"simulation_artifacts.bag_info is not a dict (got {type(bag).__name__})")
    return found


def _is_label_name(value: Any) -> bool:
    """A label column's name, as a data frame has them: a string or an integer."""
    import numpy as np

    return isinstance(value, (str, int, np.integer))


def _check_label_name(sa: dict, found: list[str]) -> None:
    """``label`` names the label column of the split's label files."""
    if "label" not in sa:
        found.append(
            "simulation_artifacts.label is missing: it names the label column of the split's label files "
            "(TabArena stops without it); record the task's target column name"
        )
    elif not _is_label_name(sa["label"]):
        found.append(
            "simulation_artifacts.label must name the label column, a string or an integer "
            f"(got {_described(sa['label'])})"
        )


def _check_class_order(sa: dict, preds: dict, found: list[str]) -> None:
    """``ordered_class_labels_transformed`` (optional) names the predictions' columns: one class per column,
    two for a 1-D prediction (its positive class is the second)."""
    import numpy as np

    order = sa.get("ordered_class_labels_transformed")
    pred = preds["val"] if preds["val"] is not None else preds["test"]
    if order is None or pred is None:
        return
    want = 2 if pred.ndim == 1 else pred.shape[1]
    sized = isinstance(order, (list, tuple)) or (isinstance(order, np.ndarray) and order.ndim == 1)
    if not sized or len(order) != want:
        found.append(
            f"simulation_artifacts.ordered_class_labels_transformed must list {want} classes, one per "
            f"column of the predictions (two for a 1-D prediction), or be None (got {_described(order)})"
        )


def _check_parts(preds: dict, labels: dict, problem_type: Any, found: list[str]) -> None:
    """Each part's prediction and labels agree in rows; classification labels fit the predictions' classes."""
    for part in _PARTS:
        pred, y = preds[part], labels[part]
        if pred is not None and y is not None and len(pred) != len(y):
            found.append(f"simulation_artifacts: the {part} prediction has {len(pred)} rows but y_{part} has {len(y)}")
    if problem_type in ("binary", "multiclass"):
        _check_classes(preds, labels, problem_type, found)


def _check_classes(preds: dict, labels: dict, problem_type: str, found: list[str]) -> None:
    """The predictions have a column per class (or one, binary) and the labels are those classes' numbers."""
    classes = None
    for part in (part for part in _PARTS if preds[part] is not None):
        classes = _class_count(preds[part], part, problem_type, found) or classes
    classes = classes if problem_type == "multiclass" else 2
    for part in _PARTS:
        _check_labels(labels[part], f"y_{part}", classes, found)


def label_rows(sa: dict | None) -> dict[str, Any]:
    """``val_rows`` and ``test_rows``: how many labels each part holds (None without a 1-D array of them), and
    ``labels_digest``: a digest of the label values, their row ids and the label's name (None when one of them
    is unusable, a problem of its own).

    Every config of a task split must predict the same rows against the same labels: processing stacks
    their predictions and writes the split's labels once, the first config's (see inference's field problems).
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
    import zlib

    import numpy as np

    crc = 0
    for key in ("y_val", "y_test", "y_val_idx", "y_test_idx"):
        value = sa.get(key)
        if value is None and key.endswith("_idx"):
            crc = zlib.crc32(b"-", crc)
            continue
        if not (isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in _NUMERIC):
            return None
        crc = zlib.crc32(b"|", zlib.crc32(np.ascontiguousarray(value, dtype=np.float64), crc))
    label = sa.get("label")
    if not _is_label_name(label):
        return None
    return f"{zlib.crc32(str(label).encode('utf-8', 'surrogatepass'), crc):08x}"


def _prediction(sa: dict, part: str, framework: Any, found: list[str]):
    """The stored ``part`` prediction as processing picks it: ``pred_proba_dict_<part>[framework]``, else ``pred_<part>``."""
    by_model = sa.get(f"pred_proba_dict_{part}")
    if isinstance(by_model, dict):
        if framework not in by_model:
            return None  # the reader's own check names the missing entry
        label, value = f"simulation_artifacts.pred_proba_dict_{part}[{framework!r}]", by_model[framework]
    elif by_model is not None:
        found.append(f"simulation_artifacts.pred_proba_dict_{part} is not a dict (got {type(by_model).__name__})")
        return None
    else:
        label, value = f"simulation_artifacts.pred_{part}", sa.get(f"pred_{part}")
        if value is None:
            found.append(
                f"simulation_artifacts has no {part} prediction (pred_proba_dict_{part} or pred_{part}); "
                "processing needs one for every config result"
            )
            return None
    if not _is_prediction(value):
        found.append(f"{label} must be a 1-D or 2-D numeric array (got {_described(value)})")
        return None
    _check_finite(label, value, found)
    return value


def _check_children_finite(label: str, children, found: list[str]) -> None:
    for k, child in enumerate(children):
        _check_finite(f"{label}[{k}]", child, found)


def _check_finite(label: str, pred, found: list[str]) -> None:
    """A prediction holds no infinity: the errors and ensembles scored from it would be infinite or NaN."""
    import numpy as np

    infinite = int(np.count_nonzero(np.isinf(pred))) if pred.dtype.kind == "f" else 0
    if infinite:
        found.append(
            f"{label} holds {infinite} infinite value{'s' if infinite > 1 else ''}: a model predicts "
            "finite numbers, and errors scored from it would be infinite or NaN; re-run the config"
        )


def _class_count(pred, part: str, problem_type: str, found: list[str]) -> int | None:
    """The classes a classification prediction has columns for (None for a binary 1-D one)."""
    if pred.ndim == 1:
        if problem_type == "multiclass":
            found.append(
                f"simulation_artifacts: the multiclass {part} prediction must have a column per class "
                f"(got shape {pred.shape})"
            )
        return None
    if pred.shape[1] < 2:
        found.append(
            f"simulation_artifacts: the {part} prediction must have a column per class (got shape {pred.shape})"
        )
        return None
    return int(pred.shape[1])


def _vector(sa: dict, key: str, found: list[str]):
    """``sa[key]`` when it is a 1-D array of numbers; None and a problem otherwise."""
    import numpy as np

    value = sa.get(key)
    if value is None:
        found.append(f"simulation_artifacts.{key} is missing; processing writes it as the split's labels")
        return None
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.dtype.kind not in _NUMERIC:
        found.append(f"simulation_artifacts.{key} must be a 1-D array of numbers (got {_described(value)})")
        return None
    return value


def _check_labels(y, key: str, classes: int | None, found: list[str]) -> None:
    """Classification labels are class numbers 0 .. classes - 1, as AutoGluon stores them."""
    if y is None:
        return
    if y.dtype.kind not in _CLASS_LABELS:
        found.append(
            f"simulation_artifacts.{key} must hold class numbers (integers), as AutoGluon stores them "
            f"(got {y.dtype} values)"
        )
        return
    if classes is not None and y.size and (int(y.min()) < 0 or int(y.max()) >= classes):
        found.append(
            f"simulation_artifacts.{key} holds class {int(y.max()) if y.max() >= classes else int(y.min())} "
            f"but the predictions have {classes} classes (0 .. {classes - 1})"
        )


def _ids(sa: dict, key: str, labels, found: list[str]):
    """The row ids ``sa[key]`` (optional): a 1-D array as long as its ``labels``."""
    import numpy as np

    rows = None if labels is None else len(labels)
    value = sa.get(key)
    if value is None:
        return None
    if not isinstance(value, np.ndarray) or value.ndim != 1:
        found.append(f"simulation_artifacts.{key} must be a 1-D array of row ids (got {_described(value)})")
        return None
    if rows is not None and len(value) != rows:
        found.append(f"simulation_artifacts.{key} has {len(value)} row ids but its labels have {rows} rows")
        return None
    return value


def _check_bag(bag: dict, pred_val, problem_type: Any, ids: dict, found: list[str]) -> None:
    """A bag's children: what rebuilding its validation and test predictions reads.

    The rebuilt test prediction takes the validation's shape: one column (a binary prediction is
    reduced to its positive class first) or a column per class, which every test child must match.
    """
    missing = [f"y_{part}_idx" for part in _PARTS if ids[part] is None]
    if missing:
        found.append(
            f"simulation_artifacts has bag_info but no usable {' or '.join(missing)}; the bag's predictions "
            "are rebuilt by row id"
        )
        return
    val_idx = _positions_per_child(bag, found)
    if val_idx is None:
        return
    test_key = "pred_test_per_child" if "pred_test_per_child" in bag else "pred_proba_test_per_child"
    per_child_test = _children(bag, test_key, len(ids["test"]), found)
    usable, width = _val_width(bag, val_idx, pred_val, problem_type, len(ids["val"]), found)
    want = () if width is None else (width,)
    if usable and per_child_test is not None and per_child_test[0].shape[1:] != want:
        found.append(
            f"simulation_artifacts.bag_info.{test_key}: each child's test prediction has shape "
            f"{per_child_test[0].shape}, where the validation predictions make it "
            f"{(len(ids['test']), *want)}"
        )


def _positions_per_child(bag: dict, found: list[str]):
    """``val_idx_per_child``: a non-empty list of 1-D integer arrays, or None and a problem."""
    val_idx = bag.get("val_idx_per_child")
    if not isinstance(val_idx, (list, tuple)) or not val_idx or not all(map(_is_positions, val_idx)):
        found.append(
            "simulation_artifacts.bag_info.val_idx_per_child must be a non-empty list of 1-D integer "
            f"arrays (got {_described(val_idx)})"
        )
        return None
    return val_idx


def _val_width(bag: dict, val_idx, pred_val, problem_type: Any, rows: int, found: list[str]) -> tuple[bool, int | None]:
    """Whether the children's validation predictions can be rebuilt, and their columns (None: one).

    Without ``pred_val_per_child`` each child's rows are cut from the stored prediction; a single
    child may record row ids instead (use_child_oof), which are looked up in y_val_idx.
    """
    per_child_val = bag.get("pred_val_per_child")
    if per_child_val is None:
        if pred_val is None:
            return False, None
        if len(val_idx) > 1:
            _check_positions(val_idx, len(pred_val), found)
        return True, None if pred_val.ndim == 1 or problem_type == "binary" else pred_val.shape[1]
    return _children_val_width(bag, val_idx, rows, found)


def _children_val_width(bag: dict, val_idx, rows: int, found: list[str]) -> tuple[bool, int | None]:
    """:func:`_val_width` from the children's own validation predictions (``pred_val_per_child``)."""
    children = _children(bag, "pred_val_per_child", None, found)
    if children is None:
        return False, None
    if len(children) != len(val_idx) or any(len(c) != len(i) for c, i in zip(children, val_idx)):
        found.append(
            "simulation_artifacts.bag_info: pred_val_per_child must have one prediction per child, "
            "as many rows as that child's val_idx_per_child"
        )
        return False, None
    _check_positions(val_idx, rows, found)
    return True, None if children[0].ndim == 1 else children[0].shape[1]


def _children(bag: dict, key: str, rows: int | None, found: list[str]):
    """``bag[key]``: a non-empty list of numeric arrays with the same columns (and ``rows`` rows each when given)."""
    value = bag.get(key)
    if not isinstance(value, (list, tuple)) or not value or not all(map(_is_prediction, value)):
        found.append(
            f"simulation_artifacts.bag_info.{key} must be a non-empty list of 1-D or 2-D numeric arrays "
            f"(got {_described(value)})"
        )
        return None
    if any(c.shape[1:] != value[0].shape[1:] for c in value):
        found.append(
            f"simulation_artifacts.bag_info.{key}: the children's predictions differ in columns "
            f"({', '.join(sorted({str(c.shape) for c in value}))})"
        )
        return None
    if rows is not None and any(len(c) != rows for c in value):
        found.append(
            f"simulation_artifacts.bag_info.{key}: every child must predict all {rows} test rows (one per y_test_idx)"
        )
        return None
    _check_children_finite(f"simulation_artifacts.bag_info.{key}", value, found)
    return value


def _is_prediction(value: Any) -> bool:
    import numpy as np

    return isinstance(value, np.ndarray) and value.dtype.kind in _NUMERIC and value.ndim in (1, 2)


def _is_positions(value: Any) -> bool:
    import numpy as np

    return isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu"


def _check_positions(val_idx, rows: int, found: list[str]) -> None:
    """Each child's validation positions fall within the ``rows`` validation rows."""
    for k, idx in enumerate(val_idx):
        if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= rows):
            found.append(
                f"simulation_artifacts.bag_info.val_idx_per_child[{k}] holds positions outside the "
                f"{rows} validation rows"
            )
            return


def _described(value: Any) -> str:
    """A value's kind and, for an array, its dtype and shape: what a message needs, never the data."""
    import numpy as np

    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {value.shape}"
    if isinstance(value, (list, tuple)):
        inner = {type(v).__name__ if not isinstance(v, np.ndarray) else f"{v.ndim}-D {v.dtype} array" for v in value}
        return f"a {type(value).__name__} of {len(value)}" + (f" ({', '.join(sorted(inner))})" if inner else "")
    return "nothing" if value is None else f"a {type(value).__name__}"
