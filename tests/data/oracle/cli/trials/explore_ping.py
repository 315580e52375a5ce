"""Trial: when does Slurm 22.05 notice a dead slurmd, and when does an admin-DOWN node come back?

Three short clusters (d[1-4], SlurmdTimeout=8), ReturnToService 2, 1 and 0. sinfo -N and squeue
are polled every ~0.5 s and every change is printed with its time (seconds since the first step),
into ping.out. Also shows the pending reasons of jobs whose -w nodes are down or drained.
Run as root with munged up: python3 explore_ping.py > ping.out
"""
import os, subprocess, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_cli as rc  # noqa: E402

BASE = rc.BASE


def conf(rts):
    return f"""ReturnToService={rts}
SlurmdTimeout=8
NodeName=d[1-4] CPUs=1 RealMemory=1000
PartitionName=p Nodes=d[1-4] Default=YES
"""


def kill_slurmd(s, node):
    pid = int(open(f"{BASE}/slurmd.{node}.pid").read().strip())
    os.kill(pid, 15)
    print(f"[{s.now():5.1f}] kill -TERM slurmd {node}", flush=True)


def start_slurmd(s, node):
    subprocess.run(["slurmd", "-f", f"{BASE}/slurm.conf", "-N", node], check=True)
    print(f"[{s.now():5.1f}] slurmd -N {node} started again", flush=True)


def poll(s, until, last):
    while s.now() < until:
        nodes = s.run("sinfo -N -h -o '%N %T %E'").stdout.strip().replace("\n", " | ")
        jobs = s.run("squeue -h -t all -o '%i %T %r'").stdout.strip().replace("\n", " | ")
        for key, text in (("nodes", nodes), ("jobs", jobs)):
            if last.get(key) != text:
                last[key] = text
                print(f"[{s.now():5.1f}] {key}: {text}", flush=True)
        time.sleep(0.4)


def do(s, cmd):
    r = s.run(cmd)
    print(f"[{s.now():5.1f}] $ {cmd} -> {r.returncode} {(r.stdout + r.stderr).strip()}", flush=True)


def scenario(rts, restart_at):
    print(f"===== ReturnToService={rts}", flush=True)
    s = rc.Scenario(f"rts{rts}", conf(rts))
    s.start()
    last = {}
    do(s, "sbatch -w d1 -J r1 --wrap='sleep 300'")
    poll(s, 2.0, last)
    do(s, "scontrol update nodename=d2 state=down reason=maint")
    do(s, "scontrol update nodename=d3 state=drain reason=dr")
    do(s, "sbatch -w d2 -J ond2 --wrap='sleep 300'")
    do(s, "sbatch -w d3 -J ond3 --wrap='sleep 300'")
    do(s, "sbatch -w d[2-3] -J ond23 --wrap='sleep 300'")
    do(s, "sbatch -N 4 -J all4 --wrap='sleep 300'")
    poll(s, 4.0, last)
    kill_slurmd(s, "d4")
    poll(s, restart_at, last)
    start_slurmd(s, "d4")
    poll(s, restart_at + 15, last)
    s.finish()


try:
    scenario(2, 45)
    scenario(1, 40)
    scenario(0, 35)
finally:
    if rc.CURRENT is not None and not rc.CURRENT.finished:
        rc.CURRENT.finish()
