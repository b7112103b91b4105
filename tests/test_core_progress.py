"""Progress bars: drawn for long steps on a terminal, silent off one or with -q, cheap per call."""

from __future__ import annotations

import re

from s3_fixtures import make_method_cache, moto_s3, s3_env, s3_proxy  # noqa: F401  (fixtures are used by name)

from checks import progress
from checks.testing import run_cli


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
    return run_cli(["tabarena", "synth", str(tmp_path / name), "--configs", "2", "--tasks", "363612", "--folds", "2"],
                   env=env, cwd=tmp_path)


def test_synth_shows_its_files_on_a_terminal_only(tmp_path):
    quiet = synth(tmp_path, "a", {})
    assert quiet.exit_code == 0 and "results.pkl" not in quiet.stderr
    shown = synth(tmp_path, "b", {progress.ENV: "always"})
    assert shown.exit_code == 0, shown.stderr
    assert "synth" in shown.stderr and "4/4 results.pkl" in plain(shown.stderr)
    assert shown.stdout == quiet.stdout.replace(str(tmp_path / "a"), str(tmp_path / "b"))


def test_upload_shows_bytes_unless_quiet(tmp_path, s3_env, s3_proxy):
    make_method_cache(tmp_path / "cache")
    args = ["run", "upload", "--from-cache", "Dummy", "dummy-2026-11-01", "--cache-root", str(tmp_path / "cache"),
            "--no-dry-run"]
    quiet = run_cli([*args, "-q"], env={progress.ENV: "always"}, cwd=tmp_path)
    assert quiet.exit_code == 0, quiet.stdout + quiet.stderr
    assert "upload to" not in quiet.stderr
    s3_env.delete_object(Bucket="tabarena", Key="cache/artifacts/dummy-2026-11-01/methods/Dummy/raw.zip")
    shown = run_cli(args, env={progress.ENV: "always"}, cwd=tmp_path)
    assert shown.exit_code == 0, shown.stdout + shown.stderr
    assert "upload to tabarena" in shown.stderr
    assert re.search(r"\b(\d+)/\1 bytes\b", plain(shown.stderr)), plain(shown.stderr)  # every byte counted
