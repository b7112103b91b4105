"""The checks of group TA306 over the raw index: every field and artifact a results.pkl recorded, judged in one pass.

The index (:mod:`tabarena_checks.raw.index`) holds what each file says, decoded and typed, and nothing
judged; every check of a result's fields lives here (and the artifacts' in
:mod:`tabarena_checks.rules.raw_artifacts`), so a check added or changed applies to every index, however
old it is. The checks are SQL over the index (vectorized: one scan judges every row check of a run of
10,000 files); where a message shows a value as Python does (``repr``), SQL selects the rows that fail and
Python words them, so Python runs only for the rows with a problem. Each problem is tagged with the name of
the check that found it, which is the name of the rule that reports it (:mod:`tabarena_checks.rules.raw_checks`,
TA320-TA389): the rules share the one pass (:func:`by_check`).
"""

from __future__ import annotations

import functools
import json
import sys
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from checks import io
from tabarena_checks.raw import index as index_mod, suite_tasks
from tabarena_checks.raw.index import RawIndex, schema
from tabarena_checks.raw.reader import RECOMPUTED_VAL, show
from tabarena_checks.rules import raw_artifacts


#: the check of what the reader could not decode (its messages are the index's ``decode_errors``)
DECODED = "result-fields-decoded"
#: the check of text that is not valid Unicode (the index's ``invalid_text``)
VALID_TEXT = "text-valid"


def problems(index: RawIndex) -> tuple[tuple[str, str], ...]:
    """``(path, problem)`` of every result of ``index``, sorted, whatever check found it (:func:`judged`)."""
    return tuple(sorted((path, message) for path, _, message in judged(index)))


def judged(index: RawIndex) -> tuple[tuple[str, str, str], ...]:
    """``(path, check, problem)`` of every result of ``index``, in one pass: what its file could not decode,
    its fields judged one by one (:data:`ROW_CHECKS`, :data:`WORDED_CHECKS`), its artifacts
    (:func:`_artifact_problems`), and how it compares with its task's or task split's first (see
    :data:`_SPLIT_DIFFERS`), with its method's first on the name prefix (:data:`_PREFIX_DIFFERS`), or with the
    TabArena-v0.1 task table (name, problem type, metric) or another task of its method on the task's name
    (:data:`_SUITE_DIFFERS`). ``check`` is the name of the rule that reports it
    (:mod:`tabarena_checks.rules.raw_checks`)."""
    found = index.query(_row_checks_sql())
    found += _worded_problems(index)
    found += _artifact_problems(index)
    for sql in (_SPLIT_DIFFERS, _PREFIX_DIFFERS, _SUITE_DIFFERS):
        found += index.query(sql)
    return tuple(found)


#: the index :func:`by_check` judged last (a weak reference: a run's index is not kept alive) and its problems by
#: check: the rules of one run, each asking for its own check's, share one pass
_last: list = []


def _by_check(index: RawIndex) -> dict[str, list[tuple[str, str]]]:
    if _last and _last[0]() is index:
        return _last[1]
    checks: dict[str, list[tuple[str, str]]] = {}
    for path, check, message in judged(index):
        checks.setdefault(check, []).append((path, message))
    _last[:] = [weakref.ref(index), checks]
    return checks


def by_check(index: RawIndex, check: str) -> tuple[tuple[str, str], ...]:
    """``(path, problem)`` of ``check``'s problems in ``index``, sorted; the pass (:func:`judged`) runs once for
    the index a run's rules ask about."""
    return tuple(sorted(_by_check(index).get(check, ())))


def unclaimed(index: RawIndex, names: frozenset[str]) -> tuple[tuple[str, str], ...]:
    """``(path, problem)`` of the problems in ``index`` whose check is none of ``names``, sorted: a check added
    here without its rule still blocks (the rule of :data:`DECODED` reports it)."""
    checks = _by_check(index)
    return tuple(sorted(p for name, found in checks.items() if name not in names for p in found))


@functools.cache
def code_digest() -> str:
    """``sha256:<hex>`` of the code :func:`problems` judges with: the index's (every module of
    :mod:`tabarena_checks.raw`), this module's and :mod:`tabarena_checks.rules.raw_artifacts`'. It keys what
    is kept of the problems (``checks inspect``'s memo), so a change of a check is never answered from it."""
    modules = (sys.modules[__name__], raw_artifacts)
    return io.sha256(b"\0".join([index_mod.code_digest().encode(), *(Path(m.__file__).read_bytes() for m in modules)]))


def row_problems(row: dict[str, Any]) -> list[str]:
    """The problems of one decoded row (:func:`tabarena_checks.raw.reader.decode_row`), judged as in an index of it."""
    import pyarrow as pa

    table = pa.Table.from_pylist([row], schema=schema()).drop_columns(["error"])
    return [message for _, message in problems(RawIndex(data_dir=Path("."), table=table))]


def _artifact_problems(index: RawIndex) -> list[tuple[str, str, str]]:
    """:func:`tabarena_checks.rules.raw_artifacts.problems` of every result with artifacts, each distinct
    (facts, problem type, metric) judged once; the row's framework and validation positions are put into
    the messages that need them (see :mod:`tabarena_checks.rules.raw_artifacts`)."""
    found = []
    groups = index.query(
        "SELECT artifact_facts, problem_type, metric, list(path), list(framework), list(val_position_bounds) "
        "FROM results WHERE artifact_facts IS NOT NULL GROUP BY ALL"
    )
    for facts, problem_type, metric, paths, frameworks, bounds in groups:
        messages = raw_artifacts.problems(json.loads(facts), problem_type, metric)
        if not messages:
            continue
        # one parse for the group's rows: the positions message is judged on every row of a bagged run
        bounds = json.loads(f"[{','.join('null' if b is None else b for b in bounds)}]")
        for path, framework, bound in zip(paths, frameworks, bounds):
            for check, message in messages:
                worded = raw_artifacts.for_row(message, framework, bound)
                if worded is not None:
                    found.append((path, check, worded))
    return found


#: the float columns, with the field each comes from
_FLOATS = {
    "metric_error": "metric_error",
    "metric_error_val": "metric_error_val",
    "time_train_s": "time_train_s",
    "time_infer_s": "time_infer_s",
    "num_gpus": "method_metadata.num_gpus",
    "disk_usage": "method_metadata.disk_usage",
}
#: fields no run can record below 0: errors (TabArena's are the distance to the metric's optimum), times, resources
NON_NEGATIVE = {**_FLOATS, "num_cpus": "method_metadata.num_cpus"}


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


#: name -> (the rows that fail, SQL, and the message, an SQL expression over the row): one scan judges them all
ROW_CHECKS: dict[str, tuple[str, str]] = {
    **{
        f"numbers-finite:{column}": (
            f"isnan({column}) OR isinf({column})",
            f"{_quoted(label)} || CASE WHEN isnan({column}) THEN ' is NaN' ELSE ' is infinite' END",
        )
        for column, label in _FLOATS.items()
    },
    # where the directory layout and the file disagree
    "task-dir-matches-tid": (
        "regexp_full_match(task_dir, '[0-9]+') AND tid IS NOT NULL AND TRY_CAST(task_dir AS HUGEINT) IS DISTINCT FROM tid",
        "'directory ''' || task_dir || ''' holds task ' || tid",
    ),
    "split-dir-named": (
        "split_dir IS NOT NULL AND dir_repeat IS NULL",
        "'split directory ''' || split_dir || ''' is not <repeat>_<fold>'",
    ),
    # the split directory names the split the file holds (no repeat is 0)
    "split-dir-matches": (
        "dir_repeat IS NOT NULL AND fold IS NOT NULL AND (dir_repeat <> coalesce(repeat, 0) OR dir_fold <> fold)",
        "'directory ''' || split_dir || ''' says repeat ' || dir_repeat || ' fold ' || dir_fold "
        "|| ' but the result says repeat ' || coalesce(repeat, 0) || ' fold ' || fold",
    ),
    "path-layout": ("config_dir IS NULL", "'path does not follow <config>/<task>/<repeat>_<fold>/results.pkl'"),
    # split_idx is n_folds * repeat + fold for some number of folds above fold: TabArena files a result's
    # predictions under it, so a wrong one would land on (and overwrite) another split's
    "split-idx-consistent": (
        "fold IS NOT NULL AND split_idx IS NOT NULL AND NOT CASE WHEN coalesce(repeat, 0) = 0 THEN split_idx = fold "
        "ELSE (CAST(split_idx AS HUGEINT) - fold) % repeat = 0 AND (CAST(split_idx AS HUGEINT) - fold) // repeat > fold "
        "END",
        "'task_metadata.split_idx is ' || split_idx || ', which no number of folds gives for repeat ' "
        "|| coalesce(repeat, 0) || ', fold ' || fold || ' (split_idx = n_folds * repeat + fold): correct it'",
    ),
    # TabArena places a result by its split_idx and its processing fails without it
    "split-idx-present": (
        "split_idx IS NULL AND NOT is_legacy_layout AND fold IS NOT NULL",
        "'task_metadata.split_idx is missing; add split_idx = n_folds * repeat + fold (repeat ' "
        "|| coalesce(repeat, 0) || ', fold ' || fold || ') to task_metadata'",
    ),
    # a config's model_type and model_hyperparameters are its entry of configs_hyperparameters.json: TabArena's
    # renaming stops without a model type, its loader refuses hyperparameters that are no dict, and its
    # simulation stops when one config has no entry
    "model-type-present": (
        "has_sim_artifacts AND NOT has_model_type_key",
        "'method_metadata.model_type is missing: processing renames the config''s model type from it; record "
        "the model''s ag_key'",
    ),
    "model-hyperparameters-present": (
        "has_sim_artifacts AND model_hyperparameters_kind = 'missing'",
        "'method_metadata.model_hyperparameters is missing: processing takes the config''s hyperparameters and "
        "model type from it; record the hyperparameters the config was fit with'",
    ),
    "model-hyperparameters-dict": (
        "has_sim_artifacts AND model_hyperparameters_kind = 'other'",
        "'method_metadata.model_hyperparameters must be a dict of the config''s hyperparameters (got ' "
        "|| model_hyperparameters_shown || '): processing writes it as the config''s entry of "
        "configs_hyperparameters.json, which TabArena refuses to load otherwise'",
    ),
    # a single use_child_oof child records training-row labels, which TabArena's loader maps to validation
    # positions through y_val_idx; it stops on a label y_val_idx lacks
    "val-labels-in-row-ids": (
        "val_labels_missing",
        "'simulation_artifacts.bag_info.val_idx_per_child[0] of the single child holds row labels missing from "
        "y_val_idx: TabArena''s loader maps them to validation rows through it and stops on a missing one (rerun "
        "the config, or remove the file)'",
    ),
    # TabArena takes float() of metric_error_val
    "metric-error-val-not-none": (
        "metric_error_val_state = 'none'",
        "'metric_error_val is None: record the validation error, or remove the key to have it recomputed from "
        "the stored validation predictions'",
    ),
}


def check_name(key: str) -> str:
    """The check (the name of its rule) a :data:`ROW_CHECKS` or :data:`WORDED_CHECKS` key belongs to: the keys of
    a check made for several fields name the field after a colon."""
    return key.split(":", 1)[0]


def _row_checks_sql() -> str:
    """One scan: per row, what it could not decode, its text that is not valid Unicode (the column holds
    None), and the message of every :data:`ROW_CHECKS` it fails; ``(path, check, message)`` per problem."""
    checked = ", ".join(
        f"CASE WHEN {where} THEN {{'check': {_quoted(check_name(key))}, 'message': {message}}} END"
        for key, (where, message) in ROW_CHECKS.items()
    )
    return f"""
        SELECT path, f['check'], f['message'] FROM (
            SELECT path, unnest(found) AS f FROM (
                SELECT path, list_concat(
                    list_transform(coalesce(decode_errors, []), lambda e: {{'check': {_quoted(DECODED)}, 'message': e}}),
                    list_transform(coalesce(invalid_text, []), lambda t: {{'check': {_quoted(VALID_TEXT)},
                                   'message': t.field || ' is not valid text (got ' || t.shown
                                   || ', which holds a lone surrogate)'}}),
                    list_filter([{checked}], lambda m: m.message IS NOT NULL)) AS found
                FROM results)
            WHERE len(found) > 0)
    """


def _framework_differs(row: dict) -> str:
    return f"directory '{row['config_dir']}' holds framework {show(row['framework'])}"


def _name_prefix(row: dict) -> str:
    """A config is renamed to the method plus what follows its name prefix in the framework (TabArena's
    rename): without a name prefix that starts the framework, every config of the run gets one name."""
    prefix, framework = row["name_prefix"], row["framework"]
    if not row["has_method_metadata"]:
        return (
            "method_metadata is missing: processing renames a config to the method plus what "
            "follows method_metadata.name_prefix in its framework, so this config would lose its "
            "name; add method_metadata (as TabArena's runner records it)"
        )
    if not prefix:
        return (
            f"method_metadata.name_prefix is {'missing' if prefix is None else 'empty'}: "
            "processing renames a config to the method plus "
            "what follows its name prefix in the framework; record the prefix the config was named with"
        )
    return (
        f"method_metadata.name_prefix {show(prefix)} does not start the framework "
        f"{framework!r}: processing renames a config by what follows its name prefix; "
        "record the prefix the config was named with"
    )


def _negative(label: str, column: str) -> Callable[[dict], str]:
    """A negative error, time or resource count would rank or plot as a real figure."""

    def word(row: dict) -> str:
        return (
            f"{label} is negative (got {row[column]!r}); errors, times and resources are "
            "never below 0: record the value the run measured"
        )

    return word


def _val_error_missing(row: dict) -> str:
    return (
        f"metric_error_val missing: TabArena 0.1.0 recomputes it from the stored validation predictions with "
        f"AutoGluon's {row['metric']!r}, which the native engine reproduces for {', '.join(RECOMPUTED_VAL)} only; "
        "add metric_error_val (the validation error of these predictions) to the result"
    )


_RECOMPUTED_SQL = ", ".join(_quoted(m) for m in RECOMPUTED_VAL)
#: name -> (the rows that fail, SQL; the message, worded in Python): checks whose message shows a value as
#: Python does (``repr``)
WORDED_CHECKS: dict[str, tuple[str, Callable[[dict], str]]] = {
    "config-dir-names-framework": (
        "config_dir <> '' AND framework <> '' AND config_dir <> framework",
        _framework_differs,
    ),
    # baselines (and legacy results) keep the method's name
    "name-prefix-starts-framework": (
        "has_sim_artifacts AND NOT is_legacy_layout AND framework <> '' AND (NOT has_method_metadata "
        "OR coalesce(name_prefix, '') = '' OR NOT starts_with(framework, name_prefix))",
        _name_prefix,
    ),
    **{
        f"numbers-non-negative:{column}": (f"{column} < 0", _negative(label, column))
        for column, label in NON_NEGATIVE.items()
    },
    "metric-error-val-recomputable": (
        f"has_sim_artifacts AND metric_error_val_state = 'missing' AND coalesce(metric NOT IN ({_RECOMPUTED_SQL}), true)",
        _val_error_missing,
    ),
}
#: the columns the worded messages read
_WORDED_COLUMNS = ("path", "config_dir", "framework", "name_prefix", "has_method_metadata", "metric", *NON_NEGATIVE)


def _worded_problems(index: RawIndex) -> list[tuple[str, str, str]]:
    """:data:`WORDED_CHECKS` in one query: the rows that fail any, with a flag per check."""
    checks = list(WORDED_CHECKS.values())
    flags = ", ".join(f"coalesce({where}, false) AS failed_{i}" for i, (where, _) in enumerate(checks))
    rows = index.records(
        f"SELECT * FROM (SELECT {', '.join(_WORDED_COLUMNS)}, {flags} FROM results) "
        f"WHERE {' OR '.join(f'failed_{i}' for i in range(len(checks)))}"
    )
    names = [check_name(key) for key in WORDED_CHECKS]
    return [
        (row["path"], names[i], word(row)) for row in rows for i, (_, word) in enumerate(checks) if row[f"failed_{i}"]
    ]


#: processing renames every config of a method by what follows one name prefix in its framework
_PREFIX_DIFFERS = """
    WITH configs AS (
        SELECT path, name_prefix, first_value(path) OVER w AS first, first_value(name_prefix) OVER w AS first_prefix
        FROM results WHERE has_sim_artifacts AND name_prefix <> ''
        WINDOW w AS (PARTITION BY method_prefix ORDER BY path))
    SELECT path, 'name-prefix-shared', 'method_metadata.name_prefix is ''' || name_prefix || ''', but ' || first || ' of the same method '
           || 'says ''' || first_prefix || '''; processing renames every config of a method by what follows one '
           || 'name prefix: record the prefix the method''s configs were named with' FROM configs
    WHERE name_prefix <> first_prefix
"""


#: TabArena files a task's results and predictions under its dataset name and, for a task of its bundled
#: TabArena-v0.1 table (:mod:`~tabarena_checks.raw.suite_tasks`), looks them up by the name the table gives: a
#: known task id under another name (or a known name under another id) stops its processing with a KeyError,
#: and two tasks of one method under one name would be mixed (native's simulation stopped on it). The table's
#: problem type and metric are the ones every method is compared in on the task: TabArena keeps them and
#: publishes a result scored otherwise beside the rest. Only results that agree with their task's first on a
#: field are judged on it (the others are problems of :data:`_SPLIT_DIFFERS`), and a result the table judges
#: by its name is not compared with the other tasks.
_SUITE_DIFFERS = f"""
    WITH known(tid, name, problem_type, metric) AS (VALUES {suite_tasks.values_sql()}),
    tasks AS (
        SELECT path, tid, dataset, problem_type, metric, method_prefix, first_value(dataset) OVER w AS task_name,
               first_value(problem_type) OVER w AS task_problem_type, first_value(metric) OVER w AS task_metric
        FROM results WHERE tid IS NOT NULL AND dataset IS NOT NULL
        WINDOW w AS (PARTITION BY method_prefix, tid ORDER BY path)),
    judged AS (
        SELECT r.*, by_tid.name AS table_name, by_tid.problem_type AS table_problem_type,
               by_tid.metric AS table_metric, by_name.tid AS table_tid,
               r.dataset = r.task_name AND coalesce(by_tid.name <> r.dataset, false) AS renamed,
               r.dataset = r.task_name AND by_tid.name IS NULL AND coalesce(by_name.tid <> r.tid, false) AS moved,
               coalesce(r.problem_type = r.task_problem_type AND by_tid.problem_type <> r.problem_type, false)
                   AS retyped,
               coalesce(r.metric = r.task_metric AND by_tid.metric <> r.metric, false) AS rescored
        FROM tasks r LEFT JOIN known by_tid ON r.tid = by_tid.tid LEFT JOIN known by_name ON r.dataset = by_name.name),
    shared AS (
        SELECT *, first_value(path) OVER w AS first, first_value(tid) OVER w AS first_tid
        FROM judged WHERE dataset = task_name AND NOT renamed AND NOT moved
        WINDOW w AS (PARTITION BY method_prefix, dataset ORDER BY path))
    SELECT path, 'suite-task-name', 'task_metadata.name is ''' || dataset || ''', but TabArena-v0.1 names task ' || tid || ' '''
           || table_name || '''; TabArena looks the task''s results up by that name and stops on any other: record '
           || 'task_metadata.name ''' || table_name || ''' (or the tid of the task these results are for)'
    FROM judged WHERE renamed
    UNION ALL
    SELECT path, 'suite-task-tid', 'task_metadata.tid is ' || tid || ', but ''' || dataset || ''' is TabArena-v0.1''s task ' || table_tid
           || '; TabArena would fetch task ' || tid || ' from OpenML and not find these results under its name: '
           || 'record task_metadata.tid ' || table_tid || ' (or the name of the dataset these results are for)'
    FROM judged WHERE moved
    UNION ALL
    SELECT path, 'suite-problem-type', 'problem_type is ''' || problem_type || ''', but TabArena-v0.1''s task ' || tid || ' (' || table_name
           || ') is ''' || table_problem_type || ''', scored with ''' || table_metric || '''; every method on the '
           || 'task is compared in those, and TabArena would publish this result beside theirs: rerun the task as '
           || 'the suite defines it (or correct problem_type)'
    FROM judged WHERE retyped
    UNION ALL
    SELECT path, 'suite-metric', 'metric is ''' || metric || ''', but TabArena-v0.1 scores task ' || tid || ' (' || table_name
           || ') with ''' || table_metric || '''; every method''s metric_error on the task is compared with the '
           || 'others'', and TabArena would publish this one beside theirs: rerun scored with ''' || table_metric
           || ''' (or correct metric)'
    FROM judged WHERE rescored AND NOT retyped
    UNION ALL
    SELECT path, 'task-name-unique', 'task_metadata.name is ''' || dataset || ''' for task ' || tid || ', but ' || first || ' of the same '
           || 'method names task ' || first_tid || ' so; a task''s results and predictions are filed under its name, '
           || 'so the two tasks would be mixed: give each task its own task_metadata.name'
    FROM shared WHERE tid <> first_tid
"""

#: what every result of a task must share, with its check and why: TabArena takes a dataset's results together
_TASK_SHARES = {
    "dataset": (
        "task-shares-name",
        "task_metadata.name",
        "TabArena looks the task up by that name and files its predictions under it",
    ),
    "metric": (
        "task-shares-metric",
        "metric",
        "TabArena keeps one metric per dataset, and the configs of a split are ensembled on it",
    ),
    "problem_type": ("task-shares-problem-type", "problem_type", "TabArena keeps one problem type per dataset"),
}
#: what every config of a task split must share, with its check and why: processing takes a split's configs together
_SPLIT_SHARES = {
    "split_idx": ("split-shares-split-idx", "task_metadata.split_idx", "its predictions are filed under it"),
}


def _shared(scope: str, table: str, column: str, check: str, label: str, why: str) -> str:
    return (
        f"SELECT path, '{check}', '{label} is ''' || {column} || ''', but ' || first || ' of the same {scope} says ''' "
        f"|| first_{column} || '''; every result of a {scope} must have the same {label} ({why}): correct "
        f"{label}' FROM {table} WHERE {column} <> first_{column}"
    )


#: processing stacks a task split's configs' predictions, scores them against the labels of the first (in path
#: order) and files the split under the dataset name and split_idx it reads from them, so two splits of a task
#: under one split_idx would overwrite each other; TabArena keeps one name, metric and problem type per task
_SPLIT_DIFFERS = f"""
    WITH split AS (
        SELECT path, {", ".join(_SPLIT_SHARES)}, val_rows, test_rows, labels_digest, method_prefix, tid,
               coalesce(repeat, 0) AS r, fold
        FROM results WHERE has_sim_artifacts AND tid IS NOT NULL AND fold IS NOT NULL),
    named AS (
        SELECT *, first_value(path) OVER w AS first,
               {", ".join(f"first_value({c}) OVER w AS first_{c}" for c in _SPLIT_SHARES)}
        FROM split WINDOW w AS (PARTITION BY method_prefix, tid, r, fold ORDER BY path)),
    tasked AS (
        SELECT path, {", ".join(_TASK_SHARES)}, first_value(path) OVER w AS first,
               {", ".join(f"first_value({c}) OVER w AS first_{c}" for c in _TASK_SHARES)}
        FROM results WHERE tid IS NOT NULL WINDOW w AS (PARTITION BY method_prefix, tid ORDER BY path)),
    sized AS (  -- a file without labels is a problem of its own (rules.raw_artifacts) and is not compared
        SELECT *, first_value(path) OVER w AS first, first_value(val_rows) OVER w AS first_val,
               first_value(test_rows) OVER w AS first_test, first_value(labels_digest) OVER w AS first_labels
        FROM split WHERE val_rows IS NOT NULL AND test_rows IS NOT NULL
        WINDOW w AS (PARTITION BY method_prefix, tid, r, fold ORDER BY path)),
    filed AS (
        SELECT *, first_value(path) OVER w AS first, first_value(r) OVER w AS first_r,
               first_value(fold) OVER w AS first_fold
        FROM split WHERE split_idx IS NOT NULL WINDOW w AS (PARTITION BY method_prefix, tid, split_idx ORDER BY r, fold, path))
    SELECT path, 'split-idx-unique', 'task_metadata.split_idx is ' || split_idx || ' for repeat ' || r || ', fold ' || fold || ', but '
           || first || ' of the same task is repeat ' || first_r || ', fold ' || first_fold || ' under the same '
           || 'split_idx; its predictions would overwrite the other split''s: correct task_metadata.split_idx' FROM filed
    WHERE r <> first_r OR fold <> first_fold
    UNION ALL
    {" UNION ALL ".join(_shared("task split", "named", c, *label_why) for c, label_why in _SPLIT_SHARES.items())}
    UNION ALL
    {" UNION ALL ".join(_shared("task", "tasked", c, *label_why) for c, label_why in _TASK_SHARES.items())}
    UNION ALL
    SELECT path, 'split-rows-agree', 'simulation_artifacts holds ' || val_rows || ' validation and ' || test_rows || ' test labels, but '
           || first || ' of the same task split holds ' || first_val || ' and ' || first_test || '; every config '
           || 'of a task split must predict the same rows (rerun this config on that split, or remove the file)'
    FROM sized WHERE val_rows <> first_val OR test_rows <> first_test
    UNION ALL
    SELECT path, 'split-labels-agree', 'simulation_artifacts holds other labels than ' || first || ' of the same task split (y_val, '
           || 'y_test, their row ids y_val_idx and y_test_idx, or the label name differ); processing scores every '
           || 'config of a task split against the first one''s labels (rerun this config on that split, or remove '
           || 'the file)'
    FROM sized WHERE val_rows = first_val AND test_rows = first_test AND labels_digest <> first_labels
"""
