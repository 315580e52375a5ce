"""Live mode's sprio and sshare: the console scripts ask plurmctld for the priority plugin's
report (RPC ``priorities``) and print what a simulation prints; the usage priority/multifactor
charges survives a killed plurmctld."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm.live.ctld import PRIORITY_STATE
from plurm.live.store import StateStore
from tests.live.conftest import LiveCluster, make_cluster
from tests.live.test_faults import _kill9

pytestmark = pytest.mark.live


def test_sprio_and_sshare_show_a_live_clusters_fair_share(tmp_path: Path) -> None:
    cluster = make_cluster(
        tmp_path,
        nodes=2,
        cpus=2,
        extra=(
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            "PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\n"
            "PriorityWeightAge=100"
        ),
    )
    (tmp_path / "accounts.conf").write_text("Account=phys\nUser=root Account=phys\n")
    cluster.up()
    try:
        blocker = cluster.sbatch("-n4", "-A", "phys", "--wrap=sleep 60")
        cluster.wait_for(lambda: cluster.state(blocker) == "RUNNING", what="the blocker runs")
        waiting = cluster.sbatch("-n4", "-A", "phys", "--wrap=sleep 1")
        sprio = cluster.run("sprio", "-l").stdout.splitlines()
        assert sprio[0].split()[:4] == ["JOBID", "PARTITION", "USER", "PRIORITY"]
        row = next(line.split() for line in sprio[1:] if line.split()[0] == str(waiting))
        assert row[1:3] == ["debug", "root"]
        assert int(row[3]) >= 1
        weights = cluster.run("sprio", "-w").stdout.splitlines()[1].split()
        assert weights == ["Weights", "1", "100", "1000"]
        shares = cluster.run("sshare", "-a", "-P", "-o", "Account,User,RawShares").stdout
        assert shares.splitlines() == [
            "Account|User|RawShares",
            "root||",
            " root|root|1",
            " phys||1",
            "  phys|root|1",
        ]
        cluster.run("scancel", str(blocker), str(waiting))
    finally:
        cluster.down()


def _saved_usage(cluster: LiveCluster) -> float:
    """phys's usage as plurmctld last saved it (0 before it saved any)."""
    database = cluster.root / "state" / "plurmctld.sqlite"
    if not database.exists():
        return 0.0
    with StateStore(database, readonly=True) as store:
        state = store.load_value(PRIORITY_STATE) or {}
    return sum(row[2] for row in state.get("usage", []) if row[:2] == ["phys", None])


def test_usage_is_kept_across_a_killed_plurmctlds_restart(tmp_path: Path) -> None:
    cluster = make_cluster(
        tmp_path,
        nodes=1,
        cpus=2,
        extra=(
            "AccountingStorageType=accounting_storage/slurmdbd\n"
            "PriorityType=priority/multifactor\nPriorityWeightFairshare=1000\n"
            "PriorityDecayHalfLife=365-0"  # (a year: usage decays by a millionth a minute)
        ),
    )
    (tmp_path / "accounts.conf").write_text("Account=phys\nUser=root Account=phys\n")

    def raw_usage() -> int:
        out = cluster.run("sshare", "-A", "phys", "-P", "-n", "-o", "Account,RawUsage").stdout
        return int(next(line for line in out.splitlines() if line == line.lstrip()).split("|")[1])

    try:
        cluster.up()
        job = cluster.sbatch("-A", "phys", "--wrap=sleep 2")
        cluster.wait_for(lambda: cluster.state(job) == "COMPLETED", what="the job completes")
        before = raw_usage()
        assert before >= 4  # two seconds on the node's two CPUs
        cluster.wait_for(lambda: _saved_usage(cluster) > 0, what="plurmctld saves the usage")
        _kill9(cluster, "plurmctld")
        started = cluster.run("plurm", "cluster", "up", check=False)
        assert started.returncode == 0, started.stderr
        # kept (a restart without it starts from 0), less what decayed meanwhile
        assert before * 0.99 <= raw_usage() <= before
    finally:
        cluster.down()
