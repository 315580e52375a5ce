"""preempt: small questions about who may preempt whom, and how.

The core builds the candidate list, orders it, and carries out the preemption; the preempt
plugin only answers these questions (Slurm's split, which keeps each policy about 60 lines).

One plugin, the policy (``PreemptType``), answers the exclusive hooks. Any number of guards
(``PreemptGuards`` in plurm.conf beside slurm.conf) answer the broadcast
``preempt_veto`` and may only take victims away: for each pair the core asks the policy's
``preempt_preemptable`` first and, when it says yes, every guard; one True vetoes.

Since 1.8 a policy that does not fit Slurm's shape (PBS's, LSF's) may also give each victim
a ladder of methods (``preempt_methods``), filter and reorder a preemptor's candidates
(``preempt_candidates``), suspend without gang scheduling (``preempt_suspend_releases``),
have the core drop victims not needed after all (``preempt_trim_victims``) and judge
slurm.conf's PreemptMode itself (``preempt_check_mode``); a policy that implements none of
them behaves as under 1.7. Since 1.10 it may also say how long a job it requeued waits
before it may run again (``preempt_requeue_delay``; Slurm's ~120 s by default), whether a
job it suspended keeps its nodes until it resumes (``preempt_suspended_reserve``) and
whether it counts against association limits meanwhile (``preempt_suspended_counts``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from plurm._markers import hookspec

if TYPE_CHECKING:
    from plurm.conf.model import SlurmConfig
    from plurm.conf.values import PreemptMode
    from plurm.model.cluster import Cluster
    from plurm.model.job import Job
    from plurm.model.select import Candidate, PreemptMethod


@hookspec(firstresult=True)
def preempt_enabled(cluster: Cluster) -> bool | None:
    """Can this policy ever let one job preempt another? When it answers False the core
    skips building preemption candidates (a walk over every running job per job that does
    not fit) and orders the queue without asking ``preempt_job_preempt_check``.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: False only if ``preempt_preemptable`` and ``preempt_job_preempt_check`` answer
        False for every pair of jobs on this cluster; True or None (the default when no
        plugin implements it) when they may answer True. Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``slurm_preemption_enabled``.

    .. versionadded:: 1.1
    """


@hookspec(firstresult=True)
def preempt_by_tier(cluster: Cluster) -> bool | None:
    """Does this policy let a job preempt only jobs whose partition has a strictly lower
    PriorityTier than its own? When it answers True the core leaves partitions of the
    preemptor's tier or above out of the candidate walk, and gives ``sched_queue_order`` a
    :class:`~plurm.model.job.PreemptsByTier` relation, which an order that puts higher
    tiers first need not call.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True only if ``preempt_preemptable`` and ``preempt_job_preempt_check`` answer
        False for every pair of jobs whose preemptee's partition has a PriorityTier at
        least the preemptor's; False or None (the default when no plugin implements it)
        otherwise. Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (preempt/partition_prio's rule, stated for the core).

    .. versionadded:: 1.3
    """


@hookspec(firstresult=True)
def preempt_victims_fixed(cluster: Cluster) -> bool | None:
    """Are a job's ``preempt_mode`` and ``preempt_priority`` fixed while it holds its
    nodes? When it answers True the core asks both once per job, when it starts (or when
    the answers may have changed: the controller starts, ``scontrol update`` changes a
    partition), and keeps the running and suspended jobs in victim order between
    decisions. A decision then reads candidates only as far as select needs them and asks
    ``preempt_preemptable`` only of those, instead of asking all three questions of every
    running job and sorting them each time. Without PreemptExemptTime only: an exempt
    victim arms a pass, so with exemptions every walk goes through all jobs.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True only if both answers for a job depend on nothing that changes while it
        runs or is suspended (its partition, QOS, node count and the configuration are
        fine; its run time or the time of day are not); False or None (the default when no
        plugin implements it) otherwise, and the core asks them anew for every walk.
        Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (Slurm builds and sorts its candidate list for every job).

    .. versionadded:: 1.5
    """


@hookspec(firstresult=True)
def preempt_by_partition(cluster: Cluster) -> bool | None:
    """Does this policy choose victims by partition, as preempt/partition_prio does: may a
    job preempt only jobs of partitions with a strictly lower PriorityTier than its own
    whose PreemptMode (the partition's, else the cluster's) is not OFF? When it answers
    True, a select plugin that places a job on top of others for gang scheduling to
    suspend (select/cons_res, step 2 of its test) keeps the job off the cores of
    partitions of a higher tier and of PreemptMode=OFF partitions. Otherwise it keeps it
    off only the cores of jobs inside their PreemptExemptTime.

    The core asks it and keeps the answer in ``cluster.preempt_traits.by_partition``,
    where select plugins read it.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True only if ``preempt_preemptable`` answers False for every preemptee whose
        partition has a PriorityTier at least the preemptor's or whose partition's
        PreemptMode is OFF; False or None (the default when no plugin implements it)
        otherwise. Exclusive.
    :Purity: pure.
    :Slurm equivalent: select/cons_res's ``preempt_by_part`` (Slurm compares PreemptType
        with the name of its partition_prio plugin; here the plugin says it).

    Use in local plugins: a policy that answers ``preempt_preemptable`` as partition_prio
    does answers True here too, and then gets partition_prio's placements under cons_res
    with gang scheduling.

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def preempt_suspend_in_partition(cluster: Cluster) -> bool | None:
    """May a job preempt by suspension jobs of its own partition, as preempt/qos lets a
    QOS suspend another QOS's jobs whatever their partitions? When it answers True, a
    select plugin that counts jobs per core in partition rows (select/cons_res) gives every
    partition one row more, and a job whose first candidate is preempted by SUSPEND is
    placed in that row on top of the jobs it suspends (gang scheduling then suspends them).

    The core asks it and keeps the answer in
    ``cluster.preempt_traits.suspend_in_partition``, where select plugins read it.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True when victims are chosen by something other than the partition (a QOS, an
        account, ...) and may be suspended; False or None (the default when no plugin
        implements it) otherwise. Exclusive.
    :Purity: pure.
    :Slurm equivalent: select/cons_res's ``preempt_by_qos`` (the extra row Slurm adds when
        PreemptType names its qos plugin).

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def preempt_preemptable(preemptor: Job, preemptee: Job, cluster: Cluster) -> bool | None:
    """May ``preemptor`` preempt ``preemptee``? The policy predicate.

    When called: while the core builds the candidates for a pending job, once per running
    or suspended job; or, when ``preempt_victims_fixed``, once per candidate select reads.

    :returns: True or False. Exclusive: first non-None result wins.
    :Purity: pure; MUST NOT change anything.
    :Slurm equivalent: ``preempt_p_preemptable``.

    .. versionadded:: 1.0
    """


@hookspec
def preempt_veto(preemptor: Job, preemptee: Job, cluster: Cluster) -> bool | None:
    """Must ``preemptor`` leave ``preemptee`` alone, although the policy lets it preempt it?
    A guard's hook: guards are preempt plugins that implement only this, named in
    ``PreemptGuards`` (plurm.conf) beside the one policy of ``PreemptType``.

    When called: right after the policy's ``preempt_preemptable`` answered True for the
    pair, wherever the core asks that (candidate walks for the main pass and for
    backfill). Every guard is asked (pluggy's order: the guard listed last first); pairs
    the policy refused never reach a guard. Not asked for the queue order
    (``preempt_job_preempt_check`` stays the policy's) nor by gang scheduling's time
    slicing, which suspends by partition tiers without preempting.

    :returns: True to veto the pair; False or None to leave the policy's answer.
        Broadcast: any True vetoes, whatever the others answer.
    :Purity: pure; MUST NOT change anything.
    :Slurm equivalent: none (Slurm has one preempt plugin; a site changes its source).

    Use in local plugins: a guard keeps a class of jobs from ever being a victim (jobs
    past an age, an account's jobs) under whatever policy the site runs.

    .. versionadded:: 1.7
    """


@hookspec(firstresult=True)
def preempt_mode(job: Job, cluster: Cluster) -> PreemptMode | None:
    """How ``job`` is preempted: its effective PreemptMode (OFF, CANCEL, REQUEUE, SUSPEND).

    When called: for each candidate, and when the core carries out a preemption; when
    ``preempt_victims_fixed``, once when the job starts instead of for each candidate.

    :returns: the mode, without the GANG and PRIORITY flags. Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_MODE)``, later ``preempt_p_get_mode``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_priority(job: Job, cluster: Cluster) -> int | None:
    """The ordering key of ``job`` as a victim: the lowest value is preempted first.

    When called: while the core sorts the candidates; or, when ``preempt_victims_fixed``,
    once when the job starts (and again after a partition update).

    :returns: an integer key. Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_PRIO)``, later ``preempt_p_get_prio``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_grace_time(job: Job, cluster: Cluster) -> int | None:
    """Seconds ``job`` may run on after it was chosen as a victim (0: none).

    When called: when the core preempts the job by CANCEL or REQUEUE.

    :returns: seconds. Exclusive: first non-None result wins.
    :Purity: pure.
    :Slurm equivalent: ``preempt_p_get_data(PREEMPT_DATA_GRACE_TIME)``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_job_preempt_check(preemptor: Job, preemptee: Job, cluster: Cluster) -> bool | None:
    """Should ``preemptor`` be queued ahead of ``preemptee``? Used only to order the queue.

    When called: while the sched plugin orders the pending queue, for pairs of pending jobs.

    :returns: True when the first could preempt the second. Exclusive.
    :Purity: pure.
    :Slurm equivalent: ``preempt_p_job_preempt_check``.

    .. versionadded:: 1.0
    """


@hookspec(firstresult=True)
def preempt_methods(job: Job, cluster: Cluster) -> Sequence[PreemptMethod] | None:
    """How ``job`` may be preempted, as a ladder: the methods to try in order (SUSPEND,
    CHECKPOINT, REQUEUE, CANCEL). The core carries out the first one that applies to the
    job and falls through to the next otherwise: SUSPEND applies to a running job (not to
    one already suspended), CHECKPOINT and REQUEUE to a requeueable job (``--requeue`` or
    JobRequeue=1, not ``--no-requeue``), CANCEL always. A job none of whose methods
    applies, or with an empty ladder, is no candidate.

    The method chosen is the candidate's :attr:`~plurm.model.select.Candidate.method`;
    select sees it as the candidate's ``mode`` (CHECKPOINT as REQUEUE). SUSPEND is gang
    scheduling's suspension unless the policy answers ``preempt_suspend_releases``.
    CHECKPOINT sends the job back to the queue as REQUEUE does, but it keeps the work
    done: its run time so far counts towards its work when it runs again (the simulator
    runs it only for the rest; live, the job is requeued and its script sees
    ``SLURM_RESTART_COUNT``).

    When called: for each candidate while the core builds a preemptor's candidates, and
    when it carries out a preemption. Answering for a job makes the core skip
    ``preempt_mode`` for it.

    :returns: the ladder, most preferred first; None (the default when no plugin
        implements it) to use ``preempt_mode`` (a ladder of one, OFF: none). Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (PBS's ``preempt_order``, such as "SCR 80 SC 50 S", picks a
        ladder by the share of the job's walltime left; its server falls through it).

    Use in local plugins: a ladder that depends on the job's run time means answering
    False to ``preempt_victims_fixed``.

    .. versionadded:: 1.8
    """


@hookspec(firstresult=True)
def preempt_candidates(
    preemptor: Job, candidates: Sequence[Candidate], cluster: Cluster
) -> Sequence[Candidate] | None:
    """The candidates of ``preemptor`` as the policy wants select to read them: any of
    ``candidates`` (each one the core built, ``preempt_preemptable`` and the guards said
    yes to), in any order. Select removes them in the order given until the preemptor
    fits, so the order is the victim preference, and one left out is never a victim.

    When called: after the core built and sorted a preemptor's candidates (by
    ``preempt_priority``, or youngest first), for the main pass and for backfill's
    questions, only when it has at least one. With this hook implemented the core walks
    every running job for each preemptor (no victim pool).

    :returns: the candidates to offer, most desirable victim first; None (the default
        when no plugin implements it) to offer them as built. Candidates not among those
        given are ignored. Exclusive.
    :Purity: pure; MUST NOT change anything.
    :Slurm equivalent: none (PBS's ``preempt_targets`` and its sort by preempt priority
        then ``preempt_sort``; LSF's queue preference levels, least-loaded host and
        ``PREEMPT_FOR=LEAST_RUN_TIME``, which depend on the preemptor's queue and on run
        times).

    .. versionadded:: 1.8
    """


@hookspec(firstresult=True)
def preempt_suspend_releases(cluster: Cluster) -> bool | None:
    """Does a suspension by this policy give the victim's resources to the preemptor, with
    no gang scheduling, the victim resuming as soon as they are free again (LSF's and
    PBS's suspension)? When it answers True the core itself suspends each victim whose
    method is SUSPEND (as ``scontrol suspend`` would free its resources to select, but
    not as an admin suspension: its priority stays) and starts the preemptor at once; at
    every scheduling pass, before it reads the queue, it resumes each such job, earliest
    suspended first, whose resources select says are free (``select_job_resumable``), not
    necessarily when its preemptor ends. Select simulates removing such a candidate as it
    would an admin suspension (``cluster.preempt_traits.suspend_releases``).

    The core asks it and keeps the answer in ``cluster.preempt_traits.suspend_releases``.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True for suspension without gang scheduling; False or None (the default when
        no plugin implements it) for Slurm's: a SUSPEND victim is suspended and resumed by
        gang scheduling (PreemptMode=SUSPEND,GANG). Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (Slurm suspends only through gang scheduling).

    .. versionadded:: 1.8
    """


@hookspec(firstresult=True)
def preempt_trim_victims(cluster: Cluster) -> bool | None:
    """Should the core drop victims select chose that the preemptor does not need after
    all? When it answers True, the core takes each victim of select's answer in turn, the
    last chosen first, and asks select again (a dry run: ``select_job_test`` RUN_NOW with
    the victims left but that one as the only candidates); if the preemptor still fits,
    on victims among those, the victim is dropped and stays untouched.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True to trim; False or None (the default when no plugin implements it) to
        preempt every victim select returned, as Slurm does. Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (PBS's trim pass after its greedy choice).

    .. versionadded:: 1.8
    """


@hookspec(firstresult=True)
def preempt_check_mode(mode: PreemptMode, config: SlurmConfig) -> str | None:
    """What is wrong with slurm.conf's cluster-wide PreemptMode for this policy? Slurm ties
    PreemptMode to its own preempt plugins (SUSPEND needs GANG; OFF is refused with
    partition_prio and qos); a policy of another shape judges it here: one that reads its
    settings elsewhere may accept PreemptMode omitted (OFF) or take any value.

    The configuration parser applies Slurm's rules itself for ``preempt/none``,
    ``preempt/partition_prio`` and ``preempt/qos`` (with the line and column of the
    setting). For any other PreemptType the core asks this hook once the plugin is
    loaded; a plugin that does not implement it gets Slurm's rule that SUSPEND needs GANG.

    When called: once, when the plugins are loaded.

    :returns: None when the mode is fine; else the message, which the core raises as a
        configuration error naming PreemptType and PreemptMode. Exclusive.
    :Purity: pure.
    :Slurm equivalent: the PreemptMode checks of ``slurm.conf`` parsing (``read_config``).

    .. versionadded:: 1.8
    """


@hookspec(firstresult=True)
def preempt_victim_cost(preemptor: Job, candidate: Candidate, cluster: Cluster) -> float | None:
    """What taking ``candidate`` as a victim of ``preemptor`` costs, under the site's
    victim objective (``PreemptParameters=victims=...``, answered by the core's
    ``preempt/victims``). When it answers, the core searches, after select chose its
    victims (and after ``preempt_trim_victims``'s trim), for a set of candidates whose
    summed cost is lower and with which the preemptor still starts now: dry runs of
    ``select_job_test`` (RUN_NOW) with that set as the only candidates, so every select
    plugin places the job the same way it would with Slurm's set (idle resources first).
    Ties go to the set that comes first in the candidates' order (Slurm's). The search is
    exact over up to ``plurm.controller.victim_search.EXACT_CANDIDATES`` candidates
    and bounded beyond (see ``plurm.controller.victim_search``).

    When called: for the first candidates of a preemptor that select needed victims for,
    in the main pass and when backfill starts a job by preempting.

    :returns: a cost of 0 or more (1 per victim: the fewest victims; the CPU-seconds the
        victim would lose: the least lost work); None (the default when no plugin
        implements it) for Slurm's choice, with no search. Exclusive.
    :Purity: pure; MUST NOT change anything.
    :Slurm equivalent: none (Slurm preempts the candidates select removed, in order, until
        the job fits; its 1.3 preemption page lists a smarter choice as a future idea).

    .. versionadded:: 1.10
    """


@hookspec(firstresult=True)
def preempt_requeue_delay(job: Job, cluster: Cluster) -> int | None:
    """Seconds ``job``, a victim this policy requeued or checkpointed, waits in the queue
    (reason BeginTime) before it may start again. Slurm holds a requeued job until its job
    credential has expired (about 120 s: eligible 121 s after the whole second it went
    back); PBS and LSF queue a preempted job again at once.

    When called: when the core preempts a job by REQUEUE or CHECKPOINT (the answer is
    applied when its processes are gone and it goes back to the queue). Not asked for
    ``scontrol requeue`` nor for a job requeued because its node failed, which always wait
    Slurm's delay.

    :returns: seconds, 0 for none (the job is eligible as soon as it is back, with no
        reason); None (the default when no plugin implements it) for Slurm's delay.
        Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (Slurm's requeue sets the job's begin time past its
        credential's expiry, whatever the preempt plugin).

    .. versionadded:: 1.10
    """


@hookspec(firstresult=True)
def preempt_suspended_reserve(cluster: Cluster) -> bool | None:
    """Do jobs suspended by this policy's releasing preemptions (see
    ``preempt_suspend_releases``) keep a reservation on their nodes while they wait to
    resume? When it answers True, the core keeps the nodes of each such job from every
    pending job that the policy does not queue ahead of it
    (``preempt_job_preempt_check(pending, suspended)`` False) in the main pass (the job
    waits with reason NODES_RESERVED where it would have fitted only there; backfill plans
    around a suspended job's nodes in any case): no lower job takes a node the suspended
    job needs back, so it resumes as soon as its preemptor is gone. A pending job the
    policy queues ahead of it (one that may preempt it) is not kept off.

    The core asks it and keeps the answer in ``cluster.preempt_traits.suspended_reserve``.

    When called: when the controller starts and after ``scontrol update`` changed a
    partition.

    :returns: True to reserve; False or None (the default when no plugin implements it)
        to let any pending job use the nodes a suspended job freed (it resumes when they
        are all free again, whoever held them). Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (PBS's ``sched_preempt_enforce_resumption``, which makes
        preempted jobs top jobs with a reservation).

    .. versionadded:: 1.10
    """


@hookspec(firstresult=True)
def preempt_suspended_counts(job: Job, scope: str, cluster: Cluster) -> bool | None:
    """Does ``job``, suspended by one of this policy's releasing preemptions (see
    ``preempt_suspend_releases``), still count against the association limits of
    accounts.conf at ``scope``: ``"user"`` for the limits of its own association (MaxJobs,
    GrpJobs, GrpTRES cpu= and node=), ``"account"`` for those of each account above it
    (GrpJobs, GrpTRES)? A job that does not count is left out of the jobs, CPUs and nodes
    that scope uses, so that other jobs of the scope may start in its place.

    When called: when the core counts what associations use (once per scheduling pass
    that checks a limit), for each job suspended by a releasing preemption. Not asked for
    jobs suspended by ``scontrol suspend`` or by gang scheduling, which always count.

    :returns: True or None (the default when no plugin implements it) to count it, as
        Slurm counts a suspended job against its association's limits until it ends;
        False to leave it out. Exclusive.
    :Purity: pure.
    :Slurm equivalent: none (LSF's ``PREEMPT_FOR`` words, which say which slot limits
        leave suspended jobs out).

    .. versionadded:: 1.10
    """
