"""Benchmark: the latency of one placement decision that must preempt, on a full cluster.

Run:  python bench/bench_decision.py [--nodes 10000] [--repeat 50] [--mode requeue|suspend]
                                     [--victims slurm|fewest|least_lost_work] [--quick]

A simulated cluster of ``--nodes`` one-CPU nodes (select/linear, sched/builtin,
preempt/partition_prio) has two partitions on all nodes: ``low`` (PriorityTier=1, the
default) and ``high`` (PriorityTier=10). It is filled with one long low job per node, all
RUNNING (``--nodes`` running jobs). Each repetition then times, with ``time.perf_counter``:

* ``submit``: ``controller.submit`` of a one-node job to ``high`` (it queues; Slurm's
  event-triggered pass comes a second later);
* ``pass``: one ``controller.schedule()``, the main scheduling pass that finds no free
  node, builds the preemption candidates (every running job), asks select for a placement
  with them and preempts the victim (REQUEUE: kill and requeue it, the preemptor waits for
  its node; SUSPEND,GANG with ``--mode suspend``: the preemptor starts and gang suspends the
  victim).

``--victims`` sets ``PreemptParameters=victims=`` (default: not set, Slurm's choice): with
``fewest`` or ``least_lost_work`` the pass also runs the core's victim search
(:mod:`plurm.controller.victim_search`); the low jobs start ``--batch`` at a time, a second
apart, so their lost work differs.

The decision is submit + pass. Between repetitions the state is undone through the
simulator itself: the clock runs until the preemptor has started, the preemptor is cancelled,
and the clock runs until the victim has started again, so that every repetition sees the same
``--nodes`` running jobs and an empty queue (checked). Prints median, p90, p99 and max of
the wall time, and of the CPU time (``time.process_time``) of the same decision, which other
processes on the machine disturb less.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import time

from plurm import conf
from plurm.model.job import JobRequest, JobState
from plurm.sim.session import Simulation

LONG = 10**9  # seconds: the low jobs never end by themselves


def config_text(nodes: int, mode: str, victims: str | None = None) -> str:
    width = len(str(nodes))
    params = f"PreemptParameters=victims={victims}\n" if victims else ""
    if mode == "suspend":
        preempt = "PreemptMode=SUSPEND,GANG\nSchedulerTimeSlice=30\n"
        low = "PreemptMode=SUSPEND OverSubscribe=FORCE:1"
        high = "OverSubscribe=FORCE:1"
    else:
        preempt = "PreemptMode=REQUEUE\nJobRequeue=1\n"
        low = high = "OverSubscribe=NO"
    return (
        "ClusterName=decide\nSlurmctldHost=head\nSelectType=select/linear\n"
        "SchedulerType=sched/builtin\nPreemptType=preempt/partition_prio\n"
        f"{preempt}{params}"
        f"NodeName=n[{0:0{width}d}-{nodes - 1:0{width}d}] CPUs=1 RealMemory=1000\n"
        f"PartitionName=low Nodes=ALL Default=YES PriorityTier=1 MaxTime=INFINITE {low}\n"
        f"PartitionName=high Nodes=ALL PriorityTier=10 MaxTime=INFINITE {high}\n"
    )


def fill(simulation: Simulation, nodes: int, batch: int) -> None:
    """One running low job per node, submitted ``batch`` at a time, then the clock run
    until the periodic passes have started them all."""
    controller = simulation.controller
    request = JobRequest(name="low", partitions=("low",), sim_runtime=float(LONG))
    submitted = 0
    while submitted < nodes:
        for _ in range(min(batch, nodes - submitted)):
            controller.submit(request)
            submitted += 1
        simulation.run_until(simulation.clock.now() + 1)
    # An event-triggered pass tests default_queue_depth + 1 jobs; the periodic pass (every
    # sched_interval) tests the rest of the queue.
    interval = simulation.controller.config.scheduler_parameters.sched_interval
    for _ in range(nodes):
        if not list(simulation.controller.cluster.jobs_in(JobState.PENDING)):
            break
        simulation.run_until(simulation.clock.now() + interval)
    simulation.run_until(simulation.clock.now() + 1)
    # The kept pending queue files the state changes of a pass at the next one: the last
    # fill pass started thousands of jobs, and filing them (about 1.4 us each) belongs to
    # the fill, not to the first decision. One more pass files them.
    controller.schedule()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * fraction // 1))
    return ordered[int(rank) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--mode", choices=("requeue", "suspend"), default="requeue")
    parser.add_argument("--batch", type=int, default=1000, help="low jobs per fill pass")
    parser.add_argument("--victims", choices=("slurm", "fewest", "least_lost_work"), default=None)
    parser.add_argument("--quick", action="store_true", help="1,000 nodes, 20 repetitions")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.repeat = 1000, 20
    config = conf.parse_text(config_text(args.nodes, args.mode, args.victims))
    simulation = Simulation(config)
    controller = simulation.controller
    cluster = controller.cluster
    started = time.perf_counter()
    fill(simulation, args.nodes, args.batch)
    filled = time.perf_counter() - started
    running = len(list(cluster.jobs_in(JobState.RUNNING)))
    print(f"{args.nodes} nodes, {running} running low jobs (filled in {filled:.1f} s)")
    assert running == args.nodes, running

    high = JobRequest(name="high", partitions=("high",), sim_runtime=float(LONG))
    submits: list[float] = []
    passes: list[float] = []
    cpus: list[float] = []
    for _ in range(args.repeat):
        gc.collect()
        clock = time.process_time()
        t0 = time.perf_counter()
        job = controller.submit(high)
        t1 = time.perf_counter()
        controller.schedule()
        t2 = time.perf_counter()
        cpus.append(time.process_time() - clock)
        submits.append(t1 - t0)
        passes.append(t2 - t1)
        # Undo: let the preemption complete (the victim's node is released 3.7 s after the
        # kill), then cancel the preemptor and let its victim start again (a requeued job
        # waits 121 s; a suspended one resumes at once).
        now = simulation.clock.now()
        simulation.run_until(now + 5)
        assert job.state is JobState.RUNNING, job.state
        controller.cancel(job.job_id)
        simulation.run_until(now + 300)
        assert len(list(cluster.jobs_in(JobState.RUNNING))) == args.nodes
        assert not list(cluster.jobs_in(JobState.PENDING))
    decisions = [s + p for s, p in zip(submits, passes, strict=True)]
    print(
        f"mode {args.mode}, victims {args.victims or 'unset'}, {args.repeat} decisions, "
        f"load average {os.getloadavg()[0]:.2f} (2 cores)"
    )
    print(f"{'ms':10} {'median':>8} {'p90':>8} {'p99':>8} {'max':>8}")
    rows = (("submit", submits), ("pass", passes), ("decision", decisions), ("CPU", cpus))
    for label, values in rows:
        ms = [v * 1000 for v in values]
        print(
            f"{label:10} {statistics.median(ms):>8.2f} {percentile(ms, 0.9):>8.2f} "
            f"{percentile(ms, 0.99):>8.2f} {max(ms):>8.2f}"
        )
    print("(decision = submit + pass, wall; CPU = process time of the same; goal: median < 5 ms)")


if __name__ == "__main__":
    main()
