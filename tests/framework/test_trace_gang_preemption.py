"""A gang suspension of a lower-tier job for a higher-tier preemptor counts as a preemption
(``preempted_suspend``, the summary's ``preemptions: suspend``) under select/linear and
select/cons_res alike: a tiny trace under PreemptMode=SUSPEND,GANG, one low job then one
high job that needs its resources."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.sim.metrics import summarize
from plurm.sim.trace import TraceMapping, Transition, replay
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
{select}
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
NodeName=n[1-2] CPUs=2 Sockets=1 CoresPerSocket=2 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES PriorityTier=1 OverSubscribe=FORCE:1
PartitionName=urgent Nodes=ALL PriorityTier=2 OverSubscribe=FORCE:1
"""

SELECTS = {
    "select/linear": "SelectType=select/linear",
    "select/cons_res": "SelectType=select/cons_res\nSelectTypeParameters=CR_Core",
}

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think: job 1 (batch) takes all four CPUs for 1,000 s; job 2 (urgent)
# comes at 100 and needs all four for 200 s.
TRACE = """; MaxProcs: 4
1 0 -1 1000 4 -1 -1 4 2000 -1 1 1 1 1 1 1 -1 -1
2 100 -1 200 4 -1 -1 4 400 -1 1 1 1 1 1 2 -1 -1
"""

MAPPING = {"partitions": {"1": "batch", "2": "urgent"}}


@pytest.mark.parametrize("select", sorted(SELECTS))
def test_a_gang_suspension_for_a_higher_tier_counts_as_a_preemption(
    tmp_path: Path, select: str
) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF.format(select=SELECTS[select]))
    transitions: list[Transition] = []
    records = replay(
        clean(parse_swf(TRACE)),
        conf.load(path),
        TraceMapping.from_dict(MAPPING),
        transitions=transitions,
    )
    low, high = records
    suspended = [(c.time, c.job_id) for c in transitions if c.new == "SUSPENDED"]
    assert suspended == [(101, 1)], transitions
    assert (low.state, high.state) == ("COMPLETED", "COMPLETED")
    assert high.start == 101
    assert low.suspended == pytest.approx(200.0)
    assert (low.preempted_suspend, high.preempted_suspend) == (1, 0)
    assert summarize(records, total_cpus=4)["preemptions"]["suspend"] == 1
