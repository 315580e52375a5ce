import json, sys
sys.path.insert(0, "/work/wt-cli/tests/data/oracle/cli")
import record_cli as rc

CONF = """SelectType=select/cons_res
SelectTypeParameters=CR_Core
NodeName=c[1-4] CPUs=2 RealMemory=1000
PartitionName=p Nodes=c[1-4] Default=YES MaxTime=60
PartitionName=q Nodes=c[1-2]
"""

def scenario():
    s = rc.Scenario("misc", CONF)
    s.start()
    s.at(0)
    s.rec("sbatch --uid=nosuchuser --wrap='sleep 300'", mutating=True)
    s.rec("sbatch --uid=998 -J num --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch --uid=99999 -J bignum --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p q -n 8 -J n8 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p q -n 3 -c 2 -J n3c2 --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p q -N 1 -n 3 -J N1n3 --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p q -c 3 -J c3 --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p q -n 3 --ntasks-per-node=1 -J tpn --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p p -n 5 -J p5 --begin=now+3600 --wrap='sleep 300'", mutating=True)
    s.at(3)
    s.rec("squeue -t all -o '%i %u %D %C %L %R'")
    s.rec("scontrol show job 1")
    s.rec("scontrol show job 2")
    s.rec("scontrol show job 4")
    s.rec("scontrol show job 5")
    s.rec("squeue -u 998")
    s.rec("squeue -t all -o '%i %t %L %M %l'")
    s.rec("scancel 3")
    s.at(5)
    s.rec("squeue -t all -o '%i %t %L %M %l'")
    s.rec("sinfo -o '%t %N'")
    s.rec("sinfo -o '%l %t %N'")
    s.rec("sinfo -o '%D %t'")
    s.rec("scontrol update nodename=c3 state=drain reason=r", mutating=True)
    s.rec("scontrol update nodename=c4 state=down reason=r", mutating=True)
    s.rec("sinfo -o '%t %N'")
    s.rec("sinfo -o '%T|%t|%D|%N'")
    s.rec("sinfo -o '%a %t %N'")
    s.finish()

try:
    scenario()
finally:
    if rc.CURRENT is not None and not rc.CURRENT.finished:
        rc.CURRENT.finish()
json.dump(rc.RECORDS, open("/tmp/cli/misc.json", "w"), indent=1)
for r in rc.RECORDS:
    print(f"===== {r['name']} @{r['at']} $ {r['command']}  -> {r['exit']}")
    print(r["stdout"], end="")
    if r["stderr"]: print("ERR:", r["stderr"], end="")
