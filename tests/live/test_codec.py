"""The JSON codec: round trips, and strict decoding of anything else."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plurm import conf
from plurm.conf.model import PartitionSpec
from plurm.live.codec import (
    FORMAT_VERSION,
    CodecError,
    condition_from_dict,
    condition_to_dict,
    job_from_dict,
    job_to_dict,
    partition_from_dict,
    partition_to_dict,
    request_from_dict,
    request_to_dict,
)
from plurm.model.job import Dependency, Job, JobRequest, JobState, PendingReason
from plurm.model.node import NodeCondition
from tests.conftest import REPO


def _json(value: object) -> Any:
    """Through real JSON text, as the network and the store carry it."""
    return json.loads(json.dumps(value, allow_nan=False))


def _request() -> JobRequest:
    return JobRequest(
        name="train",
        user="alice",
        uid=1000,
        group="users",
        gid=100,
        partitions=("gpu", "cpu"),
        qos="high",
        account="physics",
        min_nodes=2,
        max_nodes=4,
        ntasks=8,
        cpus_per_task=2,
        mem_per_cpu=2048,
        time_limit=90,
        begin_time=12.5,
        requeue=False,
        nodelist=("n1", "n2"),
        exclude=("n9",),
        exclusive=True,
        sim_runtime=30.0,
        nice=-5,
        command="#!/bin/sh\nsrun hostname\n",
        work_dir="/home/alice",
        stdout="out-%j.txt",
    )


def _job() -> Job:
    return Job(
        job_id=42,
        request=_request(),
        submit_time=3.25,
        partition="gpu",
        priority=4294901757,
        account="physics",
        qos="high",
        state=JobState.COMPLETING,
        reason=PendingReason.NODES_RESERVED,
        nodes=("n1", "n2"),
        eligible_time=12.5,
        start_time=13.0,
        end_time=100.0,
        units=frozenset({("n1", 0), ("n1", 1), ("n2", 0)}),
        exit_code=0,
        exit_signal=15,
        time_limit=90,
        completing_nodes=("n1",),
        unavailable_nodes=("n3",),
        requeued_allocation=("n4",),
    )


def test_format_version_is_an_int() -> None:
    assert isinstance(FORMAT_VERSION, int) and FORMAT_VERSION >= 1


def test_job_round_trip_through_json() -> None:
    job = _job()
    encoded = job_to_dict(job)
    assert encoded["state"] == "CG"
    assert encoded["reason"] == PendingReason.NODES_RESERVED.value
    assert encoded["units"] == [["n1", 0], ["n1", 1], ["n2", 0]]
    assert encoded["request"]["partitions"] == ["gpu", "cpu"]
    assert job_from_dict(_json(encoded)) == job
    # the same object always gives the same text
    assert json.dumps(job_to_dict(job)) == json.dumps(encoded)


def test_a_default_job_round_trips() -> None:
    job = Job(1, JobRequest(), 0.0, "debug")
    assert job_from_dict(_json(job_to_dict(job))) == job


def test_an_array_record_with_dependencies_and_a_hold_round_trips() -> None:
    """What a restarted plurmctld needs to keep arrays, dependencies and holds."""
    request = attrs.evolve(
        _request(),
        array_tasks=(1, 3, 5, 7),
        array_throttle=2,
        dependency="afterok:12?afternotok:13_2",
        hold=True,
    )
    job = Job(
        7,
        request,
        1.0,
        "gpu",
        priority=0,
        reason=PendingReason.JOB_HELD_ADMIN,
        array_job_id=5,
        array_pending=(3, 5, 7),
        dependencies=(
            Dependency("afterok", 12, whole_array=True, state="failed", any=True),
            Dependency("afternotok", 13, task=2, any=True),
            Dependency("singleton"),
        ),
    )
    decoded = job_from_dict(_json(job_to_dict(job)))
    assert decoded == job
    assert decoded.held and decoded.display_id == "5_[3,5,7%2]"
    task = Job(8, request, 1.0, "gpu", array_job_id=5, array_task_id=1)
    assert job_from_dict(_json(job_to_dict(task))).display_id == "5_1"


def test_a_job_saved_before_arrays_existed_still_decodes() -> None:
    encoded = job_to_dict(Job(1, JobRequest(), 0.0, "debug"))
    for key in ("array_job_id", "array_task_id", "array_pending", "dependencies"):
        del encoded[key]
    for key in ("array_tasks", "array_throttle", "dependency", "hold"):
        del encoded["request"][key]
    assert job_from_dict(_json(encoded)) == Job(1, JobRequest(), 0.0, "debug")


def test_a_victims_preemptor_round_trips_and_older_records_have_none() -> None:
    """Format 5: scontrol explain names a victim's preemptor after a plurmctld restart."""
    job = Job(3, JobRequest(), 0.0, "debug", preempt_time=50.0, preemptions=1, preempted_by=9)
    encoded = job_to_dict(job)
    assert encoded["preempted_by"] == 9
    assert job_from_dict(_json(encoded)) == job
    del encoded["preempted_by"]  # saved by format 4
    assert job_from_dict(_json(encoded)).preempted_by is None


def test_request_round_trip() -> None:
    assert request_from_dict(_json(request_to_dict(_request()))) == _request()


def test_whole_numbers_are_accepted_for_times() -> None:
    encoded = job_to_dict(_job())
    encoded["submit_time"] = 3
    job = job_from_dict(encoded)
    assert job.submit_time == 3.0 and type(job.submit_time) is float


@pytest.mark.parametrize("conf_dir", ["seed-three-partitions", "seed-suspend-gang", "sdsc-sp2"])
def test_partitions_round_trip(conf_dir: str) -> None:
    config = conf.load(REPO / "conf" / conf_dir / "slurm.conf")
    for partition in config.partitions:
        decoded = partition_from_dict(_json(partition_to_dict(partition)))
        assert decoded == partition
        assert decoded.location == partition.location


def test_the_encoder_gives_what_cattrs_unstructures() -> None:
    """Encoding is a small function of its own (commands need not import cattrs); it gives
    exactly the dicts the converter that decodes them would give."""
    from plurm.live.codec import _converter, job_to_dict, record_to_dict
    from plurm.model.acct import JobRecord, records_from_jobs

    converter = _converter()
    jobs = [_job(), Job(1, JobRequest(), 0.0, "debug")]
    for job in jobs:
        assert job_to_dict(job) == converter.unstructure(job, Job)
        assert request_to_dict(job.request) == converter.unstructure(job.request, JobRequest)
    for record in records_from_jobs(jobs, 200.0, alloc_cpus=lambda job: 3):
        assert record_to_dict(record) == converter.unstructure(record, JobRecord)
    for conf_dir in ("seed-three-partitions", "seed-suspend-gang", "sdsc-sp2"):
        for partition in conf.load(REPO / "conf" / conf_dir / "slurm.conf").partitions:
            assert partition_to_dict(partition) == converter.unstructure(partition, PartitionSpec)
    condition = NodeCondition(down=True, drain=True, reason="disk", since=7.0, failed=True)
    assert condition_to_dict(condition) == converter.unstructure(condition, NodeCondition)


def test_condition_round_trip() -> None:
    condition = NodeCondition(down=True, drain=True, reason="disk", since=7.0, failed=True)
    assert condition_from_dict(_json(condition_to_dict(condition))) == condition


def _set(data: dict[str, Any], path: str, value: object) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    target = out
    *parents, last = path.split(".")
    for key in parents:
        target = target[key]
    target[last] = value
    return out


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("job_id", True, "job.job_id"),
        ("job_id", "42", "job.job_id"),
        ("job_id", 1 << 63, "64-bit"),
        ("job_id", -(1 << 64), "64-bit"),
        ("job_id", 4.0, "job.job_id"),
        ("submit_time", math.nan, "finite"),
        ("submit_time", math.inf, "finite"),
        ("submit_time", -math.inf, "job.submit_time"),
        ("submit_time", False, "job.submit_time"),
        ("start_time", "now", "job.start_time"),
        ("state", "RUNNING", "unknown JobState"),
        ("state", 1, "job.state"),
        ("reason", "Bogus", "unknown PendingReason"),
        ("nodes", "n1", "job.nodes"),
        ("nodes", ["n1", 2], "job.nodes"),
        ("units", [["n1"]], "job.units"),
        ("units", [["n1", True]], "job.units"),
        ("request.min_nodes", True, "job.request.min_nodes"),
        ("request.name", None, "job.request.name"),
        ("request.partitions", {"a": 1}, "job.request.partitions"),
        ("request.exclusive", 1, "job.request.exclusive"),
        ("request.begin_time", math.nan, "job.request.begin_time"),
        ("request", [], "job.request"),
    ],
)
def test_malformed_jobs_are_refused_naming_the_field(
    path: str, value: object, message: str
) -> None:
    with pytest.raises(CodecError, match=message.replace(".", r"\.")):
        job_from_dict(_set(job_to_dict(_job()), path, value))


def test_missing_and_unknown_fields_are_refused() -> None:
    encoded = job_to_dict(_job())
    del encoded["partition"]
    with pytest.raises(CodecError, match=r"required field missing @ job\.partition"):
        job_from_dict(encoded)
    encoded = job_to_dict(_job())
    encoded["request"]["shell"] = "/bin/sh"
    with pytest.raises(CodecError, match=r"unknown fields \(shell\) @ job\.request"):
        job_from_dict(encoded)


@pytest.mark.parametrize("value", [None, [], "job", 7, 1.5, True])
def test_non_objects_are_refused(value: object) -> None:
    for decode in (job_from_dict, request_from_dict, partition_from_dict, condition_from_dict):
        with pytest.raises(CodecError, match="expected an object"):
            decode(value)


def test_partition_extra_values_must_be_strings() -> None:
    config = conf.load(REPO / "conf" / "seed-three-partitions" / "slurm.conf")
    encoded = partition_to_dict(config.partitions[0])
    encoded["extra"] = {"Foo": 1}
    with pytest.raises(CodecError, match=r"partition\.extra"):
        partition_from_dict(encoded)
    encoded["extra"] = {"Foo": "bar"}
    assert partition_from_dict(encoded).extra == {"Foo": "bar"}
    encoded["oversubscribe"] = {"kind": "SOMETIMES", "count": 1}
    with pytest.raises(CodecError, match="OverSubscribeKind"):
        partition_from_dict(encoded)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["PD", "R", "CD", "NO", "YES", "REQUEUE", "None", "n1"]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)

Decoder = Callable[[object], object]
DECODERS: list[tuple[Decoder, Callable[[], dict[str, Any]]]] = [
    (job_from_dict, lambda: job_to_dict(_job())),
    (request_from_dict, lambda: request_to_dict(_request())),
    (condition_from_dict, lambda: condition_to_dict(NodeCondition(down=True, reason="x"))),
    (
        partition_from_dict,
        lambda: partition_to_dict(
            conf.load(REPO / "conf" / "seed-three-partitions" / "slurm.conf").partitions[1]
        ),
    ),
]


def _decodes_or_refuses(decode: Decoder, data: object) -> None:
    try:
        decoded = decode(data)
    except CodecError:
        return
    assert decoded is not None


@pytest.mark.parametrize(("decode", "valid"), DECODERS)
@settings(max_examples=150, deadline=None)
@given(data=json_values)
def test_fuzz_arbitrary_json(
    decode: Decoder, valid: Callable[[], dict[str, Any]], data: object
) -> None:
    _decodes_or_refuses(decode, data)


@pytest.mark.parametrize(("decode", "valid"), DECODERS)
@settings(max_examples=150, deadline=None)
@given(key_value=st.data())
def test_fuzz_one_field_replaced(
    decode: Decoder, valid: Callable[[], dict[str, Any]], key_value: st.DataObject
) -> None:
    """A valid object with one field replaced by anything: decoded (and then re-encodable)
    or refused with a CodecError."""
    encoded = valid()
    key = key_value.draw(st.sampled_from(sorted(encoded)))
    encoded[key] = key_value.draw(json_values)
    _decodes_or_refuses(decode, encoded)
