"""The HF migration flow end to end against the local Hub on 127.0.0.1: contract, ledger, draft.

``python -m hfmigrate_checks.demo [--workdir DIR]`` writes a small fixture Hub (an official
benchmark and a handful of model repos covering the decisions a reviewer meets), serves it
with :class:`hfmigrate_checks.testing.LocalHub`, and runs ``checks hf contract``, ``checks hf
ledger`` and ``checks run draft`` through the real command line and the real
huggingface_hub client. The bundle, with review.md and review.html, stays in the workdir.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path

from hfmigrate_checks.testing.hubdemo import run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hfmigrate_checks.demo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", type=Path, default=None, help="Where to write the Hub, inputs and bundle.")
    args = parser.parse_args(argv)
    workdir = (args.workdir or Path(tempfile.mkdtemp(prefix="checks-hf-demo-"))).resolve()
    page = run(workdir)
    print(f"review page: {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
