"""jobacct_gather/cgroup: finding cgroup v2, reading its flat keyed files, and its probe of
this machine (a cgroup per job where the memory controller can be had, a reason where not)."""

from __future__ import annotations

from pathlib import Path

from plurm_jobacct_gather_cgroup import CgroupTree, cgroup2_mount, own_cgroup, parse_flat

MOUNTINFO = """\
24 30 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw
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


def test_flat_keyed_files() -> None:
    assert parse_flat(CPU_STAT) == {
        "usage_usec": 2500000,
        "user_usec": 2000000,
        "system_usec": 500000,
        "nr_periods": 0,
    }
    assert parse_flat("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")["oom_kill"] == 1
    assert parse_flat("garbage\n") == {}


def test_the_probe_answers_what_this_machine_allows() -> None:
    mount = cgroup2_mount()
    found = CgroupTree.probe("probe-unit")
    if mount is None:
        assert found == "no cgroup v2 hierarchy is mounted"
        return
    parent = mount / own_cgroup().lstrip("/")
    if isinstance(found, CgroupTree):
        try:
            assert found.base == parent / "plurm_probe-unit"
            assert "memory" in (found.base / "cgroup.controllers").read_text().split()
            assert found.job(7) == found.base / "job_7"
        finally:
            found.base.rmdir()
    else:
        # a reason, and nothing left behind
        assert "memory controller" in found or "cannot make" in found
        assert not (parent / "plurm_probe-unit").exists()
