"""Benchmark: a live cluster's throughput of trivial batch jobs, Plurm's or real Slurm's.

Run:  python bench/bench_live.py [--jobs 300] [--parallel 4] [--pass-on tick|event] [--slurm]

Starts a cluster of one controller and four node daemons of 4 CPUs each on 127.0.0.1 in a
temporary directory (Plurm: tests/live/conftest.py's ``make_cluster``, started and stopped
as ``plurm cluster up/down`` do; ``--slurm``: slurmctld and four ``slurmd -N`` of the
Debian Slurm 22.05 that ../shared/oracle/setup.sh installs, with MUNGE), both with
select/cons_res and CR_CPU (16 jobs at a time) and ``SchedulerParameters=sched_interval=1``
(``--sched`` changes it). ``--pass-on event`` writes ``SchedulerPassOn=event`` to Plurm's
plurm.conf: jobs start as soon as something frees room, not on the next whole second as
Slurm's (and Plurm's default) do. After one warm-up job it runs two rounds of ``--jobs`` jobs of
``sbatch --wrap true``, submitted with the real ``sbatch`` executable:

* serially: one sbatch after the other, as a script's loop submits;
* with ``--parallel`` submitters, each running sbatch after sbatch, as several users or a
  workflow tool do;
* Plurm only: one ``sbatch --array=1-JOBS --wrap true``, which takes the commands out of the
  measure: the controller's and the nodes' own rate (end to end from the submission to the
  last task's end).

For each round it prints the submission rate (jobs over the time from the first sbatch's
start to the last one's exit) and the end-to-end rate: jobs over the time from the first
submission to the last job's end. The end is read two ways: as recorded by the controller
(Plurm: its accounting store's end_time, to the microsecond; Slurm: jobcomp/filetxt's
EndTime, whole seconds, so the figure is within a second) and as observed (the moment the
last job's record appeared, polled every 20 ms). Every job must end COMPLETED.

The machine may be shared, so it also prints CPU time, which load does not inflate much:
the submitting commands' (user + system, per sbatch) and the daemons' with their children
(per job: Plurm's plurmctld, and all plurmd with the job processes they started; Slurm's
slurmctld, and all slurmd, whose slurmstepd are not their children and so not counted),
read from /proc.

Plurm's commands run from compiled bytecode, as from an installed wheel: the benchmark sets
PYTHONPYCACHEPREFIX to a directory of its own and lets Python write it (an editable install
has no bytecode of its own, and PYTHONDONTWRITEBYTECODE would make every command compile
every module it imports).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import os
import re
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from plurm.testing.ports import free_ports

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SELECT = "SelectType=select/cons_res\nSelectTypeParameters=CR_CPU"
SUBMITTED = re.compile(r"(\d+)")


def _cpu_of(pid: int) -> float:
    """A process's CPU seconds with its reaped children's (utime, stime, cutime, cstime)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


class Cluster:
    """What the benchmark needs of a running cluster."""

    def daemon_cpu(self) -> dict[str, float]:
        """CPU seconds so far of the controller and of all node daemons together."""
        pids = self.daemon_pids()
        ctld = sum(_cpu_of(pid) for name, pid in pids.items() if "ctld" in name)
        nodes = sum(_cpu_of(pid) for name, pid in pids.items() if "ctld" not in name)
        return {"ctld": ctld, "nodes": nodes}

    def daemon_pids(self) -> dict[str, int]:
        raise NotImplementedError

    name = ""
    root: Path
    env: dict[str, str]
    sbatch: str

    def ends(self, ids: set[int]) -> dict[int, tuple[float, str]]:
        """The recorded end time and state of those of ``ids`` that have ended."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class PlurmCluster(Cluster):
    name = "Plurm"

    def __init__(self, root: Path, sched: str, pass_on: str = "tick") -> None:
        from plurm.live.wallclock import unix_seconds
        from tests.live.conftest import make_cluster

        self._unix = unix_seconds
        # make_cluster's template sets SchedulerParameters=sched_interval=1 already
        extra = SELECT if sched == "sched_interval=1" else f"{SELECT}\nSchedulerParameters={sched}"
        conf_text_cluster = make_cluster(root, extra=extra)
        self._cluster = conf_text_cluster
        self.root = root
        self.env = conf_text_cluster.env
        self.sbatch = str(Path(sys.executable).parent / "sbatch")
        if pass_on != "tick":
            (root / "plurm.conf").write_text(f"SchedulerPassOn={pass_on}\n")
        self._cluster.up()
        self._db = sqlite3.connect(
            f"{(root / 'state' / 'plurmctld.sqlite').as_uri()}?mode=ro", uri=True
        )

    def daemon_pids(self) -> dict[str, int]:
        state = self.root / "state"
        return {path.stem: int(path.read_text().split()[0]) for path in state.glob("plurm*.pid")}

    def ends(self, ids: set[int]) -> dict[int, tuple[float, str]]:
        import json

        rows = self._db.execute(
            "SELECT job_id, end_time, data FROM acct_jobs WHERE end_time IS NOT NULL"
        ).fetchall()
        out = {}
        for job_id, end, data in rows:
            if job_id in ids:
                out[job_id] = (self._unix(end), str(json.loads(data).get("state")))
        return out

    def array_ends(self, array_id: int) -> dict[int, tuple[float, str]]:
        """The recorded end time and state of the ended tasks of array ``array_id``."""
        import json

        rows = self._db.execute(
            "SELECT job_id, end_time, data FROM acct_jobs "
            "WHERE array_job_id = ? AND end_time IS NOT NULL",
            (array_id,),
        ).fetchall()
        return {
            job_id: (self._unix(end), str(json.loads(data).get("state")))
            for job_id, end, data in rows
        }

    def stop(self) -> None:
        self._db.close()
        self._cluster.down()


SLURM_CONF = """\
ClusterName=bench
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld}
AuthType=auth/munge
StateSaveLocation={b}/state
SlurmdSpoolDir={b}/spool/%n
SlurmctldLogFile={b}/log/ctld.log
SlurmdLogFile={b}/log/slurmd.%n.log
SlurmctldPidFile={b}/ctld.pid
SlurmdPidFile={b}/slurmd.%n.pid
ProctrackType=proctrack/pgid
TaskPlugin=task/none
ReturnToService=2
MpiDefault=none
KillWait=2
SlurmdParameters=config_overrides
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc={b}/jobcomp.txt
{select}
SchedulerParameters={sched}
{nodes}
PartitionName=debug Nodes=n[1-4] Default=YES State=UP
"""


class SlurmCluster(Cluster):
    """Slurm 22.05 (Debian's), one slurmctld and four slurmd on loopback, as root."""

    name = "Slurm"

    def __init__(self, root: Path, sched: str) -> None:
        if shutil.which("slurmctld") is None:
            raise SystemExit("no slurmctld: run ../shared/oracle/setup.sh (as root) first")
        probe = subprocess.run(["munge", "-n"], capture_output=True)
        if probe.returncode != 0:
            # Without munged, Slurm's daemons hang on every message instead of failing.
            raise SystemExit("munged is not running: start it (../shared/oracle/setup.sh)")
        self.root = root
        for sub in ("state", "log", "spool"):
            (root / sub).mkdir()
        ports = free_ports(5)
        nodes = "\n".join(
            f"NodeName=n{i + 1} NodeHostname=localhost NodeAddr=127.0.0.1 Port={ports[i + 1]} "
            f"CPUs=4 RealMemory=1000 State=UNKNOWN"
            for i in range(4)
        )
        conf = root / "slurm.conf"
        conf.write_text(
            SLURM_CONF.format(
                ctld=ports[0], b=root, select=SELECT, sched=sched or "sched_interval=1", nodes=nodes
            )
        )
        self.env = dict(os.environ, SLURM_CONF=str(conf))
        self.sbatch = shutil.which("sbatch") or "sbatch"
        self._pids: list[Path] = [root / "ctld.pid"]
        try:
            self._start(conf)
        except BaseException:
            self.stop()
            raise
        self._jobcomp = root / "jobcomp.txt"

    def _start(self, conf: Path) -> None:
        root = self.root
        subprocess.run(["slurmctld", "-f", str(conf), "-c", "-i"], env=self.env, check=True)
        for i in range(4):
            name = f"n{i + 1}"
            (root / "spool" / name).mkdir()
            subprocess.run(["slurmd", "-f", str(conf), "-N", name], env=self.env, check=True)
            self._pids.append(root / f"slurmd.{name}.pid")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            states = subprocess.run(
                ["sinfo", "-h", "-N", "-o", "%T"], env=self.env, capture_output=True, text=True
            ).stdout.split()
            if len(states) == 4 and all(s == "idle" for s in states):
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"Slurm's nodes did not come up: {states}")

    def daemon_pids(self) -> dict[str, int]:
        pids = {}
        for path in self._pids:
            with contextlib.suppress(OSError, ValueError, IndexError):
                pids[path.stem] = int(path.read_text().split()[0])
        return pids

    def ends(self, ids: set[int]) -> dict[int, tuple[float, str]]:
        out: dict[int, tuple[float, str]] = {}
        try:
            text = self._jobcomp.read_text()
        except FileNotFoundError:
            return out
        for line in text.splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            job_id = int(fields.get("JobId", "0"))
            if job_id in ids:
                end = time.mktime(time.strptime(fields["EndTime"], "%Y-%m-%dT%H:%M:%S"))
                out[job_id] = (end, fields.get("JobState", "?"))
        return out

    def stop(self) -> None:
        pids = []
        for path in self._pids:
            try:
                pid = int(path.read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
            try:
                os.kill(pid, signal.SIGTERM)
                pids.append(pid)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 15
        for pid in pids:
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except ProcessLookupError:
                    break
                time.sleep(0.05)
            else:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


def submit_one(cluster: Cluster, *options: str) -> int:
    result = subprocess.run(
        [cluster.sbatch, "--parsable", *options, "--wrap", "true"],
        env=cluster.env,
        cwd=cluster.root / "out",
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = SUBMITTED.match(result.stdout)
    if result.returncode != 0 or match is None:
        raise SystemExit(f"sbatch failed ({result.returncode}): {result.stderr}{result.stdout}")
    return int(match.group(1))


def wait_ends(cluster: Cluster, ids: set[int], timeout: float = 600) -> tuple[dict, float]:
    """Poll until every job has ended; the ends and the moment the last was seen."""
    deadline = time.monotonic() + timeout
    while True:
        ends = cluster.ends(ids)
        if len(ends) == len(ids):
            return ends, time.time()
        if time.monotonic() > deadline:
            raise SystemExit(f"{len(ids) - len(ends)} jobs did not end within {timeout} s")
        time.sleep(0.02)


def run_round(cluster: Cluster, jobs: int, submitters: int) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    daemons = cluster.daemon_cpu()
    started = time.time()
    if submitters == 1:
        ids = [submit_one(cluster) for _ in range(jobs)]
    else:
        with concurrent.futures.ThreadPoolExecutor(submitters) as pool:
            ids = list(pool.map(lambda _: submit_one(cluster), range(jobs)))
    submitted = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    commands = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    ends, seen = wait_ends(cluster, set(ids))
    time.sleep(1.5)  # the daemons' last reports and reaping, before their CPU is read
    daemons_after = cluster.daemon_cpu()
    bad = {job_id: state for job_id, (_, state) in ends.items() if state != "COMPLETED"}
    if bad:
        raise SystemExit(f"jobs that did not complete: {sorted(bad.items())[:10]}")
    last_end = max(end for end, _ in ends.values())
    return {
        "submit_rate": jobs / (submitted - started),
        "e2e_recorded": jobs / max(last_end - started, 1e-9),
        "e2e_observed": jobs / (seen - started),
        "submit_s": submitted - started,
        "observed_s": seen - started,
        "sbatch_ms": commands / jobs * 1000,
        "ctld_ms": (daemons_after["ctld"] - daemons["ctld"]) / jobs * 1000,
        "nodes_ms": (daemons_after["nodes"] - daemons["nodes"]) / jobs * 1000,
    }


def run_array(cluster: PlurmCluster, jobs: int) -> dict[str, float]:
    daemons = cluster.daemon_cpu()
    started = time.time()
    array_id = submit_one(cluster, f"--array=1-{jobs}")
    deadline = time.monotonic() + 600
    while len(ends := cluster.array_ends(array_id)) < jobs:
        if time.monotonic() > deadline:
            raise SystemExit(f"{jobs - len(ends)} tasks did not end within 600 s")
        time.sleep(0.02)
    seen = time.time()
    time.sleep(1.5)
    daemons_after = cluster.daemon_cpu()
    bad = {job_id: state for job_id, (_, state) in ends.items() if state != "COMPLETED"}
    if bad:
        raise SystemExit(f"tasks that did not complete: {sorted(bad.items())[:10]}")
    last_end = max(end for end, _ in ends.values())
    return {
        "e2e_recorded": jobs / max(last_end - started, 1e-9),
        "e2e_observed": jobs / (seen - started),
        "observed_s": seen - started,
        "ctld_ms": (daemons_after["ctld"] - daemons["ctld"]) / jobs * 1000,
        "nodes_ms": (daemons_after["nodes"] - daemons["nodes"]) / jobs * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=300)
    parser.add_argument("--parallel", type=int, default=4, help="submitters in round two")
    parser.add_argument("--slurm", action="store_true", help="measure real Slurm 22.05")
    parser.add_argument(
        "--sched", default="", help="SchedulerParameters (default sched_interval=1)"
    )
    parser.add_argument(
        "--pass-on",
        choices=("tick", "event"),
        default="tick",
        help="Plurm's SchedulerPassOn (plurm.conf; default tick, Slurm's way)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-live-"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    (root / "out").mkdir()
    sched = args.sched or "sched_interval=1"
    if args.slurm:
        if args.pass_on != "tick":
            raise SystemExit("--pass-on is Plurm's: Slurm starts jobs on its tick")
        cluster: Cluster = SlurmCluster(root, sched)
    else:
        cluster = PlurmCluster(root, sched, args.pass_on)
    try:
        warm = submit_one(cluster)
        wait_ends(cluster, {warm})
        mode = "" if args.slurm else f", SchedulerPassOn={args.pass_on}"
        print(f"{cluster.name}: {args.jobs} jobs of sbatch --wrap true, 4 nodes x 4 CPUs{mode}")
        for submitters in (1, args.parallel):
            figures = run_round(cluster, args.jobs, submitters)
            how = "serially" if submitters == 1 else f"{submitters} submitters"
            print(
                f"  {how:14} submitted {figures['submit_rate']:6.1f} jobs/s "
                f"({figures['submit_s']:.2f} s); end to end {figures['e2e_recorded']:5.1f} jobs/s "
                f"recorded, {figures['e2e_observed']:5.1f} observed "
                f"({figures['observed_s']:.2f} s)"
            )
            print(
                f"  {'':14} CPU: {figures['sbatch_ms']:.0f} ms per sbatch; per job "
                f"{figures['ctld_ms']:.1f} ms controller, {figures['nodes_ms']:.1f} ms node "
                f"daemons and job processes (load average {os.getloadavg()[0]:.1f})"
            )
        if isinstance(cluster, PlurmCluster):
            figures = run_array(cluster, args.jobs)
            print(
                f"  {'one array':14} end to end {figures['e2e_recorded']:5.1f} jobs/s recorded, "
                f"{figures['e2e_observed']:5.1f} observed ({figures['observed_s']:.2f} s); CPU per "
                f"job {figures['ctld_ms']:.1f} ms controller, {figures['nodes_ms']:.1f} ms node "
                f"daemons and job processes (load average {os.getloadavg()[0]:.1f})"
            )
    finally:
        cluster.stop()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}")


if __name__ == "__main__":
    main()
