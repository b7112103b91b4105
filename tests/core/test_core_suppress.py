"""Inline suppressions `# checks: ignore[CODE] reason`: where they apply, that they need a reason,
that unused and malformed ones are reported (CK003, CK004), and that runs count and record them."""

from __future__ import annotations

import json
import re

import pytest
from tests.support.precommit_fixtures import HEADER, write_draft, write_info

from checks import records, suppress
from checks.exitcodes import ExitCode
from checks.testing import run_cli
from tabarena_checks.testing import tabarena_run
from tabarena_checks.testing.commands import process_args

NO_AUTOLOAD = {"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"}
BUILTIN = ["-p", "tabarena", "-p", "hfmigrate"]


def toy(cwd, *args):
    return run_cli(["-p", "toy_plugin", "run", "toy", "--marker", str(cwd / "marker"), *args], env=NO_AUTOLOAD, cwd=cwd)


def precommit(cwd, *args):
    return run_cli([*BUILTIN, "precommit", *args], env=NO_AUTOLOAD, cwd=cwd)


def problems(stdout: str) -> list[tuple[int, str]]:
    """(line, code) of every problem line ``path:line:col: CODE message`` (the count line is not one)."""
    out = []
    for text in stdout.splitlines():
        if text.startswith("Found "):
            continue
        match = re.match(r"^.*?:(\d+):\d+: (\S+) ", text)
        out.append((int(match[1]), match[2]))
    return out


# --------------------------------------------------------------------------- the comment itself


@pytest.mark.parametrize(
    "comment, codes, reason, problem",
    [
        ("# checks: ignore[TA110] copied as printed", ("TA110",), "copied as printed", ""),
        ("#checks:ignore[TA110,TA111]: two at once", ("TA110", "TA111"), "two at once", ""),
        ("# checks: ignore[TA110]", ("TA110",), "", "gives no reason"),
        ("# checks: ignore[TA110]   ", ("TA110",), "", "gives no reason"),
        ("# checks: ignore TA110 no brackets", (), "", "expected '# checks: ignore[CODE, ...] reason'"),
        ("# checks: ignore[] why", (), "why", "names no rule code"),
        ("# checks: ignore[ta110] lower case", ("ta110",), "lower case", "is not a rule code"),
        ("# an ordinary comment about checks", None, None, None),
        ("# noqa: TA110", None, None, None),
    ],
)
def test_the_directive_is_parsed_strictly(comment, codes, reason, problem):
    parsed = suppress.parse_comment(comment)
    if codes is None:
        assert parsed is None
        return
    assert parsed[0] == codes and parsed[1] == reason
    assert problem in parsed[2] and bool(parsed[2]) == bool(problem)


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        pytest.param(
            "info.py",
            "x = 1\n"
            "m = f(  # checks: ignore[TA110] whole call\n"
            "    a=1,\n"
            "    b=2,  # checks: ignore[TA111] this line\n"
            ")\n"
            "# checks: ignore[TA112] the next statement\n"
            "\n"
            "n = g(\n"
            "    c=3)\n"
            's = "# checks: ignore[TA113] inside a string is no comment"\n',
            {"TA110": (2, 2, 5), "TA111": (4, 4, 4), "TA112": (6, 8, 9)},
            id="python-line-call-and-own-line",
        ),
        pytest.param(
            "b.yaml",
            "- dataset:  # checks: ignore[HF506] whole entry\n"
            "    id: a/b\n"
            "  value: 1\n"
            "# checks: ignore[HF201] next entry\n"
            "- dataset:\n"
            "    id: 'c#d'\n"
            "  value: '#x'  # checks: ignore[HF502] this line\n",
            {"HF506": (1, 1, 3), "HF201": (4, 5, 7), "HF502": (7, 7, 7)},
            id="yaml-list-item",
        ),
    ],
)
def test_ranges_a_suppression_covers(tmp_path, name, text, expected):
    path = tmp_path / name
    path.write_text(text)
    found = {s.codes[0]: (s.line, s.first, s.last) for s in suppress.scan(str(path))}
    assert found == expected


# --------------------------------------------------------------------------- in a run


def test_a_suppression_on_the_finding_line_lets_the_action_run_and_is_recorded(tmp_path):
    (tmp_path / "src.py").write_text("a = 1\nb = 2  # checks: ignore[TOY001] the toy fails on purpose here\n")
    res = toy(tmp_path, "--fail", "--finding-path", "src.py", "--finding-line", "2", "-v")
    assert res.exit_code == ExitCode.OK, res.stdout + res.stderr
    assert "[suppressed inline at src.py:2] src.py:2:1: asked to fail" in res.stdout
    assert "1 suppression used" in res.stdout
    rec = records.read(tmp_path / ".checks" / "decisions.jsonl")[-1]
    assert rec["suppressions_used"] == [
        {"rule": "TOY001", "path": "src.py", "line": 2, "reason": "the toy fails on purpose here"}
    ]
    verdict = {v["code"]: v for v in rec["verdicts"]}["TOY001"]
    assert verdict["outcome"] == "waived" and verdict["suppressions"] == ["src.py:2"]


def test_a_suppression_elsewhere_does_not_cover_and_is_reported_unused(tmp_path):
    (tmp_path / "src.py").write_text("a = 1  # checks: ignore[TOY001] wrong line\nb = 2\n")
    res = toy(tmp_path, "--fail", "--finding-path", "src.py", "--finding-line", "2", "--format", "json")
    assert res.exit_code == ExitCode.BLOCKED
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TOY001"]["outcome"] == "failed"
    assert verdicts["CK003"]["outcome"] == "failed" and verdicts["CK003"]["severity"] == "warning"
    assert "src.py:1:8: suppression of TOY001 matched no finding" in verdicts["CK003"]["message"]  # at the comment


def test_a_suppression_without_reason_suppresses_nothing_and_is_an_error(tmp_path):
    (tmp_path / "src.py").write_text("b = 2  # checks: ignore[TOY001]\n")
    res = toy(tmp_path, "--fail", "--finding-path", "src.py", "--finding-line", "1", "--format", "json")
    assert res.exit_code == ExitCode.BLOCKED
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert verdicts["TOY001"]["outcome"] == "failed"
    assert verdicts["CK004"]["outcome"] == "failed" and "gives no reason" in verdicts["CK004"]["message"]
    assert not (tmp_path / "marker").exists()


def test_a_required_rule_cannot_be_suppressed_inline(tmp_path):
    (tmp_path / "src.py").write_text("b = 2  # checks: ignore[TOY004, TOY009] not allowed\n")
    res = toy(tmp_path, "--fail", "--finding-path", "src.py", "--finding-line", "1", "--format", "json")
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert "TOY009, which no loaded plugin defines" in verdicts["CK004"]["message"]
    (tmp_path / "src.py").write_text("b = 2  # checks: ignore[TOY004] not allowed\n")
    res = toy(tmp_path, "--fail", "--finding-path", "src.py", "--finding-line", "1", "--format", "json")
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    assert "TOY004 is a required rule" in verdicts["CK004"]["message"]


# --------------------------------------------------------------------------- in the pre-commit hooks


def test_info_py_suppression_on_the_call_line_covers_the_whole_call(tmp_path):
    info = write_info(
        tmp_path,
        "nori",
        "m = MethodMetadata.config(  # checks: ignore[TA110] the paper prints this date\n"
        '    method="Nori",\n    suite="nori-1",\n    ag_key="K",\n    date="2026-02-30",\n)\n'
        'n = MethodMetadata.config(method="Nora", suite="nora-1", ag_key="K2", date="2026-02-31")\n',
    )
    res = precommit(tmp_path, "info-py", str(info))
    assert problems(res.stdout) == [(9, "TA110")], res.stdout  # only the second declaration's
    assert res.exit_code == ExitCode.BLOCKED


def test_info_py_suppression_on_its_own_line_covers_the_next_statement(tmp_path):
    info = write_info(
        tmp_path,
        "nori",
        "# checks: ignore[TA110] the paper prints this date\n"
        'm = MethodMetadata.config(method="Nori", suite="nori-1", ag_key="K", date="2026-02-30")\n',
    )
    res = precommit(tmp_path, "info-py", str(info))
    assert res.exit_code == ExitCode.OK and res.stdout == "", res.stdout


def test_info_py_unused_and_reasonless_suppressions_are_reported_once(tmp_path):
    info = write_info(
        tmp_path,
        "nori",
        'm = MethodMetadata.config(method="Nori", suite="nori-1", ag_key="K", date="2026-02-28")'
        "  # checks: ignore[TA110] not needed any more\n"
        'n = MethodMetadata.config(method="Nora", suite="nora-1", ag_key="K2", date="2026-02-31")'
        "  # checks: ignore[TA110]\n",
    )
    lines = HEADER.count("\n")
    res = precommit(tmp_path, "info-py", str(info))
    assert sorted(problems(res.stdout)) == [(lines + 1, "CK003"), (lines + 2, "CK004"), (lines + 2, "TA110")], (
        res.stdout
    )
    assert res.exit_code == ExitCode.BLOCKED


def test_eval_results_suppression_covers_one_entry(tmp_path):
    entry = "- dataset:\n    id: Idavidrein/gpqa\n    task_id: {task}\n    revison: main\n  value: 40.1\n"
    draft = write_draft(
        tmp_path,
        "org--model",
        "gpqa",
        entry.format(task="diamond")
        + "# checks: ignore[HF506] our fork of the board reads this key\n"
        + entry.format(task="main"),
    )
    res = precommit(tmp_path, "eval-results", str(draft))
    assert problems(res.stdout) == [(1, "HF506")], res.stdout
    text = draft.read_text().replace("ignore[HF506] our fork of the board reads this key", "ignore[HF506]")
    draft.write_text(text)
    res = precommit(tmp_path, "eval-results", str(draft))
    assert sorted(problems(res.stdout)) == [(1, "HF506"), (6, "CK004"), (7, "HF506")], res.stdout
    assert f"{draft.relative_to(tmp_path)}:6:1: CK004 " in res.stdout  # a comment alone on its line: column 1


def test_process_reports_an_unused_suppression_in_the_info_py_it_reads(tmp_path):

    made = tabarena_run(tmp_path)
    text = made.info.read_text().replace(
        "MethodMetadata.config(", "MethodMetadata.config(  # checks: ignore[TA110] old"
    )
    made.info.write_text(text)
    commented = next(x for x in text.splitlines() if "checks: ignore" in x)
    line, col = text.splitlines().index(commented) + 1, commented.index("#") + 1
    res = run_cli(
        [
            "-p",
            "tabarena",
            *process_args(
                made.run_dir,
                made.metadata_ref,
                made.cache_root,
                "--dry-run",
                "--format",
                "json",
                "--extend-ignore",
                "TA102",
            ),
        ],
        env=NO_AUTOLOAD,
        cwd=tmp_path,
    )  # TA102 (a warning located in info.py) off: no finding points there
    verdicts = {v["code"]: v for v in json.loads(res.stdout)["verdicts"]}
    shown = made.info.relative_to(tmp_path)  # below the working directory: shown relative to it
    assert not any(f"{shown}:" in v["message"] for c, v in verdicts.items() if c != "CK003")
    assert f"{shown}:{line}:{col}: suppression of TA110 matched no finding" in verdicts["CK003"]["message"]
    assert res.exit_code == ExitCode.OK  # a warning


def test_a_file_named_three_ways_is_tracked_once(tmp_path, monkeypatch):
    """Relative, absolute and through a symlink: one file, so its unused suppression is reported once."""
    (tmp_path / "src.py").write_text("a = 1  # checks: ignore[TOY001] kept for the old run\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "src.py")
    (tmp_path / "other.py").write_text("b = 2  # checks: ignore[TOY001] another file\n")
    monkeypatch.chdir(tmp_path)
    tracker = suppress.Tracker(
        frozenset({"TOY001"}), frozenset(), ("src.py", str(tmp_path / "src.py"), "link.py", "other.py", "missing.py")
    )
    report = tracker.finish({"TOY001"})
    assert sorted((s.path, code) for s, code in report.unused) == [("other.py", "TOY001"), ("src.py", "TOY001")]
    assert report.invalid == []


NAN_ITEM = "  dataset:\n    id: Idavidrein/gpqa\n    task_id: diamond\n  value: .nan\n"
FIRST_ITEM = "- dataset:\n    id: Idavidrein/gpqa\n    task_id: main\n  value: 41.2\n  notes: |\n"
#: where -> (a draft whose directive is string content, the same draft with a real comment instead)
SMUGGLED = {
    "escaped-quote": (
        '- notes: "see \\" # checks: ignore[HF201] looks like a comment"\n' + NAN_ITEM,
        '- notes: "see \\""  # checks: ignore[HF201] a real comment\n' + NAN_ITEM,
    ),
    "single-quoted": (
        "- notes: 'it''s # checks: ignore[HF201] looks like a comment'\n" + NAN_ITEM,
        "- notes: 'it''s'  # checks: ignore[HF201] a real comment\n" + NAN_ITEM,
    ),
    "block-scalar": (
        FIRST_ITEM + "    # checks: ignore[HF201] looks like a comment\n- " + NAN_ITEM[2:],
        FIRST_ITEM + "    text\n# checks: ignore[HF201] a real comment\n- " + NAN_ITEM[2:],
    ),
}


@pytest.mark.parametrize("where", sorted(SMUGGLED))
def test_yaml_string_content_is_never_a_suppression(tmp_path, where):
    """Fault: a suppression smuggled into YAML string content: `- notes: "see \\" # checks: ignore[HF201] reason"`, the
    same inside a `|` block scalar or a single-quoted string; a text scan took it for a comment and a NaN value passed
    `checks precommit eval-results` (exit 0)

    Must: comments are found by pyyaml's own scanner (tokens only, nothing composed), so string content is never a
    directive: HF201 reports the NaN (exit 1); a real comment in the same place still suppresses it; measured: a 1 KB
    draft scanned in 10 ms, a 2.3 MB one in 6.3 s (pyyaml's pure-Python scanner, run only on files that mention
    'checks')
    """
    smuggled, real = SMUGGLED[where]
    res = precommit(tmp_path, "eval-results", str(write_draft(tmp_path, "org--m", "gpqa", smuggled)))
    assert res.exit_code == ExitCode.BLOCKED and "HF201" in res.stdout, res.stdout + res.stderr
    ok = precommit(tmp_path, "eval-results", str(write_draft(tmp_path / "real", "org--m", "gpqa", real)))
    assert ok.exit_code == ExitCode.OK, ok.stdout + ok.stderr


def test_a_python_directive_inside_a_string_is_not_a_suppression(tmp_path):
    found = suppress._python("x.py", 'x = "# checks: ignore[TA110] in a string"\ny = 1  # checks: ignore[TA110] real\n')
    assert [(s.line, s.codes) for s in found] == [(2, ("TA110",))]
