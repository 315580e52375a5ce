"""jobacct_gather/cgroup: finding cgroup v2 and the v1 memory hierarchy, reading flat keyed
files, and its probe of this machine (a cgroup per job where the memory controller can be
had, in v2 or else v1; each reason where not)."""

from __future__ import annotations

from pathlib import Path

from plurm_jobacct_gather_cgroup import (
    CgroupTree,
    cgroup2_mount,
    memory_v1_mount,
    own_cgroup,
    parse_flat,
)

MOUNTINFO = """\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw
"""

#: A hybrid layout (this project's CI machine has one): the memory controller in v1.
HYBRID = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""

CPU_STAT = """\
usage_usec 2500000
user_usec 2000000
system_usec 500000
nr_periods 0
"""


def test_cgroup2_mount_from_mountinfo() -> None:
    assert cgroup2_mount(MOUNTINFO) == Path("/sys/fs/cgroup")
    assert cgroup2_mount(MOUNTINFO.splitlines()[0]) is None


def test_memory_v1_mount_from_mountinfo() -> None:
    assert memory_v1_mount(HYBRID) == (Path("/sys/fs/cgroup/memory"), "/")
    assert cgroup2_mount(HYBRID) == Path("/sys/fs/cgroup/unified")
    assert memory_v1_mount(MOUNTINFO) is None
    nested = "40 31 0:32 /sub /mnt/mem rw - cgroup cgroup rw,nosuid,memory,other\n"
    assert memory_v1_mount(nested) == (Path("/mnt/mem"), "/sub")


def test_no_hierarchy_gives_both_reasons() -> None:
    found = CgroupTree.probe("none", mountinfo=MOUNTINFO.splitlines()[0])
    assert found == (
        "cgroup v2: no hierarchy is mounted; "
        "cgroup v1: no hierarchy with the memory controller is mounted"
    )


def test_flat_keyed_files() -> None:
    assert parse_flat(CPU_STAT) == {
        "usage_usec": 2500000,
        "user_usec": 2000000,
        "system_usec": 500000,
        "nr_periods": 0,
    }
    assert parse_flat("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")["oom_kill"] == 1
    v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"  # memory.oom_control
    assert parse_flat(v1)["oom_kill"] == 2
    assert parse_flat("garbage\n") == {}


def test_the_probe_answers_what_this_machine_allows() -> None:
    """In v2 where the memory controller can be had; else in the v1 memory hierarchy;
    else each reason, and nothing left behind."""
    found = CgroupTree.probe("probe-unit")
    if isinstance(found, str):
        assert found.startswith("cgroup v2: ") and "; cgroup v1: " in found
        for mount in (cgroup2_mount(), (memory_v1_mount() or (None,))[0]):
            assert mount is None or not list(mount.rglob("plurm_probe-unit"))
        return
    try:
        assert found.base.name == "plurm_probe-unit"
        assert found.job(7) == found.base / "job_7"
        if found.version == 2:
            assert found.base.parent == cgroup2_mount() / own_cgroup().lstrip("/")
            assert "memory" in (found.base / "cgroup.controllers").read_text().split()
        else:
            mounted = memory_v1_mount()
            assert mounted is not None and found.base.is_relative_to(mounted[0])
            assert (found.base / found.limit_file).exists()
            assert found.limit_file == "memory.limit_in_bytes"
    finally:
        found.base.rmdir()
