"""A ``checks tabarena publish`` batch against the same single commands run one after another.

Three generated methods (``checks tabarena synth``'s generator) are published to moto's S3
server on 127.0.0.1 twice, each side into a bucket of its own so neither finds the other's
objects in place: once as the maintainer's shell loop would (per method ``checks run process``,
``checks run upload``, ``checks run upload --no-dry-run``, each a command of its own), once as one
batch of a plan with the same steps (``--no-dry-run``, ``--jobs`` as given, 1 by default). Both
sides start from empty caches and decision logs. Printed: each side's wall time, the ratio
(target: the batch at most 0.75x the loop), each side's CPU seconds (its processes' user and system
time, which the machine's load hardly changes; the S3 server, in this process, is not counted) and
each side's peak memory and their ratio (target:
the batch's at processing one method's): the proportional set sizes summed over a command's
process tree at the moment it was largest (load_inspect.py's sampler, every 50 ms), for the loop
the largest of its commands (processing one method, with its index workers), for the batch its
whole tree (itself, its step server and the running step). Proportional, not resident: the
batch's steps are forked from its step server and processing's index workers from their step,
and the RSS of each would count again the pages they share; the page cache is not counted.

    .venv/bin/python benchmarks/publish_batch.py [--configs 2] [--folds 3] [--rounds 1] [--jobs 1]
"""

from __future__ import annotations

import sys

# benchmarks/ holds inspect.py, which would shadow the standard library's inspect for this script
sys.path[:] = [p for p in sys.path if p not in ("", __file__.rsplit("/", 1)[0])]

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from tabarena_checks.testing.commands import process_args  # noqa: E402

METHODS = ("Nori", "Kiwi", "Tui")
INFO = """from tabarena.models import MethodMetadata

{var} = MethodMetadata.config(method={method!r}, suite={suite!r}, ag_key={ag_key!r}, can_hpo={can_hpo}, is_bag=True,
                             compute="cpu", validation_protocol="8x1", date="2026-01-01", verified=False,
                             cache_kwargs={{"bucket": {bucket!r}, "prefix": "cache"}})
"""
CHECKS = [sys.executable, "-m", "checks"]


def _tree_rss():
    """load_inspect.py's sampler of a process tree's memory (the script is no package: loaded by its path)."""
    spec = importlib.util.spec_from_file_location("load_inspect", Path(__file__).with_name("load_inspect.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TreeRSS


TreeRSS = _tree_rss()


def _run(args: list[str], cwd: Path) -> int:
    """Run ``checks ARGS``; the peak of its process tree's summed PSS (KiB), every process it starts included."""
    proc = subprocess.Popen([*CHECKS, *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    with TreeRSS(proc.pid, interval=0.05, pss=True) as tree:
        out, _ = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"checks {' '.join(args[:2])} exited {proc.returncode}:\n{out}")
    return tree.peak_kib


def _side(root: Path, bucket: str, runs: Path, configs: int) -> list[str]:
    """A working folder of its own (decision log, caches, info.py files); the methods' references."""
    root.mkdir(parents=True)
    refs = []
    for method in METHODS:
        var = method.lower()
        info = root / "info" / var / "info.py"
        info.parent.mkdir(parents=True)
        suite, ag_key = f"{var}-bench", f"TA-{method.upper()}"
        text = INFO.format(var=var, method=method, suite=suite, ag_key=ag_key, bucket=bucket, can_hpo=configs > 1)
        info.write_text(text)
        refs.append(f"{info}:{var}")
    lines = ['cache_root = "cache"', 'steps = ["process", "upload"]']
    for method, ref in zip(METHODS, refs):
        lines += ["", "[[methods]]", f'data = "{runs / method / "data"}"', f'method_metadata = "{ref}"']
    (root / "plan.toml").write_text("\n".join(lines) + "\n")
    return refs


def loop(root: Path, runs: Path, refs: list[str]) -> int:
    """The single commands one after another; the largest peak of any one of them (KiB)."""
    peaks = []
    for method, ref in zip(METHODS, refs):
        data = str(runs / method / "data")
        peaks.append(_run(process_args(data, ref, "cache"), root))
        upload = ["run", "upload", "--method-metadata", ref, "--cache-root", "cache"]
        peaks.append(_run(upload, root))
        peaks.append(_run([*upload, "--no-dry-run"], root))
    return max(peaks)


def batch(root: Path, jobs: int) -> int:
    return _run(["tabarena", "publish", "plan.toml", "--no-dry-run", "--jobs", str(jobs)], root)


def _children_cpu() -> float:
    """CPU seconds (user + system) of every ended descendant: the commands, their workers, their index workers."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(fn, *args) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds of the side's processes (the S3 server, in this process, not counted), peak bytes."""
    started, cpu = time.perf_counter(), _children_cpu()
    peak = fn(*args)
    return time.perf_counter() - started, _children_cpu() - cpu, peak * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=2)
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1, help="Runs per side, alternating (medians compared).")
    parser.add_argument("--jobs", type=int, default=1, help="The batch's --jobs.")
    args = parser.parse_args()
    from moto.server import ThreadedMotoServer

    import boto3

    from tabarena_checks.synth.generate import generate_run

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    url = "http://{}:{}".format(*server.get_host_and_port())
    client = boto3.client(
        "s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x"
    )
    os.environ.update(
        CHECKS_S3_ENDPOINT_URL=url,
        R2_ACCOUNT_ID="bench",
        R2_ACCESS_KEY_ID="bench-key",
        R2_SECRET_ACCESS_KEY="bench-secret",
        CHECKS_PROGRESS="never",
    )
    times: dict[str, list[float]] = {"loop": [], "batch": []}
    cpus: dict[str, list[float]] = {"loop": [], "batch": []}
    peaks: dict[str, list[int]] = {"loop": [], "batch": []}
    try:
        with tempfile.TemporaryDirectory(prefix="bench-batch-") as tmp:
            tmp_path = Path(tmp)
            os.environ["CHECKS_CACHE_DIR"] = str(tmp_path / "user-cache")
            runs = tmp_path / "runs"
            for method in METHODS:
                generate_run(
                    runs / method,
                    configs=args.configs,
                    folds=args.folds,
                    method=method,
                    name_prefix=f"TA-{method}",
                    ag_key=f"TA-{method.upper()}",
                    validation_protocol="8x1",
                )
            for n in range(args.rounds):
                for side in ("loop", "batch") if n % 2 == 0 else ("batch", "loop"):
                    bucket = f"{side}-{n}"
                    client.create_bucket(Bucket=bucket)
                    root = tmp_path / bucket
                    refs = _side(root, bucket, runs, args.configs)
                    took, cpu, peak = timed(loop, root, runs, refs) if side == "loop" else timed(batch, root, args.jobs)
                    times[side].append(took)
                    cpus[side].append(cpu)
                    peaks[side].append(peak)
                    load = os.getloadavg()[0]
                    print(
                        f"round {n + 1} {side:5}: {took:.1f} s, CPU {cpu:.1f} s, peak PSS {peak / 2**20:.0f} MiB "
                        f"(load average {load:.1f})",
                        flush=True,
                    )
    finally:
        server.stop()
    loop_s, batch_s = statistics.median(times["loop"]), statistics.median(times["batch"])
    loop_peak, batch_peak = max(peaks["loop"]), max(peaks["batch"])
    print(f"{'single commands one after another:':35}{loop_s:.1f} s (peak PSS {loop_peak / 2**20:.0f} MiB)")
    print(f"{f'batch (--jobs {args.jobs}):':35}{batch_s:.1f} s (peak PSS {batch_peak / 2**20:.0f} MiB)")
    loop_cpu, batch_cpu = statistics.median(cpus["loop"]), statistics.median(cpus["batch"])
    print(f"CPU seconds (medians, hardly changed by the machine's load): loop {loop_cpu:.1f}, batch {batch_cpu:.1f}")
    print(
        f"batch / loop: wall time {batch_s / loop_s:.2f}x (target <= 0.75x), CPU {batch_cpu / loop_cpu:.2f}x, "
        f"peak memory {batch_peak / loop_peak:.2f}x (target: 1.0x, processing one method)"
    )


if __name__ == "__main__":
    main()
