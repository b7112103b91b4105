"""The built-in plugins' fact builders (tabarena_checks.testing, hfmigrate_checks.testing) give a plugin author what each built-in action really gathers,
so a third-party rule can be tested against realistic facts and the built-in rules agree on them."""

from __future__ import annotations

from checks import Finding, rule
from checks.model import Outcome
from checks.testing import assert_fails, assert_passes, evaluate_rules
from hfmigrate_checks.testing.facts import draft_facts, eval_results_facts
from tabarena_checks.facts.constants import CREDENTIAL_ENV
from tabarena_checks.publish.register import whole_edit
from tabarena_checks.rules.raw import RULES as RAW
from tabarena_checks.rules.register import RULES
from tabarena_checks import testing as tabarena


@rule("MY101", "my-reference-url-present", actions=("process", "upload", "precommit-info"))
def reference_url_present(ctx):
    """A plugin author's rule, as in docs/writing-plugins.md."""
    metadata = ctx.facts.metadata
    if not metadata.reference_url:
        yield Finding(f"{metadata.method}: set reference_url in info.py", target=metadata.method)


def test_process_facts_are_the_real_run(tmp_path):
    facts = tabarena.process_facts(tmp_path, defects=("fidelity_drift",))
    assert facts.metadata.method == "Nori" and facts.metadata.effective_suite == "nori-2026-11"
    assert len(facts.index.files) == 2  # one task, two folds
    assert facts.inference.fidelity, "the fidelity_drift defect shows in the inference"
    assert_fails(evaluate_rules([reference_url_present], facts), "MY101", "set reference_url")

    verdicts = evaluate_rules(RAW, facts, action="process")
    assert_fails(verdicts, "TA305", "not close to the prediction rebuilt")
    assert_passes(verdicts, "TA301")


def test_a_clean_run_passes_the_raw_rules(tmp_path):

    made = tabarena.tabarena_run(tmp_path / "a")
    assert made.metadata_ref.endswith("info.py:method_metadata") and made.run_dir.is_dir()
    verdicts = evaluate_rules(RAW, tabarena.process_facts(tmp_path / "b"), action="process")
    assert all(v.outcome is Outcome.PASSED for v in verdicts.values()), {c: v.message for c, v in verdicts.items()}


def test_upload_facts_come_from_a_processed_cache(tmp_path):
    facts = tabarena.upload_facts(tmp_path)
    assert facts.cache.path.is_dir() and facts.cache.metadata_yaml.is_file()
    assert facts.recorded is not None and facts.recorded.method == "Nori"
    assert facts.bucket == "tabarena" and facts.destination.startswith(
        "r2://tabarena/cache/artifacts/nori-2026-11/methods/Nori"
    )
    assert not facts.real  # planning: nothing would be uploaded
    assert facts.part_problems == []


def test_info_facts_hold_one_declaration_each(tmp_path):
    source = (
        "from tabarena.models import MethodMetadata\n\n"
        'a = MethodMetadata.config(method="A", suite="a-1", ag_key="A", reference_url="https://a.org")\n'
        'b = MethodMetadata.config(method="B", suite="b-1", ag_key="B")\n'
    )
    facts = tabarena.info_facts(tmp_path, source)
    assert [f.metadata.method for f in facts] == ["A", "B"]
    assert_passes(evaluate_rules([reference_url_present], facts[0]), "MY101")
    assert_fails(evaluate_rules([reference_url_present], facts[1]), "MY101", "B: set reference_url")


def test_eval_results_facts_parse_the_drafts(tmp_path):
    facts = eval_results_facts(
        tmp_path,
        {
            "org--m/.eval_results/gpqa.yaml": "- dataset:\n    id: Idavidrein/gpqa\n    task_id: diamond\n  value: 41.2\n"
        },
    )
    (file,) = facts.eval_files
    assert file.error is None or not file.error
    assert file.data[0]["value"] == 41.2 and file.path.endswith("gpqa.yaml")


def test_draft_facts_come_from_the_local_hub(tmp_path):
    facts = draft_facts(tmp_path)
    assert facts.benchmark_id == "demo-evals/toy-bench" and facts.live.official
    assert set(facts.live.task_ids) == {"main", "hard"}
    assert len({d.label for d in facts.decisions}) == 7  # one decision per leaderboard model
    assert {r.source_task for r in facts.rows} == {"Main", "Hard", "Average"} and len(facts.rows) == 21
    assert "drafts/acme--Alpha-7B/.eval_results/toy-bench.yaml" in facts.output_files  # the bundle it would write


def _of(action):

    return [r for r in RULES if action in r.actions]


def test_register_facts_read_the_checkouts_methods_py(tmp_path):
    facts = tabarena.register_facts(tmp_path)
    assert facts.metadata.method == "Nori" and facts.path.name == "methods.py"
    assert [e.name for e in facts.entries] == ["lightgbm_method_metadata"]
    assert facts.entries[0].metadata.method == "LightGBM" and facts.replaced is None
    assert "from tabarena.models.nori.info import" in whole_edit(facts).source  # what register would write
    verdicts = evaluate_rules(_of("register"), facts, action="register")
    assert all(v.outcome is Outcome.PASSED for v in verdicts.values()), {c: v.message for c, v in verdicts.items()}


def test_register_facts_of_a_checkout_whose_methods_py_lost_its_layout(tmp_path):

    made = tabarena.arena_checkout(tmp_path)
    methods = made.repo / "packages/tabarena/src/tabarena/contexts/tabarena/methods.py"
    methods.write_text(methods.read_text().replace("methods_superseded = []\n", ""))
    facts = tabarena.gather_facts("register", {"method_metadata": made.module_ref, "repo": str(made.repo)})
    assert_fails(evaluate_rules(_of("register"), facts, action="register"), "TA503", "methods_superseded")


def test_log_facts_come_from_a_git_checkout_and_the_run(tmp_path):
    facts = tabarena.log_facts(tmp_path)
    assert len(facts.files) == 2 and facts.log_text.startswith("# Benchmark log")
    assert not facts.logged and len(facts.sha.sha) == 40
    assert "nori-2026-11" in facts.entry() and "Nori" in facts.entry()
    verdicts = evaluate_rules(_of("log"), facts, action="log")
    assert all(v.outcome is Outcome.PASSED for v in verdicts.values()), {c: v.message for c, v in verdicts.items()}
    dashed = tabarena.log_facts(tmp_path / "b", benchmark_name="nori \u2014 rerun")
    assert_fails(evaluate_rules(_of("log"), dashed, action="log"), "TA513")


def test_unpublish_facts_know_where_the_method_lives(tmp_path, monkeypatch):

    for name in CREDENTIAL_ENV:
        monkeypatch.delenv(name, raising=False)
    facts = tabarena.unpublish_facts(tmp_path)
    assert facts.bucket == "tabarena" and facts.key_root == "cache/artifacts/nori-2026-11/methods/Nori"
    assert facts.cache.metadata_yaml.is_file()
    assert facts.remote_keys == "credentials missing"
