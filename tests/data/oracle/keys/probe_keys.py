#!/usr/bin/env python3
"""Measure which slurm.conf keys the installed Slurm accepts, and how it types them.

Black-box oracle: every verdict comes from running the real binary
(``SLURM_CONF=<file> scontrol show hostnames x``) on a generated config file
and recording exit status + stderr.  No Slurm source code is used; candidate
key names come from the man page (slurm.conf(5)) and from printable strings in
the installed Slurm shared library / scontrol binary.

Usage (Python 3.11, stdlib only; needs scontrol, man page and libslurmfull.so):

    python3 tests/data/oracle/keys/probe_keys.py [-o OUT.json] [--work DIR] [-j N]

Default output: slurm2205_keys.json next to this script.  Scratch config files
go to --work (default /tmp/keyprobe/run).  A full run executes ~107k distinct
scontrol invocations (~2 ms each; every candidate token is tried at top level and
in each record type) and takes about 2 minutes with -j 4.  Plugin-name case is
measured with `slurmd -G -f FILE` (prints GRES config and exits; loads the select
plugin); no daemon is started.

Phases
  1. candidates: man-page parameter names per section + identifier tokens
     extracted from the printable strings of libslurmfull.so and scontrol.
  2. recognition: each token T is tried as ``T=1`` on its own line (top level)
     and as a sub-key on NodeName/PartitionName/NodeSet/DownNodes/
     SlurmctldHost lines (FrontendName lines are fatal in this build, so only
     the man-page candidates are recorded there, as not measurable).  A key
     is unrecognised iff stderr says
     "unrecognized key".  Tokens are tried in their original spelling; since
     matching turns out to be case-insensitive, recognised tokens are grouped
     case-insensitively and reported under the man-page spelling (or the
     library spelling for undocumented keys).
  3. type probing: a fixed list of values is tried for every recognised key;
     each verdict (accepted + stderr) is stored raw.  parse_class() infers
     the parser-level class automatically (uint16/uint32/uint64/boolean/
     string/validated-string) from the message pattern; keys with their own
     validators get a curated label (CURATED_TYPE), always next to the raw
     probes that justify it.  Documented values (man page .TP lists plus
     EXTRA_VALUES) are probed in original, lower and upper case.
  4. case rules and a few extra behaviours.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import gzip
import json
import os
import re
import subprocess
import sys
import threading

SCONTROL = "/usr/bin/scontrol"
MANPAGE = "/usr/share/man/man5/slurm.conf.5.gz"
LIBS = ["/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so", SCONTROL]

BASE_LINES = {
    "ClusterName": "ClusterName=test",
    "SlurmctldHost": "SlurmctldHost=localhost",
    "NodeName": "NodeName=n[1-3] CPUs=2",
    "PartitionName": "PartitionName=debug Nodes=ALL Default=YES",
}

# Values tried for every recognised key.  '<empty>' means "K=" with nothing after.
PROBE_VALUES = [
    "abc", "0", "1", "2", "-1", "08", "010", "0x10", "1.5", "1k", "1K", "1M", "1G",
    "65534", "65535", "65536",
    "4294967294", "4294967295", "4294967296",
    "9223372036854775807", "9223372036854775808",
    "18446744073709551615", "18446744073709551616",
    "yes", "no", "true", "false", "YES", "on", "off", "y", "n",
    "UNLIMITED", "INFINITE", "NONE", "N/A",
    "1:00:00", "1-00:00:00", "60",
    '""', '"a b"', "<empty>", "/tmp", "/nonexistent/x", "a,b", "n1",
]

# Sub-key record contexts: (section name, line template with {K} and {V}, extra lines)
RECORDS = {
    "node": ("NODE CONFIGURATION", "NodeName=z1 {K}={V}"),
    "partition": ("PARTITION CONFIGURATION", "PartitionName=zp Nodes=n1 {K}={V}"),
    "nodeset": ("NODESET CONFIGURATION", "NodeSet=zs Nodes=n1 {K}={V}"),
    "downnodes": ("DOWN NODE CONFIGURATION", "DownNodes=n1 {K}={V}"),
    "slurmctldhost": (None, "SlurmctldHost=h2 {K}={V}"),
    "frontendname": ("FRONTEND NODE CONFIGURATION", "FrontendName=f1 {K}={V}"),
}
# First key on each record line (the record's own name key).
RECORD_HEAD = {"node": "NodeName", "partition": "PartitionName", "nodeset": "NodeSet",
               "downnodes": "DownNodes", "slurmctldhost": "SlurmctldHost",
               "frontendname": "FrontendName"}

UNRECOGNISED_RE = re.compile(r"unrecognized key: (\S+)")


class Runner:
    def __init__(self, workdir: str, timeout: float = 20.0):
        self.workdir = workdir
        self.timeout = timeout
        os.makedirs(workdir, exist_ok=True)
        self._lock = threading.Lock()
        self._n = 0
        self.cache: dict[str, tuple[bool, list[str]]] = {}

    def run(self, text: str) -> tuple[bool, list[str]]:
        """Return (accepted, stderr lines) for a config text."""
        if text in self.cache:
            return self.cache[text]
        with self._lock:
            self._n += 1
            n = self._n
        path = os.path.join(self.workdir, f"c{n}.conf")
        with open(path, "w") as f:
            f.write(text)
        env = dict(os.environ, SLURM_CONF=path)
        try:
            p = subprocess.run([SCONTROL, "show", "hostnames", "x"], env=env,
                               capture_output=True, text=True, timeout=self.timeout)
            err = [l for l in p.stderr.splitlines() if l.strip()]
            err = [l.replace(path, "<CONF>") for l in err]
            ok = p.returncode == 0 and p.stdout.strip() == "x"
            res = (ok, err)
        except subprocess.TimeoutExpired:
            res = (False, [f"<timeout after {self.timeout}s>"])
        os.unlink(path)
        self.cache[text] = res
        return res


def base_text(omit: tuple[str, ...] = (), extra: list[str] | None = None) -> str:
    lines = [v for k, v in BASE_LINES.items() if k not in omit]
    lines += extra or []
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- candidates

def man_sections() -> dict[str, list[str]]:
    """Parameter names (.TP followed by \\fBName\\fR at .RS depth 0) per .SH section."""
    with gzip.open(MANPAGE, "rt", errors="replace") as f:
        lines = f.read().split("\n")
    out: dict[str, list[str]] = {}
    sec, depth = None, 0
    for i, l in enumerate(lines):
        if l.startswith(".SH"):
            sec, depth = l[3:].strip().strip('"'), 0
        elif l.startswith(".RS"):
            depth += 1
        elif l.startswith(".RE"):
            depth = max(0, depth - 1)  # the page has an unbalanced .RE
        elif l.startswith(".TP") and i + 1 < len(lines) and depth == 0:
            m = re.match(r"\\fB([A-Za-z_0-9]+)\\fR", lines[i + 1])
            if m and m.group(1) not in out.setdefault(sec, []):
                out[sec].append(m.group(1))
    return out


def man_tokens() -> set[str]:
    with gzip.open(MANPAGE, "rt", errors="replace") as f:
        return set(re.findall(r"[A-Za-z][A-Za-z0-9_]*", f.read()))


def lib_tokens() -> tuple[set[str], set[str]]:
    """(identifier tokens, whole printable strings) from the Slurm binaries."""
    toks, whole = set(), set()
    for lib in LIBS:
        data = open(lib, "rb").read()
        for m in re.finditer(rb"[\x20-\x7e]{2,}", data):
            s = m.group().decode()
            whole.add(s)
            toks.update(re.findall(r"[A-Za-z][A-Za-z0-9_]*", s))
    return toks, whole


# ---------------------------------------------------------------- recognition

def top_line_conf(key: str, value: str) -> str:
    v = "" if value == "<empty>" else value
    return base_text(extra=[f"{key}={v}"])


def record_conf(rec: str, key: str, value: str) -> str:
    v = "" if value == "<empty>" else value
    return base_text(extra=[RECORDS[rec][1].format(K=key, V=v)])


def recognised(res: tuple[bool, list[str]]) -> bool:
    return not any(UNRECOGNISED_RE.search(l) for l in res[1])


def pmap(fn, items, jobs):
    with cf.ThreadPoolExecutor(jobs) as ex:
        return list(ex.map(fn, items))


# ---------------------------------------------------------------- type probing

# Extra context needed for a top-level key to be probed meaningfully:
# key(lower) -> (base lines to omit, extra lines prepended before the probe line)
TOP_CONTEXT = {
    "clustername": (("ClusterName",), []),
    "slurmctldhost": (("SlurmctldHost",), []),
    "controlmachine": (("SlurmctldHost",), []),
    "controladdr": (("SlurmctldHost",), ["ControlMachine=localhost"]),
    "backupcontroller": (("SlurmctldHost",), ["ControlMachine=localhost"]),
    "backupaddr": (("SlurmctldHost",), ["ControlMachine=localhost", "BackupController=b1"]),
    "slurmschedloglevel": ((), ["SlurmSchedLogFile=/tmp/sched.log"]),
    "mcsparameters": ((), ["MCSPlugin=mcs/account"]),
    "maxnodecount": ((), ["SelectType=select/cons_tres"]),
}

# Sub-key line templates that differ from RECORDS (to avoid a duplicate sub-key).
SUB_TEMPLATE = {
    ("partition", "nodes"): "PartitionName=zp {K}={V}",
    ("nodeset", "nodes"): "NodeSet=zs {K}={V}",
    ("nodeset", "feature"): "NodeSet=zs {K}={V}",
}


def top_probe_conf(key: str, value: str) -> tuple[str, dict]:
    omit, extra = TOP_CONTEXT.get(key.lower(), ((), []))
    v = "" if value == "<empty>" else value
    return base_text(omit=omit, extra=[*extra, f"{key}={v}"]), {"omit": list(omit), "extra": extra}


def sub_probe_conf(rec: str, key: str, value: str) -> tuple[str, dict]:
    tmpl = SUB_TEMPLATE.get((rec, key.lower()), RECORDS[rec][1])
    v = "" if value == "<empty>" else value
    return base_text(extra=[tmpl.format(K=key, V=v)]), {"line": tmpl}


def probe_key(runner: Runner, conf_fn, key: str, values=PROBE_VALUES) -> tuple[dict, dict]:
    probes, ctx = {}, {}
    for v in values:
        text, ctx = conf_fn(key, v)
        ok, err = runner.run(text)
        probes[v] = {"accepted": ok, "stderr": err}
    return probes, ctx


# ---------------------------------------------------------------- inference

def _norm(lines: list[str]) -> list[str]:
    """Drop the generic trailer lines so only the informative messages remain."""
    out = []
    for l in lines:
        l = re.sub(r"^scontrol: ", "", l)
        if l == "fatal: Unable to process configuration file":
            continue
        out.append(l)
    return out


def parse_class(key: str, probes: dict) -> str:
    """Parser-level value class inferred purely from the verdict pattern.

    uint16  : 'abc' -> `K value "abc" is not a valid number`, 65536 -> `greater than 65535`
    uint32  : 'abc' -> `K value (abc) is not a valid number`, 4294967296 -> `greater than 4294967295`
    uint64  : same message as uint32 but 2^64-1 accepted, 2^64 -> `out of range`
    boolean : 'abc' -> `"abc" is not a valid option for "K"`
    string  : 'abc' accepted with no message
    validated-string : anything else (a handler/validator with its own messages)
    """
    def msg(v):
        return " | ".join(_norm(probes[v]["stderr"])) if v in probes else ""
    a = msg("abc")
    if re.search(r'value "abc" is not a valid number', a):
        return "uint16"
    if re.search(r"value \(abc\) is not a valid number", a):
        big = msg("4294967296")
        if "greater than 4294967295" in big:
            return "uint32"
        return "uint64"
    if re.search(r'"abc" is not a valid option for', a):
        return "boolean"
    if probes["abc"]["accepted"] and not probes["abc"]["stderr"]:
        if all(p["accepted"] and not p["stderr"] for v, p in probes.items()
               if v not in ("<empty>",)):
            return "string"
        return "string (some values rejected)"
    return "validated-string"


def message_templates(key: str, probes: dict) -> list[str]:
    """Distinct stderr messages with the probed value replaced by {value}."""
    seen = []
    for v, p in probes.items():
        raw = v[1:-1] if v.startswith('"') and v.endswith('"') else v
        for l in _norm(p["stderr"]):
            t = l.replace("<CONF>", "{file}")
            m = re.match(r"^(error: |fatal: |warning: )?(.*)$", t)
            prefix, body = m.group(1) or "", m.group(2)
            if len(raw) >= 3 or (raw and not raw.isdigit()):
                body = re.sub(r"(?<![\w.])" + re.escape(raw) + r"(?![\w.])", "{value}", body)
            t = prefix + body
            if t not in seen:
                seen.append(t)
    return seen


# ---------------------------------------------------------------- extra value lists

def man_values() -> dict[tuple[str, str], list[str]]:
    """Values documented as nested .TP entries under each parameter: {(section, key): [values]}."""
    with gzip.open(MANPAGE, "rt", errors="replace") as f:
        lines = f.read().split("\n")
    sec, depth, cur, vals = None, 0, None, {}
    for i, l in enumerate(lines):
        if l.startswith(".SH"):
            sec, depth, cur = l[3:].strip().strip('"'), 0, None
        elif l.startswith(".RS"):
            depth += 1
        elif l.startswith(".RE"):
            depth = max(0, depth - 1)
        elif l.startswith(".TP") and i + 1 < len(lines):
            m = re.match(r"\\fB([A-Za-z_0-9/\-.]+)\\fR", lines[i + 1])
            if not m:
                continue
            if depth == 0:
                cur = (sec, m.group(1))
                vals.setdefault(cur, [])
            elif cur and m.group(1) not in vals[cur]:
                vals[cur].append(m.group(1))
    return vals


# Values named in the man page prose (not as .TP lists), plus a few forms worth checking.
EXTRA_VALUES = {
    ("top", "AccountingStorageEnforce"): ["associations", "limits", "nojobs", "nosteps", "qos",
                                         "safe", "wckeys", "all", "none", "limits,qos", "LIMITS"],
    ("top", "EnforcePartLimits"): ["ALL", "ANY", "NO", "YES", "all", "any", "no", "Any"],
    ("top", "CpuFreqDef"): ["Low", "Medium", "High", "HighM1", "2400000", "low"],
    ("top", "PreemptMode"): ["SUSPEND,GANG", "suspend,gang", "REQUEUE,GANG", "GANG,WITHIN", "off"],
    ("top", "PluginDir"): ["/tmp:/usr", "/usr/lib/x86_64-linux-gnu/slurm-wlm", "tmp", "/tmp:/nonexistent"],
    ("top", "BcastExclude"): ["/lib,/usr/lib", "none", "NONE", "lib", "/lib,lib"],
    ("top", "SlurmUser"): ["root", "nobody", "slurm", "ROOT", "0", "64030"],
    ("top", "SlurmdUser"): ["root", "nobody", "slurm", "ROOT", "0"],
    ("top", "SlurmctldPort"): ["6817-6818", "6818-6817", "6817,6818", "6817-", "-6817"],
    ("top", "SlurmdPort"): ["6817-6818"],
    ("top", "SelectTypeParameters"): ["CR_Core,CR_ONE_TASK_PER_CORE", "CR_Core_Memory,CR_LLN",
                                      "CR_CPU,CR_Core", "CR_Memory"],
    ("top", "HealthCheckNodeState"): ["ANY,CYCLE", "alloc", "IDLE,MIXED"],
    ("top", "TaskPluginParam"): ["Cores,Verbose", "cores", "NONE", "Autobind=Cores", "Autobind=Threads"],
    ("top", "PropagateResourceLimits"): ["NOFILE,CORE", "nofile"],
    ("top", "PropagateResourceLimitsExcept"): ["NOFILE,CORE", "nofile", "ALL"],
    ("top", "ReconfigFlags"): ["KeepPartInfo,KeepPartState", "keeppartinfo"],
    ("top", "DebugFlags"): ["Backfill,Gres", "backfill", "BACKFILL", "Task"],
    ("top", "PrologFlags"): ["Alloc,Contain", "alloc", "ALLOC", "X11", "x11"],
    ("top", "PriorityUsageResetPeriod"): ["none", "daily", "Daily"],
    ("top", "MpiDefault"): ["openmpi", "none", "pmi2"],
    ("top", "FastSchedule"): ["0", "1", "2"],
    ("node", "State"): ["CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN", "IDLE",
                        "down", "future", "DOWN+DRAIN"],
    ("node", "CpuBind"): ["none", "socket", "ldom", "core", "thread", "board", "CORE", "Core"],
    ("node", "CpuSpecList"): ["0", "0-1", "0,1"],
    ("node", "Port"): ["6818", "6818-6820", "abc"],
    ("downnodes", "State"): ["BUSY", "CLOUD", "DOWN", "DRAIN", "FAIL", "FAILING", "FUTURE", "UNKNOWN",
                             "down"],
    ("partition", "State"): ["UP", "DOWN", "DRAIN", "INACTIVE", "up", "Up", "down"],
    ("partition", "OverSubscribe"): ["EXCLUSIVE", "FORCE", "FORCE:4", "YES", "YES:4", "NO", "exclusive",
                                     "force:4", "FORCE:0", "FORCE:abc", "NO:4"],
    ("partition", "Shared"): ["EXCLUSIVE", "FORCE:4", "YES", "NO", "exclusive"],
    ("partition", "PreemptMode"): ["OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND", "WITHIN", "off",
                                   "requeue", "SUSPEND,GANG"],
    ("partition", "SelectTypeParameters"): ["CR_Core", "CR_Core_Memory", "CR_Socket",
                                            "CR_Socket_Memory", "CR_CPU", "CR_Memory", "cr_core"],
    ("partition", "CpuBind"): ["none", "socket", "ldom", "core", "thread", "board", "CORE"],
    ("partition", "OverTimeLimit"): ["UNLIMITED", "unlimited", "65534", "65535", "-2"],
    ("partition", "SuspendTime"): ["INFINITE", "infinite", "NONE", "-1", "-2"],
    ("partition", "Hidden"): ["YES", "Yes", "NO"],
}

TIME_VALUES = ["30", "1:30", "01:30:00", "2-0", "2-12", "2-12:30", "2-12:30:15", "1:2:3:4",
               "-1", "-2", "unlimited", "Unlimited", "infinite", "5m", "0:0", "00:60", "99999999"]
TIME_KEYS = {("top", "PreemptExemptTime"), ("top", "PriorityCalcPeriod"),
             ("top", "PriorityDecayHalfLife"), ("top", "PriorityMaxAge"),
             ("partition", "DefaultTime"), ("partition", "MaxTime")}
LOGLEVEL_KEYS = {("top", k) for k in ("SlurmctldDebug", "SlurmdDebug", "SlurmctldSyslogDebug",
                                      "SlurmdSyslogDebug", "SlurmSchedLogLevel")}
LOGLEVEL_VALUES = ["quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3",
                   "debug4", "debug5", "INFO", "Debug2", "0", "9", "10", "3x", "debug6", "none"]
BOOL_EXTRA = ["True", "FALSE", "Yes", "No", "t", "f", "1x"]
NUM_EXTRA = ["+1", "unlimited", "Infinite", '"1"', "1e3", "-0", "2k", "1kb", "0k", "4194303k",
             "4194304k"]


# ---------------------------------------------------------------- curated type labels
# The automatic parse_class() only sees the parser layer.  Keys whose values go
# through a dedicated handler/validator get a human label here; every label is
# backed by the raw probes stored next to it in the JSON.
PLUGIN_KEYS = {
    "AccountingStorageType", "AcctGatherEnergyType", "AcctGatherFilesystemType",
    "AcctGatherInfinibandType", "AcctGatherInterconnectType", "AcctGatherProfileType",
    "AuthAltTypes", "AuthType", "BurstBufferType", "CliFilterPlugins", "CoreSpecPlugin",
    "CredType", "CryptoType", "ExtSensorsType", "JobAcctGatherType", "JobCompType",
    "JobContainerType", "JobSubmitPlugins", "LaunchType", "MCSPlugin", "MpiDefault",
    "NodeFeaturesPlugins", "PowerPlugin", "PreemptType", "PrEpPlugins",
    "PrioritySiteFactorPlugin", "PriorityType", "ProctrackType", "RoutePlugin",
    "SchedulerType", "SelectType", "SwitchType", "TaskPlugin", "TopologyPlugin",
}
CURATED_TYPE = {
    ("top", "AccountingStorageEnforce"): "flag-list (comma-separated enumerated, validated)",
    ("top", "AccountingStorageLoc"): "removed (fatal on any value)",
    ("top", "AccountingStoreJobComment"): "removed (boolean parsed first, then fatal)",
    ("top", "SallocDefaultCommand"): "removed (fatal on any value)",
    ("top", "SchedulerAuth"): "defunct (any value accepted with an error line; ignored)",
    ("top", "FastSchedule"): "uint16 (obsolete; accepted silently by scontrol)",
    ("top", "BcastExclude"): "path-list (comma-separated absolute paths or NONE, validated)",
    ("top", "PluginDir"): "directory-list (colon-separated, each must exist, validated)",
    ("top", "CpuFreqDef"): "enumerated (invalid -> error line, value ignored, file accepted)",
    ("top", "CpuFreqGovernors"): "flag-list (invalid -> error line, value ignored, file accepted)",
    ("top", "DebugFlags"): "flag-list (comma-separated enumerated, validated)",
    ("top", "EnforcePartLimits"): "enumerated (ALL/ANY/NO plus boolean spellings)",
    ("top", "HealthCheckNodeState"): "flag-list (invalid items -> error line, ignored)",
    ("top", "PreemptExemptTime"): "time",
    ("top", "PreemptMode"): "flag-list (enumerated, cross-validated with PreemptType)",
    ("top", "PriorityCalcPeriod"): "time (minutes, must be > 0)",
    ("top", "PriorityDecayHalfLife"): "time",
    ("top", "PriorityMaxAge"): "time",
    ("top", "PriorityUsageResetPeriod"): "enumerated",
    ("top", "PrologFlags"): "flag-list (comma-separated enumerated, validated; fatal)",
    ("top", "PropagateResourceLimits"): "flag-list (rlimit names, ALL or NONE)",
    ("top", "PropagateResourceLimitsExcept"): "flag-list (rlimit names, ALL or NONE)",
    ("top", "ReconfigFlags"): "flag-list (invalid items -> error line, file accepted)",
    ("top", "SelectTypeParameters"): "flag-list (comma-separated enumerated, validated)",
    ("top", "SlurmUser"): "user (name or numeric uid; must exist in passwd)",
    ("top", "SlurmdUser"): "user (name or numeric uid; must exist in passwd)",
    ("top", "SlurmctldDebug"): "log-level (name or number)",
    ("top", "SlurmdDebug"): "log-level (name or number)",
    ("top", "SlurmctldSyslogDebug"): "log-level (name or number)",
    ("top", "SlurmdSyslogDebug"): "log-level (name or number)",
    ("top", "SlurmSchedLogLevel"): "uint16 (requires SlurmSchedLogFile)",
    ("top", "SlurmctldPort"): "port-range string (N or N-M, validated)",
    ("top", "TaskPluginParam"): "flag-list (comma-separated enumerated, validated)",
    ("top", "ClusterName"): "string (required, non-empty)",
    ("top", "ControlMachine"): "string (legacy alias of SlurmctldHost's host part)",
    ("top", "NodeName"): "record line (see 'node')",
    ("top", "PartitionName"): "record line (see 'partition')",
    ("top", "NodeSet"): "record line (see 'nodeset')",
    ("top", "DownNodes"): "record line (see 'downnodes')",
    ("top", "SlurmctldHost"): "record line / string host[(addr)] (see 'slurmctldhost')",
    ("top", "FrontendName"): "record line; unsupported in this build (fatal)",
    ("node", "State"): "string (not validated by scontrol)",
    ("node", "CpuBind"): "enumerated (invalid -> error line, ignored)",
    ("node", "CpuSpecList"): "string (cpu id list, checked against CPUs; invalid -> error line, ignored)",
    ("node", "Port"): "string (not validated by scontrol)",
    ("partition", "CpuBind"): "enumerated (invalid -> error line, ignored)",
    ("partition", "DefaultTime"): "time",
    ("partition", "MaxTime"): "time",
    ("partition", "OverSubscribe"): "enumerated (EXCLUSIVE|FORCE[:n]|YES[:n]|NO)",
    ("partition", "Shared"): "enumerated (alias of OverSubscribe)",
    ("partition", "OverTimeLimit"): "string -> uint16 or UNLIMITED (bad -> error line, ignored)",
    ("partition", "PreemptMode"): "flag-list (enumerated)",
    ("partition", "SelectTypeParameters"): "enumerated",
    ("partition", "State"): "enumerated (UP|DOWN|DRAIN|INACTIVE)",
    ("partition", "SuspendTime"): "string -> uint32 seconds or INFINITE (validated)",
    ("nodeset", "Nodes"): "string (hostlist)",
    ("downnodes", "State"): "string (not validated by scontrol)",
}

NOTES = {
    ("top", "ControlMachine"): "Legacy. With SlurmctldHost also set: error line 'Ignoring ControlMachine since SlurmctldHost is set.' (file still accepted).",
    ("top", "ControlAddr"): "Legacy. With SlurmctldHost set: 'Ignoring ControlAddr since SlurmctldHost is set.'",
    ("top", "BackupController"): "Legacy. With SlurmctldHost set: 'Ignoring BackupController since SlurmctldHost is set.'",
    ("top", "BackupAddr"): "Legacy. With SlurmctldHost set: 'Ignoring BackupAddr since SlurmctldHost is set.'",
    ("top", "FastSchedule"): "Undocumented in 22.05 man page; uint16 accepted with no message from scontrol (the library contains 'Ignoring obsolete FastSchedule=1 option' / 'The FastSchedule option has been removed' strings, which scontrol does not print).",
    ("top", "SchedulerAuth"): "Defunct: error line 'The option \"SchedulerAuth\" is defunct, see man slurm.conf.' but the file is accepted.",
    ("top", "AccountingStorageLoc"): "Removed: fatal 'The AccountingStorageLoc option has been removed. It is safe to remove from your configuration.'",
    ("top", "AccountingStoreJobComment"): "Removed: the value is first parsed as a boolean (non-boolean -> 'not a valid option' error); a valid boolean then gives fatal 'The AccountingStoreJobComment option has been removed, please use AccountingStoreFlags=job_comment option instead.'",
    ("top", "SallocDefaultCommand"): "Removed: fatal 'SallocDefaultCommand has been removed. Please consider setting LaunchParameters=use_interactive_step instead.'",
    ("top", "FrontendName"): "Recognised, but this Slurm build lacks --enable-front-end: any FrontendName line is fatal 'Use of FrontendName in slurm.conf without Slurm being configured/built with the --enable-front-end option' (reported before sub-keys are parsed). Spelling FrontEndName also matches (case-insensitive).",
    ("top", "MCSParameters"): "Probed with MCSPlugin=mcs/account; without an MCSPlugin every value fails with 'MCSParameters=<v> used and no MCSPlugin'.",
    ("top", "MaxNodeCount"): "Probed with SelectType=select/cons_tres; otherwise 'MaxNodeCount only compatible with cons_tres'.",
    ("top", "SlurmSchedLogLevel"): "Probed with SlurmSchedLogFile set; otherwise 'SlurmSchedLogLevel requires SlurmSchedLogFile value'.",
    ("top", "SlurmUser"): "Validated against the local passwd database (result is machine dependent).",
    ("top", "SlurmdUser"): "Validated against the local passwd database (result is machine dependent).",
    ("top", "KeepAliveTime"): "Undocumented legacy key (superseded by CommunicationParameters=keepalivetime=).",
    ("top", "CryptoType"): "Undocumented legacy key; not validated by scontrol.",
    ("top", "AcctGatherInfinibandType"): "Undocumented legacy key (old name of AcctGatherInterconnectType); not validated by scontrol.",
    ("top", "SbcastParameters"): "Undocumented legacy key (old name of BcastParameters); not validated by scontrol.",
    ("top", "BurstBufferParameters"): "Undocumented; not validated by scontrol.",
    ("top", "JobCredentialPrivateKey"): "Undocumented in the 22.05 man page; not validated by scontrol.",
    ("top", "JobCredentialPublicCertificate"): "Undocumented in the 22.05 man page; not validated by scontrol.",
    ("top", "PluginDir"): "Each colon-separated element must be an existing directory: 'PluginDir: <d>: No such file or directory' then 'Bad value \"<v>\" for PluginDir'.",
    ("top", "SlurmctldHost"): "Value is host or host(addr) with no space before '('; unbalanced 'h1(10.0.0.1' -> 'Bad value \"h1(10.0.0.1\" for SlurmctldHost'. Repeating the key adds backup controllers. Any K=V after it on the same line is 'unrecognized key'.",
    ("top", "PreemptMode"): "Cross-validated with PreemptType: with the default preempt/none only OFF/GANG pass; CANCEL/REQUEUE/WITHIN/SUSPEND give 'PreemptType and PreemptMode values incompatible' and SUSPEND without GANG gives 'PreemptMode=SUSPEND requires GANG too'. See context_probes.",
    ("top", "JobContainerType"): "job_container/tmpfs without PrologFlags=Contain is fatal: 'PrologFlags=Contain is required for use with job_container/tmpfs'. Other values unvalidated.",
    ("top", "CommunicationParameters"): "Unvalidated option list except DisableIPv4 alone (IPv6 off by default) -> fatal 'Both IPv4 and IPv6 support disabled, cannot communicate'.",
    ("top", "PropagateResourceLimits"): "rlimit names are case-SENSITIVE (upper case only): 'nofile' -> 'Bad rlimit name: nofile' + 'Bad PropagateResourceLimits: nofile'.",
    ("top", "PropagateResourceLimitsExcept"): "rlimit names are case-SENSITIVE (upper case only).",
    ("top", "DebugFlags"): "Flag names case-insensitive. 'Task' is accepted with error line 'DebugFlag Task has been removed, please use CPU_Bind'.",
    ("top", "PriorityDecayHalfLife"): "0 (or values >= 4294967295) rejected unless PriorityUsageResetPeriod is set: 'You have to either have PriorityDecayHalfLife != 0 or PriorityUsageResetPeriod set to something or the priority plugin will result in rolling over.'",
    ("top", "FirstJobId"): "0 -> fatal 'FirstJobId cannot be zero'; > MaxJobId (default 67043328: 67043329 fails) -> 'FirstJobId > MaxJobId'.",
    ("top", "MaxJobId"): "Values >= 67108864 accepted with error line 'MaxJobId can not exceed MAX_JOB_ID, resetting value' (67108863 is silent); MaxJobId < FirstJobId -> 'FirstJobId > MaxJobId'.",
    ("top", "MaxDBDMsgs"): "Values < 10000 rejected with 'MaxDBDMsgs value (N) needs to be greater than 10000' (10000 itself is accepted; the message shows the parsed number, e.g. 010 -> 8, 1k -> 1024, \"\" -> 0).",
    ("top", "MaxJobCount"): "0 -> 'MaxJobCount=0, No jobs permitted'.",
    ("top", "MaxStepCount"): "0 -> 'MaxStepCount=0, No steps permitted'.",
    ("top", "SchedulerTimeSlice"): "< 5 accepted with error line 'SchedulerTimeSlice must be at least 5 seconds'.",
    ("top", "TreeWidth"): "0 accepted with error line 'TreeWidth=0 is invalid'.",
    ("top", "PropagatePrioProcess"): "uint16 parse, then only 0/1/2 allowed: 'Bad PropagatePrioProcess: N'.",
    ("top", "MaxArraySize"): "> 4000001 accepted with error line 'MaxArraySize value (N) is greater than 4000001'.",
    ("top", "SlurmctldDebug"): "Names case-insensitive; numbers parsed leniently (prefix: '1.5', '1k', '1:00:00' accepted); numbers > 9 accepted with 'Normalizing debug level from N to 9'; negative/unknown names -> 'Invalid SlurmctldDebug V'.",
    ("top", "HealthCheckNodeState"): "Each invalid item -> error line 'Invalid HealthCheckNodeState value X ignored' (file accepted).",
    ("top", "AccountingStorageEnforce"): "Also accepts 1/2 and \"\" silently; 0 rejected.",
    ("top", "EnforcePartLimits"): "ALL/ANY/NO (case-insensitive) plus boolean spellings yes/no/true/false/0/1; 2 rejected: 'Bad EnforcePartLimits: 2' (printed twice).",
    ("node", "State"): "Not validated by scontrol (abc accepted); validation happens in slurmctld.",
    ("node", "CpuSpecList"): "Checked against the node's CPU count: 'NodeNames=z1 CpuSpecList=V - unable to convert it to bitmap of size CPUs=1. Ignoring CpuSpecList.' (file accepted).",
    ("partition", "OverSubscribe"): "EXCLUSIVE|FORCE[:n]|YES[:n]|NO case-insensitive; FORCE:0 / FORCE:abc accepted with 'Ignoring bad OverSubscribe value: V'; NO:4 rejected.",
    ("partition", "OverTimeLimit"): "Negative or > 65535 accepted with 'Ignoring bad OverTimeLimit value: V'; non-numeric text silently accepted.",
    ("partition", "SuspendTime"): "Non-numeric text silently accepted; -1 accepted; -2 and > 4294967295 rejected 'Bad value \"V\" for SuspendTime'.",
    ("partition", "Shared"): "Alias: errors are reported as 'Bad value \"<v>\" for OverSubscribe'.",
    ("partition", "Priority"): "Undocumented legacy partition key; uint16.",
    ("node", "Procs"): "Documented alias of CPUs (man page).",
    ("node", "Feature"): "Undocumented singular spelling; a distinct key from Features in the parser table (both accepted).",
    ("node", "TRESWeights"): "Undocumented node key; string, not validated by scontrol.",
    ("node", "RealMemory"): "RealMemory=0 prints the misleading 'NodeNames=z1 MemSpecLimit=0 is invalid, reset to 0'.",
}

# Probes of a top-level key under other surrounding settings: (omit base keys, extra lines, values).
CONTEXT_PROBES = {
    ("top", "PreemptMode"): [
        ((), ["PreemptType=preempt/partition_prio"],
         ["OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND", "SUSPEND,GANG", "suspend,gang", "WITHIN",
          "REQUEUE,GANG", "CANCEL,GANG", "GANG,SUSPEND", "abc"]),
        ((), ["PreemptType=preempt/qos"],
         ["OFF", "CANCEL", "GANG", "REQUEUE", "SUSPEND", "SUSPEND,GANG", "WITHIN", "CANCEL,WITHIN"]),
    ],
    ("top", "JobContainerType"): [((), ["PrologFlags=Contain"], ["job_container/tmpfs", "job_container/none", "abc"])],
    ("top", "MCSParameters"): [((), [], ["ondemand", "abc"])],
    ("top", "MCSPlugin"): [((), [], ["mcs/account", "mcs/none", "mcs/user", "abc"])],
    ("top", "MaxNodeCount"): [((), [], ["1", "0"]), ((), ["SelectType=select/linear"], ["1"])],
    ("top", "SlurmSchedLogLevel"): [((), [], ["0", "1"])],
    ("top", "ControlAddr"): [((), [], ["10.0.0.1"])],
    ("top", "BackupController"): [((), [], ["b1"])],
    ("top", "SlurmctldHost"): [(("SlurmctldHost",), [], ["h1(10.0.0.1)", "h1(10.0.0.1", "h1()", "h1,h2", "h1 h2"]),
                               ((), ["SlurmctldHost=h2"], ["h3"])],
    ("top", "ClusterName"): [(("ClusterName",), [], ["Test", "TEST", "a-b", "a_b", "a.b", "a/b",
                                                     "x" * 41, "é"])],
    ("top", "PriorityDecayHalfLife"): [((), ["PriorityUsageResetPeriod=DAILY"], ["0"])],
}

# Distinct parser-table keys that mean the same thing as another key.  (Spellings that
# differ only in letter case are NOT listed: key matching is case-insensitive, so
# e.g. DefCPUPerGPU/DefCpuPerGPU are one key.)  Evidence is quoted from the probes.
ALIASES = {
    "top": {
        "ControlMachine": {"for": "SlurmctldHost (host part)", "evidence": "'Ignoring ControlMachine since SlurmctldHost is set.'; without SlurmctldHost, ControlMachine alone satisfies 'No SlurmctldHost defined.'"},
        "ControlAddr": {"for": "SlurmctldHost (address part)", "evidence": "'Ignoring ControlAddr since SlurmctldHost is set.'"},
        "BackupController": {"for": "second SlurmctldHost (host part)", "evidence": "'Ignoring BackupController since SlurmctldHost is set.'"},
        "BackupAddr": {"for": "second SlurmctldHost (address part)", "evidence": "'Ignoring BackupAddr since SlurmctldHost is set.'"},
        "AcctGatherInfinibandType": {"for": "AcctGatherInterconnectType (probable legacy name)", "evidence": "none measurable; both are unvalidated strings in scontrol"},
        "SbcastParameters": {"for": "BcastParameters (probable legacy name)", "evidence": "none measurable; both are unvalidated strings in scontrol"},
    },
    "node": {
        "Procs": {"for": "CPUs", "evidence": "NodeName=z1 Procs=0 -> 'NodeNames=z1 CPUs=0 is invalid, reset to 1'; documented alias"},
        "Feature": {"for": "Features (probable)", "evidence": "none measurable; both unvalidated strings"},
    },
    "partition": {
        "Shared": {"for": "OverSubscribe", "evidence": "PartitionName=zp Nodes=n1 Shared=abc -> 'Bad value \"abc\" for OverSubscribe'; documented alias"},
        "Priority": {"for": "PriorityJobFactor/PriorityTier (legacy; not measurable)", "evidence": "undocumented uint16"},
    },
}

GENERIC_RES = [re.compile(r) for r in (
    r'^error: \S+ value .* is not a valid number$',
    r'^error: \S+ value \(.*\) is less than zero$',
    r'^error: \S+ value \(.*\) is greater than \d+$',
    r'^error: \S+ value \(.*\) is out of range$',
    r'^error: ".*" is not a valid option for ".*"$',
    r'^error: Parse error in file .* line \d+: ".*"$',
    r'Parsing error at unrecognized key',
)]


def semantic_messages(templates: list[str]) -> list[str]:
    return [t for t in templates if not any(r.search(t) for r in GENERIC_RES)]


def infer_type(sec: str, key: str, probes: dict) -> str:
    if (sec, key) in CURATED_TYPE:
        return CURATED_TYPE[(sec, key)]
    pc = parse_class(key, probes)
    if pc.startswith("string") and key in PLUGIN_KEYS:
        return "plugin-type string (not validated by scontrol)"
    return pc


def value_list(sec: str, key: str, pc: str, manvals: list[str]) -> list[str]:
    vals = list(PROBE_VALUES)
    extra = []
    for v in manvals + EXTRA_VALUES.get((sec, key), []):
        extra += [v, v.lower(), v.upper()]
    if (sec, key) in TIME_KEYS:
        extra += TIME_VALUES
    if (sec, key) in LOGLEVEL_KEYS:
        extra += LOGLEVEL_VALUES
    if pc == "boolean":
        extra += BOOL_EXTRA
    if pc in ("uint16", "uint32", "uint64"):
        extra += NUM_EXTRA
    for v in extra:
        if v and v not in vals and v != "NOTE:":
            vals.append(v)
    return vals


# ---------------------------------------------------------------- case / syntax probes

def case_and_syntax(runner: Runner) -> tuple[dict, dict]:
    no_cluster = base_text(omit=("ClusterName",))
    base_text(omit=("PartitionName",))
    base_text(omit=("NodeName", "PartitionName"))

    def v(text):
        ok, err = runner.run(text)
        return {"accepted": ok, "stderr": err}

    case = {}
    case["key_names"] = {
        "ClusterName=test (no other ClusterName)": v(no_cluster + "ClusterName=test\n"),
        "clustername=test": v(no_cluster + "clustername=test\n"),
        "CLUSTERNAME=test": v(no_cluster + "CLUSTERNAME=test\n"),
        "cLuStErNaMe=test": v(no_cluster + "cLuStErNaMe=test\n"),
        "maxjobcount=abc (error message spelling)": v(base_text() + "maxjobcount=abc\n"),
        "nodename=z1 cpus=2": v(base_text() + "nodename=z1 cpus=2\n"),
        "NODENAME=z1 CPUS=abc (error message spelling)": v(base_text() + "NODENAME=z1 CPUS=abc\n"),
        "partitionname=zp nodes=n1 maxtime=5": v(base_text() + "partitionname=zp nodes=n1 maxtime=5\n"),
        "PARTITIONNAME=zp NODES=n1 STATE=up": v(base_text() + "PARTITIONNAME=zp NODES=n1 STATE=up\n"),
        "nodeset=zs FEATURE=f": v(base_text() + "nodeset=zs FEATURE=f\n"),
        "downnodes=n1 state=DOWN": v(base_text() + "downnodes=n1 state=DOWN\n"),
        "slurmctldhost=h2": v(base_text() + "slurmctldhost=h2\n"),
        "include /dev/null": v(base_text() + "include /dev/null\n"),
        "INCLUDE /dev/null": v(base_text() + "INCLUDE /dev/null\n"),
        "Include=/dev/null": v(base_text() + "Include=/dev/null\n"),
    }
    enum_probes = [
        ("SelectTypeParameters", ["CR_Core_Memory", "cr_core_memory", "CR_CORE_MEMORY", "Cr_Core_Memory"]),
        ("PreemptMode", ["OFF", "off", "Off", "REQUEUE", "requeue"]),
        ("PriorityUsageResetPeriod", ["DAILY", "daily", "Daily"]),
        ("DebugFlags", ["Backfill", "backfill", "BACKFILL"]),
        ("PrologFlags", ["Alloc", "alloc", "ALLOC"]),
        ("AccountingStorageEnforce", ["limits", "LIMITS", "Limits"]),
        ("EnforcePartLimits", ["ALL", "all", "All"]),
        ("TaskPluginParam", ["Cores", "cores", "CORES"]),
        ("PropagateResourceLimits", ["NOFILE", "nofile"]),
        ("SlurmctldDebug", ["info", "INFO", "Info"]),
        ("MaxJobCount", ["UNLIMITED", "unlimited", "Unlimited", "INFINITE", "infinite"]),
        ("KillWait", ["UNLIMITED", "unlimited", "INFINITE", "infinite"]),
        ("PriorityMaxAge", ["UNLIMITED", "unlimited", "INFINITE", "infinite"]),
        ("DisableRootJobs", ["YES", "yes", "Yes", "TRUE", "true", "True"]),
    ]
    case["enum_values"] = {f"{k}={val}": v(base_text() + f"{k}={val}\n")
                           for k, vals in enum_probes for val in vals}
    sub_enum = [
        ("PartitionName=zp Nodes=n1 State={}", ["UP", "up", "Up"]),
        ("PartitionName=zp Nodes=n1 OverSubscribe={}", ["EXCLUSIVE", "exclusive", "FORCE:2", "force:2"]),
        ("PartitionName=zp Nodes=n1 PreemptMode={}", ["REQUEUE", "requeue"]),
        ("PartitionName=zp Nodes=n1 SelectTypeParameters={}", ["CR_Core", "cr_core", "CR_CORE"]),
        ("PartitionName=zp Nodes=n1 MaxTime={}", ["UNLIMITED", "unlimited", "INFINITE", "infinite"]),
        ("PartitionName=zp Nodes=n1 Hidden={}", ["YES", "yes", "Yes"]),
        ("NodeName=z1 CpuBind={}", ["core", "CORE", "Core"]),
    ]
    case["sub_enum_values"] = {t.format(val): v(base_text() + t.format(val) + "\n")
                               for t, vals in sub_enum for val in vals}
    case["plugin_type_values_scontrol"] = {
        f"SelectType={val}": v(base_text() + f"SelectType={val}\n")
        for val in ("select/linear", "Select/Linear", "SELECT/LINEAR", "nonsense")}
    # scontrol never loads plugins; `slurmd -G -f FILE` (print GRES config and exit)
    # does load the select plugin, so it can tell whether plugin names are case-sensitive.
    slurmd = "/usr/sbin/slurmd"
    if os.path.exists(slurmd):
        res = {}
        for val in ("select/linear", "Select/linear", "SELECT/LINEAR", "select/cons_tres"):
            path = os.path.join(runner.workdir, "slurmd_probe.conf")
            with open(path, "w") as f:
                f.write(base_text() + f"SelectType={val}\n")
            try:
                p = subprocess.run([slurmd, "-G", "-f", path], capture_output=True, text=True,
                                   timeout=20)
                err = [l.replace(path, "<CONF>") for l in p.stderr.splitlines() if l.strip()]
                found = not any("Can't find plugin" in l or "cannot find select plugin" in l
                                for l in err)
                res[f"SelectType={val}"] = {"plugin_found": found, "rc": p.returncode,
                                            "stderr": err}
            except subprocess.TimeoutExpired:
                res[f"SelectType={val}"] = {"plugin_found": None, "stderr": ["<timeout>"]}
            os.unlink(path)
        case["plugin_type_values_slurmd_G"] = res
    def all_ok(d):
        return all(x["accepted"] and not x["stderr"] for x in d.values())
    concl = {"key_names_case_insensitive": all_ok({k: x for k, x in case["key_names"].items()
                                                   if not k.lower().startswith(("maxjobcount", "nodename=z1 cpus=abc", "include"))})}
    by_key = {}
    for lbl, x in list(case["enum_values"].items()) + list(case["sub_enum_values"].items()):
        k = lbl.rsplit("=", 1)[0]
        by_key.setdefault(k, []).append(x["accepted"] and not x["stderr"])
    concl["enum_values_all_case_variants_accepted"] = {k: all(v) for k, v in by_key.items()}
    case["conclusions"] = concl
    case["record_names"] = {
        "PartitionName=DEBUG Nodes=n1 (base has 'debug')": v(base_text() + "PartitionName=DEBUG Nodes=n1\n"),
        "PartitionName=debug Nodes=n1 (duplicate)": v(base_text() + "PartitionName=debug Nodes=n1\n"),
        "NodeName=N1 CPUs=1 (base has n1)": v(base_text() + "NodeName=N1 CPUs=1\n"),
        "NodeName=n1 CPUs=1 (duplicate)": v(base_text() + "NodeName=n1 CPUs=1\n"),
    }

    syntax = {}
    for label, extra in [
        ("K=V", "MaxJobCount=5"),
        ("K = V", "MaxJobCount = 5"),
        ("K= V", "MaxJobCount= 5"),
        ("K =V", "MaxJobCount =5"),
        ("  K=V (leading spaces)", "   MaxJobCount=5"),
        ("K= (empty value)", "MaxJobCount="),
        ('K="" (quoted empty, numeric -> 0)', 'MaxJobCount=""'),
        ('K="5"', 'MaxJobCount="5"'),
        ("K='5' (single quotes are not quotes)", "MaxJobCount='5'"),
        ("K=+5", "MaxJobCount=+5"),
        ("K=V # comment", "MaxJobCount=5 # comment"),
        ("K=V#comment", "MaxJobCount=5#comment"),
        ("two top-level pairs on one line", "MaxJobCount=5 MinJobAge=3"),
        ("K (no '=')", "MaxJobCount"),
        ("K=a b (unquoted space)", "ClusterName=a b"),
        ('K="a b"', 'ClusterName="a b"'),
        ("backslash continuation", "MaxJobCount=\\\n5"),
        ("duplicate key", "MaxJobCount=5\nMaxJobCount=6"),
        ("duplicate key different case", "MaxJobCount=5\nmaxjobcount=6"),
        ("duplicate sub-key", "NodeName=z1 CPUs=1 CPUs=2"),
        ("record head repeated on its line", "NodeName=z1 NodeName=z2"),
        ("NodeName=DEFAULT", "NodeName=DEFAULT CPUs=4"),
        ("PartitionName=DEFAULT", "PartitionName=DEFAULT MaxTime=5"),
        ("SlurmctldHost=h(addr)", "SlurmctldHost=h2(10.0.0.2)"),
        ("SlurmctldHost=h (addr) with space", "SlurmctldHost=h2 (10.0.0.2)"),
        ("K+=V operator", "SchedulerParameters+=defer"),
        ("K:=V", "MaxJobCount:=5"),
        ("K+=V on a numeric key", "MaxJobCount+=5"),
        ("K-=V", "MaxJobCount-=5"),
        ("K*=V", "MaxJobCount*=5"),
        ("K/=V", "MaxJobCount/=5"),
        ("K+=V with bad value", "MaxJobCount+=abc"),
        ("sub-key K+=V", "NodeName=z1 CPUs+=2"),
        ("unknown key with +=", "FooBar+=1"),
    ]:
        syntax[label] = {"lines": extra.split("\n"), **v(base_text() + extra + "\n")}
    return case, syntax


# ---------------------------------------------------------------- main

HISTORIC = [
    "CacheGroups", "CheckpointType", "JobCheckpointDir", "SchedulerPort", "SchedulerRootFilter",
    "MemLimitEnforce", "DefMemPerTask", "MaxMemPerTask", "JobAcctLogFile", "JobAcctType",
    "JobAcctFrequency", "KillTree", "MpichGmDirectSupport", "SrunIOTimeout", "TopologyType",
    "MaxBatchRequeue", "HashPlugin", "SuspendExcStates", "ChosLoc", "Include", "GresPlugins",
    "SwitchPlugin", "CryptoPlugin", "TmpFs", "MailType", "CpuFreqDefault", "MaxSwitchWaitTime",
    "JobCredPrivateKey", "AccountingStorageBackupPort", "SlurmctldSyslogLevel", "TaskAffinity",
    "NodeFeatures", "PriorityWeightGRES", "SchedulerParams", "DefMemPerGPU", "Procs",
]


def scontrol_version(runner: Runner) -> str:
    path = os.path.join(runner.workdir, "version.conf")
    with open(path, "w") as f:
        f.write(base_text())
    p = subprocess.run([SCONTROL, "--version"], env=dict(os.environ, SLURM_CONF=path),
                       capture_output=True, text=True)
    os.unlink(path)
    return p.stdout.strip()


def pick_spelling(variants: list[str], documented: str | None, whole: set[str]) -> str:
    if documented:
        return documented
    def score(t):
        return (t not in whole, t.islower() or t.isupper(), t)
    return sorted(variants, key=score)[0]


def build_entry(runner, sec, key, conf_fn, manvals, jobs_note=None):
    base_probes, ctx = probe_key(runner, conf_fn, key)
    pc = parse_class(key, base_probes)
    vals = value_list(sec, key, pc, manvals)
    probes, ctx = probe_key(runner, conf_fn, key, vals)
    templates = message_templates(key, probes)
    entry = {
        "type": infer_type(sec, key, probes),
        "parse_class": pc,
        "accepted_clean": [v for v, p in probes.items() if p["accepted"] and not p["stderr"]],
        "accepted_with_message": [v for v, p in probes.items() if p["accepted"] and p["stderr"]],
        "rejected": [v for v, p in probes.items() if not p["accepted"]],
        "messages": templates,
        "semantic_messages": semantic_messages(templates),
        "probe_context": ctx,
        "probes": probes,
    }
    if (sec, key) in CONTEXT_PROBES:
        cps = []
        for omit, extra, cvals in CONTEXT_PROBES[(sec, key)]:
            res = {}
            for v in cvals:
                ok, err = runner.run(base_text(omit=omit, extra=[*extra, f"{key}={v}"]))
                res[v] = {"accepted": ok, "stderr": err}
            cps.append({"omit": list(omit), "extra": extra, "probes": res})
        entry["context_probes"] = cps
    if (sec, key) in NOTES:
        entry["notes"] = NOTES[(sec, key)]
    return entry


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                        "slurm2205_keys.json"))
    ap.add_argument("--work", default="/tmp/keyprobe/run")
    ap.add_argument("-j", "--jobs", type=int, default=4)
    args = ap.parse_args(argv)

    runner = Runner(args.work)
    def log(*a):
        return print(*a, file=sys.stderr, flush=True)
    sections = man_sections()
    mvals = man_values()
    ltoks, whole = lib_tokens()
    tokens = sorted(ltoks | man_tokens() | set(HISTORIC))
    log(f"{len(tokens)} candidate tokens")

    out = {
        "slurm_version": scontrol_version(runner),
        "method": ("verdict = `SLURM_CONF=<file> scontrol show hostnames x`; accepted iff exit 0 "
                   "and stdout 'x'. Unknown key iff stderr contains 'unrecognized key'. Config = base "
                   "config + probe line. scontrol runs the common slurm.conf parser and validator, "
                   "not slurmctld's node/partition build, so some checks (plugin loading, duplicate "
                   "nodes/partitions, node State values) only happen in the daemons."),
        "base_config": base_text().splitlines(),
        "probe_values": PROBE_VALUES,
        "candidate_token_count": len(tokens),
    }

    # ---- top level
    doc_top = {k.lower(): (k, "PARAMETERS") for k in sections.get("PARAMETERS", [])}
    for k, s in (("NodeName", "NODE CONFIGURATION"), ("PartitionName", "PARTITION CONFIGURATION"),
                 ("NodeSet", "NODESET CONFIGURATION"), ("DownNodes", "DOWN NODE CONFIGURATION"),
                 ("FrontendName", "FRONTEND NODE CONFIGURATION")):
        doc_top[k.lower()] = (k, s)
    scan = pmap(lambda t: (t, runner.run(top_line_conf(t, "1"))), tokens, args.jobs)
    groups: dict[str, list] = {}
    for t, res in scan:
        if recognised(res):
            groups.setdefault(t.lower(), []).append((t, res))
    log(f"top: {len(groups)} recognised keys")
    top = {}
    for lk, lst in groups.items():
        variants = [t for t, _ in lst]
        doc = doc_top.get(lk)
        name = pick_spelling(variants, doc[0] if doc else None, whole)
        first = dict(lst)[variants[0]]
        top[name] = {"recognised": True, "documented": bool(doc),
                     "documented_in": doc[1] if doc else None,
                     "spellings_matched": sorted(variants),
                     "recognition_probe": {"line": f"{variants[0]}=1", "accepted": first[0],
                                           "stderr": first[1]}}
    for lk, (k, s) in doc_top.items():
        if lk not in groups:
            top[k] = {"recognised": False, "documented": True, "documented_in": s}
    keys = [k for k in top if top[k]["recognised"]]
    ents = pmap(lambda k: (k, build_entry(runner, "top", k, top_probe_conf, mvals.get(("PARAMETERS", k), []))),
                keys, args.jobs)
    for k, e in ents:
        top[k].update(e)
    out["top"] = dict(sorted(top.items(), key=lambda kv: kv[0].lower()))

    # ---- record sub-keys
    for rec, (msec, _tmpl) in RECORDS.items():
        head = RECORD_HEAD[rec]
        documented = {k.lower(): k for k in sections.get(msec, [])} if msec else {}
        table = {}
        if rec == "frontendname":
            # Every FrontendName line is fatal in this build before sub-keys are parsed.
            for lk, k in documented.items():
                ok, err = runner.run(record_conf(rec, k, "1"))
                table[k] = {"recognised": None, "documented": True,
                            "notes": "not measurable: FrontendName lines are fatal in this build",
                            "recognition_probe": {"line": RECORDS[rec][1].format(K=k, V="1"),
                                                  "accepted": ok, "stderr": err}}
            ok, err = runner.run(record_conf(rec, "NoSuchKeyXyz", "1"))
            table["_unknown_key_control"] = {"line": RECORDS[rec][1].format(K="NoSuchKeyXyz", V="1"),
                                             "accepted": ok, "stderr": err}
            out[rec] = table
            continue
        scan = pmap(lambda t: (t, runner.run(record_conf(rec, t, "1"))), tokens, args.jobs)
        groups = {}
        for t, res in scan:
            if recognised(res):
                groups.setdefault(t.lower(), []).append((t, res))
        log(f"{rec}: {len(groups)} recognised sub-keys")
        for lk, lst in groups.items():
            variants = [t for t, _ in lst]
            name = pick_spelling(variants, documented.get(lk), whole)
            first = dict(lst)[variants[0]]
            table[name] = {"recognised": True, "documented": lk in documented,
                           "spellings_matched": sorted(variants),
                           "recognition_probe": {"line": RECORDS[rec][1].format(K=variants[0], V="1"),
                                                 "accepted": first[0], "stderr": first[1]}}
        for lk, k in documented.items():
            if lk in groups:
                continue
            ok, err = runner.run(record_conf(rec, k, "1"))
            entry = {"recognised": False, "documented": True,
                     "recognition_probe": {"line": RECORDS[rec][1].format(K=k, V="1"),
                                           "accepted": ok, "stderr": err}}
            if k.lower() == head.lower():
                entry["notes"] = (f"{k} is the record head key (parsed as the line's first pair); "
                                  "repeating it later on the same line is 'unrecognized key'.")
                entry["record_head"] = True
            table[k] = entry
        if rec == "slurmctldhost":
            table["_note"] = ("No sub-keys: any K=V after SlurmctldHost=... is 'unrecognized key'. "
                              "The address goes in parentheses: SlurmctldHost=host(addr).")
        keys = [k for k in table if isinstance(table[k], dict) and table[k].get("recognised")]
        ents = pmap(lambda k: (k, build_entry(runner, rec, k,
                                              lambda kk, vv: sub_probe_conf(rec, kk, vv),
                                              mvals.get((msec, k), []))),
                    keys, args.jobs)
        for k, e in ents:
            table[k].update(e)
        out[rec] = dict(sorted(table.items(), key=lambda kv: kv[0].lower()))

    case, syntax = case_and_syntax(runner)
    out["case"] = case
    out["syntax"] = syntax
    out["aliases"] = ALIASES
    out["summary"] = summarise(out)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1, ensure_ascii=False)
        f.write("\n")
    log(f"wrote {args.out}; {len(runner.cache)} distinct scontrol runs")


def summarise(out: dict) -> dict:
    s = {}
    for sec in ("top", "node", "partition", "nodeset", "downnodes", "slurmctldhost", "frontendname"):
        t = {k: v for k, v in out[sec].items() if isinstance(v, dict) and not k.startswith("_")}
        rec = sorted(k for k, v in t.items() if v.get("recognised"))
        s[sec] = {
            "recognised": len(rec),
            "recognised_documented": sorted(k for k in rec if t[k].get("documented")),
            "recognised_undocumented": sorted(k for k in rec if not t[k].get("documented")),
            "documented_not_recognised": sorted(k for k, v in t.items()
                                                if v.get("recognised") is False),
            "not_measurable": sorted(k for k, v in t.items() if v.get("recognised") is None),
            "types": {k: t[k]["type"] for k in rec},
        }
    return s


if __name__ == "__main__":
    main()
