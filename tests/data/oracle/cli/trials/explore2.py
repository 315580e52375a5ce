import json, sys
sys.path.insert(0, "/work/wt-cli/tests/data/oracle/cli")
import record_cli as rc

CONF = """ReturnToService=1
SelectType=select/cons_res
SelectTypeParameters=CR_Core
NodeName=n[1-8] CPUs=2 RealMemory=1000
PartitionName=p Nodes=n[1-6] Default=YES
PartitionName=q Nodes=n[7-8]
"""

def scenario():
    s = rc.Scenario("nodes2", CONF)
    s.start()
    s.at(0)
    s.do("sbatch -w n1 -n1 -J a --wrap='sleep 300'")
    s.do("sbatch -w n2 -n2 -J b --wrap='sleep 8'")
    s.do("sbatch -w n3 -n1 -J c --wrap='sleep 300'")
    s.at(3)
    s.rec("scontrol update nodename=nosuch,n4 state=drain reason=x", mutating=True)
    s.rec("scontrol show node n4")
    s.rec("scontrol update nodename=n4 state=idle", mutating=True)
    s.rec("scontrol show node n4")
    s.rec("scontrol update nodename=n5 state=down reason=dn", mutating=True)
    s.rec("scontrol update nodename=n5 state=drain reason=dr", mutating=True)
    s.rec("scontrol show node n5")
    s.rec("sinfo")
    s.rec("sinfo -o '%T|%t|%D|%N|%C|%E'")
    s.rec("scontrol update nodename=n5 state=idle", mutating=True)
    s.rec("scontrol show node n5")
    s.rec("scontrol update nodename=n6 state=down reason=dn6", mutating=True)
    s.rec("scontrol update nodename=n6 state=idle", mutating=True)
    s.rec("scontrol show node n6")
    s.rec("scontrol update nodename=n1 state=idle", mutating=True)
    s.rec("scontrol update nodename=n1 state=resume", mutating=True)
    s.rec("scontrol update nodename=n1 reason=justreason", mutating=True)
    s.rec("scontrol show node n1")
    s.rec("sinfo -R")
    s.rec("scontrol update nodename=n2 state=drain reason=endsoon", mutating=True)
    s.rec("scontrol update nodename=n3 state=drain reason=long", mutating=True)
    s.rec("scontrol update nodename=n3 state=drain reason=again", mutating=True)
    s.rec("scontrol update nodename=n[7-8] state=drain reason=allq", mutating=True)
    s.rec("sbatch -p q -J inq --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -w n3 -n1 -J onn3 --wrap='sleep 300'", mutating=True)
    s.rec("sbatch -p p -n 12 -J big --wrap='sleep 300'", mutating=True)
    s.rec("scontrol update nodename=n1 state=drain reason=d1", mutating=True)
    s.rec("scontrol update nodename=n1 state=undrain", mutating=True)
    s.rec("scontrol show node n1")
    s.rec("scontrol update nodename=n1 state=undrain", mutating=True)
    s.rec("scontrol update nodename=n1 state=down reason=kill", mutating=True)
    s.rec("squeue -t all -o '%i %T %r %R %N'")
    s.rec("sinfo -N")
    s.at(5)
    s.rec("squeue -t all -o '%i %T %r %R %N'")
    s.rec("sinfo -N -o '%N %T %E'")
    s.rec("scontrol update nodename=n1 state=resume", mutating=True)
    s.rec("scontrol show node n1")
    s.at(12)
    s.rec("squeue -t all -o '%i %T %r %R %N'")
    s.rec("sinfo -N -o '%N %T %E'")
    s.rec("sinfo -R")
    s.rec("scontrol show node n2")
    s.rec("scontrol update nodename=n3 state=drain reason=", mutating=True)
    s.rec("scontrol update nodename=n3 state=resume reason=res", mutating=True)
    s.rec("scontrol show node n3")
    s.rec("scontrol update nodename=n[7-8] state=undrain", mutating=True)
    s.at(15)
    s.rec("squeue -t all -o '%i %T %r %R %N'")
    s.finish()

try:
    scenario()
finally:
    if rc.CURRENT is not None and not rc.CURRENT.finished:
        rc.CURRENT.finish()
json.dump(rc.RECORDS, open("/tmp/cli/nodes2.json", "w"), indent=1)
for r in rc.RECORDS:
    print(f"===== {r['name']} @{r['at']} $ {r['command']}  -> {r['exit']}")
    print(r["stdout"], end="")
    if r["stderr"]: print("ERR:", r["stderr"], end="")
