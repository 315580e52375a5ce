"""Invariants every plugin combination must keep, on one seeded mixed workload.

The matrix is the issue's: select linear/cons_res x preempt none/partition_prio/qos x gang
off/on, plus preempt/pbs and preempt/lsf (which suspend without gang scheduling) with each
select plugin.
tox runs this file once per combination (``tox -e combo-linear-qos-gang`` and so on, which
install only the plugin distributions the name gives and set ``PLURM_COMBINATION``; three
``...-multifactor`` envs also install priority/multifactor and set ``PLURM_PRIORITY``);
there :func:`test_only_the_named_plugins_are_installed_and_loaded` proves that exactly that
set is installed and loaded. A plain ``pytest`` run covers every combination.

Whatever the policy: a node never runs more jobs than its partition lets share it; every
victim is preemptable, under the active preempt plugin, by a job that was waiting for it; no
job starts before it was submitted or outlives its time limit by more than Slurm's check
period plus KillWait and the teardown; every job eventually ends; preemption happens exactly
when a preempt plugin is configured; and the same input gives the same history. The checks
themselves ship in :mod:`plurm.testing.invariants`, so that a plugin package runs them on a
combination that includes its plugin; this file runs them on the shipped plugins.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from plurm import conf
from plurm.conf.model import CORE_PREEMPT_PLUGINS
from plurm.manager import Plugins
from plurm.model.job import JobState
from plurm.registry import Registry
from plurm.sim.trace import TraceMapping, replay
from plurm.testing import TestCluster
from plurm.testing.invariants import (
    QOS,
    Combination,
    History,
    check_deterministic,
    check_invariants,
    conf_text,
    run_workload,
)
from plurm.workload import clean, read_swf

SELECT = ("select/linear", "select/cons_res")
PREEMPT = ("preempt/none", "preempt/partition_prio", "preempt/qos", "preempt/pbs", "preempt/lsf")
GANG = ("nogang", "gang")
#: preempt/pbs and preempt/lsf suspend without gang scheduling and take their methods from
#: their own files, not from a PreemptMode.
NO_GANG = frozenset({"preempt/pbs", "preempt/lsf"})
#: preempt/pbs's own files for the test cluster: the high partition is an express queue
#: (priority 200), mid a normal queue with a soft limit of two running jobs per user over
#: which its jobs fall below normal ones; young victims are requeued, old ones suspended.
PBS_FILES = (
    (
        "sched_config",
        'preempt_prio: "express_queue, normal_jobs, queue_softlimits"\n'
        'preempt_order: "C 70 R 30 S"\n',
    ),
    (
        "qmgr.conf",
        "create queue high priority=200\n"
        "set queue mid priority = 100\n"
        "set queue mid max_run_soft = [u:PBS_GENERIC=2]\n",
    ),
)

#: preempt/lsf's own files for the test cluster: high is a preemptive queue over every lower
#: one; low is preemptable, and a low job that has run 5 minutes (NO_PREEMPT_RUN_TIME, against
#: its -t) is no victim any more; mid is a plain queue of PRIORITY 5, under low, whose jobs
#: high preempts too (and low's do not). Victims are suspended and resume as soon as their
#: nodes are free; LEAST_RUN_TIME picks the youngest.
LSF_FILES = (
    (
        "lsb.queues",
        "Begin Queue\nQUEUE_NAME = high\nPRIORITY = 50\nPREEMPTION = PREEMPTIVE\nEnd Queue\n\n"
        "Begin Queue\nQUEUE_NAME = low\nPRIORITY = 10\nPREEMPTION = PREEMPTABLE\n"
        "NO_PREEMPT_RUN_TIME = 5\nEnd Queue\n\n"
        "Begin Queue\nQUEUE_NAME = mid\nPRIORITY = 5\nEnd Queue\n",
    ),
    (
        "lsb.params",
        "Begin Parameters\nPREEMPT_FOR = LEAST_RUN_TIME\nEnd Parameters\n",
    ),
)
POLICY_FILES = {"preempt/pbs": PBS_FILES, "preempt/lsf": LSF_FILES}

Triple = tuple[str, str, str]


def _combinations() -> list[Triple]:
    combos = [
        c
        for c in itertools.product(SELECT, PREEMPT, GANG)
        if not (c[1] in NO_GANG and c[2] == "gang")
    ]
    wanted = os.environ.get("PLURM_COMBINATION")
    if wanted:
        combos = [c for c in combos if ",".join(c) == wanted]
        assert combos, f"PLURM_COMBINATION={wanted!r} names no combination"
    return combos


def _priority() -> str:
    """The priority plugin of tox's combo env (``PLURM_PRIORITY``), else priority/basic."""
    return os.environ.get("PLURM_PRIORITY") or "priority/basic"


def combination_of(triple: Triple) -> Combination:
    """The shipped plugins as a :class:`~plurm.testing.invariants.Combination`: cons_res
    allocates cores; under preempt/qos the partitions share one tier (tiers are
    partition_prio's ordering, and under gang a higher tier's jobs cast shadows whatever
    the preempt plugin, which would preempt jobs the QOS plugin protects)."""
    select, preempt, gang = triple
    return Combination(
        select,
        preempt,
        gang == "gang",
        select_parameters="CR_Core" if select == "select/cons_res" else "",
        tiers=preempt != "preempt/qos",
        preempt_mode=preempt not in NO_GANG,
        files=POLICY_FILES.get(preempt, ()),
        priority=_priority(),
    )


def _conf_text(select: str, preempt: str, gang: str) -> str:
    return conf_text(combination_of((select, preempt, gang)))


_History = History


#: Combinations that break an invariant today, with what breaks (strict: must still fail).
KNOWN_BROKEN: dict[Triple, str] = {}


def _marked(combos: list[Triple]) -> list[Any]:
    return [
        pytest.param(c, marks=pytest.mark.xfail(reason=KNOWN_BROKEN[c], strict=True))
        if c in KNOWN_BROKEN
        else c
        for c in combos
    ]


@pytest.mark.parametrize("combination", _marked(_combinations()), ids=",".join)
def test_policies_keep_the_invariants(
    make_cluster: Callable[..., TestCluster], combination: Triple
) -> None:
    chosen = combination_of(combination)
    check_invariants(run_workload(make_cluster, chosen), chosen)


#: Combinations also run under priority/multifactor (its weighted factors reorder the
#: queue every minute; the invariants hold whatever the order).
MULTIFACTOR = [
    ("select/linear", "preempt/none", "nogang"),
    ("select/cons_res", "preempt/partition_prio", "gang"),
    ("select/cons_res", "preempt/qos", "nogang"),
]


@pytest.mark.skipif(
    bool(os.environ.get("PLURM_COMBINATION")), reason="tox's combo-* envs run their set only"
)
@pytest.mark.parametrize("combination", MULTIFACTOR, ids=",".join)
def test_policies_keep_the_invariants_under_priority_multifactor(
    make_cluster: Callable[..., TestCluster], combination: Triple
) -> None:
    chosen = attrs.evolve(combination_of(combination), priority="priority/multifactor")
    check_invariants(run_workload(make_cluster, chosen), chosen)
    check_deterministic(make_cluster, chosen)


@pytest.mark.parametrize("combination", _combinations(), ids=",".join)
def test_the_same_input_gives_the_same_history(
    make_cluster: Callable[..., TestCluster], combination: Triple
) -> None:
    check_deterministic(make_cluster, combination_of(combination))


@pytest.mark.skipif(
    not os.environ.get("PLURM_COMBINATION"), reason="tox's combo-* envs install one set only"
)
def test_only_the_named_plugins_are_installed_and_loaded(tmp_path: Any) -> None:
    (select, preempt, gang) = _combinations()[0]
    registry = Registry()
    expected_select = (
        ["select/cons_res", "select/cons_tres"] if select == "select/cons_res" else [select]
    )
    assert registry.installed("select") == expected_select
    # the core's own preempt plugins (the victim objective and the guards) are always there
    core = {"preempt/none", *CORE_PREEMPT_PLUGINS.values()}
    assert registry.installed("preempt") == sorted({*core, preempt})
    builtin_sched = ["sched/backfill", "sched/builtin"]
    assert registry.installed("sched") == sorted(
        [*builtin_sched, "sched/gang"] if gang == "gang" else builtin_sched
    )
    assert registry.installed("priority") == sorted({"priority/basic", _priority()})
    path = tmp_path / "slurm.conf"
    path.write_text("ClusterName=c\nSlurmctldHost=h\n" + _conf_text(select, preempt, gang))
    if preempt == "preempt/qos":
        (tmp_path / "qos.conf").write_text(QOS.format(mid_mode="CANCEL"))
    for name, text in combination_of((select, preempt, gang)).files:
        (tmp_path / name).write_text(text)
    loaded = set(Plugins.load(conf.load(path), registry=registry).type_strings())
    policy = {t for t in loaded if t.split("/")[0] in ("select", "preempt", "sched", "priority")}
    assert policy == {select, preempt, "sched/backfill", _priority()} | (
        {"sched/gang"} if gang == "gang" else set()
    )


TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"
FINISHED = {state.name for state in JobState if state.finished}
TRACE_CONF = """
ClusterName=replay
SlurmctldHost=localhost
SelectType={select}
PreemptType={preempt}
PreemptMode={mode}
PriorityType={priority}
JobRequeue=1
KillWait=5
NodeName=n[1-64] CPUs=8 RealMemory=64000
PartitionName=DEFAULT OverSubscribe={oversubscribe}
PartitionName=batch Nodes=n[1-64] Default=YES PriorityTier=1
PartitionName=high Nodes=n[1-64] PriorityTier={high_tier}
"""


@pytest.mark.skipif(not TRACES.is_dir(), reason="needs ../shared/traces beside the checkout")
@pytest.mark.parametrize("combination", _combinations(), ids=",".join)
def test_the_shipped_traces_replay(tmp_path: Path, combination: Triple) -> None:
    """Each shipped trace (its first 60 jobs, 10% marked high priority) replays without
    error under the combination, and every job ends or is refused with a reason."""
    select, preempt, gang = combination
    gang_on = gang == "gang"
    if preempt == "preempt/none":
        mode = "GANG" if gang_on else "OFF"
    else:
        mode = "SUSPEND,GANG" if gang_on else "REQUEUE"
    text = TRACE_CONF.format(
        select=select + ("\nSelectTypeParameters=CR_Core" if select == "select/cons_res" else ""),
        preempt=preempt,
        mode=mode,
        oversubscribe="FORCE:1" if gang_on else "NO",
        high_tier=1 if preempt == "preempt/qos" else 2,
        priority=_priority(),
    )
    if not combination_of(combination).preempt_mode:
        text = text.replace(f"PreemptMode={mode}\n", "", 1)
    path = tmp_path / "slurm.conf"
    path.write_text(text)
    if preempt == "preempt/qos":
        (tmp_path / "qos.conf").write_text("QOS=normal\nQOS=urgent Priority=100 Preempt=normal\n")
    if preempt == "preempt/pbs":
        (tmp_path / "qmgr.conf").write_text("create queue high priority=200\n")
    if preempt == "preempt/lsf":
        (tmp_path / "lsb.queues").write_text(
            "Begin Queue\nQUEUE_NAME = high\nPRIORITY = 50\nPREEMPTION = PREEMPTIVE\nEnd Queue\n"
            "Begin Queue\nQUEUE_NAME = batch\nPRIORITY = 10\nEnd Queue\n"
        )
    config = conf.load(path)
    mapping = TraceMapping(
        high_priority_fraction=0.1,
        high_priority_partition="high",
        high_priority_qos="urgent" if preempt == "preempt/qos" else None,
        seed=5,
    )
    names = sorted(TRACES.glob("*.swf.gz"))
    assert names
    for name in names:
        cleaned = clean(read_swf(name), machine_size=64 * 8)
        cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[:60])
        records = replay(cleaned, config, mapping)
        assert len(records) == len(cleaned.jobs)
        for record in records:
            assert record.rejected is not None or record.state in FINISHED, (name, record)
        assert any(record.state == "COMPLETED" for record in records), name
