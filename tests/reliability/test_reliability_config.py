"""Configuration and framework inputs a repository controls: globs, waivers, the decision log, the cache
directory, output files and gate names. Each test is one row of docs/reliability.md (issue 38, items 4-11).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import stat
import time
import tracemalloc

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tests.support.precommit_fixtures import INFO_CASES, write_info
from tests.support.reliability_fixtures import write_info as write_info_ref
from tests.support.tabarena_checkout_fixtures import INFOS, METHODS, SRC, write
from tests.support.tabarena_fixtures import make_run

from checks import plugins
from checks.config_model import PerFileIgnore
from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.testing.commands import process_args

#: only the built-in plugins, so an installed third-party plugin cannot change what is judged
ENV = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ("-p", "tabarena", "-p", "hfmigrate")

#: the issue's glob: ``**/`` twelve times, then a name no file has (a 78-byte rules.toml)
GLOB_BOMB = "**/" * 12 + "zzz.yaml"


def _deep_info(tmp_path, depth: int = 28):
    """A failing info.py (TA110) ``depth`` directories below ``tmp_path``, relative to it."""
    bad, _good = INFO_CASES["TA110"]
    path = write_info(tmp_path / "/".join(["d"] * depth), "bad", bad)
    return str(path.relative_to(tmp_path))


def test_glob_backtracking_bomb_is_linear(tmp_path):
    """Fault: `[per-file-ignores]` holding `"**/**/**/**/**/**/**/**/**/**/**/**/zzz.yaml"` (a 78-byte rules.toml) while
    a finding of a file 28 directories deep is judged: translated to a regular expression, the pre-commit hook ran over
    60 s

    Must: globs are matched by a linear automaton (positions stepped through the path, no backtracking): the hook
    reports the finding (exit 1); measured: the hook exits 1 in 0.7 s, the match itself takes 26 ms and 8 KB
    """
    rel = _deep_info(tmp_path)
    (tmp_path / "rules.toml").write_text(f'[per-file-ignores]\n"{GLOB_BOMB}" = ["TA110"]\n')
    started = time.monotonic()
    res = run_cli([*BUILTIN, "precommit", "info-py", rel], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    assert "TA110" in res.stdout
    assert time.monotonic() - started < 10
    entry = PerFileIgnore(GLOB_BOMB, ("TA110",), str(tmp_path))
    tracemalloc.start()
    started = time.monotonic()
    assert not entry.matches(str(tmp_path / rel))
    elapsed, peak = time.monotonic() - started, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert elapsed < 0.5 and peak < 5_000_000, (elapsed, peak)
    assert PerFileIgnore("**/bad/*.py", ("TA110",), str(tmp_path)).matches(str(tmp_path / rel))


@pytest.mark.parametrize(
    "toml, key",
    [
        ('[per-file-ignores]\n"[z-a].yaml" = ["TA110"]\n', "per-file-ignores.'[z-a].yaml'"),
        ('extend-exclude = ["ok", "[z-a]"]\n', "extend-exclude[1]"),
        (
            '[[waivers]]\nrule = "TA110"\ntarget = "[!]"\nreason = "r"\nowner = "o@example.org"\n'
            "expires = 2026-01-01\n",
            "waivers[0].target",
        ),
    ],
)
def test_malformed_glob_is_a_config_error(tmp_path, toml, key):
    """Fault: a malformed glob in the configuration: `[z-a].yaml` in `[per-file-ignores]` (an 'internal error: bad
    character range', a traceback, exit 3), the same in `extend-exclude` or an empty class in a waiver's target

    Must: a configuration error naming the file, the key and the glob, with the fix (exit 2); no traceback
    """
    rel = _deep_info(tmp_path, depth=1)
    (tmp_path / "rules.toml").write_text(toml)
    res = run_cli([*BUILTIN, "precommit", "info-py", rel], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "rules.toml" in res.stderr and f"{key}: the glob" in res.stderr, res.stderr
    assert "cannot be matched" in res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr


NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
#: an expiry a month away, whenever the suite runs
SOON = (dt.date.today() + dt.timedelta(days=30)).isoformat()
#: a local plugin whose rule PUB001 a plugin marks as a publishing gate, bound to the toy action
PUBLISHING_PLUGIN = """\
from checks import hookimpl, rule


@rule("PUB001", "pub-toy-publishing", actions=("toy",), publishing=True)
def publishing(ctx):
    \"\"\"A publishing gate that fails when --fail is given.\"\"\"
    if ctx.facts["fail"]:
        yield "asked to fail"


@hookimpl
def checks_rules():
    return [publishing]
"""


def _toy(tmp_path, waiver: str, *, local: bool = False):
    plugins = 'checks_plugins = ["pub.py"]\n' if local else ""
    (tmp_path / "pub.py").write_text(PUBLISHING_PLUGIN)
    (tmp_path / "rules.toml").write_text(plugins + "[[waivers]]\n" + waiver)
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), "--fail"], env=NO_AUTOLOAD, cwd=tmp_path
    )


def _waiver(
    rule: str, *, target: str = "toy-target", reason: str = "r", owner: str = "o@example.org", expires: str = SOON
):
    return f'rule = "{rule}"\ntarget = "{target}"\nreason = "{reason}"\nowner = "{owner}"\nexpires = {expires}\n'


@pytest.mark.parametrize("char", ["\u17b4", "\u034f", "\ufe00", "\U000e0100", "\u3164"])
@pytest.mark.parametrize("field", ["reason", "owner"])
def test_waiver_text_needs_a_visible_letter_or_digit(tmp_path, field, char):
    """Fault: a waiver whose reason or owner is only U+17B4 (a Khmer vowel that renders as nothing), U+034F (combining
    grapheme joiner), U+FE00 or U+E0100 (variation selectors): accepted, 'waived TOY001' (the check was a list of known
    invisible characters)

    Must: refused (exit 2) naming `waivers[0].reason` or `.owner`: each needs a letter or digit by its Unicode
    category (marks, selectors and format characters are none; the Hangul fillers are told by name); the action does not
    run
    """
    res = _toy(tmp_path, _waiver("TOY001", **{field: f"{char} {char}"}))
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert f"waivers[0].{field}: must not be empty or invisible" in res.stderr, res.stderr
    assert not (tmp_path / "m").exists()
    waived = _toy(tmp_path, _waiver("TOY001", **{field: f"{char}ok"}))
    assert waived.exit_code == ExitCode.OK, waived.stdout + waived.stderr


@pytest.mark.parametrize(
    "waiver, words",
    [
        (_waiver("PUB001", target="*"), "waivers[0].target: PUB001 (pub-toy-publishing) is a publishing gate"),
        (_waiver("PUB001", target="t*"), "not a glob ('t*')"),
        (_waiver("PUB001", expires="9999-12-30"), "waivers[0].expires: 9999-12-30 is more than 366 days away"),
    ],
)
def test_publishing_gate_waivers_name_a_target_and_end(tmp_path, waiver, words):
    """Fault: a waiver of a publishing gate (TA104, TA106, TA107, or a plugin rule marked `publishing=True`) with
    `target = "*"` or `expires = 9999-12-30`: the target and expiry limits applied only to required rules

    Must: refused (exit 2) naming the waiver's key: a publishing gate's waiver names one target (no glob) and ends
    within 366 days, as a required rule's does; a waiver within the limits still excuses it
    """
    res = _toy(tmp_path, waiver, local=True)
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert words in res.stderr, res.stderr
    assert not (tmp_path / "m").exists()
    ok = _toy(tmp_path, _waiver("PUB001") + "[[waivers]]\n" + _waiver("TOY001"), local=True)
    assert ok.exit_code == ExitCode.OK, ok.stdout + ok.stderr


@pytest.mark.parametrize("code", ["TA104", "TA106", "TA107"])
def test_tabarena_publishing_gates_are_marked(code):
    rule = plugins.load(["tabarena"], environ=NO_AUTOLOAD).rules[code]
    assert rule.publishing and "publishing gate" in rule.explain()


@pytest.mark.parametrize("where", ["/dev/null/x", "/proc/self", "/dev/full", "file/x", "file"])
def test_unusable_cache_directory_is_a_usage_error(tmp_path, where):
    """Fault: `CHECKS_CACHE_DIR` set to `/dev/null/x`, `/proc/self` or `/dev/full` (or below a regular file): a
    traceback (NotADirectoryError, FileNotFoundError, FileExistsError), exit 3

    Must: a usage error naming CHECKS_CACHE_DIR, the directory and why (a pseudo-filesystem, not a directory) with
    the fix (exit 2), for `checks run process` and `checks inspect`, before anything is read; no traceback; measured:
    the check costs 52 µs per call (a realpath and two stat calls)
    """
    (tmp_path / "file").write_text("not a directory\n")
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    cache = where if where.startswith("/") else str(tmp_path / where)
    for args in (
        process_args(data, write_info_ref(tmp_path), "c"),
        ["inspect", str(data)],
    ):
        res = run_cli([*BUILTIN, *args], env={**ENV, "CHECKS_CACHE_DIR": cache}, cwd=tmp_path)
        assert res.exit_code == ExitCode.USAGE_ERROR, (args, res.stdout + res.stderr)
        assert f"CHECKS_CACHE_DIR: the cache directory {cache} " in res.stderr, res.stderr
        assert "Traceback" not in res.stderr
    assert not (tmp_path / "c").exists()


def _toy_run(tmp_path, *args):
    return run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(tmp_path / "m"), *args], env=NO_AUTOLOAD, cwd=tmp_path
    )


@pytest.mark.parametrize(
    "make, words",
    [
        (lambda d: (d / "so").symlink_to("/proc/self/fd/1"), "pseudo-filesystem /proc"),
        (lambda d: (d / "so").symlink_to("/dev/stdout"), "pseudo-filesystem /"),
        (lambda d: os.mknod(d / "so", stat.S_IFCHR | 0o600, os.makedev(1, 3)), "it is a character device"),
        (lambda d: os.mkfifo(d / "so"), "it is a FIFO"),
        (lambda d: (d / "so").symlink_to(d / "fifo") or os.mkfifo(d / "fifo"), "it is a FIFO"),
    ],
    ids=["link-to-proc-fd", "link-to-dev-stdout", "char-device", "fifo", "link-to-fifo"],
)
def test_output_file_never_replaces_what_is_not_a_file(tmp_path, make, words):
    """Fault: `--output-file json=so` where `so` is a link to /proc/self/fd/1, a character device, a FIFO or a link to
    one: it was replaced by a regular file (exit 0); `json=/dev/stdout` as root would replace /dev/stdout itself; a
    /proc or /sys target failed only after the report printed '(exit 0)'

    Must: refused before anything runs (exit 2, the action does not run) naming the path, what it is and the fix; the
    entry is left as it was; measured: the command ends in 0.8 s with a peak RSS of 26 MB
    """
    make(tmp_path)
    before = os.lstat(tmp_path / "so")
    res = _toy_run(tmp_path, "--output-file", "json=so")
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "--output-file " in res.stderr and words in res.stderr, res.stderr
    assert not (tmp_path / "m").exists() and res.stdout == ""
    after = os.lstat(tmp_path / "so")
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)
    direct = _toy_run(tmp_path, "--output-file", "json=/dev/stdout")
    assert direct.exit_code == ExitCode.USAGE_ERROR and "pseudo-filesystem /dev" in direct.stderr, direct.stderr


def test_output_file_writes_through_a_link(tmp_path):
    """Fault: `--output-file json=so` where `so` is a link to a regular file (a report kept elsewhere)

    Must: the report is written through the link to its target, atomically (old or new content, never a mix), and the
    link stays a link; a regular file is replaced atomically as before; measured: the run with the link ends in 0.7 s
    with a peak RSS of 26 MB
    """
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "r.json").write_text("old\n")
    (tmp_path / "so").symlink_to(tmp_path / "reports" / "r.json")
    res = _toy_run(tmp_path, "--output-file", "json=so", "--output-file", "plain.json")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert (tmp_path / "so").is_symlink()
    assert json.loads((tmp_path / "reports" / "r.json").read_text())["action"] == "toy"
    assert json.loads((tmp_path / "plain.json").read_text())["action"] == "toy"
    assert not [p for p in (tmp_path / "reports").iterdir() if p.name != "r.json"]


@pytest.mark.parametrize(
    "setting, words",
    [
        ('decision_log = "{home}/.bashrc"', "must be a .jsonl file"),
        ('decision_log = "{home}/notes.jsonl"', "lies outside"),
        ('decision_log = "../outside.jsonl"', "lies outside"),
        ('decision_log = "link/x.jsonl"', "it resolves to"),
    ],
    ids=["bashrc", "home-jsonl", "dotdot", "link-out"],
)
def test_a_repository_cannot_aim_the_decision_log_outside(tmp_path, setting, words):
    """Fault: a repository's rules.toml setting `decision_log = "~/.bashrc"` (any regular file): a blocked process still
    appended its record there, with `$(...)` from the method name, run by the next interactive shell; the same with a
    .jsonl outside the checkout, `../`, or a link leading out

    Must: refused before anything runs (exit 2) naming the file, `decision_log`, the path and the fix: a
    configuration's log is a .jsonl file inside the project (links followed); only --decision-log or the user's own
    configuration may also use the user's state directory; nothing is appended; measured: the run ends in 0.6 s with a
    peak RSS of 27 MB
    """
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (home / ".bashrc").write_text("# rc\n")
    (project / "link").symlink_to(home)
    (project / "rules.toml").write_text(setting.format(home=home) + "\n")
    res = run_cli(
        ["-p", "toy_plugin", "run", "toy", "--marker", str(project / "m"), "--fail"],
        env={**NO_AUTOLOAD, "HOME": str(home), "XDG_STATE_HOME": ""},
        cwd=project,
    )
    assert res.exit_code == ExitCode.USAGE_ERROR, res.stdout + res.stderr
    assert "rules.toml: decision_log: the decision log" in res.stderr and words in res.stderr, res.stderr
    assert (home / ".bashrc").read_text() == "# rc\n"
    assert sorted(p.name for p in home.iterdir()) == [".bashrc"] and not (tmp_path / "outside.jsonl").exists()


def test_the_decision_log_may_go_to_the_project_or_the_users_state_directory(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    state = home / ".local" / "state" / "arena-checks"
    project.mkdir()
    (project / "rules.toml").write_text('decision_log = "audit/log.jsonl"\n')
    env = {**NO_AUTOLOAD, "HOME": str(home), "XDG_STATE_HOME": ""}
    args = ["-p", "toy_plugin", "run", "toy", "--marker", str(project / "m")]
    assert run_cli(args, env=env, cwd=project).exit_code == ExitCode.OK
    assert (project / "audit" / "log.jsonl").stat().st_size > 0
    res = run_cli([*args, "--decision-log", str(state / "log.jsonl")], env=env, cwd=project)
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert (state / "log.jsonl").stat().st_size > 0
    (project / "rules.toml").write_text(f'decision_log = "{state}/repo.jsonl"\n')
    refused = run_cli(args, env=env, cwd=project)
    assert refused.exit_code == ExitCode.USAGE_ERROR and "lies outside" in refused.stderr, refused.stderr
    own = home / ".config" / "arena-checks" / "rules.toml"
    own.parent.mkdir(parents=True)
    own.write_text(f'decision_log = "{state}/own.jsonl"\n')
    res = run_cli(["--config", str(own), *args], env=env, cwd=project)
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert (state / "own.jsonl").stat().st_size > 0
    wrong = run_cli([*args, "--decision-log", str(home / "x.jsonl")], env=env, cwd=project)
    assert wrong.exit_code == ExitCode.USAGE_ERROR and wrong.stderr.startswith("checks: error: --decision-log:")


def _task_bomb(path, *, rows_per_group: int, groups: int) -> None:
    """A task-metadata parquet of one task repeated: dictionary-encoded, so millions of rows take kilobytes."""
    n = rows_per_group
    table = pa.table(
        {
            "dataset": pa.array(["anneal"] * n).dictionary_encode(),
            "tid": pa.array([363612] * n, pa.int64()),
            "problem_type": pa.array(["multiclass"] * n).dictionary_encode(),
        }
    )
    with pq.ParquetWriter(path, table.schema) as writer:
        for _ in range(groups):
            writer.write_table(table)


@pytest.mark.parametrize("kind", ["parquet-20m", "csv-150k"])
def test_task_metadata_is_bounded(tmp_path, kind):
    """Fault: `--task-metadata` given a 190 KB parquet of 20,000,000 rows (one task repeated; the issue's was 436 KB and
    passed 1.5 GiB after 4 s), or a CSV of 150,000 rows

    Must: refused as TA309's finding naming the file and the limit (100,000 rows, 64 MiB decoded), read one batch at
    a time so nothing past the limit is decoded; process is blocked (exit 1); measured: the 20,000,000-row parquet
    refused in 0.7 s with a peak RSS of 80 MB
    """
    data = make_run(tmp_path / "run", tasks=(363612,), folds=1, validation_protocol="8x1")
    if kind == "parquet-20m":
        tasks = tmp_path / "tasks.parquet"
        _task_bomb(tasks, rows_per_group=1_000_000, groups=20)
        words = "20,000,000 rows, over the limit of a task table (100,000 rows"
    else:
        tasks = tmp_path / "tasks.csv"
        tasks.write_text("dataset,tid,problem_type\n" + "anneal,363612,multiclass\n" * 150_000)
        words = "more than 100,000 rows, over the limit of a task table"
    started = time.monotonic()
    args = process_args(data, write_info_ref(tmp_path), "c")
    res = run_cli([*args, "--task-metadata", str(tasks), "--format", "json"], cwd=tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TA309"]["outcome"] == "failed" and words in verdicts["TA309"]["message"], verdicts["TA309"]
    assert time.monotonic() - started < 60
    assert not (tmp_path / "c" / "artifacts").exists()


#: a local plugin with one rule bound to {gates}, and (when {declare}) a pre-commit hook's name declared
GATED_PLUGIN = """\
from checks import hookimpl, rule


@rule("GAT001", "gat-gated", actions={gates!r})
def gated(ctx):
    \"\"\"Fails always: it must never gate a run by accident.\"\"\"
    yield "gated"


@hookimpl
def checks_rules():
    return [gated]


@hookimpl
def checks_gates():
    return {declare!r}
"""


def _gated(tmp_path, gates, declare=(), *args):
    (tmp_path / "gated.py").write_text(GATED_PLUGIN.format(gates=tuple(gates), declare=tuple(declare)))
    (tmp_path / "rules.toml").write_text('checks_plugins = ["gated.py"]\n')
    return run_cli([*BUILTIN, *args], env=ENV, cwd=tmp_path)


@pytest.mark.parametrize(
    "gates, close",
    [(("mteb-acept",), None), (("proces",), "process"), (("precommit-infos",), "precommit-info")],
    ids=["unknown", "misspelt-action", "misspelt-hook"],
)
def test_a_rule_bound_to_an_unknown_gate_is_a_load_error(tmp_path, gates, close):
    """Fault: a plugin rule bound to a misspelt action or hook (`actions=("mteb-acept",)`, "proces", "precommit-infos"):
    it loaded without complaint, `checks config` showed a phantom action and the real gate passed without the rule

    Must: a load error (exit 2) for `checks rules`, `checks config` and `checks run`, naming the plugin, the rule,
    the name and the closest known gate (difflib); hooks declare their gate names (`checks_gates`) as actions do;
    measured: `checks rules` checks the 94 bindings of the built-in rules against the declared names in 0.05 ms,
    importing no action module
    """
    for args in (["rules"], ["config"], ["precommit", "info-py", "x.py"]):
        res = _gated(tmp_path, gates, (), *args)
        assert res.exit_code == ExitCode.USAGE_ERROR, (args, res.stdout + res.stderr)
        assert f"plugin 'gated.py': rule GAT001 (gat-gated) is bound to {gates[0]!r}" in res.stderr, res.stderr
        assert (f"did you mean {close!r}?" in res.stderr) if close else "did you mean" not in res.stderr
        assert "Traceback" not in res.stderr


def test_a_rule_may_bind_to_a_declared_hook_or_a_blocked_plugins_gate(tmp_path):
    res = _gated(tmp_path, ("precommit-gated", "process"), ("precommit-gated",), "rules")
    assert res.exit_code == ExitCode.OK and "GAT001" in res.stdout, res.stdout + res.stderr
    res = _gated(tmp_path, ("upload",), (), "-p", "no:tabarena", "rules")
    assert res.exit_code == ExitCode.OK and "GAT001" in res.stdout, res.stdout + res.stderr


#: a local plugin that leaves a mark when imported: proof that a configuration's code ran
MARKING_PLUGIN = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n"
OTHER_UID = 12345


def _foreign(tmp_path, *, own_files: bool = False):
    """``shared/`` (mode 1777, another user's) holding rules.toml and evil.py; ``shared/work`` to run in."""
    shared, marker = tmp_path / "shared", tmp_path / "marker"
    (shared / "work").mkdir(parents=True)
    (shared / "rules.toml").write_text('checks_plugins = ["evil.py"]\n')
    (shared / "evil.py").write_text(MARKING_PLUGIN.format(marker=str(marker)))
    for path in (shared / "rules.toml", shared / "evil.py", shared):
        os.chown(path, os.geteuid() if own_files and path != shared else OTHER_UID, -1)
    shared.chmod(0o1777)
    return shared, marker


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root (CI runs as root)")
@pytest.mark.parametrize("own_files", [False, True], ids=["foreign-files", "own-files-in-foreign-1777-dir"])
def test_a_configuration_another_user_controls_is_refused(tmp_path, own_files):
    """Fault: a rules.toml and evil.py (a checks_plugins entry) owned by another user (uid 12345) in a world-writable
    directory (mode 1777): `checks rules` in a subdirectory ran the plugin as the current user (root in CI); the same
    files owned by the user but in another user's 1777 directory

    Must: refused before the file is read or the plugin imported (exit 2), naming the file, its owner or directory
    and the opt-in, like git's safe.directory: CHECKS_SAFE_DIRECTORIES lists trusted directories (or '*'); measured: two
    stat calls per file, the command ends in 0.15 s with a peak RSS of 19 MB
    """
    shared, marker = _foreign(tmp_path, own_files=own_files)
    for args in (["rules"], ["config"], ["--config", str(shared / "rules.toml"), "rules"]):
        res = run_cli([*BUILTIN, *args], env=ENV, cwd=shared / "work")
        assert res.exit_code == ExitCode.USAGE_ERROR, (args, res.stdout + res.stderr)
        why = f"lies in {shared}, which anyone may write (mode 1777)" if own_files else f"is owned by uid {OTHER_UID}"
        assert f"{shared / 'rules.toml'}: this configuration {why}" in res.stderr, res.stderr
        assert "CHECKS_SAFE_DIRECTORIES" in res.stderr and not marker.exists()
    trusted = run_cli([*BUILTIN, "rules"], env={**ENV, "CHECKS_SAFE_DIRECTORIES": str(shared)}, cwd=shared / "work")
    assert trusted.exit_code == ExitCode.OK and marker.read_text() == "ran", trusted.stdout + trusted.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root (CI runs as root)")
def test_a_local_plugin_another_user_owns_is_refused(tmp_path):
    marker = tmp_path / "marker"
    (tmp_path / "rules.toml").write_text('checks_plugins = ["evil.py", "evilpkg"]\n')
    (tmp_path / "evil.py").write_text(MARKING_PLUGIN.format(marker=str(marker)))
    os.chown(tmp_path / "evil.py", OTHER_UID, -1)
    res = run_cli([*BUILTIN, "rules"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "this local plugin is owned by uid 12345" in res.stderr
    assert not marker.exists()
    os.chown(tmp_path / "evil.py", os.geteuid(), -1)
    (tmp_path / "evilpkg").mkdir()
    (tmp_path / "evilpkg" / "__init__.py").write_text(MARKING_PLUGIN.format(marker=str(marker)))
    os.chown(tmp_path / "evilpkg" / "__init__.py", OTHER_UID, -1)
    res = run_cli([*BUILTIN, "rules"], env=ENV, cwd=tmp_path)
    assert res.exit_code == ExitCode.USAGE_ERROR and "evilpkg/__init__.py: this local plugin" in res.stderr
    assert marker.read_text() == "ran"  # evil.py, now the user's own, ran; the foreign package did not


@pytest.mark.parametrize(
    "field, call",
    [
        ("suite", 'method="Nori", suite="nori-2026-09\\r"'),
        ("suite", 'method="Nori", suite="nori-2026-09\\u2028x"'),
        ("method", 'method="Nori\\x1b[2J", suite="nori-2026-09"'),
    ],
    ids=["cr-in-suite", "line-separator-in-suite", "escape-in-method"],
)
def test_register_refuses_control_characters_before_any_edit(checkout, tmp_path, field, call):
    """Fault: `checks run register` of a rerun whose suite holds `\\r` (written into a methods.py comment, '# rerun
    SUITE replaced it'), or U+2028, or a method holding an escape sequence: TA501-503 passed, then libcst's
    CSTValidationError, a traceback, exit 3

    Must: TA504 (register-values-plain) blocks register (exit 1) naming the field, the characters and the
    declaration, before any edit: methods.py is unchanged; the plain rerun still registers; measured: register blocked
    in 1.4 s with a peak RSS of 39 MB
    """
    repo, _ = checkout
    declared = f'MethodMetadata.config({call}, ag_key="TA-NORI", compute="gpu", validation_protocol="8x1")'
    write(repo, SRC / "models/nori/info.py", INFOS["models/nori/info.py"] + f"nori_bad_metadata = {declared}\n")
    before = (repo / METHODS).read_bytes()
    ref = f"{repo / SRC / 'models/nori/info.py'}:nori_bad_metadata"
    res = run_cli(["run", "register", "--method-metadata", ref, "--repo", str(repo), "--format", "json"], cwd=tmp_path)
    assert res.exit_code == ExitCode.BLOCKED, res.stdout + res.stderr
    ta504 = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA504"]
    assert ta504["outcome"] == "failed" and f"{field} " in ta504["message"], ta504
    assert "would write into" in ta504["message"] and "info.py:" in ta504["message"]
    assert (repo / METHODS).read_bytes() == before
    ref = f"{repo / SRC / 'models/nori/info.py'}:nori_new_method_metadata"
    res = run_cli(["run", "register", "--method-metadata", ref, "--repo", str(repo), "--format", "json"], cwd=tmp_path)
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}["TA504"]["outcome"] == "passed"
