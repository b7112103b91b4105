"""Describe what real results.pkl files hold: every field path with its type, dtype and shape,
and every class that is not a builtin or numpy, with where it appears and how it is pickled.

Run with the TabArena side environment (it unpickles the files, so only on files you made):

    /work/main/.venv-tabarena/bin/python tests/real_runs/describe_results.py DIR_OR_FILE... [--dis FILE]

``--dis FILE`` also prints the pickle opcodes around each non-builtin class of that file.
"""

from __future__ import annotations

import argparse
import gzip
import io
import pickle
import pickletools
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

BUILTIN_MODULES = {"builtins"}


def _load(path: Path):
    raw = path.read_bytes()
    return pickle.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def _norm(path: str) -> str:
    # One line per field, not per framework/config name or list position.
    path = re.sub(r"\[\d+\]", "[i]", path)
    path = re.sub(r"(pred_proba_dict_(?:val|test))\.[^.]+", r"\1.<framework>", path)
    path = re.sub(r"(children_info)\.[^.]+", r"\1.<child>", path)
    return path


def _describe(value) -> str:
    if isinstance(value, type):  # a class stored as a value (pickled as a bare global)
        return f"class {value.__module__}.{value.__qualname__}"
    t = type(value)
    name = f"{t.__module__}.{t.__qualname__}"
    if isinstance(value, np.ndarray):
        return f"ndarray[{value.dtype}] ndim={value.ndim}"
    if isinstance(value, np.generic):
        return f"{name}"
    return name


def walk(value, path: str, out: dict) -> None:
    out[_norm(path)].add(_describe(value))
    if isinstance(value, dict):
        for key, sub in value.items():
            walk(sub, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, (list, tuple)):
        for i, sub in enumerate(value):
            walk(sub, f"{path}[{i}]", out)


def foreign(types: set[str]) -> set[str]:
    keep = set()
    for t in types:
        module = t.removeprefix("class ").split("[")[0].rsplit(".", 1)[0]
        if module in BUILTIN_MODULES or t.startswith("ndarray") or module.startswith("numpy"):
            continue
        keep.add(t)
    return keep


def disassemble(path: Path, names: tuple[str, ...] = ("ParamsDict", "ParamsAuxDict")) -> None:
    """Print the opcodes that build the first object of each class in ``names``, and the
    count of every opcode in the file."""
    raw = path.read_bytes()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    text = io.StringIO()
    pickletools.dis(data, out=text)
    lines = text.getvalue().splitlines()
    print(f"protocol: {lines[0].split()[-1]}")
    for name in names:
        hits = [i for i, line in enumerate(lines) if f"'{name}'" in line]
        if not hits:
            continue
        i = hits[0]
        print(f"--- {name}: how the first one is built (its global is written once, later ones fetch it from the memo)")
        print("\n".join(lines[i - 2 : i + 7]))
        closing = next(
            j for j in range(i, len(lines)) if " REDUCE" in lines[j] or " NEWOBJ" in lines[j] or " BUILD" in lines[j]
        )
        print("    ...")
        print("\n".join(lines[closing - 3 : closing + 2]))
    counts: dict[str, int] = defaultdict(int)
    memo: dict[int, object] = {}
    pushed: list[object] = []
    global_uses: dict[str, int] = defaultdict(int)
    for op, arg, _pos in pickletools.genops(data):
        counts[op.name] += 1
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            pushed.append(arg)
        elif op.name == "MEMOIZE":
            memo[len(memo)] = pushed[-1] if pushed else None
        elif op.name in ("BINGET", "LONG_BINGET", "GET"):
            pushed.append(memo.get(arg))
        elif op.name == "STACK_GLOBAL":
            module, qualname = pushed[-2], pushed[-1]
            pushed.append(f"{module}.{qualname}")
            global_uses[f"{module}.{qualname}"] += 1
        elif op.name == "GLOBAL":
            pushed.append(arg.replace(" ", "."))
            global_uses[arg.replace(" ", ".")] += 1
        elif op.name in ("REDUCE", "NEWOBJ", "NEWOBJ_EX", "BUILD"):
            pushed.append(op.name)
        else:
            pushed.append(None)
    print("globals named (STACK_GLOBAL):", dict(sorted(global_uses.items())))
    print("opcodes:", dict(sorted(counts.items())))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--dis", type=Path)
    args = parser.parse_args()
    files = []
    for p in args.paths:
        files += sorted(p.rglob("results.pkl")) if p.is_dir() else [p]
    fields: dict[str, set[str]] = defaultdict(set)
    for f in files:
        walk(_load(f), "", fields)
    print(f"{len(files)} files")
    for path in sorted(fields):
        print(f"{path or '<root>'}: {' | '.join(sorted(fields[path]))}")
    print("\nclasses that are neither builtins nor numpy:")
    where = defaultdict(list)
    for path, types in fields.items():
        for t in foreign(types):
            where[t].append(path)
    for t, paths in sorted(where.items()):
        print(f"  {t}:")
        for p in sorted(paths):
            print(f"    {p}")
    if args.dis:
        print()
        disassemble(args.dis)


if __name__ == "__main__":
    main()
