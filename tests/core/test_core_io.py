"""checks.io: bounded reads, strict YAML, atomic file writes and directory swaps, and the sweep after a kill."""

from __future__ import annotations

import csv
import io as stdlib_io
import os
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from checks import io

DEAD = 999_999_999  # no such process


def test_swap_replaces_whole_and_reports_it(tmp_path):
    target = tmp_path / "out"
    first = io.temp_sibling(target)
    first.mkdir()
    (first / "a").write_text("1")
    assert first.name == f".out.checks-tmp-{os.getpid()}"
    assert io.swap_in_dir(first, target) is False
    second = io.temp_sibling(target)
    second.mkdir()
    (second / "b").write_text("2")
    assert io.swap_in_dir(second, target) is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and sorted(os.listdir(target)) == ["b"]


def test_a_failed_swap_puts_the_old_directory_back(tmp_path, monkeypatch):
    target = tmp_path / "out"
    target.mkdir()
    (target / "old").write_text("kept")
    built = io.temp_sibling(target)
    built.mkdir()
    real, calls = os.replace, []

    def second_rename_fails(src, dst):
        calls.append(src)
        if len(calls) == 2:
            raise OSError("interrupted")
        return real(src, dst)

    monkeypatch.setattr(io.os, "replace", second_rename_fails)
    with pytest.raises(OSError, match="interrupted"):
        io.swap_in_dir(built, target)
    assert (target / "old").read_text() == "kept"
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError, match="not a directory"):
        io.swap_in_dir(built, tmp_path / "file")


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
    notes = io.sweep_siblings(target)
    assert any(n.startswith("restored the previous out from") for n in notes) and len(notes) == 4
    assert (target / "x").read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.checks-tmp-1", live.name, "out"]
    (tmp_path / f".out.checks-old-{DEAD}").mkdir()
    assert io.sweep_siblings(target) == [f"removed .out.checks-old-{DEAD}, left by an interrupted run"]
    assert io.sweep_siblings(tmp_path / "missing" / "out") == []


def test_write_text_replaces_atomically(tmp_path):
    path = tmp_path / "sub" / "f.txt"
    io.write_text(path, "one")
    io.write_text(path, "two")
    assert path.read_text() == "two" and os.listdir(path.parent) == ["f.txt"]


def test_replacing_keeps_the_old_file_when_the_writer_fails(tmp_path):
    path = tmp_path / "f.bin"
    io.write_bytes(path, b"old")
    with pytest.raises(RuntimeError), io.replacing(path) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]


def test_a_killed_writers_temporary_is_swept(tmp_path):
    (tmp_path / f".f.bin.checks-tmp-{DEAD}.abcd1234").write_bytes(b"half")
    assert io.sweep_siblings(tmp_path / "f.bin") == [
        f"removed .f.bin.checks-tmp-{DEAD}.abcd1234, left by an interrupted run"
    ]


# --------------------------------------------------------------------------- bounded reads


def test_csv_text_reads_back_cell_for_cell_even_with_a_bare_carriage_return():
    rows = [["m1", "71.2"], ["m2", "0\r0"], ["m3", "a\nb"], ["m4", 'say "x", then\r\n']]
    text = io.csv_text(["model", "score"], rows)
    assert list(csv.reader(stdlib_io.StringIO(text, newline=""))) == [["model", "score"], *rows]
    # only the row that needs it is quoted in full: ledgers stay as plain to read and diff as before
    assert text.startswith('model,score\nm1,71.2\n"m2","0\r0"\nm3,"a\nb"\n')
    assert "\r\n" not in text.replace('then\r\n"', "")  # every line ends in \n alone


def test_read_errors_name_the_file_and_the_reason(tmp_path):
    path = tmp_path / "x.txt"
    with pytest.raises(io.ReadError, match=r"x\.txt: no such file") as missing:
        io.read_text(path)
    assert missing.value.missing
    path.write_bytes(b"ok \xff\xfe")
    with pytest.raises(
        io.ReadError, match=r"x\.txt, line 1: not UTF-8 text \(invalid start byte at byte 3\); save it as UTF-8"
    ):
        io.read_text(path)
    path.write_bytes(b"one\ntwo\nthe \xff")  # the bad byte's own line and column, not the file's start
    with pytest.raises(io.ReadError, match=r"x\.txt, line 3: not UTF-8 text") as bad:
        io.read_text(path)
    assert (bad.value.line, bad.value.col) == (3, 5)
    path.write_bytes(b"x" * 11)
    with pytest.raises(io.ReadError, match=r"too large for a note \(more than the 10-byte limit\)") as big:
        io.read_bytes(path, limit=10, what="a note")
    assert not big.value.missing and big.value.path == str(path)
    path.write_bytes(b"\xef\xbb\xbfa,b")
    assert io.read_text(path, encoding="utf-8-sig") == "a,b"


# --------------------------------------------------------------------------- strict YAML


def test_unquoted_dates_stay_text_even_when_not_a_real_date():
    data = io.loads_yaml("date: 2025-02-30\nwhen: 2025-01-15 10:00:00\nquoted: '2025-01-15'\n")
    assert data == {"date": "2025-02-30", "when": "2025-01-15 10:00:00", "quoted": "2025-01-15"}
    assert isinstance(data["date"], io.Timestamp) and not isinstance(data["quoted"], io.Timestamp)


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("a: 1\nb: &x [1]\nc: *x\n", "anchors and aliases are not allowed (&x)", 2),
        ("a: 1\nb: 2\na: 3\n", "duplicate key 'a'", 3),
        ("a:\n  b: [1, 2\n", "while parsing", 2),  # the unclosed "[", where Python would point
        ("k: " + "[" * (io.MAX_DEPTH + 1) + "]" * (io.MAX_DEPTH + 1), f"nested deeper than {io.MAX_DEPTH} levels", 1),
        ("!!python/object/apply:os.system ['true']", "could not determine a constructor", 1),
    ],
)
def test_refused_yaml_keeps_the_source_and_the_line(text, reason, line):
    with pytest.raises(io.YamlError) as refused:
        io.loads_yaml(text, source="drafts/x.yaml")
    assert reason in refused.value.reason and refused.value.line == line
    assert str(refused.value).startswith(f"drafts/x.yaml, line {line}: ")


def test_yaml_size_utf8_and_nul_are_refused_before_parsing(tmp_path):
    with pytest.raises(io.YamlError, match="more than the 8-byte limit"):
        io.loads_yaml("a: 12345678", max_bytes=8)
    with pytest.raises(io.YamlError, match="not UTF-8"):
        io.loads_yaml(b"a: \xff")
    with pytest.raises(io.YamlError, match="NUL"):
        io.loads_yaml("a: b\x00")
    path = tmp_path / "m.yaml"
    path.write_text("a: 1\n" * 10)
    with pytest.raises(io.ReadError, match=r"m\.yaml: too large for a YAML file"):
        io.load_yaml(path, max_bytes=20)
    path.write_text("a: [1, 2]\n")
    assert io.load_yaml(path) == {"a": [1, 2]}


# --------------------------------------------------------------------------- one place


def test_no_package_decodes_parses_yaml_or_renames_on_its_own():
    """Bounded reads, strict YAML and atomic writes live in checks.io only: a second copy would drift."""
    root = Path(__file__).resolve().parents[2]
    banned = re.compile(r"except[^:\n]*UnicodeDecodeError|yaml\.(safe_)?load\(|os\.replace\(|mkstemp\(")
    sources = [
        p for pkg in ("checks", "tabarena_checks", "hfmigrate_checks", "plugins") for p in (root / pkg).rglob("*.py")
    ]
    found = [
        f"{p.relative_to(root)}:{n}: {line.strip()}"
        for p in sources
        if p.name != "io.py" or p.parent.name != "checks"
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if banned.search(line)
    ]
    assert not found, "use checks.io instead:\n" + "\n".join(found)


#: run in a fresh interpreter's main thread, where signals land as they do in ``checks run`` (a test
#: runner's worker may run tests in another thread, or with its own signal handling)
_INTERRUPTED_AS_ENTRY_OPENS = """
import os, signal, sys, zipfile
from checks import io

class Archive(zipfile.ZipFile):
    # the entry writer is handed out with a Ctrl-C already sent: zipfile has marked the entry
    # open, the caller does not hold it yet
    def open(self, name, mode="r", pwd=None, *, force_zip64=False):
        handle = super().open(name, mode, pwd, force_zip64=force_zip64)
        if mode == "w":
            os.kill(os.getpid(), signal.SIGINT)
        return handle

try:
    with Archive(sys.argv[1], "w") as archive:
        io.write_zip_entry(archive, zipfile.ZipInfo("a.txt"), b"alpha")
        io.write_zip_entry(archive, zipfile.ZipInfo("b.txt"), b"never written")
except KeyboardInterrupt:
    held = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    print("interrupted", "held" if signal.SIGINT in held else "released")
"""


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="signals are held only on POSIX")
def test_an_interrupt_inside_a_zip_entry_arrives_after_it_and_the_archive_still_closes(tmp_path):
    path = tmp_path / "a.zip"
    done = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_AS_ENTRY_OPENS, str(path)], capture_output=True, text=True, timeout=60
    )
    # without the hold the close raises ValueError "... open writing handle" over the interrupt
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "interrupted released", "")
    with zipfile.ZipFile(path) as archive:  # closed cleanly with the whole first entry, nothing after it
        assert archive.namelist() == ["a.txt"]
        assert archive.read("a.txt") == b"alpha"


def test_one_digest_format_for_bytes_and_files(tmp_path):
    empty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert io.sha256(b"") == empty
    (tmp_path / "big").write_bytes(b"x" * (3 << 20))  # more than one block
    assert io.file_sha256(tmp_path / "big") == io.sha256(b"x" * (3 << 20))


def test_a_scratch_dir_interrupted_the_moment_it_exists_is_still_removed(tmp_path, monkeypatch):
    # the window tempfile.mkdtemp leaves open: the directory made, its name not yet in the caller's hands
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    made = Path.mkdir

    def mkdir_then_interrupt(self, *args, **kwargs):
        made(self, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "mkdir", mkdir_then_interrupt)
    with pytest.raises(KeyboardInterrupt), io.scratch_dir("probe-"):
        pass
    assert list(tmp_path.iterdir()) == []


def test_a_scratch_dir_is_private_and_gone_after_the_block(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with io.scratch_dir("probe-") as folder:
        (folder / "f").write_text("x")
        assert folder.parent == tmp_path and folder.name.startswith("probe-")
        assert stat_mode(folder) == 0o700
    assert list(tmp_path.iterdir()) == []


def stat_mode(path: Path) -> int:
    return path.stat().st_mode & 0o777
