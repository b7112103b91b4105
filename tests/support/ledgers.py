"""Reading a leaderboard table as the ledger importer does, and scoring it against hand-read ground truth."""

from __future__ import annotations

from hfmigrate_checks.source import ledger


def read(tmp_path, text, fmt="markdown", name="README.md", **options):
    path = tmp_path / name
    path.write_text(text)
    return ledger.import_source(path, fmt, **options)


def by(rows):
    return {(r.source_model, r.source_task): r for r in rows}


def row_for(rows, key):
    model, task, *tell = key
    found = [
        r
        for r in rows
        if r.source_model == model and r.source_task == task and all(t in r.source_variant for t in tell)
    ]
    return found[0] if len(found) == 1 else f"{len(found)} rows"


def score(case, tmp_path):
    path = tmp_path / ("board.csv" if case.fmt == "csv" else "README.md")
    path.write_text(case.text)
    rows = ledger.import_source(path, case.fmt, **case.options)
    wrong = {}
    for key, truth in case.cells.items():
        row = row_for(rows, key)
        got = row if isinstance(row, str) else (row.source_value, row.status, row.source_variant)
        if got != truth:
            wrong[key] = got
    for key, text in case.kept.items():
        row = row_for(rows, key)
        if isinstance(row, str) or text not in row.qualifiers:
            wrong[key] = f"{text!r} not kept" if not isinstance(row, str) else row
    return rows, wrong
