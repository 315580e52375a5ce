"""plurm.conf: Plurm's own settings, in a file beside slurm.conf that Slurm never reads.

A slurm.conf Slurm accepts keeps its meaning in Plurm, and one that names Plurm-only
settings would no longer load in Slurm: so those settings live here, in slurm.conf's line
syntax, as Slurm's own plugins keep theirs in cgroup.conf or gres.conf::

    # Guards layered on the PreemptType policy: each may only veto victims.
    PreemptGuards=preempt/max_age,preempt/protect_gpu
    # Start waiting jobs as soon as something frees room, not on the next tick.
    SchedulerPassOn=event

Keys:

* ``PreemptGuards``: preempt plugins (type strings) loaded after the ``PreemptType``
  policy, which answer only the broadcast ``preempt_veto``. The core asks the policy's
  ``preempt_preemptable`` first and every guard after it; one veto spares the victim.
* ``SchedulerPassOn``: ``tick`` (the default) or ``event``. With ``tick`` a job's end, a
  submission or any other change is answered by a scheduling pass at the next whole second,
  as slurmctld starts batch jobs only on its scheduler's tick (observed on 22.05). With
  ``event`` the pass runs at once, at the same instant: one pass for all the events that
  are handled before it runs (one simulated instant, one turn of the live daemon's loop).
"""

from __future__ import annotations

import difflib

from plurm.conf.source import split_logical_lines
from plurm.conf.syntax import Include, parse_source
from plurm.errors import ConfError, ConfKeyError, ConfSyntaxError, ConfValueError

__all__ = ["KEYS", "PlurmSettings", "read_plurm_conf"]

#: The keys plurm.conf knows, by lower-case spelling.
KEYS = {"preemptguards": "PreemptGuards", "schedulerpasson": "SchedulerPassOn"}

#: The values SchedulerPassOn takes.
PASS_ON = ("tick", "event")

#: What plurm.conf sets, by SlurmConfig field: the guards in the order listed, the
#: scheduler's trigger.
PlurmSettings = dict[str, object]


def read_plurm_conf(path: str, text: str) -> tuple[PlurmSettings, list[ConfError]]:
    """The settings of ``text`` (the content of ``path``) and the errors found in it."""
    source = split_logical_lines(path, text)
    statements, syntax_errors = parse_source(source)
    errors: list[ConfError] = list(syntax_errors)
    settings: PlurmSettings = {}
    for statement in statements:
        if isinstance(statement, Include):
            location = source.locate(statement.index, statement.column)
            errors.append(ConfSyntaxError("plurm.conf does not support Include", location))
            continue
        for pair in statement.pairs:
            key = KEYS.get(pair.key.lower())
            if key is None:
                found = difflib.get_close_matches(pair.key.lower(), list(KEYS), n=1, cutoff=0.6)
                errors.append(
                    ConfKeyError(
                        pair.key,
                        source.locate(statement.index, pair.key_column),
                        record="plurm.conf",
                        suggestion=KEYS[found[0]] if found else None,
                    )
                )
                continue
            location = source.locate(statement.index, pair.value_column)
            if key == "SchedulerPassOn":
                value = pair.value.strip().lower()
                if value in PASS_ON:
                    settings["scheduler_pass_on"] = value
                else:
                    reason = f"expected {' or '.join(PASS_ON)}"
                    errors.append(ConfValueError(key, pair.value, reason, location))
                continue
            guards = tuple(word.strip() for word in pair.value.split(",") if word.strip())
            bad = [g for g in guards if not g.startswith("preempt/") or g == "preempt/"]
            twice = sorted({g for g in guards if guards.count(g) > 1})
            if bad:
                reason = f"{bad[0]!r} is not a preempt plugin (expected preempt/NAME)"
                errors.append(ConfValueError(key, pair.value, reason, location))
            elif twice:
                reason = f"{twice[0]} is listed twice"
                errors.append(ConfValueError(key, pair.value, reason, location))
            else:
                settings["preempt_guards"] = guards
    return settings, errors
