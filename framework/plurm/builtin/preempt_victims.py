"""preempt/victims: the victim objective of ``PreemptParameters=victims=...`` (Plurm's).

The core loads it beside any PreemptType policy when slurm.conf sets the option:

* ``victims=slurm`` (the default): Slurm's choice, the candidates select removed in order
  until the job fit; this plugin then gives no cost and nothing changes;
* ``victims=fewest``: each victim costs 1, so the core's search
  (:mod:`plurm.controller.victim_search`) takes the fewest victims with which the job
  starts now;
* ``victims=least_lost_work``: each victim costs the work it would lose: its CPUs times
  its run time since it (last) started for a CANCEL or REQUEUE victim (a requeued job runs
  again from the start; a CHECKPOINT victim keeps its work, see below), and for a
  victim that loses no work (SUSPEND, CHECKPOINT) its CPUs times
  :data:`DELAY_SECONDS`, a nominal delay: a suspension is cheaper than killing a job that
  ran longer than that, and among suspensions fewer and smaller victims are cheaper.

Ties go to Slurm's own victim order; no objective takes more victims than Slurm's set.
"""

from __future__ import annotations

from plurm._markers import HOOK_API_VERSION, hookimpl
from plurm.conf.values import PreemptBase
from plurm.errors import ConfValueError
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.model.select import Candidate, PreemptMethod
from plurm.params import PluginOption
from plurm.registry import PluginContext

__all__ = ["DELAY_SECONDS", "OBJECTIVES", "VictimObjective", "lost_work"]

#: The values of ``victims=``.
OBJECTIVES = ("slurm", "fewest", "least_lost_work")
#: The delay a victim that loses no work (suspended, checkpointed) is charged, in seconds
#: per CPU, under ``least_lost_work``.
DELAY_SECONDS = 60.0


def job_cpus(job: Job, cluster: Cluster) -> int:
    """A running or suspended job's CPUs: its cores (with their threads) when the select
    plugin recorded them, else its nodes' CPUs (whole nodes)."""
    if job.units:
        return sum(cluster.node(name).threads_per_core for name, _ in job.units)
    return sum(cluster.node(name).cpus for name in job.nodes) or max(job.request.cpus, 1)


def lost_work(candidate: Candidate, cluster: Cluster) -> float:
    """The CPU-seconds ``candidate`` loses if preempted (``least_lost_work``'s cost)."""
    job = candidate.job
    cpus = job_cpus(job, cluster)
    keeps = candidate.mode is PreemptBase.SUSPEND or candidate.method is PreemptMethod.CHECKPOINT
    if keeps:
        return cpus * DELAY_SECONDS
    return cpus * job.run_time(cluster.now)


class VictimObjective:
    """Gives each candidate its cost under ``victims=``."""

    PLURM_HOOK_API = HOOK_API_VERSION
    PLURM_OPTIONS = (
        PluginOption(
            "victims",
            kind="str",
            default="slurm",
            help="victim choice: slurm (Slurm's), fewest, least_lost_work",
        ),
    )

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        objective = str(context.options.get("victims", "slurm")).lower()
        if objective not in OBJECTIVES:
            raise ConfValueError(
                "PreemptParameters",
                f"victims={objective}",
                f"victims takes one of {', '.join(OBJECTIVES)}",
                context.config.preempt_parameters.locations.get("victims"),
            )
        self.objective = objective

    @hookimpl
    def preempt_victim_cost(
        self, preemptor: Job, candidate: Candidate, cluster: Cluster
    ) -> float | None:
        if self.objective == "fewest":
            return 1.0
        if self.objective == "least_lost_work":
            return lost_work(candidate, cluster)
        return None
