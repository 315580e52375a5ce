"""A step's layout on its job's nodes and its tasks' environment (pure functions)."""

from __future__ import annotations

import pytest

from plurm.live.steps import StepError, StepLayout, step_layout, task_environment


def test_default_is_one_task_on_each_node_of_the_job() -> None:
    layout = step_layout(["a", "b"], [4, 4], ntasks=None, nodes=None)
    assert layout == StepLayout(["a", "b"], [1, 1])


def test_tasks_fill_nodes_in_blocks_after_one_each() -> None:
    layout = step_layout(["a", "b"], [4, 4], ntasks=6, nodes=None)
    assert layout.tasks == (4, 2)
    assert [layout.placement(t) for t in range(6)] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 0),
        (1, 1),
    ]
    assert list(layout.node_task_ids(1)) == [4, 5]


def test_ntasks_per_node_and_a_node_count() -> None:
    assert step_layout(["a", "b", "c"], [4] * 3, ntasks=None, nodes=2, ntasks_per_node=3) == (
        StepLayout(["a", "b"], [3, 3])
    )


@pytest.mark.parametrize(
    ("ntasks", "nodes", "cpt", "message"),
    [
        (9, None, 1, "More processors requested than permitted"),
        (3, None, 3, "More processors requested than permitted"),
        (None, 3, 1, "Requested node configuration is not available"),
    ],
)
def test_steps_the_job_cannot_hold(
    ntasks: int | None, nodes: int | None, cpt: int, message: str
) -> None:
    with pytest.raises(StepError, match=message):
        step_layout(["a", "b"], [4, 4], ntasks=ntasks, nodes=nodes, cpus_per_task=cpt)


def test_task_environment_names_its_task_step_and_node() -> None:
    layout = StepLayout(["n1", "n2"], [2, 1])
    env = task_environment(
        {"PATH": "/bin", "SLURM_PROCID": "0", "SLURM_NTASKS": "9"},
        job_id=7,
        step_id=3,
        layout=layout,
        task_id=2,
        job_cpus={"n1": 4, "n2": 2},
        cpus_per_task=None,
    )
    assert env["PATH"] == "/bin"
    expected = {
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_ID": "3",
        "SLURM_STEPID": "3",
        "SLURM_PROCID": "2",
        "SLURM_LOCALID": "0",
        "SLURM_NODEID": "1",
        "SLURMD_NODENAME": "n2",
        "SLURM_NTASKS": "3",
        "SLURM_STEP_NUM_TASKS": "3",
        "SLURM_STEP_NODELIST": "n[1-2]",
        "SLURM_STEP_NUM_NODES": "2",
        "SLURM_STEP_TASKS_PER_NODE": "2,1",
        "SLURM_GTIDS": "2",
        "SLURM_CPUS_ON_NODE": "2",
    }
    assert {key: env[key] for key in expected} == expected
    assert "SLURM_CPUS_PER_TASK" not in env
