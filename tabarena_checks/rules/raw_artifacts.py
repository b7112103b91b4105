"""TA306's checks of a result's simulation artifacts, judged from the facts the index recorded.

``checks run process`` turns every config result's artifacts into aligned predictions and label
files (engine.cache_predictions) and scores ensembles of them (engine.cache_hpo). A file whose
artifacts lack an array, hold a number where an array belongs, or arrays whose lengths disagree
would stop that processing halfway, as it stops TabArena's. The index holds what each file's
artifacts are (:func:`tabarena_checks.raw.artifacts.facts`: kinds, shapes, bounds, infinite values);
:func:`problems` says, when the gate runs, which of them processing cannot use.

Configs of one task split share their artifacts' shapes, so :mod:`tabarena_checks.rules.raw_fields`
judges each distinct facts value once, then words each message for each row (:func:`for_row`): one naming
the row's framework holds :data:`FRAMEWORK`; the check of the children's validation positions, which
differ from config to config (the index keeps them apart, ``val_position_bounds``), is a :data:`POSITIONS`
message holding the number of rows they must fall within.
"""

from __future__ import annotations

from typing import Any

from tabarena_checks.raw.metric_names import same_metric
from tabarena_checks.raw.reader import show

#: stands for ``repr(framework)`` of the row in a message (see the module's docstring)
FRAMEWORK = "\x00framework\x00"
#: starts a message that the row's validation positions (``val_position_bounds``) fall within the rows it names
POSITIONS = "\x00positions\x00"
#: the dtype kinds of numbers: bool, signed and unsigned ints, floats
_NUMERIC = "biuf"
#: labels of a classification task: integer class numbers (bool for binary)
_CLASS_LABELS = "biu"
#: the two parts of a split processing writes
_PARTS = ("val", "test")
#: which of the result's fields each repeated artifact field (:data:`tabarena_checks.raw.reader.REPEATED`) must
#: equal: TabArena 0.1.0 asserts each equal to it when present
_REPEATS = {
    "eval_metric": "metric",
    "metric": "metric",
    "problem_type": "problem_type",
    "problem_type_transform": "problem_type",
}


def problems(facts: dict, problem_type: Any, metric: Any) -> list[str]:
    """Each defect of the artifacts ``facts`` describe that would stop processing, as a sentence.

    ``problem_type`` and ``metric`` are the result's (either may be None when the row already has a
    decode error for it).
    """
    found: list[str] = []
    _check_label_name(facts["label"], found)
    parts = facts["parts"]
    preds = {part: _prediction(parts[part]["pred"], part, found) for part in _PARTS}
    labels = {part: _vector(parts[part]["y"], f"y_{part}", found) for part in _PARTS}
    _check_parts(preds, labels, problem_type, found)
    _check_class_order(facts["order"], preds, found)
    ids = {part: _ids(parts[part]["ids"], f"y_{part}_idx", labels[part], found) for part in _PARTS}
    bag = facts["bag"]
    if bag is not None:
        _check_bag(bag, preds["val"], problem_type, ids, found)
        _check_loaded(bag, parts, found)
        _check_test_rebuild(bag, preds["test"], found)
    elif facts["bag_type"] is not None:
        found.append(f"simulation_artifacts.bag_info is not a dict (got {facts['bag_type']})")
    _check_repeated_names(facts.get("repeated", {}), {"metric": metric, "problem_type": problem_type}, found)
    return found


def for_row(message: str, framework: Any, bounds: list | None) -> str | None:
    """``message`` (from :func:`problems`) for one row: its ``framework``, or the check of its validation
    positions ``bounds`` (the row's ``val_position_bounds`` parsed, ``[size, min, max]`` per child), which is
    None when they fall within."""
    if message.startswith(POSITIONS):
        return _positions_problem(bounds, int(message[len(POSITIONS) :]))
    return message.replace(FRAMEWORK, repr(framework))


def _described(value: dict) -> str:
    """What a value is, as :func:`tabarena_checks.raw.artifacts.facts` recorded it (an array by dtype and shape)."""
    if "described" in value:
        return value["described"]
    return f"a {value['dtype']} array of shape {_shape(value['shape'])}"


def _rows(array: dict) -> int:
    return array["shape"][0]


def _ndim(array: dict) -> int:
    return len(array["shape"])


def _shape(shape: list[int]) -> tuple[int, ...]:
    return tuple(shape)


def _check_label_name(label: dict | None, found: list[str]) -> None:
    """``label`` names the label column of the split's label files."""
    if label is None:
        found.append(
            "simulation_artifacts.label is missing: it names the label column of the split's label files "
            "(TabArena stops without it); record the task's target column name"
        )
    elif not label["name"]:
        found.append(
            f"simulation_artifacts.label must name the label column, a string or an integer (got {label['described']})"
        )


def _check_class_order(order: dict | None, preds: dict, found: list[str]) -> None:
    """``ordered_class_labels_transformed`` (optional) names the predictions' columns: one class per column,
    two for a 1-D prediction (its positive class is the second)."""
    pred = preds["val"] if preds["val"] is not None else preds["test"]
    if order is None or pred is None:
        return
    want = 2 if _ndim(pred) == 1 else pred["shape"][1]
    if order["len"] != want:
        found.append(
            f"simulation_artifacts.ordered_class_labels_transformed must list {want} classes, one per "
            f"column of the predictions (two for a 1-D prediction), or be None (got {order['described']})"
        )


def _check_parts(preds: dict, labels: dict, problem_type: Any, found: list[str]) -> None:
    """Each part's prediction and labels agree in rows; classification labels fit the predictions' classes."""
    for part in _PARTS:
        pred, y = preds[part], labels[part]
        if pred is not None and y is not None and _rows(pred) != _rows(y):
            found.append(
                f"simulation_artifacts: the {part} prediction has {_rows(pred)} rows but y_{part} has {_rows(y)}"
            )
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


def _prediction(pred: dict, part: str, found: list[str]) -> dict | None:
    """The ``part`` prediction processing picks (``pred_proba_dict_<part>[framework]``, else ``pred_<part>``)
    when it is a usable array; None (and a problem, unless another check names it) otherwise."""
    source = pred["source"]
    if source == "dict":
        if not pred["has_framework"]:
            return None  # named by the loader's check (_check_loaded)
        label = f"simulation_artifacts.pred_proba_dict_{part}[{FRAMEWORK}]"
    elif source == "other":
        found.append(f"simulation_artifacts.pred_proba_dict_{part} is not a dict (got {pred['type']})")
        return None
    elif source == "missing":
        found.append(
            f"simulation_artifacts has no {part} prediction (pred_proba_dict_{part} or pred_{part}); "
            "processing needs one for every config result"
        )
        return None
    else:
        label = f"simulation_artifacts.pred_{part}"
    if not _is_prediction(pred):
        found.append(f"{label} must be a 1-D or 2-D numeric array (got {_described(pred)})")
        return None
    _check_finite(label, pred["inf"], found)
    return pred


def _check_finite(label: str, infinite: int, found: list[str]) -> None:
    """A prediction holds no infinity: the errors and ensembles scored from it would be infinite or NaN."""
    if infinite:
        found.append(
            f"{label} holds {infinite} infinite value{'s' if infinite > 1 else ''}: a model predicts "
            "finite numbers, and errors scored from it would be infinite or NaN; re-run the config"
        )


def _class_count(pred: dict, part: str, problem_type: str, found: list[str]) -> int | None:
    """The classes a classification prediction has columns for (None for a binary 1-D one)."""
    shape = _shape(pred["shape"])
    if len(shape) == 1:
        if problem_type == "multiclass":
            found.append(
                f"simulation_artifacts: the multiclass {part} prediction must have a column per class (got shape {shape})"
            )
        return None
    if shape[1] < 2:
        found.append(f"simulation_artifacts: the {part} prediction must have a column per class (got shape {shape})")
        return None
    return int(shape[1])


def _vector(y: dict | None, key: str, found: list[str]) -> dict | None:
    """The labels ``y`` when they are a 1-D array of numbers; None and a problem otherwise."""
    if y is None:
        found.append(f"simulation_artifacts.{key} is missing; processing writes it as the split's labels")
        return None
    if y.get("kind") is None or len(y["shape"]) != 1 or y["kind"] not in _NUMERIC:
        found.append(f"simulation_artifacts.{key} must be a 1-D array of numbers (got {_described(y)})")
        return None
    return y


def _check_labels(y: dict | None, key: str, classes: int | None, found: list[str]) -> None:
    """Classification labels are class numbers 0 .. classes - 1, as AutoGluon stores them."""
    if y is None:
        return
    if y["kind"] not in _CLASS_LABELS:
        found.append(
            f"simulation_artifacts.{key} must hold class numbers (integers), as AutoGluon stores them "
            f"(got {y['dtype']} values)"
        )
        return
    if classes is not None and _rows(y) and (y["min"] < 0 or y["max"] >= classes):
        found.append(
            f"simulation_artifacts.{key} holds class {y['max'] if y['max'] >= classes else y['min']} "
            f"but the predictions have {classes} classes (0 .. {classes - 1})"
        )


def _ids(ids: dict | None, key: str, labels: dict | None, found: list[str]) -> dict | None:
    """The row ids (optional): a 1-D array as long as its ``labels``."""
    if ids is None:
        return None
    if ids.get("kind") is None or len(ids["shape"]) != 1:
        found.append(f"simulation_artifacts.{key} must be a 1-D array of row ids (got {_described(ids)})")
        return None
    if labels is not None and _rows(ids) != _rows(labels):
        found.append(f"simulation_artifacts.{key} has {_rows(ids)} row ids but its labels have {_rows(labels)} rows")
        return None
    return ids


def _check_bag(bag: dict, pred_val: dict | None, problem_type: Any, ids: dict, found: list[str]) -> None:
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
    positions = bag["position_sizes"]
    if positions is None:
        found.append(
            "simulation_artifacts.bag_info.val_idx_per_child must be a non-empty list of 1-D integer "
            f"arrays (got {bag['positions_described']})"
        )
        return
    test_key = bag["test_key"]
    test_rows = _rows(ids["test"])
    per_child_test = _children(bag["test"], test_key, test_rows, found)
    usable, width = _val_width(bag, positions, pred_val, problem_type, _rows(ids["val"]), found)
    want = () if width is None else (width,)
    if usable and per_child_test is not None and _shape(per_child_test[0][1:]) != want:
        found.append(
            f"simulation_artifacts.bag_info.{test_key}: each child's test prediction has shape "
            f"{_shape(per_child_test[0])}, where the validation predictions make it {(test_rows, *want)}"
        )


def _val_width(
    bag: dict, positions: list, pred_val: dict | None, problem_type: Any, rows: int, found: list[str]
) -> tuple[bool, int | None]:
    """Whether the children's validation predictions can be rebuilt, and their columns (None: one).

    Without ``pred_val_per_child`` each child's rows are cut from the stored prediction; a single
    child may record row ids instead (use_child_oof), which are looked up in y_val_idx.
    """
    if bag["val"] is None:
        if pred_val is None:
            return False, None
        if len(positions) > 1:
            _check_positions(_rows(pred_val), found)
        return True, None if _ndim(pred_val) == 1 or problem_type == "binary" else pred_val["shape"][1]
    shapes = _children(bag["val"], "pred_val_per_child", None, found)
    if shapes is None:
        return False, None
    if len(shapes) != len(positions) or any(s[0] != size for s, size in zip(shapes, positions)):
        found.append(
            "simulation_artifacts.bag_info: pred_val_per_child must have one prediction per child, "
            "as many rows as that child's val_idx_per_child"
        )
        return False, None
    _check_positions(rows, found)
    return True, None if len(shapes[0]) == 1 else shapes[0][1]


def _children(children: dict, key: str, rows: int | None, found: list[str]) -> list | None:
    """The children's shapes when they are a non-empty list of numeric arrays with the same columns (and
    ``rows`` rows each when given); None and a problem otherwise."""
    if not children["ok"]:
        found.append(
            f"simulation_artifacts.bag_info.{key} must be a non-empty list of 1-D or 2-D numeric arrays "
            f"(got {children['described']})"
        )
        return None
    shapes = children["shapes"]
    if any(s[1:] != shapes[0][1:] for s in shapes):
        found.append(
            f"simulation_artifacts.bag_info.{key}: the children's predictions differ in columns "
            f"({', '.join(sorted({str(_shape(s)) for s in shapes}))})"
        )
        return None
    if rows is not None and any(s[0] != rows for s in shapes):
        found.append(
            f"simulation_artifacts.bag_info.{key}: every child must predict all {rows} test rows (one per y_test_idx)"
        )
        return None
    for k, infinite in enumerate(children["inf"]):
        _check_finite(f"simulation_artifacts.bag_info.{key}[{k}]", infinite, found)
    return shapes


def _check_positions(rows: int, found: list[str]) -> None:
    """Each child's validation positions fall within the ``rows`` validation rows: judged per row
    (:func:`for_row`), since the positions differ from config to config."""
    found.append(f"{POSITIONS}{rows}")


def _positions_problem(bounds: list, rows: int) -> str | None:
    """The first child whose validation positions (``[size, min, max]``) fall outside the ``rows`` rows."""
    for k, (size, low, high) in enumerate(bounds):
        if size and (low < 0 or high >= rows):
            return (
                f"simulation_artifacts.bag_info.val_idx_per_child[{k}] holds positions outside the "
                f"{rows} validation rows"
            )
    return None


def _check_loaded(bag: dict, parts: dict, found: list[str]) -> None:
    """What TabArena's loader reads to rebuild the stored predictions (TA305's measurement): per-child test
    predictions, and a prediction dict keyed by the framework (a single entry is taken whatever its key)."""
    if not bag["fidelity_children"]:
        found.append("simulation_artifacts.bag_info has no per-child test predictions")
        return
    for part in ("test", "val"):
        pred = parts[part]["pred"]
        if pred["source"] != "dict" or pred["has_framework"]:
            continue
        key = f"simulation_artifacts.pred_proba_dict_{part}"
        if pred["entries"] == 1:
            found.append(f"{key} is keyed {pred['first_key']}, not the framework {FRAMEWORK}")
        else:
            found.append(f"{key} has no entry for framework {FRAMEWORK}")


def _check_test_rebuild(bag: dict, pred_test: dict | None, found: list[str]) -> None:
    """The children's test predictions have the stored test prediction's shape: TabArena's loader rebuilds
    that prediction as their mean (TA305 measures how close it comes), which another shape cannot be."""
    children = bag["test"]
    if pred_test is None or not children["ok"]:
        return
    shapes = {tuple(shape) for shape in children["shapes"]}
    if len(shapes) == 1 and (shape := shapes.pop()) != tuple(pred_test["shape"]):
        found.append(
            f"simulation_artifacts.bag_info.{bag['test_key']}: each child's test prediction has shape {shape}, "
            f"but the stored test prediction has shape {_shape(pred_test['shape'])}; the loader rebuilds it as "
            "the children's mean (rerun the config, or remove the file)"
        )


def _check_repeated_names(repeated: dict, result: dict, found: list[str]) -> None:
    """The metric and problem type the artifacts repeat are the result's (metric names compared by the AutoGluon
    scorer they name, :mod:`tabarena_checks.raw.metric_names`: AutoGluon writes its scorer's own name beside
    the task's alias): artifacts scored or fitted under another are not this result's.
    ``repeated`` maps each key present to ``[its text, None]``, or ``[None, the value shown]`` when it is no
    valid text."""
    for key, (text, shown) in repeated.items():
        field = _REPEATS[key]  # the reader records raw.reader.REPEATED: each is judged here
        if result[field] is None:
            continue
        shown = show(text) if shown is None else shown
        agrees = text == result[field] or (field == "metric" and text is not None and same_metric(text, result[field]))
        if not agrees:
            found.append(
                f"simulation_artifacts.{key} is {shown} but the result's {field} is {result[field]!r}: the "
                f"artifacts are another task's or metric's; correct or remove {key}"
            )


def _is_prediction(array: dict) -> bool:
    return array.get("kind") is not None and array["kind"] in _NUMERIC and _ndim(array) in (1, 2)
