"""``checks tabarena publish PLAN``: a batch of methods against the real S3 server (moto on loopback, behind the
fault proxy), with a method blocked, one whose upload fails half-way, one that stalls, and a rerun that
finishes the job; the plan's errors; the watchdog on real child processes; the summary's formats."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import tomllib
from pathlib import Path
from xml.etree import ElementTree as ET

import jsonschema
import pytest
from tests.support.s3_fixtures import PREFIX, remote_objects

from tests.support.reliability_fixtures import run_checks, start_checks
from tests.support.batch_fakes import RUNNER
from tests.support.paths import CHILD_PYTHONPATH

from checks.testing import run_cli
from tabarena_checks.publish import batch_cli, batch_plan, batch_report, batch_steps
from tabarena_checks.publish.batch import MethodOutcome
from tabarena_checks.publish.batch_steps import Children, StepResult, judged
from tabarena_checks.synth.generate import generate_run
from tabarena_checks.testing.facts import ARENA_LOG, ARENA_SRC, arena_repo

ROOT = Path(__file__).resolve().parents[2]
#: one config, one task, one fold, two bags: a run processed in a few seconds
SMALL_RUN = {
    "configs": 1,
    "folds": 1,
    "tasks": (363612,),
    "bag_children": 2,
    "validation_protocol": "8x1",
    "array_scale": 0.1,
}
SCHEMA = json.loads((ROOT / "tabarena_checks" / "publish" / "batch.schema.json").read_text())

INFO = """from tabarena.models import MethodMetadata

{var} = MethodMetadata.config(method={method!r}, suite={suite!r}, ag_key={ag_key!r}, can_hpo=False, is_bag=True,
                             compute="cpu", validation_protocol="8x1", date="2026-01-01", verified=False,
                             cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}})
"""


def write_method(tmp: Path, method: str, *, ag_key: str | None = None) -> tuple[Path, str]:
    """A small generated run of ``method`` and its info.py; (data directory, reference)."""
    data = tmp / "runs" / method / "data"
    if not data.is_dir():
        names = {"method": method, "name_prefix": f"TA-{method}", "ag_key": f"TA-{method.upper()}"}
        generate_run(data.parent, **SMALL_RUN, **names)
    info = tmp / "info" / method.lower() / "info.py"
    info.parent.mkdir(parents=True, exist_ok=True)
    var = method.lower()
    suite = f"{var}-2026"
    info.write_text(INFO.format(var=var, method=method, suite=suite, ag_key=ag_key or f"TA-{method.upper()}"))
    return data, f"info/{var}/info.py:{var}"


def write_plan(tmp: Path, methods: list[str], *, steps: str = '["process", "upload"]', extra: str = "") -> Path:
    lines = ['cache_root = "cache"', f"steps = {steps}", extra]
    for method in methods:
        _, ref = write_method(tmp, method)
        lines += ["", "[[methods]]", f'data = "runs/{method}/data"', f'method_metadata = "{ref}"']
    plan = tmp / "plan.toml"
    plan.write_text("\n".join(lines) + "\n")
    return plan


def publish(tmp: Path, *args: str):
    result = run_cli(["tabarena", "publish", "plan.toml", "--format", "json", *args], cwd=tmp)
    doc = json.loads(result.stdout) if result.stdout.strip().startswith("{") else None
    return result, doc


def steps_of(doc: dict) -> dict[str, dict[str, str]]:
    return {m["name"]: {s["step"]: s["status"] for s in m["steps"]} for m in doc["methods"]}


def key_root(method: str) -> str:
    return f"{PREFIX}/artifacts/{method.lower()}-2026/methods/{method}"


def test_a_batch_with_blocked_failed_and_stalled_methods_is_finished_by_a_rerun(
    tmp_path, s3_env, s3_proxy, monkeypatch
):
    monkeypatch.setenv("CHECKS_S3_MAX_ATTEMPTS", "2")
    write_plan(tmp_path, ["Nori", "Foo", "Bar", "Baz"])
    write_method(tmp_path, "Foo", ag_key="TA-SOMETHING-ELSE")  # the declaration disagrees with the results

    def faults(method: str, path: str):
        if method == "PUT" and "/Bar/raw.zip" in path:
            return 500  # after the results and processed.zip were sent: half-way
        if method == "PUT" and "/Baz/" in path and ".checks-lock" not in path:
            return "hang"
        return None

    s3_proxy.fault = faults
    started = time.monotonic()
    result, doc = publish(tmp_path, "--no-dry-run", "--stall-timeout", "3")
    assert result.exit_code == 4, result.stdout + result.stderr
    steps = steps_of(doc)
    assert steps["Nori"] == {"process": "done", "upload dry-run": "done", "upload": "done"}
    assert steps["Foo"] == {"process": "blocked"}
    assert steps["Bar"] == {"process": "done", "upload dry-run": "done", "upload": "failed"}
    assert steps["Baz"] == {"process": "done", "upload dry-run": "done", "upload": "stalled"}
    foo = next(m for m in doc["methods"] if m["name"] == "Foo")["steps"][0]
    assert foo["codes"] and all(code.startswith("TA") for code in foo["codes"])
    baz = next(m for m in doc["methods"] if m["name"] == "Baz")["steps"][-1]
    assert "no progress" in baz["detail"]
    assert time.monotonic() - started < 100, "the stalled step was not stopped by the watchdog"
    for line in ("DONE Nori process", "BLOCKED Foo process: TA", "FAILED Bar upload: ", "STALLED Baz upload: "):
        assert line in result.stderr
    listed = remote_objects(s3_env)
    assert f"{key_root('Nori')}/metadata.yaml" in listed
    assert any(k.startswith(key_root("Bar")) for k in listed), "Bar's upload did not get half-way"
    for method in ("Foo", "Bar", "Baz"):  # never half-published: metadata.yaml (how readers find it) is absent
        assert f"{key_root(method)}/metadata.yaml" not in listed
    assert not any(k.startswith(key_root("Foo")) for k in listed)

    s3_proxy.fault = None
    s3_proxy.released.set()
    write_method(tmp_path, "Foo")  # the declaration fixed
    s3_proxy.forwarded.clear()
    result, doc = publish(tmp_path, "--no-dry-run", "--stall-timeout", "30")
    assert result.exit_code == 0, result.stdout + result.stderr
    steps = steps_of(doc)
    assert steps["Nori"] == {"process": "skipped", "upload": "skipped"}
    assert steps["Foo"] == {"process": "done", "upload dry-run": "done", "upload": "done"}
    assert steps["Bar"] == {"process": "skipped", "upload dry-run": "done", "upload": "done"}
    assert steps["Baz"] == {"process": "skipped", "upload dry-run": "done", "upload": "done"}
    assert not any("/Nori/" in path for path in s3_proxy.puts()), "a done upload was sent again"
    listed = remote_objects(s3_env)
    for method in ("Nori", "Foo", "Bar", "Baz"):
        assert f"{key_root(method)}/metadata.yaml" in listed


def test_a_method_never_processed_is_never_uploaded(tmp_path, s3_env, s3_proxy):
    write_plan(tmp_path, ["Nori"], steps='["upload"]')
    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert steps_of(doc) == {"Nori": {"upload": "blocked"}}
    assert "processing is not verified" in doc["methods"][0]["steps"][0]["detail"]
    assert s3_proxy.puts() == []


def test_a_dry_run_batch_processes_and_only_plans_the_uploads(tmp_path, s3_env, s3_proxy):
    write_plan(tmp_path, ["Nori", "Foo"])
    result, doc = publish(tmp_path, "--output-file", "summary.json")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert json.loads((tmp_path / "summary.json").read_text()) == doc
    assert steps_of(doc) == {
        "Nori": {"process": "done", "upload dry-run": "done"},
        "Foo": {"process": "done", "upload dry-run": "done"},
    }
    assert doc["dry_run"] is True
    assert s3_proxy.puts() == []
    assert (tmp_path / "cache" / "artifacts" / "nori-2026" / "methods" / "Nori" / "metadata.yaml").is_file()


def test_a_step_done_under_another_configuration_is_judged_again(tmp_path):
    write_plan(tmp_path, ["Nori"], steps='["process"]')
    assert steps_of(publish(tmp_path)[1]) == {"Nori": {"process": "done"}}
    assert steps_of(publish(tmp_path)[1]) == {"Nori": {"process": "skipped"}}
    (tmp_path / "rules.toml").write_text('select = ["ALL"]\nignore = ["TA102"]\n')  # a rule less in the gate
    result, doc = publish(tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert steps_of(doc) == {"Nori": {"process": "done"}}  # judged again, the cache kept as it was
    assert steps_of(publish(tmp_path)[1]) == {"Nori": {"process": "skipped"}}


# --------------------------------------------------------------------------- the plan


PLAN_ERRORS = {
    "a missing directory": (
        '[[methods]]\ndata = "runs/Gone/data"\nmethod_metadata = "info/nori/info.py:nori"\n',
        "plan.toml:2: methods[1].data: the directory",
    ),
    "an unreadable info.py": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/none/info.py:nori"\n',
        "plan.toml:3: methods[1].method_metadata:",
    ),
    "a variable that does not exist": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nope"\n',
        "plan.toml:3: methods[1].method_metadata:",
    ),
    "a step twice": (
        'cache_root = "cache"\n\n[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n'
        'steps = ["process", "upload", "process"]\n',
        "plan.toml:6: methods[1].steps: the step 'process' is named twice",
    ),
    "an unknown key": (
        'cache_rot = "cache"\n[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n',
        "plan.toml:1: plan: unknown key 'cache_rot'; did you mean 'cache_root'?",
    ),
    "a misspelt step": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\nsteps = ["uplaod"]\n',
        "plan.toml:4: methods[1].steps: unknown step 'uplaod'; did you mean 'upload'? (known: process, upload",
    ),
    "register without a checkout": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\nsteps = ["register"]\n',
        "plan.toml:1: the steps register edit a TabArena checkout",
    ),
    "not TOML": ("cache_root = 'cache'\nsteps = = []\n", "plan.toml:2: not valid TOML"),
    "a method twice": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n\n'
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n',
        "plan.toml:5: the method 'Nori' is listed twice (first at line 1)",
    ),
    "one cache for two methods": (
        '[[methods]]\nname = "a"\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n\n'
        '[[methods]]\nname = "b"\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\n',
        "plan.toml:6: 'b' declares the same method and suite as the method at line 1 "
        "(both would write artifacts/nori-2026/methods/Nori in the cache and in R2)",
    ),
    "one method registered twice": (
        'repo = "."\nsteps = ["process", "register"]\n\n[[methods]]\ndata = "runs/Nori/data"\n'
        'method_metadata = "info/nori/info.py:nori"\n\n[[methods]]\nname = "rerun"\ndata = "runs/Nori/data"\n'
        'method_metadata = "info/nori/info.py:nori_rerun"\n',
        "plan.toml:8: 'rerun' and the method at line 4 both declare 'Nori' and both have the step register",
    ),
    "verified not a flag": (
        '[[methods]]\ndata = "runs/Nori/data"\nmethod_metadata = "info/nori/info.py:nori"\nverified = "yes"\n',
        "plan.toml:4: methods[1].verified: expected true or false",
    ),
}


@pytest.mark.parametrize("case", sorted(PLAN_ERRORS))
def test_a_wrong_plan_is_exit_2_naming_its_line_before_anything_runs(tmp_path, case):
    write_method(tmp_path, "Nori")
    info = tmp_path / "info" / "nori" / "info.py"  # and a rerun of Nori in a suite of its own
    info.write_text(
        info.read_text() + INFO.format(var="nori_rerun", method="Nori", suite="nori-2027", ag_key="TA-NORI")
    )
    text, message = PLAN_ERRORS[case]
    (tmp_path / "plan.toml").write_text(text)
    result = run_cli(["tabarena", "publish", "plan.toml", "--no-dry-run"], cwd=tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / ".checks").exists(), "a step ran"
    assert not (tmp_path / "cache").exists()


def test_a_good_plan_reads_and_matches_the_schema(tmp_path):
    plan = write_plan(
        tmp_path,
        ["Nori", "Foo"],
        steps='["process", "upload", "register", "log"]',
        extra='repo = "."\n[log]\nbenchmark_name = "nori-foo"\n',
    )
    parsed = batch_plan.read(plan)
    assert [m.name for m in parsed.methods] == ["Nori", "Foo"]
    assert parsed.methods[0].steps == ("process", "upload", "register", "log")
    assert parsed.log.run == (tmp_path / "runs" / "Nori" / "data").resolve()
    jsonschema.Draft7Validator(SCHEMA).validate(tomllib.loads(plan.read_text()))


def test_the_schema_lists_exactly_the_keys_the_plan_accepts():
    assert set(SCHEMA["properties"]) == batch_plan.TOP_KEYS
    assert set(SCHEMA["properties"]["log"]["properties"]) == batch_plan.LOG_KEYS
    assert set(SCHEMA["properties"]["methods"]["items"]["properties"]) == batch_plan.METHOD_KEYS
    assert SCHEMA["definitions"]["steps"]["items"]["enum"] == list(batch_plan.STEPS)


# --------------------------------------------------------------------------- the watchdog


@pytest.fixture(params=[True, False], ids=["forked", "fresh"])
def children(request):
    """Steps run by :mod:`tests.support.batch_fakes`, from a server forked from this process or started afresh."""
    children = Children(runner=RUNNER, fork=request.param)
    yield children
    children.close()


def test_a_silent_idle_step_is_stopped_as_stalled_with_what_it_said_last(tmp_path, children):
    started = time.monotonic()
    result = children.run("upload", ["stall"], cwd=tmp_path, env={}, stall_after=1.5)
    assert result.status == "stalled"
    assert "sending raw.zip" in result.detail
    assert time.monotonic() - started < 20


def test_a_step_that_computes_without_printing_is_not_stalled(tmp_path, children):
    result = children.run("process", ["busy"], cwd=tmp_path, env={}, stall_after=2)
    assert result.status == "done"


def test_each_step_is_a_fresh_child_of_one_server_and_leaves_nothing_behind(tmp_path, children):
    how = {"cwd": tmp_path, "env": {}, "stall_after": 5}
    first, second = (children.run(f"step {n}", [what], **how) for n, what in ((1, "import"), (2, "quick")))
    assert children.run("upload", ["stall"], cwd=tmp_path, env={}, stall_after=1.5).status == "stalled"
    after = children.run("step 3", ["quick"], **how)
    children.close()
    (pid1, server1, imported1), (pid2, server2, imported2), (pid3, server3, _) = (
        r.detail.split() for r in (first, second, after)
    )
    assert first.status == second.status == after.status == "done"
    assert len({pid1, pid2, pid3}) == 3 and server1 == server2 == server3  # forked from one server
    assert (imported1, imported2) == ("True", "False")  # what a step imported went with it
    assert not Path(f"/proc/{server1}").exists(), "the step server outlived the batch"


def test_a_step_that_dies_fails_that_step_only(tmp_path, children):
    died = children.run("process", ["die"], cwd=tmp_path, env={}, stall_after=30)
    assert (died.status, died.exit_code) == ("failed", None)
    assert died.detail == "its process ended (exit 9); its last words: decoding results.pkl"
    assert children.run("upload", ["quick"], cwd=tmp_path, env={}, stall_after=30).status == "done"


def test_a_step_server_that_was_killed_is_started_again_for_the_next_step(tmp_path, children):
    how = {"cwd": tmp_path, "env": {}, "stall_after": 30}
    server = int(children.run("step 1", ["quick"], **how).detail.split()[1])
    os.kill(server, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not children._server.gone and time.monotonic() < deadline:
        time.sleep(0.01)
    again = children.run("step 2", ["quick"], **how)
    children.close()
    assert again.status == "done" and int(again.detail.split()[1]) != server


def _cmdline(pid: int | str) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_a_process_running_threads_starts_its_step_server_afresh(tmp_path):
    children, stop = Children(runner=RUNNER), threading.Event()
    busy = threading.Thread(target=stop.wait)  # a thread of the caller's (an embedded S3 server, a pool)
    busy.start()
    try:
        result = children.run("step", ["quick"], cwd=tmp_path, env={}, stall_after=30)
        server = result.detail.split()[1]
        assert result.status == "done" and "-m tabarena_checks.publish.batch_fork" in _cmdline(server)
    finally:
        stop.set()
        busy.join()
        children.close()


def test_steps_run_the_single_commands_one_after_another_each_with_its_own_output(tmp_path):
    children, said = Children(), {}
    how = {"cwd": tmp_path, "env": dict(os.environ), "stall_after": 60}
    version = children.command(["--version"], on_line=said.setdefault("version", []).append, **how)
    args = ["run", "register", "--repo", str(tmp_path / "nowhere"), "--format", "json"]
    result = children.run("register", args, on_line=said.setdefault("register", []).append, **how)
    single = run_cli(args, cwd=tmp_path)
    children.close()
    assert (version.code, version.stdout) == (0, run_cli(["--version"]).stdout)
    assert result.status == "failed" and result.exit_code == single.exit_code == 2
    assert (
        result.detail == single.stderr.strip().splitlines()[-1] == "checks: error: Missing option '--method-metadata'."
    )
    assert said == {"version": [], "register": [result.detail]}  # each line with the command that printed it


# --------------------------------------------------------------------------- the summary


def _outcomes() -> list[MethodOutcome]:
    return [
        MethodOutcome("Nori", [StepResult("process", "done", 41.0, 0), StepResult("upload", "skipped", detail="x")]),
        MethodOutcome("Foo", [StepResult("process", "blocked", 2.0, 1, "TA110 ag_key differs", ("TA110",))]),
        MethodOutcome("Bar", [StepResult("upload", "stalled", 600.0, None, "no progress for 600 s")]),
    ]


def _doc() -> dict:
    return batch_report.as_dict(_outcomes(), plan="plan.toml", dry_run=False, code=4, seconds=650.0, jobs=1)


def test_junit_has_one_testcase_per_method_and_step():
    root = ET.fromstring(batch_report.render("junit", _doc()))
    cases = root.findall(".//testcase")
    assert [(c.get("classname"), c.get("name")) for c in cases] == [
        ("publish.Nori", "process"),
        ("publish.Nori", "upload"),
        ("publish.Foo", "process"),
        ("publish.Bar", "upload"),
    ]
    assert cases[0].find("*") is None
    assert cases[1].find("skipped") is not None
    assert cases[2].find("failure").get("message") == "TA110 ag_key differs"
    assert cases[3].find("error").get("type") == "stalled"


def test_sarif_github_and_human_name_every_step_that_did_not_pass():
    sarif = json.loads(batch_report.render("sarif", _doc()))
    results = sarif["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TA110", "publish-upload-stalled"]
    github = batch_report.render("github", _doc()).splitlines()
    assert github[0].startswith("::error title=Foo process blocked::TA110")
    assert github[1].startswith("::error title=Bar upload stalled::")
    human = batch_report.render("human", _doc())
    assert "DONE     Nori process (41 s)" in human
    assert "exit 4" in human.splitlines()[-1]


def test_a_blocked_steps_detail_cuts_each_verdict_and_counts_its_findings():
    unreadable = {"message": "data/x.pkl:1:1: cannot be read: refused to load a class", "path": "data/x.pkl"}
    report = {
        "verdicts": [
            {
                "code": "TA301",
                "blocks": True,
                "message": "; ".join([unreadable["message"]] * 1000),
                "findings": [unreadable] * 1000,
            },
            {
                "code": "TA302",
                "blocks": True,
                "message": "no readable result",
                "findings": [{"message": "no readable result"}],
            },
            {"code": "TA101", "blocks": False, "message": "not blocking", "findings": [{"message": "not blocking"}]},
        ]
    }
    result = judged("process", 1, report, "", 1.0)
    assert (result.status, result.codes) == ("blocked", ("TA301", "TA302"))
    first, second = result.detail.split("... [1000 findings]; ")
    assert first.startswith("TA301 data/x.pkl:1:1: cannot be read") and len(first) <= batch_steps.DETAIL_CHARS
    assert second == "TA302 no readable result"


def test_event_lines_are_one_line_each_and_show_control_characters():
    assert batch_report.event_line("Nori", StepResult("process", "done", 41.2, 0)) == "DONE Nori process 41 s"
    line = batch_report.event_line("Foo", StepResult("upload", "failed", 1.0, 4, "TA407 bad\n::error::forged"))
    assert line.startswith("FAILED Foo upload: TA407 bad") and "\n" not in line


# --------------------------------------------------------------------------- register and log


def test_register_and_log_wait_for_the_uploads_and_the_log_for_every_method(tmp_path, s3_env, s3_proxy):
    plan = write_plan(tmp_path, ["Nori", "Foo"], steps='["process", "upload", "register", "log"]')
    repo = arena_repo(
        tmp_path / "tabarena",
        {m.lower(): (tmp_path / "info" / m.lower() / "info.py").read_text() for m in ("Nori", "Foo")},
    )
    infos = {m: repo / ARENA_SRC / "models" / m.lower() / "info.py" for m in ("Nori", "Foo")}
    text = plan.read_text()
    for m, path in infos.items():
        text = text.replace(f"info/{m.lower()}/info.py", str(path))
    plan.write_text('repo = "tabarena"\n' + text + '\n[log]\nbenchmark_name = "nori-foo-2026"\n')
    good_foo = infos["Foo"].read_text()
    infos["Foo"].write_text(good_foo.replace("'TA-FOO'", "'TA-ELSE'"))  # Foo is blocked

    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 1, result.stdout + result.stderr
    steps = steps_of(doc)
    assert steps["Nori"] == {"process": "done", "upload dry-run": "done", "upload": "done", "register": "done"}
    assert steps["Foo"] == {"process": "blocked", "register": "not-run"}
    assert steps["(batch)"] == {"log": "not-run"}
    methods = (repo / ARENA_SRC / "contexts" / "tabarena" / "methods.py").read_text()
    assert "from tabarena.models.nori.info import nori" in methods and "foo" not in methods
    assert "nori-foo-2026" not in (repo / ARENA_LOG).read_text()

    infos["Foo"].write_text(good_foo)
    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    steps = steps_of(doc)
    assert steps["Nori"] == {"process": "skipped", "upload": "skipped", "register": "done"}
    assert steps["Foo"] == {"process": "done", "upload dry-run": "done", "upload": "done", "register": "done"}
    assert steps["(batch)"] == {"log": "done"}
    methods = (repo / ARENA_SRC / "contexts" / "tabarena" / "methods.py").read_text()
    assert methods.count("import nori") == 1 and "from tabarena.models.foo.info import foo" in methods
    assert (repo / ARENA_LOG).read_text().count("nori-foo-2026") == 1


#: a sitecustomize for the batch (and the steps it forks): an audit hook noting each write to a methods.py and each rename onto one
WRITE_WATCH = """import os, sys

def _watch(event, args):
    if event == "os.rename" and str(args[1]).endswith("methods.py"):
        note = "rename"
    elif event == "open" and str(args[0]).endswith("methods.py") and (
        (isinstance(args[1], str) and set(args[1]) & set("wax+"))
        or (isinstance(args[2], int) and args[2] & (os.O_WRONLY | os.O_RDWR))
    ):
        note = "open-for-write"
    else:
        return
    with open(os.environ["METHODS_WRITES"], "a") as log:
        log.write(f"{note} {os.getpid()}\\n")

sys.addaudithook(_watch)
"""


def _watch_methods_writes(tmp_path: Path, monkeypatch) -> Path:
    """The file a batch run as a child process (:func:`publish_in_a_child`) and its steps note their writes of
    methods.py in (through an audit hook)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(WRITE_WATCH)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(hook), os.environ.get("PYTHONPATH")])))
    writes = tmp_path / "methods-writes.log"
    monkeypatch.setenv("METHODS_WRITES", str(writes))
    return writes


def plan_with_checkout(tmp_path: Path, names: tuple[str, ...], steps: str) -> Path:
    """A plan of ``names`` whose info.py files are in a TabArena checkout ``tabarena`` (the plan's repo); its methods.py."""
    plan = write_plan(tmp_path, list(names), steps=steps)
    repo = arena_repo(
        tmp_path / "tabarena", {m.lower(): (tmp_path / "info" / m.lower() / "info.py").read_text() for m in names}
    )
    text = plan.read_text()
    for m in names:
        text = text.replace(f"info/{m.lower()}/info.py", str(repo / ARENA_SRC / "models" / m.lower() / "info.py"))
    plan.write_text('repo = "tabarena"\n' + text)
    return repo / ARENA_SRC / "contexts" / "tabarena" / "methods.py"


def decision_records(tmp_path: Path, action: str) -> list[dict]:
    log = tmp_path / ".checks" / "decisions.jsonl"
    lines = log.read_text().splitlines() if log.exists() else []
    return [r for r in map(json.loads, lines) if r["action"] == action]


def test_a_method_whose_upload_is_not_verified_is_never_registered(tmp_path):
    methods_py = plan_with_checkout(tmp_path, ("Nori",), '["register"]')
    before = methods_py.read_text()
    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 1, result.stdout + result.stderr
    assert steps_of(doc) == {"Nori": {"register": "blocked"}}
    assert "the upload is not verified" in doc["methods"][0]["steps"][0]["detail"]
    assert methods_py.read_text() == before
    assert decision_records(tmp_path, "register") == []


def publish_in_a_child(tmp: Path, *args: str):
    """``checks tabarena publish`` as a process of its own (its interpreter starts with the environment's hooks)."""
    result = run_checks(["tabarena", "publish", "plan.toml", "--format", "json", *args], cwd=tmp)
    return result, json.loads(result.stdout)


def test_the_batch_registers_its_methods_in_one_atomic_write_and_a_rerun_adds_none(
    tmp_path, s3_env, s3_proxy, monkeypatch
):
    names = ("Nori", "Foo", "Bar")
    methods_py = plan_with_checkout(tmp_path, names, '["process", "upload", "register"]')
    writes = _watch_methods_writes(tmp_path, monkeypatch)

    result, doc = publish_in_a_child(tmp_path, "--no-dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert {m: s["register"] for m, s in steps_of(doc).items()} == dict.fromkeys(names, "done")
    methods = methods_py.read_text()
    for m in names:
        assert f"from tabarena.models.{m.lower()}.info import {m.lower()}\n" in methods
    assert writes.read_text().split()[::2] == ["rename"], "methods.py was not written once, whole, by a rename"
    (register,) = decision_records(tmp_path, "register")
    assert register["target"] == "Nori@nori-2026,Foo@foo-2026,Bar@bar-2026" and register["outcome"] == "ran"

    writes.unlink()
    result, doc = publish_in_a_child(tmp_path, "--no-dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert steps_of(doc)["Foo"] == {"process": "skipped", "upload": "skipped", "register": "done"}
    assert "registered already" in next(m for m in doc["methods"] if m["name"] == "Foo")["steps"][-1]["detail"]
    assert methods_py.read_text() == methods and not writes.exists()


# --------------------------------------------------------------------------- the same gate in every step


def test_the_steps_load_the_plugins_named_on_the_command_line(tmp_path, monkeypatch):
    write_plan(tmp_path, ["Nori"], steps='["process"]')
    monkeypatch.setenv("PYTHONPATH", CHILD_PYTHONPATH)
    result = run_cli(["-p", "toy_plugin", "tabarena", "publish", "plan.toml", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert steps_of(json.loads(result.stdout)) == {"Nori": {"process": "done"}}  # the steps load TOY001 too


def test_a_step_that_would_judge_with_fewer_rules_stops_the_batch_before_it_runs(tmp_path, monkeypatch):
    write_plan(tmp_path, ["Nori"], steps='["process"]')
    monkeypatch.setenv("PYTHONPATH", CHILD_PYTHONPATH)
    monkeypatch.setattr(batch_cli, "_root_args", lambda app: ())  # a batch that forgot to pass on its -p
    result = run_cli(["-p", "toy_plugin", "tabarena", "publish", "plan.toml"], cwd=tmp_path)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "the steps would not load the rules this command loads (missing in a step: TOY001, TOY002" in result.stderr
    assert not (tmp_path / ".checks").exists()


# --------------------------------------------------------------------------- interrupted


def _running_under(folder: Path) -> list[str]:
    """The processes working in ``folder`` (a batch and its steps run there), as ``PID COMM``."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and Path(os.readlink(entry / "cwd")) == folder:
                found.append(f"{entry.name} {(entry / 'comm').read_text().strip()}")
        except OSError:
            continue
    return found


def batch_hung_in_an_upload(tmp_path: Path, s3_proxy):
    """A batch of Nori and Foo running as a child process, once Foo's upload hangs on its first object."""
    write_plan(tmp_path, ["Nori", "Foo"])
    s3_proxy.fault = lambda method, path: "hang" if method == "PUT" and "/Foo/results" in path else None
    proc = start_checks(["tabarena", "publish", "plan.toml", "--no-dry-run"], cwd=tmp_path)
    deadline = time.monotonic() + 180
    while not any("/Foo/results" in path for _, path in s3_proxy.log):
        assert time.monotonic() < deadline and proc.poll() is None, "Foo's upload never started"
        time.sleep(0.1)
    (step,) = [p.split()[0] for p in _running_under(tmp_path) if p.endswith(" checks upload")]
    server = (Path("/proc") / step / "stat").read_text().rpartition(")")[2].split()[1]
    assert _cmdline(server) == _cmdline(proc.pid), "the batch's step server was not forked from it"
    return proc


def test_ctrl_c_mid_upload_leaves_the_method_unpublished_and_a_rerun_finishes_it(tmp_path, s3_env, s3_proxy):
    proc = batch_hung_in_an_upload(tmp_path, s3_proxy)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends to the batch's process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "checks: aborted" in err, err
    assert not _running_under(tmp_path), "a step outlived the interrupted batch"
    s3_proxy.released.set()
    s3_proxy.fault = None
    time.sleep(1)
    listed = remote_objects(s3_env)
    assert f"{key_root('Nori')}/metadata.yaml" in listed
    assert f"{key_root('Foo')}/metadata.yaml" not in listed, "the interrupted method was published anyway"

    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert steps_of(doc) == {
        "Nori": {"process": "skipped", "upload": "skipped"},
        "Foo": {"process": "skipped", "upload dry-run": "done", "upload": "done"},
    }
    assert f"{key_root('Foo')}/metadata.yaml" in remote_objects(s3_env)


def test_on_a_terminal_the_batch_is_a_live_table_of_its_methods(tmp_path):
    write_plan(tmp_path, ["Nori"], steps='["process"]')
    result = run_cli(["tabarena", "publish", "plan.toml"], cwd=tmp_path, env={"CHECKS_PROGRESS": "always"})
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "START " not in result.stderr  # the table, not the event lines
    header = next(line for line in result.stderr.splitlines() if "method" in line and "elapsed" in line)
    assert "state" in header
    row = next(line for line in result.stderr.splitlines() if "Nori" in line)
    assert "process" in row and "done" in row


def test_sigkill_mid_upload_leaves_the_method_whole_or_absent_and_a_rerun_finishes_it(tmp_path, s3_env, s3_proxy):
    proc = batch_hung_in_an_upload(tmp_path, s3_proxy)
    proc.kill()  # the batch alone: its steps live in sessions of their own
    proc.communicate(timeout=30)
    s3_proxy.fault = None
    s3_proxy.released.set()
    deadline = time.monotonic() + 120
    while _running_under(tmp_path):  # the orphaned upload ends on its own
        assert time.monotonic() < deadline, "a step of the killed batch never ended"
        time.sleep(0.2)
    listed = remote_objects(s3_env)
    whole = {k.replace(key_root("Nori"), key_root("Foo")) for k in listed if k.startswith(key_root("Nori"))}
    foo = {k for k in listed if k.startswith(key_root("Foo"))}
    assert f"{key_root('Foo')}/metadata.yaml" not in foo or foo == whole, f"Foo half-published: {sorted(foo)}"

    result, doc = publish(tmp_path, "--no-dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert steps_of(doc)["Nori"] == {"process": "skipped", "upload": "skipped"}
    assert steps_of(doc)["Foo"]["process"] == "skipped"
    assert {k for k in remote_objects(s3_env) if k.startswith(key_root("Foo"))} == whole
