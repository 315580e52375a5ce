#!/usr/bin/env python3
"""Record golden outputs of Slurm 22.05's user commands (sbatch, squeue, sinfo, scontrol, scancel)
as printed by the real Slurm (Debian slurm-wlm 22.05.8), for Plurm's byte-for-byte CLI tests.
Only behaviour is recorded; no Slurm source is used.

How to run (as root, on a machine with slurm-wlm 22.05, munged and, for the "accounting" scenario,
MariaDB with the 'slurm' database user as set up by /work/shared/oracle/setup.sh):

    python3 tests/data/oracle/cli/record_cli.py                 # all scenarios -> records.json here
    python3 tests/data/oracle/cli/record_cli.py linear down     # only these, printed; records.json untouched
    python3 tests/data/oracle/cli/record_cli.py --list          # scenario names
    python3 tests/data/oracle/cli/record_cli.py --update endings  # re-record these, replace them in records.json

It uses /work/shared/oracle/oracle.py (start(conf) / stop()): a real slurmctld plus one slurmd per
node on loopback, state under /tmp/slurm-oracle (the harness adds the header shown in README.md to
each scenario's "config").  The harness is shared: before each scenario the script waits until no
slurmctld/slurmd of /tmp/slurm-oracle is running.  Each scenario
runs in real time (10-100 s); the whole run takes about 6 minutes.

Every command runs through bash in /tmp/slurm-oracle/work with an environment that has SLURM_CONF
set and NO SQUEUE_FORMAT / SQUEUE_SORT / SINFO_FORMAT / SINFO_SORT / SLURM_* / SBATCH_* variables
(and LC_ALL=C).  A record is {"scenario", "config", "steps_before", "command", "stdout", "stderr",
"exit", "notes", "at", "name"}: "steps_before" lists the state-changing commands issued earlier in
the same scenario with their times in seconds after the scenario's first step ("at" is the time of
this command); "name" is a unique label.  Job ids are as printed (1, 2, ... after each fresh start).
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, "/work/shared/oracle")
import oracle  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = oracle.BASE
WORK = f"{BASE}/work"
RECORDS = []
CURRENT = None

# ---------------------------------------------------------------------------------------------
# notes on what varies between runs
COMMON_VARY = {
    "sbatch": "Job ids are submission ordinals since the harness start.",
    "squeue": ("Varies: TIME (%M) by +-1 s with the moment of the call; USER is the submitting user (root); "
               "with -l the first line is the current date/time (ctime format, local time zone)."),
    "sinfo": ("Varies: with -l the first line is the current date/time; with -R the USER column is the "
              "admin who set the reason (root) and TIMESTAMP is wall-clock."),
    "scontrol show job": (
        "Varies: SubmitTime, EligibleTime, AccrueTime, StartTime, EndTime, PreemptEligibleTime, PreemptTime, "
        "SuspendTime, LastSchedEval (wall-clock, YYYY-MM-DDTHH:MM:SS local time); RunTime and SecsPreSuspend "
        "(+-1 s); AllocNode:Sid (host:session id of the submitting shell); UserId/GroupId (root(0)); "
        "WorkDir/StdOut/StdErr/Command paths (harness work dir /tmp/slurm-oracle/work); Priority follows "
        "priority/basic: 4294901760 - job id at submission."),
    "scontrol show node": (
        "Varies: Arch, CPULoad, FreeMem, OS line, BootTime, SlurmdStartTime, LastBusyTime, Port, NodeAddr, "
        "NodeHostName (harness: every node is a slurmd on 127.0.0.1/localhost with its own port), Version, "
        "Reason=... [user@timestamp]."),
    "scontrol show partition": "Nothing varies except node names/counts from the config.",
}


def vary_note(cmd):
    c = cmd.replace("scontrol -o ", "scontrol ")
    for key in ("scontrol show job", "scontrol show node", "scontrol show partition", "sbatch", "squeue", "sinfo"):
        if c.startswith(key):
            return COMMON_VARY[key]
    return ""


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SLURM_", "SQUEUE_", "SINFO_", "SBATCH_", "SCONTROL_", "SCANCEL_", "SALLOC_", "SRUN_"))}
    env["SLURM_CONF"] = f"{BASE}/slurm.conf"
    env["LC_ALL"] = "C"
    return env


class Scenario:
    def __init__(self, name, conf, qos=()):
        self.name, self.conf, self.qos = name, conf, list(qos)
        self.steps, self.t0, self.n, self.finished = [], None, 0, False

    def start(self):
        global CURRENT
        CURRENT = self
        # the harness is shared: wait until no slurmctld/slurmd (ours or another user's) is running
        for i in range(120):
            busy = subprocess.run(["pgrep", "-f", "^(slurmctld|slurmd) -f " + BASE], capture_output=True).stdout.strip()
            if not busy:
                break
            if i % 6 == 0:
                print(f"  waiting for a quiet harness (pids {busy.decode().split()})", file=sys.stderr)
            time.sleep(5)
        print(f"== {self.name}: starting", file=sys.stderr)
        oracle.start(self.conf, self.qos)
        os.makedirs(WORK, exist_ok=True)
        self.t0 = time.time()

    def now(self):
        return round(time.time() - self.t0, 1)

    def at(self, t):
        if time.time() - self.t0 > t + 1:
            print(f"  WARNING: step planned at {t} s runs late at {self.now()} s", file=sys.stderr)
        while time.time() - self.t0 < t:
            time.sleep(0.05)

    def run(self, cmd):
        r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=clean_env(), cwd=WORK)
        return r

    def do(self, cmd):
        """A state-changing command that is not itself recorded (still listed in later steps_before)."""
        t = self.now()
        r = self.run(cmd)
        self.steps.append({"at": t, "cmd": cmd})
        print(f"  [{t:5.1f}] {cmd} -> {r.returncode} {(r.stdout + r.stderr).strip()[:100]}", file=sys.stderr)
        return r

    def rec(self, cmd, notes="", mutating=False, label=None):
        t = self.now()
        r = self.run(cmd)
        self.n += 1
        note = " ".join(x for x in (notes, vary_note(cmd)) if x)
        RECORDS.append({
            "name": f"{self.name}/{self.n:03d}" + (f"-{label}" if label else ""),
            "scenario": self.name, "config": self.conf, "steps_before": list(self.steps), "at": t,
            "command": cmd, "stdout": r.stdout, "stderr": r.stderr, "exit": r.returncode, "notes": note})
        if mutating:
            self.steps.append({"at": t, "cmd": cmd})
        print(f"  [{t:5.1f}] rec {cmd} -> {r.returncode}", file=sys.stderr)
        return r

    def jobs(self, state=None, partition=None):
        """Job ids (ints) currently in STATE (long name) / PARTITION, ascending."""
        out = self.run("squeue -h -t all -o '%i %T %P'").stdout.split("\n")
        ids = []
        for line in out:
            f = line.split()
            if len(f) == 3 and (state is None or f[1] == state) and (partition is None or f[2] == partition):
                ids.append(int(f[0]))
        return sorted(ids)

    def finish(self):
        """Resume and cancel everything so no job step survives the daemons, then stop the harness."""
        for j in self.jobs("SUSPENDED"):
            self.run(f"scontrol resume {j}")
        self.run("scancel --user=root")
        for _ in range(40):
            if not self.run("squeue -h -t R,S,CG -o %i").stdout.strip():
                break
            time.sleep(0.5)
        oracle.stop()
        self.finished = True
        print(f"== {self.name}: done", file=sys.stderr)


def write(path, text, mode=0o644):
    with open(f"{WORK}/{path}", "w") as f:
        f.write(text)
    os.chmod(f"{WORK}/{path}", mode)


# ---------------------------------------------------------------------------------------------
# batteries of read-only commands
SQ_FIELDS = "i P j u T t M D R N r l".split()


def squeue_battery(s, tag, full=True):
    s.rec("squeue", f"[{tag}] default format, default states (pending, running, suspended, completing).", label=tag)
    s.rec("squeue -t all", f"[{tag}] default format, all states incl. finished jobs.", label=tag)
    s.rec("squeue -l -t all", f"[{tag}] long format.", label=tag)
    if not full:
        return
    s.rec("squeue -h", f"[{tag}] no header.")
    s.rec("squeue -l", f"[{tag}] long format, default states.")
    s.rec("squeue -h -l -t all", f"[{tag}] long format without header: is the date line also dropped?")
    for f in SQ_FIELDS:
        s.rec(f"squeue -t all -o %{f}", f"[{tag}] single field %{f}, no width.")
    s.rec("squeue -t all -o '%i %P %j %u %T %t %M %D %R %N %r %l'", f"[{tag}] all fields, single spaces.")
    for fmt in ("%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R",
                "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R",
                "%.18i|%18i|%-18i|", "%.5j|%5j|%-5j|%.3j|%3j|%j|", "%.2P|%2P|%.1T|%.3t|%.4M|%3l|%.2D|%2N|",
                "%.4R|%4R|%.20R|%-20R|%10r|%.10r|", "%.30j|%-30j|%.0j|%0j|", "%.1i|%1i|%.25N|%-25N|",
                "%i|%T", "x%iy %P", "%i %% %j", "A %i B", "%i\t%j\t%T", "%i%j", "%i  %j", " %i ", "%i %z %j",
                "%18i%9P", "%.18i%.9P"):
        s.rec(f"squeue -t all -o '{fmt}'", f"[{tag}] -o with widths/literals.")
    s.rec("squeue -t all -h -o '%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R'", f"[{tag}] documented default format, -h.")
    for sort in ("i", "-i", "P,i", "-P,i", "t", "-t", "t,i", "j", "-j", "M", "-M", "D", "-D", "l", "p", "-p",
                 "N", "u", "T", "P,t,-p"):
        s.rec(f"squeue -t all -S {sort}", f"[{tag}] sort -S {sort}.")
    s.rec("squeue -t all -S i -o '%i %T %p %Q'", f"[{tag}] %p (priority, float) and %Q (priority integer).")
    s.rec("squeue -j 1,2", f"[{tag}] job list.")
    s.rec("squeue -j 2,1", f"[{tag}] job list reversed.")
    s.rec("squeue -j 99", f"[{tag}] nonexistent job id.")
    s.rec("squeue -j 1,99", f"[{tag}] one existing, one nonexistent job id.")
    s.rec("squeue -j abc", f"[{tag}] invalid job id text.")
    s.rec("squeue --states=PD,R", f"[{tag}] state filter.")
    s.rec("squeue -t PD", f"[{tag}] state filter.")
    s.rec("squeue -t R,S", f"[{tag}] state filter.")
    s.rec("squeue -t running,suspended", f"[{tag}] state filter by long names.")
    s.rec("squeue -t CD,CA,F", f"[{tag}] state filter, finished states.")
    s.rec("squeue -t bogus", f"[{tag}] invalid state.")
    s.rec("squeue -p hipri", f"[{tag}] partition filter.")
    s.rec("squeue -p active,hipri -t all", f"[{tag}] partition filter, list.")
    s.rec("squeue -p nosuch", f"[{tag}] nonexistent partition.")
    s.rec("squeue -u root", f"[{tag}] user filter.")
    s.rec("squeue -u nosuchuser", f"[{tag}] nonexistent user.")
    s.rec("squeue -h -t all -o %i", f"[{tag}] ids only.")
    s.rec("squeue -t all -O jobid,partition,name,state,reason", f"[{tag}] -O (--Format) default widths.")
    s.rec("squeue -t all -O 'jobid:5,name:4,statecompact:3,timeused:8'", f"[{tag}] -O with widths.")


def sinfo_battery(s, tag, parts=("hipri",), full=True):
    s.rec("sinfo", f"[{tag}] default.", label=tag)
    s.rec("sinfo -N", f"[{tag}] node-oriented.", label=tag)
    s.rec("sinfo -s", f"[{tag}] summary.", label=tag)
    s.rec("sinfo -o '%P %a %l %D %t %N'", f"[{tag}] -o.", label=tag)
    if not full:
        return
    s.rec("sinfo -h", f"[{tag}] no header.")
    s.rec("sinfo -l", f"[{tag}] long.")
    s.rec("sinfo -N -l", f"[{tag}] node-oriented long.")
    s.rec("sinfo -R", f"[{tag}] reasons.")
    s.rec("sinfo -o '%9P %.5a %.10l %.6D %.6t %N'", f"[{tag}] documented default format spelled out.")
    s.rec("sinfo -o '%T|%t|%D|%N|%C|%c|%m'", f"[{tag}] more fields.")
    s.rec("sinfo -o '%.3P|%-12l|%20N|%.2t|'", f"[{tag}] widths and truncation.")
    s.rec("sinfo -e", f"[{tag}] exact (no grouping of nodes with different configs).")
    for p in parts:
        s.rec(f"sinfo -p {p}", f"[{tag}] partition filter.")
    s.rec("sinfo -p nosuch", f"[{tag}] nonexistent partition.")
    s.rec("sinfo -t idle", f"[{tag}] state filter idle.")
    s.rec("sinfo -t alloc,mix", f"[{tag}] state filter.")


# ---------------------------------------------------------------------------------------------
LINEAR = """SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=SUSPEND,GANG
NodeName=n[12-16] CPUs=1 RealMemory=1000
PartitionName=DEFAULT OverSubscribe=FORCE:1 Nodes=n[12-16]
PartitionName=active PriorityTier=1 Default=YES
PartitionName=hipri  PriorityTier=2
"""

JOB_SH = "#!/bin/sh\nsleep 300\n"
BATCH_SH = """#!/bin/sh
#SBATCH -N 1
#SBATCH -t 10
#SBATCH -p active
#SBATCH -J scripted
#SBATCH --mem=100
sleep 300
"""


def scenario_linear():
    s = Scenario("linear", LINEAR)
    s.start()
    write("job.sh", JOB_SH)
    write("batch.sh", BATCH_SH)
    write("noshebang.sh", "sleep 1\n")
    s.rec("sbatch job.sh", "Plain submit of a script file (sleep 300). -> job 1 runs.", mutating=True, label="plain")
    s.rec("sbatch --parsable --wrap='sleep 300'", "--parsable: only the id (no cluster name without federation). -> job 2.",
          mutating=True, label="parsable")
    s.rec("sbatch -J averyveryverylongjobname_0123456789 --wrap='sleep 300'", "-J long name. -> job 3.", mutating=True,
          label="name")
    s.rec("sbatch --wrap='sleep 3'", "--wrap; job 4 completes after 3 s (CD).", mutating=True, label="wrap")
    s.rec("sbatch --wrap='exit 3'", "job 5 fails at once (F, ExitCode 3:0).", mutating=True, label="fail")
    s.at(2.5)
    s.rec("sbatch batch.sh", "Script with #SBATCH -N 1 -t 10 -p active -J scripted --mem=100. -> job 6 runs.",
          mutating=True, label="script")
    s.rec("sbatch -N 2 -t 1:00:00 --wrap='sleep 300'", "-> job 7 pending (Resources).", mutating=True)
    s.rec("sbatch --wrap='sleep 300'", "-> job 8 pending (Priority).", mutating=True)
    s.rec("sbatch --begin=now+3600 -J later --wrap='sleep 1'", "-> job 9 pending (BeginTime).", mutating=True)
    # errors
    s.rec("sbatch --nodes=abc --wrap='sleep 1'", "Bad node count.", mutating=True, label="err")
    s.rec("sbatch -p nosuchpart --wrap='sleep 1'", "Nonexistent partition.", mutating=True, label="err")
    s.rec("sbatch -N 99 -J toolarge --wrap='sleep 1'",
          "More nodes than the partition has; EnforcePartLimits unset (NO): accepted, pends with PartitionConfig (job 10).",
          mutating=True, label="err")
    s.rec("sbatch --qos=nosuch --begin=now+3600 --wrap='sleep 1'",
          "Nonexistent QOS without accounting storage: accepted (job 11); see scenario accounting for the error.",
          mutating=True, label="err")
    s.rec("sbatch -t abc --wrap='sleep 1'", "Bad time limit.", mutating=True, label="err")
    s.rec("sbatch --mem=abc --wrap='sleep 1'", "Bad memory size.", mutating=True, label="err")
    s.rec("sbatch --begin=garbage --wrap='sleep 1'", "Bad begin time.", mutating=True, label="err")
    s.rec("sbatch /nonexistent.sh", "Missing script file.", mutating=True, label="err")
    s.rec("sbatch noshebang.sh", "Script without #! line.", mutating=True, label="err")
    s.rec("sbatch < /dev/null", "Empty script on stdin.", mutating=True, label="err")
    s.rec("sbatch --wrap='sleep 1' job.sh", "Both --wrap and a script.", mutating=True, label="err")
    s.rec("sbatch --bogus-option --wrap='sleep 1'", "Unknown option.", mutating=True, label="err")
    s.rec("sbatch -N 0 --wrap='sleep 1'", "Zero nodes.", mutating=True, label="err")
    s.rec("sbatch -N 3-2 --wrap='sleep 1'", "Node range max < min.", mutating=True, label="err")
    # snapshot A1: CD 4, F 5, R 1 2 3 6, PD 7 Resources 8 Priority 9 BeginTime 10 PartitionConfig 11 BeginTime
    s.at(7.0)
    squeue_battery(s, "A1", full=True)
    sinfo_battery(s, "A1", full=True)
    for j, what in ((1, "running"), (6, "running, -t 10, --mem=100, scripted"), (7, "pending Resources"),
                    (8, "pending Priority"), (9, "pending BeginTime"), (10, "pending PartitionConfig"),
                    (11, "pending, --qos=nosuch"), (4, "completed"), (5, "failed exit 3"), (3, "long name")):
        s.rec(f"scontrol show job {j}", f"[A1] {what}.", label="A1")
    s.rec("scontrol -o show job 1", "[A1] one-line form.")
    s.rec("scontrol show job 99", "[A1] nonexistent job id.")
    s.rec("scontrol show job abc", "[A1] invalid job id text.")
    s.rec("scontrol show node n12", "[A1] allocated node.")
    s.rec("scontrol show node n16", "[A1] node.")
    s.rec("scontrol show node", "[A1] all nodes.")
    s.rec("scontrol show node nosuch", "[A1] nonexistent node.")
    s.rec("scontrol show partition active", "[A1] partition.")
    s.rec("scontrol show partition", "[A1] all partitions.")
    s.rec("scontrol show partition nosuch", "[A1] nonexistent partition.")
    s.rec("scontrol -o show partition hipri", "[A1] one-line form.")
    # preemption by the high-tier partition
    s.at(16.0)
    r = s.rec("sbatch -p hipri -N 3 -t 5:00 -J urgent --wrap='sleep 300'",
              "High-tier job needing 3 nodes: gang-suspends active jobs. (Its id is 13: the rejected -N 0 "
              "submission consumed id 12 and left a FAILED job.)", mutating=True, label="preemptor")
    hp = int(r.stdout.split()[-1])
    s.at(21.0)
    squeue_battery(s, "A2", full=False)
    s.rec("squeue -t all -o '%i %T %t %M %l %r %R'", "[A2] fields for suspended jobs.")
    sinfo_battery(s, "A2", full=False)
    susp = s.jobs("SUSPENDED")
    for j in susp:
        s.rec(f"scontrol show job {j}", "[A2] gang-suspended by the hipri job (PreemptTime, SuspendTime, SecsPreSuspend).",
              label="A2")
    s.rec(f"scontrol show job {hp}", "[A2] the preemptor, running.", label="A2")
    s.rec("scontrol show job 12", "[A2] the job left by the rejected 'sbatch -N 0'.", label="A2")
    s.at(23.0)
    s.rec("squeue -t all -o '%i %T %M'", "[A2+2s] TIME of suspended jobs stays frozen; running ones advance.")
    # scancel / scontrol suspend, resume, requeue
    s.rec("scancel 8", "Cancel a pending job.", mutating=True, label="scancel")
    s.rec("scancel 99", "Cancel a nonexistent job (silent without -v).", mutating=True, label="scancel")
    s.rec("scancel -v 98", "Same with -v.", mutating=True, label="scancel")
    s.rec("scancel abc", "Invalid job id text.", mutating=True, label="scancel")
    s.rec("scancel 4", "Cancel an already completed job.", mutating=True, label="scancel")
    running_active = [j for j in s.jobs("RUNNING", "active") if j != 6]
    s.rec(f"scontrol suspend {hp}", "Manually suspend the running hipri job.", mutating=True, label="suspend")
    s.rec("scontrol suspend 6", "Manually suspend a running active job (-t 10).", mutating=True, label="suspend")
    s.rec("scontrol suspend 7", "Suspend job 7 (pending at A1; see the neighbouring squeue records for its state now).",
          mutating=True, label="suspend")
    s.rec("scontrol suspend 99", "Suspend a nonexistent job.", mutating=True, label="suspend")
    s.rec("scontrol suspend 4", "Suspend a completed job.", mutating=True, label="suspend")
    s.rec(f"scontrol suspend {hp}", "Suspend an already suspended job.", mutating=True, label="suspend")
    s.at(25.0)
    s.rec("squeue -t all", "After manual suspends.")
    s.rec(f"scontrol show job {hp}", "Manually suspended hipri job.")
    s.rec("scontrol show job 6", "Manually suspended active job (EndTime moves while suspended?).")
    s.rec(f"scontrol resume {hp}", "Resume the manually suspended job.", mutating=True, label="resume")
    s.rec("scontrol resume 6", "Resume the manually suspended job.", mutating=True, label="resume")
    if running_active:
        s.rec(f"scontrol resume {running_active[0]}", "Resume a running job.", mutating=True, label="resume")
    s.rec("scontrol resume 7", "Resume job 7 (pending at A1; the manual suspends may have let it start).",
          mutating=True, label="resume")
    s.rec("scontrol resume 99", "Resume a nonexistent job.", mutating=True, label="resume")
    if susp:
        s.rec(f"scontrol resume {susp[0]}", "Resume a gang-suspended (preempted) job while its preemptor runs.",
              mutating=True, label="resume")
    if running_active:
        s.rec(f"scontrol requeue {running_active[0]}", "Requeue a running job.", mutating=True, label="requeue")
    s.rec("scontrol requeue 99", "Requeue a nonexistent job.", mutating=True, label="requeue")
    s.rec("scontrol requeue 4", "Requeue a completed job (it becomes PENDING again).", mutating=True, label="requeue")
    s.rec("scontrol requeue 7", "Requeue job 7 (pending at A1; the manual suspends may have let it start).",
          mutating=True, label="requeue")
    s.rec("squeue -t all", "[A3-] right after the requeues (requeued running job shows CG).")
    s.at(28.0)
    s.rec("squeue -t all", "[A3] after cancel/suspend/resume/requeue.", label="A3")
    s.rec("squeue -t all -l", "[A3]", label="A3")
    s.rec("scontrol show job 8", "[A3] cancelled while pending.")
    if running_active:
        s.rec(f"scontrol show job {running_active[0]}", "[A3] requeued (Restarts=1, pending BeginTime).")
    s.rec("scontrol show job 4", "[A3] completed job after scontrol requeue.")
    s.rec("scontrol show job 6", "[A3] after suspend+resume (SecsPreSuspend, EndTime).")
    s.rec(f"scontrol show job {hp}", "[A3] hipri job after manual suspend+resume.")
    if susp:
        s.rec(f"scontrol show job {susp[0]}", "[A3] gang-suspended job after scontrol resume.")
    # priority tier change
    s.rec("scontrol update PartitionName=active PriorityTier=3", "Raise the low partition above hipri.",
          mutating=True, label="update")
    s.rec("scontrol update PartitionName=nosuch PriorityTier=3", "Nonexistent partition.", mutating=True,
          label="update")
    s.rec("scontrol update PartitionName=active PriorityTier=abc", "Bad value.", mutating=True, label="update")
    s.at(33.0)
    s.rec("squeue -t all", "[A4] after active PriorityTier=3: hipri job suspended, active jobs resumed.", label="A4")
    s.rec(f"scontrol show job {hp}", "[A4] hipri job suspended by the tier change.")
    s.rec("scontrol show partition active", "[A4] PriorityTier=3.")
    s.rec("sinfo", "[A4]")
    s.rec(f"scancel {hp}", "Cancel the (suspended) hipri job.", mutating=True, label="scancel")
    s.rec("scancel 6", "Cancel a running job.", mutating=True, label="scancel")
    s.rec("squeue -t all", "[A5] right after scancel (may show CG).", label="A5")
    s.at(37.0)
    s.rec("squeue -t all", "[A5] after the cancels: CA.", label="A5")
    s.rec("squeue -t all -l", "[A5]", label="A5")
    s.rec(f"scontrol show job {hp}", "[A5] cancelled while suspended.")
    s.rec("scontrol show job 6", "[A5] cancelled while running.")
    s.rec("squeue -t all -o '%i %T %t %r %R %M %N'", "[A5] fields for cancelled/completed/failed jobs.")
    s.rec("sinfo", "[A5]")
    s.finish()


# ---------------------------------------------------------------------------------------------
REQUEUE = """SelectType=select/linear
PreemptType=preempt/partition_prio
PreemptMode=REQUEUE
NodeName=n[1-4] CPUs=1 RealMemory=1000
PartitionName=DEFAULT Nodes=n[1-4]
PartitionName=low PriorityTier=1 Default=YES PreemptMode=REQUEUE
PartitionName=scav PriorityTier=1 PreemptMode=CANCEL
PartitionName=high PriorityTier=2
"""


def scenario_requeue():
    s = Scenario("requeue", REQUEUE)
    s.start()
    s.do("sbatch --wrap='sleep 300'")
    s.do("sbatch --wrap='sleep 300'")
    s.do("sbatch -p scav --wrap='sleep 300'")
    s.do("sbatch -p scav --wrap='sleep 300'")
    s.at(3.0)
    s.rec("squeue", "[R0] four jobs running.")
    s.rec("sbatch -p high -N 4 -J big --wrap='sleep 300'",
          "High-tier job needing all 4 nodes: requeues the low jobs (1, 2), cancels the scav jobs (3, 4) as PREEMPTED.",
          mutating=True)
    s.rec("squeue -t all", "[R1] immediately after the preemptor's submission.")
    s.at(5.0)
    s.rec("squeue -t all", "[R1] 2 s later.")
    s.at(9.0)
    s.rec("squeue -t all", "[R2] settled: requeued jobs pending BeginTime, scav jobs PR.", label="R2")
    s.rec("squeue -t all -l", "[R2]", label="R2")
    s.rec("squeue -t all -o '%i %T %t %r %R %M %N'", "[R2]", label="R2")
    for j, what in ((1, "requeued by preemption"), (3, "preempted (cancelled)"), (5, "the preemptor")):
        s.rec(f"scontrol show job {j}", f"[R2] {what}.", label="R2")
    s.rec("sinfo", "[R2]")
    s.rec("scontrol show job", "[R2] all jobs (blank line after each).")
    s.rec("scontrol requeue 5", "Requeue the running preemptor.", mutating=True)
    s.rec("scontrol requeue 3", "Requeue a preempted (finished) job.", mutating=True)
    s.at(12.0)
    s.rec("squeue -t all", "[R3] after requeue of job 5.", label="R3")
    s.rec("scontrol show job 5", "[R3] requeued by scontrol.")
    s.finish()


# ---------------------------------------------------------------------------------------------
CONS_RES = """SelectType=select/cons_res
SelectTypeParameters=CR_Core
NodeName=c[1-4] CPUs=2 RealMemory=1000
PartitionName=short Nodes=c[1-2] MaxTime=30:00
PartitionName=batch Nodes=c[1-4] Default=YES MaxTime=1-00:00:00
PartitionName=debug Nodes=c[3-4] MaxTime=90
PartitionName=verylongpartitionname Nodes=c[1-4] MaxTime=2:00:00 DefaultTime=10
"""


def scenario_cons_res():
    s = Scenario("cons_res", CONS_RES)
    s.start()
    s.rec("sinfo", "[C0] all idle.")
    s.rec("sinfo -s", "[C0] all idle.")
    s.rec("sbatch -p short -n 1 -J one --wrap='sleep 300'", "-> job 1 (1 CPU).", mutating=True)
    s.rec("sbatch -p batch -n 2 -J two --wrap='sleep 300'", "-> job 2 (2 CPUs).", mutating=True)
    s.rec("sbatch -p debug -n 1 -w c4 -J onfour --wrap='sleep 300'", "-> job 3 on c4.", mutating=True)
    s.rec("sbatch -p short -n 4 -J big --wrap='sleep 300'", "-> job 4 pending (Resources).", mutating=True)
    s.rec("sbatch -p short -t 2:00:00 -J toolong --wrap='sleep 300'",
          "-> job 5: time limit over MaxTime=30:00 (EnforcePartLimits=NO: pending PartitionTimeLimit).", mutating=True)
    s.rec("sbatch -p verylongpartitionname -J dflt --wrap='sleep 300'",
          "-> job 6 in a partition with a 21-character name and DefaultTime=10.", mutating=True)
    s.rec("sbatch --uid=systemd-network -o /dev/null -J otheruser --begin=now+3600 --wrap='sleep 300'",
          "-> job 7 (pending BeginTime) submitted by root on behalf of a user with a 15-character name (USER truncation).", mutating=True)
    s.at(3.0)
    s.rec("scontrol update nodename=c3 state=drain reason='maint window'", "Drain an idle node.", mutating=True)
    s.rec("scontrol update nodename=c4 state=drain reason=retire", "Drain a node with a running job.", mutating=True)
    s.rec("scontrol update nodename=nosuch state=drain reason=x", "Nonexistent node.", mutating=True)
    s.rec("scontrol update nodename=c2 state=drain", "Drain without reason.", mutating=True)
    s.at(5.0)
    squeue_battery(s, "C1", full=False)
    s.rec("squeue -t all -S P", "[C1] sort by partition name only.")
    s.rec("squeue -t all -o '%i %P %C %D %l %L %R'", "[C1] %C cpus, %L time left.")
    sinfo_battery(s, "C1", parts=("short", "debug", "verylongpartitionname"), full=True)
    for n in ("c1", "c2", "c3", "c4"):
        s.rec(f"scontrol show node {n}", "[C1] mixed / allocated / drained / draining node.", label="C1")
    s.rec("scontrol show partition", "[C1] all partitions, with MaxTime/DefaultTime set.")
    s.rec("squeue -u systemd-network", "[C1] user filter.")
    s.rec("squeue -t all -o '%.5l|%.9l|%9l|%.10l|%.3M|%.4L|%5L|%.12L|'", "[C1] widths on time fields (truncation?).")
    s.rec("squeue -t all -o '%.3D|%.1D|%.2C|%1C|%.3P|'", "[C1] widths on number fields.")
    s.rec("squeue -t all -l -S P,-i", "[C1] long format with 1-00:00:00 limits and long partition names.")
    s.rec("squeue -t all -o '%u|%.5u|%10u|%P|%.5P'", "[C1] user and partition fields.")
    for j in (1, 2, 4, 5, 6, 7):
        s.rec(f"scontrol show job {j}", "[C1]", label="C1")
    s.rec("scontrol update nodename=c3 state=resume", "Undrain idle node.", mutating=True)
    s.rec("scontrol update nodename=c4 state=idle", "Undrain with state=idle.", mutating=True)
    s.rec("scontrol update nodename=c4 state=undrain", "Undrain a draining node.", mutating=True)
    s.at(7.0)
    s.rec("sinfo", "[C2] after resume.")
    s.rec("sinfo -R", "[C2] after resume.")
    s.rec("sinfo -o '%.4l|%5l|%.3D|%.3t|%.12l|%l'", "[C2] widths on time/number fields.")
    s.finish()


# ---------------------------------------------------------------------------------------------
DOWN = """SlurmdTimeout=8
EnforcePartLimits=ALL
NodeName=d[1-4] CPUs=1 RealMemory=1000
DownNodes=d4 State=DOWN Reason="bad fan"
PartitionName=up Nodes=d[1-4] Default=YES MaxTime=30:00
PartitionName=off Nodes=d[1-2] State=DOWN
PartitionName=drn Nodes=d[1-2] State=DRAIN
PartitionName=inact Nodes=d[3-4] State=INACTIVE
"""


def scenario_down():
    s = Scenario("down", DOWN)
    s.start()
    s.rec("sinfo", "[D0] right after start: DownNodes=d4 was revived by ReturnToService=2 when its slurmd registered.")
    s.rec("sinfo -R", "[D0]")
    s.rec("scontrol show node d4", "[D0]")
    s.rec("sbatch -J r1 --wrap='sleep 300'", "-> job 1 runs.", mutating=True)
    s.rec("sbatch -p off --wrap='sleep 300'", "Submit to a State=DOWN partition (pending PartitionDown).", mutating=True)
    s.rec("sbatch -p drn --wrap='sleep 300'", "Submit to a State=DRAIN partition.", mutating=True)
    s.rec("sbatch -p inact --wrap='sleep 300'", "Submit to a State=INACTIVE partition.", mutating=True)
    s.rec("sbatch -N 99 --wrap='sleep 1'", "EnforcePartLimits=ALL: more nodes than the partition.", mutating=True)
    s.rec("sbatch -t 60 --wrap='sleep 1'", "EnforcePartLimits=ALL: over MaxTime=30:00.", mutating=True)
    s.at(2.0)
    s.rec("scontrol update nodename=d2 state=down reason='maintenance'", "Down a responding idle node.", mutating=True)
    s.rec("scontrol update nodename=d3 state=down", "Down without a reason.", mutating=True)
    s.rec("scontrol update nodename=d1 state=drain reason='will fail'", "Drain the node running job 1.",
          mutating=True)
    s.rec("scontrol update nodename=d4 state=down reason='bad fan'", "Down d4 (whether or not it came back).",
          mutating=True)
    s.at(3.0)
    s.rec("squeue -t all", "[D1]", label="D1")
    s.rec("squeue -t all -o '%i %P %T %r %R'", "[D1]", label="D1")
    sinfo_battery(s, "D1", parts=("off", "drn", "inact"), full=True)
    for p in ("off", "drn", "inact"):
        s.rec(f"scontrol show partition {p}", "[D1]", label="D1")
    for n in ("d1", "d2", "d4"):
        s.rec(f"scontrol show node {n}", "[D1]", label="D1")
    s.rec("scontrol show job 2", "[D1] pending in a DOWN partition.")
    # an unresponsive node: kill d3's slurmd (started by the harness for this scenario) after undraining it
    s.rec("scontrol update nodename=d3 state=resume", "Resume a node that is idle (neither down nor drained).",
          mutating=True)
    s.at(5.0)
    pid = int(open(f"{BASE}/slurmd.d3.pid").read().strip())
    os.kill(pid, 15)
    s.steps.append({"at": s.now(), "cmd": "kill -TERM <pid of slurmd -N d3>"})
    s.at(20.0)
    s.rec("sinfo", "[D2] ~15 s after d3's slurmd stopped: expected idle* for d3; the admin-DOWN nodes d2, d4 were "
          "back to idle in trial runs (ReturnToService=2 revives them when they answer the controller's ping).", label="D2")
    s.rec("sinfo -N", "[D2]", label="D2")
    s.rec("sinfo -R", "[D2]", label="D2")
    s.rec("scontrol show node d3", "[D2] IDLE+NOT_RESPONDING.", label="D2")
    s.at(45.0)
    s.rec("sinfo", "[D3] ~40 s after d3's slurmd stopped (SlurmdTimeout=8): expected down* (DOWN+NOT_RESPONDING, "
          "reason 'Not responding' set by slurm).", label="D3")
    s.rec("sinfo -N -l", "[D3]", label="D3")
    s.rec("sinfo -R", "[D3]", label="D3")
    s.rec("sinfo -o '%P %a %l %D %t %N'", "[D3]", label="D3")
    s.rec("sinfo -s", "[D3]", label="D3")
    s.rec("scontrol show node d3", "[D3] not responding.", label="D3")
    s.finish()


# ---------------------------------------------------------------------------------------------
ACCT_CONF = """NodeName=q[1-2] CPUs=1 RealMemory=1000
PartitionName=main_partition_x Nodes=q[1-2] Default=YES MaxTime=10-00:00:00
PartitionName=p2 Nodes=q[1-2] MaxTime=100
"""


def scenario_accounting():
    s = Scenario("accounting", ACCT_CONF, qos=["add qos high priority=100"])
    s.start()
    s.rec("sbatch --qos=nosuch --wrap='sleep 1'", "Nonexistent QOS with accounting storage enforcing qos.",
          mutating=True, label="err")
    s.rec("sbatch --qos=high --wrap='sleep 300'", "Existing QOS the user may not use (not in its association).",
          mutating=True, label="err")
    s.rec("sbatch -A nosuchacct --wrap='sleep 1'", "Nonexistent account.", mutating=True, label="err")
    s.rec("sbatch --wrap='sleep 300'", "Plain submit with accounting.", mutating=True)
    s.at(3.0)
    s.rec("squeue", "[Q1] partition name longer than 9.")
    s.rec("sinfo", "[Q1] the default partition has the longest name (16 chars + '*').")
    s.rec("sinfo -N", "[Q1]")
    s.rec("sinfo -s", "[Q1]")
    s.rec("scontrol show job 1", "[Q1] Account=acct QOS=normal with accounting.")
    s.finish()


LONGNAMES = """NodeName=computenode[01-03] CPUs=1 RealMemory=1000
NodeName=x1 CPUs=1 RealMemory=1000
PartitionName=p Nodes=computenode[01-03],x1 Default=YES
"""


def scenario_longnames():
    s = Scenario("longnames", LONGNAMES)
    s.start()
    s.rec("sbatch -N 2 -J two --wrap='sleep 300'", "-> job 1 on two nodes.", mutating=True)
    s.at(3.0)
    s.rec("squeue", "[L1] node list of a multi-node job.")
    s.rec("squeue -o '%N|%.5N|%5N|%.30N|'", "[L1] node list widths.")
    s.rec("sinfo", "[L1]")
    s.rec("sinfo -N", "[L1] NODELIST column width with 13-character node names.")
    s.rec("sinfo -N -l", "[L1]")
    s.rec("sinfo -s", "[L1]")
    s.rec("sinfo -R", "[L1]")
    s.finish()


ENDINGS = """NodeName=e[1-3] CPUs=1 RealMemory=1000
PartitionName=main Nodes=e[1-3] Default=YES
"""


def scenario_endings():
    s = Scenario("endings", ENDINGS)
    s.start()
    s.rec("sbatch --wrap='sleep 300'", "-> job 1.", mutating=True)
    s.rec("sbatch -t 1 -J limited --wrap='sleep 300'", "-> job 2 with a 1-minute limit (ends TIMEOUT).", mutating=True)
    s.rec("sbatch --wrap='sleep 2'", "-> job 3 completes after 2 s.", mutating=True)
    s.at(4.0)
    s.rec("scancel 1", "Cancel a running job.", mutating=True)
    s.rec("squeue", "[E1] default states right after scancel: is the COMPLETING job listed? Is the CD job?")
    s.rec("squeue -t all", "[E1] all states right after scancel.")
    s.at(8.0)
    s.rec("squeue", "[E2] default states after the cancel finished: CA and CD jobs are not listed.")
    s.rec("squeue -t all", "[E2]")
    s.at(100.0)
    s.rec("squeue -t all", "[E3] job 2 past its 1-minute limit (the limit check runs about every 30 s).")
    s.rec("squeue -t all -l", "[E3]")
    s.rec("squeue -t all -o '%i %T %t %r %R %M %l %N'", "[E3]")
    s.rec("scontrol show job 2", "[E3] TIMEOUT job.")
    s.rec("scontrol show job 1", "[E3] cancelled job.")
    s.finish()


SCENARIOS = {"linear": scenario_linear, "requeue": scenario_requeue, "cons_res": scenario_cons_res,
             "down": scenario_down, "accounting": scenario_accounting, "longnames": scenario_longnames,
             "endings": scenario_endings}


def main(argv):
    if "--list" in argv:
        print("\n".join(SCENARIOS))
        return
    if argv and argv[0] == "--update":
        # re-record only the named scenarios and replace their records in records.json
        names = argv[1:]
        path = os.path.join(HERE, "records.json")
        old = json.load(open(path)) if os.path.exists(path) else []
        for name in names:
            try:
                SCENARIOS[name]()
            finally:
                if CURRENT is not None and not CURRENT.finished:
                    CURRENT.finish()
        order = list(SCENARIOS)
        merged = [r for r in old if r["scenario"] not in names] + RECORDS
        merged.sort(key=lambda r: order.index(r["scenario"]))   # stable: keeps each scenario's record order
        with open(path, "w") as f:
            f.write(json.dumps(merged, indent=1, ensure_ascii=False) + "\n")
        print(f"{len(RECORDS)} records replaced/added -> {path}", file=sys.stderr)
        return
    names = argv or list(SCENARIOS)
    for name in names:
        try:
            SCENARIOS[name]()
        finally:
            if CURRENT is not None and not CURRENT.finished:
                CURRENT.finish()
    text = json.dumps(RECORDS, indent=1, ensure_ascii=False) + "\n"
    if argv:
        print(text)
    else:
        with open(os.path.join(HERE, "records.json"), "w") as f:
            f.write(text)
        print(f"{len(RECORDS)} records -> {HERE}/records.json", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
