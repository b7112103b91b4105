"""A stand-in for ``checks.main`` in a batch step's child, for the watchdog's tests (a runner named by import
path, so a step server started as a fresh interpreter runs it too)."""

from __future__ import annotations

import json
import os
import sys
import time

#: the runner's name for :class:`tabarena_checks.publish.batch_steps.Children`
RUNNER = "tests.support.batch_fakes:fake_step"


def fake_step(args: list[str]) -> int:
    """The first argument names what the "command" does; the report says which process answered (its pid and
    its parent's) and whether it found the module an earlier step imported."""
    what = args[0]
    if what == "stall":
        print("sending raw.zip", file=sys.stderr, flush=True)
        time.sleep(120)
    if what == "die":
        print("decoding results.pkl", file=sys.stderr, flush=True)
        os._exit(9)
    if what == "import":
        import wave  # noqa: F401, PLC0415 - a module nothing else here imports
    end = time.monotonic() + (4 if what == "busy" else 0)
    while time.monotonic() < end:
        sum(range(10000))
    print(json.dumps({"summary": f"{os.getpid()} {os.getppid()} {'wave' in sys.modules}"}))
    return 0
