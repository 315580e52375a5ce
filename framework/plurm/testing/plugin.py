"""pytest fixtures for Plurm and its plugins (registered through the ``pytest11`` entry point).

* ``make_cluster(conf_text, plugins=..., observers=..., qos_text=..., accounts_text=...,
  plurm_text=...)``: a simulated cluster built from slurm.conf text (and qos.conf,
  accounts.conf, plurm.conf) in a temporary directory;
* ``job()``: a :class:`~plurm.testing.cluster.JobBuilder`;
* ``hook_recorder(cluster)``: records every hook call of that cluster.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plurm.testing.cluster import HookRecorder, JobBuilder, TestCluster, build_cluster


@pytest.fixture
def make_cluster(tmp_path: Path) -> Callable[..., TestCluster]:
    """Build a simulated cluster from slurm.conf text."""
    counter = iter(range(1_000_000))

    def make(conf_text: str, **options: Any) -> TestCluster:
        workdir = tmp_path / f"cluster{next(counter)}"
        workdir.mkdir()
        return build_cluster(conf_text, workdir, **options)

    return make


@pytest.fixture
def job() -> Callable[[], JobBuilder]:
    """A fresh job builder: ``job().nodes(2).runtime(60)``."""
    return JobBuilder


@pytest.fixture
def hook_recorder() -> Iterator[Callable[[TestCluster], HookRecorder]]:
    """Record the hook calls of a cluster: ``recorder = hook_recorder(cluster)``."""
    recorders: list[HookRecorder] = []

    def attach(cluster: TestCluster) -> HookRecorder:
        recorder = HookRecorder(cluster.plugins.manager)
        recorders.append(recorder)
        return recorder

    yield attach
    for recorder in recorders:
        recorder.close()
