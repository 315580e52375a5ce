"""``scontrol explain JOBID [--json]`` (a Plurm extension of scontrol): why a pending job
waits, what became of every candidate of a job's last preemption decision, and who
preempted a victim and when. Plain text by default, one JSON object with ``--json``.

The facts come from the controller (``client.explain``); this module only renders them, the
same way in simulation and live.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from plurm.commands.base import CommandError, CommandResult
from plurm.commands.client import ClusterClient
from plurm.commands.timefmt import clock_time
from plurm.errors import RequestError
from plurm.numbers import is_digits

__all__ = ["STATUS_TEXT", "explain", "explain_text"]

#: What each candidate status says, in the text form.
STATUS_TEXT = {
    "taken": "taken",
    "not_needed_after_trim": "not taken: not needed after the trim",
    "not_chosen_by_search": "not taken: not chosen by the victim search",
    "not_needed": "not taken: not needed (select placed the job without it)",
    "other_nodes": "not taken: on nodes the job cannot use",
    "exempt": "not taken: exempt until {until} (PreemptExemptTime)",
    "not_preemptable": "not taken: not preemptable by policy",
    "guard_veto": "not taken: guard veto ({guards})",
    "mode_off": "not taken: PreemptMode OFF",
    "later": "not taken: started after the decision",
    "gone": "not taken: no longer known",
}

_USAGE = "scontrol: error: Invalid job id specified for explain"


def _time(seconds: Any) -> str:
    return "Unknown" if seconds is None else clock_time(float(seconds))


def _candidate(row: Mapping[str, Any]) -> str:
    text = STATUS_TEXT.get(str(row["status"]), str(row["status"]))
    text = text.format(until=_time(row.get("until")), guards=", ".join(row.get("guards", ())))
    return f"   JobId={row['job_id']} {text}\n"


def explain_text(facts: Mapping[str, Any]) -> str:
    """The text form of the controller's facts on one job."""
    out = [f"JobId={facts['job_id']} JobState={facts['state']} Reason={facts['reason']}\n"]
    if facts["state"] == "PENDING":
        out.append(f"   ExpectedStart={_time(facts.get('expected_start'))}\n")
        for other in facts.get("in_the_way", ()):
            nodes = ",".join(other["nodes"])
            out.append(
                f"   Waits for JobId={other['job_id']} ({other['state']} on {nodes}, "
                f"ends by {_time(other.get('end'))})\n"
            )
    preemption = facts.get("preemption")
    if preemption is not None:
        rows = preemption["candidates"]
        out.append(
            f"   Preemption decision at {_time(preemption['time'])}; candidates considered:\n"
        )
        out += [_candidate(row) for row in rows]
    preempted_by = facts.get("preempted_by")
    if preempted_by is not None:
        out.append(
            f"   Preempted by JobId={preempted_by['job_id']} at {_time(preempted_by['time'])}\n"
        )
    return "".join(out)


def explain(args: Sequence[str], client: ClusterClient) -> CommandResult:
    """``scontrol explain JOBID [--json]``."""
    as_json = "--json" in args
    ids = [word for word in args if word != "--json"]
    if len(ids) != 1 or not is_digits(ids[0]):
        raise CommandError(_USAGE)
    try:
        facts = client.explain(int(ids[0]))
    except RequestError as error:
        return CommandResult(1, "", f"slurm_load_jobs error: {error.message}\n")
    if as_json:
        return CommandResult(0, json.dumps(facts, sort_keys=True) + "\n")
    return CommandResult(0, explain_text(facts))
