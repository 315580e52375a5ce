"""Live mode's sprio and sshare: the console scripts ask plurmctld for the priority plugin's
report (RPC ``priorities``) and print what a simulation prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.live.conftest import make_cluster

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
