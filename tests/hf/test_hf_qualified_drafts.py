"""No draft drops a qualifier: a model card with run details, a legend, an uncertainty and an
unexplained marker, migrated through the CLI against the local Hub with the real client."""

from __future__ import annotations

import pytest

from checks.io import loads_yaml
from checks.testing import run_cli
from tests.support.hf_fixtures import BENCHMARK_ID, TOKEN, write_benchmark
from hfmigrate_checks.testing import LocalHub, set_whoami, write_model
from hfmigrate_checks.testing.migration import client_env, migration_steps

CARD = """# Model card

## Results

| Benchmark | Alpha 7B | Beta 7B | Gamma 7B |
|---|---|---|---|
| Main (0-shot) | 70.1 ± 0.3 | 61.0† | 55.5 |
| Hard (CoT) | 40.5 | 39.0 | 30.0* |

† with tools (a Python interpreter)
"""
CONTRACT = """metric: accuracy
direction: higher_is_better
unit: percent
columns:
  Main (0-shot): main
  Hard (CoT): hard
"""
REPOS = {"Alpha 7B": "acme/Alpha-7B", "Beta 7B": "betalab/Beta-7B", "Gamma 7B": "gamma/Gamma-7B"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("qualified")
    write_benchmark(tmp / "hub")
    set_whoami(tmp / "hub", "arena-bot", token=TOKEN)
    for repo in REPOS.values():
        write_model(tmp / "hub", repo, {"README.md": f"# {repo}\n"})
    (tmp / "README.md").write_text(CARD)
    (tmp / "contract.yaml").write_text(CONTRACT)
    (tmp / "models.yaml").write_text("".join(f"{label}:\n  repo: {repo}\n" for label, repo in REPOS.items()))
    with LocalHub(tmp / "hub") as hub:
        env = client_env(tmp / "hf-home", TOKEN, hub.endpoint)
        steps = migration_steps(
            BENCHMARK_ID, ledger_options=["--models-as-columns"], source_url="https://example.org/card"
        )
        results = [run_cli(args, env=env, cwd=tmp) for args in steps]
    return tmp / "bundle", results


def drafted(bundle_dir, repo):
    owner, name = repo.split("/")
    [path] = (bundle_dir / "drafts" / f"{owner}--{name}" / ".eval_results").glob("*.yaml")
    return {entry["dataset"]["task_id"]: entry for entry in loads_yaml(path.read_text())}


def test_every_drafted_value_carries_its_qualifiers_as_notes(bundle):
    bundle_dir, results = bundle
    assert [r.exit_code for r in results] == [0, 0, 0], [r.stderr for r in results]
    alpha = drafted(bundle_dir, "acme/Alpha-7B")
    assert (alpha["main"]["value"], alpha["main"]["notes"]) == (70.1, "0-shot; printed as 70.1 ± 0.3")
    assert (alpha["hard"]["value"], alpha["hard"]["notes"]) == (40.5, "CoT")
    beta = drafted(bundle_dir, "betalab/Beta-7B")
    assert beta["main"]["notes"] == "0-shot; with tools (a Python interpreter)"


def test_a_score_whose_marker_has_no_legend_is_not_drafted(bundle):
    bundle_dir, _ = bundle
    gamma = drafted(bundle_dir, "gamma/Gamma-7B")
    assert set(gamma) == {"main"} and gamma["main"]["notes"] == "0-shot"
    ledger = (bundle_dir / "source-ledger.csv").read_text()
    assert "marker * has no footnote definition or legend line" in ledger
