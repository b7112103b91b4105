"""``checks tabarena publish`` on runs TabArena 0.1.0's own experiment runner wrote (tests/fixtures/tabarena_real),
against the real S3 server on loopback: a plan of four real methods (a bagged config method that can tune, a
holdout one, a child-OOF one and a system baseline, each with its declaration and task metadata) and the run
the reader refuses. The good methods are processed, uploaded, registered in one edit and, once the refused one
is dropped from the plan, logged once; what was published, downloaded as a TabArena user gets it, is what
TabArena's own processing writes, and TabArena's loaders read the same from both; a rerun skips everything.

TabArena's side (its processing of each run, then its loaders) runs in its own environment
(tests/support/tabarena_driver.py), started before the batch so the two overlap.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.parity import HEADER, R2, compare_caches, compare_loaded, download, start_driver
from tests.support.s3_fixtures import remote_objects
from tests.support.real_runs import REFUSED, RUNS, TASK_TABLE, TASKS, run_data
from tests.support.reliability_fixtures import run_checks

from tabarena_checks.testing.facts import ARENA_LOG, ARENA_SRC, arena_repo

#: the real methods the plan publishes
GOOD = ("rf_bag", "lr_holdout", "xt_child_oof", "ag_system")
(BLOCKED,) = REFUSED
#: the refused run, declared as the rerun of rf_bag it is (a suite of its own: the plan refuses one cache for two)
DECLARATIONS = {
    **{run: RUNS[run][1] for run in GOOD},
    BLOCKED: RUNS["rf_bag"][1].replace('suite="rf-real"', 'suite="rf-beyond"'),
}


def _suite(run: str) -> str:
    return DECLARATIONS[run].split('suite="')[1].split('"')[0]


def _rel(run: str) -> Path:
    return Path("artifacts") / _suite(run) / "methods" / RUNS[run][0]


def write_plan(tmp: Path, runs: tuple[str, ...]) -> Path:
    """The TabArena checkout ``tabarena`` holding each run's info.py (TabArena's default verified=True, uploaded
    to the test bucket) and ``plan.toml`` publishing ``runs`` with every step; methods.py of the checkout."""
    infos = {run: f"{HEADER}{run} = {DECLARATIONS[run].replace('(', f'({R2}', 1)}\n" for run in DECLARATIONS}
    if not (tmp / "tabarena").is_dir():
        arena_repo(tmp / "tabarena", infos)
    lines = [
        'cache_root = "cache"',
        'repo = "tabarena"',
        'steps = ["process", "upload", "register", "log"]',
        "",
        "[log]",
        'benchmark_name = "real-batch-2026"',
        f'run = "{run_data(GOOD[0])}"',
    ]
    for run in runs:
        lines += [
            "",
            "[[methods]]",
            f'name = "{run}"',
            f'data = "{run_data(run)}"',
            f'method_metadata = "tabarena/{ARENA_SRC}/models/{run}/info.py:{run}"',
            f'task_metadata = "{TASK_TABLE}"',
            "verified = true",
        ]
        if run == BLOCKED:  # a rerun of rf_bag's method: registered beside it, one entry would replace the other
            lines.append('steps = ["process", "upload"]')
    (tmp / "plan.toml").write_text("\n".join(lines) + "\n")
    return tmp / "tabarena" / ARENA_SRC / "contexts" / "tabarena" / "methods.py"


def publish(tmp: Path) -> tuple[int, dict]:
    """The batch as the maintainer runs it: a command of its own (whose steps are forked from its step server)."""
    result = run_checks(["tabarena", "publish", "plan.toml", "--no-dry-run", "--format", "json"], cwd=tmp, timeout=600)
    assert result.stdout.startswith("{"), result.stderr
    return result.returncode, json.loads(result.stdout)


def steps_of(doc: dict) -> dict[str, dict[str, str]]:
    return {m["name"]: {s["step"]: s["status"] for s in m["steps"]} for m in doc["methods"]}


def tabarenas_own(tmp: Path):
    """TabArena processes every good run into ``theirs`` and loads each cache into ``loaded-theirs/<run>``, in the
    background; the returned wait asserts it succeeded."""
    jobs = []
    for run in GOOD:
        ref = f"{tmp / 'tabarena' / ARENA_SRC / 'models' / run / 'info.py'}:{run}"
        jobs.append(["process", str(run_data(run)), ref, str(tmp / "theirs"), "--user-tasks", str(TASKS)])
        jobs.append(["load", str(tmp / "theirs"), RUNS[run][0], _suite(run), str(tmp / "loaded-theirs" / run)])
    (tmp / "theirs.json").write_text(json.dumps(jobs))
    return start_driver("each", str(tmp / "theirs.json"), log=tmp / "theirs.log")


def decision_records(tmp: Path, action: str) -> list[dict]:
    lines = (tmp / ".checks" / "decisions.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["action"] == action and not r.get("dry_run")]


def test_a_batch_of_real_methods_publishes_what_tabarena_reads_as_its_own(tmp_path, s3_env, s3_proxy):
    methods_py = write_plan(tmp_path, (*GOOD, BLOCKED))
    theirs_done = tabarenas_own(tmp_path)

    code, doc = publish(tmp_path)
    assert code == 1, doc  # a method blocked, the others published
    steps = steps_of(doc)
    for run in GOOD:
        assert steps[run] == {"process": "done", "upload dry-run": "done", "upload": "done", "register": "done"}
    assert steps[BLOCKED] == {"process": "blocked"}
    refused = next(m for m in doc["methods"] if m["name"] == BLOCKED)["steps"][0]
    assert "TA301" in refused["codes"] and "[3 findings]" in refused["detail"]  # one per file, cut to one line
    assert steps["(batch)"] == {"log": "not-run"}  # never a log entry for a batch half-published
    (register,) = decision_records(tmp_path, "register")
    assert register["target"] == ",".join(f"{RUNS[run][0]}@{_suite(run)}" for run in GOOD)
    registered = methods_py.read_text()
    for run in GOOD:
        assert f"from tabarena.models.{run}.info import {run}\n" in registered
    assert BLOCKED not in registered
    published = {key.split("/")[2] for key in remote_objects(s3_env)}
    assert published == {_suite(run) for run in GOOD}

    write_plan(tmp_path, GOOD)  # the refused run is dropped: nothing of it can be published
    code, doc = publish(tmp_path)
    assert code == 0, doc
    for run in GOOD:
        assert steps_of(doc)[run] == {"process": "skipped", "upload": "skipped", "register": "done"}
    assert steps_of(doc)["(batch)"] == {"log": "done"}
    log = (tmp_path / "tabarena" / ARENA_LOG).read_text()
    assert f"**Model(s):** {', '.join(RUNS[run][0] for run in GOOD)}\n" in log  # the batch's methods, not one run's
    assert f"metadata variables {', '.join(f'`{run}`' for run in GOOD)}\n" in log
    s3_proxy.forwarded.clear()
    code, doc = publish(tmp_path)
    assert code == 0, doc
    assert {m: s.get("process") for m, s in steps_of(doc).items() if m in GOOD} == dict.fromkeys(GOOD, "skipped")
    assert {m: s.get("upload") for m, s in steps_of(doc).items() if m in GOOD} == dict.fromkeys(GOOD, "skipped")
    assert "registered already" in doc["methods"][0]["steps"][-1]["detail"]
    assert "exists" in next(m for m in doc["methods"] if m["name"] == "(batch)")["steps"][0]["detail"]
    assert s3_proxy.puts() == [], "a published method was sent again"
    assert methods_py.read_text() == registered, "methods.py was edited again"
    assert (tmp_path / "tabarena" / ARENA_LOG).read_text() == log and log.count("real-batch-2026") == 1
    assert len(decision_records(tmp_path, "log")) == 2  # one entry written, one rerun that found it

    downloaded = tmp_path / "downloaded"
    loads = []
    for run in GOOD:
        download(s3_env, f"cache/{_rel(run).as_posix()}/", downloaded)
        (downloaded / _rel(run) / "results_checksums.json").unlink()  # the upload's own addition, for its reader
        loads.append(["load", str(downloaded), RUNS[run][0], _suite(run), str(tmp_path / "loaded-downloaded" / run)])
    (tmp_path / "downloaded.json").write_text(json.dumps(loads))
    theirs_done()
    for run in GOOD:
        assert compare_caches(downloaded / _rel(run), tmp_path / "theirs" / _rel(run)) == [], run
    start_driver("each", str(tmp_path / "downloaded.json"), log=tmp_path / "downloaded.log")()
    for run in GOOD:
        assert compare_loaded(tmp_path / "loaded-downloaded" / run, tmp_path / "loaded-theirs" / run) == [], run
        assert (tmp_path / "loaded-downloaded" / run / "results.parquet").is_file(), "TabArena read no results"
