"""The HF migration's three commands (contract, ledger, draft) as command lines, and the environment the
real huggingface_hub client runs them in against a :class:`LocalHub`.

One flow for every caller that migrates a leaderboard end to end (the tests, the benchmarks, the
demo): written once, a change of an option or of the client's environment reaches them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def client_env(home: Path, token: str, endpoint: str | None = None) -> dict[str, str]:
    """The client's environment: the fixture account's token, its own HF_HOME, no telemetry or update check."""
    env = {
        "HF_TOKEN": token,
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    }
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    return env


def contract_step(benchmark: str, mapping: str = "contract.yaml", out: str = "contract.json") -> list[str]:
    return ["hf", "contract", benchmark, "--mapping", mapping, "--out", out]


def ledger_step(
    source: str = "README.md",
    *,
    fmt: str = "markdown",
    heading: str | None = "Results",
    source_url: str | None = "https://example.org/toy/README.md",
    options: Sequence[str] = (),
    out: str = "ledger.csv",
) -> list[str]:
    """``checks hf ledger``: a Markdown leaderboard under the heading ``Results`` unless told otherwise."""
    where = ["--heading", heading] if heading else []
    url = ["--source-url", source_url] if source_url else []
    return ["hf", "ledger", source, "--format", fmt, *where, *options, *url, "--out", out]


def draft_step(
    benchmark: str,
    *,
    bundle: str = "bundle",
    contract: str = "contract.json",
    ledger: str = "ledger.csv",
    mapping: str | None = "models.yaml",
    options: Sequence[str] = (),
) -> list[str]:
    """``checks run draft`` from the contract and ledger the other steps wrote (a model mapping unless None)."""
    mapped = ["--mapping", mapping] if mapping else []
    return [
        *("run", "draft", "--benchmark-id", benchmark, "--contract", contract, "--ledger", ledger),
        *mapped,
        *("--bundle", bundle),
        *options,
    ]


def migration_steps(
    benchmark: str, *, ledger_options: Sequence[str] = (), mapping: str | None = "models.yaml", **ledger: str
) -> list[list[str]]:
    """The three commands in order, on the files of a work directory: contract.yaml, README.md, models.yaml."""
    return [
        contract_step(benchmark),
        ledger_step(options=ledger_options, **ledger),
        draft_step(benchmark, mapping=mapping),
    ]
