"""Model-repo resolution: every class on the fixture leaderboard, the variant rules, the mapping file."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks import InputError
from tests.support.hf_fixtures import FLAKY_REPO, build_leaderboard_hub, leaderboard_faults, mapping_yaml
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.hub.resolve import (
    MappingEntry,
    Resolution,
    api_only_evidence,
    load_mapping,
    resolve,
    search_queries,
    variant_differences,
)
from hfmigrate_checks.testing import Fault, LocalHub, write_model


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    root = tmp_path_factory.mktemp("resolve")
    models = build_leaderboard_hub(root)
    write_model(root, "renamed/Sigma-Next-7B", {"README.md": "x"}, former_names=["sigma-old/Sigma-Next-7B"])
    mapping_path = root / "mapping.yaml"
    mapping_path.write_text(mapping_yaml(models))
    with LocalHub(root, faults=leaderboard_faults()) as local, ReadOnlyHub(local.endpoint, backoff=0.01) as hub:
        yield models, load_mapping(mapping_path), hub, local
        assert local.write_requests() == []


def _resolve(board, label: str) -> Resolution:
    models, mapping, hub, _ = board
    link = models[label].link if label in models else None
    candidates = (link.split("huggingface.co/", 1)[1],) if link else ()
    return resolve(hub, label, candidates, mapped=mapping.get(label), api_only=api_only_evidence(label) or False)


LABELS = [
    "acme/Alpha-7B",
    "Beta 7B Instruct",
    "Omicron 7B",
    "Gamma Large",
    "Eta 7B",
    "Rho 7B",
    "Sigma 7B",
    "Tau 7B",
    "Upsilon 7B",
    "Phi Model 7B",
    "Chi 7B",
    "Psi 7B",
    "Pi 7B",
    "Omega 7B",
    "Delta 8B",
    "Epsilon 3.1 8B",
    "Zeta-13B",
    "origin/Theta-7B",
    "Kestrel-9B-Instruct",
    "Iota 7B",
    "Kappa 2 7B",
    "Lambda Secret Model",
    "Mu Internal",
    "Nu-Pro API",
    "Acme-GPT (API)",
    "Claude 3.5 Sonnet",
    FLAKY_REPO,
]


def test_the_fixture_covers_every_resolution_class(board):
    models = board[0]
    assert set(LABELS) == set(models)
    assert {m.resolution for m in models.values()} == {
        "exact",
        "ambiguous",
        "not_on_hub",
        "mismatch",
        "not_applicable",
        "needs_review",
    }


@pytest.mark.parametrize("label", LABELS)
def test_each_leaderboard_label_resolves_as_expected(board, label):
    expected = board[0][label]
    got = _resolve(board, label)
    assert (got.status, got.repo_id) == (expected.resolution, expected.repo_id), got.evidence
    assert got.evidence and got.source_label == label
    if got.status == "exact":
        assert got.sha and len(got.sha) == 40 and any(got.repo_id in c for c in got.candidates_checked)
    else:
        assert got.sha is None


def test_evidence_names_what_differs(board):
    assert "base vs instruct/chat" in _resolve(board, "Delta 8B").evidence
    assert "version 3.1 vs 3.2" in _resolve(board, "Epsilon 3.1 8B").evidence
    zeta = _resolve(board, "Zeta-13B")
    assert "gguf" in zeta.evidence and "awq" in zeta.evidence
    assert "another owner" in _resolve(board, "origin/Theta-7B").evidence
    iota = _resolve(board, "Iota 7B")
    assert "iota-labs/Iota-7B" in iota.evidence and "iota-mirror/Iota-7B" in iota.evidence
    assert any(
        c.startswith("origin/Theta-7B (not found)") for c in _resolve(board, "origin/Theta-7B").candidates_checked
    )


def test_a_failed_read_is_needs_review_never_absent(board):
    flaky = _resolve(board, FLAKY_REPO)
    assert flaky.status == "needs_review" and "500" in flaky.evidence
    _, _, hub, local = board
    local.add_fault(Fault("^/api/models$", truncate=True, times=None))  # 5xx would wait on the client's own backoff
    try:
        searched = resolve(hub, "Lambda Secret Model")
    finally:
        local.clear_faults()
        for fault in leaderboard_faults():
            local.add_fault(fault)
    assert searched.status == "needs_review" and "search" in searched.evidence


def test_never_redirects_to_a_variant_even_when_it_is_the_only_repo(board):
    _, _, hub, _ = board
    base = resolve(hub, "Delta 8B")
    assert base.status == "mismatch" and base.repo_id is None
    quant = resolve(hub, "Zeta-13B", ("quantco/Zeta-13B-GGUF",))
    assert quant.status == "mismatch" and quant.repo_id is None


def test_a_matching_candidate_link_is_exact_and_a_conflicting_one_spoils_a_search_hit(board):
    _, _, hub, _ = board
    linked = resolve(hub, "Sigma 7B", ("sigma/Sigma-7B",))
    assert (linked.status, linked.repo_id) == ("exact", "sigma/Sigma-7B")
    conflicting = resolve(hub, "Sigma 7B", ("upsilon/Upsilon-7B",))
    assert conflicting.status == "ambiguous" and "upsilon/Upsilon-7B" in conflicting.evidence


def test_display_punctuation_in_a_label_does_not_hide_the_repo(board):
    _, _, hub, _ = board
    got = resolve(hub, "Beta 7B (Instruct)")
    assert (got.status, got.repo_id) == ("exact", "betalab/Beta-7B-Instruct")
    assert any(c.startswith("search 'beta-7b-instruct'") for c in got.candidates_checked)


def test_renamed_repos_are_not_followed_silently(board):
    _, _, hub, _ = board
    mapped = resolve(hub, "Sigma Next", mapped=MappingEntry("Sigma Next", "sigma-old/Sigma-Next-7B"))
    assert mapped.status == "mismatch" and "renamed/Sigma-Next-7B" in mapped.evidence
    by_label = resolve(hub, "sigma-old/Sigma-Next-7B")
    assert by_label.status == "mismatch" and by_label.repo_id is None
    assert "now answers as renamed/Sigma-Next-7B" in by_label.evidence


def test_mapping_entries_decide_before_any_search(board):
    _, mapping, hub, local = board
    local.clear_requests()
    assert resolve(hub, "Nu-Pro API", mapped=mapping["Nu-Pro API"]).status == "not_applicable"
    assert resolve(hub, "anything", api_only=True).status == "not_applicable"
    assert resolve(hub, "Mu Internal", mapped=mapping["Mu Internal"]).status == "not_on_hub"
    assert local.requests == []
    missing = resolve(hub, "Ghost", mapped=MappingEntry("Ghost", "ghost/Ghost-7B"))
    assert missing.status == "not_on_hub" and "fix the mapping" in missing.evidence


@pytest.mark.parametrize(
    ("label", "candidate", "expected"),
    [
        ("Llama 3.1 8B Instruct", "meta-llama/Llama-3.1-8B-Instruct", ""),
        ("Llama 3.1 8B Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct", ""),
        ("Llama 2 7B chat", "x/Llama-2-7b-chat-hf", ""),
        ("Qwen3-30B-A3B", "Qwen/Qwen3-30B-A3B", ""),
        ("Gemma 3 4B", "google/gemma-3-4b-pt", ""),
        ("Llama 3.1 8B", "x/Llama-3.1-8B-Instruct", "base vs instruct/chat"),
        ("gemma-2-9b-it", "google/gemma-2-9b", "base vs instruct/chat"),
        ("Llama-3.1-8B-Instruct", "x/Llama-3.2-8B-Instruct", "version 3.1 vs 3.2"),
        ("model-v1", "a/model-v2", "version 1 vs 2"),
        ("Mistral 7B Instruct", "mistralai/Mistral-7B-Instruct-v0.3", "version none vs 0.3"),
        ("Llama 3 7B", "x/Llama-3-8B", "size 7b vs 8b"),
        ("Mixtral 8x7B", "x/Mixtral-8x22B", "size 8x7b vs 8x22b"),
        ("Meta-Llama-3-8B-Instruct", "x/Meta-Llama-3-8B-Instruct-Q4_K_M-GGUF", "quantization/format"),
        ("Llama-3-8B", "x/Llama-3-8B-bnb-4bit", "quantization/format"),
        ("Llama-3-8B", "x/Llama-3-8B-exl2", "quantization/format"),
        ("Llama-3-8B", "x/Llama-3-8B-GPTQ", "quantization/format"),
        ("OLMo-7B", "allenai/OLMo-7B-step1000", "checkpoint suffix"),
        ("Mistral-Nemo-Instruct", "x/Mistral-Nemo-Instruct-2407", "checkpoint suffix"),
        ("Llama-3-8B", "x/Llama-3-8B-lora", "checkpoint suffix"),
        ("Eta 7B", "x/Theta-7B", "name eta missing"),
    ],
)
def test_variant_differences(label, candidate, expected):
    found = "; ".join(variant_differences(label, candidate))
    assert (expected in found) if expected else found == ""


def test_load_mapping_reads_every_entry_kind(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        "Llama 3.1 8B: {repo: meta-llama/Llama-3.1-8B, note: checked by hand}\n"
        "GPT-4o: {api_only: true}\n'Internal 7B': {repo: null}\n"
    )
    mapping = load_mapping(path)
    assert mapping["Llama 3.1 8B"] == MappingEntry("Llama 3.1 8B", "meta-llama/Llama-3.1-8B", False, "checked by hand")
    assert mapping["GPT-4o"].api_only and mapping["GPT-4o"].repo is None
    assert mapping["Internal 7B"] == MappingEntry("Internal 7B", None)
    path.write_text("")
    assert load_mapping(path) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "must be a mapping of source label"),
        ("1.5: {repo: a/b}\n", "must be a non-empty string"),
        ("X: a/b\n", "must be a mapping like"),
        ("X: {repo: a/b, url: c}\n", "unknown key(s) url"),
        ("X: {repo: not-an-id}\n", "'repo' must be a Hub id"),
        ("X: {repo: a/b, api_only: true}\n", "keep one of them"),
        ("X: {api_only: yes please}\n", "'api_only' must be true or false"),
        ("X: {note: hi}\n", "needs 'repo: owner/name'"),
        ("X: {repo: a/b, note: 3}\n", "'note' must be a string"),
        ("X: &a {repo: a/b}\nY: *a\n", "not valid YAML"),
        ("X: {repo: [\n", "not valid YAML"),
    ],
)
def test_load_mapping_errors_name_the_file_the_entry_and_the_fix(tmp_path, text, message):
    path = tmp_path / "mapping.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        load_mapping(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_load_mapping_on_a_missing_file(tmp_path):
    with pytest.raises(InputError, match="cannot read the mapping file"):
        load_mapping(Path(tmp_path / "absent.yaml"))


def test_resolution_rejects_an_unknown_status():
    with pytest.raises(ValueError):
        Resolution("x", "maybe", None, None, "")


def test_a_label_missing_from_the_hub_is_searched_by_its_base_name_too(board):
    got = _resolve(board, "Kestrel-9B-Instruct")
    assert got.status == "mismatch" and got.repo_id is None
    assert "kestrel-lab/Kestrel-9B" in got.evidence and "base vs instruct/chat: instruct vs none" in got.evidence
    assert [c for c in got.candidates_checked if c.startswith("search ")] == [
        "search 'kestrel-9b-instruct' (0 hits)",
        "search 'kestrel-9b' (1 hit)",
        "search 'kestrel' (1 hit)",
    ]
    nothing = _resolve(board, "Lambda Secret Model")
    assert "nor like its base name or family" in nothing.evidence
    exact = _resolve(board, "Beta 7B Instruct")  # found by its full name: no near-miss searches
    assert [c for c in exact.candidates_checked if c.startswith("search ")] == ["search 'beta-7b-instruct' (2 hits)"]


@pytest.mark.parametrize(
    ("label", "queries"),
    [
        ("Kestrel-9B-Instruct", ["kestrel-9b-instruct", "kestrel-9b", "kestrel"]),
        ("Llama 3.1 8B Instruct GGUF", ["llama-3.1-8b-instruct-gguf", "llama-3.1-8b", "llama"]),
        ("Beta 7B Instruct", ["beta-7b-instruct", "beta-7b"]),  # 'beta' is also a tune word: never a bare '7b' query
        ("Zeta-13B", ["zeta-13b", "zeta"]),
    ],
)
def test_search_queries(label, queries):
    assert search_queries(label) == queries


@pytest.mark.parametrize(
    ("label", "qualifiers", "evidence"),
    [
        ("Acme-GPT (API)", (), "the label carries the marker '(API)'"),
        ("Nimbus [proprietary]", (), "the label carries the marker '[proprietary]'"),
        (
            "Nimbus-Pro",
            ("‡ majority vote; in the group 'API models' of the table",),
            "the source lists it under the group 'API models'",
        ),
        (
            "Nimbus-Pro",
            ("in the group 'Closed-source systems' of the table",),
            "under the group 'Closed-source systems'",
        ),
        ("GPT-4o", (), "published only behind an API (gpt-4o)"),
        ("o3-high", (), "(o3)"),
        ("Claude 3.5 Sonnet", (), "(claude)"),
        ("Gemini 2.5 Pro", (), "(gemini)"),
        ("gpt-oss-120b", (), None),
        ("Gemma-2-9b-it", (), None),
        ("Rapid-7B", (), None),
        ("Open 7B", ("in the group 'Open-weight models' of the table",), None),
    ],
)
def test_api_only_evidence(label, qualifiers, evidence):
    got = api_only_evidence(label, qualifiers)
    assert (evidence in got) if evidence else got is None


def test_a_mapping_entry_with_a_repo_overrides_api_evidence(board):
    _, _, hub, _ = board
    got = resolve(
        hub,
        "Acme-GPT (API)",
        api_only=api_only_evidence("Acme-GPT (API)"),
        mapped=MappingEntry("Acme-GPT (API)", "acme/Alpha-7B"),
    )
    assert (got.status, got.repo_id) == ("exact", "acme/Alpha-7B")
    closed = _resolve(board, "Claude 3.5 Sonnet")
    assert closed.status == "not_applicable" and "published only behind an API" in closed.evidence


def test_a_short_name_is_still_searched_by_its_full_label():
    assert search_queries("Pi 7B") == ["pi-7b"]
