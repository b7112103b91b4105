"""The info.py hook over a TabArena-sized tree in one call, against `python -c pass` (target: at most 10x).

TabArena's checkout holds 34 info.py files (32 models, 2 systems, baselines/info.py) with about 60
declarations written in its idioms. This benchmark generates a tree of the same size and shape: a
package per model with a ModelDescriptor and one to three `descriptor.method_metadata(...)`
declarations (a superseded legacy-s3 one next to its rerun in every third), a systems file of
sixteen `MethodMetadata.tabarena_legacy_s3(...)`/`.system(...)` declarations built from nested
`dict(...)` spreads and module-level constants, and a baselines file importing from it. The hook is
run as pre-commit runs it, all files in one call, with bytecode caching on (as in an installed hook
environment; a warm-up run writes the caches). Figures: medians of 11 runs each, sampled round-robin
(a change of load hits every command alike), wall time and the child's CPU time (user + system),
which a loaded machine disturbs less; the load average is printed before and after.
"""

from __future__ import annotations

import os
import sys

# benchmarks/ holds a file named like the stdlib's inspect module: keep that directory off the path
if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
    del sys.path[0]

import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.info_checkout_fixtures import IMPORT, LEGACY, RERUN  # noqa: E402

RUNS = 11
MODELS = 32
CHECKS = [sys.executable, "-m", "checks"]

MODEL = (
    IMPORT
    + """from tabarena.models._model_info import ModelInfo
from tabarena.models.m{n}.model import Model{n}

m{n}_descriptor = ModelDescriptor(
    display_name="Model{n}",
    compute="{compute}",
    is_bag=True,
    reference_url="https://arxiv.org/abs/2401.{n:05d}",
    date_introduced="2024-0{month}",
)
{declarations}
m{n}_info = ModelInfo(model_cls=Model{n}, method_metadata=m{n}_new_method_metadata)
"""
)
CPU = """
m{n}_cpu_method_metadata = m{n}_descriptor.method_metadata(
    method="Model{n}_CPU",
    suite="tabarena-2026-07-13",
    ag_key="M{n}",
    compute="cpu",
    display_name="Model{n} (CPU)",
    cache_kwargs={{"bucket": "tabarena", "prefix": "cache"}},
)
"""
SYSTEM_HEAD = (
    IMPORT
    + """
_PAPER = "https://arxiv.org/abs/2003.06505"
_system_kwargs = dict(method_class="system", reference_url=_PAPER)
_common_kwargs = dict(suite="tabarena-2025-11-01", method_type="baseline", date="2025-11-01", **_system_kwargs)
_gpu_kwargs = dict(compute="gpu", date_introduced="2025-07-29", **_common_kwargs)
_cpu_kwargs = dict(compute="cpu", date_introduced="2023-11", **_common_kwargs)
_r2_kwargs = dict(suite="tabarena-2026-08-05", date="2026-08-05", compute="gpu", reference_url=_PAPER,
                  cache_type="r2", cache_kwargs={"bucket": "tabarena", "prefix": "cache"})
"""
)
SYSTEM_LEGACY = """
auto_{i}_metadata = MethodMetadata.tabarena_legacy_s3(
    method="Auto_v140_{i}",
    name="Auto 1.4 ({i})",
    **_{kind}_kwargs,
)
"""
SYSTEM_NEW = """
auto_new_{i}_metadata = MethodMetadata.system(method="Auto_16_{i}", name="Auto 1.6 ({i})", **_r2_kwargs)
"""
BASELINES = (
    IMPORT
    + """from tabarena.systems.auto.info import auto_0_metadata

portfolio_metadata = MethodMetadata.tabarena_legacy_s3(
    method="Portfolio-N200-4h",
    suite="tabarena-2025-06-12",
    date="2025-06-12",
    method_type="portfolio",
    method_class="system",
    has_raw=False,
    has_processed=False,
)
"""
)


def write_tree(root: Path) -> list[str]:
    pkg = root / "tabarena"
    files = []

    def write(rel: str, text: str) -> None:
        path = pkg / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in (path.parent, *path.parent.parents):
            if parent == root:
                break
            (parent / "__init__.py").touch()
        path.write_text(text)
        if rel.endswith("info.py"):
            files.append(str(path.relative_to(root)))

    for n in range(MODELS):
        parts = ([LEGACY] if n % 3 == 0 else []) + [RERUN] + ([CPU] if n % 4 == 1 else [])
        declarations = "".join(p.format(n=n, var=f"m{n}", name=f"Model{n}", key=f"M{n}", hpo=n % 2 == 0) for p in parts)
        write(
            f"models/m{n}/info.py",
            MODEL.format(n=n, compute="gpu" if n % 2 else "cpu", month=1 + n % 9, declarations=declarations),
        )
    system = SYSTEM_HEAD + "".join(SYSTEM_LEGACY.format(i=i, kind="gpu" if i % 2 else "cpu") for i in range(14))
    write("systems/auto/info.py", system + "".join(SYSTEM_NEW.format(i=i) for i in range(2)))
    write("baselines/info.py", BASELINES)
    return files


def medians(commands: dict[str, list[str]], cwd: Path, env: dict[str, str]) -> dict[str, tuple[float, float, int]]:
    """Median wall time, median CPU time (user + system of the child) and the last exit code of each command,
    sampled round-robin."""
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    codes: dict[str, int] = {}
    for _ in range(RUNS):
        for name, argv in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            codes[name] = subprocess.run(
                argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            ).returncode
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            samples[name].append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return {
        name: (statistics.median(w for w, _ in got), statistics.median(c for _, c in got), codes[name])
        for name, got in samples.items()
    }


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = write_tree(root)
        declarations = sum((root / f).read_text().count("metadata = ") for f in files)
        hook = [*CHECKS, "precommit", "info-py", *files]
        subprocess.run(hook, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # warm-up
        before = load_average()
        times = medians(
            {"base": [sys.executable, "-c", "pass"], "hook": hook, "one": [*CHECKS, "precommit", "info-py", files[0]]},
            root,
            env,
        )
        after = load_average()
    (base, base_cpu, _), (info, info_cpu, rc), (one, one_cpu, _) = times["base"], times["hook"], times["one"]
    if rc != 0:
        raise SystemExit(f"the hook exited {rc} on the generated tree; it must pass")
    label = f"checks precommit info-py ({len(files)} info.py, {declarations} declarations)"
    print(f"{'python -c pass':<57} wall {base * 1000:7.1f} ms            cpu {base_cpu * 1000:6.1f} ms")
    print(
        f"{label:<57} wall {info * 1000:7.1f} ms ({info / base:5.2f}x)  cpu {info_cpu * 1000:6.1f} ms "
        f"({info_cpu / base_cpu:5.2f}x)  (target <= 10x)"
    )
    print(
        f"{'checks precommit info-py (1 info.py: the start-up)':<57} wall {one * 1000:7.1f} ms ({one / base:5.2f}x)  "
        f"cpu {one_cpu * 1000:6.1f} ms ({one_cpu / base_cpu:5.2f}x)"
    )
    print(f"medians of {RUNS}, round-robin; load average before {before}, after {after}")


if __name__ == "__main__":
    main()
