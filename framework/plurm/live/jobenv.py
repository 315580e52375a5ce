"""What a batch script sees under Slurm 22.05: its output file names and its environment.

Two pure functions, no I/O:

* :func:`expand_pattern` turns an ``--output``/``--error`` pattern (``slurm-%j.out``) into a
  file name, with the replacement symbols of sbatch's "filename pattern" section;
* :func:`job_environment` builds the environment of the batch script from a
  :class:`JobEnvInfo`, the variables of sbatch's "OUTPUT ENVIRONMENT VARIABLES" section that
  apply to a batch step.

Filename patterns, as slurmstepd expands them for a batch step:

* a backslash anywhere in the pattern turns expansion off: every backslash is dropped and
  nothing else changes (``\\%j`` stays the text ``%j``);
* ``%%`` is one ``%``;
* ``%A`` is the array's master job id, or the job id when the job is not an array task;
* ``%a`` is the array task id; a job that is not an array task has Slurm's "no value"
  marker there, 4294967294;
* ``%j`` is the job id (an array task's own id, not the master's); ``%J`` is ``jobid.stepid``
  and the batch step's step id is written ``batch``;
* ``%N`` is the node's short host name (up to the first dot), ``%n`` the node's index in the
  job, ``%s`` the step id (``batch`` for the batch step), ``%t`` the task id (0 for the batch
  script), ``%u`` the user name, ``%x`` the job name;
* digits between ``%`` and the letter zero-pad a number to that width (``%4j`` -> ``0128``);
  widths above 10 count as 10, and a width is ignored for names (``%5u``);
* any other letter is not a symbol: the ``%``, the digits and the letter are kept as written.

A relative result is relative to the job's working directory; the launcher resolves it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import attrs

from plurm.hostlist import compress

__all__ = [
    "NO_VAL",
    "JobEnvInfo",
    "compact_counts",
    "expand_pattern",
    "job_environment",
    "tasks_per_node",
]

#: Slurm's "no value" marker for a 32-bit number; ``%a`` of a job that is not an array task.
NO_VAL = 0xFFFFFFFE
#: The variables naming a job's GPUs (gres/gpu's NVIDIA, AMD and OpenCL ones, and Slurm's).
_GPU_VARIABLES = (
    "CUDA_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "GPU_DEVICE_ORDINAL",
    "SLURM_JOB_GPUS",
)
#: Slurmstepd caps the zero-padding width of a filename pattern at 10.
_MAX_WIDTH = 10


def expand_pattern(
    pattern: str,
    *,
    job_id: int,
    job_name: str,
    user: str,
    node: str,
    array_job_id: int | None = None,
    array_task_id: int | None = None,
    step_id: int | None = None,
    task_id: int | None = None,
    node_index: int | None = None,
) -> str:
    """The file name ``pattern`` stands for (see the module docstring for the symbols).

    ``step_id`` None is the batch step; ``task_id`` and ``node_index`` default to 0, the batch
    script's task on the job's first node.
    """
    if "\\" in pattern:
        return pattern.replace("\\", "")
    step = "batch" if step_id is None else str(step_id)
    is_array = array_task_id is not None
    numbers: dict[str, int] = {
        "A": array_job_id if is_array and array_job_id is not None else job_id,
        "a": array_task_id if array_task_id is not None else NO_VAL,
        "j": job_id,
        "J": job_id,
        "n": node_index or 0,
        "t": task_id or 0,
    }
    names = {"N": node.split(".", 1)[0], "u": user, "x": job_name}
    out: list[str] = []
    i = 0
    length = len(pattern)
    while i < length:
        char = pattern[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        if pattern.startswith("%%", i):
            out.append("%")
            i += 2
            continue
        j = i + 1
        while j < length and pattern[j].isdigit():
            j += 1
        if j >= length:  # "%" or "%12" at the very end: kept as written
            out.append(pattern[i:])
            break
        letter = pattern[j]
        width = min(int(pattern[i + 1 : j]), _MAX_WIDTH) if j > i + 1 else 0
        if letter in numbers:
            out.append(str(numbers[letter]).zfill(width))
            if letter == "J":
                out.append("." + step)
        elif letter == "s":
            out.append(step.zfill(width) if step_id is not None else step)
        elif letter in names:
            out.append(names[letter])
        else:
            out.append(pattern[i : j + 1])
        i = j + 1
    return "".join(out)


def _names(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(names)


def _counts(counts: Iterable[int]) -> tuple[int, ...]:
    return tuple(counts)


@attrs.frozen(kw_only=True)
class JobEnvInfo:
    """Everything :func:`job_environment` needs about one job on one node.

    ``nodes`` are the job's nodes in allocation order and ``cpus_per_node`` the CPUs the job
    has on each of them (empty: ``cpus_on_node`` on every node). ``ntasks`` is None when the
    job gave neither ``-n`` nor ``--ntasks-per-node``; ``cpus_per_task_set`` tells whether
    ``-c`` was given. Memory is in MiB. ``base_env`` is the part of the submission
    environment the job exports (the caller applies ``--export``); Slurm's own variables
    override it.

    ``group``, ``time_limit`` (minutes) and ``tres_per_node`` are carried for the rest of the
    daemon (prolog environment, limits); Slurm 22.05 puts none of them in a batch script's
    environment, so :func:`job_environment` does not either.
    """

    job_id: int
    job_name: str
    user: str
    uid: int
    gid: int
    group: str | None = None
    partition: str
    account: str | None = None
    qos: str | None = None
    nodes: tuple[str, ...] = attrs.field(converter=_names)
    node_name: str
    cpus_on_node: int
    cpus_per_node: tuple[int, ...] = attrs.field(default=(), converter=_counts)
    ntasks: int | None = None
    cpus_per_task: int = 1
    cpus_per_task_set: bool = False
    ntasks_per_node: int | None = None
    mem_per_node: int | None = None
    mem_per_cpu: int | None = None
    submit_dir: str
    submit_host: str
    cluster_name: str
    restart_count: int = 0
    array_job_id: int | None = None
    array_task_id: int | None = None
    array_task_count: int | None = None
    array_task_min: int | None = None
    array_task_max: int | None = None
    array_task_step: int | None = None
    time_limit: int | None = None
    tres_per_node: str | None = None
    #: The indexes of the GPUs the job holds on this node (None: it holds none).
    gpus: tuple[int, ...] | None = None
    #: --cpus-per-gpu and --mem-per-gpu (MiB), when given.
    cpus_per_gpu: int | None = None
    mem_per_gpu: int | None = None
    base_env: Mapping[str, str] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        if not self.nodes:
            raise ValueError("a job runs on at least one node")
        if self.node_name not in self.nodes:
            raise ValueError(f"node {self.node_name!r} is not one of the job's nodes")
        if self.cpus_per_node and len(self.cpus_per_node) != len(self.nodes):
            raise ValueError("cpus_per_node needs one count per node")
        if self.cpus_per_task < 1:
            raise ValueError("cpus_per_task must be at least 1")


def compact_counts(counts: Iterable[int]) -> str:
    """Slurm's run-length form of per-node counts: ``[4, 4, 2]`` -> ``4(x2),2``."""
    runs: list[list[int]] = []
    for count in counts:
        if runs and runs[-1][0] == count:
            runs[-1][1] += 1
        else:
            runs.append([count, 1])
    return ",".join(f"{value}(x{times})" if times > 1 else str(value) for value, times in runs)


def tasks_per_node(
    ntasks: int | None,
    cpus_per_node: Iterable[int],
    *,
    cpus_per_task: int = 1,
    ntasks_per_node: int | None = None,
) -> list[int]:
    """How many tasks each node gets in the batch environment's (block) layout.

    With ``--ntasks-per-node`` every node gets that many (fewer on the last nodes when
    ``ntasks`` runs out). Without a task count, a node gets as many tasks as its CPUs hold
    (at least one). Otherwise each node gets one task, then nodes are filled in order up to
    what their CPUs hold, and tasks still left over (an overcommitted job) go round-robin.
    """
    cpus = list(cpus_per_node)
    slots = [max(1, count // cpus_per_task) for count in cpus]
    if ntasks_per_node is not None:
        layout = [ntasks_per_node] * len(cpus)
        if ntasks is not None:
            left = ntasks
            for index, wanted in enumerate(layout):
                layout[index] = max(0, min(wanted, left))
                left -= layout[index]
        return layout
    if ntasks is None:
        return slots
    layout = [0] * len(cpus)
    left = ntasks
    for index in range(len(cpus)):
        if left == 0:
            break
        layout[index] = 1
        left -= 1
    for index, slot in enumerate(slots):
        more = min(left, slot - layout[index])
        if more > 0:
            layout[index] += more
            left -= more
    index = 0
    while left > 0:
        layout[index % len(cpus)] += 1
        left -= 1
        index += 1
    return layout


def job_environment(info: JobEnvInfo) -> dict[str, str]:
    """The environment of the batch script on ``info.node_name``.

    The variables are the ones Slurm 22.05's sbatch documents for a batch job (plus
    ``ENVIRONMENT=BATCH`` and the owner ids, which slurmd sets too); a variable tied to an
    option is set only when the option was given. ``SLURM_TASK_PID`` is the batch script's
    own pid, so the launcher adds it at exec time.
    """
    env = dict(info.base_env)
    nodes = list(info.nodes)
    cpus = list(info.cpus_per_node) or [info.cpus_on_node] * len(nodes)
    nodelist = compress(nodes)
    layout = tasks_per_node(
        info.ntasks,
        cpus,
        cpus_per_task=info.cpus_per_task,
        ntasks_per_node=info.ntasks_per_node,
    )
    values: dict[str, object | None] = {
        "ENVIRONMENT": "BATCH",
        "SLURM_JOB_ID": info.job_id,
        "SLURM_JOBID": info.job_id,
        "SLURM_JOB_NAME": info.job_name,
        "SLURM_JOB_NODELIST": nodelist,
        "SLURM_NODELIST": nodelist,
        "SLURM_JOB_NUM_NODES": len(nodes),
        "SLURM_NNODES": len(nodes),
        "SLURM_CPUS_ON_NODE": info.cpus_on_node,
        "SLURM_JOB_CPUS_PER_NODE": compact_counts(cpus),
        "SLURM_TASKS_PER_NODE": compact_counts(layout),
        "SLURM_JOB_PARTITION": info.partition,
        "SLURM_JOB_ACCOUNT": info.account or None,
        "SLURM_JOB_QOS": info.qos or None,
        "SLURM_SUBMIT_DIR": info.submit_dir,
        "SLURM_SUBMIT_HOST": info.submit_host,
        "SLURM_CLUSTER_NAME": info.cluster_name,
        "SLURM_JOB_UID": info.uid,
        "SLURM_JOB_USER": info.user,
        "SLURM_JOB_GID": info.gid,
        "SLURMD_NODENAME": info.node_name,
        "SLURM_NODEID": nodes.index(info.node_name),
        "SLURM_PROCID": 0,
        "SLURM_LOCALID": 0,
        "SLURM_GTIDS": 0,
    }
    if info.ntasks is not None:
        values["SLURM_NTASKS"] = info.ntasks
        values["SLURM_NPROCS"] = info.ntasks
    if info.ntasks_per_node is not None:
        values["SLURM_NTASKS_PER_NODE"] = info.ntasks_per_node
    if info.cpus_per_task_set:
        values["SLURM_CPUS_PER_TASK"] = info.cpus_per_task
    if info.mem_per_node is not None:
        values["SLURM_MEM_PER_NODE"] = info.mem_per_node
    if info.mem_per_cpu is not None:
        values["SLURM_MEM_PER_CPU"] = info.mem_per_cpu
    if info.cpus_per_gpu is not None:
        values["SLURM_CPUS_PER_GPU"] = info.cpus_per_gpu
    if info.mem_per_gpu is not None:
        values["SLURM_MEM_PER_GPU"] = info.mem_per_gpu
    if info.gpus is not None:
        # as Slurm's gres/gpu plugin sets them without device confinement: the node's own
        # indexes of the job's GPUs
        gpus = ",".join(str(index) for index in info.gpus)
        for name in _GPU_VARIABLES:
            values[name] = gpus
    if info.restart_count > 0:
        values["SLURM_RESTART_COUNT"] = info.restart_count
    if info.array_task_id is not None:
        values["SLURM_ARRAY_JOB_ID"] = info.array_job_id
        values["SLURM_ARRAY_TASK_ID"] = info.array_task_id
        values["SLURM_ARRAY_TASK_COUNT"] = info.array_task_count
        values["SLURM_ARRAY_TASK_MIN"] = info.array_task_min
        values["SLURM_ARRAY_TASK_MAX"] = info.array_task_max
        values["SLURM_ARRAY_TASK_STEP"] = info.array_task_step
    env.update({key: str(value) for key, value in values.items() if value is not None})
    return env
