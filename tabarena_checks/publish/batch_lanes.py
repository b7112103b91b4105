"""How many lanes a batch runs when ``--jobs`` is not given: what the machine allows.

A lane is a worker process running one step at a time. Processing already decodes a method's
results in two processes of its own, so a second lane only pays where cores sit idle: one lane per
two usable CPUs. Each lane holds an interpreter with a method's processing in it, so there are
never more lanes than the available memory holds at :data:`LANE_BYTES` each. A figure the machine
does not give (no ``/proc/meminfo``, no CPU count) counts as one lane: unknown means the frugal
choice. On a 2-core machine this is one lane, whatever its memory (benchmarks/README.md, "Batch
publishing", measured a second lane there slower and twice the memory); on a larger one a method's
uploads overlap the next method's processing.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

#: the memory one lane is given: a worker interpreter's peak while processing, with room for a real
#: method's larger tables (benchmarks/README.md, "Batch publishing", measured 250-490 MiB on generated ones)
LANE_BYTES = 1024**3
#: usable CPUs per lane: processing keeps two busy on its own
CPUS_PER_LANE = 2
#: ``--jobs``' upper bound
MAX_LANES = 64
MEMINFO = Path("/proc/meminfo")


@attrs.frozen
class Machine:
    """What the machine offers a batch: usable CPUs and available memory in bytes (None: not known)."""

    cpus: int | None
    available: int | None

    def lanes(self) -> int:
        """``max(1, min(cpus // 2, available // LANE_BYTES))``, capped at :data:`MAX_LANES`; 1 when a figure
        is unknown."""
        if not self.cpus or self.available is None:
            return 1
        return max(1, min(self.cpus // CPUS_PER_LANE, self.available // LANE_BYTES, MAX_LANES))

    def says(self) -> str:
        """The figures the default was derived from, in words."""
        cpus = "unknown CPUs" if not self.cpus else f"{self.cpus} usable CPU{'s' if self.cpus != 1 else ''}"
        memory = "unknown memory" if self.available is None else f"{self.available / 1024**3:.1f} GiB available"
        return f"{cpus}, {memory}"


def usable_cpus() -> int | None:
    """The CPUs this process may run on (its affinity, which a container or ``taskset`` narrows), else all."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on every platform
        return os.cpu_count()


def available_memory(meminfo: Path = MEMINFO) -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes: what can be used without swapping; None when unknown."""
    try:
        text = meminfo.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name == "MemAvailable":
            amount, _, unit = value.strip().partition(" ")
            if amount.isdigit() and unit in ("kB", ""):
                return int(amount) * (1024 if unit == "kB" else 1)
            return None
    return None


def machine() -> Machine:
    return Machine(usable_cpus(), available_memory())
