"""``scontrol explain JOBID [--json]`` in simulation sessions: a pending job's reason, the
jobs in its way and its expected start; every candidate of a preemption and why each was
taken or not (exempt, guard veto, not needed after the trim, taken); a victim's preemptor;
the JSON form; an unknown job id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from plurm.cli.main import main
from plurm.commands.timefmt import clock_time
from plurm.model.job import JobState
from plurm.testing import JobBuilder, TestCluster
from tests.framework.test_preempt_ladder import CONF as LADDER_CONF
from tests.framework.test_preempt_ladder import ladder_policy

pytest.importorskip("plurm_select_cons_res")

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

ONE_NODE = "NodeName=n1 CPUs=1\nPartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE\n"

#: n1 (4 cores) and n2 (3 cores) under select/cons_res by core; low jobs may be preempted
#: by high ones, by requeue; a job preempted once is spared (max_job_preempt=1), a job that
#: started less than a minute ago is exempt, and victims are chosen fewest first.
PREEMPT = (
    "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
    "PreemptExemptTime=00:01:00\nPreemptParameters=max_job_preempt=1,victims=fewest\n"
    "NodeName=n1 CPUs=4\nNodeName=n2 CPUs=3\n"
    "PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE\n"
    "PartitionName=high Nodes=ALL PriorityTier=2 MaxTime=INFINITE\n"
)


def _json(cluster: TestCluster, job_id: int) -> dict[str, Any]:
    result = cluster.command(f"scontrol explain {job_id} --json")
    assert result.status == 0, result.stderr
    answer = json.loads(result.stdout)
    assert isinstance(answer, dict)
    return answer


def test_a_pending_job_behind_a_running_one(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(ONE_NODE)
    first = cluster.submit(job().time(10).runtime(1000))
    cluster.settle()
    second = cluster.submit(job().time(5).runtime(100))
    cluster.settle()
    assert cluster.state(second) is JobState.PENDING
    end = cluster.job(first).start_time + 600  # type: ignore[operator]
    result = cluster.command(f"scontrol explain {second}")
    assert result.status == 0
    assert result.stdout == (
        f"JobId={second} JobState=PENDING Reason=Resources\n"
        f"   ExpectedStart={clock_time(end)}\n"
        f"   Waits for JobId={first} (RUNNING on n1, ends by {clock_time(end)})\n"
    )
    answer = _json(cluster, second)
    assert answer["reason"] == "Resources"
    assert answer["expected_start"] == end
    assert [o["job_id"] for o in answer["in_the_way"]] == [first]
    assert answer["preemption"] is None and answer["preempted_by"] is None


def test_an_unknown_job_id_is_refused_as_slurm_does(make_cluster: Make) -> None:
    cluster = make_cluster(ONE_NODE)
    result = cluster.command("scontrol explain 4242")
    assert result.status == 1
    assert result.stdout == ""
    assert result.stderr == "slurm_load_jobs error: Invalid job id specified\n"
    assert cluster.command("scontrol explain abc").status == 1


def _preempted(make_cluster: Make, job: Job) -> tuple[TestCluster, dict[str, int]]:
    """guarded (n2, 2 cores) is requeued once for a short high job and runs again; x, y
    (1 core each) and z (2 cores) fill n1; young (n2, 1 core) starts 10 s before a 3-core
    high job. Select names x, y and z (removing x and y frees too few cores); the victim
    search (fewest) drops y (x and z free 3); guarded is vetoed (preempted once); young is
    exempt."""
    cluster = make_cluster(PREEMPT)
    ids = {"guarded": cluster.submit(job().nodelist("n2").tasks(2).runtime(100_000))}
    for name, cores in (("x", 1), ("y", 1), ("z", 2)):
        ids[name] = cluster.submit(job().nodelist("n1").tasks(cores).runtime(100_000))
    cluster.run_until(100)
    first = cluster.submit(job().partition("high").nodelist("n2").tasks(2).runtime(50))
    cluster.run_until(400)
    assert cluster.job(ids["guarded"]).preempted_by == first
    assert cluster.state(ids["guarded"]) is JobState.RUNNING
    assert cluster.job(ids["guarded"]).preemptions == 1
    ids["young"] = cluster.submit(job().nodelist("n2").tasks(1).runtime(100_000))
    cluster.run_until(410)
    ids["high"] = cluster.submit(job().partition("high").nodes(1).tasks(3).runtime(100))
    cluster.run_until(411)
    ids["at"] = int(cluster.now)
    cluster.settle()
    assert cluster.state(ids["high"]) is JobState.RUNNING
    return cluster, ids


def test_every_candidate_of_a_preemption_with_its_reason(make_cluster: Make, job: Job) -> None:
    cluster, ids = _preempted(make_cluster, job)
    high, young = ids["high"], ids["young"]
    exempt_end = cluster.job(young).start_time + 60  # type: ignore[operator]
    result = cluster.command(f"scontrol explain {high}")
    assert result.status == 0
    head, *rows = result.stdout.splitlines()
    assert head == f"JobId={high} JobState=RUNNING Reason=None"
    assert rows[0] == f"   Preemption decision at {clock_time(ids['at'])}; candidates considered:"
    assert sorted(rows[1:]) == sorted(
        [
            f"   JobId={ids['x']} taken",
            f"   JobId={ids['z']} taken",
            f"   JobId={ids['y']} not taken: not chosen by the victim search",
            f"   JobId={ids['guarded']} not taken: guard veto (preempt/max_job_preempt)",
            f"   JobId={young} not taken: exempt until {clock_time(exempt_end)} "
            "(PreemptExemptTime)",
        ]
    )
    answer = _json(cluster, high)
    statuses = {row["job_id"]: row for row in answer["preemption"]["candidates"]}
    assert statuses[ids["x"]]["status"] == "taken"
    assert statuses[ids["y"]]["status"] == "not_chosen_by_search"
    assert statuses[ids["guarded"]] == {
        "job_id": ids["guarded"],
        "status": "guard_veto",
        "guards": ["preempt/max_job_preempt"],
    }
    assert statuses[young] == {"job_id": young, "status": "exempt", "until": exempt_end}
    assert answer["preemption"]["time"] == ids["at"]


def test_a_victim_names_its_preemptor(make_cluster: Make, job: Job) -> None:
    cluster, ids = _preempted(make_cluster, job)
    victim = ids["x"]
    assert cluster.state(victim) is JobState.PENDING  # requeued
    result = cluster.command(f"scontrol explain {victim}")
    assert result.status == 0
    assert result.stdout.endswith(
        f"   Preempted by JobId={ids['high']} at {clock_time(ids['at'])}\n"
    )
    answer = _json(cluster, victim)
    assert answer["preempted_by"] == {"job_id": ids["high"], "time": ids["at"]}
    spared = _json(cluster, ids["y"])
    assert spared["preempted_by"] is None and spared["state"] == "RUNNING"


def test_a_victim_the_trim_dropped(make_cluster: Make, job: Job) -> None:
    """The core's trim (a policy answering ``preempt_trim_victims``; the ladder test
    policy): select names x, y and z, and the trim, last chosen first, drops y."""
    cluster = make_cluster(
        LADDER_CONF.format(nodes=1)
        .replace("select/linear", "select/cons_res\nSelectTypeParameters=CR_Core")
        .replace("CPUs=1", "CPUs=4"),
        plugins={"preempt/ladder": ladder_policy(trim=True)},
    )
    x, y, z = (cluster.submit(job().name("R").tasks(n).runtime(1000)) for n in (1, 1, 2))
    cluster.run_until(100)
    high = cluster.submit(job().partition("high").tasks(3).runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    rows = {
        row["job_id"]: row["status"] for row in _json(cluster, high)["preemption"]["candidates"]
    }
    assert rows == {x: "taken", y: "not_needed_after_trim", z: "taken"}
    text = cluster.command(f"scontrol explain {high}").stdout
    assert f"   JobId={y} not taken: not needed after the trim\n" in text


TRACE_CONF = (
    "ClusterName=t\nSlurmctldHost=h\nSelectType=select/linear\n"
    "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
    "NodeName=n[1-2] CPUs=1 RealMemory=1000\n"
    "PartitionName=batch Nodes=ALL Default=YES PriorityTier=1\n"
    "PartitionName=urgent Nodes=ALL PriorityTier=2\n"
)
# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think: job 3 (partition 2: urgent) preempts the 2-node job 1.
TRACE = """; MaxProcs: 2
1 0 -1 100 2 -1 -1 2 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1
3 20 -1 30 1 -1 -1 1 120 -1 1 1 1 1 1 2 -1 -1
"""


def test_simulate_explains_jobs_of_a_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.swf").write_text(TRACE)
    (tmp_path / "slurm.conf").write_text(TRACE_CONF)
    argv = ["simulate", "--conf", str(tmp_path / "slurm.conf"), "--trace"]
    argv += [str(tmp_path / "t.swf"), "--quiet", "--map-partition", "2=urgent"]
    assert main([*argv, "--explain", "3", "--explain", "1"]) == 0
    # The trace starts at 00:00:00 of the simulated day; job 3 is submitted at 20 s and
    # the next pass (21 s) preempts job 1 for it.
    day = clock_time(0)[:10]
    assert capsys.readouterr().out == (
        "JobId=3 JobState=COMPLETED Reason=None\n"
        f"   Preemption decision at {day}T00:00:21; candidates considered:\n"
        "   JobId=1 taken\n"
        "JobId=1 JobState=COMPLETED Reason=None\n"
        f"   Preempted by JobId=3 at {day}T00:00:21\n"
    )
    assert main([*argv, "--explain", "1", "--explain-json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["preempted_by"] == {"job_id": 3, "time": 21}
    assert main([*argv, "--explain", "9"]) == 1
    assert "Invalid job id specified" in capsys.readouterr().err


def test_candidates_the_policy_refuses_or_cannot_use(make_cluster: Make, job: Job) -> None:
    """n1 (3 cores) holds a low job, a job of a partition of the high job's tier and one of
    a partition with PreemptMode=OFF; n2, outside the high job's partition, a low job."""
    cluster = make_cluster(
        "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
        "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\nJobRequeue=1\n"
        "NodeName=n1 CPUs=3\nNodeName=n2 CPUs=1\n"
        "PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE\n"
        "PartitionName=frozen Nodes=n1 PriorityTier=1 PreemptMode=OFF MaxTime=INFINITE\n"
        "PartitionName=peer Nodes=n1 PriorityTier=2 MaxTime=INFINITE\n"
        "PartitionName=high Nodes=n1 PriorityTier=2 MaxTime=INFINITE\n"
    )
    low = cluster.submit(job().nodelist("n1").runtime(100_000))
    frozen = cluster.submit(job().partition("frozen").runtime(100_000))
    peer = cluster.submit(job().partition("peer").runtime(100_000))
    away = cluster.submit(job().nodelist("n2").runtime(100_000))
    cluster.run_until(100)
    assert all(cluster.state(j) is JobState.RUNNING for j in (low, frozen, peer, away))
    high = cluster.submit(job().partition("high").runtime(100))
    cluster.settle()
    assert cluster.state(high) is JobState.RUNNING
    rows = _json(cluster, high)["preemption"]["candidates"]
    assert {row["job_id"]: row["status"] for row in rows} == {
        low: "taken",
        frozen: "mode_off",
        peer: "not_preemptable",
        away: "other_nodes",
    }
    text = cluster.command(f"scontrol explain {high}").stdout
    assert f"   JobId={frozen} not taken: PreemptMode OFF\n" in text
    assert f"   JobId={peer} not taken: not preemptable by policy\n" in text
    assert f"   JobId={away} not taken: on nodes the job cannot use\n" in text
