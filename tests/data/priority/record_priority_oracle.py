#!/usr/bin/env python3
"""Record a priority scenario on real Slurm 22.05 with ../shared/oracle's harness: its
`snap` steps as oracle.py records them, plus the exact output of each `show` command (sprio,
sshare), which oracle.py does not keep. Usage: record_priority_oracle.py SCENARIO.toml OUT.json
"""

import json
import re
import sys
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "shared" / "oracle"))
import oracle  # noqa: E402


def drain(ids: dict[str, int]) -> None:
    """Cancel the scenario's jobs and wait until none runs: slurmstepd outlives slurmd, and a
    job still running when the harness stops the daemons would report its end to the next
    scenario's slurmctld (same port, same job ids), which takes it for its own job's end."""
    if ids:
        oracle.sh("scancel " + " ".join(ids))
    for _ in range(60):
        if not oracle.sh("squeue -h -t running,completing,suspended -o %i").strip():
            break
        time.sleep(0.5)


def main() -> None:
    scenario = tomllib.loads(Path(sys.argv[1]).read_text())
    oracle.start(scenario["conf"], scenario.get("sacctmgr", []))
    ids: dict[str, int] = {}
    snaps: dict[str, object] = {}
    shows: list[dict[str, object]] = []
    t0 = time.time()
    try:
        for step in scenario["step"]:
            while time.time() - t0 < step["at"]:
                time.sleep(0.05)
            if "cmd" in step:
                out = oracle.sh(f"cd {oracle.BASE} && " + step["cmd"])
                found = re.search(r"Submitted batch job (\d+)", out)
                if not found:
                    raise RuntimeError(out)
                ids[found.group(1)] = len(ids) + 1
            if "snap" in step:
                snaps[step["snap"]] = oracle.snapshot(ids)
            if "show" in step:
                out = oracle.sh(step["show"])
                for real, ordinal in sorted(ids.items(), key=lambda item: -len(item[0])):
                    out = re.sub(rf"\b{real}\b", str(ordinal), out)
                shows.append({"at": step["at"], "cmd": step["show"], "out": out})
    finally:
        drain(ids)
        oracle.stop()
    Path(sys.argv[2]).write_text(json.dumps({"snaps": snaps, "shows": shows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
