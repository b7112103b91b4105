"""What the raw data says about the method, answered with SQL over the index.

These are the values TabArena infers from a run (``_infer_from_raw``) and compares with
the declared MethodMetadata, plus the coverage and fidelity facts the data-quality rules
need. Everything is computed once per index; rules read the frozen :class:`Inference`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

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


#: columns whose distinct non-null values the inference reports, with an optional row filter (text columns:
#: :func:`_distinct` puts a row's values in one list)
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

    One scan unnests every row into its (field, value) pairs, grouped once. Each reference to ``results``
    costs DuckDB a bind of the whole Arrow table, so nine stacked selects (or nine ``list(DISTINCT ...)``
    aggregates) would bind it nine times.
    """
    fields = ", ".join(f"'{name}'" for name in _DISTINCT)
    values = ", ".join(col if cond is None else f"CASE WHEN {cond} THEN {col} END" for col, cond in _DISTINCT.values())
    found = dict(
        index.query(
            f"SELECT field, list_sort(list(DISTINCT value)) FROM (SELECT unnest([{fields}]) AS field, "
            f"unnest([{values}]) AS value FROM results) WHERE value IS NOT NULL GROUP BY field"
        )
    )
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
        unread=tuple(sorted(index.query("SELECT path, unnest(unread) FROM results WHERE len(unread) > 0"))),
        tasks=tuple(
            index.query(
                "SELECT dataset, arg_min(tid, path), arg_min(problem_type, path), arg_min(metric, path) "
                "FROM results WHERE dataset IS NOT NULL GROUP BY dataset ORDER BY dataset"
            )
        ),
        errors=index.errors,
    )
