"""``checks run mteb-accept SUBMISSION --results TREE``: copy a submission's files into the results tree.

The submission holds MODEL/REVISION/*.json like the tree; each file goes to the same place
below TREE, written atomically, once every gate passed. A file changed since it was judged
is not copied (the digest judged is the digest written).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from checks import Action, ActionFailed, io
from checks.options import argument, option
from mteb_checks.results import FILES


@attrs.frozen
class AcceptOptions:
    submission: str = argument(help="The folder holding MODEL/REVISION/*.json to accept.")
    results: str = option(help="The results tree to copy into.", default="results", path=True)


def _gather(ctx):
    submission, tree = Path(ctx.options.submission), Path(ctx.options.results)
    dest = {path: tree / Path(path).relative_to(submission) for path in FILES.files([submission])}
    existing = {path: io.file_sha256(to) if to.is_file() else None for path, to in dest.items()}
    return FILES.gather([submission], dest=dest, existing=existing)


def _plan(ctx):
    return [f"copy {s.path} -> {ctx.facts.dest[s.path]}" for s in ctx.facts.sources]


def _execute(ctx):
    for source in ctx.facts.sources:
        data = io.read_bytes(source.path, limit=FILES.max_bytes)
        if io.sha256(data) != source.digest:
            raise ActionFailed(f"{source.path} changed after it was judged; run mteb-accept again")
        io.write_bytes(ctx.facts.dest[source.path], data)
    return f"accepted {len(ctx.facts.sources)} files into {ctx.options.results}"


ACCEPT = Action(
    name="mteb-accept",
    help="Copy SUBMISSION (MODEL/REVISION/*.json) into the MTEB results tree once its gates pass.",
    gather=_gather,
    plan=_plan,
    execute=_execute,
    options=AcceptOptions,
    target=lambda ctx: ctx.options.submission,
    inputs=lambda ctx: ctx.facts.digests(),
    arena="mteb",
)

ACTIONS = [ACCEPT]
