#!/usr/bin/env python3
"""Record Slurm 22.05 hostlist expansion/compression behaviour as golden vectors.

Behaviour only: this script runs the real ``scontrol`` binary and stores what
it prints.  No Slurm source code is involved.

How to run (needs Slurm 22.05's ``scontrol`` on PATH; recorded with Debian
slurm-wlm 22.05.8; no daemons are needed):

    python3 tests/data/oracle/hostlist/record.py

It writes a throw-away slurm.conf into a temporary directory, points
SLURM_CONF at it, and for every input listed below runs

    scontrol show hostnames INPUT        -> expand.json
    scontrol show hostlist INPUT         -> compress.json
    scontrol show hostlistsorted INPUT   -> compress_sorted.json

with an argument list (no shell), recording stdout, stderr and the exit code
(negative = killed by that signal, e.g. -11 = SIGSEGV).  The JSON files sit
next to this script and are rewritten completely.  Options:

    --check   re-run and compare against the existing JSON files instead of
              rewriting them (exit status 1 on any difference).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

CONF = """ClusterName=test
SlurmctldHost=localhost
NodeName=n[1-3] CPUs=2
PartitionName=debug Nodes=ALL Default=YES
"""

D30_1 = "n" + "1" * 30
D30_0 = "n" + "0" * 30
LONG_PREFIX = "x" * 300

EXPAND_INPUTS = [
    # --- basics
    "n1", "n[1-3]", "n[1-3],m[1-2]", "n[0-3]", "n[5]", "n[1,3,5]",
    "n[1-3,7,9-10]", "n[0]", "n[00]", "n[000-001]", "n[10-12]",
    "[1-3]", "[1]", "[1-2][3-4]", "[1-2]a[1-2]", "n1[1-3]",
    # --- zero padding (width = characters of the low bound)
    "n[01-16]", "n[8-11]", "n[08-11]", "n[1-010]", "n[001-3]", "n[9-10]",
    "n[099-101]", "n[1-3,05-07,010]", "n[01-]", "n[5-]", "n[1-]",
    "n[ 1-3]", "n[\t1-3]", "n[ 5]", "n[1 - 3]", "n[1 -3]", "n[1- 3]",
    "n[1, 3]", "n[+1-3]", "n[1-+3]", "n[1y-3]", "n0007", "007",
    # --- top level separators
    "", " ", ",,,", "a b", "a\tb", "a\nb", "a  b", "a \t\n b", "a,,b",
    ",a,", " a ", "a, b", "a ,b", "n[1-2],,", "n[1-3],]", "a b,c\td\ne",
    # newline (and \r ; : |) are NOT separators: they stay inside host names
    "a \nb", "a\n", "\n\na", "a\n\tb", "a\t\nb", "a\rb", "a;b", "a:b",
    "a|b", "a\t\tb", "a \tb", "\ta", "n[1-2]\nn3", "n1\nn[1-2]",
    # --- order and duplicates
    "n3,n1,n2,n1", "n[1-3],n[2-4]", "n[3,1,2]", "n[1-2,1-2]", "a,a",
    "c,b,a", "n[5-7],n[1-3]",
    # --- names
    "a,b,c", "n1,n2,n10", "rack1node2", "rack1node[1-2]", "node.example.com",
    "n[1-2].ib", "a.b[1-2]", "n-1", "n_[1-2]", "my-node_[01-03]",
    "rack[1-2]-n[1-2]", "N1,n1", D30_1, D30_0, "n123456789012345678901234",
    "n18446744073709551616", "n99999999999999999999",
    LONG_PREFIX + "[1-2]",
    # --- multiple bracket groups (cartesian product order)
    "rack[1-2]n[1-4]", "x[1-3]y[1-2]", "a[1-2]b[1-3]", "a[1-3]b[1-2]",
    "a[1-2]b[1-2]c[1-2]", "a[1-2]b[1-3]c[1-4]", "a[1-4]b[1-3]c[1-2]",
    "a[1-3]b[1-2]c[1-2]", "a[3,1]b[2,1]c[2,1]",
    "a[1-2]b[1-2]c[1-2]d[1-2]", "a[1-2]b[1-3]c[1-2]d[1-3]",
    "n[1-2]x[1-2]y[1-2]z[1-2]", "a[1-2]b[1-2]c[1-2]d[1-2]e[1-2]",
    "a[1-2][1-2]", "a[1-2][3-4][5-6]", "a[1-2]0[1-2]",
    "a[01-02]b[1-2]c[001-002]", "a[1-2],b[1-2]c[1-2],d",
    "n[1-2]x[1-2],n1x1", "n[1]-[2]", "a]b[1-2]", "a]b[1-2]c[1-2]",
    "a[b[1-2]", "n[[1-3]", "a]b[c[1-2]", "a[1]b[c[1-2]", "a[1-2]b[c[1-2]",
    "a[[1-2]b[1-2]", "]a[1-2]", "a[1-2]b[[3-4]", "a[1-2]b[3-4,c",
    "x[1]y]z[1-2]", "a[1-2]b]c]d[1-2]", "a[1-2]b[1]]c[3]", "a[1-2]]]b[1-2]",
    "a[1-2][3]]c[4]", "[1-2]]", "a[x]b[y]c[1]", "a[x]b[1]c[y]",
    "a[1]b[x]c[y]d[1]",
    # --- tokenizer: separators inside an open bracket do not split
    "a[1-3 b,c]", "a[1 b]c d", "a[1,2]b[3,4] z", "a[1,2 ]]", "x a[1,2",
    "a[1,2],b[3 c],d", "a[1 [2,3]", "a[1,[2,3]", "a[1,2]b[3,4 c]",
    "a b[1,2] c", "a[1-2],b[ 3]", "a[[1,2]", "a[[1,2]]", "a[1,2]]", "a]1,2]",
    "a[1 ,2]x,y]", "p[1,2 q[3,4]", "a[1]b[2 3]", "a[1 2]b[3 4]", "a]b[1 2]",
    "a[1]b[2 3]c", "a[1 ,2]b[3 ,4]", "a[1 2]b[3 4],z", "a]b[1 ,2]",
    "a[1]b[2", "a[1]b[2 c", "a[1],b[2 3]", "]x[1 2]", "a[[1 2] 3] x",
    "a]b[c[1 2]", "a[1]]b[2 3]", "a[1]b]c[2 3]", "a[b]c]d[1 2]",
    # --- unclosed '[' (no ']' after the last '[')
    "n[1-3", "n[12", "n[", "[", "[x", "[5", "[ab", "[1-3", "x[y", "5[",
    "n5[", "ab[cd", "][", "[[", "[ab[", "[a[b", "a[b[c", "a]b[c",
    "a[1-3]b[", "n[1-2]x[1", "a[1-2]b[1-2", "n[1-3,a", "a,n[1-3",
    "n[1-3,m5", "a[1-3 b", "a[1-3\tb",
    # --- stray ']' without '['
    "]", "n]", "n]1", "n1-3]",
    # --- range errors
    "n[3-1]", "n[1-0]", "n[-1-3]", "n[-3]", "n[-]", "n[1--3]", "n[1-2-3]",
    "n[1-3-]", "n[a-c]", "n[a,b]", "n[x1-3]", "n[1x-3]", "n[1 x-3]",
    "n[1-3x]", "n[1-x]", "n[0x1-3]", "n[1-0x3]", "n[000x011]", "n[1x3]",
    "n[]", "[]", "n[1-3,]", "n[,1]", "n[1,,3]", "n[1-3 ]", "n[5 ]",
    "n[1-3\t]", "n[1- -3]", "n[5y]", "n[+5]", "n[ +5]", "n[1y-]", "n[1 -]",
    "n[1-3,5y-6]", "n[ 1]x[ 2]", "n[1-2 3]", "n[00-00]", "n[007-7]",
    "n[1- 18446744073709551616]", "a[1 2]", "a[1,2 b]", "a[1-2 ,3]", "a[b]", "n[1-3,05-x]",
    "a[1-2]b[]", "a[1-2]b[c]", "a[1-2][b]", "a[x]b[y]", "a[x]b[1]",
    "a[1-2]b[1-2]c[3-1]", "n[1-3]x[5-1]", "a[1-2]]b[1-2]", "a[1-2]b]c[1-2]",
    "n[3-1],m[a]", "ok1,n[3-1]",
    # --- text after ']' (suffix) errors
    "n[1-3].ib", "n[1-3]x", "n[1-3]-ib", "n[1-3]ib", "[1-2]x",
    "a[1-2]b", "a[1-2]b[1-2]c", "a[1-2]b[1-2]c[1-2]d", "n[1-3]]",
    "n[1]]", "n[1-3]]x", "a[1-2]b]", "n[[1-2]]", "n[1-3]a,n[4-5]",
    "n[1-2]x,m[a]", "m[a],n[1-2]x",
    # --- size cap (per bracket element: hi-lo+1 <= 65536)
    "n[0-65535]", "n[0-65536]", "n[1-65537]", "n[1-70000]",
    "n[1-99999999999]", "n[1-65536,1-65537]",
    "n[99999999999]", "n[99999999999999999999]", "n[18446744073709551615]",
    "n[18446744073709551613-18446744073709551614]",
    "n[18446744073709551615-18446744073709551615]",
    "n[18446744073709551614-18446744073709551615]",
    # --- file-path looking arguments are NOT read by 'show hostnames'
    "/nonexistent/plurm-hostlist",
]

COMPRESS_INPUTS = [
    # --- runs, gaps
    "n1", "n1,n2,n3", "n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12", "n1,n3,n5",
    "n1,n2,n4,n5", "n0,n1", "n[5]", "n[1-3]", "1,2,3", "0,1,2", "01,02",
    "", " ", ",,,", ",n1,", "n1,n2,,n3", "n1 n2\tn3", "n1\nn2", "n1\nn3",
    "n1\nn2,n3", "n1\n", "a\tb", "n1\t\tn2", "n1 \tn2", "n1;n2", "n1\rn2",
    "n[1-2]\nn3",
    # --- order / duplicates (no sorting, no dedup)
    "n3,n1,n2", "n1,n3,n2,n4", "n5,n4,n3", "n10,n9,n8", "n1,n1", "n1,n1,n2",
    "n1,n2,n3,n1,n2", "n5,n6,n1,n2,n7", "a,a", "b,a,b", "c,b,a",
    # --- multiple prefixes; only adjacent same-prefix ranges share brackets
    "a1,b1,a2,b2", "a1,a2,b1,b2,a3", "n1,n2,m1,n3", "a,b,c", "n,n1,n2",
    "n1,n,n2", "n1,N2", "x",
    # --- numbers in the middle, odd characters
    "rack1n1,rack1n2,rack2n1,rack2n2", "n1a,n2a", "n1.ib,n2.ib",
    "a.b1,a.b2", "n_1,n_2", "a-1,a-2,a-3", "n-1,n-2,n-3",
    "n1x1,n1x2,n2x1", "n2x1,n1x1",
    # --- padding / width
    "n01,n02,n3,n4", "n0,n00,n000", "n0,n01", "n00,n01", "n1,n01",
    "n09,n10", "n9,n10", "n9,n10,n11", "n08,n09,n10,n11", "n98,n99,n100",
    "n098,n099,n100", "n099,n100", "n1,n2,n010", "n8,n9,n010", "n08,n9,n10",
    "n9,n010", "n09,n010", "n99,n0100", "n8,n09", "n008,n09", "n0099,n100",
    "n9,n10,n011", "n08,n09,n010",
    # --- bracket input is expanded first, then recompressed
    "n[1-3],n4", "n4,n[5-6]", "n[1-3],n[4-6]", "n[1-3],n[3-6]",
    "n[1-3],n[2-5]", "n[4-6],n[1-3]", "n[5-7],n[1-3],n4",
    "n[1-3],n[5-6],n4", "n[1-3],n[04-06]", "n[08-09],n10",
    "n[08-09],n[10-12]", "n[8-9],n10,n11", "n[8-9],n[010-012]",
    "n[98-99],n[100-101]", "n[1-9],n[10-12]", "n[08-99],n100",
    "n[008-099],n100", "n[0008-0099],n100", "n[098-999],n1000",
    "n[08-99],n[100-101]", "n[0008-0099],n[100-101]", "n[ 8-9],n10",
    "n[ 8-99],n100", "n[ 9],n10", "n[08-9],n[10-11],n012", "n[ 1-3]",
    "n[1-010]", "a[1-2]b[1-2]", "n[1-2]x[1-2],n[3-4]x[1-2]",
    "rack[1-2]n[1-4]", "n[1-3,1-3]", "n[3,2,1]", "a[1-2]b[1-2]c[1-2]",
    "n[[1-3]", "n[1-300]x[1-300]", "a[1-2]0[1-2]", "[1-2][3-4]", "n1[1-3]",
    "n1[1-3],n14", "n11,n1[2-3]", "n[1]-[2],n1-3", "n1[0-1],n12",
    "n[08-09]1", "n[1-2],n[1-2]", "x[1-3]y", "n[1-3] n4\tn5",
    # --- large numbers, big ranges
    "n99999999999,n100000000000",
    "n18446744073709551614,n18446744073709551615",
    "n18446744073709551615,n18446744073709551616",
    "n123456789012345678901234,n123456789012345678901235",
    "n123456789012345678901234", "n[1-65536]", "n[5-65540]", "n[5-65541]",
    "n[0-65535],m[0-65535]",
    "n[18446744073709551614-18446744073709551615]",
    ",".join("n%d" % i for i in range(1, 200, 2)),
    # --- unclosed / stray brackets
    "n[1-3", "n1-3]", "[", "]",
    # --- errors (exit status 1 here, unlike 'show hostnames')
    "n[3-1]", "n[1-3]x", "a[1-2]b", "n[0-65536]", "n[1-99999999999]",
    "n[]", "n[a-c]", "n1,n[3-1]", "n[3-1],m[a]",
    # --- a leading '/' makes 'show hostlist' read a file
    "/nonexistent/plurm-hostlist",
]

SORTED_INPUTS = [
    "n3,n1,n2", "n1,n1,n2", "n2,n1,n2,n1", "b1,a2,a1", "a,c,b",
    "n10,n9,n09", "n10,n9,n8", "n1,n01,n001", "n[5-7],n[1-3],n4",
    "b[1-2],a[1-2],b3", "rack2n1,rack1n2,rack1n1", "n10,n2,n1",
    "n2a,n1a", "x,n1,a", "", "n[3-1]", "N1,n2,n1", "n1,n,n2",
    "10,9,1", "n-2,n_1,n.1,n1", "n01,n2", "n2,n01", "n10,n09,n9,n010",
    "n3,n03,n003,n1", "b,a1,a", "n1,m", "n[5-7],n[1-3],n[2-4]",
    "n1,n1x1,n1x2,n2", "n10,n01", "a1,a,a0",
    "n100,n0099", "n1000,n099", "n1[1-2],n[11-12]", "n1\n,n1",
]


def run_all(kind, inputs, env, cwd):
    out = []
    for s in inputs:
        r = subprocess.run(
            ["scontrol", "show", kind, s],
            capture_output=True, env=env, cwd=cwd,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)),
        )
        out.append({
            "input": s,
            "stdout": r.stdout.decode("utf-8", "surrogateescape"),
            "stderr": r.stderr.decode("utf-8", "surrogateescape"),
            "exit": r.returncode,
        })
    return out


def main():
    check = "--check" in sys.argv[1:]
    for name, lst in (("expand", EXPAND_INPUTS), ("compress", COMPRESS_INPUTS),
                      ("sorted", SORTED_INPUTS)):
        if len(set(lst)) != len(lst):
            dups = sorted({x for x in lst if lst.count(x) > 1})
            sys.exit("duplicate %s inputs: %r" % (name, dups))
    with tempfile.TemporaryDirectory(prefix="hlprobe-") as tmp:
        conf = os.path.join(tmp, "slurm.conf")
        with open(conf, "w") as f:
            f.write(CONF)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        env["SLURM_CONF"] = conf
        env["LC_ALL"] = "C"
        ver = subprocess.run(["scontrol", "--version"], capture_output=True,
                             text=True, env=env).stdout.strip()
        if ver != "slurm-wlm 22.05.8":
            print("warning: recorded with slurm-wlm 22.05.8, found %r" % ver,
                  file=sys.stderr)
        results = {
            "expand.json": run_all("hostnames", EXPAND_INPUTS, env, tmp),
            "compress.json": run_all("hostlist", COMPRESS_INPUTS, env, tmp),
            "compress_sorted.json": run_all("hostlistsorted", SORTED_INPUTS,
                                            env, tmp),
        }
    bad = 0
    for fname, data in results.items():
        path = os.path.join(HERE, fname)
        if check:
            with open(path) as f:
                old = json.load(f)
            if old != data:
                bad += 1
                print("MISMATCH in %s" % fname)
                olds = {d["input"]: d for d in old}
                for d in data:
                    if olds.get(d["input"]) != d:
                        print("  input %r" % d["input"][:80])
            else:
                print("ok %s (%d vectors)" % (fname, len(data)))
        else:
            with open(path, "w") as f:
                json.dump(data, f, indent=1, ensure_ascii=True)
                f.write("\n")
            print("wrote %s (%d vectors)" % (path, len(data)))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
