"""The plurm console script: conf check and hostlist, as a user runs them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.support.cli import plurm

CONF = REPO / "conf"


def test_hostlist_expand_prints_one_host_per_line() -> None:
    result = plurm("hostlist", "expand", "n[08-10],m1")
    assert (result.returncode, result.stdout, result.stderr) == (0, "n08\nn09\nn10\nm1\n", "")


def test_hostlist_compress_prints_the_ranged_form() -> None:
    result = plurm("hostlist", "compress", "n1,n2,n3,m7")
    assert (result.returncode, result.stdout) == (0, "n[1-3],m7\n")


def test_hostlist_error_exits_1_with_a_message() -> None:
    result = plurm("hostlist", "expand", "n[3-1]")
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == "plurm: error: Invalid hostlist: n[3-1] (invalid range '3-1')\n"


@pytest.mark.parametrize("example", sorted(CONF.glob("*/slurm.conf")), ids=lambda p: p.parent.name)
def test_conf_check_prints_the_shipped_examples(example: Path) -> None:
    result = plurm("conf", "check", str(example))
    assert result.returncode == 0, result.stderr
    assert "ClusterName=" in result.stdout and "# Partitions:" in result.stdout


def test_conf_check_prints_effective_values(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(
        "ClusterName=demo\nSlurmctldHost=head\nPreemptType=preempt/partition_prio\n"
        "PreemptMode=SUSPEND,GANG\nNodeName=n[1-4] Sockets=2 CoresPerSocket=4\n"
        "PartitionName=low Nodes=ALL PriorityTier=1 OverSubscribe=FORCE:1 Default=YES\n"
        "PartitionName=high Nodes=n[1-2] PriorityTier=2 PreemptMode=OFF\n"
        "SlurmctldTimeout=300\n"
    )
    result = plurm("conf", "check", str(path))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "PreemptMode=GANG,SUSPEND" in lines
    node = next(line for line in lines if line.startswith("NodeName="))
    assert node.startswith("NodeName=n[1-4] CPUs=8 Boards=1 Sockets=2 CoresPerSocket=4")
    low = next(line for line in lines if line.startswith("PartitionName=low"))
    assert (
        "Default=YES" in low
        and "OverSubscribe=FORCE:1" in low
        and "PreemptMode=GANG,SUSPEND" in low
    )
    high = next(line for line in lines if line.startswith("PartitionName=high"))
    assert "Nodes=n[1-2]" in high and "PreemptMode=OFF" in high and "PriorityTier=2" in high
    assert "#   SlurmctldTimeout=300" in lines
    assert any(line.startswith("QOS=normal") for line in lines)


def test_conf_check_reports_errors_with_positions_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=demo\nSlurmctldHost=head\nNodeName=n1 CPUs=four\nFoo=1\n")
    result = plurm("conf", "check", str(path))
    assert result.returncode == 1
    assert result.stdout == ""
    assert f"{path}:3:18: CPUs=four:" in result.stderr
    assert f"{path}:4:1: unrecognized key 'Foo'" in result.stderr
    assert "2 error(s)" in result.stderr


def test_conf_check_uses_slurm_conf_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=envy\nSlurmctldHost=head\n")
    result = plurm("conf", "check", env={"SLURM_CONF": str(path), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0, result.stderr
    assert "ClusterName=envy" in result.stdout


def test_conf_check_names_a_plugin_no_distribution_provides(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(
        "ClusterName=c\nSlurmctldHost=h\nSelectType=select/nosuch\n"
        "JobAcctGatherType=jobacct_gather/linux\nNodeName=n1\nPartitionName=p Nodes=ALL\n"
    )
    result = plurm("conf", "check", str(path))
    assert result.returncode == 1
    assert "select/nosuch: no such plugin is installed" in result.stderr
    assert "jobacct_gather/linux" not in result.stderr  # loads, as a no-op
