"""``checks tabarena publish``'s default ``--jobs``: the lanes derived from the machine's CPUs and available
memory (``tabarena_checks/publish/batch_lanes.py``), on injected figures, and the number the batch says it chose."""

from __future__ import annotations

import json

import pytest

from checks.testing import run_cli
from tabarena_checks.publish import batch_lanes
from tabarena_checks.publish.batch_lanes import Machine

GIB = 1024**3


@pytest.mark.parametrize(
    "cpus, available, lanes",
    [
        (2, 23 * GIB, 1),  # this project's 2-core VM: processing keeps both cores busy already
        (1, 64 * GIB, 1),
        (3, 64 * GIB, 1),
        (4, 64 * GIB, 2),
        (8, 16 * GIB, 4),
        (8, int(2.5 * GIB), 2),  # memory, not CPUs, decides
        (32, 3 * GIB, 3),
        (16, GIB // 2, 1),  # less than one lane's memory: still one lane
        (512, 4096 * GIB, batch_lanes.MAX_LANES),
        (None, 64 * GIB, 1),  # a figure the machine does not give: one lane
        (8, None, 1),
        (0, 64 * GIB, 1),
    ],
)
def test_the_lanes_are_one_per_two_cpus_and_per_gib_available_at_least_one(cpus, available, lanes):
    assert Machine(cpus, available).lanes() == lanes


MEMINFO = "MemTotal:       24683784 kB\nMemFree:        19784576 kB\nMemAvailable:   23890560 kB\nBuffers: 1 kB\n"


@pytest.mark.parametrize(
    "text, available",
    [
        (MEMINFO, 23890560 * 1024),
        ("MemTotal:       24683784 kB\nMemFree:        19784576 kB\n", None),  # kernels before 3.14
        ("MemAvailable:   lots kB\n", None),
        ("MemAvailable:   12 MB\n", None),  # a unit /proc/meminfo never writes: not guessed
    ],
)
def test_available_memory_is_memavailable_of_proc_meminfo(tmp_path, text, available):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text(text)
    assert batch_lanes.available_memory(meminfo) == available


def test_without_proc_meminfo_the_memory_is_unknown(tmp_path):
    assert batch_lanes.available_memory(tmp_path / "absent") is None


def test_the_usable_cpus_are_the_affinity_not_every_cpu(monkeypatch):
    monkeypatch.setattr(batch_lanes.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    monkeypatch.setattr(batch_lanes.os, "cpu_count", lambda: 64)
    assert batch_lanes.usable_cpus() == 3
    monkeypatch.delattr(batch_lanes.os, "sched_getaffinity", raising=False)  # a platform without it
    assert batch_lanes.usable_cpus() == 64


def _cgroup(root, files: dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text + "\n")
    return root


@pytest.mark.parametrize(
    "files, cpus, memory",
    [
        ({}, None, None),  # no cgroup file system: no limit
        ({"cpu.max": "max 100000", "memory.max": "max", "memory.current": "5"}, None, None),  # v2, unlimited
        ({"cpu.max": "250000 100000", "memory.max": str(3 * GIB), "memory.current": str(GIB)}, 2, 2 * GIB),
        ({"cpu.max": "50000 100000"}, 1, None),  # half a CPU is still one lane's worth
        ({"memory.max": str(GIB), "memory.current": str(2 * GIB)}, None, 0),  # over its limit: nothing left
        (
            {
                "cpu/cpu.cfs_quota_us": "-1",
                "cpu/cpu.cfs_period_us": "100000",
                "memory/memory.limit_in_bytes": "9223372036854771712",
                "memory/memory.usage_in_bytes": "123",
            },
            None,
            None,
        ),  # v1 as this project's VM has it: no quota, the kernel's "no limit"
        (
            {
                "cpu/cpu.cfs_quota_us": "400000",
                "cpu/cpu.cfs_period_us": "100000",
                "memory/memory.limit_in_bytes": str(8 * GIB),
                "memory/memory.usage_in_bytes": str(3 * GIB),
            },
            4,
            5 * GIB,
        ),
    ],
)
def test_a_cgroups_cpu_quota_and_memory_limit_are_read_in_v1_and_v2(tmp_path, files, cpus, memory):
    root = _cgroup(tmp_path, files)
    assert batch_lanes.cgroup_cpus(root) == cpus
    assert batch_lanes.cgroup_memory(root) == memory


def test_a_containers_limits_lower_the_lanes_and_an_unreadable_one_means_one_lane(tmp_path, monkeypatch):
    monkeypatch.setattr(batch_lanes, "usable_cpus", lambda: 16)
    monkeypatch.setattr(batch_lanes, "available_memory", lambda: 64 * GIB)
    assert batch_lanes.machine(tmp_path / "none").lanes() == 8  # the host's figures
    limited = _cgroup(tmp_path / "v2", {"cpu.max": "400000 100000", "memory.max": str(8 * GIB)})
    assert batch_lanes.machine(limited) == Machine(4, 8 * GIB)
    assert batch_lanes.machine(limited).lanes() == 2
    garbled = _cgroup(tmp_path / "garbled", {"cpu.max": "lots 100000", "memory.max": "plenty"})
    assert batch_lanes.machine(garbled) == Machine(None, None)
    assert batch_lanes.machine(garbled).lanes() == 1


def _upload_only_plan(tmp_path):
    """A plan whose one method is never processed: its upload is refused without running a step."""
    (tmp_path / "data").mkdir()
    (tmp_path / "info.py").write_text(
        "from tabarena.models import MethodMetadata\n\n"
        'm = MethodMetadata.config(method="Nori", suite="nori-2026", ag_key="TA-NORI", can_hpo=False, is_bag=True, '
        'compute="cpu", verified=False, cache_kwargs={"bucket": "tabarena", "prefix": "cache"})\n'
    )
    (tmp_path / "plan.toml").write_text(
        'cache_root = "cache"\nsteps = ["upload"]\n\n[[methods]]\ndata = "data"\nmethod_metadata = "info.py:m"\n'
    )


def test_without_jobs_the_batch_runs_the_lanes_the_machine_allows_and_says_so(tmp_path, monkeypatch):
    _upload_only_plan(tmp_path)
    monkeypatch.setattr(batch_lanes, "machine", lambda: Machine(8, 16 * GIB))
    result = run_cli(["tabarena", "publish", "plan.toml", "--format", "json"], cwd=tmp_path)
    assert result.exit_code == 1, result.stdout + result.stderr  # the upload is blocked: nothing was processed
    assert json.loads(result.stdout)["jobs"] == 4
    first = result.stderr.splitlines()[0]
    assert first == "--jobs 4: what this machine allows (8 usable CPUs, 16.0 GiB available); --jobs N chooses"

    result = run_cli(["tabarena", "publish", "plan.toml", "--format", "json", "--jobs", "2"], cwd=tmp_path)
    assert json.loads(result.stdout)["jobs"] == 2
    assert "what this machine allows" not in result.stderr
