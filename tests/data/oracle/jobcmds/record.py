#!/usr/bin/env python3
"""Record what real Slurm 22.05 (Debian slurm-wlm 22.05.8) prints for the job commands Plurm's
tests/framework/test_jobcmds.py checks: scontrol update JobId=..., scontrol show config,
--version, squeue --start / -O / %a %q, sbatch --test-only / --wait / --signal and friends.

Run as root after /work/shared/oracle/setup.sh:

    python3 tests/data/oracle/jobcmds/record.py        # -> records.json beside this file
    python3 tests/data/oracle/jobcmds/record.py users  # -> records_users.json

Note: sbatch --test-only uses up a job id, so the first scenario's ids are shifted by its
test-only submissions (run1 is job 2); see records.json.

It reuses the harness of tests/data/oracle/cli/record_cli.py (one slurmctld, one slurmd per node
on loopback); commands "as a user" run through ``runuser -u nobody``.  Behaviour only: no Slurm
source is read or copied.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import record_cli as rc  # noqa: E402

CONF = """SelectType=select/linear
NodeName=n[1-4] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-4] Default=YES MaxTime=60
PartitionName=q Nodes=n[1-2] MaxTime=120
"""

USER = "cd /tmp && runuser -u nobody -- "


def scenario():
    s = rc.Scenario("jobcmds", CONF)
    s.start()
    s.rec("scontrol show config", "Configuration dump.")
    for cmd in ("scontrol --version", "scontrol -V", "sbatch -V", "sbatch --version", "squeue -V",
                "sinfo -V", "scancel -V", "sacct -V"):
        s.rec(cmd, "version")
    s.rec("sbatch --test-only -t 5 --wrap='sleep 1'", "test-only on an idle cluster", label="testonly")
    s.rec("sbatch -t 10 -J run1 --wrap='sleep 300'", "job runs", mutating=True)
    s.rec("sbatch -N 4 -t 30 -J big --wrap='sleep 300'", "pending Resources", mutating=True)
    s.rec("sbatch -t 20 -J later --begin=now+3600 --wrap='sleep 300'", "pending BeginTime", mutating=True)
    s.at(3)
    s.rec("sbatch --test-only -N 4 --wrap='sleep 1'", "test-only that must wait", label="testonly")
    s.rec("sbatch --test-only -p q -N 1 -t 5 --wrap='sleep 1'", "test-only, other partition", label="testonly")
    s.rec("squeue --start", "expected starts")
    s.rec("squeue --start -t all", "expected starts, all states")
    s.rec("squeue -t all -o '%i|%a|%q|%.5a|%.5q'", "account and qos letters")
    for field in ("jobid", "name", "state", "statecompact", "partition", "username", "account", "qos",
                  "timeused", "timelimit", "numnodes", "numcpus", "nodelist", "reason", "submittime",
                  "starttime", "endtime", "priority", "workdir", "stdout", "tres-alloc", "reasonlist",
                  "timeleft", "userid", "comment", "stderr", "command", "numtasks", "jobarrayid", "prioritylong"):
        s.rec(f"squeue -t all -O {field}", "one -O field, default width")
    s.rec("squeue -t all -O jobid:5,name:.10,state:.3", "-O widths")
    s.rec("squeue -t all -O jobid:,name", "-O empty width")
    s.rec("squeue -t all -O bogus", "-O unknown")
    s.rec("squeue --me", "--me")
    s.rec("squeue --name=run1,big", "--name")
    s.rec("squeue -t all --noheader", "--noheader")
    # scontrol update as root
    for cmd in ("scontrol update JobId=1 TimeLimit=20", "scontrol update JobId=1 Partition=q",
                "scontrol update JobId=1 NumNodes=2", "scontrol update JobId=1 Name=renamed",
                "scontrol update JobId=1 Comment=hello", "scontrol update JobId=1 Requeue=0",
                "scontrol update JobId=1 StartTime=now+60", "scontrol update JobId=1 Nice=5",
                "scontrol update JobId=1 QOS=normal", "scontrol update JobId=1 Account=foo",
                "scontrol update JobId=1 Priority=5",
                "scontrol update JobId=2 Partition=q", "scontrol update JobId=2 NumNodes=2",
                "scontrol update JobId=2 NumTasks=2", "scontrol update JobId=2 Nice=10",
                "scontrol update JobId=2 Priority=5", "scontrol update JobId=2 TimeLimit=+5",
                "scontrol update JobId=2 TimeLimit=-5", "scontrol update JobId=2 TimeLimit=-500",
                "scontrol update JobId=2 TimeLimit=999", "scontrol update JobId=2 StartTime=now+60",
                "scontrol update JobId=2 JobName=renamed2", "scontrol update JobId=2 Requeue=1",
                "scontrol update JobId=2 Foo=bar", "scontrol update JobId=2",
                "scontrol update JobId=99 TimeLimit=5", "scontrol update JobId=2 TimeLimit=abc",
                "scontrol update JobId=2 Nice=abc", "scontrol update JobId=2 Priority=abc",
                "scontrol update JobId=2 NumNodes=abc", "scontrol update JobId=2 Partition=nosuch",
                "scontrol update JobId=abc TimeLimit=5", "scontrol update TimeLimit=5 JobId=2",
                "scontrol update jobid=2 timelimit=7"):
        s.rec(cmd, "update as root", mutating=True, label="update")
    s.rec("scontrol show job 1", "after updates")
    s.rec("scontrol show job 2", "after updates")
    s.rec("squeue -t all", "after updates")
    # as a user
    s.rec(USER + "sbatch -t 10 -p p --wrap='sleep 300'", "user job: runs (job 4)", mutating=True)
    s.rec(USER + "sbatch -t 10 -p p --begin=now+3600 --wrap='sleep 300'", "user job pending (5)",
          mutating=True)
    s.at(8)
    for cmd in ("scontrol update JobId=4 TimeLimit=20", "scontrol update JobId=4 TimeLimit=5",
                "scontrol update JobId=5 TimeLimit=20", "scontrol update JobId=5 TimeLimit=90",
                "scontrol update JobId=5 TimeLimit=3", "scontrol update JobId=5 Priority=1",
                "scontrol update JobId=5 Nice=-5", "scontrol update JobId=5 Nice=5",
                "scontrol update JobId=5 Comment=mine", "scontrol update JobId=1 TimeLimit=5",
                "scontrol update JobId=4 Partition=q", "scontrol update JobId=5 Partition=q"):
        s.rec(USER + cmd, "update as a user", mutating=True, label="userupdate")
    s.rec("scontrol show job 5", "after user updates")
    s.rec("sbatch --wait -t 5 --wrap='exit 3'", "wait for a failing job", mutating=True, label="wait")
    s.rec("sbatch --wait -t 5 --wrap='sleep 2'", "wait for a good job", mutating=True, label="wait")
    s.rec("sbatch --gres=gpu:1 --wrap='sleep 1'", "gres the nodes lack", mutating=True, label="gres")
    s.rec("sbatch --ntasks-per-node=2 --comment=hi --mail-type=END --mail-user=a@b --wckey=wk "
          "--signal=B:USR1@30 -t 5 --wrap='sleep 1'", "accepted options", mutating=True, label="opts")
    s.rec("sbatch --signal=FOO@30 --wrap='sleep 1'", "bad signal", mutating=True, label="signal")
    s.rec("sbatch --signal=USR1@abc --wrap='sleep 1'", "bad signal time", mutating=True, label="signal")
    s.rec("sbatch --signal=X:USR1 --wrap='sleep 1'", "bad signal flag", mutating=True, label="signal")
    s.rec("sbatch --mail-type=BOGUS --wrap='sleep 1'", "bad mail type", mutating=True, label="mail")
    s.rec("sbatch --test-only --wrap='sleep 1' --parsable", "test-only parsable", label="testonly")
    s.finish()


def scenario_users():
    """Who may change what: a user's own running and pending jobs, an admin's pending job."""
    s = rc.Scenario("jobcmds_users", CONF)
    s.start()
    s.rec(USER + "sbatch -t 10 --wrap='sleep 300'", "user job 1 runs", mutating=True)
    s.rec(USER + "sbatch -t 10 -N 4 --wrap='sleep 300'", "user job 2 pends (Resources)", mutating=True)
    s.rec("sbatch -t 10 -N 4 -J rootjob --wrap='sleep 300'", "root job 3 pends", mutating=True)
    s.at(2)
    for cmd in ("scontrol update JobId=1 TimeLimit=20", "scontrol update JobId=1 TimeLimit=5",
                "scontrol update JobId=1 TimeLimit=UNLIMITED",
                "scontrol update JobId=2 TimeLimit=20", "scontrol update JobId=2 TimeLimit=90",
                "scontrol update JobId=2 TimeLimit=3", "scontrol update JobId=2 Priority=1",
                "scontrol update JobId=2 Priority=999999999999", "scontrol update JobId=1 Priority=1",
                "scontrol update JobId=2 Nice=-5", "scontrol update JobId=2 Nice=5",
                "scontrol update JobId=2 Comment=mine", "scontrol update JobId=2 Partition=q",
                "scontrol update JobId=2 NumNodes=2", "scontrol update JobId=2 NumTasks=3",
                "scontrol update JobId=2 StartTime=now+600", "scontrol update JobId=2 Requeue=0",
                "scontrol update JobId=2 Name=userjob", "scontrol update JobId=3 TimeLimit=5",
                "scontrol update JobId=1 Name=running", "scontrol update JobId=1 Comment=c"):
        s.rec(USER + cmd, "update as a user", mutating=True, label="userupdate")
    s.rec("scontrol show job 1", "after user updates")
    s.rec("scontrol show job 2", "after user updates")
    for cmd in ("scontrol update JobId=3 Nice=100", "scontrol update JobId=3 NumNodes=2-3",
                "scontrol update JobId=3 NumNodes=9", "scontrol update JobId=3 Partition=nosuch",
                "scontrol update JobId=3 QOS=normal", "scontrol update JobId=3 Account=foo",
                "scontrol update JobId=3 StartTime=now+60", "scontrol update JobId=3 NumTasks=2",
                "scontrol update JobId=3 TimeLimit=UNLIMITED", "scontrol update JobId=3 Partition=q"):
        s.rec(cmd, "update as root, pending job", mutating=True, label="update")
    s.rec("scontrol show job 3", "after root updates")
    s.rec("squeue --start", "before backfill")
    s.at(40)
    s.rec("squeue --start", "after a backfill cycle")
    s.rec("squeue --start -o '%i %S'", "start with a format")
    s.rec("sbatch --test-only -N 4 -t 5 --wrap='sleep 1'", "test-only behind pending jobs", label="testonly")
    s.rec("scancel 1 && sleep 1; scontrol update JobId=1 TimeLimit=3", "finished job", label="finished")
    s.finish()


def main():
    try:
        if sys.argv[1:] == ["users"]:
            scenario_users()
            with open(os.path.join(HERE, "records_users.json"), "w") as f:
                f.write(json.dumps(rc.RECORDS, indent=1, ensure_ascii=False) + "\n")
            return
        scenario()
    finally:
        if rc.CURRENT is not None and not rc.CURRENT.finished:
            rc.CURRENT.finish()
    with open(os.path.join(HERE, "records.json"), "w") as f:
        f.write(json.dumps(rc.RECORDS, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(rc.RECORDS)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
