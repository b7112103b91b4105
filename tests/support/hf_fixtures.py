"""Fixture Hubs for the HF migration tests: one call builds a leaderboard's worth of repos.

``build_leaderboard_hub(root)`` writes an official benchmark dataset and a set of model
repos that covers every resolution class and every existing-state status, and returns
what each leaderboard label must end as. Serve ``root`` with
``LocalHub(root, faults=leaderboard_faults())`` and write ``mapping_yaml(models)`` as the
mapping file; authenticate with ``TOKEN`` (the account is ``WHOAMI``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from hfmigrate_checks.source import ledger
from hfmigrate_checks.testing import Fault, set_whoami, write_dataset, write_model
from hfmigrate_checks.testing.hubdemo import CONTRACT
from hfmigrate_checks.testing.migration import client_env

BENCHMARK_ID = "toy-evals/toy-bench"
TASK_IDS = ("main", "hard")
WHOAMI = "arena-bot"
TOKEN = "hf_local_test_token"
OTHER_BENCHMARK = "Idavidrein/gpqa"
#: the model whose model_info always fails (see leaderboard_faults)
FLAKY_REPO = "xi-org/Xi-7B"

#: where the generated leaderboards' scores are said to be printed
BOARD_URL = "https://example.org/board"


def board_row(model: str, task: str, value: str, line: int, **more: str) -> ledger.LedgerRow:
    """One score as printed on line ``line`` of the board's README.md: the ledger row of a generated leaderboard."""
    return ledger.LedgerRow(
        source_model=model,
        source_task=task,
        source_value=value,
        source_locator=f"README.md:L{line}",
        source_url=BOARD_URL,
        **more,
    )


EVAL_YAML = """\
name: Toy Bench
description: A small benchmark served by the local test Hub.
evaluation_framework: inspect-ai
tasks:
  - id: main
  - id: hard
    split: test
"""


def eval_results_yaml(entries: Iterable[tuple[str, str, Any]]) -> str:
    """An ``.eval_results`` file for (benchmark id, task id, value) triples."""
    lines = []
    for benchmark, task, value in entries:
        lines += [
            "- dataset:",
            f"    id: {benchmark}",
            f"    task_id: {task}",
            f"  value: {value}",
            "  source:",
            "    url: https://example.org/leaderboard",
        ]
    return "\n".join(lines) + "\n"


def bench_file(values: Mapping[str, Any], benchmark: str = BENCHMARK_ID) -> str:
    return eval_results_yaml((benchmark, task, value) for task, value in values.items())


def write_small_hub(root: Path, *, prs: int = 7) -> Path:
    """A small Hub for client and server tests; returns ``root``.

    ``org/model`` has files on main, ``prs`` PRs cycling through open/draft/closed/merged
    (PR n adds ``.eval_results/b.yaml`` = ``- pr: n``) and one plain discussion after
    them; ``org/gated`` is gated; ``many/item-0..6`` feed searches; two datasets, one
    official; the account is ``alice`` (org ``acme``) for any token.
    """
    statuses = ("open", "draft", "closed", "merged")
    threads = [
        {
            "num": n,
            "author": f"u{n}",
            "status": statuses[n % 4],
            "title": f"PR {n}",
            "files": {".eval_results/b.yaml": f"- pr: {n}\n"},
        }
        for n in range(1, prs + 1)
    ]
    threads.append({"num": prs + 1, "author": "asker", "status": "open", "title": "question", "is_pull_request": False})
    write_model(
        root,
        "org/model",
        {"README.md": "hello\n", ".eval_results/a.yaml": "- a: 1\n", "sub/deep/f.txt": "f"},
        prs=threads,
    )
    write_model(root, "org/gated", {"w.txt": "secret"}, gated="manual")
    for n in range(7):
        write_model(root, f"many/item-{n}", {"README.md": str(n)})
    write_dataset(root, "bench/official", {"eval.yaml": "tasks: [{id: t}]\n"}, official=True)
    write_dataset(root, "bench/other", {"eval.yaml": "tasks: []\n"}, official=False)
    set_whoami(root, "alice", ["acme"])
    return root


def write_benchmark(root: Path) -> None:
    """The official benchmark plus an unofficial look-alike."""
    write_dataset(root, BENCHMARK_ID, {"eval.yaml": EVAL_YAML, "README.md": "# Toy Bench\n"}, official=True)
    write_dataset(root, "someone/unofficial-bench", {"eval.yaml": EVAL_YAML}, official=False)


@attrs.frozen
class ExpectedModel:
    """One leaderboard row and what the migration must make of it.

    ``state`` is the expected existing-state status with ``TOKEN``; ``state_anonymous``
    without any token (an owned PR then has unknown ownership). ``link`` is a Hub URL the
    leaderboard prints next to the label; ``mapping`` its mapping-file entry, if any.
    """

    label: str
    resolution: str
    repo_id: str | None = None
    state: str | None = None
    state_anonymous: str | None = None
    values: Mapping[str, float] = attrs.field(factory=lambda: {"main": 71.2, "hard": 40.5})
    link: str | None = None
    mapping: Mapping[str, Any] | None = None


def _pr(num: int, author: str, status: str, files: Mapping[str, str] | None = None, title: str = "") -> dict:
    return {
        "num": num,
        "author": author,
        "status": status,
        "title": title or f"Add results #{num}",
        "files": dict(files or {}),
    }


def _model(root: Path, repo_id: str, files: Mapping[str, str] | None = None, **kw: Any) -> None:
    write_model(root, repo_id, {"README.md": f"# {repo_id}\n", "config.json": "{}\n", **(files or {})}, **kw)


def build_leaderboard_hub(root: Path, *, fillers: int = 0) -> dict[str, ExpectedModel]:
    """Write the fixture Hub under ``root``; returns label -> :class:`ExpectedModel`.

    ``fillers`` adds that many more plain models (exact by search, state ``new``) for tests
    that need a long leaderboard.
    """
    root = Path(root)
    write_benchmark(root)
    set_whoami(root, WHOAMI, orgs=("arena-org",), token=TOKEN)
    models: list[ExpectedModel] = []
    vals = {"main": 71.2, "hard": 40.5}
    other = eval_results_yaml([(OTHER_BENCHMARK, "diamond", 0.41)])

    def add(expected: ExpectedModel, **write: Any) -> None:
        if write:
            _model(root, write.pop("repo"), **write)
        models.append(expected)

    # -- exact, state new
    add(ExpectedModel("acme/Alpha-7B", "exact", "acme/Alpha-7B", "new", "new"), repo="acme/Alpha-7B")
    add(
        ExpectedModel("Beta 7B Instruct", "exact", "betalab/Beta-7B-Instruct", "new", "new"),
        repo="betalab/Beta-7B-Instruct",
        files={".eval_results/gpqa.yaml": other},
    )
    _model(root, "betalab/Beta-7B-Instruct-GGUF")  # a quantization next to the exact hit
    add(
        ExpectedModel("Omicron 7B", "exact", "omicron/Omicron-7B", "new", "new"),
        repo="omicron/Omicron-7B",
        prs=[
            _pr(1, "someone", "closed", {".eval_results/toy.yaml": bench_file(vals)}),
            _pr(2, "someone", "merged", {".eval_results/toy.yaml": bench_file(vals)}),
            {**_pr(3, "someone", "open"), "is_pull_request": False, "title": "Question about toy-bench"},
        ],
    )
    # -- exact, already_present (matched on dataset.id, not on the file name)
    add(
        ExpectedModel(
            "Gamma Large",
            "exact",
            "gammaco/Gamma-2-70B",
            "already_present",
            "already_present",
            mapping={"repo": "gammaco/Gamma-2-70B"},
        ),
        repo="gammaco/Gamma-2-70B",
        files={
            ".eval_results/results.yaml": eval_results_yaml(
                [(OTHER_BENCHMARK, "diamond", 0.5), (BENCHMARK_ID, "hard", 40.5)]
            )
        },
    )
    # -- exact, owned PR: update_existing_pr (draft status) and already_in_own_open_pr
    add(
        ExpectedModel("Eta 7B", "exact", "eta/Eta-7B", "update_existing_pr", "duplicate_open_pr"),
        repo="eta/Eta-7B",
        prs=[_pr(4, WHOAMI, "draft", {".eval_results/toy-bench.yaml": bench_file({"main": 71.2})})],
    )
    add(
        ExpectedModel("Rho 7B", "exact", "rho/Rho-7B", "already_in_own_open_pr", "duplicate_open_pr"),
        repo="rho/Rho-7B",
        prs=[_pr(2, WHOAMI, "open", {".eval_results/toy-bench.yaml": bench_file(vals)})],
    )
    # -- exact, duplicate_open_pr: another author; two PRs; a match beyond the first page
    add(
        ExpectedModel("Sigma 7B", "exact", "sigma/Sigma-7B", "duplicate_open_pr", "duplicate_open_pr"),
        repo="sigma/Sigma-7B",
        prs=[_pr(1, "someone-else", "open", {".eval_results/toy.yaml": bench_file(vals)})],
    )
    add(
        ExpectedModel("Tau 7B", "exact", "tau/Tau-7B", "duplicate_open_pr", "duplicate_open_pr"),
        repo="tau/Tau-7B",
        prs=[
            _pr(1, WHOAMI, "open", {".eval_results/toy.yaml": bench_file(vals)}),
            _pr(2, "someone-else", "draft", {".eval_results/x.yaml": bench_file(vals)}),
        ],
    )
    many = [_pr(1, "early-bird", "open", {".eval_results/toy.yaml": bench_file(vals)})]
    many += [_pr(n, f"user{n}", "closed" if n % 3 else "open", {"notes.md": f"note {n}\n"}) for n in range(2, 62)]
    add(
        ExpectedModel("Upsilon 7B", "exact", "upsilon/Upsilon-7B", "duplicate_open_pr", "duplicate_open_pr"),
        repo="upsilon/Upsilon-7B",
        prs=many,
    )
    # -- exact, needs_review: conflicting owned PR, gated, broken YAML, alias bomb
    add(
        ExpectedModel("Phi Model 7B", "exact", "phi-lab/Phi-Model-7B", "needs_review", "duplicate_open_pr"),
        repo="phi-lab/Phi-Model-7B",
        prs=[_pr(5, WHOAMI, "open", {".eval_results/toy-bench.yaml": bench_file({"main": 70.0})})],
    )
    add(
        ExpectedModel("Chi 7B", "exact", "chi/Chi-7B", "needs_review", "needs_review"),
        repo="chi/Chi-7B",
        files={".eval_results/toy.yaml": bench_file(vals)},
        gated="manual",
    )
    add(
        ExpectedModel("Psi 7B", "exact", "psi/Psi-7B", "needs_review", "needs_review"),
        repo="psi/Psi-7B",
        files={".eval_results/broken.yaml": "- dataset: {id: [unclosed\n"},
    )
    # -- a stranger's file with an impossible unquoted date and wrong types: read without a crash, not ours
    odd = "- dataset: {id: Idavidrein/gpqa, task_id: diamond}\n  value: high\n  date: 2025-02-30\n  source: {url: 42}\n"
    add(
        ExpectedModel("Pi 7B", "exact", "pi-lab/Pi-7B", "new", "new"),
        repo="pi-lab/Pi-7B",
        files={".eval_results/gpqa.yaml": odd},
    )
    bomb = "- &a [x, x]\n- &b [*a, *a]\n- &c [*b, *b]\n"
    add(
        ExpectedModel("Omega 7B", "exact", "omega/Omega-7B", "needs_review", "needs_review"),
        repo="omega/Omega-7B",
        files={".eval_results/bomb.yaml": bomb},
    )
    # -- mismatch: base vs instruct, version via a printed link, quantizations, another owner's copy
    add(ExpectedModel("Delta 8B", "mismatch"), repo="deltaai/Delta-8B-Instruct")
    _model(root, "deltaai/Delta-7B")
    add(
        ExpectedModel("Epsilon 3.1 8B", "mismatch", link="https://huggingface.co/eps/Epsilon-3.2-8B"),
        repo="eps/Epsilon-3.2-8B",
    )
    add(ExpectedModel("Zeta-13B", "mismatch"), repo="quantco/Zeta-13B-GGUF")
    _model(root, "quantco/Zeta-13B-AWQ")
    add(ExpectedModel("origin/Theta-7B", "mismatch"), repo="mirror/Theta-7B")
    # -- mismatch found only through the base name: the label's instruct model does not exist, its base does
    add(ExpectedModel("Kestrel-9B-Instruct", "mismatch"), repo="kestrel-lab/Kestrel-9B")
    # -- ambiguous: two equal names, or only a near-identical name
    add(ExpectedModel("Iota 7B", "ambiguous"), repo="iota-labs/Iota-7B")
    _model(root, "iota-mirror/Iota-7B")
    add(ExpectedModel("Kappa 2 7B", "ambiguous"), repo="kappa/Meta-Kappa-2-7B")
    # -- not_on_hub, not_applicable, needs_review (a read that keeps failing)
    add(ExpectedModel("Lambda Secret Model", "not_on_hub"))
    add(ExpectedModel("Mu Internal", "not_on_hub", mapping={"repo": None}))
    add(ExpectedModel("Nu-Pro API", "not_applicable", mapping={"api_only": True}))
    add(ExpectedModel("Acme-GPT (API)", "not_applicable"))  # the label's own marker
    add(ExpectedModel("Claude 3.5 Sonnet", "not_applicable"))  # a known closed family
    _model(root, "someone/claude-3.5-sonnet-distill")  # a look-alike on the Hub changes nothing
    add(ExpectedModel(FLAKY_REPO, "needs_review"), repo=FLAKY_REPO)
    for i in range(fillers):
        add(
            ExpectedModel(f"Filler {i} 7B", "exact", f"fill-org/Filler-{i}-7B", "new", "new"),
            repo=f"fill-org/Filler-{i}-7B",
        )
    return {m.label: m for m in models}


def leaderboard_faults() -> list[Fault]:
    """The faults the leaderboard Hub needs: ``FLAKY_REPO``'s model_info always answers 500."""
    return [Fault(f"^/api/models/{FLAKY_REPO}$", status=500, times=None)]


def mapping_yaml(models: Mapping[str, ExpectedModel]) -> str:
    """The mapping file for ``models`` (labels with a ``mapping`` entry)."""
    entries = {m.label: dict(m.mapping) for m in models.values() if m.mapping is not None}
    return yaml.safe_dump(entries, sort_keys=False)


#: the models tests/fixtures/leaderboard_readme.md prints, in order (its group-header rows are not models)
README_MODELS = [
    "acme/Alpha-7B",
    "Beta 7B Instruct",
    "Sable-22B",
    "Wren-3B",
    "Kestrel-9B-Instruct",
    "Omicron 7B",
    "Gamma | chat",
    "Zeta-13B",
    "Retracted-7B",
    "Acme-GPT (API)",
    "Nimbus-Pro",
]

#: a printed qualifier on one drafted model: that cell must not be drafted, the other one must
STARRED = "acme/Alpha-7B"


def leaderboard_md(models: Mapping[str, ExpectedModel]) -> str:
    """The leaderboard README of ``models`` under '## Results', ``STARRED``'s Hard score marked ``*``."""
    lines = ["# Toy leaderboard", "", "## Results", "", "| Model | Main | Hard | Average |", "|---|---:|---:|---:|"]
    for m in models.values():
        label = f"[{m.label}]({m.link})" if m.link else m.label
        hard = f"{m.values['hard']}*" if m.label == STARRED else f"{m.values['hard']}"
        lines.append(f"| {label} | {m.values['main']} | {hard} | {(m.values['main'] + m.values['hard']) / 2} |")
    return "\n".join(lines) + "\n"


def prepare(tmp: Path, models: Mapping[str, ExpectedModel]) -> dict[str, str]:
    """Write the contract mapping, the model mapping and the leaderboard README into ``tmp``; the client's env."""
    (tmp / "contract.yaml").write_text(CONTRACT)
    (tmp / "models.yaml").write_text(mapping_yaml(models))
    (tmp / "README.md").write_text(leaderboard_md(models))
    return client_env(tmp / "hf-home", TOKEN)
