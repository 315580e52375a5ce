"""The plugin author's kit: ``plurm plugin new`` writes packages whose own tests pass as
generated, once installed with pip (here into a temporary target on PYTHONPATH)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from plurm.cli.main import main
from plurm.kit import KitError, new_plugin
from plurm.testing.cluster import TestCluster


def test_plugin_new_writes_packages_whose_tests_pass(tmp_path: Path) -> None:
    policy, guard = tmp_path / "demo", tmp_path / "guard"
    ordering = tmp_path / "ordering"
    assert main(["plugin", "new", "preempt", "demo", "--dir", str(policy)]) == 0
    assert main(["plugin", "new", "guard", "old_jobs", "--dir", str(guard)]) == 0
    assert main(["plugin", "new", "priority", "small_first", "--dir", str(ordering)]) == 0
    target = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
    subprocess.run(
        [*pip, str(policy), str(guard), str(ordering)],
        check=True,
        capture_output=True,
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    for package, tests in ((policy, 4), (guard, 4), (ordering, 4)):
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=package,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 0, run.stdout + run.stderr
        assert f"{tests} passed" in run.stdout
    text = (policy / "plurm_preempt_demo" / "__init__.py").read_text()
    # Every preempt hook is stubbed and documented (the guards' hook is a guard's).
    for hook in ("preempt_preemptable", "preempt_by_partition", "preempt_victims_fixed"):
        assert f"def {hook}(self" in text and f"docs/hooks.md ({hook})" in text
    assert "def preempt_veto" not in text
    assert (
        '[project.entry-points."plurm.preempt"]\ndemo = "plurm_preempt_demo:Demo"'
        in (policy / "pyproject.toml").read_text()
    )
    # Every priority hook is stubbed and documented, in a priority package
    text = (ordering / "plurm_priority_small_first" / "__init__.py").read_text()
    for hook in ("priority_job_set", "priority_recalc", "priority_state_save", "priority_shares"):
        assert f"def {hook}(self" in text and f"docs/hooks.md ({hook})" in text
    assert (
        '[project.entry-points."plurm.priority"]\n'
        'small_first = "plurm_priority_small_first:SmallFirst"'
        in (ordering / "pyproject.toml").read_text()
    )


def test_plugin_new_refuses_what_it_cannot_write(tmp_path: Path) -> None:
    with pytest.raises(KitError, match="not a plugin name"):
        new_plugin("preempt", "Bad-Name", tmp_path / "x")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("")
    with pytest.raises(KitError, match="not empty"):
        new_plugin("preempt", "ok", tmp_path / "full")
    with pytest.raises(KitError, match="no kit for 'select'"):
        new_plugin("select", "ok", tmp_path / "y")


def test_the_test_clusters_sbatch_gives_the_job_id_or_sbatchs_refusal(
    make_cluster: Callable[..., TestCluster],
) -> None:
    cluster = make_cluster(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n1 CPUs=2\n"
        "PartitionName=p Nodes=ALL Default=YES\n"
    )
    job_id = cluster.sbatch("-n2", wrap="sleep 5")
    cluster.settle()
    assert cluster.state(job_id).name == "RUNNING" and cluster.job(job_id).nodes == ("n1",)
    refused = r"sbatch -p nosuch refused: (?s:.*)Batch job submission failed: Invalid partition"
    with pytest.raises(AssertionError, match=refused):
        cluster.sbatch("-p nosuch")
