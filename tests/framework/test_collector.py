"""The collector's batch settings: on while a replay runs, put back when it ends."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from plurm import conf
from plurm.sim.collector import BATCH_THRESHOLDS, batch_collection
from plurm.sim.trace import replay
from plurm.workload import clean, parse_swf


@pytest.fixture(autouse=True)
def _default_collector() -> Iterator[None]:
    """Each test starts from Python's defaults and leaves them so, whatever it does."""
    thresholds = gc.get_threshold()
    gc.unfreeze()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_a_replay_runs_with_the_batch_settings_and_puts_them_back(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(
        "ClusterName=t\nSlurmctldHost=h\nSelectType=select/linear\n"
        "NodeName=n[1-2] CPUs=1 RealMemory=100\nPartitionName=p Nodes=ALL Default=YES\n"
    )
    config = conf.load(path)
    # 1,000 jobs: the progress callback is called at the 1,000th and at the end
    lines = (f"{i} {i} -1 5 1 -1 -1 1 60 -1 1 1 1 1 1 1 -1 -1\n" for i in range(1, 1001))
    trace = clean(parse_swf("".join(lines)))
    before = gc.get_threshold()
    seen: list[tuple[tuple[int, ...], int, int, int]] = []

    def progress(simulated: float, submitted: int, ended: int) -> None:
        seen.append((gc.get_threshold(), gc.get_freeze_count(), submitted, ended))

    records = replay(trace, config, progress=progress)
    assert len(seen) == 2
    for thresholds, frozen, _, _ in seen:
        assert thresholds == BATCH_THRESHOLDS
        assert frozen > 0  # what existed before the replay
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    # progress counts the jobs ended so far: each runs 5 s on one of two nodes
    submitted = float(records[999].submit)
    ended_by = sum(1 for r in records if r.end is not None and r.end <= submitted)
    ended_before = sum(1 for r in records if r.end is not None and r.end < submitted)
    assert seen[0][2] == 1000 and ended_before <= seen[0][3] <= ended_by
    assert seen[1][2:] == (1000, 1000)


def test_nested_runs_restore_only_when_the_outer_one_ends() -> None:
    before = gc.get_threshold()
    with batch_collection():
        frozen = gc.get_freeze_count()
        with batch_collection():
            assert gc.get_freeze_count() == frozen  # frozen once
        assert gc.get_threshold() == BATCH_THRESHOLDS
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_settings_come_back_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), batch_collection():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_someone_elses_freeze_is_left_to_them() -> None:
    gc.freeze()
    frozen = gc.get_freeze_count()
    made = [[index] for index in range(1000)]  # what a second freeze would take too
    with batch_collection():
        assert gc.get_freeze_count() < frozen + len(made)  # not frozen again
        assert gc.get_threshold() == BATCH_THRESHOLDS
    # not unfrozen by the replay (the count drops only as frozen objects die)
    assert gc.get_freeze_count() > frozen - len(made)
