"""Hostile pickles that attack the unpickler itself (memory safety, work, nesting), as raw bytes.

Each is built by pickling objects whose ``__reduce__`` names the allow-listed numpy and builtin
callables with arguments numpy never writes, or written opcode by opcode where no object
pickles that way. Nothing here runs the payload: pickling only records the calls.
"""

from __future__ import annotations

import pickle

import numpy as np

_core = getattr(np, "_core", None) or np.core
RECONSTRUCT = _core.multiarray._reconstruct
SCALAR = _core.multiarray.scalar
FROMBUFFER = _core.numeric._frombuffer


class Reduce:
    """Pickles as ``fn(*args)`` followed by BUILD with ``state`` when one is given."""

    def __init__(self, fn, args, state=None):
        self.fn, self.args, self.state = fn, args, state

    def __reduce__(self):
        return (self.fn, self.args) if self.state is None else (self.fn, self.args, self.state)


def _array_state(shape, dtype, data, fortran=False):
    return Reduce(RECONSTRUCT, (np.ndarray, (0,), b"b"), (1, shape, dtype, fortran, data))


def shared_lists(depth: int, width: int) -> list:
    """A list ``width`` wide and ``depth`` deep built from one shared list per level (a 'billion laughs')."""
    level: list = [0] * width
    for _ in range(depth - 1):
        level = [level] * width
    return level


def self_containing() -> list:
    a: list = []
    a.append(a)
    return a


def deep_tuple_key(depth: int) -> bytes:
    """A dict whose key is a tuple nested ``depth`` deep: hashing it recurses in C without a limit."""
    return b"\x80\x04}" + b"N" + b"\x85" * depth + b"Ns."


def opcode_flood(count: int) -> bytes:
    """A list of ``count`` empty sets (one byte of pickle each, about 200 bytes of memory each)."""
    return b"\x80\x04](" + b"\x8f" * count + b"e."


def _dumps(value, protocol=4) -> bytes:
    return pickle.dumps(value, protocol=protocol)


def payloads() -> dict[str, bytes]:
    """name -> pickle bytes; every one must be refused as unreadable, none may crash or hang the reader."""
    obj = np.dtype("O")
    return {
        # memory safety: arrays whose bytes would be read as object pointers, or outside their buffer
        "ndarray-object-from-bytes": _dumps({"x": Reduce(np.ndarray, ((1,), obj, b"A" * 8))}),
        "ndarray-stride-0": _dumps({"x": Reduce(np.ndarray, ((10**12,), np.dtype("f8"), b"A" * 8, 0, (0,)))}),
        "frombuffer-object": _dumps({"x": Reduce(FROMBUFFER, (b"A" * 8, obj, (1,), "C"))}),
        "frombuffer-short-buffer": _dumps({"x": Reduce(FROMBUFFER, (b"A" * 8, np.dtype("f8"), (1000,), "C"))}),
        "setstate-object-from-bytes": _dumps({"x": _array_state((1,), obj, b"A" * 8)}),
        "setstate-short-buffer": _dumps({"x": _array_state((1000,), np.dtype("f8"), b"A" * 8)}),
        "setstate-negative-shape": _dumps({"x": _array_state((-1,), np.dtype("f8"), b"")}),
        "setstate-object-list-too-short": _dumps({"x": _array_state((5,), obj, [1])}),
        "dtype-structured-with-object-field": _dumps({"x": np.dtype([("a", "O")])}),
        "dtype-zero-size-string": _dumps({"x": _array_state((10**12,), Reduce(np.dtype, ("U0", False, True)), b"")}),
        "dtype-state-turned-object": _dumps(
            {"x": Reduce(np.dtype, ("f8", False, True), (3, "|", None, None, None, -1, -1, 63))}
        ),
        "scalar-object": _dumps({"x": Reduce(SCALAR, (obj, b"A" * 8))}),
        "scalar-short": _dumps({"x": Reduce(SCALAR, (np.dtype("f8"), b"A"))}),
        "build-on-a-list": _dumps({"x": Reduce(list, ([1],), {"y": 1})}),
        # work: nesting, sharing and copies
        "deep-tuple-dict-key": deep_tuple_key(1_000_000),
        "billion-laughs": _dumps({"method_metadata": {"model_hyperparameters": {"x": shared_lists(40, 10)}}}),
        "nested-1000-cubed": _dumps({"x": shared_lists(3, 1000)}),
        "self-containing-list": _dumps({"x": self_containing()}),
        "bytearray-of-a-size": _dumps({"x": Reduce(bytearray, (10**10,))}),
        "str-of-billion-laughs": _dumps({"x": Reduce(str, (shared_lists(40, 10),))}),
        "tuple-copies": _copies(),
        "opcode-flood": opcode_flood(5_000_000),
    }


def _copies() -> bytes:
    """One 100,000-element list copied by ``tuple()`` 100,000 times: 10^10 elements from 1 MB of pickle."""
    big = list(range(100_000))
    return _dumps({"x": [Reduce(tuple, (big,)) for _ in range(100_000)]})
