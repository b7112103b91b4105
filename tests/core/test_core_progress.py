"""Progress bars: drawn for long steps on a terminal, silent off one or with -q, cheap per call."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading

from tests.support.s3_fixtures import make_method_cache

from checks import progress
from checks.testing import run_cli
from tabarena_checks.testing import tabarena_run
from tabarena_checks.testing.commands import process_args, upload_args


def plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


class FakeProgress:
    def __init__(self):
        self.calls: list[float] = []

    def advance(self, task, amount):
        self.calls.append(amount)


def test_advance_is_summed_and_handed_over_at_most_every_interval(monkeypatch):
    clock = iter(i * 0.001 for i in range(10_000))
    monkeypatch.setattr(progress.time, "monotonic", lambda: next(clock))
    fake = FakeProgress()
    counter = progress._Counter(fake, task=0)
    for _ in range(5000):
        counter(2)
    counter.flush()
    assert sum(fake.calls) == 10_000
    assert len(fake.calls) <= 5000 * 0.001 / progress.INTERVAL + 2


def test_no_bar_off_a_terminal_and_none_when_turned_off(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)
    assert not progress.enabled()  # pytest's stderr is no terminal
    monkeypatch.setenv(progress.ENV, "always")
    assert progress.enabled()
    monkeypatch.setenv(progress.ENV, "never")
    assert not progress.enabled()


def synth(tmp_path, name, env):
    return run_cli(
        ["tabarena", "synth", str(tmp_path / name), "--configs", "2", "--tasks", "363612", "--folds", "2"],
        env=env,
        cwd=tmp_path,
    )


def test_synth_shows_its_files_on_a_terminal_only(tmp_path):
    quiet = synth(tmp_path, "a", {})
    assert quiet.exit_code == 0 and "results.pkl" not in quiet.stderr
    shown = synth(tmp_path, "b", {progress.ENV: "always"})
    assert shown.exit_code == 0, shown.stderr
    assert "synth" in shown.stderr and "4/4 results.pkl" in plain(shown.stderr)
    assert shown.stdout == quiet.stdout.replace(str(tmp_path / "a"), str(tmp_path / "b"))


def test_synth_and_inspect_take_q_as_the_judging_commands_do(tmp_path):
    """``-q`` stops the bars of `checks tabarena synth` and `checks inspect` even where they would be drawn."""
    always = {progress.ENV: "always"}
    shown = synth(tmp_path, "a", always)
    assert "4/4 results.pkl" in plain(shown.stderr), shown.stderr
    quiet = run_cli(
        ["tabarena", "synth", str(tmp_path / "b"), "--configs", "2", "--tasks", "363612", "--folds", "2", "-q"],
        env=always,
        cwd=tmp_path,
    )
    assert quiet.exit_code == 0, quiet.stderr
    assert quiet.stderr == "" and quiet.stdout == shown.stdout.replace(str(tmp_path / "a"), str(tmp_path / "b"))
    data = str(tmp_path / "a" / "data")
    inspected = {}
    for name, extra in (("shown", []), ("quiet", ["--quiet"])):  # a cache of its own each: both decode every file
        inspected[name] = run_cli(
            ["inspect", data, "--cache-dir", str(tmp_path / f"cache-{name}"), *extra], env=always, cwd=tmp_path
        )
        assert inspected[name].exit_code == 0, inspected[name].stderr
    assert re.search(r"(^|\r)decode +━[^\r\n]* 4/4 results\.pkl", plain(inspected["shown"].stderr), re.M), inspected[
        "shown"
    ].stderr
    assert inspected["quiet"].stderr == "" and inspected["quiet"].stdout == inspected["shown"].stdout


def test_upload_shows_bytes_unless_quiet(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    args = upload_args(tmp_path / "cache", "--no-dry-run")
    quiet = run_cli([*args, "-q"], env={progress.ENV: "always"}, cwd=tmp_path)
    assert quiet.exit_code == 0, quiet.stdout + quiet.stderr
    assert "upload to" not in quiet.stderr
    s3_env.delete_object(Bucket="tabarena", Key="cache/artifacts/dummy-2026-11-01/methods/Dummy/raw.zip")
    shown = run_cli(args, env={progress.ENV: "always"}, cwd=tmp_path)
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    assert "upload to tabarena" in shown.stderr
    assert re.search(r"\b(\d+)/\1 bytes\b", plain(shown.stderr)), plain(shown.stderr)  # every byte counted


def test_bars_open_together_share_one_display(monkeypatch, capfd):
    monkeypatch.setenv(progress.ENV, "always")
    with progress.bar("first", total=2, unit="files") as one:
        with progress.bar("second", total=3, unit="bytes") as two:
            one(2)
            two(3)
            assert progress._live[1] == 2  # one live display, two bars
    assert not progress._live  # stopped with the last bar
    err = plain(capfd.readouterr().err)
    assert "2/2 files" in err and "3/3 bytes" in err


def test_counted_yields_every_item_and_counts_their_weight(monkeypatch, capfd):
    monkeypatch.setenv(progress.ENV, "always")
    assert list(progress.counted([[1, 2], [3]], "groups", 3, unit="items", weight=len)) == [[1, 2], [3]]
    assert "3/3 items" in plain(capfd.readouterr().err)


def process_and_plan_upload(tmp_path, env, *extra):

    made = tabarena_run(tmp_path / "in", folds=3)
    processed = run_cli(
        process_args(made.run_dir, made.metadata_ref, made.cache_root, *extra),
        env=env,
        cwd=tmp_path,
    )
    assert processed.exit_code == 0, processed.stdout + processed.stderr
    planned = run_cli(
        [
            "run",
            "upload",
            "--verified",
            "--method-metadata",
            made.metadata_ref,
            "--cache-root",
            str(made.cache_root),
            *extra,
        ],
        env=env,
        cwd=tmp_path,
    )
    assert planned.exit_code == 0, planned.stdout + planned.stderr
    return processed, planned


def test_process_decode_copy_and_upload_zip_are_shown_unless_quiet_or_no_terminal(tmp_path):
    processed, planned = process_and_plan_upload(tmp_path / "shown", {progress.ENV: "always"})
    err = plain(processed.stderr)
    for step in ("decode", "process", "raw copy"):
        assert re.search(rf"(^|\r){step} +━[^\r\n]* 3/3 results\.pkl", err, re.M), (step, err)
    assert re.search(r"(^|\r)HPO trajectories +━[^\r\n]* (\d+)/\2 task splits", err, re.M), err
    zips = plain(planned.stderr)
    for part in ("processed", "raw"):
        assert re.search(rf"(^|\r)zip {part} +━[^\r\n]* ([\d.]+)/\2 (bytes|kB|MB)", zips, re.M), (part, zips)
    for env, extra in (({progress.ENV: "always"}, ["-q"]), ({}, [])):  # -q, and stderr no terminal
        silent = process_and_plan_upload(tmp_path / f"silent{len(extra)}", env, *extra)
        assert all(
            "results.pkl" not in r.stderr and "zip " not in r.stderr and "splits" not in r.stderr for r in silent
        ), silent


def test_a_real_terminal_gets_the_bars(tmp_path):
    """stderr a pseudo-terminal, nothing forced: the process bars are drawn there (stdout, a pipe, stays plain)."""

    made = tabarena_run(tmp_path / "in", folds=2)
    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != progress.ENV}
    child = subprocess.Popen(
        [sys.executable, "-m", "checks", *process_args(made.run_dir, made.metadata_ref, made.cache_root)],
        stdout=subprocess.PIPE,
        stderr=follower,
        cwd=tmp_path,
        env=env,
    )
    os.close(follower)
    drawn = bytearray()

    def drain():
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child closed the terminal
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    out, _ = child.communicate(timeout=120)
    reader.join(timeout=10)
    os.close(leader)
    assert child.returncode == 0, out.decode() + drawn.decode(errors="replace")
    err = plain(drawn.decode(errors="replace"))
    assert "raw copy" in err and "2/2 results.pkl" in err, err
    assert "\x1b[" not in out.decode()
