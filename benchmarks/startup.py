"""Startup cost: median wall time of `checks` commands against `python -c pass`.

Target (issue 40): `checks rules`, `checks rule CODE` and a one-file pre-commit hook run
(`checks precommit info-py`, `checks precommit eval-results`) at most 6x the bare interpreter
start, in a directory without a configuration and in one holding the repository's rules.toml,
with no cache of any kind: the rules come from the plugins' generated manifests
(checks/manifest.py) and a valid rules.toml is read without cattrs. Printed for scale: the import
floor (pluggy, click, attrs and importlib.metadata, which finds the plugins' entry points), and the
framework floor (pluggy, attrs and the entry-point lookup, without click), which any hook run of the
stack issue 40 prescribes pays before its first rule: on the shared 2-core VM that floor alone is
above 6x, so there no change to this project can meet the target (benchmarks/README.md). Each
command's ratio with a configuration to without is printed too.
The project's modules are byte-compiled first, as pip does for an installed package: an
editable install under PYTHONDONTWRITEBYTECODE=1 would otherwise compile every module on every
start.

The commands of a plugin's group (``checks hf validate --help``, ``checks tabarena synth --help``)
and a group's own ``--help`` are measured too, with the number of the project's modules each
loads: a group declares its commands by name (checks.LazyGroup), so one command loads its own
module and not its neighbours' (issue 29; no target, the figure is for comparison).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hookenv import DRAFT as EVAL_YAML  # the eval-results file the hook environment's benchmark judges

RUNS = 15
TARGET = 6.0
#: the packages whose modules are counted
PROJECT = ("checks", "tabarena_checks", "hfmigrate_checks")
#: commands measured for comparison only, with no target
UNTARGETED = (
    "import floor",
    "framework floor",
    "checks --version",
    "checks hf --help",
    "checks hf validate --help",
    "checks tabarena synth --help",
)

#: what any hook run needs before a rule, a configuration or the CLI: pluggy's hooks, the attrs model and
#: the plugins found through importlib.metadata (the stack issue 40 prescribes); printed so the target
#: can be read against what no change to this project can remove
FRAMEWORK_FLOOR = "import pluggy, attrs, importlib.metadata as m; m.entry_points(group='checks')"

#: the suffix of a command run in the directory holding the repository's rules.toml
WITH_CONFIG = " (rules.toml)"

INFO_PY = """from tabarena.benchmark.task.user_task import MethodMetadata

lightgbm_method_metadata = MethodMetadata(
    method="LightGBM_2026",
    method_type="config",
    date="2026-01-15",
    reference_url="https://github.com/microsoft/LightGBM",
)
"""


def medians(commands: dict[str, tuple[list[str], str]]) -> dict[str, tuple[float, float]]:
    """Median wall and CPU time (user + system of the child) of each command.

    Sampled round-robin so a load change on a shared machine hits all alike; the CPU time
    is the steadier figure when other processes compete for the cores.
    """
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, (argv, cwd) in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            samples[name].append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
    return {
        name: (statistics.median(w for w, _ in times), statistics.median(c for _, c in times))
        for name, times in samples.items()
    }


def project_modules(args: list[str], cwd: str) -> int:
    """How many of the project's modules ``checks ARGS`` has imported when it ends."""
    probe = (
        f"import sys\nfrom checks.cli import main\nmain({args!r})\n"
        f"print(sum(m.split('.')[0] in {PROJECT!r} for m in sys.modules), file=sys.stderr)"
    )
    res = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True, text=True)
    return int(res.stderr.strip().splitlines()[-1])


def _workdirs(root: Path, work: Path) -> tuple[str, str]:
    """Two directories holding the same info.py and eval-results file, the second the repository's rules.toml too."""
    bare, configured = work / "bare", work / "configured"
    for folder in (bare, configured):
        (folder / ".eval_results").mkdir(parents=True)
        (folder / "info.py").write_text(INFO_PY)
        (folder / ".eval_results" / "gpqa.yaml").write_text(EVAL_YAML)
    (configured / "rules.toml").write_text((root / "rules.toml").read_text())
    return str(bare), str(configured)


def _commands(checks: list[str], bare: str, configured: str) -> dict[str, tuple[list[str], str]]:
    """Each measured command with its working directory; the targeted ones in both directories."""
    floor = "import pluggy, click, attrs, importlib.metadata"
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], bare),
        "import floor": ([sys.executable, "-c", floor], bare),
        "framework floor": ([sys.executable, "-c", FRAMEWORK_FLOOR], bare),
        "checks --version": ([*checks, "--version"], bare),
    }
    targeted = {
        "checks rules": ["rules"],
        "checks rule TA101": ["rule", "TA101"],
        "checks precommit info-py": ["precommit", "info-py", "info.py"],
        "checks precommit eval-results": ["precommit", "eval-results", ".eval_results/gpqa.yaml"],
    }
    for name, args in targeted.items():
        commands[name] = ([*checks, *args], bare)
        commands[name + WITH_CONFIG] = ([*checks, *args], configured)
    for args in (["hf", "--help"], ["hf", "validate", "--help"], ["tabarena", "synth", "--help"]):
        commands["checks " + " ".join(args)] = ([*checks, *args], bare)
    return commands


def main() -> None:
    import compileall

    root = Path(__file__).resolve().parent.parent
    for package in ("checks", "tabarena_checks", "hfmigrate_checks"):
        compileall.compile_dir(root / package, quiet=1)
    checks = [sys.executable, "-m", "checks"]
    with tempfile.TemporaryDirectory() as work:
        bare, configured = _workdirs(root, Path(work))
        commands = _commands(checks, bare, configured)
        before = os.getloadavg()
        times = medians(commands)
        after = os.getloadavg()
        # `checks --version` answers in checks.__main__ before checks.cli is imported, so it is not probed
        loaded = {
            name: project_modules(argv[3:], cwd)
            for name, (argv, cwd) in commands.items()
            if argv[:3] == checks and argv[3:] != ["--version"]
        }
    _report(times, loaded)
    print(
        "load average before " + " ".join(f"{x:.2f}" for x in before) + ", after " + " ".join(f"{x:.2f}" for x in after)
    )


def _report(times: dict[str, tuple[float, float]], loaded: dict[str, int]) -> None:
    """One line per command: wall and CPU medians, their ratios to `python -c pass`, the verdict on the target."""
    base, base_cpu = times.pop("python -c pass")
    print(
        f"{'python -c pass':44s} wall {base * 1000:7.1f} ms           cpu {base_cpu * 1000:6.1f} ms  (medians of {RUNS})"
    )
    for name, (seconds, cpu) in times.items():
        verdict = (
            ""
            if name in UNTARGETED
            else f"  (target <= {TARGET:.0f}x: {'met' if max(seconds / base, cpu / base_cpu) <= TARGET else 'NOT met'})"
        )
        modules = f"  {loaded[name]} project modules" if name in loaded else ""
        print(
            f"{name:44s} wall {seconds * 1000:7.1f} ms ({seconds / base:5.2f}x)  cpu {cpu * 1000:6.1f} ms "
            f"({cpu / base_cpu:5.2f}x){modules}{verdict}"
        )
    for name in [n for n in times if n.endswith(WITH_CONFIG)]:
        plain = times[name.removesuffix(WITH_CONFIG)]
        print(
            f"{name.removesuffix(WITH_CONFIG):44s} with rules.toml / without: wall "
            f"{times[name][0] / plain[0]:.2f}x, cpu {times[name][1] / plain[1]:.2f}x"
        )


if __name__ == "__main__":
    main()
