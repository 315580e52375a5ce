"""plurm.live.rest: slurmrestd 22.05's v0.0.38 responses rendered from a simulated cluster,
checked against a golden file and the spec's field names, and job/submit bodies parsed."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plurm.commands.client import LocalClient, cpus_in_use
from plurm.commands.timefmt import EPOCH
from plurm.live import rest
from plurm.live.rest import RestError, SubmitRequest, parse_job_submit
from plurm.testing.cluster import TestCluster

DATA = Path(__file__).resolve().parents[1] / "data" / "rest"
SPEC = json.loads((DATA / "v0.0.38-keys.json").read_text())
GOLDEN = DATA / "golden.json"

# The five-node SUSPEND,GANG example (conf/seed-suspend-gang): a 3-node job in hipri
# suspends three of five 1-node jobs in active.
CONF = """
ClusterName=seed
SlurmctldHost=n16
SelectType=select/linear
SelectTypeParameters=CR_Memory
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
NodeName=n[12-16] CPUs=1 RealMemory=1000
PartitionName=DEFAULT OverSubscribe=FORCE:1 Nodes=n[12-16]
PartitionName=active PriorityTier=1 Default=YES
PartitionName=hipri PriorityTier=2 MaxTime=60
"""

#: Keys slurmrestd 22.05's code writes that its spec does not list (jobs.c writes
#: tasks_per_node; job_resources says allocated_cores instead of allocated_cpus under
#: CR_Core or CR_Socket).
EXTRA = {
    "v0.0.38_job_response_properties": {"tasks_per_node"},
    "v0.0.38_job_resources": {"allocated_cores"},
}
#: Keys of the spec that slurmrestd leaves out: job_resources for a job without an
#: allocation; two backfill statistics diag.c never writes; allocated_cpus when it writes
#: allocated_cores.
MISSING = {
    "v0.0.38_job_response_properties": {"job_resources"},
    "v0.0.38_diag.statistics": {"bf_last_depth", "bf_last_depth_try"},
    "v0.0.38_job_resources": {"allocated_cpus", "allocated_cores"},
}


def check_keys(obj: dict[str, Any], schema: str) -> None:
    spec = set(SPEC[schema])
    if schema.endswith(("_response", "_pings", "_diag")):
        spec.add("meta")  # every response's, from api.c rather than the spec
    keys = set(obj)
    assert keys - spec <= EXTRA.get(schema, set()), (schema, keys - spec)
    assert spec - keys <= MISSING.get(schema, set()), (schema, spec - keys)


def check_meta(response: dict[str, Any]) -> None:
    assert response["meta"] == {
        "plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"},
        "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"},
    }
    assert isinstance(response["errors"], list)


@pytest.fixture
def cluster(make_cluster: Callable[..., TestCluster]) -> TestCluster:
    cluster = make_cluster(CONF)
    for _ in range(5):
        cluster.command("sbatch -p active --wrap='sleep 300'")
    cluster.run_until(5)
    cluster.command("sbatch -p hipri -N 3 -J big --wrap='sleep 120'")
    cluster.command("sbatch -p hipri -N 5 --begin=now+3600 -J later --wrap='sleep 1'")
    cluster.command("sbatch -p active -o out-%j.txt --wrap='exit 3'")
    cluster.run_until(9)
    return cluster


def render(cluster: TestCluster) -> dict[str, Any]:
    controller = cluster.controller
    state = controller.cluster
    now = controller.now
    return {
        "jobs": rest.jobs_response(state.jobs.values(), state, now),
        "nodes": rest.nodes_response(
            state.config.node_names, state, cpus_in_use(LocalClient(controller).view())
        ),
        "partitions": rest.partitions_response(state.partitions.values(), state),
        "ping": rest.ping_response("n16", True),
        "diag": rest.diag_response({"jobs_submitted": 8, "server_thread_count": 3}),
    }


def test_responses_match_the_golden_file(cluster: TestCluster) -> None:
    # the cluster's working directory is a temporary one: name it the same on every run
    text = json.dumps(render(cluster)).replace(str(cluster.workdir), "/home/user")
    rendered = json.loads(text)
    if os.environ.get("PLURM_REGEN_GOLDEN"):
        GOLDEN.write_text(json.dumps(rendered, indent=1, sort_keys=True) + "\n")
    assert rendered == json.loads(GOLDEN.read_text())


def test_every_object_has_the_fields_of_v0_0_38(cluster: TestCluster) -> None:
    out = render(cluster)
    for response in out.values():
        check_meta(response)
    check_keys(out["jobs"], "v0.0.38_jobs_response")
    for job in out["jobs"]["jobs"]:
        check_keys(job, "v0.0.38_job_response_properties")
        if "job_resources" in job:
            check_keys(job["job_resources"], "v0.0.38_job_resources")
    check_keys(out["nodes"], "v0.0.38_nodes_response")
    for node in out["nodes"]["nodes"]:
        check_keys(node, "v0.0.38_node")
    check_keys(out["partitions"], "v0.0.38_partitions_response")
    for part in out["partitions"]["partitions"]:
        check_keys(part, "v0.0.38_partition")
    check_keys(out["ping"], "v0.0.38_pings")
    for ping in out["ping"]["pings"]:
        check_keys(ping, "v0.0.38_ping")
    check_keys(out["diag"], "v0.0.38_diag")
    check_keys(out["diag"]["statistics"], "v0.0.38_diag.statistics")


def test_jobs_show_slurm_state_names_unix_times_and_hostlists(cluster: TestCluster) -> None:
    jobs = {job["job_id"]: job for job in render(cluster)["jobs"]["jobs"]}
    epoch = int(EPOCH.timestamp())
    assert [jobs[i]["job_state"] for i in range(1, 9)] == [
        "SUSPENDED",
        "SUSPENDED",
        "SUSPENDED",
        "RUNNING",
        "RUNNING",
        "RUNNING",
        "PENDING",
        "PENDING",
    ]
    big = jobs[6]
    assert big["nodes"] == "n[12-14]"
    assert big["node_count"] == 3
    assert big["batch_host"] == "n12"
    assert big["name"] == "big"
    assert big["partition"] == "hipri"
    assert big["time_limit"] == 60
    assert big["submit_time"] == epoch + 5
    assert big["start_time"] == epoch + 6  # at the pass that follows the submission
    assert big["end_time"] == epoch + 6 + 3600
    assert big["job_resources"]["allocated_hosts"] == 3
    assert jobs[1]["suspend_time"] == epoch + 6
    assert jobs[1]["time_limit"] is None  # UNLIMITED
    assert jobs[1]["end_time"] == 0  # none expected (scontrol: EndTime=Unknown)
    later = jobs[7]
    assert later["state_reason"] == "BeginTime"
    assert later["start_time"] == epoch + 5 + 3600
    assert later["nodes"] is None and later["batch_host"] is None
    assert "job_resources" not in later
    assert jobs[8]["standard_output"] == "out-8.txt"
    assert all(isinstance(job["job_state"], str) for job in jobs.values())


def test_a_finished_job_shows_its_exit_code_as_a_wait_status(cluster: TestCluster) -> None:
    cluster.command("sbatch -p hipri -w n15 --wrap='exit 3'")
    cluster.run_until(400)
    jobs = {job["job_id"]: job for job in render(cluster)["jobs"]["jobs"]}
    done = jobs[9]
    assert done["job_state"] == "FAILED"
    assert done["exit_code"] == 3 << 8
    assert done["state_reason"] == "NonZeroExitCode"
    assert done["required_nodes"] == "n15"


def test_nodes_and_partitions(cluster: TestCluster) -> None:
    out = render(cluster)
    nodes = {node["name"]: node for node in out["nodes"]["nodes"]}
    assert nodes["n12"]["state"] == "allocated"
    assert nodes["n12"]["alloc_cpus"] == 1 and nodes["n12"]["idle_cpus"] == 0
    assert nodes["n12"]["partitions"] == ["active", "hipri"]
    assert nodes["n12"]["state_flags"] == []
    parts = {part["name"]: part for part in out["partitions"]["partitions"]}
    assert parts["active"]["flags"] == ["default"]
    assert parts["active"]["preemption_mode"] == ["suspend", "gang_schedule"]
    assert parts["active"]["max_time_limit"] == -1
    assert parts["hipri"]["max_time_limit"] == 60
    assert parts["hipri"]["nodes"] == "n[12-16]"
    assert parts["hipri"]["total_cpus"] == 5


def test_a_drained_node_says_so(cluster: TestCluster) -> None:
    cluster.command("scontrol update NodeName=n16 State=DRAIN Reason=disk")
    node = render(cluster)["nodes"]["nodes"][4]
    # draining: its job runs on
    assert (node["name"], node["state"], node["state_flags"]) == ("n16", "allocated", ["DRAIN"])
    assert node["reason"] == "disk" and node["reason_set_by_user"] == "root"


def test_ping_and_diag() -> None:
    ping = rest.ping_response("ctl", False, mode="backup")
    assert ping["pings"] == [{"hostname": "ctl", "ping": "DOWN", "status": -1, "mode": "backup"}]
    diag = rest.diag_response({"jobs_started": 4, "bf_active": 1, "unknown": 7})
    assert diag["statistics"]["jobs_started"] == 4
    assert diag["statistics"]["jobs_failed"] == 0
    assert diag["statistics"]["bf_active"] is True
    assert "unknown" not in diag["statistics"]


# ------------------------------------------------------------------------------ job/submit


def body(job: dict[str, Any] | None = None, **top: Any) -> bytes:
    payload: dict[str, Any] = {"script": "#!/bin/sh\nsleep 10\n"}
    payload["job"] = {"environment": {"PATH": "/bin"}} if job is None else job
    payload.update(top)
    return json.dumps(payload).encode()


def test_a_full_submission_maps_onto_job_request() -> None:
    job = {
        "name": "demo",
        "partition": "hipri",
        "qos": "high",
        "account": "physics",
        "nodes": [2, 4],
        "tasks": 8,
        "cpus_per_task": "2",
        "memory_per_node": "2G",
        "time_limit": 90,
        "begin_time": int(EPOCH.timestamp()) + 600,
        "requeue": False,
        "nodelist": "n[12-13]",
        "exclude_nodes": "n16",
        "exclusive": "true",
        "current_working_directory": "/tmp",
        "standard_output": "/tmp/out-%j",
        "standard_error": "/tmp/err-%j",
        "environment": {"PATH": "/bin:/usr/bin", "N": 3},
        "array": "1-4",
        "dependency": "afterok:1",
        "hold": True,
        "nice": 10,
        "signal": "B:USR1@60",
        "mail_type": "END",
    }
    parsed = parse_job_submit(body(job, ignored_top_level_key=1))
    request = parsed.request
    assert parsed.script == request.command == "#!/bin/sh\nsleep 10\n"
    assert (request.name, request.partitions, request.qos, request.account) == (
        "demo",
        ("hipri",),
        "high",
        "physics",
    )
    assert (request.min_nodes, request.max_nodes, request.ntasks) == (2, 4, 8)
    assert (request.cpus_per_task, request.mem_per_node, request.time_limit) == (2, 2048, 90)
    assert request.begin_time == 600.0
    assert request.requeue is False and request.exclusive is True
    assert request.nodelist == ("n12", "n13") and request.exclude == ("n16",)
    assert (request.work_dir, request.stdout, request.nice) == ("/tmp", "/tmp/out-%j", 10)
    assert parsed.environment == (("PATH", "/bin:/usr/bin"), ("N", "3"))
    assert (parsed.stderr, parsed.array, parsed.dependency) == ("/tmp/err-%j", "1-4", "afterok:1")
    assert parsed.hold is True and parsed.signal == "B:USR1@60"
    assert parsed.extra == {"mail_type": "END"}


def test_keys_are_read_in_any_case_and_time_limits_as_slurm_times() -> None:
    parsed = parse_job_submit(
        body({"Environment": {"A": "1"}, "TIME_LIMIT": "1-00:00", "NODES": "3"})
    )
    assert parsed.request.time_limit == 1440
    assert (parsed.request.min_nodes, parsed.request.max_nodes) == (3, 3)


def refusal(raw: bytes) -> RestError:
    with pytest.raises(RestError) as caught:
        parse_job_submit(raw)
    return caught.value


def test_an_unknown_job_key_is_refused_as_slurmrestd_does() -> None:
    error = refusal(body({"environment": {"A": "1"}, "colour": "blue"}))
    assert error.errno == 9001
    assert list(error.errors) == [
        {"description": 'Unknown key "colour"', "source": "hsearch_r"},
        {"error_code": 9001, "error": "Failure during parsing"},
    ]
    response = error.response()
    check_meta(response)
    assert response["errors"] == list(error.errors)


def test_a_disabled_key_is_refused() -> None:
    error = refusal(body({"environment": {"A": "1"}, "excluded_nodes": "n1"}))
    assert error.errors[0]["description"] == 'Disabled key: "excluded_nodes"'


@pytest.mark.parametrize(
    ("raw", "errno", "first"),
    [
        (b"not json", 9001, "Unable to parse query"),
        (b"[1, 2]", 2009, "Job script not specified"),
        (json.dumps({"job": {}}).encode(), 2009, "Job script not specified"),
        (json.dumps({"script": "echo hi", "job": {}}).encode(), 2009, "script must start"),
        (json.dumps({"script": "#!/bin/sh"}).encode(), 9002, "Jobs description"),
        (json.dumps({"script": "#!/bin/sh", "job": 3}).encode(), 9002, "Jobs description"),
        (body({}), 9001, "environment must be set"),
        (body({"environment": ["A=1"]}), 9001, "environment must be a dictionary"),
        (body({"environment": {"A": "1"}, "tasks": "many"}), 9001, "Unable to read integer"),
        (body({"environment": {"A": "1"}, "nodes": "4-2"}), 9001, "Invalid node count"),
        (b" " * (rest.MAX_BODY_BYTES + 1), 9001, "request body larger"),
    ],
)
def test_malformed_submissions_are_refused(raw: bytes, errno: int, first: str) -> None:
    error = refusal(raw)
    assert error.errno == errno
    first_text = error.errors[0].get("description") or error.errors[0]["error"]
    assert first_text.startswith(first)
    assert error.errors[-1]["error_code"] == errno


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    [
        "name",
        "nodes",
        "tasks",
        "time_limit",
        "environment",
        "memory_per_node",
        "begin_time",
        "nodelist",
        "exclusive",
        "hold",
        "nice",
        "requeue",
        "partition",
        "cpus_per_task",
        "Colour",
        "wrap",
    ]
)


def outcome(raw: bytes) -> None:
    try:
        parsed = parse_job_submit(raw)
    except RestError as error:
        assert error.errors and error.errors[-1]["error_code"] == error.errno
    else:
        assert isinstance(parsed, SubmitRequest)
        assert parsed.environment


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_any_bytes_give_a_request_or_a_rest_error(raw: bytes) -> None:
    outcome(raw)


@settings(max_examples=300)
@given(JSON)
def test_any_json_gives_a_request_or_a_rest_error(value: object) -> None:
    outcome(json.dumps(value).encode())


@settings(max_examples=300)
@given(st.dictionaries(KEYS, JSON, max_size=6), st.text(max_size=30))
def test_any_job_description_gives_a_request_or_a_rest_error(
    job: dict[str, object], script: str
) -> None:
    outcome(json.dumps({"script": "#!" + script, "job": job}).encode())
