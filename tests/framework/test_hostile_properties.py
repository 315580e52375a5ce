"""Issue 31's acceptance: per input surface, any input ends in Plurm's own error type or a
valid result, in bounded time and memory.

Each property runs its examples in one child process with an address-space limit
(``RLIMIT_AS``) and a wall-clock timeout: a hang or a memory blow-up fails the test, and so
does any exception that is not a :class:`~plurm.errors.PlurmError`.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MEMORY = 1 << 30  # 1 GiB of address space for the child
TIMEOUT = 60  # seconds for a whole batch of examples

_CHILD = textwrap.dedent(
    """
    import json, sys, tempfile
    from pathlib import Path
    from plurm.errors import PlurmError
    surface, inputs = json.loads(sys.stdin.read())
    tmp = Path(tempfile.mkdtemp())
    BASE = "ClusterName=c\\nSlurmctldHost=h\\nNodeName=n[1-3] CPUs=2\\nPartitionName=p Nodes=ALL\\n"

    def run(text):
        if surface == "conf":
            from plurm import conf
            conf.parse_text(BASE + text, path=tmp / "slurm.conf")
        elif surface == "qos":
            from plurm import conf
            conf.parse_text(BASE, path=tmp / "slurm.conf", qos_text=text)
        elif surface == "accounts":
            from plurm import conf
            qos = "QOS=high\\nQOS=low\\n"
            conf.parse_text(BASE, path=tmp / "slurm.conf", qos_text=qos, accounts_text=text)
        elif surface == "hostlist":
            from plurm import hostlist
            hostlist.compress(hostlist.expand(text))
        elif surface == "swf":
            from plurm.workload import clean, parse_swf
            clean(parse_swf(text, "t.swf", strict=False))
            parse_swf(text, "t.swf")
        elif surface == "toml":
            from plurm.sim.compare import Comparison
            from plurm.sim.trace import TraceMapping
            path = tmp / "f.toml"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            try:
                TraceMapping.load(path)
            finally:
                Comparison.load(path)
        elif surface == "session":
            from plurm import conf
            from plurm.sim.session import Simulation, parse_session
            config = conf.parse_text(BASE, path=tmp / "slurm.conf")
            lines = parse_session("s", text)
            Simulation(config).run_lines(lines, tmp)

    bad = []
    for text in inputs:
        try:
            run(text)
        except PlurmError:
            pass
        except BaseException as error:
            bad.append([text, repr(error)])
    print(json.dumps(bad))
    """
)


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def _check(surface: str, inputs: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD],
        input=json.dumps([surface, inputs]),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        preexec_fn=_limit,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    bad = json.loads(done.stdout.splitlines()[-1])
    assert bad == [], bad[:3]


_SETTINGS = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_BATCH = 25

_digits = st.text("0123456789٣²", min_size=1, max_size=30) | st.sampled_from(
    ["9" * 5000, "-1", "nan", "inf", "1e999", "0x" + "f" * 40, "99999999999999"]
)
_conf_values = st.sampled_from(
    [
        "KillWait",
        "MaxJobCount",
        "NodeName=m[1-2] CPUs",
        "NodeName=m1 Sockets",
        "PartitionName=q Nodes=n1 MaxTime",
        "PartitionName=q Nodes=n1 PriorityTier",
        "SlurmctldPort",
        "SlurmctldDebug",
        "NodeName=m",
    ]
)


def _conf_line() -> st.SearchStrategy[str]:
    return st.builds(lambda key, value: f"{key}={value}\n", _conf_values, _digits) | st.text(
        max_size=80
    )


@_SETTINGS
@given(st.lists(st.lists(_conf_line(), max_size=6).map("".join), min_size=_BATCH, max_size=_BATCH))
def test_slurm_conf(inputs: list[str]) -> None:
    _check("conf", inputs)


@_SETTINGS
@given(
    st.lists(
        st.lists(
            st.builds(
                lambda name, key, value: f"QOS={name} {key}={value}\n",
                st.sampled_from(["a", "b", "normal"]),
                st.sampled_from(["Preempt", "Priority", "GraceTime", "UsageFactor"]),
                st.sampled_from(["a", "b", "normal", "a,b"]) | _digits,
            ),
            max_size=5,
        ).map("".join),
        min_size=_BATCH,
        max_size=_BATCH,
    )
)
def test_qos_conf(inputs: list[str]) -> None:
    _check("qos", inputs)


_account_names = st.sampled_from(["a", "b", "root", "ROOT", "normal", "high", "low", "nosuch"])
_account_line = st.builds(
    lambda kind, name, fields: f"{kind}={name} " + " ".join(fields) + "\n",
    st.sampled_from(["Account", "User", "account", "QOS", "Bogus"]),
    _account_names | st.text(max_size=12),
    st.lists(
        st.builds(
            lambda key, value: f"{key}={value}",
            st.sampled_from(
                ["Parent", "QOS", "DefaultQOS", "Account", "DefaultAccount", "Fairshare", ""]
            ),
            st.lists(_account_names, max_size=3).map(",".join) | _digits | st.text(max_size=8),
        ),
        max_size=4,
    ),
) | st.text(max_size=60)


@_SETTINGS
@given(st.lists(st.lists(_account_line, max_size=8).map("".join), min_size=_BATCH, max_size=_BATCH))
def test_accounts_conf(inputs: list[str]) -> None:
    """accounts.conf: accounts (parents, cycles), users, QOS lists and defaults, any text."""
    _check("accounts", inputs)


_hostlist = st.text("n[]-,0123456789٣ ", max_size=60) | st.builds(
    lambda n, group: "n" + group * n,
    st.integers(1, 3000),
    st.sampled_from(["[1]", "[1-2]", "[0-65535]"]),
)


@_SETTINGS
@given(st.lists(_hostlist, min_size=_BATCH, max_size=_BATCH))
def test_hostlists(inputs: list[str]) -> None:
    _check("hostlist", inputs)


_field = st.sampled_from(["-1", "0", "1", "60", "1.5", "nan", "inf", "1e999", "x", "9" * 400, "٣"])
_swf_line = st.lists(_field, min_size=16, max_size=19).map(" ".join) | st.text(max_size=40)


@_SETTINGS
@given(st.lists(st.lists(_swf_line, max_size=8).map("\n".join), min_size=_BATCH, max_size=_BATCH))
def test_swf(inputs: list[str]) -> None:
    _check("swf", inputs)


_toml = st.sampled_from(
    [
        '[partitions]\n1 = "p"\n',
        '[partitions]\n"٣" = "p"\n',
        "[high_priority]\nfraction = nan\n",
        "[high_priority]\nfraction = 0.5\nseed = " + "9" * 5000 + "\n",
        "a = " + "[" * 3000 + "]" * 3000 + "\n",
        'trace = "t.swf"\nconf = "slurm.conf"\n[[run]]\nname = "a"\n'
        'set = { KillWait = "5\\nX=1" }\n',
        "processors_as = 'nodes'\n",
    ]
) | st.text(max_size=60)


@_SETTINGS
@given(st.lists(_toml, min_size=_BATCH, max_size=_BATCH))
def test_mapping_and_compare_toml(inputs: list[str]) -> None:
    _check("toml", inputs)


_option_values = _digits | st.sampled_from(
    ["25:99", "now+99999999999weeks", "%.99999999999i", "BOGUS", "-5", "n[1-2]", "1-00:00:00"]
)
_commands = st.sampled_from(
    [
        "sbatch --wrap true -N",
        "sbatch --wrap true -n",
        "sbatch --wrap true -c",
        "sbatch --wrap true -t",
        "sbatch --wrap true --begin",
        "sbatch --wrap true --sim-runtime",
        "sbatch --wrap true --mem",
        "sbatch --wrap true --nice",
        "sbatch --wrap true -w",
        "squeue -o",
        "squeue -j",
        "squeue -t",
        "sinfo -o",
        "scancel",
        "scancel -s",
        "scontrol show job",
        "scontrol update PartitionName=p PriorityTier=",
        "scontrol update PartitionName=p GraceTime=",
        "scontrol update PartitionName=p State=",
        "scontrol update PartitionName=p MaxTime=",
        "scontrol update NodeName=n1 State=",
        "scontrol requeue",
        "slurmd stop",
    ]
)


def _session_line(command: str, value: str) -> str:
    joiner = "" if command.endswith("=") else " "
    return f"{command}{joiner}'{value}'"


@_SETTINGS
@given(
    st.lists(
        st.lists(st.builds(_session_line, _commands, _option_values), max_size=4).map(
            lambda lines: "".join(f"{n} {line}\n" for n, line in enumerate(lines))
        )
        | st.text(max_size=40),
        min_size=_BATCH,
        max_size=_BATCH,
    )
)
def test_session_commands(inputs: list[str]) -> None:
    _check("session", inputs)
