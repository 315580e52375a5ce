#!/usr/bin/env python3
"""Record what real Slurm 22.05 (Debian slurm-wlm 22.05.8) prints for the refusals issue 31
("Hostile input") names: scontrol update of a partition with a bad State, PriorityTier or
GraceTime; scancel -s with a signal that does not exist; and sacctmgr (slurmdbd) refusing a QOS
preemption loop.

Run as root after /work/shared/oracle/setup.sh:

    python3 tests/data/oracle/hostile/record.py        # -> records.json beside this file

It reuses the harness of tests/data/oracle/cli/record_cli.py (one slurmctld, one slurmd per node
on loopback, slurmdbd on MariaDB for the QOS commands). If mariadbd is not running, the script
starts it and stops it again, by pid, at the end. Behaviour only: no Slurm source is read or
copied.
"""
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import record_cli as rc  # noqa: E402

CONF = """NodeName=n[1-2] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-2] Default=YES MaxTime=60
"""


def start_mariadb():
    """The pid of a mariadbd this script started, or None when one was running already."""
    if subprocess.run(["pgrep", "-x", "mariadbd"], capture_output=True).returncode == 0:
        return None
    os.makedirs("/run/mysqld", exist_ok=True)
    subprocess.run(["chown", "mysql:mysql", "/run/mysqld"], check=True)
    log = open("/tmp/mariadb-hostile.log", "w")
    proc = subprocess.Popen(
        ["mariadbd", "--user=mysql", "--datadir=/var/lib/mysql", "--socket=/run/mysqld/mysqld.sock",
         "--pid-file=/run/mysqld/mysqld.pid"], stdout=log, stderr=log, start_new_session=True)
    for _ in range(60):
        if subprocess.run(["mysql", "-e", "select 1"], capture_output=True).returncode == 0:
            break
        time.sleep(0.5)
    return proc


def scenario():
    s = rc.Scenario("hostile", CONF, qos=["add qos a"])
    s.start()
    s.rec("sbatch -t 10 --wrap='sleep 300'", "job 1 runs", mutating=True)
    s.at(2)
    for update in ("State=BOGUS", "State=bogus", "State=", "PriorityTier=-5", "PriorityTier=abc",
                   "PriorityTier=65534", "GraceTime=-1", "GraceTime=abc", "PriorityJobFactor=-1"):
        s.rec(f"scontrol update PartitionName=p {update}", "partition update refused",
              label="partupdate")
    s.rec("scontrol show partition p", "after the refused updates")
    for sig in ("BOGUS", "SIGBOGUS", "99", "0", "65", "-1", "usr1"):
        s.rec(f"scancel -s {sig} 1", "scancel with a signal", label="signal")
    s.rec("sacctmgr -i add qos b", "a second QOS", mutating=True, label="qos")
    s.rec("sacctmgr -i modify qos a set preempt=b", "a preempts b", mutating=True, label="qos")
    s.rec("sacctmgr -i modify qos b set preempt=a", "b preempts a: a loop", mutating=True, label="qos")
    s.rec("sacctmgr -i modify qos a set preempt=a", "a preempts itself", mutating=True, label="qos")
    s.rec("sacctmgr -i add qos c", "a third QOS", mutating=True, label="qos")
    s.rec("sacctmgr -i modify qos c set preempt=a", "c preempts a (no loop)", mutating=True,
          label="qos")
    s.rec("sacctmgr -i modify qos b set preempt=c", "b preempts c: a loop through a",
          mutating=True, label="qos")
    s.rec("sacctmgr -n -p show qos format=name,preempt", "QOS after the loops", label="qos")
    s.finish()


def main():
    mariadb = start_mariadb()
    try:
        scenario()
    finally:
        if rc.CURRENT is not None and not rc.CURRENT.finished:
            rc.CURRENT.finish()
        if mariadb is not None:
            os.kill(mariadb.pid, signal.SIGTERM)
            mariadb.wait(timeout=60)
    with open(os.path.join(HERE, "records.json"), "w") as f:
        f.write(json.dumps(rc.RECORDS, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(rc.RECORDS)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
