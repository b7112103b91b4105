"""HF5xx: the drafts and the bundle, judged on the exact bytes the action would write.

HF501, HF502, HF503 and HF506 also gate ``precommit-eval-results`` and ``hf-validate`` (``checks hf validate``) and read only the eval-files
view (``eval_files``, ``supplied_tokens``, ``output_files``).
"""

from __future__ import annotations

import functools
import re
from pathlib import PurePosixPath

from checks import SECRET_SHAPES, Finding, rule, secret_values
from hfmigrate_checks.facts.constants import BUNDLE_FILES, DRAFT, EVAL_FILES, VALIDATE_ACTION, VALIDATION
from hfmigrate_checks.facts.providers import planned_additions

#: things only a script that writes to the Hub would contain (case-insensitive); compiled by ``re`` on the first
#: search, not by every command that lists or judges rules (they all import this module)
SUBMIT_PATTERN = (
    r"(create_pr|create_commit|create_pull_request|upload_file|upload_folder|HfApi\s*\(|"
    r"\bhf\s+upload\b|huggingface-cli\s+upload|--create-pr|\bhf\s+discussions\s+create\b|refs/pr/\d+.*push)"
)


@rule(
    "HF501",
    "no-verify-token-unless-supplied",
    actions=EVAL_FILES,
    why="A verifyToken is Hugging Face's signed proof that it ran the evaluation itself; nobody copying "
    "a leaderboard can mint one, and one copied from another result is a forged badge.",
    example_fail='- dataset: {id: cais/hle, task_id: hle}\n  value: 20.9\n  verifyToken: "eyJhbGciOi..."   # from elsewhere',
    example_pass="- dataset: {id: cais/hle, task_id: hle}\n  value: 20.9",
)
def no_verify_token_unless_supplied(ctx):
    """A ``verifyToken`` appears only where one was supplied for exactly that run."""
    from hfmigrate_checks.evalresults.evalfile import entry_findings  # noqa: PLC0415 - start-up: the info-py hook loads no hfmigrate_checks.evalresults module (tests/core/test_core_startup.py)

    forged = functools.partial(_token_problem, ctx.facts.supplied_tokens)
    yield from entry_findings(ctx.facts.eval_files, forged, "verifyToken")


def _token_problem(supplied, entry: dict) -> str | None:
    """What HF501 finds in ``entry``: a verifyToken that is not one of the ``supplied`` tokens."""
    if "verifyToken" in entry and entry["verifyToken"] not in supplied:
        return "verifyToken was not supplied for this run; remove it"
    return None


@rule(
    "HF502",
    "date-only-if-known",
    actions=EVAL_FILES,
    why="`date` says when the evaluation ran. A guessed date (the day of copying, the release day) is "
    "a false claim, and an unquoted date becomes a YAML date object instead of the string the Hub expects.",
    example_fail="- dataset: {id: openai/gsm8k, task_id: main}\n  value: 81.2\n  date: 2025-01-15",
    example_pass='- dataset: {id: openai/gsm8k, task_id: main}\n  value: 81.2\n  date: "2025-01-15"   # printed by the source',
)
def date_only_if_known(ctx):
    """Every ``date`` is a quoted, real ISO-8601 date; in drafts, only the evaluation date the source states."""
    from hfmigrate_checks.evalresults.evalfile import date_problem, entry_findings  # noqa: PLC0415 - start-up: the info-py hook loads no hfmigrate_checks.evalresults module (tests/core/test_core_startup.py)

    yield from entry_findings(ctx.facts.eval_files, date_problem, "date")
    for decision, proposal, entry in planned_additions(ctx) or ():
        known = proposal.row.eval_date if proposal is not None else ""
        if entry.get("date", "") != known:
            task = (entry.get("dataset") or {}).get("task_id")
            yield Finding(
                f"{decision.draft.path}: task {task!r} has date {entry.get('date', 'no date')!r} but the "
                f"source states {known or 'no evaluation date'!r}",
                path=decision.draft.path,
            )


@rule(
    "HF503",
    "no-credentials-in-bundle",
    actions=EVAL_FILES,
    why="A review bundle is shared with reviewers and often committed; a Hub token or a cloud key in it "
    "is a leaked credential.",
    example_fail="review.md: 'fetched with token hf_AbCdEf0123456789...'",
    example_pass="review.md: 'Authenticated account: alice'",
)
def no_credentials_in_bundle(ctx):
    """No output file contains a credential (Hub tokens, cloud keys, bearer headers, secret env values)."""
    secrets = secret_values()
    for path, text in ctx.facts.output_files.items():
        for number, line in enumerate(text.splitlines(), start=1):
            if SECRET_SHAPES.search(line) or any(s in line for s in secrets):
                yield Finding(
                    f"{path} line {number} contains a credential; it must not be written", path=path, line=number
                )


@rule(
    "HF504",
    "no-submit-script-in-bundle",
    actions=DRAFT,
    why="The bundle is for review; anything able to open or update pull requests would turn a review "
    "into a submission. The tool never writes to the Hub, and its bundle must not either.",
    example_fail="bundle/submit.sh: hf upload org/model drafts/... --create-pr",
    example_pass="bundle/: review.md, review.html, source-ledger.csv, validation.txt, "
    "drafts/<owner>--<model>/.eval_results/*.yaml",
)
def no_submit_script_in_bundle(ctx):
    """The bundle holds only review.md, review.html, source-ledger.csv, validation.txt and drafts, and no submit command."""
    from hfmigrate_checks.drafts.validate import is_draft_path  # noqa: PLC0415 - start-up: the validator loads the draft models, and `checks rules` loads no hfmigrate_checks.drafts module (tests/core/test_core_startup.py)

    for path, text in ctx.facts.output_files.items():
        if path not in BUNDLE_FILES and not is_draft_path(path):
            yield Finding(
                f"{path} is not part of a review bundle (only {', '.join(BUNDLE_FILES)} and drafts)", path=path
            )
        match = re.search(SUBMIT_PATTERN, text, re.I)
        if match:
            yield Finding(f"{path} contains a Hub write command ({match.group(0)!r})", path=path)


@rule(
    "HF505",
    "drafts-validate",
    actions=DRAFT,
    why="The bundle's validation.txt is the reviewer's proof that every draft has the Hub's shape; a "
    "bundle whose own validator fails must not be handed over.",
    example_fail="FAIL drafts/org--model/.eval_results/gpqa.yaml\n  - entry 1: value must be a number",
    example_pass="PASS drafts/org--model/.eval_results/gpqa.yaml\nChecked 1 draft file(s); status=PASS",
)
def drafts_validate(ctx):
    """The validator passes on the planned drafts (a bundle with no draft at all is reported, not blocked)."""
    text = ctx.facts.output_files.get(VALIDATION, "")
    if not ctx.facts.drafts:
        return
    for line in text.splitlines():
        if line.startswith(("FAIL ", "  - ", "ERROR")):
            yield line.strip()
    if not text.rstrip().endswith("status=PASS"):
        yield "validation.txt does not end with status=PASS"


@rule(
    "HF506",
    "eval-results-shape",
    actions=EVAL_FILES,
    why="The Hub checks each .eval_results file on its own and shows a broken one as an error instead of "
    "the results; a file with a stray key, a source without url or the same task twice across the "
    "model's files never reaches the leaderboard as intended.",
    example_fail="- dataset: {id: cais/hle, task_id: hle, revison: main}\n  value: 20.9\n  source: {name: paper}",
    example_pass="- dataset: {id: cais/hle, task_id: hle}\n  value: 20.9\n  source: {url: https://arxiv.org/abs/2501.14249}",
)
def eval_results_shape(ctx):
    """Each file is a non-empty list of entries of the documented shape, no (dataset.id, task_id) pair twice per model."""
    from hfmigrate_checks.drafts.validate import standalone_problems  # noqa: PLC0415 - start-up: the validator loads the draft models, and `checks rules` loads no hfmigrate_checks.drafts module (tests/core/test_core_startup.py)

    seen: dict[tuple[str, tuple[str, str]], str] = {}
    for file in ctx.facts.eval_files:
        if file.error:
            yield Finding(file.error, path=file.path, line=file.error_line)
            continue
        if not isinstance(file.data, list) or not file.data:
            yield Finding("the root must be a non-empty YAML list of results", path=file.path, line=1)
            continue
        model = str(PurePosixPath(file.path).parent.parent)
        for n, entry in enumerate(file.data, start=1):
            for problem in standalone_problems(entry):
                yield Finding(f"entry {n}: {problem}", path=file.path, **file.at(n))
            dataset = entry.get("dataset") if isinstance(entry, dict) else None
            if isinstance(dataset, dict):
                key = (model, (str(dataset.get("id")), str(dataset.get("task_id"))))
                if key in seen:
                    yield Finding(
                        f"entry {n}: dataset/task pair {key[1]!r} is already in {seen[key]}",
                        path=file.path,
                        **file.at(n, "dataset.task_id"),
                    )
                else:
                    seen[key] = f"{file.path} entry {n}"


#: why HF507 exists, as `checks rule HF507` explains it
_ONE_BENCHMARK = (
    "A review bundle is made for one benchmark; an entry naming another dataset would be filed under "
    "that benchmark's leaderboard by a reviewer who checked it against this one."
)


@rule(
    "HF507",
    "entries-of-the-benchmark",
    actions=(VALIDATE_ACTION,),
    why=_ONE_BENCHMARK,
    example_fail="checks hf validate bundle --benchmark-id cais/hle --task-id hle   # an entry of Idavidrein/gpqa",
    example_pass="checks hf validate bundle --benchmark-id Idavidrein/gpqa --task-id diamond",
)
def entries_of_the_benchmark(ctx):
    """Every entry's ``dataset.id`` is the benchmark ``checks hf validate`` was given."""
    from hfmigrate_checks.evalresults.evalfile import entry_findings  # noqa: PLC0415 - start-up: the info-py hook loads no hfmigrate_checks.evalresults module (tests/core/test_core_startup.py)

    benchmark = ctx.facts.contract.benchmark_id if ctx.facts.contract is not None else None
    if benchmark is not None:
        elsewhere = functools.partial(_benchmark_problem, benchmark)
        yield from entry_findings(ctx.facts.eval_files, elsewhere, "dataset.id")


def _benchmark_problem(benchmark: str, entry: dict) -> str | None:
    """What HF507 finds in ``entry``: a ``dataset.id`` other than ``benchmark``."""
    found = (entry.get("dataset") or {}).get("id") if isinstance(entry.get("dataset"), dict) else None
    if found == benchmark:
        return None
    return f"dataset.id must be {benchmark!r} (got {found!r}){_other(found)}"


def _other(found) -> str:
    """The fix HF507 names: the id written, or the option validating the bundle for that benchmark."""
    return f"; fix the id, or validate with --benchmark-id {found}" if isinstance(found, str) else "; fix the id"


RULES = [
    no_verify_token_unless_supplied,
    date_only_if_known,
    no_credentials_in_bundle,
    no_submit_script_in_bundle,
    drafts_validate,
    eval_results_shape,
    entries_of_the_benchmark,
]
