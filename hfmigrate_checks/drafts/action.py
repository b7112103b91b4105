"""``checks run draft``: resolve and inspect every source model, gate on the HF rules, write the review bundle.

gather reads the contract and the ledger, asks the Hub (read-only) what the benchmark
is now, resolves every source model and inspects every exact repo on a bounded thread
pool; the rules judge the planned bundle; execute writes exactly that bundle. Nothing
is ever opened, updated or uploaded on the Hub.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import attrs
import click

from checks import Action, ChecksError, UsageError, io, progress
from checks.options import option
from hfmigrate_checks.drafts import bundle
from hfmigrate_checks.drafts import decide as drafts
from hfmigrate_checks.drafts.bundle import replaceable_problem
from hfmigrate_checks.facts.constants import DRAFT_ACTION
from hfmigrate_checks.facts.draft import DraftFacts, LiveBenchmark, Planner
from hfmigrate_checks.hub import resolve, state
from hfmigrate_checks.hub.client import ReadOnlyHub
from hfmigrate_checks.source import contract as contract_mod
from hfmigrate_checks.source import ledger
from hfmigrate_checks.source.contract import parse_eval_yaml

NO_WRITE_SENTENCE = "No Hugging Face pull requests were opened or updated."
DEFAULT_WORKERS = 16
#: what the draft's facts derive their decisions and bundle with (modules the facts themselves never import)
PLANNER = Planner(decide=drafts.decide, bundle=bundle.planned_files)
HUB_MODEL_URL = r"^https?://(?:www\.)?huggingface\.co/(?!datasets/|spaces/)([^/?#]+/[^/?#]+)/?(?:[?#].*)?$"


@attrs.frozen
class DraftOptions:
    """``checks run draft``'s options, declared once: ``checks run`` makes its parameters from these fields."""

    benchmark_id: str = option(help="The benchmark dataset id, e.g. Idavidrein/gpqa.")
    contract: str = option(help="contract.json written by `checks hf contract`.", type=click.Path(dir_okay=False))
    ledger: str = option(help="ledger.csv written by `checks hf ledger`.", type=click.Path(dir_okay=False))
    mapping: str | None = option(
        help="Optional models.yaml: source label -> candidate Hub repo ids.",
        default=None,
        type=click.Path(dir_okay=False),
    )
    bundle: str = option(help="Bundle directory to write.", type=click.Path(file_okay=False))
    endpoint: str | None = option(help="Hub endpoint (default: $HF_ENDPOINT or huggingface.co).", default=None)
    max_workers: int = option(
        help="Concurrent Hub reads while gathering.", default=DEFAULT_WORKERS, type=click.IntRange(1, 64)
    )


def _hub(options: DraftOptions):

    endpoint = options.endpoint or os.environ.get("HF_ENDPOINT") or None
    return ReadOnlyHub(endpoint, os.environ.get("HF_TOKEN") or None)


def live_benchmark(hub, benchmark_id: str):
    """Official-list membership and the current eval.yaml task ids; a read failure is kept as ``error``."""

    try:
        official = benchmark_id in hub.official_benchmarks()
        sha = hub.dataset_info(benchmark_id).sha or ""
        text = hub.read_file(benchmark_id, "eval.yaml", revision=sha or None, repo_type="dataset")
        spec = parse_eval_yaml(text, f"{benchmark_id}@{sha}:eval.yaml")
    except ChecksError as exc:
        return LiveBenchmark(False, "", (), str(exc))
    return LiveBenchmark(official, sha, spec.task_ids)


def candidates_for(rows) -> tuple[str, ...]:
    """Repo ids printed as Hub links next to one model's label (resolution hints, never taken on trust)."""
    out = []
    for row in rows:
        match = re.match(HUB_MODEL_URL, row.source_link or "")
        if match and match.group(1) not in out:
            out.append(match.group(1))
    return tuple(out)


def gather(ctx):
    """Resolve every source model and inspect its exact repo, each model on one worker of a bounded pool.

    A worker resolves its model and, if the match is exact, inspects the repo right away
    (no barrier between the two steps); a repo two labels resolve to is inspected once.
    """

    options: DraftOptions = ctx.options
    problem = replaceable_problem(options.bundle)
    if problem:
        raise UsageError(problem)
    contract = contract_mod.load(options.contract)
    rows = ledger.load(options.ledger)
    mapping = resolve.load_mapping(options.mapping) if options.mapping else {}
    checked_at = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
    with _hub(options) as hub:
        inspector = _Inspector(hub, contract, rows, mapping)
        live, account, resolutions = _ask_hub(
            hub, inspector, options.benchmark_id, max(1, options.max_workers or DEFAULT_WORKERS)
        )
    return DraftFacts(
        contract=contract,
        rows=rows,
        live=live,
        resolutions=resolutions,
        states=inspector.states,
        whoami=account,
        checked_at=checked_at,
        bundle_path=options.bundle,
        benchmark_id=options.benchmark_id,
        planner=PLANNER,
        mapped_labels=tuple(mapping),
    )


class _Inspector:
    """Resolves one source label and inspects its repo when the match is exact (a worker's whole job);
    a repo two labels resolve to is inspected once. ``states`` holds every repo inspected."""

    def __init__(self, hub, contract, rows, mapping):

        self.hub, self.contract, self.mapping = hub, contract, mapping
        self.by_label = defaultdict(list)
        for row in rows:
            self.by_label[row.source_model].append(row)
        self.states: dict = {}
        self._claimed: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, label: str):

        rows = self.by_label[label]
        api_only = resolve.api_only_evidence(label, [row.qualifiers for row in rows]) or False
        res = resolve.resolve(self.hub, label, candidates_for(rows), api_only=api_only, mapped=self.mapping.get(label))
        if res.status != "exact" or contract_mod.repo_id_problem(res.repo_id) is not None:
            return res
        with self._lock:
            first = res.repo_id not in self._claimed
            self._claimed.add(res.repo_id)
        if first:
            props, _ = drafts.proposals(self.contract, rows)
            proposed = {p.task_id: p.row.value for p in props}
            self.states[res.repo_id] = state.inspect_repo(
                self.hub, res.repo_id, self.contract.benchmark_id, proposed=proposed
            )
        return res


def _ask_hub(hub, inspector: _Inspector, benchmark_id: str, workers: int):
    """The live benchmark, the account and every label's resolution, read on one bounded pool."""

    with ThreadPoolExecutor(workers, thread_name_prefix="hf-gather") as pool:
        live_future = pool.submit(live_benchmark, hub, benchmark_id)
        account_future = pool.submit(_account, hub)
        labels = list(inspector.by_label)
        with progress.bar("Hub: resolve and inspect", total=len(labels), unit="models") as advance:

            def counted(label):
                try:
                    return inspector(label)
                finally:
                    advance(1)

            resolutions = dict(zip(labels, pool.map(counted, labels)))
        return live_future.result(), account_future.result(), resolutions


def _account(hub) -> str:

    try:
        account = hub.whoami()
    except ChecksError:
        return ""
    return account.name if account else ""


def summary(facts) -> str:
    counts = facts.counts()
    width = max(map(len, counts))
    lines = [f"Review bundle: {facts.bundle_path}"]
    lines += [f"  {name + ':':<{width + 1}} {value}" for name, value in counts.items()]
    lines.append(NO_WRITE_SENTENCE)
    return "\n".join(lines)


def plan(ctx):
    facts = ctx.facts
    yield f"would write the review bundle {facts.bundle_path} (built in a temporary sibling, then renamed)"
    for draft in facts.drafts:
        extra = f" (update of PR #{draft.pr_num})" if draft.kind == "update_existing_pr" else ""
        yield f"would write {draft.path}{extra}: " + ", ".join(p.task_id for p in draft.added)
    yield from summary(facts).splitlines()[1:]


def execute(ctx):

    facts = ctx.facts
    bundle.write(facts.bundle_path, facts.output_files, facts.contract)
    return summary(facts)


def inputs(ctx):
    options: DraftOptions = ctx.options
    out = {}
    for key, path in (("contract", options.contract), ("ledger", options.ledger), ("mapping", options.mapping)):
        if path and Path(path).is_file():
            out[key] = io.file_sha256(path)
    out["endpoint"] = options.endpoint or os.environ.get("HF_ENDPOINT") or "https://huggingface.co"
    return out


DRAFT = Action(
    name=DRAFT_ACTION,
    help="Draft .eval_results files for every exact Hub repo of a leaderboard into a review bundle "
    "(read-only: nothing is opened or uploaded on the Hub).",
    gather=gather,
    plan=plan,
    execute=execute,
    target=lambda ctx: ctx.options.benchmark_id or "draft",
    inputs=inputs,
    arena="hf",
    requires=("huggingface_hub", "duckdb"),
    options=DraftOptions,
)

ACTIONS = [DRAFT]
