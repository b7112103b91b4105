"""The HTML reports: what they say, and how a real browser (headless Chromium) renders them.

Each report is rendered by Chromium: the screenshot must not be blank, the rendered DOM must
hold the verdict table, the heatmap and the plots, and the page must try no network request
(a loopback proxy records any). Hostile names (a method, a task, a model label, a footnote)
must render as text: no script of theirs runs, no element of theirs exists, with and without
the page's Content-Security-Policy.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import pickle
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import pytest
from tests.support.browser import chromium, ink, render

from checks.testing import run_cli
from hfmigrate_checks import demo
from tabarena_checks.report import html_run
from tabarena_checks.synth.generate import generate_run
from tabarena_checks.testing.commands import process_args

SCRIPT = "<script>document.documentElement.setAttribute('data-pwned','script')</script>"
#: no '/' so it can also be a directory name
IMG = "\"><img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
IMG_URL = "\"><img src=http://pwned.invalid/i.png onerror=\"document.documentElement.setAttribute('data-pwned','i')\">"
INFO = """from tabarena.models._method_metadata import MethodMetadata

good = MethodMetadata.config(method="Nori", suite="nori-2026-11", ag_key="TA-NORI", is_bag=True,
                             validation_protocol="8x1")
wrong = MethodMetadata.config(method="Nori", suite="nori-2026-11", ag_key="TA-OTHER", is_bag=True,
                              validation_protocol="8x1")
"""
#: the reports' runs read no index cache, so each report shows what its run's own files hold
ENV = {"CHECKS_NO_CACHE": "1"}


def _small_run(path: Path, *, configs: int, repeats: int, folds: int, defects: tuple[str, ...] = ()) -> Path:
    """A generated 8x1 run small enough for a report test (arrays at 5% of their size)."""
    return generate_run(
        path,
        configs=configs,
        repeats=repeats,
        folds=folds,
        validation_protocol="8x1",
        array_scale=0.05,
        defects=defects,
    )


@pytest.fixture(scope="module")
def browser():
    if chromium() is None:
        if os.environ.get("CI"):
            pytest.fail("/usr/bin/chromium is missing: `make test` installs the Debian package chromium")
        pytest.skip("chromium is not installed (`make test` installs it)")
    return chromium()


@pytest.fixture(scope="module")
def run_reports(tmp_path_factory):
    """A run with every kind of defect the report marks, and its three reports."""
    tmp = tmp_path_factory.mktemp("html")
    data = _small_run(
        tmp / "run", configs=4, repeats=2, folds=3, defects=("corrupt", "duplicate", "missing_split", "fidelity_drift")
    )
    (tmp / "info.py").write_text(INFO)
    results = {
        "inspect": run_cli(["inspect", str(data), "--html", str(tmp / "inspect.html")], cwd=tmp, env=ENV),
        "blocked": run_cli(
            process_args(data, "info.py:wrong", tmp / "cache", "--html", str(tmp / "blocked.html")),
            cwd=tmp,
            env=ENV,
        ),
    }
    clean = _small_run(tmp / "clean", configs=2, repeats=1, folds=3)
    results["passed"] = run_cli(
        process_args(clean, "info.py:good", tmp / "cache", "--html", str(tmp / "passed.html")),
        cwd=tmp,
        env=ENV,
    )
    return tmp, results


@pytest.fixture(scope="module")
def review(tmp_path_factory):

    tmp = tmp_path_factory.mktemp("review")
    return demo.run(tmp / "hf")


# ----------------------------------------------------------------------------- content, without a browser


def test_reports_are_written_passed_or_blocked(run_reports):
    tmp, results = run_reports
    assert results["inspect"].exit_code == 0, results["inspect"].stderr
    assert results["blocked"].exit_code == 1 and "blocked" in results["blocked"].stdout
    assert results["passed"].exit_code == 0, results["passed"].stdout
    for name in ("inspect", "blocked", "passed"):
        text = (tmp / f"{name}.html").read_text()
        assert text.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in text
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), f"{name}.html links out"
    assert "outcome: blocked" in (tmp / "blocked.html").read_text()
    assert "outcome: ran" in (tmp / "passed.html").read_text()
    assert "HTML report:" in results["inspect"].stderr


def test_verdicts_failed_first_with_rule_text(run_reports):
    tmp, _ = run_reports
    text = (tmp / "blocked.html").read_text()
    table = text[text.index('id="verdict-table"') :]
    outcomes = re.findall(r'<span class="badge b-(?:failed|passed|waived|crashed)[^"]*">(\w+)</span>', table)
    assert outcomes[0] == "failed" and "passed" in outcomes
    assert outcomes.index("passed") > max(i for i, o in enumerate(outcomes) if o == "failed")
    assert "checks rule TA104" in text and "## Why is this bad?" in text  # the explanation is embedded


def test_heatmap_counts_match_the_coverage_facts(run_reports):

    tmp, _ = run_reports
    text = (tmp / "inspect.html").read_text()
    facts = json.loads(run_cli(["inspect", str(tmp / "run" / "data"), "--format", "json"]).stdout)["methods"][0]
    missing = Counter((c["config"], c["task"]) for c in facts["coverage"]["missing_cells"])
    assert missing
    for (config, task), n in missing.items():  # 2 repeats x 3 folds planned per task
        assert re.search(
            rf"<title>{re.escape(config)} / task {task} [^<]*: {6 - n} of 6 splits present "
            rf"\(2 repeats x 3 folds planned\)",
            text,
        ), (config, task)
    assert "duplicate result(s)" in text and "unreadable file(s)" in text
    assert "By config family" in text  # TA-Nori_c* and TA-Nori_r*


def test_html_target_in_a_missing_directory_is_refused_before_anything_runs(tmp_path, run_reports):
    tmp, _ = run_reports
    result = run_cli(["inspect", str(tmp / "run" / "data"), "--html", str(tmp_path / "nowhere" / "r.html")])
    assert result.exit_code == 2 and "does not exist" in result.stderr
    result = run_cli(
        [
            "run",
            "process",
            str(tmp / "run" / "data"),
            "--method-metadata",
            str(tmp / "info.py:good"),
            "--html",
            str(tmp_path),
        ],
        cwd=tmp_path,
    )
    assert result.exit_code == 2 and "is a directory" in result.stderr
    assert not (tmp_path / ".checks").exists()  # refused before a decision was recorded


def test_review_page_has_every_part(review):
    text = review.read_text()
    assert "No Hugging Face pull requests were opened while preparing this bundle." in text
    for part in (
        'id="models"',
        'id="drafts"',
        'id="ledger"',
        'id="excluded"',
        'class="diff"',
        "update_existing_pr",
        "duplicate_open_pr",
        "not_on_hub",
        "README.md:L",
    ):
        assert part in text, part


# ----------------------------------------------------------------------------- in the browser


def _assert_offline(rendered):
    assert rendered.requests == (), f"the page tried the network: {rendered.requests}"


def _assert_not_blank(rendered):
    assert ink(rendered.screenshot) > 0.02, f"{rendered.screenshot} looks blank below its title"


@pytest.mark.parametrize("name", ["inspect", "blocked", "passed"])
def test_run_report_renders_in_chromium(browser, run_reports, name):
    tmp, _ = run_reports
    out = tmp / f"shots-{name}"
    out.mkdir(exist_ok=True)
    rendered = render(tmp / f"{name}.html", out)
    _assert_not_blank(rendered)
    _assert_offline(rendered)
    dom = rendered.dom
    assert 'id="verdict-table"' in dom
    assert len(re.findall(r'<g class="hrow"', dom)) >= 2, "heatmap rows missing"
    for plot in ("fidelity-0", "folds-0", "metric-0"):
        assert re.search(rf'<svg[^>]*id="{plot}"', dom), f"plot {plot} missing from the DOM"
    assert re.search(r'<html[^>]*class="js"', dom), "the page's own script did not run"


def test_the_essentials_need_no_javascript(browser, run_reports, tmp_path):
    """With scripts off the page still shows verdicts, heatmap and plots (only re-sorting needs the script)."""
    tmp, _ = run_reports
    rendered = render(tmp / "blocked.html", tmp_path, javascript=False)
    _assert_not_blank(rendered)
    dom = rendered.dom
    assert not re.search(r'<html[^>]*class="js"', dom), "scripts were not off"
    assert 'id="verdict-table"' in dom and len(re.findall(r'<g class="hrow"', dom)) >= 2
    assert all(re.search(rf'<svg[^>]*id="{plot}"', dom) for plot in ("fidelity-0", "folds-0", "metric-0"))


def test_heatmap_rows_re_sort_in_chromium(browser, run_reports, tmp_path):
    """The sort buttons (the page's only script) reorder the rows; without a click the order is worst first."""
    tmp, _ = run_reports
    click = (
        "document.querySelector('#coverage-0 svg#heatmap-0').closest('[data-sortable]')"
        ".querySelector('button[data-key=name]').click()"
    )
    rendered = render(tmp / "inspect.html", tmp_path, script=click)
    grid = rendered.dom[rendered.dom.index('id="heatmap-0"') :]
    grid = grid[: grid.index("</svg>")]
    rows = re.findall(r'<g class="hrow" data-name="([^"]+)"[^>]*transform="translate\(0,([\d.]+)\)"', grid)
    by_position = [name for name, _ in sorted(rows, key=lambda r: float(r[1]))]
    assert by_position == sorted(
        by_position, key=lambda n: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", n)]
    )
    static = (tmp / "inspect.html").read_text()
    grid = static[static.index('id="heatmap-0"') :]
    covs = [
        float(c)
        for c in re.findall(r'<g class="hrow" data-name="[^"]+" data-cov="([\d.]+)"', grid[: grid.index("</svg>")])
    ]
    assert covs == sorted(covs) and covs[0] < 1.0  # without the script: worst coverage first
    assert [n for n, _ in rows] != by_position  # the click moved rows


def test_review_page_renders_in_chromium(browser, review, tmp_path):
    rendered = render(review, tmp_path)
    _assert_not_blank(rendered)
    _assert_offline(rendered)
    assert 'class="diff"' in rendered.dom and 'class="models"' in rendered.dom
    assert "nothing was opened, updated or uploaded on the Hugging Face Hub" in rendered.dom


def test_the_browser_harness_sees_requests_and_scripts(browser, tmp_path):
    """The detectors themselves: an unescaped payload on a page without a policy does run and does call out."""
    page = tmp_path / "control.html"
    page.write_text(f"<!DOCTYPE html><html><body><p>{SCRIPT}{IMG_URL}</p></body></html>")
    rendered = render(page, tmp_path)
    assert re.search(r"<html[^>]*data-pwned=", rendered.dom)
    assert any("pwned.invalid" in line for line in rendered.requests), rendered.requests


# ----------------------------------------------------------------------------- hostile names


def _poison_run(data: Path) -> None:
    """Give one config a hostile framework and directory name, and every task a hostile dataset name."""
    for path in sorted(data.rglob("results.pkl")):
        result = pickle.loads(gzip.decompress(path.read_bytes()))
        result["task_metadata"]["name"] = f"{result['task_metadata']['name']}{SCRIPT}{IMG_URL}"
        if "_c1_" in result["framework"]:
            old, new = result["framework"], result["framework"] + SCRIPT + IMG_URL
            result["framework"] = new
            for key in ("pred_proba_dict_val", "pred_proba_dict_test"):
                preds = result["simulation_artifacts"][key]
                preds[new] = preds.pop(old)
        path.write_bytes(gzip.compress(pickle.dumps(result)))
    for config in [p for p in data.iterdir() if "_c1_" in p.name]:
        config.rename(config.with_name(config.name + IMG))


HOSTILE_LEADERBOARD = f"""# Toy leaderboard

## Results

| Model | Main | Hard | Average |
|---|---:|---:|---:|
| acme/Alpha-7B | 71.2 | 40.5{IMG_URL} | 55.85 |
| {SCRIPT} 7B | 68.0 | 38.1{SCRIPT} | 53.05 |
| Eta 7B{IMG_URL} | 66.4 | 35.0 | 50.7 |
"""


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):

    tmp = tmp_path_factory.mktemp("hostile")
    data = _small_run(tmp / "run", configs=2, repeats=1, folds=2, defects=("fidelity_drift",))
    _poison_run(data)
    (tmp / "info.py").write_text(INFO.replace('method="Nori"', f"method={('Nori' + SCRIPT + IMG_URL)!r}"))
    inspect = run_cli(
        ["inspect", str(data), "--method-metadata", "info.py:wrong", "--html", str(tmp / "inspect.html")],
        cwd=tmp,
        env=ENV,
    )
    process = run_cli(
        process_args(data, "info.py:wrong", tmp / "cache", "--html", str(tmp / "process.html")),
        cwd=tmp,
        env=ENV,
    )
    assert inspect.exit_code == 0, inspect.stderr
    assert process.exit_code == 1, process.stdout + process.stderr
    review = demo.run(tmp / "hf", leaderboard=HOSTILE_LEADERBOARD)
    return [tmp / "inspect.html", tmp / "process.html", review]


def test_hostile_names_are_in_the_reports_as_text(hostile):
    inspect, process, review = (p.read_text() for p in hostile)
    for text in (inspect, process, review):
        assert "&lt;script&gt;document.documentElement.setAttribute(" in text
        assert "&lt;img src=" in text
        assert "<img" not in text and text.count("<script>") == 1
    assert "Nori&lt;script&gt;" in process  # the method name, from info.py
    for text in (inspect, process, review):
        tags = _tags(text)
        assert "img" not in {t for t, _ in tags} and [t for t, _ in tags].count("script") == 1
        assert not [a for _, attrs in tags for a, _ in attrs if a.startswith("on")], "an event handler attribute"


def _tags(text: str) -> list[tuple[str, list]]:
    """Every element the HTML parser sees (tag, attributes): hostile names must not add any."""
    found = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, attrs))

    Collect().feed(text)
    return found


@pytest.mark.parametrize("with_policy", [True, False], ids=["with-csp", "escaping-alone"])
def test_hostile_names_never_execute_in_chromium(browser, hostile, tmp_path, with_policy):
    for n, page in enumerate(hostile):
        if not with_policy:  # escaping must hold on its own, not only because the policy blocks scripts
            stripped = tmp_path / f"nocsp-{n}.html"
            stripped.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page.read_text()))
            page = stripped
        out = tmp_path / f"p{n}"
        out.mkdir()
        rendered = render(page, out)
        assert not re.search(r"<html[^>]*data-pwned", rendered.dom), f"a hostile name ran in {page.name}"
        assert not re.search(r"<img\b", rendered.dom), f"a hostile name became an element in {page.name}"
        assert len(re.findall(r"<script\b", rendered.dom)) == 1
        _assert_offline(rendered)
        _assert_not_blank(rendered)


def test_heatmap_at_200_configs_by_51_tasks_stays_small_and_says_every_count():
    """The issue's scale: every one of the 10,200 cells has its hover text, families sum the configs."""
    tasks = [str(363600 + i) for i in range(51)]
    cells = [
        dict(
            config=f"{fam}_{'c1' if c == 0 else f'r{c}'}_BAG_L1",
            task=t,
            present=30 - (c + i) % 7 // 6,
            expected=30,
            repeats=10,
            folds=3,
            results=30 - (c + i) % 7 // 6,
            unreadable=0,
        )
        for fam in ("LightGBM", "CatBoost")
        for c in range(100)
        for i, t in enumerate(tasks)
    ]
    by_config = html_run.heatmap(cells, {}, ident="h", what="configs")
    by_family = html_run.heatmap(html_run.aggregate(cells), {}, ident="f", what="families")
    assert (
        len(re.findall(r"<title>[^<]*: \d+ of 30 splits present \(10 repeats x 3 folds planned\)</title>", by_config))
        == 200 * 51
    )
    assert len(by_config) + len(by_family) < 5 * 10**6
    assert "LightGBM_c*_BAG_L1 (1 configs) / task" in by_family and "LightGBM_r*_BAG_L1 (99 configs)" in by_family
    expected = sum(c["present"] for c in cells if c["task"] == "363600" and c["config"].startswith("LightGBM_r"))
    assert f"LightGBM_r*_BAG_L1 (99 configs) / task 363600: {expected} of 2970 splits present" in by_family


def test_process_report_lists_the_waivers_and_what_they_covered(tmp_path):

    data = _small_run(tmp_path / "run", configs=2, repeats=1, folds=2)
    (tmp_path / "info.py").write_text(INFO)
    within_a_year = (dt.date.today() + dt.timedelta(days=300)).isoformat()  # TA104 is a publishing gate
    (tmp_path / "rules.toml").write_text(
        '[[waivers]]\nrule = "TA104"\ntarget = "Nori@nori-2026-11"\nreason = "renamed <b>upstream</b>"\n'
        f'owner = "maintainer@example.org"\nexpires = {within_a_year}\n'
        '[[waivers]]\nrule = "TA305"\ntarget = "other"\nreason = "r"\nowner = "o"\nexpires = 2999-01-31\n'
    )
    result = run_cli(
        process_args(data, "info.py:wrong", tmp_path / "cache", "--html", "r.html"),
        cwd=tmp_path,
    )
    assert result.exit_code == 0, result.stdout  # the only error (TA104) is waived
    text = (tmp_path / "r.html").read_text()
    assert "<td>TA104:Nori@nori-2026-11</td><td>renamed &lt;b&gt;upstream&lt;/b&gt;</td>" in text
    assert re.search(r"<td>TA104:Nori@nori-2026-11</td>(<td>[^<]*</td>){3}<td>used</td>", text)
    assert re.search(r"<td>TA305:other</td>(<td>[^<]*</td>){3}<td>not used</td>", text)
    assert '<span class="badge b-waived">waived</span>' in text and "HTML report: r.html" in result.stderr
