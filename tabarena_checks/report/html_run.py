"""The HTML run report of ``checks inspect --html`` and ``checks run process --html``.

One self-contained file (see :mod:`checks.htmlreport`): the verdicts, a coverage heatmap
(config x task, coloured by splits present / expected), prediction fidelity, inferred vs
declared metadata, the validation-protocol fold histogram, metric_error per task, and the
decision record. The figures come from the same index and inference the rules judged; the
few extra numbers (cell counts, per-result fidelity, metric means) are one SQL query each.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from checks import io as checks_io
from checks.htmlreport import (
    badge,
    esc,
    key_values,
    new_figure,
    page,
    plot_text,
    record_section,
    svg,
    table,
    verdict_table,
    waiver_table,
)
from tabarena_checks.raw.inference import _CELLS, GRID_CTES

#: (lower bound of present/expected, colour, legend text); 1.0 is its own class. ColorBrewer RdYlBu,
#: readable with the common colour-vision deficiencies, and every cell also says its numbers in text
BINS = (
    (1.0, "#4575b4", "all splits present"),
    (0.75, "#fee090", "75-99% present"),
    (0.5, "#fdae61", "50-74% present"),
    (0.25, "#f46d43", "25-49% present"),
    (1e-9, "#d73027", "1-24% present"),
    (0.0, "#67001f", "none present"),
)
NO_EXPECTATION = ("#d0d7de", "nothing expected (only unreadable files)")
#: results drawn as vector marks; above this a scatter is embedded as a raster image inside the SVG
VECTOR_POINTS = 2000
#: outliers named with their file in the fidelity plot
LABELLED_OUTLIERS = 6
#: rows listed in a text table before the rest is counted
TABLE_ROWS = 200
TEST_COLOUR, VAL_COLOUR = "#0072b2", "#d55e00"  # Okabe-Ito blue and vermillion


# ----------------------------------------------------------------------------- data


def cell_counts(index) -> list[dict[str, Any]]:
    """Per (config, task): distinct splits present, splits expected, results, unreadable files.

    Expected splits are counted on the grid the coverage rule judges (``GRID_CTES``): the repeats
    any config ran on the task times the folds of the run, so present + missing = expected.
    """
    rows = index.query(f"""
        WITH cell AS ({_CELLS}), {GRID_CTES},
             nf AS (SELECT count(*) AS n FROM f),
             ex AS (SELECT task, count(*) * (SELECT n FROM nf) AS expected, count(*) AS repeats FROM tr GROUP BY task),
             got AS (SELECT config, task, count(DISTINCT (rep, fld)) FILTER (WHERE rep IS NOT NULL AND fld IS NOT NULL)
                            AS present, count(*) AS results
                     FROM cell WHERE config IS NOT NULL AND task IS NOT NULL GROUP BY ALL),
             bad AS (SELECT config_dir AS config, task_dir AS task, count(*) AS unreadable FROM unreadable GROUP BY ALL),
             tasks AS (SELECT task FROM ex UNION SELECT task FROM got UNION SELECT task FROM bad WHERE task IS NOT NULL)
        SELECT c.config, tasks.task, coalesce(got.present, 0), coalesce(ex.expected, 0), coalesce(ex.repeats, 0),
               (SELECT n FROM nf), coalesce(got.results, 0), coalesce(bad.unreadable, 0)
        FROM c CROSS JOIN tasks LEFT JOIN ex ON ex.task = tasks.task
             LEFT JOIN got ON got.config = c.config AND got.task = tasks.task
             LEFT JOIN bad ON bad.config = c.config AND bad.task = tasks.task
        ORDER BY 1, 2
    """)
    names = ("config", "task", "present", "expected", "repeats", "folds", "results", "unreadable")
    return [dict(zip(names, row)) for row in rows]


def task_names(index) -> dict[str, str]:
    """Task id -> dataset name (as the results record them)."""
    return {
        t: d
        for t, d in index.query(
            "SELECT CAST(tid AS VARCHAR), any_value(dataset) FROM results WHERE tid IS NOT NULL GROUP BY 1"
        )
    }


def family(config: str) -> str:
    """The config family: TabArena numbers configs ``_c1`` (default) and ``_r<i>`` (random search)."""
    return re.sub(r"_([cr])\d+(?=_|$)", r"_\1*", config)


def aggregate(cells: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The cells summed over each config family (a row per family and task)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    members: dict[str, set[str]] = defaultdict(set)
    for cell in cells:
        fam = family(cell["config"])
        members[fam].add(cell["config"])
        key = (fam, cell["task"])
        agg = out.setdefault(key, {**cell, "config": fam, "present": 0, "expected": 0, "results": 0, "unreadable": 0})
        for name in ("present", "expected", "results", "unreadable"):
            agg[name] += cell[name]
    for agg in out.values():
        agg["members"] = len(members[agg["config"]])
    return list(out.values())


# ----------------------------------------------------------------------------- heatmap


def colour(present: int, expected: int) -> tuple[str, str]:
    if expected <= 0:
        return NO_EXPECTATION
    ratio = present / expected
    for low, fill, label in BINS:
        if ratio >= low:
            return fill, label
    return BINS[-1][1], BINS[-1][2]


def _cell_text(cell: Mapping[str, Any], datasets: Mapping[str, str]) -> str:
    who = cell["config"] + (f" ({cell['members']} configs)" if cell.get("members") else "")
    task = cell["task"] + (f" {datasets[cell['task']]}" if cell["task"] in datasets else "")
    text = f"{who} / task {task}: {cell['present']} of {cell['expected']} splits present"
    if cell.get("repeats") and not cell.get("members"):
        text += f" ({cell['repeats']} repeats x {cell['folds']} folds planned)"
    dups = cell["results"] - cell["present"]
    if dups > 0:
        text += f"; {dups} duplicate result(s)"
    if cell["unreadable"]:
        text += f"; {cell['unreadable']} unreadable file(s)"
    return text


def heatmap(cells: Sequence[Mapping[str, Any]], datasets: Mapping[str, str], *, ident: str, what: str) -> str:
    """An SVG grid, rows x tasks, each cell with a <title> (hover and screen readers), plus legend and text table."""
    if not cells:
        return '<p class="note">No (config, task) cell to show.</p>'
    tasks = _task_order(cells)
    by_row: dict[str, dict[str, Mapping[str, Any]]] = defaultdict(dict)
    for c in cells:
        by_row[c["config"]][c["task"]] = c
    stats = {name: _row_stats(row) for name, row in by_row.items()}
    order = sorted(by_row, key=lambda n: (stats[n][0], stats[n][1], natural(n)))
    totals = {n: _row_total(stats[n]) for n in order}
    grid = _Grid.of(tasks, order, datasets, totals)
    parts = [_svg_open(grid, ident, what, len(order), len(tasks)), *_task_labels(grid, tasks, datasets)]
    parts += [
        _heat_row(grid, i, name, stats[name], by_row[name], tasks, datasets, totals[name])
        for i, name in enumerate(order)
    ]
    parts.append("</svg>")
    incomplete = [c for c in cells if _incomplete(c)]
    summary = (
        f"{len(order)} {what} x {len(tasks)} tasks; {len(incomplete)} of {len(cells)} cells incomplete or "
        f"flagged. Rows are sorted worst coverage first; hover a cell for its counts."
    )
    return (
        f'<p>{esc(summary)}</p>{legend()}<div data-sortable>{_SORTBAR}<div class="scroll">{"".join(parts)}</div>'
        f"</div>{_incomplete_table(incomplete, datasets, what)}"
    )


#: the buttons that re-sort the heatmap's rows (the page's script reads their data-key)
_SORTBAR = (
    '<div class="sortbar" role="group" aria-label="Sort rows">Sort rows: '
    '<button type="button" data-key="cov">worst coverage first</button>'
    '<button type="button" data-key="bad" data-desc>most flagged first</button>'
    '<button type="button" data-key="name">by name</button></div>'
)


def _task_order(cells: Sequence[Mapping[str, Any]]) -> list[str]:
    """The heatmap's columns: numeric task ids in numeric order, then any other task names."""
    return sorted({c["task"] for c in cells}, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t))


def _row_total(stat: tuple[float, int, int, int, int]) -> str:
    """A row's total, ``present/expected`` and how many of its cells are flagged."""
    return f"{stat[2]}/{stat[3]}" + (f" ({stat[4]} flagged)" if stat[4] else "")


def _incomplete(cell: Mapping[str, Any]) -> bool:
    """A cell missing splits, holding more results than splits, or with unreadable files."""
    return cell["present"] < cell["expected"] or cell["results"] > cell["present"] or bool(cell["unreadable"])


def _svg_open(grid: _Grid, ident: str, what: str, rows: int, tasks: int) -> str:
    """The SVG's opening tag and its title, which screen readers announce."""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{esc(ident)}" class="heatmap" width="{grid.width}" '
        f'height="{grid.height}" viewBox="0 0 {grid.width} {grid.height}" role="img" '
        f'aria-labelledby="{esc(ident)}-t" data-rows="{rows}" data-step="{grid.step}" data-top="{grid.top}" '
        f'font-size="11" font-family="system-ui, DejaVu Sans, sans-serif">'
        f'<title id="{esc(ident)}-t">Coverage heatmap: {rows} {esc(what)} x {tasks} tasks, '
        f"each cell coloured by splits present of expected; the table below lists every incomplete cell"
        f"</title>"
    )


def _task_labels(grid: _Grid, tasks: Sequence[str], datasets: Mapping[str, str]) -> list[str]:
    """The column labels, slanted; each one's title names the task's dataset where it is known."""
    labels = []
    for j, (task, short) in enumerate(zip(tasks, grid.labels)):
        x = grid.left + j * grid.step + grid.size / 2
        label = task + (f" {datasets[task]}" if task in datasets else "")
        labels.append(
            f'<text transform="translate({x:.0f},{grid.top - 5}) rotate(-45)">'
            f"<title>{esc(label)}</title>{esc(short)}</text>"
        )
    return labels


def _row_stats(row: Mapping[str, Mapping[str, Any]]) -> tuple[float, int, int, int, int]:
    """A heatmap row's (coverage, -flagged, present, expected, flagged): its sort key and its total."""
    present = sum(c["present"] for c in row.values())
    expected = sum(c["expected"] for c in row.values())
    bad = sum(c["results"] - c["present"] + c["unreadable"] for c in row.values())
    return (present / expected if expected else 1.0, -bad, present, expected, bad)


@attrs.frozen
class _Grid:
    """The heatmap's geometry: cell size, margins for the row names, the slanted task labels and the totals."""

    size: int
    step: int
    left: int
    top: int
    width: int
    height: int
    #: characters of a row name that fit left of the grid
    fits: int
    labels: list[str]

    @classmethod
    def of(cls, tasks: list[str], order: list[str], datasets: Mapping[str, str], totals: Mapping[str, str]) -> "_Grid":
        size = 22 if len(tasks) <= 12 else 15
        step = size + 1
        char = 6.6  # px per character at font-size 11, a little generous
        longest = max(len(n) for n in order)
        left = min(360, 24 + int(longest * char))
        fits = longest if left < 360 else int((left - 24) / char)
        labels = [_short(t + (f" {datasets[t]}" if t in datasets else ""), 22) for t in tasks]
        slant = int(max(len(t) for t in labels) * 7.0 * 0.71)  # the last column label leans right
        top = 24 + slant
        right = 12 + max(int(max(len(t) for t in totals.values()) * char), slant - step * len(tasks) // 2)
        return cls(size, step, left, top, left + step * len(tasks) + right, top + step * len(order) + 10, fits, labels)


def _heat_row(
    grid: _Grid,
    i: int,
    name: str,
    stats: tuple,
    row: Mapping[str, Mapping[str, Any]],
    tasks: list[str],
    datasets: Mapping[str, str],
    total: str,
) -> str:
    """One row of the heatmap: its name, a cell per task, its total."""
    ratio, _, _, _, bad = stats
    size = grid.size
    out = [
        f'<g class="hrow" data-name="{esc(name)}" data-cov="{ratio:.6f}" data-bad="{bad}" '
        f'transform="translate(0,{grid.top + i * grid.step})">'
        f'<text x="{grid.left - 6}" y="{size / 2 + 4}" text-anchor="end"><title>{esc(name)}</title>'
        f"{esc(_short(name, grid.fits))}</text>"
    ]
    for j, task in enumerate(tasks):
        out.append(_heat_cell(row.get(task), name, task, grid.left + j * grid.step, size, datasets))
    out.append(
        f'<text x="{grid.left + grid.step * len(tasks) + 6}" y="{size / 2 + 4}" fill="#57606a">{total}</text></g>'
    )
    return "".join(out)


def _heat_cell(
    cell: Mapping[str, Any] | None, name: str, task: str, x: int, size: int, datasets: Mapping[str, str]
) -> str:
    """One cell: coloured by coverage, a dot for duplicates, a cross for unreadable files."""
    if cell is None:
        return (
            f'<rect x="{x}" width="{size}" height="{size}" fill="#fff" stroke="#d0d7de">'
            f"<title>{esc(name)} / task {esc(task)}: no cell</title></rect>"
        )
    fill, _ = colour(cell["present"], cell["expected"])
    tip = f"<title>{esc(_cell_text(cell, datasets))}</title>"
    marks = ""
    if cell["results"] > cell["present"]:
        marks += f'<circle cx="{x + size / 2}" cy="{size / 2}" r="{size / 5:.1f}" fill="#000" stroke="#fff"/>'
    if cell["unreadable"]:
        a, b = 3, size - 3
        marks += f'<path d="M{x + a} {a}L{x + b} {b}M{x + b} {a}L{x + a} {b}" stroke="#000" stroke-width="2"/>'
    if marks:
        return f'<g>{tip}<rect x="{x}" width="{size}" height="{size}" fill="{fill}"/>{marks}</g>'
    return f'<rect x="{x}" width="{size}" height="{size}" fill="{fill}">{tip}</rect>'


def natural(name: str) -> tuple:
    """A sort key that orders numbers inside names by value (``_r2`` before ``_r10``)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part)


def _short(text: str, limit: float) -> str:
    limit = max(4, int(limit))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def legend() -> str:
    items = [f'<span><span class="sw" style="background:{fill}"></span>{esc(label)}</span>' for _, fill, label in BINS]
    items.append(
        f'<span><span class="sw" style="background:{NO_EXPECTATION[0]}"></span>{esc(NO_EXPECTATION[1])}</span>'
    )
    items.append(
        '<span><svg width="14" height="14" aria-hidden="true"><circle cx="7" cy="7" r="3.2" fill="#000"/>'
        "</svg> duplicate results in the cell</span>"
    )
    items.append(
        '<span><svg width="14" height="14" aria-hidden="true"><path d="M2 2L12 12M12 2L2 12" stroke="#000" '
        'stroke-width="2"/></svg> unreadable file(s) in the cell</span>'
    )
    return f'<div class="legend" aria-label="Heatmap legend">{"".join(items)}</div>'


def _incomplete_table(cells: Sequence[Mapping[str, Any]], datasets: Mapping[str, str], what: str) -> str:
    if not cells:
        return '<p class="note">Every cell holds exactly the planned splits, once each.</p>'
    ordered = sorted(
        cells, key=lambda c: (c["present"] / c["expected"] if c["expected"] else 1, c["config"], c["task"])
    )
    rows = [
        [
            c["config"],
            c["task"],
            datasets.get(c["task"], ""),
            c["present"],
            c["expected"],
            max(0, c["results"] - c["present"]),
            c["unreadable"],
        ]
        for c in ordered[:TABLE_ROWS]
    ]
    more = (
        f" (first {TABLE_ROWS} of {len(cells)}; `checks inspect --format json` lists all)"
        if len(cells) > TABLE_ROWS
        else ""
    )
    return (
        f"<details><summary>Incomplete or flagged cells as a table ({len(cells)}){esc(more)}</summary>"
        + table(
            [
                what[:-1] if what.endswith("s") else what,
                "task",
                "dataset",
                "splits present",
                "splits expected",
                "duplicates",
                "unreadable",
            ],
            rows,
            numeric=(3, 4, 5, 6),
        )
        + "</details>"
    )


# ----------------------------------------------------------------------------- plots


def fidelity_rows(index) -> list[dict[str, Any]]:
    return index.records("""
        SELECT path, framework, CAST(tid AS VARCHAR) AS task, dataset, repeat, fold,
               test_not_close_pct AS test, val_not_close_pct AS val
        FROM results WHERE test_not_close_pct IS NOT NULL OR val_not_close_pct IS NOT NULL ORDER BY path
    """)


def fidelity_plot(rows: Sequence[Mapping[str, Any]], *, ident: str) -> str:
    """Test and validation discrepancy per result, sorted, against TA305's limit (no row beyond rtol).

    Results within tolerance (usually nearly all) are one labelled segment at 0%; only the
    others are drawn one by one.
    """
    if not rows:
        return (
            '<p class="note">No result carries bag children, so there are no rebuilt predictions to compare '
            "(baselines, or results without simulation artifacts).</p>"
        )
    worst = sorted(rows, key=lambda r: -_discrepancy(r))
    flagged = [r for r in worst if _discrepancy(r) > 0]
    n = len(worst)
    fig = new_figure(9.5, 3.6, left=0.9, right=0.2, bottom=0.55, top=0.15)
    _draw_fidelity(fig.add_subplot(), flagged, n)
    if flagged:
        desc = f"{n} results compared; {len(flagged)} with a discrepancy above 0%. Largest: " + "; ".join(
            f"{r['path']} test {r['test'] or 0:.3f}% val {r['val'] or 0:.3f}%" for r in flagged[:LABELLED_OUTLIERS]
        )
    else:
        desc = f"{n} results compared; 0 with a discrepancy above 0%. None exceeds the limit."
    out = svg(fig, ident=ident, title="Prediction fidelity per result", desc=desc)
    if not flagged:
        return out + f'<p class="note">All {n} results are within tolerance.</p>'
    rows_out = [
        [r["path"], r["framework"], r["task"], r["dataset"], _pct(r["test"]), _pct(r["val"])]
        for r in flagged[:TABLE_ROWS]
    ]
    return out + (
        f"<details><summary>Results beyond tolerance as a table ({len(flagged)})</summary>"
        + table(
            ["file", "config", "task", "dataset", "test % not close", "validation % not close"],
            rows_out,
            numeric=(4, 5),
        )
        + "</details>"
    )


def _discrepancy(row: Mapping[str, Any]) -> float:
    """The larger of a result's test and validation discrepancy (% of rows not close; 0 when none measured)."""
    return max(row["test"] or 0.0, row["val"] or 0.0)


def _draw_fidelity(ax, flagged: list[Mapping[str, Any]], n: int) -> None:
    """The flagged results as points (test and validation), the rest as one segment at 0%, the worst labelled."""
    from matplotlib.ticker import NullLocator

    for key, col, marker, label in (
        ("test", TEST_COLOUR, "o", "test (rtol 5e-4, stored vs mean of children)"),
        ("val", VAL_COLOUR, "^", "validation (rtol 1e-5, out-of-fold rebuild)"),
    ):
        pts = [(x, r[key]) for x, r in enumerate(flagged, start=1) if r[key]]
        (line,) = ax.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            linestyle="none",
            marker=marker,
            markersize=4,
            color=col,
            alpha=0.85,
            label=label,
        )
        line.set_rasterized(len(pts) > VECTOR_POINTS)
    ax.hlines(
        0,
        len(flagged) + 1 if flagged else 1,
        max(n, 2),
        color="#1a7f37",
        linewidth=4,
        label=f"{n - len(flagged)} result(s) within tolerance (0% of rows beyond rtol: TA305's limit)",
    )
    ax.set_xlim(0, n + 1)
    top_value = max([_discrepancy(r) for r in flagged] + [0.05])
    ax.set_yscale("symlog", linthresh=0.01)
    ax.yaxis.set_minor_locator(NullLocator())  # symlog's minor ticks cost more than the rest of the figure
    ax.set_ylim(bottom=-0.002, top=top_value * 4)
    ax.set_xlabel(f"result, most discrepant first ({n} results with bag children)")
    ax.set_ylabel("% of prediction rows not close")
    ax.grid(True, axis="y", color="#eaeef2")
    for x, r in list(enumerate(flagged, start=1))[:LABELLED_OUTLIERS]:
        ax.annotate(
            plot_text(_short_path(r["path"])),
            (x, _discrepancy(r)),
            xytext=(8, -2 - 9 * (x % 3)),
            textcoords="offset points",
            fontsize=7.5,
            color="#1b1f24",
        )
    ax.legend(loc="upper right", fontsize=8, frameon=False)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _short_path(path: str) -> str:
    parts = Path(path).parts
    return "/".join(parts[-4:-1]) if len(parts) >= 4 else path


def fold_plot(histogram: Sequence[Sequence[Any]], *, ident: str) -> str:
    if not histogram:
        return '<p class="note">No result carries a validation-protocol record (legacy results).</p>'
    labels = [str(label) for label, _ in histogram]
    counts = [int(n) for _, n in histogram]
    width = max(2.0, 0.075 * max(len(label) for label in labels) + 0.4)
    fig = new_figure(8, 0.45 * len(labels) + 1.1, left=width, right=0.4, bottom=0.55, top=0.15)
    ax = fig.add_subplot()
    ys = list(range(len(labels)))[::-1]
    ax.barh(ys, counts, color=TEST_COLOUR)
    ax.set_yticks(ys, labels=[plot_text(label) for label in labels])
    for y, n in zip(ys, counts):
        ax.text(n, y, f" {n}", va="center", fontsize=9)
    ax.set_xlabel("results")
    ax.set_xlim(0, max(counts) * 1.15)
    desc = "; ".join(f"{label}: {n} results" for label, n in zip(labels, counts))
    return svg(fig, ident=ident, title="Validation-protocol fold histogram (bag folds x bag sets)", desc=desc) + table(
        ["protocol (bag folds x sets)", "results"], zip(labels, counts), numeric=(1,)
    )


def metric_rows(index) -> list[tuple[str, str, str, float]]:
    return index.query("""
        SELECT CAST(tid AS VARCHAR), framework, any_value(metric), avg(metric_error)
        FROM results WHERE tid IS NOT NULL AND framework IS NOT NULL AND metric_error IS NOT NULL
             AND isfinite(metric_error)
        GROUP BY 1, 2 ORDER BY 1, 2
    """)


def metric_plot(rows: Sequence[tuple[str, str, str, float]], datasets: Mapping[str, str], *, ident: str) -> str:
    """Per task, the spread of metric_error over configs (each config's mean over its splits): box and points."""
    if not rows:
        return '<p class="note">No finite metric_error in the results.</p>'
    by_task: dict[str, list[tuple[str, float]]] = defaultdict(list)
    metric: dict[str, str] = {}
    for task, config, name, value in rows:
        by_task[task].append((config, float(value)))
        metric[task] = name or "?"
    tasks = sorted(by_task, key=lambda t: (not t.isdigit(), int(t) if t.isdigit() else 0, t))
    fig = _draw_metric(by_task, tasks, datasets)
    table_rows = [_metric_row(task, by_task[task], datasets, metric[task]) for task in tasks]
    desc = "; ".join(
        f"task {r[0]}: {r[3]} configs, metric_error {r[4]} to {r[6]}, median {r[5]}, best {r[7]}"
        for r in table_rows[:60]
    )
    return (
        svg(fig, ident=ident, title="metric_error by task across configs", desc=desc)
        + "<details><summary>The same as a table</summary>"
        + table(
            ["task", "dataset", "metric", "configs", "min", "median", "max", "best config"],
            table_rows,
            numeric=(3, 4, 5, 6),
        )
        + "</details>"
    )


def _draw_metric(by_task: Mapping[str, list[tuple[str, float]]], tasks: list[str], datasets: Mapping[str, str]):
    """The figure: a box per task and each config as a point (jittered by its name, so the same every time)."""
    ticks = [plot_text(_short(f"{t} {datasets.get(t, '')}".strip(), 24)) for t in tasks]
    slanted = len(tasks) > 4
    bottom = 0.5 + (0.055 * max(len(t) for t in ticks) if slanted else 0.1)
    fig = new_figure(max(6.0, 0.42 * len(tasks) + 2.5), 3.4 + bottom, left=0.9, right=0.2, bottom=bottom, top=0.15)
    ax = fig.add_subplot()
    ax.boxplot(
        [[v for _, v in by_task[t]] for t in tasks],
        positions=range(1, len(tasks) + 1),
        widths=0.55,
        showfliers=False,
        medianprops={"color": VAL_COLOUR},
        boxprops={"color": "#57606a"},
        whiskerprops={"color": "#57606a"},
        capprops={"color": "#57606a"},
    )
    _config_points(ax, by_task, tasks)
    ax.set_xticks(
        range(1, len(tasks) + 1),
        labels=ticks,
        rotation=45 if slanted else 0,
        ha="right" if slanted else "center",
        fontsize=8,
    )
    _metric_axis(ax, [v for t in tasks for _, v in by_task[t]])
    return fig


def _config_points(ax, by_task: Mapping[str, list[tuple[str, float]]], tasks: list[str]) -> None:
    """Each config's mean as a point in its task's column (rasterised when there are many)."""
    points = [(i + _jitter(config), v) for i, task in enumerate(tasks, start=1) for config, v in by_task[task]]
    (line,) = ax.plot(
        [x for x, _ in points],
        [y for _, y in points],
        linestyle="none",
        marker="o",
        markersize=3,
        color=TEST_COLOUR,
        alpha=0.55,
    )
    line.set_rasterized(len(points) > VECTOR_POINTS)


def _metric_axis(ax, values: list[float]) -> None:
    """The y axis: log scale when the values are positive and span more than a factor 30."""
    log = all(v > 0 for v in values) and max(values) / min(values) > 30
    if log:
        ax.set_yscale("log")
    ax.set_ylabel("metric_error (config mean over splits)" + (", log scale" if log else ""))
    ax.grid(True, axis="y", color="#eaeef2")


def _jitter(config: str) -> float:
    """A config's horizontal offset in its task's column: from its name, so the same on every page."""
    return (zlib.crc32(config.encode()) % 1000 / 1000 - 0.5) * 0.4


def _metric_row(task: str, configs: list[tuple[str, float]], datasets: Mapping[str, str], metric: str) -> list:
    """One task's row: its configs' min, median and max metric_error and the best config."""
    vals = sorted(configs, key=lambda cv: cv[1])
    mid = vals[len(vals) // 2][1]
    return [
        task,
        datasets.get(task, ""),
        metric,
        len(vals),
        f"{vals[0][1]:.4g}",
        f"{mid:.4g}",
        f"{vals[-1][1]:.4g}",
        vals[0][0],
    ]


# ----------------------------------------------------------------------------- sections


def comparison(rep: Mapping[str, Any]) -> str:
    """Inferred vs declared metadata side by side (or the inferred values and the suggested snippet)."""
    out = _inferred_only(rep["inferred"]) if rep.get("comparison") is None else _compared(rep)
    if rep.get("snippet"):
        out += f"<h3>MethodMetadata for info.py</h3><pre>{esc(rep['snippet'])}</pre>"
    return out


#: the inferred fields shown when nothing was declared, in the order of a MethodMetadata
_INFERRED_FIELDS = (
    "method",
    "method_type",
    "ag_key",
    "compute",
    "is_bag",
    "can_hpo",
    "config_default",
    "validation_protocol",
)


def _inferred_only(inf: Mapping[str, Any]) -> str:
    """The values inferred from the raw results, when no declaration was given to compare with."""
    pairs = [(k, "-" if inf.get(k) is None else inf.get(k)) for k in _INFERRED_FIELDS]
    return (
        '<p class="note">No <code>--method-metadata</code> was given: the values inferred from the raw '
        "results, and a declaration matching them.</p>" + key_values(pairs)
    )


def _compared(rep: Mapping[str, Any]) -> str:
    """The field-by-field comparison with the declaration, then the declaration's own problems (if any)."""
    rows = []
    for r in rep["comparison"]:
        status = r["status"]
        kind = "ok" if status == "ok" else {"error": "bad", "warn": "warn"}.get(r["severity"], "info")
        rows.append([r["field"], repr(r["inferred"]), repr(r["declared"]), badge(status, kind), r["severity"]])
    source = (rep.get("metadata") or {}).get("source") or "the declaration"
    out = f"<p>Compared with <code>{esc(source)}</code>.</p>" + table(
        ["field", "inferred from raw results", "declared", "status", "severity"], rows, raw=(3,)
    )
    problems = rep.get("metadata_problems") or []
    if problems:
        out += "<h3>Problems in the declaration</h3>" + table(
            ["rule", "name", "message"], [[p["rule"], p["name"], p["message"]] for p in problems]
        )
    return out


def _glance(rep: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> str:
    counts, cov = rep["counts"], rep["coverage"]
    pairs = [
        ("results", counts["results"]),
        ("configs", len(counts["results_per_config"])),
        ("tasks", counts["tasks"]),
        ("splits (repeat_fold)", " ".join(counts["splits"]) or "-"),
        ("problem types", ", ".join(counts["problem_types"]) or "-"),
        ("metrics", ", ".join(counts["metrics"]) or "-"),
        ("missing (config, task, split) cells", len(cov["missing_cells"])),
        ("duplicate cells", len(cov["duplicates"])),
        ("unreadable files", len(rep["unreadable"])),
        ("results with field problems", len(rep["problems"])),
        ("results beyond fidelity tolerance", len(rep["fidelity"])),
    ]
    return key_values(pairs)


def method_sections(n: int, rep: Mapping[str, Any], index) -> list[tuple[str, str, str]]:
    """The sections for one method of the run (``n`` keeps ids unique when a directory holds several)."""
    prefix = rep["method_prefix"]
    head = f"{prefix}: " if n or prefix else ""
    datasets = task_names(index)
    cells = cell_counts(index)
    families = aggregate(cells)
    n_families = len({c["config"] for c in families})
    cover = ""
    if n_families < len({c["config"] for c in cells}):
        cover += f"<h3>By config family ({n_families})</h3>" + heatmap(
            families, datasets, ident=f"heatmap-family-{n}", what="families"
        )
        cover += f"<h3>By config ({len({c['config'] for c in cells})})</h3>"
    cover += heatmap(cells, datasets, ident=f"heatmap-{n}", what="configs")
    return [
        (f"overview-{n}", f"{head}at a glance", _glance(rep, cells)),
        (f"coverage-{n}", f"{head}coverage", cover),
        (f"fidelity-{n}", f"{head}prediction fidelity", fidelity_plot(fidelity_rows(index), ident=f"fidelity-{n}")),
        (f"metadata-{n}", f"{head}inferred vs declared metadata", comparison(rep)),
        (f"folds-{n}", f"{head}validation-protocol folds", fold_plot(rep["fold_histogram"], ident=f"folds-{n}")),
        (f"metric-{n}", f"{head}metric_error by task", metric_plot(metric_rows(index), datasets, ident=f"metric-{n}")),
    ]


def render(
    *,
    title: str,
    subtitle: str,
    methods: Sequence[tuple[Mapping[str, Any], Any]],
    verdicts: Sequence[Any],
    explanations: Mapping[str, str],
    record: Mapping[str, Any] | None,
    record_note: str = "",
    verdict_note: str = "",
    unreadable: Sequence[Mapping[str, str]] = (),
    waivers: str = "",
) -> str:
    """The whole report; ``methods`` holds (``report.method_report`` dict, that method's index) pairs."""
    lead = f'<p class="note">{esc(verdict_note)}</p>' if verdict_note else ""
    sections = [("verdicts", "Verdicts", lead + verdict_table(verdicts, explanations))]
    for n, (rep, index) in enumerate(methods):
        sections += method_sections(n, rep, index)
    if unreadable:
        sections.append(
            (
                "unreadable",
                "Unreadable files",
                table(["file", "reason"], [[u["path"], u["reason"]] for u in unreadable]),
            )
        )
    sections.append(("record", "Decision record", record_section(record, note=record_note) + waivers))
    return page(
        title,
        subtitle,
        sections,
        footer="Written by arena-checks. Self-contained: no network request, no external file.",
    )


def waivers_of(ctx, record: Mapping[str, Any] | None) -> str:
    """The waivers table of a run: rules.toml's and the command line's, with what this run used."""
    return waiver_table([*ctx.config.waivers, *ctx.extra_waivers], (record or {}).get("waivers_used", ()), ctx.today)


def write(path: str | Path, text: str) -> Path:
    """Write the report atomically (temp file + rename)."""
    path = Path(path)
    checks_io.write_text(path, text)
    return path
