"""The ``checks`` launcher: a cheap ``--version`` and a sound replay cache for the listing commands.

Every test runs the real launcher in a subprocess with its own cache directory and
``CHECKS_CACHE_TRACE=1``, which reports ``cache: hit|miss|stored|skipped (reason)`` on stderr.
Files the cache records are back-dated (:func:`settle`), because an input changed within the
last 2 seconds is never cached. The subprocesses run ``python -S`` on a copy of the ``checks``
package inside the test's own directory: the repository (on ``sys.path`` through the editable
install) changes while the suite runs (``__pycache__``, ``.hypothesis``), which the cache
rightly treats as a changed input.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import time
from pathlib import Path

import pytest

from checks import replay
from checks.replay_record import MAX_ENTRIES

BIN = Path(sys.executable).parent
#: no site: neither the repository (the editable install's .pth) nor anything but PYTHONPATH
PY = [sys.executable, "-S"]
PACKAGE = Path(replay.__file__).parent
FRAMEWORK = ("click", "pluggy", "attrs", "importlib.metadata")

TOY = '''
from checks import hookimpl, rule


@rule("TOY901", "{name}", actions=("toy",), why="a toy for the replay cache", example_fail="x")
def toy(ctx):
    """A toy rule whose name the tests edit."""
    return None


@hookimpl
def checks_rules():
    return [toy]
'''

TOY_FROM_DATA = '''
from pathlib import Path

from checks import hookimpl, rule

NAME = (Path(__file__).parent / "toyname.txt").read_text().strip()


@rule("TOY902", NAME, actions=("toy",), why="a toy named by a data file", example_fail="x")
def named(ctx):
    """A toy rule whose name comes from a data file."""
    return None


@hookimpl
def checks_rules():
    return [named]
'''


def settle(root: Path, age: float) -> None:
    """Back-date every file and directory under ``root`` (the cache excepted) by ``age`` seconds.

    Back-dating sets the ctime to now; the cache refuses inputs whose ctime is within 100 ms
    of its start (changed while it ran), hence the pause.
    """
    stamp = time.time() - age
    for path in [root, *root.rglob("*")]:
        if "cache" not in path.relative_to(root).parts:
            os.utime(path, (stamp, stamp))
    time.sleep(0.2)


@pytest.fixture
def sandbox(tmp_path):
    """A working directory, a PYTHONPATH directory holding the toy plugin, and a cache directory."""
    work, plug = tmp_path / "work", tmp_path / "plug"
    work.mkdir()
    plug.mkdir()
    (plug / "toyreplay.py").write_text(TOY.format(name="toy-before"))
    shutil.copytree(PACKAGE, tmp_path / "lib" / "checks", ignore=shutil.ignore_patterns("__pycache__"))
    settle(tmp_path, 100)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHECKS_")}
    path = [str(plug), str(tmp_path / "lib"), *site.getsitepackages()]
    env.update(CHECKS_CACHE_DIR=str(tmp_path / "cache"), CHECKS_CACHE_TRACE="1", PYTHONPATH=os.pathsep.join(path),
               CHECKS_DISABLE_PLUGIN_AUTOLOAD="1", PYTHONDONTWRITEBYTECODE="1")
    return tmp_path, env


def run(args, env, cwd, script=False):
    argv = [*PY, str(BIN / "checks"), *args] if script else [*PY, "-m", "checks", *args]
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)


def trace(proc) -> list[str]:
    return [line.removeprefix("checks: cache: ") for line in proc.stderr.splitlines() if line.startswith("checks: cache: ")]


def entries(root: Path) -> list[Path]:
    return sorted((root / "cache").glob("*.json"))


@pytest.mark.parametrize("args", [["-p", "toyreplay", "rules"], ["-p", "toyreplay", "rules", "--format", "json"],
                                  ["-p", "toyreplay", "rule", "TOY901"]])
def test_second_run_replays_the_first_byte_for_byte(sandbox, args):
    root, env = sandbox
    first = run(args, env, root / "work", script=True)
    second = run(args, env, root / "work", script=True)
    assert (first.returncode, second.returncode) == (0, 0), first.stderr
    assert trace(first) == ["miss", "stored"]
    assert trace(second) == ["hit"]
    assert second.stdout == first.stdout
    assert "toy-before" in second.stdout


def test_a_hit_imports_none_of_the_framework(sandbox):
    root, env = sandbox
    driver = (
        "import sys; sys.argv = ['checks', '-p', 'toyreplay', 'rules']\n"
        "from checks.launch import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"print('LOADED', [m for m in {FRAMEWORK!r} if m in sys.modules], code, file=sys.stderr)\n"
    )
    first = subprocess.run([*PY, "-c", driver], env=env, cwd=root / "work", capture_output=True, text=True)
    second = subprocess.run([*PY, "-c", driver], env=env, cwd=root / "work", capture_output=True, text=True)
    assert trace(first) == ["miss", "stored"]
    assert "LOADED ['click', 'pluggy', 'attrs', 'importlib.metadata'] 0" in first.stderr
    assert trace(second) == ["hit"]
    assert "LOADED [] 0" in second.stderr
    assert second.stdout == first.stdout and "TOY901" in second.stdout


def test_editing_a_plugin_module_shows_the_new_rule_name(sandbox):
    root, env = sandbox
    args = ["-p", "toyreplay", "rules"]
    run(args, env, root / "work")
    assert trace(run(args, env, root / "work")) == ["hit"]
    module = root / "plug" / "toyreplay.py"
    module.write_text(TOY.format(name="toy-after-edit"))
    settle(root, 50)
    after = run(args, env, root / "work")
    assert trace(after) == ["miss", "stored"]
    assert "toy-after-edit" in after.stdout and "toy-before" not in after.stdout
    again = run(args, env, root / "work")
    assert trace(again) == ["hit"] and again.stdout == after.stdout


def test_editing_a_data_file_a_plugin_reads_shows_the_new_rule_name(sandbox):
    root, env = sandbox
    (root / "plug" / "toydata.py").write_text(TOY_FROM_DATA)
    (root / "plug" / "toyname.txt").write_text("toy-from-data\n")
    settle(root, 100)
    args = ["-p", "toydata", "rules"]
    first = run(args, env, root / "work")
    assert "toy-from-data" in first.stdout, first.stderr
    assert trace(run(args, env, root / "work")) == ["hit"]
    (root / "plug" / "toyname.txt").write_text("toy-data-edited\n")
    settle(root, 50)
    after = run(args, env, root / "work")
    assert trace(after) == ["miss", "stored"] and "toy-data-edited" in after.stdout


def test_writing_bytecode_does_not_prevent_caching(sandbox):
    root, env = sandbox
    env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    args = ["-p", "toyreplay", "rules"]
    first = run(args, env, root / "work")
    assert (root / "plug" / "__pycache__").is_dir()
    assert trace(first) == ["miss", f"skipped ({root / 'plug'} changed less than 2 s ago)"]  # __pycache__ appeared
    settle(root, 100)
    assert trace(run(args, env, root / "work")) == ["miss", "stored"]
    (root / "plug" / "toyreplay.py").write_text(TOY.format(name="toy-recompiled"))
    settle(root, 50)
    recompiled = run(args, env, root / "work")
    assert trace(recompiled) == ["miss", "stored"] and "toy-recompiled" in recompiled.stdout
    assert trace(run(args, env, root / "work")) == ["hit"]


def test_an_input_changed_while_the_command_ran_is_not_cached(sandbox):
    root, env = sandbox
    (root / "plug" / "slowtoy.py").write_text(
        "import os, time\n"
        "here = os.path.join(os.path.dirname(__file__), 'toyreplay.py')\n"
        "st = os.stat(here)\n"
        "time.sleep(0.2)\n"
        "os.utime(here, ns=(st.st_atime_ns, st.st_mtime_ns))  # a change that keeps the old mtime\n"
    )
    settle(root, 100)
    proc = run(["-p", "toyreplay", "-p", "slowtoy", "rules"], env, root / "work")
    assert trace(proc) == ["miss", f"skipped ({root / 'plug' / 'toyreplay.py'} changed while the command ran)"]


def test_installing_and_removing_a_distribution_changes_the_listing(sandbox):
    root, env = sandbox
    env = {k: v for k, v in env.items() if k != "CHECKS_DISABLE_PLUGIN_AUTOLOAD"}
    args = ["-p", "no:tabarena", "-p", "no:hfmigrate", "rules"]  # keep the repository's plugins out of it
    before = run(args, env, root / "work")
    assert trace(run(args, env, root / "work")) == ["hit"]
    assert "TOY901" not in before.stdout
    dist = root / "plug" / "toyreplay-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyreplay\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[checks]\ntoyreplay = toyreplay\n")
    settle(root, 50)
    installed = run(args, env, root / "work")
    assert trace(installed) == ["miss", "stored"]
    assert "TOY901" in installed.stdout and "toyreplay" in installed.stdout
    assert trace(run(args, env, root / "work")) == ["hit"]
    for child in dist.iterdir():
        child.unlink()
    dist.rmdir()
    settle(root, 30)
    removed = run(args, env, root / "work")
    assert trace(removed) == ["miss", "stored"]
    assert removed.stdout == before.stdout


def test_a_changed_environment_is_a_miss_and_no_value_is_stored(sandbox):
    root, env = sandbox
    args = ["-p", "toyreplay", "rules"]
    run(args, env, root / "work")
    secret = dict(env, ARENA_TEST_TOKEN="do-not-store-this-value")
    changed = run(args, secret, root / "work")
    assert trace(changed) == ["miss", "stored"]
    assert trace(run(args, secret, root / "work")) == ["hit"]
    assert trace(run(args, env, root / "work")) == ["hit"]
    stored = "".join(p.read_text() for p in entries(root))
    assert len(entries(root)) == 2
    assert "do-not-store-this-value" not in stored and "ARENA_TEST_TOKEN" not in stored


def test_each_working_directory_has_its_own_entry(sandbox):
    root, env = sandbox
    other = root / "elsewhere"
    other.mkdir()
    settle(root, 100)
    args = ["-p", "toyreplay", "rules"]
    assert trace(run(args, env, root / "work")) == ["miss", "stored"]
    assert trace(run(args, env, other)) == ["miss", "stored"]
    assert trace(run(args, env, root / "work")) == ["hit"]
    assert len(entries(root)) == 2


def test_failures_are_never_cached(sandbox):
    root, env = sandbox
    for _ in range(3):
        proc = run(["-p", "toyreplay", "rule", "NOPE999"], env, root / "work")
        assert proc.returncode == 2
        assert "unknown rule 'NOPE999'" in proc.stderr
        assert trace(proc) == ["miss", "skipped (exit code 2)"]
    assert entries(root) == []


@pytest.mark.parametrize("source, reason", [
    ("import sys\nsys.stderr.write('side effect: a note\\n')\n", "the command wrote to stderr"),
    ("open('side-effect.txt', 'w').close()\n", "the command opened {work}/side-effect.txt for writing"),
])
def test_a_plugin_with_a_side_effect_is_never_cached(sandbox, source, reason):
    root, env = sandbox
    (root / "plug" / "sideeffect.py").write_text(source)
    settle(root, 100)
    for _ in range(2):
        proc = run(["-p", "sideeffect", "rules"], env, root / "work")
        assert proc.returncode == 0 and "CK001" in proc.stdout
        assert trace(proc) == ["miss", f"skipped ({reason.format(work=root / 'work')})"]
        assert ("side effect: a note" in proc.stderr) == ("stderr" in reason)  # still reaches the real stderr
    assert entries(root) == []


def test_a_recently_changed_input_is_not_cached(sandbox):
    root, env = sandbox
    (root / "plug" / "toyreplay.py").write_text(TOY.format(name="toy-just-written"))
    proc = run(["-p", "toyreplay", "rules"], env, root / "work")
    assert "toy-just-written" in proc.stdout
    assert trace(proc)[1].startswith("skipped (") and "changed less than 2 s ago" in trace(proc)[1]
    assert entries(root) == []


def test_a_corrupt_entry_is_a_miss_and_is_rewritten(sandbox):
    root, env = sandbox
    args = ["-p", "toyreplay", "rules"]
    good = run(args, env, root / "work")
    [entry] = entries(root)
    for garbage in ("{not json", json.dumps({"key": "x"}), json.dumps({"key": json.loads(entry.read_text())["key"]})):
        entry.write_text(garbage)
        proc = run(args, env, root / "work")
        assert proc.returncode == 0 and proc.stdout == good.stdout
        assert trace(proc) == ["miss", "stored"]
    assert trace(run(args, env, root / "work")) == ["hit"]


def test_no_cache_turns_it_off(sandbox):
    root, env = sandbox
    env = dict(env, CHECKS_NO_CACHE="1")
    for _ in range(2):
        proc = run(["-p", "toyreplay", "rules"], env, root / "work")
        assert proc.returncode == 0 and "TOY901" in proc.stdout and trace(proc) == []
    assert not (root / "cache").exists()


def test_the_cache_keeps_the_newest_entries(sandbox):
    root, env = sandbox
    cache = root / "cache"
    cache.mkdir()
    for i in range(70):
        (cache / f"{i:08x}.json").write_text("{}")
    stamp = time.time() - 1000
    for old in cache.iterdir():
        os.utime(old, (stamp, stamp))
    proc = run(["-p", "toyreplay", "rules"], env, root / "work")
    assert trace(proc) == ["miss", "stored"]
    assert len(entries(root)) == MAX_ENTRIES
    assert trace(run(["-p", "toyreplay", "rules"], env, root / "work")) == ["hit"]


def test_version_imports_none_of_the_framework():
    driver = (
        "import sys; sys.argv = ['checks', '--version']\n"
        "from checks.launch import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"print('LOADED', [m for m in {FRAMEWORK!r} if m in sys.modules], code)\n"
    )
    out = subprocess.run([sys.executable, "-c", driver], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["arena-checks 0.1.0", "LOADED [] 0"]
    script = subprocess.run([str(BIN / "checks"), "--version"], capture_output=True, text=True)
    assert (script.returncode, script.stdout) == (0, "arena-checks 0.1.0\n")


def test_the_public_names_resolve_lazily():
    code = (
        "import sys, checks\n"
        "print(sorted(m for m in ('attrs', 'pluggy') if m in sys.modules))\n"
        "from checks import Rule, hookimpl, rule, UsageError\n"
        "print(Rule.__module__, UsageError.__module__, callable(rule), set(checks.__all__) <= set(dir(checks)))\n"
        "print(all(hasattr(checks, n) for n in checks.__all__))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == ["[]", "checks.model checks.errors True True", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        import checks

        checks.nope  # noqa: B018


@pytest.mark.parametrize("args, cacheable", [
    (["rules"], True),
    (["rules", "--format", "json"], True),
    (["rules", "--format=json"], True),
    (["rule", "TA101"], True),
    (["-p", "toy", "--config", "x.toml", "rules"], True),
    (["-ptoy", "--config=x.toml", "rule", "TA101"], True),
    (["plugins"], False),
    (["rules", "--help"], False),
    (["rule", "--help"], False),
    (["--help"], False),
    (["-p"], False),
    (["run", "process"], False),
    (["rules", "extra", "args"], False),
    (["--verbose", "rules"], False),
])
def test_only_listing_command_lines_are_cacheable(args, cacheable):
    assert replay.is_listing(args) is cacheable
