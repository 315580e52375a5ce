"""Benchmark: Plurm against AccaSim 1.1.3 on the same trace, EASY backfilling, side by side.

Run:  python bench/bench_accasim.py [--trace PATH] [--nodes N --cores C] [--jobs N | --quick]
                                   [--no-raw] [--repeat N] [--json OUT.json]

Defaults replay all of SDSC-SP2 (128 one-CPU nodes). ``--atlas`` is LLNL-Atlas (1,152 nodes
of 8 cores). Steps, one after the other in this process:

1. AccaSim's venv (``bench/.accasim-venv``, git-ignored) is made if missing:
   ``python3 -m venv`` and ``pip install accasim==1.1.3``.
2. Plurm reads and cleans the trace (``plurm.workload.clean``) and writes the cleaned jobs
   as a plain SWF file (submit, run time, processors, requested time; nothing else), so
   that both simulators replay exactly the same job set.
3. AccaSim (``bench/accasim_runner.py``, in its venv, a subprocess) replays that file with
   ``EASYBackfilling(FirstFit())``; with ``--raw`` (the default on full runs) it also replays
   the raw trace with its own reader, as AccaSim's users would.
4. Plurm replays the cleaned jobs in this process with ``plurm.sim.trace.replay``:
   sched/backfill as EASY backfilling: ``SchedulerParameters=bf_job_part_count_reserve=1``
   (only the first blocked job of the partition holds a reservation; Slurm's other defaults:
   bf_interval=30, bf_window=1440, bf_max_job_test=500, bf_resolution=60), or what
   ``--scheduler-parameters`` gives (``""``: Slurm's default, conservative backfill: every
   job of the first 500 reserves), no preemption; select/linear on
   one-CPU nodes, select/cons_res (CR_Core, processors as tasks, packed on cores as
   AccaSim packs them) on wider nodes.

It prints wall and CPU time, peak RSS, mean/median wait and mean bounded slowdown (tau 10 s)
of each run, the speed ratio, how many jobs waited the same (within 2 s, within 60 s) in
both, and writes everything to ``--json`` (default
``bench/results/accasim-<trace>.json``, git-ignored).
``--check-python`` then replays Plurm's side with ``plurm simulate``, compiled and on the
Python reference (``PLURM_PURE_PYTHON=1``), and checks that the two ``jobs.csv`` are the same
byte for byte (``bench/pure_check.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs
from pure_check import simulate_both

from plurm import conf
from plurm.sim.metrics import TAU
from plurm.sim.trace import replay
from plurm.workload import CleanedTrace, clean, read_swf

HERE = Path(__file__).resolve().parent
TRACES = HERE.parent.parent / "shared" / "traces"
VENV = HERE / ".accasim-venv"
#: Slurm's backfill with one reservation per partition: EASY, as AccaSim's dispatcher is named.
EASY = "bf_job_part_count_reserve=1"
RUNNER = HERE / "accasim_runner.py"


def peak_rss_mb() -> float:
    """This process's peak resident set so far (VmHWM; includes reading the trace)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plurm_conf(nodes: int, cores: int, params: str | None = None) -> str:
    width = len(str(nodes))
    head = "ClusterName=bench\nSlurmctldHost=head\nSchedulerType=sched/backfill\n"
    if params:
        head += f"SchedulerParameters={params}\n"
    if cores == 1:
        head += "SelectType=select/linear\n"
    else:
        head += "SelectType=select/cons_res\nSelectTypeParameters=CR_Core\n"
    return (
        f"{head}NodeName=n[{1:0{width}d}-{nodes:0{width}d}] CPUs={cores} RealMemory=1000\n"
        "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE\n"
    )


def ensure_venv(venv: Path) -> Path:
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} with accasim==1.1.3 ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "accasim==1.1.3"],
            check=True,
        )
    return python


def write_swf(trace: CleanedTrace, path: Path) -> None:
    """The cleaned jobs as SWF lines: the 18 fields, -1 where Plurm's replay uses nothing."""
    lines = []
    for job in trace.jobs:
        fields = [job.number, job.submit_time, -1, job.run_time, job.processors, -1, -1]
        fields += [job.processors, job.requested_time, -1, 1, job.user or 1, -1, -1, 1, 1]
        fields += [-1, -1]
        lines.append(" ".join(str(f) for f in fields))
    path.write_text("\n".join(lines) + "\n")


def run_accasim(python: Path, swf: Path, nodes: int, cores: int, out: Path) -> dict[str, Any]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    command = [str(python), str(RUNNER), str(swf), "--nodes", str(nodes), "--cores", str(cores)]
    subprocess.run([*command, "--out", str(out)], check=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result: dict[str, Any] = json.loads(out.read_text())
    result["process_wall_s"] = wall
    result["process_cpu_s"] = (after.ru_utime - before.ru_utime) + (
        after.ru_stime - before.ru_stime
    )
    return result


def run_plurm(cleaned: CleanedTrace, text: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "slurm.conf"
        path.write_text(text)
        config = conf.load(path)
        wall = time.perf_counter()
        cpu = time.process_time()
        records = replay(cleaned, config)
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
    ran = [r for r in records if r.start is not None and r.end is not None]
    waits = [r.start - r.submit for r in ran if r.start is not None]
    bounded = [max(1.0, ((r.wait or 0.0) + r.run) / max(r.run, TAU)) for r in ran]
    starts = [(r.trace_number, r.submit, r.start, r.end) for r in ran]
    return {
        "simulator": "Plurm",
        "jobs": len(ran),
        "loaded": len(records),
        "rejected": sum(1 for r in records if r.rejected is not None),
        "timeouts": sum(1 for r in records if r.state == "TIMEOUT"),
        "wall_s": wall,
        "simulation_s": wall,
        "cpu_s": cpu,
        "process_wall_s": wall,
        "process_cpu_s": cpu,
        "peak_rss_mb": peak_rss_mb(),
        "wait_mean": statistics.fmean(waits) if waits else 0.0,
        "wait_median": statistics.median(waits) if waits else 0.0,
        "bounded_slowdown_mean": statistics.fmean(bounded) if bounded else 0.0,
        "records": starts,
    }


def agreement(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """How many jobs (by job number) waited the same (within 2 s; 60 s) in both runs; the two
    count time from different origins, so waits are compared, not start times."""
    wait = {number: start - submit for number, submit, start, _ in ours["records"]}
    common = same = close = 0
    diffs = []
    for number, submit, start, _ in theirs["records"]:
        if number in wait:
            common += 1
            diff = abs(wait[number] - (start - submit))
            same += diff <= 2
            close += diff <= 60
            diffs.append(diff)
    return {
        "common_jobs": common,
        "same_wait_2s": same,
        "same_wait_60s": close,
        "mean_abs_wait_diff_s": statistics.fmean(diffs) if diffs else 0.0,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=None)
    parser.add_argument("--atlas", action="store_true", help="LLNL-Atlas, 1,152 x 8 cores")
    parser.add_argument("--nodes", type=int, default=None)
    parser.add_argument("--cores", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=None, help="replay the first N jobs")
    parser.add_argument("--quick", action="store_true", help="the first 3,000 jobs")
    parser.add_argument("--raw", action=argparse.BooleanOptionalAction, default=None)
    parser.add_argument(
        "--scheduler-parameters",
        metavar="OPTS",
        default=EASY,
        help=f"Plurm's SchedulerParameters (default {EASY}, EASY backfilling; '' for "
        "Slurm's default, conservative backfill)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each simulator N times, in turn, and compare the fastest run of each "
        "(this machine's timings move by 15-35 %% with other work)",
    )
    parser.add_argument(
        "--check-python",
        action="store_true",
        help="then replay with plurm simulate, compiled and on the Python reference "
        "(PLURM_PURE_PYTHON=1): the same jobs.csv?",
    )
    parser.add_argument("--venv", type=Path, default=VENV)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.atlas:
        trace = args.trace or TRACES / "LLNL-Atlas-2006-2.1-cln.swf.gz"
        nodes, cores = args.nodes or 1152, args.cores or 8
    else:
        trace = args.trace or TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"
        nodes, cores = args.nodes or 128, args.cores or 1
    jobs = 3000 if args.quick and args.jobs is None else args.jobs
    raw = args.raw if args.raw is not None else jobs is None
    name = trace.name.split(".swf")[0]
    out = args.json or HERE / "results" / f"accasim-{name}{'' if jobs is None else f'-{jobs}'}.json"

    python = ensure_venv(args.venv)
    cleaned = clean(read_swf(trace))
    if jobs is not None:
        cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[:jobs])
    load = os.getloadavg()
    runs: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        swf = folder / f"{name}-cleaned.swf"
        write_swf(cleaned, swf)
        print(f"{trace.name}: {len(cleaned.jobs)} cleaned jobs on {nodes} x {cores}", flush=True)
        tries: dict[str, list[dict[str, Any]]] = {"accasim": [], "plurm": []}
        for attempt in range(1, max(1, args.repeat) + 1):
            tries["accasim"].append(run_accasim(python, swf, nodes, cores, folder / "a.json"))
            print(
                f"  AccaSim (cleaned jobs), run {attempt}: "
                f"{tries['accasim'][-1]['process_wall_s']:.1f} s",
                flush=True,
            )
            text = plurm_conf(nodes, cores, args.scheduler_parameters)
            tries["plurm"].append(run_plurm(cleaned, text))
            print(
                f"  Plurm (SchedulerParameters={args.scheduler_parameters}), run {attempt}: "
                f"{tries['plurm'][-1]['wall_s']:.1f} s",
                flush=True,
            )
        for simulator, made in tries.items():
            runs[simulator] = min(made, key=lambda run: run["process_wall_s"])
            runs[simulator]["all_process_wall_s"] = [run["process_wall_s"] for run in made]
            runs[simulator]["all_process_cpu_s"] = [run["process_cpu_s"] for run in made]
        if raw:
            plain = folder / f"{name}.swf"
            with gzip.open(trace, "rt") as stream:
                plain.write_text(stream.read())
            runs["accasim_raw"] = run_accasim(python, plain, nodes, cores, folder / "r.json")
            print(f"  AccaSim (raw trace): {runs['accasim_raw']['wall_s']:.1f} s", flush=True)
    load_after = os.getloadavg()

    rows = [("AccaSim 1.1.3, cleaned jobs", runs["accasim"])]
    if "accasim_raw" in runs:
        rows.append(("AccaSim 1.1.3, raw trace, own reader", runs["accasim_raw"]))
    rows.append(("Plurm, cleaned jobs", runs["plurm"]))
    print()
    print(
        f"{'run':38} {'jobs':>6} {'wall s':>7} {'cpu s':>7} {'RSS MB':>7} "
        f"{'wait mean':>10} {'wait med':>9} {'bsld mean':>9}"
    )
    for label, r in rows:
        print(
            f"{label:38} {r['jobs']:>6} {r['process_wall_s']:>7.1f} {r['process_cpu_s']:>7.1f} "
            f"{r['peak_rss_mb']:>7.0f} {r['wait_mean']:>10.0f} {r['wait_median']:>9.0f} "
            f"{r['bounded_slowdown_mean']:>9.1f}"
        )
    if args.repeat > 1:
        print(f"(the fastest of {args.repeat} runs of each, in turn)")
    a, p = runs["accasim"], runs["plurm"]
    ratio_wall = a["process_wall_s"] / p["process_wall_s"]
    ratio_cpu = a["process_cpu_s"] / p["process_cpu_s"]
    agree = agreement(p, a)
    print(
        f"\nAccaSim / Plurm: wall {ratio_wall:.2f}x, CPU {ratio_cpu:.2f}x "
        f"(> 1 means Plurm is faster; goal >= 10x)"
    )
    print(
        f"same wait within 2 s: {agree['same_wait_2s']}, within 60 s: "
        f"{agree['same_wait_60s']} of {agree['common_jobs']} jobs; "
        f"mean |wait difference| {agree['mean_abs_wait_diff_s']:.0f} s"
    )
    print(f"load average before {load[0]:.2f}, after {load_after[0]:.2f} (2 cores)")
    summary = {
        "trace": trace.name,
        "nodes": nodes,
        "cores": cores,
        "jobs": len(cleaned.jobs),
        "plurm_conf": plurm_conf(nodes, cores, args.scheduler_parameters),
        "ratio_wall": ratio_wall,
        "ratio_cpu": ratio_cpu,
        "agreement": agree,
        "loadavg_before": load,
        "loadavg_after": load_after,
        "runs": {k: {f: v for f, v in r.items() if f != "records"} for k, r in runs.items()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(summary, indent=1) + "\n")
    print(f"wrote {out}")
    if args.check_python:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "slurm.conf"
            path.write_text(plurm_conf(nodes, cores, args.scheduler_parameters))
            arguments = ["--trace", str(trace), "--conf", str(path)]
            arguments += ["--jobs", str(jobs)] if jobs is not None else []
            if not simulate_both(arguments):
                raise SystemExit("the compiled core decided otherwise than its Python reference")


if __name__ == "__main__":
    main()
