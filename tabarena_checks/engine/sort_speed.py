"""Where numpy's fastest sort is its slowest: AVX-512 on AMD Zen 4, and the environment that avoids it.

Every exact ROC AUC score of the HPO simulation sorts its rows, and on the 10,000-file run those
sorts are most of the processing. numpy dispatches ``np.sort`` of 32-bit numbers to its AVX-512
kernel wherever the CPU has AVX-512, and that kernel stores each partition step with a
memory-destination ``vpcompressd``, an instruction Zen 4 (AMD family 25 with AVX-512) runs in
microcode: measured on a Zen 4 EPYC, a row of 6,667 int32 codes takes 90 us there against 30 us
on the same CPU with AVX-512 dispatch turned off (and 8 us on an Intel CPU's AVX-512). Zen 5
(family 26) runs it in hardware. numpy reads which kernels it may use only when it is imported,
from ``NPY_DISABLE_CPU_FEATURES``, so the cure is a worker process started with that variable.

Only the AUC's work may move there: its arithmetic (float32 sums, clamps, integer codes and
counts) gives the same bits with or without AVX-512, while numpy's float64 ``log`` does not
(the log-loss splits keep the main process's kernels, as TabArena's own processing has them).
"""

from __future__ import annotations

import sys
from pathlib import Path

#: numpy's environment variable naming the CPU features its dispatch must not use
VARIABLE = "NPY_DISABLE_CPU_FEATURES"


def slow_compress_store(cpuinfo: str) -> bool:
    """Whether the CPU ``cpuinfo`` (the text of /proc/cpuinfo) describes is a Zen 4 with AVX-512."""
    fields: dict[str, str] = {}
    for line in cpuinfo.splitlines():
        if not line.strip():
            break  # the first processor's block says it for all of them
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    return (fields.get("vendor_id") == "AuthenticAMD" and fields.get("cpu family") == "25"
            and "avx512f" in fields.get("flags", "").split())


def avx512_targets() -> list[str]:
    """numpy's dispatch targets of the AVX-512 level, by this numpy's names (empty where numpy cannot say)."""
    import numpy as np

    try:
        simd = np.show_config(mode="dicts")["SIMD Extensions"]
    except (TypeError, KeyError):  # a numpy without the structured form of its build record
        return []
    names = list(simd.get("found", [])) + list(simd.get("not found", []))
    return [n for n in names if n.startswith("AVX512") or n == "X86_V4"]


def sorting_environment(cpuinfo: Path = Path("/proc/cpuinfo")) -> dict[str, str] | None:
    """The environment variables a worker needs to sort without numpy's AVX-512 kernel on this CPU, or None
    where that kernel is not the slow one (or this platform or numpy cannot tell)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    targets = avx512_targets() if slow_compress_store(text) else []
    return {VARIABLE: " ".join(targets)} if targets else None
