"""Traces under fair-share: the mapping's ``[associations]`` gives each trace job a user and
an account from its SWF user and group (with shares per account); the replay's summary gives
the heavy and light users' waits and the spread of the jobs' fair-share factors."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.errors import TraceError
from plurm.sim.metrics import summarize
from plurm.sim.trace import TraceMapping, replay
from plurm.workload import clean, parse_swf

CONF = """ClusterName=t
SlurmctldHost=h
SelectType=select/linear
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=batch Nodes=ALL Default=YES
"""
MULTIFACTOR = "PriorityType=priority/multifactor\nPriorityWeightFairshare=10000\n"

# number submit wait run alloc cpu mem req_procs req_time req_mem status user group exe queue
# partition preceding think
# user 7 (group 3) fills the cluster for an hour; then it and user 9 (group 4) both wait
TRACE = """; MaxProcs: 4
1 0 -1 3600 4 -1 -1 4 3700 -1 1 7 3 1 1 1 -1 -1
2 3000 -1 100 4 -1 -1 4 200 -1 1 7 3 1 1 1 -1 -1
3 3010 -1 100 4 -1 -1 4 200 -1 1 9 4 1 1 1 -1 -1
"""


def _config(tmp_path: Path, extra: str = "") -> conf.SlurmConfig:
    path = tmp_path / "slurm.conf"
    path.write_text(CONF + extra)
    return conf.load(path)


def test_the_mapping_reads_associations_and_refuses_bad_ones() -> None:
    mapping = TraceMapping.from_dict({"associations": {"shares": {"g3": 5}}})
    assert (mapping.user_pattern, mapping.account_pattern) == ("u{user}", "g{group}")
    assert mapping.account_shares == {"g3": 5}
    for bad, message in [
        ({"user": "bob"}, "associations.user"),
        ({"account": "G{group}"}, "associations.account"),
        ({"shares": {"g3": 0}}, "associations.shares.g3"),
        ({"shares": []}, "associations.shares"),
        ({"users": "u{user}"}, "unknown associations key"),
    ]:
        with pytest.raises(TraceError, match=message):
            TraceMapping.from_dict({"associations": bad})


def test_trace_users_and_groups_become_associations_with_their_shares(tmp_path: Path) -> None:
    trace = clean(parse_swf(TRACE))
    mapping = TraceMapping.from_dict({"associations": {"user": "user{user}", "shares": {"g4": 3}}})
    config = mapping.with_associations(_config(tmp_path), trace)
    accounts = {spec.name: spec for spec in config.accounts}
    assert (accounts["g3"].fairshare, accounts["g4"].fairshare) == (1, 3)
    assert accounts["g3"].parent == "root"
    assert config.association("user7", "g3") is not None
    assert config.association("user9", "g4") is not None
    records = replay(trace, _config(tmp_path), mapping)
    assert [(r.user, r.account) for r in records] == [
        ("user7", "g3"),
        ("user7", "g3"),
        ("user9", "g4"),
    ]


@pytest.mark.parametrize("priority", ["basic", "multifactor"])
def test_a_replay_under_fair_share_starts_the_light_users_job_first(
    tmp_path: Path, priority: str
) -> None:
    trace = clean(parse_swf(TRACE))
    mapping = TraceMapping.from_dict({"associations": {}})
    extra = MULTIFACTOR if priority == "multifactor" else ""
    records = replay(trace, _config(tmp_path, extra), mapping)
    heavy, light = records[1], records[2]
    assert heavy.start is not None and light.start is not None
    summary = summarize(records, total_cpus=4)
    classes = summary["by_user_class"]
    # user 7 did nearly all the work: the heavy class; user 9 the light one
    assert (classes["heavy"]["users"], classes["light"]["users"]) == (1, 1)
    assert classes["heavy"]["jobs"] == 2 and classes["light"]["jobs"] == 1
    if priority == "basic":
        assert heavy.start < light.start  # first come, first served
        assert summary["fairshare_factor"] is None  # no fair-share weight
    else:
        assert light.start < heavy.start
        assert light.fairshare is not None and heavy.fairshare is not None
        assert light.fairshare > heavy.fairshare
        spread = summary["fairshare_factor"]
        assert spread["jobs"] == 3 and spread["p95"] > spread["p5"]
    assert classes["light"]["wait_mean"] == light.wait
    assert classes["heavy"]["wait_mean"] == pytest.approx(((records[0].wait or 0) + heavy.wait) / 2)


def test_without_associations_jobs_have_no_users_and_no_classes(tmp_path: Path) -> None:
    records = replay(clean(parse_swf(TRACE)), _config(tmp_path, MULTIFACTOR))
    assert {(r.user, r.account, r.fairshare) for r in records} == {("", "", None)}
    summary = summarize(records, total_cpus=4)
    assert summary["by_user_class"] == {"heavy": None, "light": None}
    assert summary["fairshare_factor"] is None
