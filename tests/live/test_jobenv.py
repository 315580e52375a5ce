"""plurm.live.jobenv: sbatch's filename patterns and the batch script's environment."""

from __future__ import annotations

from typing import Any

import pytest

from plurm.live.jobenv import (
    NO_VAL,
    JobEnvInfo,
    compact_counts,
    expand_pattern,
    job_environment,
    tasks_per_node,
)

JOB = {"job_id": 128, "job_name": "sim", "user": "alice", "node": "n01.cluster.example"}


def expand(pattern: str, **extra: Any) -> str:
    return expand_pattern(pattern, **{**JOB, **extra})


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("slurm-%j.out", "slurm-128.out"),
        ("job%J.out", "job128.batch.out"),
        ("job%4j.out", "job0128.out"),
        ("%x-%u.log", "sim-alice.log"),
        ("%N.out", "n01.out"),
        ("%n-%t-%s", "0-0-batch"),
        ("100%%", "100%"),
        ("%%j", "%j"),
        ("%%%j", "%128"),
        # A non-array job: %A is the job id, %a Slurm's "no value".
        ("%A_%a", f"128_{NO_VAL}"),
        # Widths: zero-padding for numbers, ignored for names, capped at 10.
        ("%10j", "0000000128"),
        ("%12j", "0000000128"),
        ("%5u%3x", "alicesim"),
        # Unknown letters are kept as written, digits included.
        ("%z%5q", "%z%5q"),
        ("end%", "end%"),
        ("end%12", "end%12"),
        # A backslash turns expansion off; the backslashes go.
        ("\\%j-%x.out", "%j-%x.out"),
        ("/abs/path/out", "/abs/path/out"),
    ],
)
def test_expand_pattern(pattern: str, expected: str) -> None:
    assert expand(pattern) == expected


def test_expand_pattern_array_task() -> None:
    # %j of an array task is its own job id; %A the master's.
    kwargs = {"job_id": 131, "array_job_id": 128, "array_task_id": 3}
    assert expand("%A_%a.out", **kwargs) == "128_3.out"
    assert expand("%A_%3a-%j", **kwargs) == "128_003-131"


def test_expand_pattern_step_task_node() -> None:
    assert expand("%J", step_id=2) == "128.2"
    assert expand("%s-%2s", step_id=2) == "2-02"
    assert expand("%n-%3t", task_id=5, node_index=1) == "1-005"


def info(**overrides: Any) -> JobEnvInfo:
    fields: dict[str, Any] = {
        "job_id": 42,
        "job_name": "sim",
        "user": "alice",
        "uid": 1000,
        "gid": 100,
        "partition": "batch",
        "account": "physics",
        "qos": "normal",
        "nodes": ("n1",),
        "node_name": "n1",
        "cpus_on_node": 4,
        "ntasks": 1,
        "submit_dir": "/home/alice",
        "submit_host": "login1",
        "cluster_name": "plurm",
        "base_env": {"PATH": "/usr/bin", "HOME": "/home/alice", "SLURM_JOB_ID": "stale"},
    }
    fields.update(overrides)
    return JobEnvInfo(**fields)


def test_environment_single_node() -> None:
    env = job_environment(info())
    expected = {
        "PATH": "/usr/bin",
        "HOME": "/home/alice",
        "ENVIRONMENT": "BATCH",
        "SLURM_JOB_ID": "42",
        "SLURM_JOBID": "42",
        "SLURM_JOB_NAME": "sim",
        "SLURM_JOB_NODELIST": "n1",
        "SLURM_NODELIST": "n1",
        "SLURM_JOB_NUM_NODES": "1",
        "SLURM_NNODES": "1",
        "SLURM_NTASKS": "1",
        "SLURM_NPROCS": "1",
        "SLURM_CPUS_ON_NODE": "4",
        "SLURM_JOB_CPUS_PER_NODE": "4",
        "SLURM_TASKS_PER_NODE": "1",
        "SLURM_JOB_PARTITION": "batch",
        "SLURM_JOB_ACCOUNT": "physics",
        "SLURM_JOB_QOS": "normal",
        "SLURM_SUBMIT_DIR": "/home/alice",
        "SLURM_SUBMIT_HOST": "login1",
        "SLURM_CLUSTER_NAME": "plurm",
        "SLURM_JOB_UID": "1000",
        "SLURM_JOB_USER": "alice",
        "SLURM_JOB_GID": "100",
        "SLURMD_NODENAME": "n1",
        "SLURM_NODEID": "0",
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
        "SLURM_GTIDS": "0",
    }
    assert env == expected


def test_environment_multi_node_compact_forms() -> None:
    env = job_environment(
        info(
            nodes=("n1", "n2", "n3"),
            node_name="n1",
            cpus_per_node=(4, 4, 2),
            ntasks=5,
            cpus_per_task=2,
            cpus_per_task_set=True,
            mem_per_node=2048,
        )
    )
    assert env["SLURM_JOB_NODELIST"] == env["SLURM_NODELIST"] == "n[1-3]"
    assert env["SLURM_JOB_NUM_NODES"] == "3"
    assert env["SLURM_JOB_CPUS_PER_NODE"] == "4(x2),2"
    assert env["SLURM_TASKS_PER_NODE"] == "2(x2),1"
    assert env["SLURM_CPUS_PER_TASK"] == "2"
    assert env["SLURM_MEM_PER_NODE"] == "2048"
    assert "SLURM_MEM_PER_CPU" not in env


def test_environment_options_only_when_given() -> None:
    env = job_environment(info(ntasks=None, account=None, qos=None, cpus_on_node=8))
    for name in (
        "SLURM_NTASKS",
        "SLURM_NPROCS",
        "SLURM_CPUS_PER_TASK",
        "SLURM_MEM_PER_NODE",
        "SLURM_NTASKS_PER_NODE",
        "SLURM_RESTART_COUNT",
        "SLURM_ARRAY_TASK_ID",
        "SLURM_JOB_ACCOUNT",
        "SLURM_JOB_QOS",
        "SLURM_TASK_PID",
        "SLURM_JOB_GROUP",
    ):
        assert name not in env, name
    # Without a task count a node holds as many tasks as CPUs.
    assert env["SLURM_TASKS_PER_NODE"] == "8"


def test_environment_on_a_later_node_and_requeued() -> None:
    env = job_environment(
        info(nodes=("a1", "a2"), node_name="a2", restart_count=2, ntasks_per_node=2, ntasks=4)
    )
    assert env["SLURM_NODEID"] == "1"
    assert env["SLURMD_NODENAME"] == "a2"
    assert env["SLURM_RESTART_COUNT"] == "2"
    assert env["SLURM_NTASKS_PER_NODE"] == "2"
    assert env["SLURM_TASKS_PER_NODE"] == "2(x2)"


def test_environment_array_task() -> None:
    env = job_environment(
        info(
            job_id=131,
            array_job_id=128,
            array_task_id=3,
            array_task_count=4,
            array_task_min=0,
            array_task_max=6,
            array_task_step=2,
        )
    )
    assert env["SLURM_JOB_ID"] == "131"
    assert {key: value for key, value in env.items() if key.startswith("SLURM_ARRAY")} == {
        "SLURM_ARRAY_JOB_ID": "128",
        "SLURM_ARRAY_TASK_ID": "3",
        "SLURM_ARRAY_TASK_COUNT": "4",
        "SLURM_ARRAY_TASK_MIN": "0",
        "SLURM_ARRAY_TASK_MAX": "6",
        "SLURM_ARRAY_TASK_STEP": "2",
    }


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nodes": ()}, "at least one node"),
        ({"node_name": "n9"}, "not one of the job's nodes"),
        ({"cpus_per_node": (1, 2)}, "one count per node"),
        ({"cpus_per_task": 0}, "at least 1"),
    ],
)
def test_info_is_checked(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        info(**overrides)


def test_compact_counts() -> None:
    assert compact_counts([]) == ""
    assert compact_counts([1]) == "1"
    assert compact_counts([2, 2, 2, 1, 2]) == "2(x3),1,2"


@pytest.mark.parametrize(
    ("ntasks", "cpus", "kwargs", "expected"),
    [
        (1, [4, 4], {}, [1, 0]),
        (2, [4, 4], {}, [1, 1]),
        (6, [4, 4], {}, [4, 2]),
        (5, [4, 4, 2], {"cpus_per_task": 2}, [2, 2, 1]),
        # Overcommitted: what does not fit goes round-robin.
        (7, [2, 2], {}, [4, 3]),
        (None, [4, 3], {"cpus_per_task": 2}, [2, 1]),
        (None, [1], {"cpus_per_task": 2}, [1]),
        (3, [8, 8], {"ntasks_per_node": 2}, [2, 1]),
        (None, [8, 8], {"ntasks_per_node": 3}, [3, 3]),
    ],
)
def test_tasks_per_node(
    ntasks: int | None, cpus: list[int], kwargs: dict[str, int], expected: list[int]
) -> None:
    assert tasks_per_node(ntasks, cpus, **kwargs) == expected


def test_a_job_given_gpus_sees_their_indexes() -> None:
    env = job_environment(info(gpus=(1, 3)))
    for name in ("CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"):
        assert env[name] == "1,3"
    assert env["SLURM_JOB_GPUS"] == "1,3"
    assert "CUDA_VISIBLE_DEVICES" not in job_environment(info())


def test_cpus_and_memory_per_gpu_only_when_given() -> None:
    env = job_environment(info(gpus=(0,), cpus_per_gpu=4, mem_per_gpu=2048))
    assert (env["SLURM_CPUS_PER_GPU"], env["SLURM_MEM_PER_GPU"]) == ("4", "2048")
    plain = job_environment(info(gpus=(0,)))
    assert "SLURM_CPUS_PER_GPU" not in plain and "SLURM_MEM_PER_GPU" not in plain
