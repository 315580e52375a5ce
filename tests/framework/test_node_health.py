"""Node health as real Slurm 22.05 showed it (tests/data/oracle/cli: the ``down`` records and
trials/ping.out, reqnode.out): ping rounds every SlurmdTimeout/3, a silent slurmd flagged
NOT_RESPONDING and later set DOWN "Not responding", ReturnToService 0/1/2 at a node's next
contact, ReqNodeNotAvail for jobs whose required nodes are out of service, and the display of
a node whose only job is suspended."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from plurm.model.node import NodeCondition, after_contact, configured, not_responding_down
from plurm.testing.cluster import TestCluster

#: The trials' cluster: SlurmdTimeout=8 gives a ping every 2 s; MessageTimeout is 10.
CONF = """
SelectType=select/linear
KillWait=2
SlurmdTimeout=8
NodeName=d[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=d[1-4] Default=YES
"""


def conf(return_to_service: int) -> str:
    return CONF + f"ReturnToService={return_to_service}\n"


def state(cluster: TestCluster, name: str) -> str:
    text = cluster.command(f"scontrol show node {name}").stdout
    return text.split("State=", 1)[1].split()[0]


def sinfo(cluster: TestCluster, name: str, fields: str = "%t|%E") -> str:
    """sinfo -N's line for one node (its fields after the name)."""
    lines = cluster.command(f"sinfo -h -N -o '%N|{fields}'").stdout.splitlines()
    return next(line for line in lines if line.startswith(name + "|")).split("|", 1)[1]


def command(cluster: TestCluster, line: str) -> None:
    result = cluster.command(line)
    assert result.status == 0, result.stderr


# ------------------------------------------------------------------------- ReturnToService


def test_contact_revives_as_return_to_service_says() -> None:
    admin = NodeCondition(down=True, reason="maint", since=1.0)
    silent = not_responding_down(None, now=5.0)
    assert (silent.reason, silent.since, silent.unresponsive) == ("Not responding", 5.0, True)
    assert [after_contact(admin, rts) for rts in (0, 1, 2)] == [admin, admin, None]
    assert [after_contact(silent, rts) for rts in (0, 1, 2)] == [silent, None, None]
    # a drain outlives the revival, with its reason
    drained = NodeCondition(down=True, drain=True, reason="dr", since=1.0)
    assert after_contact(drained, 2) == NodeCondition(drain=True, reason="dr", since=1.0)
    # a FAIL node is no DOWN node to bring back, even once it is also not responding
    failed = configured("FAIL", "fan")
    assert failed is not None and (failed.down, failed.failed) == (True, True)
    gone_silent = not_responding_down(failed, now=5.0)
    assert [after_contact(c, rts) for c in (failed, gone_silent) for rts in (1, 2)] == [
        failed,
        failed,
        gone_silent,
        gone_silent,
    ]


def test_not_responding_keeps_an_admins_reason() -> None:
    drained = NodeCondition(drain=True, reason="dr", since=1.0)
    down = not_responding_down(drained, now=9.0)
    assert (down.down, down.drain, down.reason, down.since) == (True, True, "dr", 1.0)


def test_return_to_service_2_revives_an_admin_down_node_at_its_next_ping(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(conf(2))
    cluster.run_until(2.0)
    command(cluster, "scontrol update nodename=d2 state=down reason=maint")
    cluster.run_until(3.9)
    assert state(cluster, "d2") == "DOWN"  # as in records down/038 (at 3.2 s)
    cluster.run_until(4.0)  # the next ping, 8 // 3 = 2 s on
    assert state(cluster, "d2") == "IDLE"
    assert cluster.command("sinfo -R -h").stdout == ""


@pytest.mark.parametrize("return_to_service", [0, 1])
def test_return_to_service_0_and_1_leave_an_admin_down_node_down(
    make_cluster: Callable[..., TestCluster], return_to_service: int
) -> None:
    cluster = make_cluster(conf(return_to_service))
    cluster.run_until(2.0)
    command(cluster, "scontrol update nodename=d2 state=down reason=maint")
    cluster.run_until(60)
    assert sinfo(cluster, "d2") == "down|maint"


@pytest.mark.parametrize("return_to_service", [0, 1, 2])
def test_a_configured_fail_node_stays_out_of_service_whatever_return_to_service_says(
    make_cluster: Callable[..., TestCluster], return_to_service: int
) -> None:
    """ReturnToService is about DOWN nodes; FAIL is an administrator's (sinfo(1)). The
    registration at start-up and every later ping answer apply the same rule."""
    fail = 'DownNodes=d1 State=FAIL Reason="fan"\nDownNodes=d2 State=DOWN Reason=dd\n'
    cluster = make_cluster(conf(return_to_service) + fail)
    revived = "IDLE" if return_to_service == 2 else "DOWN"
    assert (state(cluster, "d1"), state(cluster, "d2")) == ("DOWN", revived)
    command(cluster, "scontrol update nodename=d3 state=drain reason=x")  # pings start
    cluster.run_until(30)
    assert (state(cluster, "d1"), state(cluster, "d2")) == ("DOWN", revived)
    assert sinfo(cluster, "d1") == "down|fan"
    command(cluster, "scontrol update nodename=d1 state=resume")
    assert state(cluster, "d1") == "IDLE"


def test_a_down_node_that_an_answer_revives_keeps_no_ping_armed_after(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(conf(2))
    command(cluster, "scontrol update nodename=d2 state=down reason=maint")
    cluster.simulation.clock.run(limit=1000)
    assert state(cluster, "d2") == "IDLE"
    assert cluster.simulation.clock.next_time() is None  # an idle simulation ends


# ------------------------------------------------------------------------- a silent slurmd


def test_a_silent_slurmd_goes_idle_star_then_down_star(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """Killed at 5 s: the ping at 6 s waits MessageTimeout (10 s) and is taken on the next
    tick, 18 s: NOT_RESPONDING; the next round, ending at 30 s, finds it silent for 8 s
    (SlurmdTimeout): DOWN "Not responding". Real Slurm: 17.3-17.5 s and 30.0-30.1 s."""
    cluster = make_cluster(conf(2))
    cluster.run_until(5.0)
    command(cluster, "slurmd stop d3")
    cluster.run_until(17.9)
    assert state(cluster, "d3") == "IDLE"
    cluster.run_until(18.0)
    assert (state(cluster, "d3"), sinfo(cluster, "d3")) == ("IDLE+NOT_RESPONDING", "idle*|none")
    assert "d3" not in cluster.command("sinfo -R").stdout
    cluster.run_until(29.9)
    assert state(cluster, "d3") == "IDLE+NOT_RESPONDING"
    cluster.run_until(30.0)
    assert state(cluster, "d3") == "DOWN+NOT_RESPONDING"
    assert sinfo(cluster, "d3") == "down*|Not responding"
    shown = cluster.command("scontrol show node d3").stdout
    assert "   Reason=Not responding [root@" in shown
    cluster.run_until(100)
    assert cluster.simulation.clock.next_time() is None  # no more pings: nothing to learn


def test_slurmd_timeout_0_never_tests_nodes(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(CONF.replace("SlurmdTimeout=8", "SlurmdTimeout=0"))
    command(cluster, "slurmd stop d3")
    cluster.run_until(1000)
    assert state(cluster, "d3") == "IDLE"


def test_the_default_slurmd_timeout_pings_every_100_s(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(CONF.replace("SlurmdTimeout=8\n", ""))
    command(cluster, "slurmd stop d3")
    cluster.run_until(199)
    assert state(cluster, "d3") == "IDLE"  # the round at 100 s is taken at 200 s
    cluster.run_until(200)
    assert state(cluster, "d3") == "IDLE+NOT_RESPONDING"
    cluster.run_until(499)
    assert state(cluster, "d3") == "IDLE+NOT_RESPONDING"
    cluster.run_until(500)  # silent 300 s since it was flagged
    assert state(cluster, "d3") == "DOWN+NOT_RESPONDING"


def test_no_job_starts_on_a_not_responding_node_and_its_jobs_die_with_it(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(conf(2))
    command(cluster, "sbatch -w d3 --no-requeue -J onit --wrap='sleep 300'")
    cluster.run_until(5.0)
    command(cluster, "slurmd stop d3")
    cluster.run_until(18.0)
    command(cluster, "sbatch -w d3 -J later --wrap='sleep 300'")
    cluster.run_until(20.0)
    out = cluster.command("squeue -h -t all -o '%i %T %r'").stdout.splitlines()
    assert out == ["2 PENDING ReqNodeNotAvail, UnavailableNodes:d3", "1 RUNNING None"]
    cluster.run_until(30.0)
    out = cluster.command("squeue -h -t all -o '%i %T %r'").stdout.splitlines()
    assert out == ["1 NODE_FAIL NodeDown", "2 PENDING ReqNodeNotAvail, UnavailableNodes:d3"]


def test_a_job_waiting_for_a_not_responding_node_starts_when_its_slurmd_is_back(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """idle* back to idle is a node coming back into service: a pass follows at once, as
    for a node revived from DOWN, rather than at the next periodic pass."""
    cluster = make_cluster(conf(2))
    command(cluster, "slurmd stop d3")
    cluster.run_until(18.0)
    assert sinfo(cluster, "d3") == "idle*|none"
    command(cluster, "sbatch -w d3 -J later --wrap='sleep 300'")
    cluster.run_until(20.0)
    assert cluster.command("squeue -h -o '%T'").stdout == "PENDING\n"
    command(cluster, "slurmd start d3")
    cluster.run_until(22.0)
    assert sinfo(cluster, "d3") == "alloc|none"
    assert cluster.command("squeue -h -o '%T %N'").stdout == "RUNNING d3\n"


@pytest.mark.parametrize(("return_to_service", "after"), [(0, "down"), (1, "idle"), (2, "idle")])
def test_a_restarted_slurmd_registers_at_once(
    make_cluster: Callable[..., TestCluster], return_to_service: int, after: str
) -> None:
    """As in trials/ping.out: back at once with 1 and 2; with 0 down, no longer ``*``."""
    cluster = make_cluster(conf(return_to_service))
    command(cluster, "slurmd stop d4")
    cluster.run_until(40.0)
    assert sinfo(cluster, "d4") == "down*|Not responding"
    command(cluster, "slurmd start d4")
    assert sinfo(cluster, "d4") == f"{after}|{'none' if after == 'idle' else 'Not responding'}"


def test_slurmd_commands_check_their_arguments(make_cluster: Callable[..., TestCluster]) -> None:
    cluster = make_cluster(conf(2))
    assert cluster.command("slurmd stop nosuch").status == 1
    assert cluster.command("slurmd restart d1").status == 2


# ------------------------------------------------------------------------- ReqNodeNotAvail


def test_a_job_whose_required_nodes_are_out_of_service_waits_req_node_not_avail(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """trials/reqnode.out: -w on a down node, on a down and an idle node, on a draining
    node; the reason names the unavailable required nodes only, and such a job holds up
    no other job."""
    cluster = make_cluster(conf(0))
    command(cluster, "sbatch -w d1 -J r1 --wrap='sleep 300'")
    cluster.run_until(2.0)
    command(cluster, "scontrol update nodename=d2 state=down reason=maint")
    command(cluster, "scontrol update nodename=d1 state=drain reason=x")
    command(cluster, "sbatch -w d2 -J w2 --wrap='sleep 300'")
    command(cluster, "sbatch -w d[2-3] -J w23 --wrap='sleep 300'")
    command(cluster, "sbatch -w d1 -J w1 --wrap='sleep 300'")
    command(cluster, "sbatch -J free --wrap='sleep 300'")
    cluster.run_until(3.5)
    out = cluster.command("squeue -h -t all -o '%i %T %R'").stdout.splitlines()
    assert out == [
        "2 PENDING (ReqNodeNotAvail, UnavailableNodes:d2)",
        "3 PENDING (ReqNodeNotAvail, UnavailableNodes:d2)",
        "4 PENDING (ReqNodeNotAvail, UnavailableNodes:d1)",
        "1 RUNNING d1",
        "5 RUNNING d3",
    ]
    assert (
        " Reason=ReqNodeNotAvail,_UnavailableNodes:d2 "
        in cluster.command("scontrol -o show job 3").stdout
    )
    command(cluster, "scontrol update nodename=d2 state=resume")
    cluster.run_until(5.0)
    assert cluster.command("squeue -h -j 2 -o %T").stdout == "RUNNING\n"


def test_too_few_nodes_in_service_for_the_node_count_gets_slurms_long_reason(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(conf(0))
    command(cluster, "scontrol update nodename=d[2-3] state=down reason=maint")
    command(cluster, "sbatch -N 4 --wrap='sleep 300'")
    cluster.run_until(2.0)
    assert cluster.command("squeue -h -o %r").stdout == (
        "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
        "partitions\n"
    )


# ------------------------------------------------------------------------- suspended jobs


def test_a_node_whose_only_job_is_suspended_shows_idle(
    make_cluster: Callable[..., TestCluster],
) -> None:
    """Record linear/193: Slurm shows the node of a lone suspended job idle."""
    cluster = make_cluster(conf(0))
    command(cluster, "sbatch -w d1 --wrap='sleep 300'")
    cluster.run_until(2.0)
    command(cluster, "scontrol suspend 1")
    assert sinfo(cluster, "d1", "%t") == "idle"
    assert "CPUAlloc=0 " in cluster.command("scontrol show node d1").stdout
    command(cluster, "scontrol resume 1")
    assert sinfo(cluster, "d1", "%t") == "alloc"
