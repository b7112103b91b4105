"""checks.atomic: directory swaps that never leave half of anything, and the sweep after a kill."""

from __future__ import annotations

import os

import pytest

from checks import atomic

DEAD = 999_999_999  # no such process


def test_swap_replaces_whole_and_reports_it(tmp_path):
    target = tmp_path / "out"
    first = atomic.temp_sibling(target)
    first.mkdir()
    (first / "a").write_text("1")
    assert first.name == f".out.checks-tmp-{os.getpid()}"
    assert atomic.swap_in_dir(first, target) is False
    second = atomic.temp_sibling(target)
    second.mkdir()
    (second / "b").write_text("2")
    assert atomic.swap_in_dir(second, target) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and sorted(os.listdir(target)) == ["b"]


def test_a_failed_swap_puts_the_old_directory_back(tmp_path, monkeypatch):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old").write_text("kept")
    built = atomic.temp_sibling(target)
    built.mkdir()
    real, calls = os.replace, []

    def second_rename_fails(src, dst):
        calls.append(src)
        if len(calls) == 2:
            raise OSError("interrupted")
        return real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", second_rename_fails)
    with pytest.raises(OSError, match="interrupted"):
        atomic.swap_in_dir(built, target)
    assert (target / "old").read_text() == "kept"
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError, match="not a directory"):
        atomic.swap_in_dir(built, tmp_path / "file")


def test_sweep_clears_dead_runs_restores_and_spares_live_ones(tmp_path):
    target = tmp_path / "out"
    (tmp_path / f".out.checks-old-{DEAD}").mkdir()  # killed between the two renames: no target
    (tmp_path / f".out.checks-old-{DEAD}" / "x").write_text("previous")
    (tmp_path / f".out.checks-tmp-{DEAD}").mkdir()
    (tmp_path / f".out.checks-tmp-{DEAD}.root").mkdir()
    (tmp_path / f".out.checks-tmp-{DEAD - 1}").write_text("a file, not a directory")
    live = tmp_path / f".out.checks-tmp-{os.getpid()}"
    live.mkdir()
    (tmp_path / ".other.checks-tmp-1").mkdir()
    notes = atomic.sweep_siblings(target)
    assert any(n.startswith("restored the previous out from") for n in notes) and len(notes) == 4
    assert (target / "x").read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.checks-tmp-1", live.name, "out"]
    (tmp_path / f".out.checks-old-{DEAD}").mkdir()
    assert atomic.sweep_siblings(target) == [f"removed .out.checks-old-{DEAD}, left by an interrupted run"]
    assert atomic.sweep_siblings(tmp_path / "missing" / "out") == []


def test_write_text_replaces_atomically(tmp_path):
    path = tmp_path / "sub" / "f.txt"
    atomic.write_text(path, "one")
    atomic.write_text(path, "two")
    assert path.read_text() == "two" and os.listdir(path.parent) == ["f.txt"]
