"""Shared helpers for the TabArena raw-data tests: small real runs on disk and payloads that must be refused."""

from __future__ import annotations

import gzip
import pickle
from pathlib import Path

from tabarena_checks.raw import index, inference
from tabarena_checks.rules import raw_fields
from tabarena_checks.synth import generate as synth

#: small arrays keep the tests fast; the layout and keys are those of full-size runs
SCALE = 0.05


def make_run(root: Path, **kwargs) -> Path:
    """A generated run under ``root`` (small arrays, one process); returns its data directory."""
    kwargs.setdefault("array_scale", SCALE)
    kwargs.setdefault("workers", 1)
    return synth.generate_run(root, **kwargs)


def build(data: Path, **kwargs) -> index.RawIndex:
    kwargs.setdefault("workers", 1)
    kwargs.setdefault("progress", False)
    return index.build_index(data, **kwargs)


def infer_run(root: Path, **kwargs) -> inference.Inference:
    """Generate a run with ``kwargs`` and infer from it."""
    return inference.infer(build(make_run(root, **kwargs)))


def field_problems(data: Path, **kwargs) -> tuple[tuple[str, str], ...]:
    """TA306's (path, message) pairs over the index of ``data`` (a run's data directory)."""
    return raw_fields.problems(build(data, **kwargs))


class Call:
    """Pickles as ``fn(*args)``: the shape of every code-execution payload."""

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __reduce__(self):
        return (self.fn, self.args)


def write_payload(path: Path, obj, *, compress: bool = True, protocol: int = 4) -> Path:
    """Write ``obj`` as a results.pkl would be written (pickling never runs the payload)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    blob = pickle.dumps(obj, protocol=protocol)
    path.write_bytes(gzip.compress(blob) if compress else blob)
    return path
