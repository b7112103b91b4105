"""Hunt for raw results native processing publishes differently from TabArena 0.1.0 (a manual tool, not a test).

Each case changes one value of one results.pkl in a small generated run (a leaf replaced by a value
of another kind, or deleted), runs ``checks run process`` on it, then TabArena 0.1.0's own processing
(tests/support/tabarena_driver.py in the side environment) on the same files, and compares the two caches
as the parity tests do. A case worth a look is one where native publishes (exit 0) while TabArena
stops or writes another cache, or where native ends other than with exit 0 or 1. With ``--scope task``
the same leaf of every result of one task is changed alike: a whole task named, typed or scored
otherwise, which no single file shows (the kind of run TA306's checks against the TabArena-v0.1
task table refuse). Every case is written as one JSON line to ``--out``; a line is printed per
case: native's exit code, TabArena's, the number of differences and the change.

    .venv/bin/python tests/support/fuzz_parity.py --shape config --cases 100 --seed 1 --out fuzz.jsonl [--scope task]

Shapes: ``config`` (2 configs, a regression and a multiclass task), ``binary`` (3 configs, a binary
and a multiclass task), ``baseline``. About 25 s a case on a 2-core machine, most of it TabArena's.
``--skip`` leaves out top-level sections TabArena 0.1.0 never reads (by default the records native
alone judges: experiment_metadata, memory_usage, validation_protocol).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from tests.support.parity import compare_caches  # noqa: E402

from checks.testing import run_cli  # noqa: E402
from tabarena_checks.synth.generate import generate_run  # noqa: E402
from tabarena_checks.testing.commands import process_args  # noqa: E402

SHAPES = {
    "config": dict(configs=2, tasks=(363612, 363614), folds=2, array_scale=0.1),
    "binary": dict(configs=3, tasks=(363619, 363614), folds=2, array_scale=0.1),
    "baseline": dict(kind="baseline", method="Nori", name_prefix="Nori", tasks=(363612, 363619), folds=2),
}
NATIVE_INFO = """from tabarena.models import MethodMetadata

m = MethodMetadata.{kind}(method="Nori", suite="fuzz", validation_protocol="8x1", {fields}
    cache_type="r2", cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}})
"""
TABARENA_INFO = """from tabarena.models._method_metadata import MethodMetadata

m = MethodMetadata.{kind}(method="Nori", suite="fuzz", {fields} cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}})
"""
CONFIG_FIELDS = 'ag_key="TA-NORI", is_bag=True, can_hpo=True, config_default="Nori_c1_default_BAG_L1",'
#: values a leaf may become: other kinds, edge numbers, path-like text, empty containers and arrays
REPLACEMENTS = (
    None,
    "",
    "x",
    "../x",
    -1,
    0,
    1,
    2**70,
    float("nan"),
    float("inf"),
    -1.5,
    True,
    [],
    {},
    [1, 2],
    {"k": 1},
    "1.5",
    np.float32(3.0),
    np.int64(7),
    np.array([]),
    np.array(["a", "b"]),
)


def _array_variants(value: np.ndarray) -> list:
    """Arrays a stored array may become: shorter, longer, another dtype or shape, NaN or huge values."""
    out = [
        value[:-1],
        np.concatenate([value, value]),
        value.astype(object),
        value.astype(str),
        np.full(value.shape, np.nan),
    ]
    if value.dtype.kind in "biuf":
        out += [value.astype(np.int64), value.astype(np.float16), value.astype(bool), -value]
    if value.ndim == 1:
        out.append(value.reshape(-1, 1))
    return out


def _leaves(value, path=()):
    """Every (path, value) below ``value``: dict entries and the first items of lists."""
    if path:
        yield path, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            yield from _leaves(item, path + (i,))


#: the change that deletes a leaf
DELETE = object()


def pick_change(result: dict, rnd: random.Random, skip: tuple[str, ...]) -> tuple[tuple, object]:
    """One change of one leaf of ``result``: its path and its new value (or :data:`DELETE`)."""
    path, value = rnd.choice([(p, v) for p, v in _leaves(result) if p[0] not in skip])
    if isinstance(_parent(result, path), dict) and rnd.random() < 0.2:
        return path, DELETE
    options = list(REPLACEMENTS) + (_array_variants(value) if isinstance(value, np.ndarray) else [])
    return path, rnd.choice(options)


def apply_change(result: dict, path: tuple, new) -> bool:
    """Make the change in ``result`` in place; False where ``result`` has no such leaf."""
    try:
        parent = _parent(result, path)
        parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    if new is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = new
    return True


def describe(path: tuple, new) -> str:
    where = "/".join(map(str, path))
    return f"{where} deleted" if new is DELETE else f"{where} = {repr(new)[:80]}"


def _parent(result: dict, path: tuple):
    parent = result
    for key in path[:-1]:
        parent = parent[key]
    return parent


def _load(path: Path) -> dict:
    return pickle.loads(gzip.decompress(path.read_bytes()))  # written by this project's own generator


def make_base(root: Path, shape: str) -> Path:
    """The generated run of ``shape`` and both declarations of it, under ``root``."""
    spec = SHAPES[shape]
    generate_run(root / "run", validation_protocol="8x1", workers=1, **spec)
    kind, fields = ("baseline", "") if spec.get("kind") == "baseline" else ("config", CONFIG_FIELDS)
    (root / "native_info.py").write_text(NATIVE_INFO.format(kind=kind, fields=fields))
    (root / "tabarena_info.py").write_text(TABARENA_INFO.format(kind=kind, fields=fields))
    return root


def run_case(
    base: Path,
    work: Path,
    python: str,
    rnd: random.Random | None = None,
    skip: tuple[str, ...] = (),
    scope: str = "file",
) -> dict:
    """One case in ``work`` (a fresh copy of ``base``, one leaf changed unless ``rnd`` is None; with ``scope``
    "task", the same leaf of every result of the chosen file's task changed alike): the change, both exit codes
    and the differences."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    change = "none"
    if rnd is not None:
        data = work / "run" / "data"
        target = rnd.choice(sorted(data.rglob("results.pkl")))
        path, new = pick_change(_load(target), rnd, skip)
        files = sorted(data.glob(f"*/{target.parent.parent.name}/*/results.pkl")) if scope == "task" else [target]
        changed = 0
        for file in files:
            result = _load(file)
            if apply_change(result, path, new):
                file.write_bytes(gzip.compress(pickle.dumps(result)))
                changed += 1
        where = (
            target.relative_to(data) if scope == "file" else f"{changed} results of task {target.parent.parent.name}"
        )
        change = f"{where}: {describe(path, new)}"
    native = run_cli(
        ["-p", "tabarena", *process_args(work / "run" / "data", f"{work / 'native_info.py'}:m", work / "native")],
        env={"CHECKS_DISABLE_PLUGIN_AUTOLOAD": "1"},
        cwd=work,
    )
    theirs = subprocess.run(
        [
            python,
            str(HERE / "tabarena_driver.py"),
            "process",
            str(work / "run" / "data"),
            f"{work / 'tabarena_info.py'}:m",
            str(work / "tabarena"),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TABARENA_CACHE": str(work / "ta-default")},
    )
    case = {"change": change, "native": native.exit_code, "tabarena": theirs.returncode, "differences": []}
    if native.exit_code not in (0, 1):
        case["native_output"] = (native.stdout + native.stderr)[-2000:]
    if theirs.returncode:
        case["tabarena_output"] = (theirs.stdout + theirs.stderr)[-1000:]
    elif native.exit_code == 0:
        method = Path("artifacts") / "fuzz" / "methods" / "Nori"
        case["differences"] = [
            d[:800]
            for d in compare_caches(work / "native" / method, work / "tabarena" / method)
            if not d.startswith("metadata.yaml")
        ]  # its validation_protocol line, by design
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="config")
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("fuzz-parity.jsonl"))
    parser.add_argument("--skip", default="experiment_metadata,memory_usage,validation_protocol")
    parser.add_argument(
        "--scope",
        choices=("file", "task"),
        default="file",
        help="change one file, or the same leaf of every result of one task alike",
    )
    parser.add_argument("--tabarena-python", default=str(HERE.parents[1] / ".venv-tabarena" / "bin" / "python"))
    args = parser.parse_args(argv)
    rnd, skip = random.Random(args.seed), tuple(filter(None, args.skip.split(",")))
    with tempfile.TemporaryDirectory(prefix="fuzz-parity-") as tmp, args.out.open("a", encoding="utf-8") as out:
        base = make_base(Path(tmp) / "base", args.shape)
        unchanged = run_case(base, Path(tmp) / "case", args.tabarena_python)
        if (unchanged["native"], unchanged["tabarena"], unchanged["differences"]) != (0, 0, []):
            print(f"the unchanged {args.shape} run does not process alike: {json.dumps(unchanged)[:3000]}")
            return 1
        for _ in range(args.cases):
            case = run_case(base, Path(tmp) / "case", args.tabarena_python, rnd, skip, args.scope)
            out.write(json.dumps(case) + "\n")
            out.flush()
            print(case["native"], case["tabarena"], len(case["differences"]), case["change"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
