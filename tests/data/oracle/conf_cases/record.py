#!/usr/bin/env python3
"""Record real Slurm's (Debian slurm-wlm 22.05.8) verdicts on tricky slurm.conf files, as golden data
for Plurm's clean-room slurm.conf parser.  Only behaviour is recorded; no Slurm source is used.

How to run (as root, on a machine with slurm-wlm 22.05 installed and munged running):

    python3 tests/data/oracle/conf_cases/record.py            # all cases -> cases.json next to this file
    python3 tests/data/oracle/conf_cases/record.py NAME ...   # only these cases, printed, cases.json untouched
    python3 tests/data/oracle/conf_cases/record.py --list     # list case names

Per case:
  * the case's files are written to a fresh directory D (placeholder {DIR} in texts and outputs);
    relative names may contain sub-directories; the process's working directory is D/cwd (created empty,
    or holding any case files named "cwd/...") so relative-path resolution can be told apart from cwd;
  * verdict of the common config reader:  SLURM_CONF=D/<main> scontrol show hostnames x   (exit, stdout,
    stderr lines); a non-integer exit "timeout" means it ran longer than the case's time limit;
  * for cases marked daemon=True, slurmctld's verdict: a copy of the files goes to D2 (also written {DIR}),
    the main file gets DAEMON_HEADER appended (after a newline, so the case's line numbers are unchanged),
    and `slurmctld -D -c -i -f D2/<main>` is started inside a private mount namespace whose /etc/hosts maps
    the node names used by the cases (n0..n299 etc.) to 127.0.0.1 and "ctl2" to 127.0.0.2 (a backup
    controller address where nothing listens); the real /etc/hosts is not touched.
    Verdict "running" once it logs "Running as primary controller", "exited" if it exits first,
    "timeout" otherwise.  Its stderr lines (minus environment noise matching NOISE) are recorded.
    While running, `scontrol -o show partition`, `scontrol -o show node` and `scontrol show config`
    are run against it (inside the same kind of namespace); partitions (all fields), nodes (the NODE_KEYS
    fields) and the config keys the case asks for go to "effective".  Everything started is stopped
    (SIGTERM, then SIGKILL) by process group.

Cases that Include a missing file take ~60 s (Slurm retries stat() for 60 s); cases run in parallel
(16 scontrol workers; 4 slurmctld workers on ports 16917, 16927, 16937, 16947, slurmd port +1 unused).
Scratch space: /tmp/plurm-conf-cases (removed per case).  Whole run: about 3 minutes.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = "/tmp/plurm-conf-cases"
PORT0 = 16917            # slurmctld ports PORT0 + 10*k (k = daemon worker slot), slurmd port +1

BASE = """ClusterName=test
SlurmctldHost=localhost
NodeName=n[1-3] CPUs=2
PartitionName=debug Nodes=ALL Default=YES
"""
NODES_ONLY = """ClusterName=test
SlurmctldHost=localhost
NodeName=n[1-3] CPUs=2
"""
HEAD = """ClusterName=test
SlurmctldHost=localhost
"""

DAEMON_HEADER = """SlurmUser=root
SlurmctldPort={port}
SlurmdPort={port1}
AuthType=auth/munge
StateSaveLocation={DIR}/run/state
SlurmdSpoolDir={DIR}/run/spool
SlurmctldLogFile={DIR}/run/ctld.log
SlurmctldPidFile={DIR}/run/ctld.pid
SlurmdPidFile={DIR}/run/slurmd.pid
ProctrackType=proctrack/pgid
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
JobAcctGatherType=jobacct_gather/none
"""

NOISE = [r"mpi/pmix", r"MPI: Cannot create context", r"Could not open (job|reservation) state file",
         r"Trying backup state save file", r"No reservation state file", r"mcs: MCSParameters",
         r"No parameter for mcs plugin", r"No memory enforcing mechanism", r"backup_controller not specified",
         r"Could not open (node|part|trigger|job|resv|assoc|qos)", r"No (node|part|trigger|job) state",
         r"Recovered state of", r"Recovered information about", r"^slurmctld: debug",
         r"High latency for 1000 calls to gettimeofday", r"part_data_create_array", r"select_p_reconfigure"]
NODE_KEYS = ["CPUTot", "CPUEfctv", "Boards", "Sockets", "CoresPerSocket", "ThreadsPerCore", "RealMemory",
             "TmpDisk", "Weight", "AvailableFeatures", "ActiveFeatures", "Gres", "State", "NodeAddr",
             "NodeHostName", "Partitions", "CfgTRES", "Reason", "CoreSpecCount", "CPUSpecList",
             "MemSpecLimit", "Arch", "OS", "Comment", "Extra"]
HOSTNAMES = (["n%d" % i for i in range(300)] + ["n%02d" % i for i in range(100)] + ["n%03d" % i for i in range(100)]
             + ["node%d" % i for i in range(20)] + ["a", "b", "c", "tux", "compute"])

CASES = []


def C(name, desc, text=None, files=None, main="slurm.conf", daemon=False, config=(), timeout=10):
    assert not any(c["name"] == name for c in CASES), name
    files = dict(files or {})
    if text is not None:
        files[main] = text
    CASES.append(dict(name=name, description=desc, files=files, main=main, daemon=daemon,
                      config=list(config), timeout=timeout))


def slug(v):
    """case-name fragment for a value: lower-cased; '_lc' marks a lower-case spelling, '_sp' a space."""
    s = re.sub(r"[^A-Za-z0-9]+", "_", v.replace("-", "m")).strip("_").lower() or "empty"
    if v != v.upper():
        s += "_lc"
    if " " in v:
        s += "_sp"
    if v and not v[-1].isalnum():
        s += "_trail"
    return s


def b(extra):
    return BASE + extra


# ---------------------------------------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------------------------------------
C("base", "the minimal accepted base (config: defaults of the keys other cases look at)", BASE, daemon=True,
  config=["ClusterName", "SlurmctldHost[0]", "SelectType", "SelectTypeParameters", "PreemptMode", "PreemptType",
          "PreemptExemptTime", "SchedulerTimeSlice", "SchedulerParameters", "MaxJobCount", "MinJobAge", "JobCompLoc",
          "OverTimeLimit"])

# --- comments
C("comment_full_line", "a comment line before everything", "# a comment\n" + BASE)
C("comment_indented", "a comment line with leading spaces and tabs", " \t # indented comment\n" + BASE)
C("comment_lone_hash", "a line holding only '#'", b("#\n"))
C("comment_after_value_space", "'# comment' after a value, separated by a space",
  b("JobCompLoc=/tmp/a # comment\n"), daemon=True, config=["JobCompLoc"])
C("comment_after_value_nospace", "'#' directly after a value cuts it",
  b("JobCompLoc=/tmp/a#comment\n"), daemon=True, config=["JobCompLoc"])
C("comment_after_value_tab", "inline comment after a TAB",
  b("JobCompLoc=/tmp/a\t# comment\n"), daemon=True, config=["JobCompLoc"])
C("comment_escaped_hash", "'\\#' in a value is a literal '#'",
  b("JobCompLoc=/tmp/a\\#b\n"), daemon=True, config=["JobCompLoc"])
C("comment_hash_in_quotes", "'#' inside a double-quoted value",
  b('JobCompLoc="/tmp/a#b"\n'), daemon=True, config=["JobCompLoc"])
C("comment_hash_in_quotes_with_space", "'#' inside a double-quoted value that has a space",
  b('JobCompLoc="/tmp/a #b"\n'), daemon=True, config=["JobCompLoc"])
C("comment_on_record_line", "comment after some keys of a NodeName line (later keys are ignored)",
  NODES_ONLY + "NodeName=n4 CPUs=4 # Feature=x RealMemory=abc\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("comment_hash_in_feature", "'#' directly inside a node Feature value",
  NODES_ONLY + "NodeName=n4 CPUs=2 Feature=aa#bb\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("comment_hash_key_start", "a '#' glued to the start of a key on a record line",
  NODES_ONLY + "NodeName=n4 CPUs=2 #Feature=x\nPartitionName=debug Nodes=ALL Default=YES\n")
C("comment_unknown_key_commented", "an unknown key behind '#' is not seen", b("#FooBar=1\n"))

# --- continuation
C("cont_join_direct", "backslash at end of line joins the next line directly (no space inserted)",
  NODES_ONLY + "PartitionName=debug Default=YES Nodes=n1,\\\nn2\n", daemon=True)
C("cont_join_splits_token", "continuation in the middle of a token: CPUs=1\\ + 6",
  HEAD + "NodeName=n[1-3] CPUs=1\\\n6\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("cont_space_before_backslash", "space before the backslash separates the keys",
  NODES_ONLY + "PartitionName=debug Nodes=ALL \\\nDefault=YES MaxTime=5\n", daemon=True)
C("cont_no_space_anywhere", "'Nodes=ALL\\' + 'Default=YES': joined without a space",
  NODES_ONLY + "PartitionName=debug Nodes=ALL\\\nDefault=YES\n", daemon=True)
C("cont_trailing_space_after_backslash", "backslash followed by a space at end of line",
  NODES_ONLY + "PartitionName=debug Default=YES Nodes=n1,\\ \nn2\n", daemon=True)
C("cont_trailing_tab_after_backslash", "backslash followed by a tab at end of line",
  NODES_ONLY + "PartitionName=debug Default=YES Nodes=n1,\\\t\nn2\n", daemon=True)
C("cont_double_backslash", "two backslashes at end of line (escaped backslash, no continuation?)",
  b("JobCompLoc=/tmp/a\\\\\nMaxJobCount=5\n"), daemon=True, config=["JobCompLoc", "MaxJobCount"])
C("cont_triple_backslash", "three backslashes at end of line",
  b("JobCompLoc=/tmp/a\\\\\\\nb\n"), daemon=True, config=["JobCompLoc"])
C("cont_inside_key", "continuation splits a key: MaxJob\\ + Count=5",
  b("MaxJob\\\nCount=5\n"), daemon=True, config=["MaxJobCount"])
C("cont_then_comment_line", "continuation followed by a comment line",
  NODES_ONLY + "PartitionName=debug Nodes=ALL \\\n# a comment\nDefault=YES\n", daemon=True)
C("cont_then_blank_line", "continuation followed by an empty line",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES \\\n\nMaxJobCount=5\n", daemon=True,
  config=["MaxJobCount"])
C("cont_three_lines", "continuation across three lines",
  NODES_ONLY + "PartitionName=debug \\\nNodes=ALL \\\nDefault=YES\n", daemon=True)
C("cont_at_eof_with_newline", "backslash on the last line, file ends with a newline",
  b("MaxJobCount=5 \\\n"), daemon=True, config=["MaxJobCount"])
C("cont_at_eof_no_newline", "backslash is the last byte of the file", b("MaxJobCount=5 \\"))
C("cont_at_eof_joined_value", "'MaxJobCount=5\\' as the last line (no space)", b("MaxJobCount=5\\\n"),
  daemon=True, config=["MaxJobCount"])
C("cont_comment_line_ending_backslash", "a comment line ending in a backslash: is the next line swallowed?",
  b("# comment \\\nMaxJobCount=5\n"), daemon=True, config=["MaxJobCount"])
C("cont_after_inline_comment", "value, inline comment ending in backslash, then a line",
  b("JobCompLoc=/tmp/a # comment \\\nMaxJobCount=5\n"), daemon=True, config=["JobCompLoc", "MaxJobCount"])
C("cont_backslash_only_line", "a line holding only a backslash", b("\\\nMaxJobCount=5\n"), daemon=True,
  config=["MaxJobCount"])
C("cont_include_line", "continuation inside an Include line (Include \\ + path)",
  b("Include \\\n{DIR}/extra.conf\n"), files={"extra.conf": "MaxJobCount=5\n"}, daemon=True, config=['MaxJobCount'])

# --- escapes
C("escape_double_backslash_value", "'\\\\' inside a value",
  b("JobCompLoc=/tmp/a\\\\b\n"), daemon=True, config=["JobCompLoc"])
C("escape_backslash_ordinary_char", "backslash before an ordinary character",
  b("JobCompLoc=/tmp/a\\bc\n"), daemon=True, config=["JobCompLoc"])
C("escape_backslash_space", "backslash before a space inside a value",
  b("JobCompLoc=/tmp/a\\ b\n"), daemon=True, config=["JobCompLoc"])
C("escape_backslash_quote", "backslash-escaped double quote inside a value",
  b('JobCompLoc=/tmp/a\\"b\n'), daemon=True, config=["JobCompLoc"])
C("escape_in_quotes", "backslashes inside a quoted value",
  b('JobCompLoc="/tmp/a\\\\b\\#c"\n'), daemon=True, config=["JobCompLoc"])

# --- includes
INC = {"extra.conf": "NodeName=n4 CPUs=4\n"}
C("include_basic", "Include with absolute path adding a node",
  NODES_ONLY + "Include {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_lowercase", "'include' lower-case",
  NODES_ONLY + "include {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_uppercase", "'INCLUDE' upper-case",
  NODES_ONLY + "INCLUDE {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_mixedcase", "'iNcLuDe' mixed case",
  NODES_ONLY + "iNcLuDe {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_leading_whitespace", "leading spaces before Include",
  NODES_ONLY + "   Include {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_tab_separator", "TAB between Include and the path",
  NODES_ONLY + "Include\t{DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_multiple_spaces", "several spaces between Include and the path",
  NODES_ONLY + "Include    {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_extra_token", "Include f extra (text after the path)",
  NODES_ONLY + "Include {DIR}/extra.conf extra\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC,
  daemon=True)
C("include_trailing_comment", "Include f # comment",
  NODES_ONLY + "Include {DIR}/extra.conf # comment\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC,
  daemon=True)
C("include_trailing_space", "Include f followed by trailing spaces",
  NODES_ONLY + "Include {DIR}/extra.conf   \nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True)
C("include_no_file", "'Include' alone on a line", b("Include\n"))
C("include_no_file_trailing_space", "'Include ' (space, no file)", b("Include \n"))
C("include_no_file_first_line", "'Include' alone as the first line", "Include\n" + BASE)
C("include_equals", "Include=f with an equals sign", b("Include={DIR}/extra.conf\n"), files=INC)
C("include_key_prefix", "'Includes f' (longer word)", b("Includes {DIR}/extra.conf\n"), files=INC)
C("include_quoted_path", 'Include "f" with double quotes', b('Include "{DIR}/extra.conf"\n'), files=INC,
  timeout=90)
C("include_nested_abs", "a includes b includes c (absolute paths)",
  NODES_ONLY + "Include {DIR}/a.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"a.conf": "Include {DIR}/b.conf\n", "b.conf": "NodeName=n4 CPUs=4\n"}, daemon=True)
C("include_cycle", "a includes b includes a (time limit 40 s)",
  b("Include {DIR}/a.conf\n"), files={"a.conf": "Include {DIR}/b.conf\n", "b.conf": "Include {DIR}/a.conf\n"},
  timeout=40)
C("include_self", "the main file includes itself (time limit 40 s)", b("Include {DIR}/slurm.conf\n"),
  timeout=40)
C("include_twice", "the same file included twice (duplicate node definitions)",
  NODES_ONLY + "Include {DIR}/extra.conf\nInclude {DIR}/extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files=INC, daemon=True)
C("include_twice_scalar", "a file setting a scalar key included twice",
  b("Include {DIR}/extra.conf\nInclude {DIR}/extra.conf\n"), files={"extra.conf": "MaxJobCount=5\n"},
  daemon=True, config=["MaxJobCount"])
C("include_missing_abs", "Include of a missing absolute path (Slurm retries 60 s)",
  b("Include {DIR}/nope.conf\n"), timeout=90)
C("include_missing_relative", "Include of a missing relative path",
  b("Include nope.conf\n"), timeout=90)
C("include_directory", "Include naming a directory", b("Include {DIR}/sub\n"),
  files={"sub/x.conf": "MaxJobCount=5\n"}, timeout=90, daemon=True, config=['MaxJobCount'])
C("include_empty_file", "Include of an empty file", b("Include {DIR}/empty.conf\n"), files={"empty.conf": ""}, daemon=True)
C("include_glob", "Include with a '*' pattern", b("Include {DIR}/inc/*.conf\n"),
  files={"inc/a.conf": "MaxJobCount=5\n"}, timeout=90)
C("include_relative_confdir", "relative Include resolved against slurm.conf's directory (cwd is elsewhere)",
  NODES_ONLY + "Include extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True,
  timeout=90)
C("include_relative_cwd_only", "relative Include whose file exists only in the current working directory",
  NODES_ONLY + "Include extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"cwd/extra.conf": "NodeName=n4 CPUs=4\n"}, timeout=90)
C("include_relative_subdir_path", "relative Include 'sub/a.conf' from slurm.conf",
  NODES_ONLY + "Include sub/a.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"sub/a.conf": "NodeName=n4 CPUs=4\n"}, timeout=90, daemon=True)
C("include_nested_relative_in_subdir", "sub/a.conf includes 'b.conf'; b.conf exists only in sub/",
  NODES_ONLY + "Include sub/a.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"sub/a.conf": "Include b.conf\n", "sub/b.conf": "NodeName=n4 CPUs=4\n"}, timeout=90, daemon=True)
C("include_nested_relative_in_confdir", "sub/a.conf includes 'b.conf'; b.conf exists only next to slurm.conf",
  NODES_ONLY + "Include sub/a.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"sub/a.conf": "Include b.conf\n", "b.conf": "NodeName=n4 CPUs=4\n"}, daemon=True, timeout=90)
C("include_nested_relative_both", "sub/a.conf includes 'b.conf'; both sub/b.conf (CPUs=8) and ./b.conf (CPUs=4)",
  NODES_ONLY + "Include sub/a.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"sub/a.conf": "Include b.conf\n", "b.conf": "NodeName=n4 CPUs=4\n", "sub/b.conf": "NodeName=n4 CPUs=8\n"},
  daemon=True, timeout=90)
C("include_main_in_subdir", "main file lives in etc/; relative include 'x.conf' exists in etc/",
  None, files={"etc/slurm.conf": NODES_ONLY + "Include x.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
               "etc/x.conf": "NodeName=n4 CPUs=4\n"}, main="etc/slurm.conf", timeout=90, daemon=True)
C("include_dot_relative", "relative Include './extra.conf'",
  NODES_ONLY + "Include ./extra.conf\nPartitionName=debug Nodes=ALL Default=YES\n", files=INC, timeout=90, daemon=True)
C("include_percent_c", "%c replaced by the cluster name (ClusterName set before)",
  NODES_ONLY + "Include {DIR}/%c.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"test.conf": "NodeName=n4 CPUs=4\n"}, daemon=True, timeout=90)
C("include_percent_c_relative", "relative '%c.conf'",
  NODES_ONLY + "Include %c.conf\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"test.conf": "NodeName=n4 CPUs=4\n"}, timeout=90, daemon=True)
C("include_percent_c_before_clustername", "%c used before ClusterName is set; file test.conf exists",
  "SlurmctldHost=localhost\nInclude {DIR}/%c.conf\nClusterName=test\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n",
  files={"test.conf": "NodeName=n4 CPUs=4\n"}, timeout=90)
C("include_percent_c_before_clustername_literal", "%c before ClusterName; a file literally named '%c.conf' exists",
  "SlurmctldHost=localhost\nInclude {DIR}/%c.conf\nClusterName=test\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n",
  files={"%c.conf": "NodeName=n4 CPUs=4\n"}, timeout=90)
C("include_percent_c_no_clustername", "%c with no ClusterName anywhere; '%c.conf' and '.conf' missing",
  "SlurmctldHost=localhost\nInclude {DIR}/%c.conf\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", timeout=90)
C("include_percent_c_upper_cluster_upper_file", "ClusterName=TEST, only TEST.conf exists",
  "ClusterName=TEST\nSlurmctldHost=localhost\nNodeName=n[1-3] CPUs=2\nInclude {DIR}/%c.conf\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", files={"TEST.conf": "NodeName=n4 CPUs=4\n"}, timeout=90)
C("include_percent_c_upper_cluster_lower_file", "ClusterName=TEST, only test.conf exists",
  "ClusterName=TEST\nSlurmctldHost=localhost\nNodeName=n[1-3] CPUs=2\nInclude {DIR}/%c.conf\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", files={"test.conf": "NodeName=n4 CPUs=4\n"}, timeout=90, daemon=True)
C("include_percent_other", "other %-sequences (%n) in an Include path are literal?",
  b("Include {DIR}/%n.conf\n"), files={"%n.conf": "MaxJobCount=5\n"}, timeout=90, daemon=True, config=['MaxJobCount'])
C("include_percent_c_twice", "two %c in one path", b("Include {DIR}/%c-%c.conf\n"),
  files={"test-test.conf": "MaxJobCount=5\n"}, timeout=90, daemon=True, config=['MaxJobCount'])
C("include_clustername_in_include", "ClusterName set inside an included file, %c used afterwards",
  "SlurmctldHost=localhost\nInclude {DIR}/cl.conf\nInclude {DIR}/%c.conf\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n",
  files={"cl.conf": "ClusterName=test\n", "test.conf": "MaxJobCount=5\n"}, timeout=90, daemon=True, config=['MaxJobCount'])
C("include_inside_included_error_line", "parse error inside an included file (message names which file/line?)",
  b("Include {DIR}/bad.conf\n"), files={"bad.conf": "MaxJobCount=5\nMaxJobCount=5 junk\n"})
C("include_unknown_key_inside", "unknown key inside an included file", b("Include {DIR}/bad.conf\n"),
  files={"bad.conf": "\nFooBar=1\n"})
C("include_record_continues", "NodeName=DEFAULT set in an include applies to the including file",
  HEAD + "Include {DIR}/def.conf\nNodeName=n[1-3]\nPartitionName=debug Nodes=ALL Default=YES\n",
  files={"def.conf": "NodeName=DEFAULT CPUs=4 RealMemory=100\n"}, daemon=True)

# --- key/value syntax
C("kv_spaces_around_equals", "'Key = Value'", b("MaxJobCount = 5\n"), daemon=True, config=['MaxJobCount'])
C("kv_space_before_equals", "'Key =Value'", b("MaxJobCount =5\n"), daemon=True, config=['MaxJobCount'])
C("kv_space_after_equals", "'Key= Value'", b("MaxJobCount= 5\n"), daemon=True, config=['MaxJobCount'])
C("kv_space_after_equals_record", "'NodeName=n4 CPUs= 4' on a record line",
  NODES_ONLY + "NodeName=n4 CPUs= 4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("kv_empty_value_eol", "'Key=' at end of line (string key)", b("JobCompLoc=\n"), daemon=True,
  config=["JobCompLoc"])
C("kv_empty_value_eol_number", "'Key=' at end of line (numeric key)", b("MaxJobCount=\n"), daemon=True,
  config=["MaxJobCount"])
C("kv_empty_quoted", "Key=\"\"", b('JobCompLoc=""\n'), daemon=True, config=["JobCompLoc"])
C("kv_empty_quoted_number", "numeric Key=\"\"", b('MaxJobCount=""\n'))
C("kv_quoted_with_space", 'Key="a b"', b('JobCompLoc="/tmp/a b"\n'), daemon=True, config=["JobCompLoc"])
C("kv_quoted_number", 'MaxJobCount="5"', b('MaxJobCount="5"\n'), daemon=True, config=["MaxJobCount"])
C("kv_single_quotes", "single quotes are not quoting", b("JobCompLoc='/tmp/a b'\n"))
C("kv_single_quotes_nospace", "single quotes kept literally?", b("JobCompLoc='/tmp/ab'\n"), daemon=True,
  config=["JobCompLoc"])
C("kv_unterminated_quote", 'Key="unterminated', b('JobCompLoc="/tmp/unterminated\n'), daemon=True,
  config=["JobCompLoc"])
C("kv_unterminated_quote_space", 'Key="a b (unterminated, with a space)', b('JobCompLoc="/tmp/a b\n'),
  daemon=True, config=["JobCompLoc"])
C("kv_quote_then_text", 'Key="a"b', b('JobCompLoc="/tmp/a"b\n'), daemon=True, config=["JobCompLoc"])
C("kv_text_then_quote", 'Key=a"b c"', b('JobCompLoc=/tmp/a"b c"\n'), daemon=True, config=["JobCompLoc"])
C("kv_quoted_key", '"MaxJobCount"=5', b('"MaxJobCount"=5\n'))
C("kv_value_contains_equals", "a value containing '='", b("JobCompLoc=/tmp/a=b\n"), daemon=True,
  config=["JobCompLoc"])
C("kv_double_equals", "Key==value", b("MaxJobCount==5\n"))
C("kv_double_equals_string", "string Key==value", b("JobCompLoc==/tmp/a\n"), daemon=True, config=["JobCompLoc"])
C("kv_plus_equals", "Key+=value at top level", b("MaxJobCount+=5\n"), daemon=True, config=["MaxJobCount"])
C("kv_minus_equals", "Key-=value at top level", b("MaxJobCount-=5\n"), daemon=True, config=["MaxJobCount"])
C("kv_plus_equals_string", "SchedulerParameters+=...", b("SchedulerParameters+=bf_window=100\n"), daemon=True,
  config=["SchedulerParameters"])
C("kv_plus_equals_record", "CPUs+=4 on a NodeName line",
  NODES_ONLY + "NodeName=n4 CPUs+=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("kv_two_globals_one_line", "two real global pairs on one line", b("MaxJobCount=5 MinJobAge=10\n"))
C("kv_trailing_text", "trailing word after a value", b("MaxJobCount=5 garbage\n"))
C("kv_trailing_spaces", "trailing spaces after a value", b("MaxJobCount=5   \n"), daemon=True,
  config=["MaxJobCount"])
C("kv_leading_whitespace", "leading spaces/tabs before a key", b("  \tMaxJobCount=5\n"), daemon=True,
  config=["MaxJobCount"])
C("kv_leading_whitespace_record", "leading whitespace before NodeName",
  NODES_ONLY + "   NodeName=n4 CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("kv_crlf", "CRLF line endings everywhere", b("MaxJobCount=5\n").replace("\n", "\r\n"), daemon=True,
  config=["MaxJobCount", "ClusterName"])
C("kv_crlf_string_value", "CRLF after a string value", b("JobCompLoc=/tmp/a\n").replace("\n", "\r\n"),
  daemon=True, config=["JobCompLoc"])
C("kv_cr_only", "old-Mac CR-only line endings", BASE.replace("\n", "\r"))
C("kv_tabs_on_record", "tabs between pairs on a NodeName line",
  NODES_ONLY + "NodeName=n4\tCPUs=4\tRealMemory=100\nPartitionName=debug\tNodes=ALL\tDefault=YES\n", daemon=True)
C("kv_whitespace_only_line", "a line holding only spaces and a tab", b("   \t  \nMaxJobCount=5\n"), daemon=True)
C("kv_blank_lines", "many blank lines", "\n\n" + BASE.replace("\n", "\n\n"))
C("kv_key_with_dot", "a key containing a dot", b("Max.JobCount=5\n"))
C("kv_key_with_digit", "a key with trailing digits", b("MaxJobCount2=5\n"))
C("kv_key_only", "a key without '='", b("MaxJobCount\n"))
C("kv_key_only_record", "a bare word on a NodeName line", NODES_ONLY + "NodeName=n4 CPUs\n")
C("kv_equals_first", "a line starting with '='", b("=5\n"))
C("kv_non_ascii_value", "non-ASCII UTF-8 in a value", b("JobCompLoc=/tmp/\u00e9t\u00e9\n"), daemon=True,
  config=["JobCompLoc"])
C("kv_non_ascii_key", "non-ASCII UTF-8 in a key", b("M\u00e4xJobCount=5\n"))
C("kv_nul_byte_in_value", "a NUL byte inside a value (rest of the line after NUL)",
  b("MaxJobCount=5\0garbage\nMinJobAge=10\n"), daemon=True, config=["MaxJobCount", "MinJobAge"])
C("kv_nul_byte_line_start", "a NUL byte at the start of a line", b("\0FooBar=1\nMaxJobCount=5\n"),
  daemon=True, config=["MaxJobCount"])
C("kv_very_long_line", "a 2000-character value",
  b("SchedulerParameters=" + ",".join(["bf_window=100"] * 150) + "\n"))
C("kv_key_lowercase", "keys are case-insensitive (global)", b("maxjobcount=5\nMINJOBAGE=10\n"), daemon=True,
  config=["MaxJobCount", "MinJobAge"])
C("kv_key_lowercase_records", "record keys are case-insensitive",
  "clustername=test\nslurmctldhost=localhost\nnodename=n[1-3] cpus=2 REALMEMORY=100\n"
  "partitionname=debug nodes=ALL default=YES MAXTIME=5\n", daemon=True)
C("kv_dup_scalar", "duplicated scalar key: warning text, which value wins",
  b("MaxJobCount=5\nMaxJobCount=6\n"), daemon=True, config=["MaxJobCount"])
C("kv_dup_scalar_case", "duplicate key differing only in case",
  b("maxjobcount=5\nMaxJobCount=6\n"), daemon=True, config=["MaxJobCount"])
C("kv_dup_scalar_string", "duplicated string key", b("JobCompLoc=/tmp/a\nJobCompLoc=/tmp/b\n"), daemon=True,
  config=["JobCompLoc"])
C("kv_dup_clustername", "ClusterName twice", "ClusterName=first\n" + b(""), daemon=True, config=["ClusterName"])
C("kv_dup_scalar_bad_then_good", "first value invalid, second valid", b("MaxJobCount=abc\nMaxJobCount=6\n"))
C("kv_dup_across_include", "a scalar set in slurm.conf and again in an included file",
  b("MaxJobCount=5\nInclude {DIR}/extra.conf\n"), files={"extra.conf": "MaxJobCount=6\n"}, daemon=True,
  config=["MaxJobCount"])
C("kv_unknown_key", "an unknown global key", b("FooBar=1\n"))
C("kv_unknown_key_first", "an unknown key on the first line", "FooBar=1\n" + BASE)

# --- record lines
C("node_many_keys", "NodeName with many keys",
  HEAD + "NodeName=n[1-3] CPUs=8 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=2 RealMemory=1000 "
  "TmpDisk=500 Weight=7 Feature=f1,f2 State=UNKNOWN CoreSpecCount=1 MemSpecLimit=100\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_partition_key", "a partition key (MaxTime) on a NodeName line",
  NODES_ONLY + "NodeName=n4 CPUs=2 MaxTime=5\nPartitionName=debug Nodes=ALL Default=YES\n")
C("partition_node_key", "a node key (CPUs) on a PartitionName line", b("PartitionName=p2 Nodes=n1 CPUs=2\n"))
C("node_dup_subkey", "duplicate sub-key within one NodeName line",
  NODES_ONLY + "NodeName=n4 CPUs=2 CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("partition_dup_subkey", "duplicate sub-key within one PartitionName line",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES MaxTime=5 MaxTime=10\n", daemon=True)
C("node_default_merging", "NodeName=DEFAULT then records then another DEFAULT",
  HEAD + "NodeName=DEFAULT CPUs=4 RealMemory=100 Feature=fa\nNodeName=n[1-2] CPUs=2\n"
  "NodeName=DEFAULT Weight=5\nNodeName=n3\nNodeName=n4 RealMemory=50\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_default_lowercase", "NodeName=default (lower case)",
  HEAD + "NodeName=default CPUs=4\nNodeName=n[1-3]\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_default_after_records", "NodeName=DEFAULT only after the records (applies only to later ones)",
  HEAD + "NodeName=n[1-2]\nNodeName=DEFAULT CPUs=4\nNodeName=n3\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("node_default_only", "only NodeName=DEFAULT, no real nodes",
  HEAD + "NodeName=DEFAULT CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_default_in_range", "NodeName=DEFAULT,n1 (DEFAULT in a list)",
  HEAD + "NodeName=DEFAULT,n1 CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_default_reset_key", "second NodeName=DEFAULT sets CPUs again (replaces, earlier keys kept?)",
  HEAD + "NodeName=DEFAULT CPUs=4 RealMemory=100\nNodeName=DEFAULT CPUs=8\nNodeName=n[1-3]\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("partition_default_merging", "PartitionName=DEFAULT then partitions then another DEFAULT",
  NODES_ONLY + "PartitionName=DEFAULT MaxTime=10 State=UP PriorityTier=3\n"
  "PartitionName=p1 Nodes=n1 Default=YES MaxTime=20\nPartitionName=DEFAULT MaxNodes=2\n"
  "PartitionName=p2 Nodes=n2\n", daemon=True)
C("partition_default_lowercase", "PartitionName=default (lower case)",
  NODES_ONLY + "PartitionName=default MaxTime=10\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("partition_default_nodes", "Nodes= given on PartitionName=DEFAULT",
  NODES_ONLY + "PartitionName=DEFAULT Nodes=n1\nPartitionName=p1 Default=YES\nPartitionName=p2 Nodes=n2\n",
  daemon=True)
C("node_dup_same_name", "the same node defined twice",
  HEAD + "NodeName=n1 CPUs=2\nNodeName=n1 CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_dup_overlapping_ranges", "overlapping ranges n[1-3] and n[3-4]",
  HEAD + "NodeName=n[1-3] CPUs=2\nNodeName=n[3-4] CPUs=4\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("node_name_all", "NodeName=ALL", HEAD + "NodeName=ALL CPUs=2\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("node_name_empty", "NodeName= with no value", HEAD + "NodeName= CPUs=2\n", daemon=True)
C("node_name_quoted", 'NodeName="n[1-3]"', HEAD + 'NodeName="n[1-3]" CPUs=2\nPartitionName=debug Nodes=ALL Default=YES\n',
  daemon=True)
C("node_name_list", "NodeName=n1,n2,n[3-4] (list)", HEAD + "NodeName=n1,n2,n[3-4] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_name_bad_range", "NodeName=n[3-1] (reversed range)", HEAD + "NodeName=n[3-1] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("node_unknown_key", "unknown key on a NodeName line", NODES_ONLY + "NodeName=n4 Foo=1\n")
C("no_nodes", "no NodeName at all", HEAD + "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("no_partitions", "no PartitionName at all", NODES_ONLY, daemon=True)
C("no_clustername", "ClusterName missing", "SlurmctldHost=localhost\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True, config=["ClusterName"])
C("no_slurmctldhost", "SlurmctldHost missing", "ClusterName=test\nNodeName=n[1-3] CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n")
C("empty_file", "a completely empty slurm.conf", "")
C("clustername_uppercase", "ClusterName=TeSt (effective value lower-cased?)",
  BASE.replace("ClusterName=test", "ClusterName=TeSt"), daemon=True, config=["ClusterName"])
C("partition_dup_name", "the same PartitionName twice",
  b("PartitionName=debug Nodes=n1 MaxTime=5\n"), daemon=True)
C("partition_dup_name_case", "PartitionName debug and DEBUG",
  b("PartitionName=DEBUG Nodes=n1\n"), daemon=True)
C("partition_two_default_yes", "two partitions with Default=YES", b("PartitionName=p2 Nodes=n1 Default=YES\n"),
  daemon=True)
C("partition_nodes_all_lower", "Nodes=all (lower case)", NODES_ONLY + "PartitionName=debug Nodes=all Default=YES\n",
  daemon=True)
C("partition_nodes_unknown", "Nodes naming an unknown node", b("PartitionName=p2 Nodes=n9\n"), daemon=True)
C("partition_nodes_empty_quoted", 'Nodes=""', b('PartitionName=p2 Nodes=""\n'), daemon=True)
C("partition_nodes_empty", "Nodes= (empty) followed by another key", b("PartitionName=p2 Nodes= MaxTime=5\n"),
  daemon=True)
C("partition_no_nodes_key", "partition without Nodes=", b("PartitionName=p2 MaxTime=5\n"), daemon=True)
C("partition_nodes_range_list", "Nodes=n[1-2],n3", NODES_ONLY + "PartitionName=debug Nodes=n[1-2],n3 Default=YES\n",
  daemon=True)
C("partition_nodes_dup", "Nodes=n1,n1", NODES_ONLY + "PartitionName=debug Nodes=n1,n1 Default=YES\n", daemon=True)
C("partition_name_empty", "PartitionName= with no value", NODES_ONLY + "PartitionName= Nodes=ALL\n", daemon=True)
C("nodeset_feature", "NodeSet by Feature used in a partition",
  HEAD + "NodeName=n[1-2] CPUs=2 Feature=fast\nNodeName=n3 CPUs=2\nNodeSet=fs Feature=fast\n"
  "PartitionName=debug Nodes=fs Default=YES\n", daemon=True)
C("nodeset_nodes", "NodeSet by Nodes= used in a partition together with a node",
  b("NodeSet=ns Nodes=n[1-2]\nPartitionName=p2 Nodes=ns,n3\n"), daemon=True)
C("nodeset_unknown_feature", "NodeSet whose Feature matches no node",
  b("NodeSet=ns Feature=nothere\nPartitionName=p2 Nodes=ns\n"), daemon=True)
C("nodeset_no_keys", "NodeSet with neither Feature nor Nodes", b("NodeSet=ns\n"), daemon=True)
C("nodeset_unknown_key", "NodeSet with an unknown key", b("NodeSet=ns Foo=1\n"))
C("nodeset_same_as_node", "NodeSet named like a node", b("NodeSet=n1 Nodes=n2\nPartitionName=p2 Nodes=n1\n"),
  daemon=True)
C("downnodes", "DownNodes line", b("DownNodes=n1 State=DOWN Reason=broken\n"), daemon=True)
C("downnodes_drain", "DownNodes State=DRAIN", b("DownNodes=n[1-2] State=DRAIN Reason=maint\n"), daemon=True)
C("downnodes_unknown_node", "DownNodes naming an unknown node", b("DownNodes=n9 State=DOWN\n"), daemon=True)
C("downnodes_bad_state", "DownNodes with a bad State", b("DownNodes=n1 State=BOGUS\n"), daemon=True)
C("slurmctldhost_addr", "SlurmctldHost=name(addr)", BASE.replace("SlurmctldHost=localhost",
  "SlurmctldHost=localhost(127.0.0.1)"), daemon=True, config=["SlurmctldHost[0]"])
C("slurmctldhost_multiple", "two SlurmctldHost lines", BASE.replace("SlurmctldHost=localhost",
  "SlurmctldHost=localhost\nSlurmctldHost=ctl2"), daemon=True, config=["SlurmctldHost[0]", "SlurmctldHost[1]"])
C("slurmctldhost_list", "SlurmctldHost=a,b on one line", BASE.replace("SlurmctldHost=localhost",
  "SlurmctldHost=localhost,ctl2"), daemon=True, config=["SlurmctldHost[0]", "SlurmctldHost[1]"])
C("slurmctldhost_unclosed_paren", "SlurmctldHost=name(addr without ')'", BASE.replace("SlurmctldHost=localhost",
  "SlurmctldHost=localhost(127.0.0.1"))
C("controlmachine_legacy", "ControlMachine instead of SlurmctldHost", BASE.replace("SlurmctldHost=localhost",
  "ControlMachine=localhost"), daemon=True, config=["SlurmctldHost[0]"])
C("controlmachine_with_addr", "ControlMachine + ControlAddr", BASE.replace("SlurmctldHost=localhost",
  "ControlMachine=localhost\nControlAddr=127.0.0.1"), daemon=True, config=["SlurmctldHost[0]"])
C("controlmachine_and_slurmctldhost", "both ControlMachine and SlurmctldHost",
  BASE.replace("SlurmctldHost=localhost", "SlurmctldHost=localhost\nControlMachine=localhost"))
C("backupcontroller_legacy", "ControlMachine + BackupController", BASE.replace("SlurmctldHost=localhost",
  "ControlMachine=localhost\nBackupController=ctl2"), daemon=True, config=["SlurmctldHost[0]", "SlurmctldHost[1]"])

# --- legacy aliases
for v in ["YES", "FORCE:2", "EXCLUSIVE", "NO"]:
    C("legacy_shared_" + v.lower().replace(":", "_"), f"partition Shared={v} (legacy OverSubscribe)",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES Shared={v}\n", daemon=True)
C("legacy_shared_and_oversubscribe", "Shared=YES and OverSubscribe=NO on the same line",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES Shared=YES OverSubscribe=NO\n", daemon=True)
C("legacy_partition_priority", "partition Priority=5",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES Priority=5\n", daemon=True)
C("legacy_partition_priority_and_tier", "Priority=5 and PriorityTier=7",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES Priority=5 PriorityTier=7\n", daemon=True)
C("legacy_partition_priority_and_jobfactor", "Priority=5 and PriorityJobFactor=9 (order: factor first)",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES PriorityJobFactor=9 Priority=5\n", daemon=True)
C("legacy_procs", "NodeName Procs=4", HEAD + "NodeName=n[1-3] Procs=4\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("legacy_procs_and_cpus", "Procs=4 and CPUs=2", HEAD + "NodeName=n[1-3] Procs=4 CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)

# --- numeric values
for name, v in [("leading_zero", "010"), ("hex", "0x10"), ("octal_invalid", "09"), ("plus_sign", "+4"),
                ("negative", "-1"), ("zero", "0"), ("overflow_uint16", "70000"), ("max_uint16", "65535"),
                ("k_suffix", "4k"), ("spaces_inside", '"4 "'), ("float", "2.5"), ("unlimited", "UNLIMITED")]:
    C("num_cpus_" + name, f"node CPUs={v}", HEAD + f"NodeName=n[1-3] CPUs={v}\nPartitionName=debug Nodes=ALL Default=YES\n",
      daemon=True)
for name, v in [("plain", "4096"), ("k", "4k"), ("K", "4K"), ("M", "4M"), ("G", "4G"), ("leading_zero", "010"),
                ("hex", "0x10"), ("negative", "-1"), ("unlimited", "UNLIMITED"), ("huge", "99999999999")]:
    C("num_realmemory_" + name, f"node RealMemory={v} (uint64)", HEAD + f"NodeName=n[1-3] CPUs=2 RealMemory={v}\n"
      "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
for name, v in [("leading_zero", "010"), ("hex", "0x10"), ("negative", "-1"), ("k", "10k"), ("unlimited", "UNLIMITED"),
                ("infinite", "INFINITE"), ("overflow", "5000000000")]:
    C("num_maxjobcount_" + name, f"global uint32 MaxJobCount={v}", b(f"MaxJobCount={v}\n"), daemon=True,
      config=["MaxJobCount"])
for name, v in [("unlimited", "UNLIMITED"), ("infinite", "INFINITE"), ("unlimited_lower", "unlimited"),
                ("leading_zero", "010"), ("negative", "-1")]:
    C("num_partition_maxnodes_" + name, f"partition MaxNodes={v}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES MaxNodes={v}\n", daemon=True)
for name, v in [("leading_zero", "010"), ("hex", "0x10"), ("overflow", "70000")]:
    C("num_partition_priority_tier_" + name, f"partition PriorityTier={v} (uint16)",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES PriorityTier={v}\n", daemon=True)

# --- booleans
for v in ["YES", "yes", "NO", "no", "TRUE", "true", "FALSE", "1", "0", "UP", "DOWN", "other", "Y", "N", ""]:
    C("bool_default_" + slug(v), f"partition Default={v!r}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default={v}\n", daemon=v in ("YES", "TRUE", "1", "UP", "Y", "other"))
for v in ["YES", "true", "1", "junk"]:
    C("bool_hidden_" + slug(v), f"partition Hidden={v}", NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES Hidden={v}\n",
      daemon=True)
for v in ["UP", "down", "DRAIN", "INACTIVE", "YES", "junk"]:
    C("partition_state_" + slug(v), f"partition State={v}", NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES State={v}\n",
      daemon=True)

# --- time strings
TIMES = [("minutes", "5"), ("m_s", "5:30"), ("h_m_s", "1:02:03"), ("d_h", "1-2"), ("d_h_m", "1-2:30"),
         ("d_h_m_s", "1-2:30:15"), ("infinite", "INFINITE"), ("unlimited", "UNLIMITED"), ("unlimited_lower", "unlimited"),
         ("minus_one", "-1"), ("zero", "0"), ("overflow_minutes", "1:60:15"), ("sixty_seconds", "5:60"),
         ("trailing_colon", "5:"), ("leading_space", '" 5"'), ("trailing_space_quoted", '"5 "'), ("garbage", "abc"),
         ("garbage_suffix", "5x"), ("four_fields", "1:2:3:4"), ("days_only_dash", "1-"), ("none", "NONE"),
         ("empty", '""'), ("huge", "99999999")]
for name, v in TIMES:
    C("time_maxtime_" + name, f"partition MaxTime={v}", NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES MaxTime={v}\n",
      daemon=True)
for name, v in [("minutes", "5"), ("h_m_s", "1:02:03"), ("unlimited", "UNLIMITED"), ("garbage", "abc"), ("none", "NONE")]:
    C("time_defaulttime_" + name, f"partition DefaultTime={v}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES DefaultTime={v}\n", daemon=True)
C("time_defaulttime_over_maxtime", "DefaultTime greater than MaxTime",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES MaxTime=5 DefaultTime=10\n", daemon=True)
for name, v in [("seconds_plain", "30"), ("m_s", "1:30"), ("h_m_s", "1:00:00"), ("d_h", "1-0"), ("infinite", "INFINITE"),
                ("garbage", "abc"), ("negative", "-1")]:
    C("time_preemptexempt_" + name, f"PreemptExemptTime={v}", b(f"PreemptExemptTime={v}\n"), daemon=True,
      config=["PreemptExemptTime"])
for name, v in [("seconds_plain", "30"), ("m_s", "1:30"), ("h_m_s", "0:01:00"), ("garbage", "abc"), ("negative", "-1"),
                ("unlimited", "UNLIMITED")]:
    C("time_gracetime_" + name, f"partition GraceTime={v}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES GraceTime={v}\n", daemon=True)
for name, v in [("plain", "300"), ("m_s", "5:00"), ("infinite", "INFINITE")]:
    C("time_overtimelimit_" + name, f"OverTimeLimit={v} (global, minutes)", b(f"OverTimeLimit={v}\n"), daemon=True,
      config=["OverTimeLimit"])

# --- OverSubscribe
for v in ["NO", "YES", "YES:1", "YES:0", "YES:4", "FORCE", "FORCE:0", "FORCE:1", "FORCE:3", "EXCLUSIVE", "garbage",
          "yes", "force:2", "exclusive", "YES:", "YES:abc", "FORCE:70000", "YES:-1", "NO:2", "EXCLUSIVE:2"]:
    C("oversubscribe_" + slug(v), f"partition OverSubscribe={v}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES OverSubscribe={v}\n", daemon=True)

# --- PreemptMode / PreemptType
PM = ["OFF", "CANCEL", "REQUEUE", "SUSPEND", "SUSPEND,GANG", "GANG", "CANCEL,GANG", "REQUEUE,GANG", "CANCEL,REQUEUE",
      "WITHIN", "PRIORITY", "GANG,WITHIN", "GANG,PRIORITY", "CLUSTER", "garbage", "suspend,gang", "GANG,SUSPEND",
      "SUSPEND,GANG,WITHIN", "REQUEUE,GANG,PRIORITY", "OFF,GANG", "CANCEL,garbage", "SUSPEND, GANG", ""]
for v in PM:
    C("preemptmode_pprio_" + slug(v), f"PreemptType=preempt/partition_prio, PreemptMode={v!r}",
      b(f"PreemptType=preempt/partition_prio\nPreemptMode={v}\n"), daemon=True,
      config=["PreemptMode", "PreemptType"])
for v in ["OFF", "CANCEL", "REQUEUE", "SUSPEND", "SUSPEND,GANG", "GANG", "garbage"]:
    nm = v.replace(",", "_").lower()
    C("preemptmode_unset_type_" + nm, f"PreemptType unset, PreemptMode={v}", b(f"PreemptMode={v}\n"), daemon=True,
      config=["PreemptMode", "PreemptType"])
for v in ["CANCEL", "SUSPEND", "SUSPEND,GANG", "GANG"]:
    nm = v.replace(",", "_").lower()
    C("preemptmode_none_" + nm, f"PreemptType=preempt/none, PreemptMode={v}",
      b(f"PreemptType=preempt/none\nPreemptMode={v}\n"), daemon=True, config=["PreemptMode", "PreemptType"])
for v in ["CANCEL", "REQUEUE", "SUSPEND", "SUSPEND,GANG", "GANG", "SUSPEND,GANG,WITHIN"]:
    nm = v.replace(",", "_").lower()
    C("preemptmode_qos_" + nm, f"PreemptType=preempt/qos, PreemptMode={v}",
      b(f"PreemptType=preempt/qos\nPreemptMode={v}\n"), daemon=True, config=["PreemptMode", "PreemptType"])
C("preempttype_unknown", "PreemptType=preempt/bogus", b("PreemptType=preempt/bogus\n"), daemon=True,
  config=["PreemptType"])
C("preempttype_no_prefix", "PreemptType=partition_prio (no 'preempt/' prefix)",
  b("PreemptType=partition_prio\nPreemptMode=CANCEL\n"), daemon=True, config=["PreemptType", "PreemptMode"])
C("preempttype_uppercase", "PreemptType=PREEMPT/PARTITION_PRIO",
  b("PreemptType=PREEMPT/PARTITION_PRIO\nPreemptMode=CANCEL\n"), daemon=True, config=["PreemptType", "PreemptMode"])
for v in ["GANG", "SUSPEND", "SUSPEND,GANG", "REQUEUE", "OFF", "CANCEL,GANG", "WITHIN", "garbage", "requeue"]:
    C("partition_preemptmode_" + slug(v), f"cluster SUSPEND,GANG/partition_prio; partition PreemptMode={v}",
      NODES_ONLY + "PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\n"
      f"PartitionName=debug Nodes=ALL Default=YES PreemptMode={v}\n", daemon=True, config=["PreemptMode"])
for v in ["SUSPEND", "REQUEUE", "GANG"]:
    nm = v.lower()
    C("partition_preemptmode_cluster_off_" + nm, f"cluster PreemptMode unset; partition PreemptMode={v}",
      NODES_ONLY + f"PartitionName=debug Nodes=ALL Default=YES PreemptMode={v}\n", daemon=True, config=["PreemptMode"])
C("partition_preemptmode_cluster_requeue_suspend", "cluster REQUEUE/partition_prio; partition SUSPEND",
  NODES_ONLY + "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
  "PartitionName=debug Nodes=ALL Default=YES PreemptMode=SUSPEND\n", daemon=True, config=["PreemptMode"])
C("partition_preemptmode_inherit", "partition PreemptMode omitted inherits cluster REQUEUE",
  NODES_ONLY + "PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE,GANG\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True, config=["PreemptMode"])

# --- SelectType / SelectTypeParameters
SEL = [("linear", "CR_Memory"), ("linear", "CR_Core"), ("linear", "CR_CPU"), ("linear", "CR_Socket"),
       ("linear", "CR_ONE_TASK_PER_CORE"),
       ("cons_res", "CR_CPU"), ("cons_res", "CR_Core_Memory"), ("cons_tres", "CR_CPU"), ("cons_tres", "CR_Core_Memory"),
       ("cons_tres", "CR_Socket_Memory"), ("cons_tres", "CR_Memory"), ("cons_tres", "CR_CPU,CR_Core"),
       ("cons_tres", "CR_CPU_Memory,CR_Core"), ("cons_tres", "CR_CPU,CR_ONE_TASK_PER_CORE"),
       ("cons_tres", "CR_Core,CR_ONE_TASK_PER_CORE"), ("cons_tres", "cr_core_memory"), ("cons_tres", "CR_Bogus"),
       ("cons_tres", "CR_Core,CR_Bogus"), ("cons_tres", ""), ("cons_tres", "CR_LLN"), ("cons_tres", "CR_Core,CR_Pack_Nodes"),
       ("cons_tres", "CR_Core, CR_LLN"), ("cons_tres", "CR_Core,"), ("cons_res", "CR_Core,CR_Socket")]
for st, sp in SEL:
    nm = f"select_{st}_{sp.replace(',', '_').replace(' ', '') or 'none'}".lower()
    if sp == sp.lower() and sp:
        nm += "_lc"
    C(nm, f"SelectType=select/{st} SelectTypeParameters={sp!r}",
      b(f"SelectType=select/{st}\nSelectTypeParameters={sp}\n"), daemon=True,
      config=["SelectType", "SelectTypeParameters"])
C("select_params_without_type", "SelectTypeParameters=CR_Core_Memory with SelectType unset",
  b("SelectTypeParameters=CR_Core_Memory\n"), daemon=True, config=["SelectType", "SelectTypeParameters"])
C("select_type_lowercase", "SelectType=SELECT/CONS_TRES (upper case)",
  b("SelectType=SELECT/CONS_TRES\nSelectTypeParameters=CR_Core\n"), daemon=True,
  config=["SelectType", "SelectTypeParameters"])
C("select_type_unknown", "SelectType=select/bogus", b("SelectType=select/bogus\n"), daemon=True,
  config=["SelectType"])
C("select_partition_params", "partition SelectTypeParameters=CR_Core under cons_tres CR_Socket",
  NODES_ONLY + "SelectType=select/cons_tres\nSelectTypeParameters=CR_Socket\n"
  "PartitionName=debug Nodes=ALL Default=YES SelectTypeParameters=CR_Core\n", daemon=True,
  config=["SelectTypeParameters"])
C("select_partition_params_bad", "partition SelectTypeParameters=CR_Memory (not allowed?)",
  NODES_ONLY + "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
  "PartitionName=debug Nodes=ALL Default=YES SelectTypeParameters=CR_Memory\n", daemon=True)

# --- SchedulerParameters / PreemptParameters / SchedulerTimeSlice
for name, v in [("known", "bf_window=100,default_queue_depth=50"), ("unknown", "foo_bar"), ("unknown_kv", "foo=1"),
                ("malformed_number", "bf_window=abc"), ("empty_value", "bf_window="), ("double_comma", "bf_window=10,,bf_continue"),
                ("spaces", '"bf_window=10, bf_continue"'), ("uppercase", "BF_WINDOW=10"), ("empty", "")]:
    C("schedparams_" + name, f"SchedulerParameters={v!r}", b(f"SchedulerParameters={v}\n"), daemon=True,
      config=["SchedulerParameters"])
for name, v in [("known", "min_exempt_priority=5,reclaim_licenses,send_user_signal,strict_order,youngest_first"),
                ("unknown", "foo_bar"), ("malformed", "min_exempt_priority=abc"), ("empty", "")]:
    C("preemptparams_" + name, f"PreemptParameters={v!r}", b(f"PreemptType=preempt/partition_prio\nPreemptMode=REQUEUE\n"
      f"PreemptParameters={v}\n"), daemon=True, config=["PreemptParameters"])
for v in ["1", "5", "30", "70000", "0", "-1", "abc"]:
    C("timeslice_" + v.replace("-", "m"), f"SchedulerTimeSlice={v} with PreemptMode=SUSPEND,GANG",
      b(f"PreemptType=preempt/partition_prio\nPreemptMode=SUSPEND,GANG\nSchedulerTimeSlice={v}\n"), daemon=True,
      config=["SchedulerTimeSlice", "PreemptMode"])
C("timeslice_no_gang", "SchedulerTimeSlice=5 without gang", b("SchedulerTimeSlice=5\n"), daemon=True,
  config=["SchedulerTimeSlice"])

# --- node topology
TOPO = [("cpus_only", "CPUs=4"), ("sockets_cores_threads", "Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("cpus_eq_threads", "CPUs=8 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("cpus_eq_cores", "CPUs=4 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("cpus_inconsistent", "CPUs=6 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("cpus_more_than_topology", "CPUs=16 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("cpus_fewer_than_cores", "CPUs=2 Sockets=2 CoresPerSocket=2 ThreadsPerCore=2"),
        ("sockets_only", "Sockets=4"), ("cores_only", "CoresPerSocket=4"), ("threads_only", "ThreadsPerCore=2"),
        ("cpus_threads", "CPUs=8 ThreadsPerCore=2"), ("cpus_cores", "CPUs=8 CoresPerSocket=4"),
        ("cpus_sockets", "CPUs=8 Sockets=2"), ("cpus_sockets_indivisible", "CPUs=6 Sockets=4"),
        ("boards_spb", "Boards=2 SocketsPerBoard=2 CoresPerSocket=2"),
        ("boards_spb_cpus", "Boards=2 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 CPUs=8"),
        ("boards_and_sockets", "Boards=2 Sockets=4 CoresPerSocket=2"),
        ("sockets_and_spb", "Sockets=2 SocketsPerBoard=2 CoresPerSocket=2"),
        ("boards_only", "Boards=2"), ("boards_cpus", "Boards=2 CPUs=8"),
        ("zero_sockets", "Sockets=0"), ("zero_cpus", "CPUs=0"),
        ("corespeccount", "CPUs=4 CoreSpecCount=1"), ("cpuspeclist", "Sockets=1 CoresPerSocket=4 CPUSpecList=0,1")]
for name, v in TOPO:
    C("topo_" + name, f"node topology: {v}", HEAD + f"NodeName=n[1-3] {v}\nPartitionName=debug Nodes=ALL Default=YES\n",
      daemon=True)
C("topo_default_merge", "topology split between NodeName=DEFAULT and the node line",
  HEAD + "NodeName=DEFAULT Sockets=2 CoresPerSocket=4\nNodeName=n[1-3] ThreadsPerCore=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("topo_default_cpus_override", "DEFAULT gives a full topology, the node gives only CPUs",
  HEAD + "NodeName=DEFAULT Sockets=2 CoresPerSocket=4 ThreadsPerCore=2\nNodeName=n[1-3] CPUs=4\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)

# --- misc partition keys that resolve against others
C("partition_maxcpuspernode", "MaxCPUsPerNode and MaxMemPerNode",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES MaxCPUsPerNode=1 MaxMemPerNode=100\n", daemon=True)
C("partition_defmem_both", "DefMemPerCPU and DefMemPerNode on the same partition",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES DefMemPerCPU=100 DefMemPerNode=200\n", daemon=True)
C("partition_allowgroups_etc", "AllowGroups/AllowAccounts/DenyAccounts/AllowQos",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES AllowGroups=root AllowAccounts=a,b AllowQos=normal\n",
  daemon=True)
C("partition_allow_and_deny_accounts", "AllowAccounts with DenyAccounts on one partition",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES AllowAccounts=a DenyAccounts=b\n", daemon=True)
C("partition_exclusiveuser_lln", "ExclusiveUser=YES LLN=YES RootOnly=YES ReqResv=YES",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES ExclusiveUser=YES LLN=YES RootOnly=YES ReqResv=YES\n",
  daemon=True)
C("partition_minnodes_gt_maxnodes", "MinNodes greater than MaxNodes",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES MinNodes=3 MaxNodes=1\n", daemon=True)
C("partition_unknown_key", "unknown key on a PartitionName line", b("PartitionName=p2 Nodes=n1 Foo=1\n"))



# --- extra cases added after the first recording round
C("escape_quotes_made_by_escapes", 'JobCompLoc=\\"/tmp/a b\\" (escaped quotes around a value with a space)',
  b('JobCompLoc=\\"/tmp/a b\\"\n'), daemon=True, config=["JobCompLoc"])
C("escape_backslash_hash_in_record", "'\\#' inside a node Feature value",
  NODES_ONLY + "NodeName=n4 CPUs=2 Feature=aa\\#bb\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("comment_right_after_equals", "'#' directly after '=' (empty value)", b("JobCompLoc=#x\n"))
C("cont_leading_whitespace_next_line", "continuation, next line starts with spaces",
  NODES_ONLY + "PartitionName=debug Default=YES Nodes=n1,\\\n   n2\n", daemon=True)
C("cont_between_key_and_value", "continuation right after '='",
  NODES_ONLY + "PartitionName=debug Default=YES Nodes=\\\nn1\n", daemon=True)
C("kv_plus_equals_append", "SchedulerParameters=... then SchedulerParameters+=... (append or replace?)",
  b("SchedulerParameters=bf_window=10\nSchedulerParameters+=bf_continue\n"), daemon=True,
  config=["SchedulerParameters"])
C("kv_minus_equals_after", "MaxJobCount=5 then MaxJobCount-=2", b("MaxJobCount=5\nMaxJobCount-=2\n"), daemon=True,
  config=["MaxJobCount"])
C("kv_plus_equals_partition_nodes", "PartitionName line with Nodes+=n2", NODES_ONLY +
  "PartitionName=debug Default=YES Nodes=n1 Nodes+=n2\n", daemon=True)
C("kv_multiple_errors", "several errors in one file: are all reported?",
  b("FooBar=1\nMaxJobCount=abc\nNodeName=n4 CPUs=x\nBarFoo=2\n"))
C("kv_multiple_value_errors", "two bad values for known keys: are both reported?",
  b("MaxJobCount=abc\nMinJobAge=xyz\nNodeName=n4 CPUs=x\n"))
C("kv_empty_quoted_cpus", 'node CPUs="" (empty string for a number)',
  NODES_ONLY + 'NodeName=n4 CPUs=""\nPartitionName=debug Nodes=ALL Default=YES\n', daemon=True)
C("kv_quoted_feature_with_space", 'node Feature="a, b" (quoted value with a space on a record line)',
  NODES_ONLY + 'NodeName=n4 CPUs=2 Feature="aa, bb"\nPartitionName=debug Nodes=ALL Default=YES\n', daemon=True)
C("downnodes_quoted_reason", 'DownNodes Reason="disk failure" (quoted, with a space)',
  b('DownNodes=n1 State=DOWN Reason="disk failure"\n'), daemon=True)
C("legacy_partition_tier_then_priority", "PriorityTier=7 then Priority=5 (other order)",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES PriorityTier=7 Priority=5\n", daemon=True)
C("legacy_oversubscribe_then_shared", "OverSubscribe=FORCE then Shared=NO",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES OverSubscribe=FORCE Shared=NO\n", daemon=True)
C("legacy_shared_then_oversubscribe", "Shared=NO then OverSubscribe=FORCE",
  NODES_ONLY + "PartitionName=debug Nodes=ALL Default=YES Shared=NO OverSubscribe=FORCE\n", daemon=True)
C("legacy_cpus_then_procs", "CPUs=2 then Procs=4", HEAD + "NodeName=n[1-3] CPUs=2 Procs=4\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("legacy_shared_default_partition", "Shared=YES on PartitionName=DEFAULT, OverSubscribe on the partition",
  NODES_ONLY + "PartitionName=DEFAULT Shared=YES\nPartitionName=debug Nodes=ALL Default=YES OverSubscribe=FORCE:2\n"
  "PartitionName=p2 Nodes=n1\n", daemon=True)
C("node_name_all_lower", "NodeName=all (lower case)", HEAD + "NodeName=all CPUs=2\nPartitionName=debug Nodes=ALL Default=YES\n",
  daemon=True)
C("partition_default_overridden_by_default", "PartitionName=DEFAULT Default=YES (does it make every partition default?)",
  NODES_ONLY + "PartitionName=DEFAULT Default=YES\nPartitionName=p1 Nodes=n1\nPartitionName=p2 Nodes=n2\n", daemon=True)
C("partition_name_all", "PartitionName=ALL", NODES_ONLY + "PartitionName=ALL Nodes=ALL Default=YES\n", daemon=True)
for v in ["CLUSTER", "WITHIN"]:
    C("preemptmode_unset_type_" + v.lower(), f"PreemptType unset, PreemptMode={v}", b(f"PreemptMode={v}\n"),
      daemon=True, config=["PreemptMode", "PreemptType"])
C("preemptmode_qos_off", "PreemptType=preempt/qos, PreemptMode=OFF", b("PreemptType=preempt/qos\nPreemptMode=OFF\n"),
  daemon=True, config=["PreemptMode", "PreemptType"])
C("preempttype_none_explicit_off", "PreemptType=preempt/none, PreemptMode=OFF",
  b("PreemptType=preempt/none\nPreemptMode=OFF\n"), daemon=True, config=["PreemptMode", "PreemptType"])
C("preemptmode_pprio_unset", "PreemptType=preempt/partition_prio with PreemptMode unset",
  b("PreemptType=preempt/partition_prio\n"), daemon=True, config=["PreemptMode", "PreemptType"])
C("schedparams_preempt_options", "22.05 preemption options live in SchedulerParameters",
  b("SchedulerParameters=preempt_strict_order,preempt_youngest_first,preempt_reorder_count=3\n"), daemon=True,
  config=["SchedulerParameters"])
C("timeslice_two_globals", "SchedulerTimeSlice given twice (5 then 1)",
  b("SchedulerTimeSlice=5\nSchedulerTimeSlice=1\n"), daemon=True, config=["SchedulerTimeSlice"])

C("node_two_nodename_keys", "two NodeName= keys on one line", NODES_ONLY + "NodeName=n4 NodeName=n5 CPUs=2\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("partition_two_partitionname_keys", "two PartitionName= keys on one line", NODES_ONLY +
  "PartitionName=debug PartitionName=p2 Nodes=ALL Default=YES\n", daemon=True)
C("node_partitionname_key", "a PartitionName= key on a NodeName line", NODES_ONLY +
  "NodeName=n4 CPUs=2 PartitionName=p2\nPartitionName=debug Nodes=ALL Default=YES\n")
C("node_space_before_equals_record", "'CPUs =4' on a NodeName line", NODES_ONLY +
  "NodeName=n4 CPUs =4\nPartitionName=debug Nodes=ALL Default=YES\n", daemon=True)
C("downnodes_no_state", "DownNodes=n1 without State or Reason", b("DownNodes=n1\n"), daemon=True)
C("kv_crlf_continuation", "CRLF after a continuation backslash", NODES_ONLY +
  "PartitionName=debug Default=YES Nodes=n1,\\\r\nn2\r\n", daemon=True)
C("kv_crlf_include", "CRLF after an Include path", NODES_ONLY + "Include {DIR}/extra.conf\r\n"
  "PartitionName=debug Nodes=ALL Default=YES\n", files=INC, daemon=True, timeout=90)
C("kv_utf8_bom", "UTF-8 byte-order mark at the start of the file", "\ufeff" + BASE)

C("kv_key_with_dash", "a key containing '-'", b("Max-JobCount=5\n"))
C("kv_key_with_underscore", "a key containing '_' (unknown, but tokenised as a key)", b("Max_JobCount=5\n"))
C("kv_key_leading_digit", "a key starting with a digit", b("9Max=5\n"))
C("kv_key_with_slash", "a key containing '/'", b("Max/Job=5\n"))
C("kv_key_with_space", "two words before '='", b("Max JobCount=5\n"))
C("cont_backslash_only_line_continues", "a line holding only '\\' keeps the continuation going",
  b("MaxJobCount=5\\\n\\\nMinJobAge=10\n"))
C("cont_error_line_number", "an error on the 3rd physical line of a continued record: which line is reported?",
  NODES_ONLY + "NodeName=n4 \\\nCPUs=2 \\\nFoo=1\n")
C("cont_error_line_number_after", "line numbers of lines after a continued line",
  NODES_ONLY + "NodeName=n4 \\\nCPUs=2\nMaxJobCount=5 BadRest\n")

# ---------------------------------------------------------------------------------------------------------
# Recording machinery
# ---------------------------------------------------------------------------------------------------------
def write_files(case, d, header=None):
    os.makedirs(os.path.join(d, "cwd"), exist_ok=True)
    for rel, text in case["files"].items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        t = text.replace("{DIR}", d)
        if header is not None and rel == case["main"]:
            t = t + "\n" + header.replace("{DIR}", d)
        with open(p, "wb") as f:
            f.write(t.encode("utf-8"))


def clean(text, d):
    return text.replace(d, "{DIR}")


def lines(text, d, limit=None):
    """split on '\n' only (a '\r' inside a message is kept); very long outputs keep head and tail."""
    out = [clean(l, d) for l in text.split("\n")]
    if out and out[-1] == "":
        out.pop()
    if limit and len(out) > limit:
        out = [*out[:limit // 2], f"<<< {len(out) - limit} lines omitted >>>", *out[-(limit // 2):]]
    return out


def run_scontrol(case):
    d = tempfile.mkdtemp(prefix="s.", dir=WORK)
    write_files(case, d)
    env = dict(os.environ, SLURM_CONF=os.path.join(d, case["main"]))
    t0 = time.time()
    p = subprocess.Popen(["scontrol", "show", "hostnames", "x"], cwd=os.path.join(d, "cwd"), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=case["timeout"])
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        code = "timeout"
    res = {"exit": code, "stdout": lines(out.decode("utf-8", "replace"), d),
           "stderr": lines(err.decode("utf-8", "replace"), d, limit=40),
           "stderr_line_count": err.decode("utf-8", "replace").count("\n"), "seconds": round(time.time() - t0, 1)}
    shutil.rmtree(d, ignore_errors=True)
    return res


def parse_oneline(text):
    """`scontrol -o show ...` rows -> list of {key: value}."""
    rows = []
    for line in text.splitlines():
        if not line.strip():
            continue
        pairs = re.findall(r"(\w+)=(.*?)(?=\s+\w+=|\s*$)", line)
        rows.append({k: v.strip() for k, v in pairs})
    return rows


def run_daemon(case, slot):
    d = tempfile.mkdtemp(prefix="d.", dir=WORK)
    port = PORT0 + 10 * slot
    header = DAEMON_HEADER.format(port=port, port1=port + 1, DIR="{DIR}")
    write_files(case, d, header)
    os.makedirs(os.path.join(d, "run", "state"), exist_ok=True)
    conf = os.path.join(d, case["main"])
    env = dict(os.environ, SLURM_CONF=conf)
    errpath = os.path.join(d, "run", "stderr")
    inner = f"mount --bind {WORK}/hosts /etc/hosts && exec slurmctld -D -c -i -f {conf}"
    with open(errpath, "wb") as ef:
        p = subprocess.Popen(["unshare", "-m", "--propagation", "private", "sh", "-c", inner],
                             cwd=os.path.join(d, "cwd"), env=env, stdout=ef, stderr=subprocess.STDOUT,
                             start_new_session=True)
    verdict, code = "timeout", None
    deadline = time.time() + max(15, case["timeout"])
    while time.time() < deadline:
        if p.poll() is not None:
            verdict, code = "exited", p.returncode
            break
        if "Running as primary controller" in open(errpath, errors="replace").read():
            verdict = "running"
            break
        time.sleep(0.1)
    effective = None
    if verdict == "running":
        time.sleep(0.3)
        def q(*args):
            inner_q = f"mount --bind {WORK}/hosts /etc/hosts && exec scontrol " + " ".join(args)
            try:
                r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", inner_q], env=env,
                                   capture_output=True, text=True, timeout=20)
            except subprocess.TimeoutExpired:
                return ""
            return r.stdout
        parts = parse_oneline(q("-o", "show", "partition"))
        nodes = parse_oneline(q("-o", "show", "node"))
        effective = {"partitions": {r.get("PartitionName"): {k: v for k, v in r.items() if k != "PartitionName"}
                                    for r in parts},
                     "nodes": {r.get("NodeName"): {k: re.sub(r" \[[^]@]*@[^]]*\]$", "", r[k])
                                                   for k in NODE_KEYS if k in r} for r in nodes}}
        if case["config"]:
            cfg = {}
            for line in q("show", "config").splitlines():
                m = re.match(r"^(\S+)\s+= (.*)$", line)
                if m:
                    cfg[m.group(1)] = m.group(2).strip()
            effective["config"] = {k: clean(cfg.get(k, "<absent>"), d) for k in case["config"]}
    log = open(errpath, errors="replace").read()
    if p.poll() is None:
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=8)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    keep = [l for l in lines(log, d, limit=60) if not any(re.search(n, l) for n in NOISE)]
    shutil.rmtree(d, ignore_errors=True)
    return {"verdict": verdict, "exit": code, "log": keep}, effective


def pretty(obj, ind=0):
    """JSON with one line per leaf dict (partition/node/config records) and per list item."""
    sp = " " * ind
    if isinstance(obj, dict):
        flat = all(not isinstance(v, (dict, list)) for v in obj.values())
        if flat and len(obj) and ind >= 4:
            return json.dumps(obj, ensure_ascii=False)
        if not obj:
            return "{}"
        items = [f'{sp} {json.dumps(k, ensure_ascii=False)}: {pretty(v, ind + 1)}' for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + sp + "}"
    if isinstance(obj, list):
        if not obj:
            return "[]"
        items = [f"{sp} {pretty(v, ind + 1)}" for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + sp + "]"
    return json.dumps(obj, ensure_ascii=False)


def main(argv):
    if argv[:1] == ["--list"]:
        print("\n".join(c["name"] for c in CASES))
        return
    os.makedirs(WORK, exist_ok=True)
    with open(f"{WORK}/hosts", "w") as f:
        f.write("127.0.0.1 localhost " + " ".join(HOSTNAMES) + "\n127.0.0.2 ctl2\n")
    selected = [c for c in CASES if not argv or c["name"] in argv]
    missing = set(argv) - {c["name"] for c in selected}
    if missing:
        sys.exit(f"unknown cases: {sorted(missing)}")
    with ThreadPoolExecutor(16) as ex:
        sc = list(ex.map(run_scontrol, selected))
    daemon_cases = [c for c in selected if c["daemon"]]
    nslots = 4
    results = {}

    def worker(slot):
        for i, c in enumerate(daemon_cases):
            if i % nslots == slot:
                results[c["name"]] = run_daemon(c, slot)

    with ThreadPoolExecutor(nslots) as ex:
        list(ex.map(worker, range(nslots)))
    out = []
    for c, s in zip(selected, sc, strict=False):
        ctld, eff = results.get(c["name"], (None, None))
        out.append({"name": c["name"], "description": c["description"], "files": c["files"], "main": c["main"],
                    "scontrol": s, "slurmctld": ctld, "effective": eff,
                    **({"daemon_header": DAEMON_HEADER.format(port="PORT", port1="PORT+1", DIR="{DIR}")}
                       if c["daemon"] else {})})
    if argv:
        print(pretty(out))
    else:
        with open(os.path.join(HERE, "cases.json"), "w") as f:
            f.write(pretty(out) + "\n")
        print(f"{len(out)} cases written to {os.path.join(HERE, 'cases.json')}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
