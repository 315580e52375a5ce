"""sched/gang: gang scheduling, as Slurm's gang.c does it.

Each partition keeps its jobs (oldest first), an *active row* of the resources its running
jobs hold, and the *shadows* that running jobs of higher-PriorityTier partitions cast on it.
When a row is rebuilt the shadows go in first, so a job under a shadow no longer fits and is
suspended (or, when its PreemptMode is CANCEL or REQUEUE, handed to the core to preempt);
when the shadow goes, the row is rebuilt and the job resumes. A running job stopped under a
shadow it overlaps is named with the shadow's job (``GangDecision.displaced_by``), whether
the shadow came with that job's start or its resume: the core counts it as preempted by that
job. One stopped beside the shadows, for its own partition's time slice, is not named.

With OverSubscribe=FORCE:n the jobs that share resources in one partition take turns: every
SchedulerTimeSlice the active jobs move to the back of the list and the row is rebuilt from
the front.

Resources are what the select plugin says a job holds (``Job.units``: (node, core) pairs,
as Slurm's GS_CORE and GS_CPU under select/cons_res), or whole nodes when it allocates nodes
(Slurm's GS_NODE, used by select/linear and CR_Memory); a job fits a row only where no
active job holds any of its resources. Rows and jobs keep their resources as bitmaps (an int,
one bit per resource, numbered as the plugin first sees them): a row has thousands of them on a
large cluster, and a set intersection per job per rebuild cost more than the rest of the rebuild.

Loaded when PreemptMode has GANG, or with Slurm 1.3's ``SchedulerType=sched/gang``. It decides
and the core acts: every hook returns a :class:`~plurm.model.select.GangDecision`.
"""

from __future__ import annotations

import enum
import logging

import attrs

from plurm import HOOK_API_VERSION, hookimpl
from plurm.conf.model import PartitionSpec
from plurm.model.cluster import Cluster
from plurm.model.job import Job
from plurm.model.runs import bitmap_of
from plurm.model.select import GangDecision
from plurm.registry import PluginContext

__all__ = ["GangScheduler"]


def _units(job: Job) -> frozenset[tuple[str, int]] | tuple[tuple[str, int], ...]:
    """What the job holds: its select plugin's units, else its whole nodes; once it has
    released some nodes while completing, only those on the nodes it still holds."""
    held = job.held_nodes
    if job.units is not None:
        if job.completing_nodes is None:
            return job.units
        return frozenset(unit for unit in job.units if unit[0] in held)
    return tuple((name, -1) for name in held)


class _Row(enum.Enum):
    ACTIVE = "active"  # running in this slice
    FILLER = "filler"  # running because it fits beside the active ones
    NO_ACTIVE = "no_active"  # suspended (or waiting for its turn)


# The members read once: on Python 3.11 a member read through its enum class goes through
# the class's __getattr__ hook, and the rows are read job by job at every rebuild and slice.
_ACTIVE, _FILLER, _NO_ACTIVE = _Row.ACTIVE, _Row.FILLER, _Row.NO_ACTIVE


@attrs.define(eq=False)
class _GangJob:
    job_id: int
    #: Its (node, core) pairs, or (node, -1) for a whole node, as a bitmap (see the module).
    units: int
    running: bool = True
    row: _Row = _FILLER


@attrs.define(eq=False)
class _Partition:
    name: str
    tier: int
    jobs: list[_GangJob] = attrs.Factory(list)
    #: The running jobs of higher tiers that cast a shadow here, by job id.
    shadows: dict[int, _GangJob] = attrs.Factory(dict)
    active: int = 0  # a bitmap of resources
    jobs_active: int = 0
    #: Its jobs or shadows changed since its row was last rebuilt. Rebuilding a row whose
    #: jobs and shadows did not change gives the same row and no change (the rebuild is
    #: idempotent), so only dirty rows are rebuilt.
    dirty: bool = True
    #: The resources of shadows cast since the row was last rebuilt, when nothing else
    #: changed (not dirty): the row is then brought up to date without a rebuild (see
    #: GangScheduler._update_shadowed_row).
    shadowed: int = 0
    #: Every job of the row is ACTIVE, as a slice of a row with every job placed leaves
    #: it, so that the next such slice moves nothing. Set by GangScheduler._cycle_all_placed
    #: and cleared by _place: a job that joins or changes rows is either placed again, or
    #: left out, and a row with a job left out is not one a slice leaves alone anyway.
    all_active: bool = False


@attrs.define
class _Changes:
    suspend: list[int] = attrs.Factory(list)
    resume: list[int] = attrs.Factory(list)
    preempt: list[int] = attrs.Factory(list)
    #: job id -> the shadow (a higher tier's job) it was running under and was displaced by
    displaced_by: dict[int, int] = attrs.Factory(dict)

    def decision(self) -> GangDecision:
        return GangDecision(
            tuple(self.suspend),
            tuple(self.resume),
            tuple(self.preempt),
            tuple(self.displaced_by.items()),
        )


class GangScheduler:
    """Gang scheduling's state and decisions for one controller."""

    PLURM_HOOK_API = HOOK_API_VERSION

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.log = logging.getLogger(context.logger_name)
        self.parts: dict[str, _Partition] = {}
        #: job id -> the partition holding its entry, and the entry
        self.entries: dict[int, tuple[_Partition, _GangJob]] = {}
        self._by_tier: list[_Partition] | None = None  # _ordered's answer
        #: resource -> the place of its bit in the masks (in the order resources came)
        self._unit_bits: dict[tuple[str, int], int] = {}
        #: The partitions as last synced (compared whole at each start: equal dicts of the
        #: same objects compare in C, where walking them costs a step per partition).
        self._synced: dict[str, PartitionSpec] = {}

    def _mask(self, job: Job) -> int:
        """The bitmask of what the job holds. Made in a byte buffer: on a cluster of 100,000
        cores a mask is up to 12 KiB wide, and neither a table of single-bit ints (the sum
        of their widths grows with the square of the cores) nor an OR per core (each copies
        the mask so far) would do."""
        bits = self._unit_bits
        units = _units(job)
        places = list(map(bits.get, units))  # (units seen before: the common case)
        if None in places:
            places = []
            for unit in units:
                place = bits.get(unit)
                if place is None:
                    place = bits[unit] = len(bits)
                places.append(place)
        if not places:
            return 0
        low, high = min(places), max(places)
        if high - low + 1 == len(places):  # one run of places (units are distinct)
            return ((1 << len(places)) - 1) << low
        return bitmap_of(places)

    # ----------------------------------------------------------------------------- helpers

    def _sync_partitions(self, cluster: Cluster) -> None:
        if cluster.partitions == self._synced:
            return
        self._synced = dict(cluster.partitions)
        for name, spec in cluster.partitions.items():
            part = self.parts.get(name)
            if part is None or part.tier != spec.priority_tier:
                if part is None:
                    part = self.parts[name] = _Partition(name, spec.priority_tier)
                part.tier = spec.priority_tier
                self._by_tier = None
                for other in self.parts.values():  # the order of the rebuilds changed
                    other.dirty = True

    def _ordered(self) -> list[_Partition]:
        """Partitions by tier, highest first (name breaks ties, for determinism)."""
        if self._by_tier is None:
            self._by_tier = sorted(self.parts.values(), key=lambda p: (-p.tier, p.name))
        return self._by_tier

    def _cast_shadow(self, job: _GangJob, tier: int) -> None:
        for part in self.parts.values():
            if part.tier < tier and job.job_id not in part.shadows:
                part.shadows[job.job_id] = job
                part.shadowed |= job.units

    def _clear_shadow(self, job: _GangJob) -> None:
        for part in self.parts.values():
            if part.shadows.pop(job.job_id, None) is not None:
                part.dirty = True

    def _find(self, job_id: int) -> _GangJob | None:
        found = self.entries.get(job_id)
        return found[1] if found is not None else None

    # ----------------------------------------------------------------------------- rows

    def _fits(self, part: _Partition, job: _GangJob) -> bool:
        return not part.active & job.units

    def _place(self, part: _Partition, job: _GangJob, row: _Row) -> None:
        part.active |= job.units
        part.jobs_active += 1
        part.all_active = False
        job.row = row

    def _update_active_row(self, part: _Partition, changes: _Changes) -> None:
        """Shadows first, then ACTIVE jobs that still fit, then FILLER, then the rest."""
        part.active = 0
        part.jobs_active = 0
        for shadow in part.shadows.values():
            part.active |= shadow.units
        shade = part.active
        for state in (_ACTIVE, _FILLER):
            for job in [j for j in part.jobs if j.row is state]:
                if self._fits(part, job):
                    self._place(part, job, state)
                else:
                    self._stop(part, job, changes, shade)
        for job in [j for j in part.jobs if j.row is _NO_ACTIVE]:
            if self._fits(part, job):
                self._place(part, job, _FILLER)
                self._start(part, job, changes)

    def _stop(self, part: _Partition, job: _GangJob, changes: _Changes, shade: int) -> None:
        job.row = _NO_ACTIVE
        if not job.running:
            return
        job.running = False
        self._clear_shadow(job)
        self._stopped(part, job, changes, shade)

    @staticmethod
    def _stopped(part: _Partition, job: _GangJob, changes: _Changes, shade: int) -> None:
        """A running job stopped: suspended when no higher tier casts a shadow on its
        partition; else in ``preempt`` (its mode decides, as in Slurm), and displaced by
        the first shadow that holds any of its resources. A job that overlaps no shadow
        lost only its turn to a job of its own partition (a time slice, not a preemption).
        ``shade``: the shadows' resources (or more), to skip the search when it cannot
        find one."""
        if not part.shadows:
            changes.suspend.append(job.job_id)  # its turn is over
            return
        changes.preempt.append(job.job_id)
        units = job.units
        if not units & shade:
            return
        for shadow in part.shadows.values():
            if shadow.units & units:
                changes.displaced_by[job.job_id] = shadow.job_id
                break

    def _start(self, part: _Partition, job: _GangJob, changes: _Changes) -> None:
        if job.running:
            return
        job.running = True
        self._cast_shadow(job, part.tier)
        changes.resume.append(job.job_id)

    def _update_shadowed_row(self, part: _Partition, changes: _Changes) -> None:
        """What :meth:`_update_active_row` would do to a row that was up to date (rebuilt,
        or changed since only in ways that leave a rebuild nothing to do) once shadows
        holding ``part.shadowed`` were added, without walking every job twice.

        Such a row's ACTIVE and FILLER jobs fit together and beside the old shadows, and
        each NO_ACTIVE job overlaps them. A rebuild would stop exactly the placed jobs that
        overlap the new shadows (ACTIVE ones first, then FILLER, in list order), and could
        then start only NO_ACTIVE jobs that overlap what the stopped ones held and the new
        shadows do not: every other one still overlaps the row. Those are tried in list
        order, as the rebuild's last loop does.
        """
        added = part.shadowed
        part.shadowed = 0
        hit = [job for job in part.jobs if job.units & added and job.row is not _NO_ACTIVE]
        stopped = 0
        for state in (_ACTIVE, _FILLER):
            for job in hit:
                if job.row is state:
                    stopped |= job.units
                    part.jobs_active -= 1
                    self._stop(part, job, changes, added)
        part.active = (part.active & ~stopped) | added
        freed = stopped & ~part.active
        if not freed:
            return
        for job in [j for j in part.jobs if j.row is _NO_ACTIVE and j.units & freed]:
            if self._fits(part, job):
                self._place(part, job, _FILLER)
                self._start(part, job, changes)

    def _update_all_rows(self, changes: _Changes) -> None:
        # Highest tier first: a rebuild casts or clears shadows only on lower tiers, which
        # come later in this loop.
        for part in self._ordered():
            if part.dirty:
                part.dirty = False
                part.shadowed = 0
                self._update_active_row(part, changes)
            elif part.shadowed:
                self._update_shadowed_row(part, changes)

    # ----------------------------------------------------------------------------- hooks

    @hookimpl
    def sched_gang_job_start(self, job: Job, cluster: Cluster) -> GangDecision:
        self._sync_partitions(cluster)
        part = self.parts[job.partition]
        changes = _Changes()
        entry = self._find(job.job_id)
        if entry is None:
            entry = _GangJob(job.job_id, self._mask(job))
            part.jobs.append(entry)
            self.entries[job.job_id] = (part, entry)
            # Appended last to an up-to-date row, a new job leaves its rebuild nothing to
            # do: placed or not, it comes after every job it could displace.
            part.dirty = part.dirty or part.shadowed != 0
        else:
            part.dirty = True
        entry.running = True
        if self._fits(part, entry):
            self._place(part, entry, _FILLER)
            self._cast_shadow(entry, part.tier)
        else:
            entry.row = _NO_ACTIVE
            entry.running = False
            if part.shadows:
                changes.preempt.append(entry.job_id)
            else:
                changes.suspend.append(entry.job_id)
        self._update_all_rows(changes)
        return changes.decision()

    @hookimpl
    def sched_gang_job_fini(self, job: Job, cluster: Cluster) -> GangDecision:
        entry = self._find(job.job_id)
        changes = _Changes()
        if entry is None:
            return changes.decision()
        part = self.entries.pop(job.job_id)[0]
        every_job_placed = part.jobs_active == len(part.jobs)
        part.jobs.remove(entry)
        if every_job_placed:
            # A row where every job is placed: without this one, a rebuild places the others
            # as they are (they fitted together beside the same shadows) and has no job left
            # out to start. Only the job's resources leave the row. (A row changed since its
            # last rebuild stays dirty or shadowed, and is still brought up to date below.)
            part.active &= ~entry.units
            part.jobs_active -= 1
        else:
            part.dirty = True
        self._clear_shadow(entry)
        self._update_all_rows(changes)
        return changes.decision()

    @hookimpl
    def sched_gang_job_resized(self, job: Job, cluster: Cluster) -> GangDecision:
        """A completing job holds less: its entry (and the shadows it casts, the same
        entry) shrinks, and the rows it was in are rebuilt: its partition's, and those of
        the partitions it casts a shadow on."""
        found = self.entries.get(job.job_id)
        changes = _Changes()
        if found is None:
            return changes.decision()
        home, entry = found
        entry.units = self._mask(job)
        home.dirty = True
        for part in self.parts.values():
            if job.job_id in part.shadows:
                part.dirty = True
        self._update_all_rows(changes)
        return changes.decision()

    @hookimpl
    def sched_gang_reconfig(self, cluster: Cluster) -> GangDecision:
        self._sync_partitions(cluster)
        for part in self.parts.values():
            part.shadows.clear()
            part.dirty = True
        for part in self.parts.values():
            for entry in part.jobs:
                if entry.running:
                    self._cast_shadow(entry, part.tier)
        changes = _Changes()
        self._update_all_rows(changes)
        return changes.decision()

    @hookimpl
    def sched_gang_timeslice_interval(self, cluster: Cluster) -> int:
        return cluster.config.scheduler_time_slice

    @hookimpl
    def sched_gang_timeslice(self, cluster: Cluster) -> GangDecision:
        changes = _Changes()
        for part in self._ordered():
            if part.jobs_active < len(part.jobs) + len(part.shadows):
                self._cycle(part, changes)
        return changes.decision()

    def _cycle(self, part: _Partition, changes: _Changes) -> None:
        """One slice: active jobs to the back, then rebuild the row from the front."""
        settled = not (part.dirty or part.shadowed) and part.jobs_active == len(part.jobs)
        if settled and part.all_active:
            return  # the row as the last slice left it: the same order, every job ACTIVE
        if settled and all(job.running for job in part.jobs):
            self._cycle_all_placed(part)
        else:
            self._cycle_rebuilding(part, changes)

    def _cycle_all_placed(self, part: _Partition) -> None:
        """The slice of an up-to-date row where every job is placed (it cycles only because
        shadows fall on it, which Slurm counts as jobs waiting): what the rebuild in
        :meth:`_cycle_rebuilding` comes to, without it. Its ACTIVE jobs go to the back; the
        rebuild then finds every job fits (they fitted together beside the same shadows)
        and makes each ACTIVE; the row's resources stay, and nothing starts or stops."""
        part.all_active = True
        active = [j for j in part.jobs if j.row is _ACTIVE]
        if len(active) == len(part.jobs):
            return  # the same order, every job ACTIVE already
        part.jobs = [j for j in part.jobs if j.row is not _ACTIVE] + active
        for job in part.jobs:
            job.row = _ACTIVE

    def _cycle_rebuilding(self, part: _Partition, changes: _Changes) -> None:
        active = [j for j in part.jobs if j.row is _ACTIVE]
        part.jobs = [j for j in part.jobs if j.row is not _ACTIVE] + active
        for job in part.jobs:
            if job.row is _FILLER:
                job.row = _NO_ACTIVE
        part.active = 0
        part.jobs_active = 0
        for shadow in part.shadows.values():
            part.active |= shadow.units
        shade = part.active
        # The row is built here from every shadow and job as they now are, so it is up to
        # date: a rebuild would keep the ACTIVE jobs chosen below (they fit together), find
        # no FILLER, and start no NO_ACTIVE job (each overlapped the row when its turn came,
        # and the row only grew after). Nothing is left for the next start or end to do.
        part.dirty = False
        part.shadowed = 0
        chosen = []
        for job in part.jobs:
            if self._fits(part, job):
                self._place(part, job, _ACTIVE)
                chosen.append(job)
            else:
                job.row = _NO_ACTIVE
        for job in part.jobs:
            # (every job not chosen was just set NO_ACTIVE: no search of ``chosen``)
            if job.row is _NO_ACTIVE and job.running:
                job.running = False
                self._clear_shadow(job)
                self._stopped(part, job, changes, shade)
        for job in chosen:
            self._start(part, job, changes)
