"""Trial: the pending reason of jobs whose -w nodes are down or drained (squeue and scontrol
show job), and the line order of sinfo without %P in the `down` scenario's state (record
down/025), on three fresh starts of the same cluster. Run as root with munged up:
python3 explore_reqnode.py > reqnode.out
"""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import record_cli as rc  # noqa: E402


def scenario(run):
    print(f"===== run {run}", flush=True)
    s = rc.Scenario(f"reqnode{run}", rc.DOWN)
    s.start()
    for cmd in ("sbatch -J r1 --wrap='sleep 300'",):
        s.do(cmd)
    s.at(2.0)
    for cmd in ("scontrol update nodename=d2 state=down reason='maintenance'",
                "scontrol update nodename=d1 state=drain reason='will fail'",
                "scontrol update nodename=d4 state=down reason='bad fan'",
                "sbatch -w d2 -J w2 --wrap='sleep 300'",
                "sbatch -w d[2-3] -J w23 --wrap='sleep 300'",
                "sbatch -w d1 -J w1 --wrap='sleep 300'"):
        s.do(cmd)
    s.at(3.5)
    for cmd in ("squeue -t all -o '%i %T %r %R'", "squeue", "scontrol show job 2", "scontrol -o show job 3",
                "sinfo -o '%T|%t|%D|%N|%C|%c|%m'", "sinfo -o '%t %N'", "sinfo -o '%T|%t|%D|%N|%C|%c|%m'"):
        r = s.run(cmd)
        print(f"[{s.now():5.1f}] $ {cmd} -> {r.returncode}\n{r.stdout}{r.stderr}", end="", flush=True)
    s.finish()


try:
    for run in (1, 2, 3):
        scenario(run)
finally:
    if rc.CURRENT is not None and not rc.CURRENT.finished:
        rc.CURRENT.finish()
