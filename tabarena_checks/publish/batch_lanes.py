"""How many lanes a batch runs when ``--jobs`` is not given: what the machine allows.

A lane runs one step at a time, each in a process of its own. Processing already decodes a method's
results in two processes of its own, so a second lane only pays where cores sit idle: one lane per
two usable CPUs. Each lane holds a step with a method's processing in it, so there are
never more lanes than the available memory holds at :data:`LANE_BYTES` each. A figure the machine
does not give (no ``/proc/meminfo``, no CPU count, a cgroup file it cannot read) counts as one lane:
unknown means the frugal choice. A container's limits count as the machine: the CPU quota and the
memory limit of the cgroup at ``/sys/fs/cgroup`` (v2 or v1), where they are lower than the host's.
On a 2-core machine this is one lane, whatever its memory (benchmarks/README.md, "Batch publishing",
measured a second lane there slower and twice the memory); on a larger one a method's uploads
overlap the next method's processing.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

#: the memory one lane is given: a step's peak while processing, with room for a real
#: method's larger tables (benchmarks/README.md, "Batch publishing", measured 250-490 MiB on generated ones)
LANE_BYTES = 1024**3
#: usable CPUs per lane: processing keeps two busy on its own
CPUS_PER_LANE = 2
#: ``--jobs``' upper bound
MAX_LANES = 64
MEMINFO = Path("/proc/meminfo")
#: where a container sees its own cgroup (cgroup namespaces mount it at the root)
CGROUP = Path("/sys/fs/cgroup")
#: a v1 memory limit at or above this is the kernel's "no limit" (a page-rounded LONG_MAX)
NO_V1_LIMIT = 1 << 60


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


def _cgroup_file(path: Path) -> str | None:
    """The stripped text of a cgroup file; None when there is none (no cgroup there: no limit)."""
    try:
        return path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        return None


def _number(text: str, path: Path) -> int:
    if not text.lstrip("-").isdigit():
        raise ValueError(f"{path}: {text!r} is not a number")
    return int(text)


def cgroup_cpus(root: Path = CGROUP) -> int | None:
    """The whole CPUs the cgroup's quota allows (at least 1); None when it sets no quota.

    v2 writes ``cpu.max`` as ``QUOTA PERIOD`` or ``max PERIOD``; v1 ``cpu/cpu.cfs_quota_us`` (-1: none) and
    ``cpu/cpu.cfs_period_us``. Raises ValueError (or OSError) on a file it cannot read.
    """
    v2 = _cgroup_file(root / "cpu.max")
    if v2 is not None:
        quota, _, period = v2.partition(" ")
        if quota == "max":
            return None
        return max(1, _number(quota, root / "cpu.max") // _number(period, root / "cpu.max"))
    quota_path, period_path = root / "cpu" / "cpu.cfs_quota_us", root / "cpu" / "cpu.cfs_period_us"
    quota, period = _cgroup_file(quota_path), _cgroup_file(period_path)
    if quota is None or period is None or _number(quota, quota_path) < 0:
        return None
    return max(1, _number(quota, quota_path) // _number(period, period_path))


def cgroup_memory(root: Path = CGROUP) -> int | None:
    """What the cgroup's memory limit leaves (the limit less what its processes use); None when it sets no limit.

    v2: ``memory.max`` (``max``: none) and ``memory.current``; v1: ``memory/memory.limit_in_bytes`` (a huge
    value: none) and ``memory/memory.usage_in_bytes``. Raises ValueError (or OSError) on a file it cannot read.
    """
    limit_path, used_path = root / "memory.max", root / "memory.current"
    limit = _cgroup_file(limit_path)
    if limit is None:
        limit_path, used_path = root / "memory" / "memory.limit_in_bytes", root / "memory" / "memory.usage_in_bytes"
        limit = _cgroup_file(limit_path)
        if limit is not None and _number(limit, limit_path) >= NO_V1_LIMIT:
            return None
    if limit is None or limit == "max":
        return None
    used = _cgroup_file(used_path)
    return max(0, _number(limit, limit_path) - (0 if used is None else _number(used, used_path)))


def _lower(host: int | None, limit: int | None) -> int | None:
    return host if limit is None or host is None else min(host, limit)


def machine(cgroup: Path = CGROUP) -> Machine:
    """The host's usable CPUs and available memory, each lowered by the cgroup's limit where it sets one."""
    cpus, available = usable_cpus(), available_memory()
    try:
        cpus = _lower(cpus, cgroup_cpus(cgroup))
    except (OSError, ValueError):
        cpus = None
    try:
        available = _lower(available, cgroup_memory(cgroup))
    except (OSError, ValueError):
        available = None
    return Machine(cpus, available)
