"""One job's figures on one node, built from samples of its processes.

A step's tasks are counted apart (Slurm's per-task figures): a task's memory at a sample is
the sum over its processes (RSS, virtual size), its CPU time the user and system time of
every process it ever had (a process that ended counts with its last sample), its pages the
major faults of those processes. A step's MaxRSS is the largest task maximum (and where it
was), AveRSS the tasks' maxima averaged; the same for the virtual size and pages; CPU:
MinCPU, AveCPU over the tasks, TotalCPU summed.

Memory limit: the step's RSS on the node (all its tasks) against the job's limit on the
node, at each sample.
"""

from __future__ import annotations

from collections.abc import Iterable

from plurm.gather.procfs import ProcStat, task_of
from plurm.model.usage import StepUsage

__all__ = ["JobTally"]

Task = tuple[str, int]


class JobTally:
    """What one job's processes used on this node (module doc)."""

    def __init__(self, job_id: int, sid: int, mem_limit: int | None, node: str) -> None:
        self.job_id = job_id
        self.sid = sid
        self.mem_limit = mem_limit
        self.node = node
        #: (pid, start) -> (task, user s, system s, major faults) at its last sample, for
        #: the processes alive then; those gone are folded into ``_gone`` (so a long job
        #: that forks and ends many processes keeps only its live ones here).
        self._procs: dict[tuple[int, int], tuple[Task, float, float, int]] = {}
        self._gone: dict[Task, tuple[float, float, int]] = {}
        #: Each task's largest RSS and virtual size seen.
        self._max_rss: dict[Task, int] = {}
        self._max_vsize: dict[Task, int] = {}
        #: Each step's RSS at the last sample.
        self.step_rss: dict[str, int] = {}
        self._tasks: dict[tuple[int, int], Task] = {}

    def add(self, stats: Iterable[ProcStat]) -> None:
        """One sample: the job's live processes now."""
        rss: dict[Task, int] = {}
        vsize: dict[Task, int] = {}
        live: dict[tuple[int, int], tuple[Task, float, float, int]] = {}
        for stat in stats:
            task = self._tasks.get(stat.key)
            if task is None:
                task = self._tasks[stat.key] = task_of(stat)
            rss[task] = rss.get(task, 0) + stat.rss
            vsize[task] = vsize.get(task, 0) + stat.vsize
            live[stat.key] = (task, stat.user, stat.system, stat.majflt)
        for key, (task, user, system, majflt) in self._procs.items():
            if key not in live:
                done = self._gone.get(task, (0.0, 0.0, 0))
                self._gone[task] = (done[0] + user, done[1] + system, done[2] + majflt)
                self._tasks.pop(key, None)
        self._procs = live
        for task, value in rss.items():
            self._max_rss[task] = max(self._max_rss.get(task, 0), value)
        for task, value in vsize.items():
            self._max_vsize[task] = max(self._max_vsize.get(task, 0), value)
        steps: dict[str, int] = {}
        for (step, _), value in rss.items():
            steps[step] = steps.get(step, 0) + value
        self.step_rss = steps

    def over_limit(self) -> list[str]:
        """The steps whose RSS at the last sample is over the job's limit."""
        if self.mem_limit is None:
            return []
        return [step for step, value in self.step_rss.items() if value > self.mem_limit]

    def usage(self) -> dict[str, StepUsage]:
        """Each step's figures so far."""
        cpu: dict[Task, list[float]] = {}
        pages: dict[Task, int] = {}
        gone = ((task, *figures) for task, figures in self._gone.items())
        for task, user, system, majflt in (*self._procs.values(), *gone):
            figures = cpu.setdefault(task, [0.0, 0.0])
            figures[0] += user
            figures[1] += system
            pages[task] = pages.get(task, 0) + majflt
        tasks = set(cpu) | set(self._max_rss)
        by_step: dict[str, list[Task]] = {}
        for task in sorted(tasks):
            by_step.setdefault(task[0], []).append(task)
        return {step: self._step(members, cpu, pages) for step, members in by_step.items()}

    def _step(
        self, tasks: list[Task], cpu: dict[Task, list[float]], pages: dict[Task, int]
    ) -> StepUsage:
        count = len(tasks)

        def biggest(values: dict[Task, int]) -> tuple[int, int]:
            task = max(tasks, key=lambda t: (values.get(t, 0), -t[1]))
            return values.get(task, 0), task[1]

        max_rss, rss_task = biggest(self._max_rss)
        max_vsize, vsize_task = biggest(self._max_vsize)
        max_pages, pages_task = biggest(pages)
        times = {task: sum(cpu.get(task, [0.0, 0.0])) for task in tasks}
        min_task = min(tasks, key=lambda t: (times[t], t[1]))
        user = sum(cpu.get(task, [0.0, 0.0])[0] for task in tasks)
        system = sum(cpu.get(task, [0.0, 0.0])[1] for task in tasks)
        return StepUsage(
            max_rss=max_rss,
            max_rss_node=self.node,
            max_rss_task=rss_task,
            ave_rss=sum(self._max_rss.get(t, 0) for t in tasks) / count,
            max_vmsize=max_vsize,
            max_vmsize_node=self.node,
            max_vmsize_task=vsize_task,
            ave_vmsize=sum(self._max_vsize.get(t, 0) for t in tasks) / count,
            max_pages=max_pages,
            max_pages_node=self.node,
            max_pages_task=pages_task,
            ave_pages=sum(pages.get(t, 0) for t in tasks) / count,
            min_cpu=times[min_task],
            min_cpu_node=self.node,
            min_cpu_task=min_task[1],
            ave_cpu=sum(times.values()) / count,
            total_cpu=user + system,
            user_cpu=user,
            system_cpu=system,
        )
