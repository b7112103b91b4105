"""Every HF rule fails and passes on in-process facts; path traversal and atomic bundle writes.

The facts are real :class:`DraftFacts` built from real contracts, ledger rows, resolutions
and repo states (no Hub needed); a failing case corrupts one planned piece the way a bug
or a hostile input would.
"""

from __future__ import annotations

from types import SimpleNamespace

import attrs
import pytest

from checks import ActionFailed
from checks.testing import assert_fails, assert_passes, evaluate_rules
from hfmigrate_checks.drafts import bundle, validate
from hfmigrate_checks.drafts import decide as drafts
from hfmigrate_checks.drafts.action import PLANNER
from hfmigrate_checks.drafts.decide import Proposal
from hfmigrate_checks.facts.draft import DraftFacts, LiveBenchmark
from hfmigrate_checks.facts.eval_files import eval_files_facts
from hfmigrate_checks.facts.providers import planned_additions
from hfmigrate_checks.hub.resolve import Resolution
from hfmigrate_checks.hub.state import PendingPR, PrUpdate, RepoState
from hfmigrate_checks.rules import (
    contract as rules_contract,
)
from hfmigrate_checks.rules import (
    drafts as rules_drafts,
)
from hfmigrate_checks.rules import (
    hub as rules_hub,
)
from hfmigrate_checks.rules import (
    ledger as rules_ledger,
)
from hfmigrate_checks.rules.drafts import eval_results_shape
from hfmigrate_checks.source.contract import Contract, repo_id_problem
from hfmigrate_checks.source.ledger import LedgerRow, parse_cell

RULES = [*rules_contract.RULES, *rules_ledger.RULES, *rules_drafts.RULES, *rules_hub.RULES]
BENCH = "org/bench"
SHA = "a" * 40
CONTRACT = Contract(
    benchmark_id=BENCH,
    dataset_sha=SHA,
    eval_yaml_url="https://hub/datasets/org/bench/blob/x/eval.yaml",
    official=True,
    name="Bench",
    evaluation_framework="inspect-ai",
    task_ids=("main", "hard"),
    metric="accuracy",
    direction="higher_is_better",
    unit="percent",
    columns={"Main": "main", "Hard": "hard"},
    ignore_columns=("Avg",),
    source_name="Board",
)
LIVE = LiveBenchmark(True, SHA, ("main", "hard"))
PR_FILE = '- dataset:\n    id: org/bench\n    task_id: main\n  value: 70.5\n  source:\n    url: "https://pr.example"\n'


def row(label, task, value, n=1, **kw):
    cell = parse_cell(value)
    return LedgerRow(
        source_model=label,
        source_task=task,
        source_value=value,
        status=cell.status,
        qualifiers=cell.qualifiers,
        source_locator=f"board.csv:L{n} column {task!r}",
        source_url="https://example.org/board",
        **kw,
    )


def res(label, repo=None, status="exact"):
    return Resolution(
        label,
        status,
        repo if status == "exact" else None,
        "s" * 40 if status == "exact" else None,
        f"{repo} exists" if repo else "nothing named like it",
        (repo,) if repo else (),
    )


def state(repo, status="new", **kw):
    return RepoState(
        repo,
        BENCH,
        "main",
        kw.pop("sha", "b" * 40),
        status,
        kw.pop("reason", f"state {status}"),
        checked_at="2026-01-01T00:00:00+00:00",
        **kw,
    )


def owned_pr(author="me"):
    pr = PendingPR(
        4,
        author,
        "open",
        "Add",
        "refs/pr/4",
        "https://hub/own/Own-1B/discussions/4",
        (validate.EvalFile.parse(".eval_results/bench.yaml", PR_FILE),),
        True,
        True,
        True,
    )
    update = PrUpdate(
        4,
        author,
        pr.url,
        ".eval_results/bench.yaml",
        PR_FILE,
        tuple(validate.EvalFile.parse("x", PR_FILE).data),
        ("hard",),
    )
    return state("own/Own-1B", "update_existing_pr", pending_prs=(pr,), whoami="me", update=update)


def make(rows=None, resolutions=None, states=None, **kw):
    rows = (
        rows
        if rows is not None
        else [
            row("Alpha 7B", "Main", "71.2", 1),
            row("Alpha 7B", "Hard", "40.5", 1),
            row("Alpha 7B", "Avg", "55.85", 1),
            row("Own 1B", "Main", "70.5", 2),
            row("Own 1B", "Hard", "30.25", 2),
            row("Ghost", "Main", "n/a", 3),
            row("Ghost", "Hard", "12", 3),
        ]
    )
    resolutions = (
        resolutions
        if resolutions is not None
        else {
            "Alpha 7B": res("Alpha 7B", "alpha/Alpha-7B"),
            "Own 1B": res("Own 1B", "own/Own-1B"),
            "Ghost": res("Ghost", status="not_on_hub"),
        }
    )
    states = states if states is not None else {"alpha/Alpha-7B": state("alpha/Alpha-7B"), "own/Own-1B": owned_pr()}
    args = dict(
        contract=CONTRACT,
        rows=rows,
        live=LIVE,
        resolutions=resolutions,
        states=states,
        whoami="me",
        checked_at="2026-01-01T00:00:00+00:00",
        bundle_path="/tmp/bundle",
        benchmark_id=BENCH,
        planner=PLANNER,
    )
    args.update(kw)
    return DraftFacts(**args)


def judge(facts, action="draft"):
    return evaluate_rules(RULES, facts, action=action, target=BENCH)


def corrupt(facts, label, **draft_changes):
    """Replace the planned draft of ``label`` (what a bug in the planner would produce)."""
    changed = []
    for d in facts.decisions:
        if d.label == label:
            d = attrs.evolve(d, draft=attrs.evolve(d.draft, **draft_changes))
        changed.append(d)
    facts.decisions = tuple(changed)
    return facts


# ----------------------------------------------------------------------------- the consistent plan


def test_consistent_plan_passes_every_rule():
    facts = make()
    verdicts = judge(facts)
    for code in verdicts:
        assert_passes(verdicts, code)
    assert [d.decision for d in facts.decisions] == ["draft", "update_existing_pr", "not_on_hub"]
    own = facts.decisions[1].draft
    assert own.path == "drafts/own--Own-1B/.eval_results/bench.yaml"
    assert [(e["dataset"]["task_id"], e["value"]) for e in validate.EvalFile.parse("x", own.text).data] == [
        ("main", 70.5),
        ("hard", 30.25),
    ]


# ----------------------------------------------------------------------------- HF1xx


def test_hf101_fails_for_unofficial_unreadable_or_other_benchmark():
    assert_fails(judge(make(live=LiveBenchmark(False, SHA, ("main", "hard")))), "HF101", "not in the Hub's official")
    assert_fails(judge(make(live=LiveBenchmark(False, "", (), "HTTP 500"))), "HF101", "could not confirm")
    assert_fails(judge(make(benchmark_id="other/bench")), "HF101", "the contract is for 'org/bench'")
    assert_passes(judge(make()), "HF101")


def test_hf102_fails_when_eval_yaml_lost_a_task():
    verdicts = judge(make(live=LiveBenchmark(True, SHA, ("main",))))
    assert_fails(verdicts, "HF102", "maps column 'Hard' to task 'hard', which the current eval.yaml no longer declares")
    assert_passes(judge(make()), "HF102")


def test_hf102_offline_view(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(PR_FILE.replace("task_id: main", "task_id: mainn"))
    assert_fails(
        judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF102", "'mainn' is not declared"
    )
    assert_fails(judge(eval_files_facts([path]), "precommit-eval-results"), "HF102", "no benchmark contract")
    path.write_text(PR_FILE)
    assert_passes(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF102")


def test_hf103_invented_aggregate_task(tmp_path):
    invented = attrs.evolve(CONTRACT, columns={"Main": "main", "Avg": "overall"}, ignore_columns=())
    assert_fails(judge(make(contract=invented)), "HF103", "invented aggregate task 'overall'")
    path = tmp_path / "bench.yaml"
    path.write_text(PR_FILE.replace("task_id: main", "task_id: overall"))
    assert_fails(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF103", "entry 1")
    declared = attrs.evolve(CONTRACT, task_ids=("main", "overall"))
    assert_passes(judge(eval_files_facts([path], declared), "precommit-eval-results"), "HF103")


# ----------------------------------------------------------------------------- HF2xx


def test_hf201_values_numeric_finite(tmp_path):
    path = tmp_path / "bench.yaml"
    path.write_text(PR_FILE.replace("70.5", '"70.5*"'))
    assert_fails(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF201", "value must be a number")
    path.write_text(PR_FILE.replace("70.5", ".inf"))
    assert_fails(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF201", "finite")
    path.write_text(PR_FILE)
    assert_passes(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF201")


def test_hf202_every_added_value_traces_to_one_row():
    facts = make()
    text = facts.decisions[0].draft.text.replace("71.2", "99.9")
    assert_fails(judge(corrupt(facts, "Alpha 7B", text=text)), "HF202", "value 99.9 matches 0 ledger rows")
    assert_passes(judge(make()), "HF202")


def test_two_variants_for_one_task_are_never_picked():
    rows = [
        row("Alpha 7B", "Main", "71.2", 1, source_variant="tools"),
        row("Alpha 7B", "Main", "69.0", 2, source_variant="no tools"),
    ]
    facts = make(
        rows=rows,
        resolutions={"Alpha 7B": res("Alpha 7B", "alpha/Alpha-7B")},
        states={"alpha/Alpha-7B": state("alpha/Alpha-7B")},
    )
    (decision,) = facts.decisions
    assert decision.decision == "needs_review" and "2 values for task 'main'" in decision.reason
    assert not facts.drafts


def test_hf203_every_source_model_accounted_for():
    assert_fails(judge(make(mapped_labels=("Nobody",))), "HF203", "names 'Nobody', which has no row in the ledger")
    facts = make()
    facts.output_files = {**facts.output_files, "review.md": "# empty\n"}
    assert_fails(judge(facts), "HF203", "review.md has no row for 'Alpha 7B'")
    assert_passes(judge(make(mapped_labels=("Alpha 7B",))), "HF203")


def test_hf204_unmapped_column():
    rows = [row("Alpha 7B", "Main", "71.2"), row("Alpha 7B", "Params", "7B")]
    facts = make(
        rows=rows,
        resolutions={"Alpha 7B": res("Alpha 7B", "alpha/Alpha-7B")},
        states={"alpha/Alpha-7B": state("alpha/Alpha-7B")},
    )
    assert_fails(judge(facts), "HF204", "ledger column 'Params' (first at board.csv:L1 column 'Params')")
    assert_passes(judge(make()), "HF204")


# ----------------------------------------------------------------------------- HF3xx / HF4xx


def test_hf301_only_exact_matches_get_drafts():
    facts = make()
    facts.decisions = (
        attrs.evolve(facts.decisions[0], resolution=res("Alpha 7B", status="ambiguous")),
        *facts.decisions[1:],
    )
    assert_fails(judge(facts), "HF301", "its match is 'ambiguous', not exact")
    facts = corrupt(make(), "Alpha 7B", repo_id="../../x")
    assert_fails(judge(facts), "HF301", "repo id must be exactly 'owner/name' (got '../../x')")
    assert_passes(judge(make()), "HF301")


def test_two_labels_on_one_repo_are_needs_review():
    rows = [row("Alpha 7B", "Main", "71.2"), row("Alpha-7B", "Main", "70.0", 2)]
    facts = make(
        rows=rows,
        resolutions={"Alpha 7B": res("Alpha 7B", "alpha/Alpha-7B"), "Alpha-7B": res("Alpha-7B", "alpha/Alpha-7B")},
        states={"alpha/Alpha-7B": state("alpha/Alpha-7B")},
    )
    assert [d.decision for d in facts.decisions] == ["needs_review", "needs_review"]
    assert "also the exact match of 'Alpha-7B'" in facts.decisions[0].reason


def test_hf401_no_new_file_next_to_an_existing_result():
    facts = make()
    facts.decisions = (
        attrs.evolve(facts.decisions[0], state=state("alpha/Alpha-7B", "duplicate_open_pr")),
        *facts.decisions[1:],
    )
    assert_fails(judge(facts), "HF401", "a new file is drafted but the repo state is 'duplicate_open_pr'")
    facts = make()
    inconsistent = state("alpha/Alpha-7B", pending_prs=owned_pr().pending_prs)
    facts.decisions = (attrs.evolve(facts.decisions[0], state=inconsistent), *facts.decisions[1:])
    assert_fails(judge(facts), "HF401", "the benchmark is already in PR #4")
    assert_passes(judge(make()), "HF401")


@pytest.mark.parametrize("status", ["already_present", "duplicate_open_pr", "already_in_own_open_pr", "needs_review"])
def test_skipped_states_get_no_draft(status):
    facts = make(states={"alpha/Alpha-7B": state("alpha/Alpha-7B", status), "own/Own-1B": owned_pr()})
    assert facts.decisions[0].decision == status and facts.decisions[0].draft is None


def test_hf402_owned_pr_exception():
    assert_fails(judge(make(whoami="someone")), "HF402", "PR #4 is by 'me', not the authenticated account 'someone'")
    assert_fails(judge(make(whoami="")), "HF402", "no authenticated account")
    facts = make()
    kept = facts.decisions[1].draft.kept
    text = drafts.emit_yaml(
        [{**kept[0], "value": 1.0}, *validate.EvalFile.parse("x", facts.decisions[1].draft.text).data[1:]]
    )
    assert_fails(judge(corrupt(facts, "Own 1B", text=text)), "HF402", "does not keep PR #4's entries unchanged")
    assert_passes(judge(make()), "HF402")


def test_owned_pr_conflict_is_needs_review():
    rows = [row("Own 1B", "Main", "70.6"), row("Own 1B", "Hard", "30.25")]
    facts = make(rows=rows, resolutions={"Own 1B": res("Own 1B", "own/Own-1B")}, states={"own/Own-1B": owned_pr()})
    (decision,) = facts.decisions
    assert decision.decision == "needs_review" and "PR #4 has 70.5, the source prints '70.6'" in decision.reason


def test_hf403_every_file_and_diff_checked():
    assert_fails(
        judge(make(states={"own/Own-1B": owned_pr()})),
        "HF403",
        "alpha/Alpha-7B: exact match of 'Alpha 7B' was never inspected",
    )
    facts = make()
    facts.decisions = (
        attrs.evolve(facts.decisions[0], state=state("alpha/Alpha-7B", problems=("PR #3 diff: HTTP 500",))),
        *facts.decisions[1:],
    )
    assert_fails(judge(facts), "HF403", "drafted although reading it failed: PR #3 diff: HTTP 500")
    pr = attrs.evolve(owned_pr().pending_prs[0], diff_checked=False, matches_benchmark=False)
    facts = make()
    facts.decisions = (
        attrs.evolve(facts.decisions[0], state=state("alpha/Alpha-7B", pending_prs=(pr,))),
        *facts.decisions[1:],
    )
    assert_fails(judge(facts), "HF403", "the diff of pending PR #4 was not read")
    assert_passes(judge(make()), "HF403")


# ----------------------------------------------------------------------------- HF5xx


def _alpha(**cell):
    """Facts of one ledger row, Alpha 7B's Main score 71.2 with ``cell``'s extra fields, resolved and new."""
    return make(
        rows=[row("Alpha 7B", "Main", "71.2", **cell)],
        resolutions={"Alpha 7B": res("Alpha 7B", "alpha/Alpha-7B")},
        states={"alpha/Alpha-7B": state("alpha/Alpha-7B")},
    )


def test_hf501_verify_token_only_when_supplied():
    facts = make()
    text = facts.decisions[0].draft.text + '  verifyToken: "eyJforged"\n'
    assert_fails(judge(corrupt(facts, "Alpha 7B", text=text)), "HF501", "verifyToken was not supplied")
    supplied = _alpha(verify_token="eyJsupplied")
    assert 'verifyToken: "eyJsupplied"' in supplied.drafts[0].text
    assert_passes(judge(supplied), "HF501")


def test_hf502_dates_only_when_known_and_quoted(tmp_path):
    known = _alpha(eval_date="2025-01-15")
    assert 'date: "2025-01-15"' in known.drafts[0].text
    assert_passes(judge(known), "HF502")
    facts = make()
    text = facts.decisions[0].draft.text.replace("  value: 71.2\n", '  value: 71.2\n  date: "2026-01-01"\n')
    assert_fails(judge(corrupt(facts, "Alpha 7B", text=text)), "HF502", "the source states 'no evaluation date'")
    path = tmp_path / "bench.yaml"
    path.write_text(PR_FILE + "  date: 2025-01-15\n")
    assert_fails(judge(eval_files_facts([path], CONTRACT), "precommit-eval-results"), "HF502", "quoted string")


def test_planned_additions_are_the_drafts_and_absent_from_files_on_disk(tmp_path):
    """HF502 asks the provider: the draft's added entries, and None (not an error) for files already written."""
    facts = make()
    added = planned_additions(SimpleNamespace(facts=facts))
    assert [entry["value"] for decision, _, entry in added if decision.label == "Alpha 7B"] == [71.2, 40.5]
    path = tmp_path / "bench.yaml"
    path.write_text(PR_FILE)
    assert planned_additions(SimpleNamespace(facts=eval_files_facts([path], CONTRACT))) is None


def test_hf503_no_credentials(monkeypatch):
    facts = make()
    facts.output_files = {**facts.output_files, "review.md": "token hf_" + "A1b2C3d4" * 3 + "\n"}
    assert_fails(judge(facts), "HF503", "review.md line 1 contains a credential")
    monkeypatch.setenv("MY_SECRET_TOKEN", "s3cr3t-value")
    facts = make()
    facts.output_files = {**facts.output_files, "validation.txt": "x\nfound s3cr3t-value\n"}
    assert_fails(judge(facts), "HF503", "validation.txt line 2")
    monkeypatch.delenv("MY_SECRET_TOKEN")
    assert_passes(judge(make()), "HF503")


def test_hf504_no_submit_script():
    facts = make()
    facts.output_files = {**facts.output_files, "submit.sh": "echo\n"}
    assert_fails(judge(facts), "HF504", "submit.sh is not part of a review bundle")
    facts = make()
    facts.output_files = {**facts.output_files, "review.md": "run: hf upload org/m drafts --create-pr\n"}
    assert_fails(judge(facts), "HF504", "contains a Hub write command")
    assert_passes(judge(make()), "HF504")


def test_hf505_drafts_validate():
    facts = make()
    text = facts.decisions[0].draft.text.replace("main", "mainn")
    facts = corrupt(facts, "Alpha 7B", text=text)
    assert_fails(judge(facts), "HF505", "FAIL drafts/alpha--Alpha-7B/.eval_results/bench.yaml")
    assert_passes(judge(make()), "HF505")


# ----------------------------------------------------------------------------- paths and atomic writes


@pytest.mark.parametrize(
    "repo_id",
    [
        "../../x",
        "../x",
        "/abs/x",
        "a/b/c",
        "a",
        "a/..",
        "..",
        "a\x00/b",
        "a--b/c",
        ".hidden/x",
        "a/" + "n" * 200,
        "a/b.",
        "a/b\\..\\c",
        "",
    ],
)
def test_hostile_repo_ids_never_become_paths(repo_id):
    assert repo_id_problem(repo_id)
    with pytest.raises(ValueError):
        drafts.draft_path(repo_id, "bench.yaml")


def test_hostile_resolution_is_not_drafted():
    rows = [row("../../etc/passwd", "Main", "71.2")]
    facts = make(rows=rows, resolutions={"../../etc/passwd": res("../../etc/passwd", "../../x")}, states={})
    (decision,) = facts.decisions
    assert (
        decision.decision == "needs_review" and "must be exactly 'owner/name'" in decision.reason and not facts.drafts
    )


def test_pr_file_names_are_reduced_to_a_plain_name_or_refused():
    own = owned_pr()
    dotted = attrs.evolve(own, update=attrs.evolve(own.update, path=".eval_results/../../../x.yaml"))
    facts = make(states={"alpha/Alpha-7B": state("alpha/Alpha-7B"), "own/Own-1B": dotted})
    assert facts.decisions[1].draft.path == "drafts/own--Own-1B/.eval_results/x.yaml"
    hostile = attrs.evolve(own, update=attrs.evolve(own.update, path=".eval_results/\x00..yaml"))
    facts = make(states={"alpha/Alpha-7B": state("alpha/Alpha-7B"), "own/Own-1B": hostile})
    assert facts.decisions[1].decision == "needs_review" and facts.decisions[1].draft is None
    assert "is not a plain '<name>.yaml'" in facts.decisions[1].reason


def test_bundle_writer_refuses_escaping_paths(tmp_path):
    files = {"review.md": "x\n", "validation.txt": "Checked 0\n", "../escape.txt": "evil"}
    with pytest.raises(ActionFailed, match="would land outside the bundle"):
        bundle.write(tmp_path / "out", files, CONTRACT)
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out").exists()
    assert list(tmp_path.iterdir()) == []


def test_interrupted_write_keeps_the_previous_bundle(tmp_path, monkeypatch):
    facts = make(bundle_path=tmp_path / "out")
    bundle.write(tmp_path / "out", facts.output_files, CONTRACT)
    before = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "out").rglob("*"))

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "validate_bundle", boom)
    with pytest.raises(KeyboardInterrupt):
        bundle.write(tmp_path / "out", {**facts.output_files, "review.md": "new\n"}, CONTRACT)
    after = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "out").rglob("*"))
    assert after == before and (tmp_path / "out" / "review.md").read_text() == facts.output_files["review.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_directory_that_is_not_a_bundle_is_never_replaced(tmp_path):
    facts = make(bundle_path=tmp_path / "project")
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "precious.txt").write_text("keep me")
    with pytest.raises(ActionFailed, match="not a review bundle"):
        bundle.write(tmp_path / "project", facts.output_files, CONTRACT)
    assert (tmp_path / "project" / "precious.txt").read_text() == "keep me"
    (tmp_path / "file").write_text("x")
    assert "is not a directory" in bundle.replaceable_problem(tmp_path / "file")
    bundle.write(tmp_path / "fresh", facts.output_files, CONTRACT)
    assert bundle.replaceable_problem(tmp_path / "fresh") is None


# --------------------------------------------------------------------------- HF506 (added with the pre-commit hook)


def _eval_facts(tmp_path, files):

    paths = []
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return eval_files_facts(paths)


def test_hf506_fails_on_shape_problems_with_lines(tmp_path):

    facts = _eval_facts(
        tmp_path,
        {
            "m/.eval_results/a.yaml": "- dataset: {id: cais/hle, task_id: hle}\n  value: 1.0\n"
            "- dataset: {id: cais/hle, task_id: x, revison: main}\n  value: 2.0\n  source: {name: p}\n",
            "m/.eval_results/b.yaml": "- dataset: {id: cais/hle, task_id: hle}\n  value: 3.0\n",
            "m/.eval_results/c.yaml": "{}\n",
        },
    )
    verdict = assert_fails(evaluate_rules([eval_results_shape], facts, action="precommit-eval-results"), "HF506")
    messages = {(f.path.rsplit("/", 1)[-1], f.line, f.message) for f in verdict.findings}
    assert ("a.yaml", 3, "entry 2: source.url is required when source is present") in messages
    assert any(m.startswith("entry 2: dataset has unknown key(s) revison") for _, _, m in messages)
    assert any(p == "b.yaml" and "is already in" in m for p, _, m in messages)
    assert ("c.yaml", 1, "the root must be a non-empty YAML list of results") in messages


def test_hf506_passes_on_well_formed_files(tmp_path):

    facts = _eval_facts(
        tmp_path,
        {
            "m/.eval_results/a.yaml": "- dataset: {id: cais/hle, task_id: hle}\n  value: 1.0\n"
            "  source: {url: 'https://example.org/paper'}\n",
            "other/.eval_results/a.yaml": "- dataset: {id: cais/hle, task_id: hle}\n  value: 1.0\n",
        },
    )
    assert_passes(evaluate_rules([eval_results_shape], facts, action="precommit-eval-results"), "HF506")


def test_a_draft_takes_its_source_from_the_contract_when_the_ledger_has_none():

    bare = LedgerRow(source_model="A", source_task="Main", source_value="71.2", source_locator="b.csv:L2")
    with_page = attrs.evolve(CONTRACT, source_url="https://example.org/leaderboard")
    assert Proposal("main", bare).entry(with_page)["source"] == {
        "url": "https://example.org/leaderboard",
        "name": "Board",
    }
    assert "source" not in Proposal("main", bare).entry(CONTRACT)  # no page anywhere: none is invented
    own = attrs.evolve(bare, source_url="https://example.org/row")
    assert Proposal("main", own).entry(with_page)["source"]["url"] == "https://example.org/row"


def test_a_run_qualifier_is_the_drafts_notes():

    tools = LedgerRow(
        source_model="Sable-22B",
        source_task="Main",
        source_value="80.1",
        source_locator="r.md:L9",
        source_variant="with tools",
        qualifiers="† with tools",
    )
    assert Proposal("main", tools).entry(CONTRACT)["notes"] == "with tools"
