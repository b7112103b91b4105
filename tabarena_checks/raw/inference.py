"""What the raw data says about the method, answered with SQL over the index.

These are the values TabArena infers from a run (``_infer_from_raw``) and compares with
the declared MethodMetadata, plus the coverage and fidelity facts the data-quality rules
need. Everything is computed once per index; rules read the frozen :class:`Inference`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from tabarena_checks.raw import suite_tasks
from tabarena_checks.raw.index import RawIndex


@attrs.frozen
class FidelityIssue:
    """A result whose stored prediction differs from the one rebuilt from its bag children."""

    dataset: str | None
    split_idx: int | None
    framework: str | None
    #: "test" (stored vs mean of children, rtol 5e-4) or "val" (rebuilt out-of-fold, rtol 1e-5)
    kind: str
    #: percentage of prediction values that were not close
    pct: float
    path: str


@attrs.frozen
class Inference:
    """The facts inferred from one method's raw results (see docs/tabarena-data.md for each field)."""

    methods: tuple[str, ...]
    #: "config" (simulation artifacts), "baseline" (none), "mixed" (both), None (no readable result)
    method_type: str | None
    ag_key: str | None
    ag_keys: tuple[str, ...]
    #: "gpu" iff any result records num_gpus > 0 (only configs record it)
    compute: str
    is_bag: bool
    can_hpo: bool
    frameworks: tuple[str, ...]
    raw_config_default: str | None
    name_prefix: str | None
    name_prefixes: tuple[str, ...]
    inferred_method: str | None
    validation_protocol: str | None
    validation_protocol_keys: tuple[str, ...]
    validation_flavours: tuple[str, ...]
    #: results without a validation_protocol record (legacy)
    n_without_protocol: int
    fold_histogram: tuple[tuple[str, int], ...]
    n_results: int
    n_tasks: int
    datasets: tuple[str, ...]
    #: (dataset, tid, problem_type, metric) per dataset, as its first result (by path) records them
    tasks: tuple[tuple[str, int | None, str | None, str | None], ...]
    splits: tuple[tuple[int, int], ...]
    problem_types: tuple[str, ...]
    metrics: tuple[str, ...]
    results_per_config: Mapping[str, int]
    #: (config, task, "<repeat>_<fold>") cells of configs x tasks x splits with no readable result
    missing_cells: tuple[tuple[str, str, str], ...]
    #: (config, task, "<repeat>_<fold>", paths) cells with more than one result
    duplicates: tuple[tuple[str, str, str, tuple[str, ...]], ...]
    fidelity: tuple[FidelityIssue, ...]
    #: (path, message) per problem found while decoding a file
    problems: tuple[tuple[str, str], ...]
    #: (path, message) per global outside the reader's allow-list found in a field nothing reads (read as None)
    unread: tuple[tuple[str, str], ...]
    #: (path, reason) per file that could not be read at all
    errors: tuple[tuple[str, str], ...]

    def renamed_framework(self, framework: str, method: str) -> str:
        """TabArena's rename when processing: configs swap the raw name prefix for ``method``; baselines become ``method``."""
        if self.method_type == "baseline":
            return method
        prefix = self.name_prefix
        if prefix and framework.startswith(prefix):
            return method + framework[len(prefix) :]
        return framework

    def config_default_for(self, method: str) -> str | None:
        """The post-rename ``config_default`` (``TA-Dummy_c1_default_BAG_L1`` -> ``Dummy_c1_default_BAG_L1``)."""
        if self.raw_config_default is None:
            return None
        return self.renamed_framework(self.raw_config_default, method)


def _single(values: tuple) -> Any:
    return values[0] if len(values) == 1 else None


#: the result cell a row fills: framework, task and split, falling back to what the directories say
_CELLS = """
    SELECT coalesce(framework, config_dir) AS config,
           coalesce(CAST(tid AS VARCHAR), task_dir) AS task,
           coalesce(repeat, dir_repeat) AS rep, coalesce(fold, dir_fold) AS fld, path
    FROM results
"""
#: the planned grid, as CTEs over ``cell``: configs (c), each task's repeats (tr), the run's folds (f);
#: unreadable files widen it too (the HTML report's heatmap counts against the same grid)
GRID_CTES = """
    seen AS (SELECT config, task, rep, fld FROM cell
             UNION ALL SELECT config_dir, task_dir, dir_repeat, dir_fold FROM unreadable),
    c AS (SELECT DISTINCT config FROM seen WHERE config IS NOT NULL),
    tr AS (SELECT DISTINCT task, rep FROM seen WHERE task IS NOT NULL AND rep IS NOT NULL AND fld IS NOT NULL),
    f AS (SELECT DISTINCT fld FROM seen WHERE rep IS NOT NULL AND fld IS NOT NULL)
"""


def _missing_cells(index: RawIndex) -> tuple:
    """Cells of configs x (task, repeat) x folds without a readable result; unreadable files widen the grid too.

    Repeats are per task (TabArena gives small datasets more repeats than large ones), folds
    are per run: a task's repeat that any config ran must hold every fold for every config.
    """
    rows = index.query(f"""
        WITH cell AS ({_CELLS}), {GRID_CTES}
        SELECT c.config, tr.task, tr.rep, f.fld FROM c CROSS JOIN tr CROSS JOIN f
        WHERE NOT EXISTS (SELECT 1 FROM cell WHERE cell.config = c.config AND cell.task = tr.task
                          AND cell.rep = tr.rep AND cell.fld = f.fld)
        ORDER BY 1, 2, 3, 4
    """)
    return tuple((config, task, f"{rep}_{fld}") for config, task, rep, fld in rows)


def _duplicates(index: RawIndex) -> tuple:
    rows = index.query(f"""
        WITH cell AS ({_CELLS})
        SELECT config, task, rep, fld, list(path ORDER BY path) FROM cell
        WHERE config IS NOT NULL AND task IS NOT NULL AND rep IS NOT NULL AND fld IS NOT NULL
        GROUP BY ALL HAVING count(*) > 1 ORDER BY 1, 2, 3, 4
    """)
    return tuple((config, task, f"{rep}_{fld}", tuple(paths)) for config, task, rep, fld, paths in rows)


def _fidelity(index: RawIndex) -> tuple[FidelityIssue, ...]:
    rows = index.query("""
        SELECT dataset, split_idx, framework, 'test' AS kind, test_not_close_pct AS pct, path FROM results
        WHERE test_not_close_pct > 0
        UNION ALL
        SELECT dataset, split_idx, framework, 'val', val_not_close_pct, path FROM results WHERE val_not_close
        ORDER BY path, kind
    """)
    return tuple(FidelityIssue(*row) for row in rows)


def _fold_histogram(index: RawIndex) -> tuple[tuple[str, int], ...]:
    rows = index.query("""
        SELECT CAST(vp_num_bag_folds AS VARCHAR) || 'x' || CAST(vp_num_bag_sets AS VARCHAR)
               || CASE WHEN vp_child_oof THEN ' requested; 1 child via use_child_oof' ELSE '' END AS label,
               count(*) AS n
        FROM results WHERE vp_num_bag_folds IS NOT NULL AND vp_num_bag_sets IS NOT NULL
        GROUP BY label ORDER BY n DESC, label
    """)
    return tuple((label, int(n)) for label, n in rows)


#: columns whose distinct non-null values the inference reports, with an optional row filter
_DISTINCT = {
    "methods": ("method_prefix", None),
    "frameworks": ("framework", None),
    "ag_keys": ("ag_key", "has_sim_artifacts"),
    "name_prefixes": ("name_prefix", "has_sim_artifacts"),
    "validation_protocol_keys": ("vp_key", None),
    "validation_flavours": ("vp_flavour", None),
    "datasets": ("dataset", None),
    "problem_types": ("problem_type", None),
    "metrics": ("metric", None),
}


def _distinct(index: RawIndex) -> dict[str, tuple]:
    """Every :data:`_DISTINCT` list in one query: each field's distinct non-null values, sorted.

    The fields are stacked into one (field, value) column and grouped once: nine ``list(DISTINCT ...)``
    aggregates over the table cost DuckDB 2.0 about four times as much (50 against 14 ms on 1,800 rows).
    """
    stacked = " UNION ALL ".join(
        f"SELECT '{name}' AS field, {col} AS value FROM results WHERE {col} IS NOT NULL"
        + (f" AND {cond}" if cond else "")
        for name, (col, cond) in _DISTINCT.items()
    )
    found = dict(index.query(f"SELECT field, list_sort(list(DISTINCT value)) FROM ({stacked}) GROUP BY field"))
    return {name: tuple(found.get(name, ())) for name in _DISTINCT}


def infer(index: RawIndex) -> Inference:
    """Every inference over ``index`` (one method's results, see :func:`tabarena_checks.raw.index.split_methods`)."""
    ((n_results, any_config, all_config, max_gpus, is_bag, n_tasks, no_vp),) = index.query("""
        SELECT count(*), coalesce(bool_or(has_sim_artifacts), false), coalesce(bool_and(has_sim_artifacts), false),
               max(num_gpus), coalesce(bool_or(num_bag_children > 1), false), count(DISTINCT tid),
               count(*) FILTER (WHERE NOT has_vp_record)
        FROM results
    """)
    method_type = None if n_results == 0 else "config" if all_config else "mixed" if any_config else "baseline"
    lists = _distinct(index)
    frameworks, name_prefixes, keys = lists["frameworks"], lists["name_prefixes"], lists["validation_protocol_keys"]
    inferred_method = _single({"config": name_prefixes, "baseline": frameworks}.get(method_type, ()))
    per_config = {
        f: int(n)
        for f, n in index.query(
            "SELECT framework, count(*) FROM results WHERE framework IS NOT NULL GROUP BY 1 ORDER BY 1"
        )
    }
    return Inference(
        **lists,
        method_type=method_type,
        ag_key=_single(lists["ag_keys"]),
        compute="gpu" if max_gpus is not None and max_gpus > 0 else "cpu",
        is_bag=bool(is_bag),
        can_hpo=len(frameworks) > 1,
        raw_config_default=_single(frameworks),
        name_prefix=_single(name_prefixes) if method_type == "config" else None,
        inferred_method=inferred_method,
        validation_protocol=_single(keys),
        n_without_protocol=int(no_vp),
        fold_histogram=_fold_histogram(index),
        n_results=int(n_results),
        n_tasks=int(n_tasks),
        splits=tuple(
            (int(r), int(f))
            for r, f in index.query(
                "SELECT DISTINCT repeat, fold FROM results WHERE repeat IS NOT NULL AND fold IS NOT NULL ORDER BY 1, 2"
            )
        ),
        results_per_config=per_config,
        missing_cells=_missing_cells(index),
        duplicates=_duplicates(index),
        fidelity=_fidelity(index),
        problems=_field_problems(index),
        unread=tuple(sorted(index.query("SELECT path, unnest(unread) FROM results WHERE len(unread) > 0"))),
        tasks=tuple(
            index.query(
                "SELECT dataset, arg_min(tid, path), arg_min(problem_type, path), arg_min(metric, path) "
                "FROM results WHERE dataset IS NOT NULL GROUP BY dataset ORDER BY dataset"
            )
        ),
        errors=index.errors,
    )


def _field_problems(index: RawIndex) -> tuple[tuple[str, str], ...]:
    """``(path, problem)`` of every result field the reader flagged, of every missing split_idx, and of every
    result that disagrees with its task's or task split's first (see :data:`_SPLIT_DIFFERS`), with its
    method's first on the name prefix (:data:`_PREFIX_DIFFERS`), or with the TabArena-v0.1 task table (name,
    problem type, metric) or another task of its method on the task's name (:data:`_SUITE_DIFFERS`)."""
    return tuple(
        sorted(
            index.query("SELECT path, unnest(problems) FROM results WHERE len(problems) > 0")
            + index.query(
                # TabArena places a result by its split_idx and its processing fails without it
                "SELECT path, 'task_metadata.split_idx is missing; add split_idx = n_folds * repeat + fold (repeat ' "
                "|| coalesce(repeat, 0) || ', fold ' || fold || ') to task_metadata' FROM results "
                "WHERE split_idx IS NULL AND NOT is_legacy_layout AND fold IS NOT NULL"
            )
            + index.query(_SPLIT_DIFFERS)
            + index.query(_PREFIX_DIFFERS)
            + index.query(_SUITE_DIFFERS)
        )
    )


#: processing renames every config of a method by what follows one name prefix in its framework
_PREFIX_DIFFERS = """
    WITH configs AS (
        SELECT path, name_prefix, first_value(path) OVER w AS first, first_value(name_prefix) OVER w AS first_prefix
        FROM results WHERE has_sim_artifacts AND name_prefix <> ''
        WINDOW w AS (PARTITION BY method_prefix ORDER BY path))
    SELECT path, 'method_metadata.name_prefix is ''' || name_prefix || ''', but ' || first || ' of the same method '
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
    SELECT path, 'task_metadata.name is ''' || dataset || ''', but TabArena-v0.1 names task ' || tid || ' '''
           || table_name || '''; TabArena looks the task''s results up by that name and stops on any other: record '
           || 'task_metadata.name ''' || table_name || ''' (or the tid of the task these results are for)'
    FROM judged WHERE renamed
    UNION ALL
    SELECT path, 'task_metadata.tid is ' || tid || ', but ''' || dataset || ''' is TabArena-v0.1''s task ' || table_tid
           || '; TabArena would fetch task ' || tid || ' from OpenML and not find these results under its name: '
           || 'record task_metadata.tid ' || table_tid || ' (or the name of the dataset these results are for)'
    FROM judged WHERE moved
    UNION ALL
    SELECT path, 'problem_type is ''' || problem_type || ''', but TabArena-v0.1''s task ' || tid || ' (' || table_name
           || ') is ''' || table_problem_type || ''', scored with ''' || table_metric || '''; every method on the '
           || 'task is compared in those, and TabArena would publish this result beside theirs: rerun the task as '
           || 'the suite defines it (or correct problem_type)'
    FROM judged WHERE retyped
    UNION ALL
    SELECT path, 'metric is ''' || metric || ''', but TabArena-v0.1 scores task ' || tid || ' (' || table_name
           || ') with ''' || table_metric || '''; every method''s metric_error on the task is compared with the '
           || 'others'', and TabArena would publish this one beside theirs: rerun scored with ''' || table_metric
           || ''' (or correct metric)'
    FROM judged WHERE rescored AND NOT retyped
    UNION ALL
    SELECT path, 'task_metadata.name is ''' || dataset || ''' for task ' || tid || ', but ' || first || ' of the same '
           || 'method names task ' || first_tid || ' so; a task''s results and predictions are filed under its name, '
           || 'so the two tasks would be mixed: give each task its own task_metadata.name'
    FROM shared WHERE tid <> first_tid
"""

#: what every result of a task must share, with why: TabArena takes a dataset's results together
_TASK_SHARES = {
    "dataset": ("task_metadata.name", "TabArena looks the task up by that name and files its predictions under it"),
    "metric": ("metric", "TabArena keeps one metric per dataset, and the configs of a split are ensembled on it"),
    "problem_type": ("problem_type", "TabArena keeps one problem type per dataset"),
}
#: what every config of a task split must share, with why: processing takes a split's configs together
_SPLIT_SHARES = {
    "split_idx": ("task_metadata.split_idx", "its predictions are filed under it"),
}


def _shared(scope: str, table: str, column: str, label: str, why: str) -> str:
    return (
        f"SELECT path, '{label} is ''' || {column} || ''', but ' || first || ' of the same {scope} says ''' "
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
    sized AS (  -- a file without labels is a problem of its own (raw.artifacts) and is not compared
        SELECT *, first_value(path) OVER w AS first, first_value(val_rows) OVER w AS first_val,
               first_value(test_rows) OVER w AS first_test, first_value(labels_digest) OVER w AS first_labels
        FROM split WHERE val_rows IS NOT NULL AND test_rows IS NOT NULL
        WINDOW w AS (PARTITION BY method_prefix, tid, r, fold ORDER BY path)),
    filed AS (
        SELECT *, first_value(path) OVER w AS first, first_value(r) OVER w AS first_r,
               first_value(fold) OVER w AS first_fold
        FROM split WHERE split_idx IS NOT NULL WINDOW w AS (PARTITION BY method_prefix, tid, split_idx ORDER BY r, fold, path))
    SELECT path, 'task_metadata.split_idx is ' || split_idx || ' for repeat ' || r || ', fold ' || fold || ', but '
           || first || ' of the same task is repeat ' || first_r || ', fold ' || first_fold || ' under the same '
           || 'split_idx; its predictions would overwrite the other split''s: correct task_metadata.split_idx' FROM filed
    WHERE r <> first_r OR fold <> first_fold
    UNION ALL
    {" UNION ALL ".join(_shared("task split", "named", c, *label_why) for c, label_why in _SPLIT_SHARES.items())}
    UNION ALL
    {" UNION ALL ".join(_shared("task", "tasked", c, *label_why) for c, label_why in _TASK_SHARES.items())}
    UNION ALL
    SELECT path, 'simulation_artifacts holds ' || val_rows || ' validation and ' || test_rows || ' test labels, but '
           || first || ' of the same task split holds ' || first_val || ' and ' || first_test || '; every config '
           || 'of a task split must predict the same rows (rerun this config on that split, or remove the file)'
    FROM sized WHERE val_rows <> first_val OR test_rows <> first_test
    UNION ALL
    SELECT path, 'simulation_artifacts holds other labels than ' || first || ' of the same task split (y_val, '
           || 'y_test, their row ids y_val_idx and y_test_idx, or the label name differ); processing scores every '
           || 'config of a task split against the first one''s labels (rerun this config on that split, or remove '
           || 'the file)'
    FROM sized WHERE val_rows = first_val AND test_rows = first_test AND labels_digest <> first_labels
"""
