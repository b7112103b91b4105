"""``checks precommit eval-results FILE...``: the draft rules that need no network.

All files of one invocation under one configuration form one eval-files view (pre-commit runs
this hook with ``require_serial``, so every staged draft is in one process and cross-file rules
see them all); files under different configurations (the nearest to each, as ruff finds it)
are judged apart, each under its own. Task ids are checked only against a benchmark's eval.yaml cached on disk
(``--eval-yaml DATASET_ID=PATH``) or a contract from ``checks hf contract``; without
either, the task-id rule is left out of the selection. Read-only: nothing is fetched or
written, no decision record.
"""

from __future__ import annotations

from pathlib import Path

import click

from checks import InputError, UsageError, filecheck, io
from hfmigrate_checks.facts.constants import PRECOMMIT_ACTION
from hfmigrate_checks.facts.eval_files import EvalFilesFacts
from hfmigrate_checks.evalresults.evalfile import EvalFile
from hfmigrate_checks.source import contract

ACTION = PRECOMMIT_ACTION
#: decided only against a benchmark's declared task ids
TASK_ID_RULES = ("HF102",)


def _eval_yaml_contract(spec: str):
    """A contract that knows only what a cached eval.yaml says: the benchmark id and its task ids."""
    benchmark_id, sep, path = spec.partition("=")
    if not sep or not benchmark_id or not path:
        raise UsageError(f"--eval-yaml {spec!r}: expected DATASET_ID=PATH, e.g. Idavidrein/gpqa=cache/gpqa/eval.yaml")
    try:
        text = io.read_text(path, what="an eval.yaml")
    except io.ReadError as exc:
        raise InputError(f"{path}: cannot read the cached eval.yaml: {exc.reason}") from None
    spec_ = contract.parse_eval_yaml(text, path)
    return offline_contract(
        benchmark_id,
        spec_.task_ids,
        eval_yaml_url=Path(path).as_posix(),
        name=spec_.name,
        evaluation_framework=spec_.evaluation_framework,
    )


def offline_contract(benchmark_id: str, task_ids, *, eval_yaml_url: str = "", name: str = "", evaluation_framework=""):
    """A contract that knows only a benchmark id and its task ids (what an offline check is told), nothing fetched."""
    return contract.Contract(
        benchmark_id=benchmark_id,
        dataset_sha="",
        eval_yaml_url=eval_yaml_url,
        official=False,
        name=name,
        evaluation_framework=evaluation_framework,
        task_ids=tuple(task_ids),
        metric="",
        direction="",
        unit="",
        columns={},
    )


def subjects(paths: list[str], contracts: list) -> list[filecheck.Subject]:
    """One subject per file that cannot be read or parsed (the read check: no rule sees it, whatever is
    selected), then one per benchmark with known task ids (or one without any), each holding every
    readable file."""
    files = [EvalFile.read(path) for path in paths]
    out = [filecheck.Subject(f.path, error=f.error, line=f.error_line, col=f.error_col) for f in files if f.error]
    readable = tuple(f for f in files if not f.error)
    if not readable:
        return out
    first = readable[0].path
    sources = tuple(f.path for f in readable)
    if not contracts:
        return [*out, filecheck.Subject(first, EvalFilesFacts(readable), target=".eval_results", sources=sources)]
    return [
        *out,
        *(
            filecheck.Subject(first, EvalFilesFacts(readable, c), target=c.benchmark_id, sources=sources)
            for c in contracts
        ),
    ]


def is_draft(path: str) -> bool:
    """A draft's path: a ``.yaml`` file right inside an ``.eval_results`` directory (the hook's ``files``)."""
    folder, _, name = path.rpartition("/")
    return folder.rpartition("/")[2] == ".eval_results" and name.endswith(".yaml")


def eval_results_command() -> click.Command:
    """``checks precommit eval-results``, made anew for each group that loads it (the group adds its options)."""

    @click.command("eval-results")
    @click.argument("files", nargs=-1, type=click.Path())
    @click.option(
        "--eval-yaml",
        "eval_yamls",
        multiple=True,
        metavar="DATASET_ID=PATH",
        help="A benchmark's eval.yaml cached on disk; task ids of that benchmark are checked against it. "
        "Repeat for several benchmarks.",
    )
    @click.option(
        "--contract",
        "contracts",
        multiple=True,
        type=click.Path(dir_okay=False),
        help="A contract.json from `checks hf contract`; its task ids are used like --eval-yaml's.",
    )
    def eval_results(files, eval_yamls, contracts):
        """Check .eval_results/*.yaml FILES offline (read-only; path:line:col: CODE message).

        A directory stands for every .eval_results/*.yaml below it."""
        files = filecheck.expand(files, is_draft, ".eval_results/*.yaml")
        known = [_eval_yaml_contract(spec) for spec in eval_yamls] + [contract.load(path) for path in contracts]
        # the files under one configuration form one view (cross-file rules), judged under it
        judged = [s for group in filecheck.by_configuration(list(files)) for s in subjects(group, known)]
        filecheck.run_command(ACTION, judged, undecidable=() if known else TASK_ID_RULES)

    return eval_results
