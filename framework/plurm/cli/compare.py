"""``plurm compare``: replay one trace under several configurations, side by side.

* ``plurm compare FILE.toml --out DIR`` runs the comparison file's runs (see
  :mod:`plurm.sim.compare` for its format);
* ``plurm compare --trace T --conf C [--map M] --run NAME[:Key=Value,...] ... --out DIR`` is
  the same without a file.

Unless ``--no-report``, the runs bring back their series and ``compare.html`` shows the
figures and the plots side by side.

Runs go to a local process pool (``--workers N``), or to Dask (``--executor dask``, on a local
cluster or the scheduler at ``--dask-scheduler ADDR``). The table goes to stdout and, with
``compare.csv``, ``compare.md``, ``compare.json`` and each run's ``jobs.csv`` and
``summary.json``, under DIR. A run that fails is reported with its reason, the others still
are, and the exit status is 1.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from plurm.cli.simulate import UsageError, _count
from plurm.inputfile import check_output_dir
from plurm.sim.compare import (
    Comparison,
    RunResult,
    dask_security,
    open_executor,
    render_table,
    run_runs,
    write_outputs,
)
from plurm.workload import skipped_message


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "compare",
        help="replay one workload trace under several configurations and compare the figures",
        description="Replay a trace under each run of a comparison file (or of --run options) "
        "in parallel, print the figures side by side and write compare.csv, compare.md, "
        "compare.json, the page compare.html and each run's jobs.csv and summary.json under "
        "--out.",
    )
    parser.add_argument("file", metavar="FILE.toml", nargs="?", help="a comparison file")
    parser.add_argument("--out", required=True, metavar="DIR", help="where to write the results")
    parser.add_argument("--trace", metavar="TRACE", help="an SWF trace (without FILE)")
    parser.add_argument("--conf", metavar="SLURM_CONF", help="the base slurm.conf (without FILE)")
    parser.add_argument("--map", metavar="MAP_TOML", help="how trace jobs map (without FILE)")
    parser.add_argument(
        "--run",
        dest="runs",
        action="append",
        default=[],
        metavar="NAME[:Key=Value,...]",
        help="a run: the base configuration with these keys set (without FILE; repeat it)",
    )
    parser.add_argument("--jobs", type=_count, metavar="N", help="replay only the first N jobs")
    parser.add_argument(
        "--workers", type=_count, metavar="N", help="parallel runs (default: one per CPU)"
    )
    parser.add_argument(
        "--executor",
        choices=("process", "dask"),
        default="process",
        help="a local process pool (the default) or Dask's distributed executor "
        "(needs plurm[dask])",
    )
    parser.add_argument(
        "--dask-scheduler",
        metavar="ADDR",
        help="the Dask scheduler to use (default: start a local cluster on 127.0.0.1)",
    )
    parser.add_argument(
        "--dask-tls-ca", metavar="FILE", help="TLS: the CA certificate of the Dask scheduler"
    )
    parser.add_argument(
        "--dask-tls-cert", metavar="FILE", help="TLS: this client's certificate (PEM)"
    )
    parser.add_argument(
        "--dask-tls-key",
        metavar="FILE",
        help="TLS: this client's private key (PEM; default: in the certificate file)",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse a trace with any bad line (by default bad lines are reported and skipped)",
    )
    parser.add_argument(
        "--no-report",
        action="store_true",
        help="do not write DIR/compare.html (nor collect the series its plots draw)",
    )
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")
    parser.set_defaults(run=run_compare)


def _comparison(args: argparse.Namespace) -> Comparison:
    inline = args.trace is not None or args.conf is not None or args.map is not None or args.runs
    if args.file is not None:
        if inline:
            raise UsageError("give either FILE.toml or --trace/--conf/--map/--run, not both")
        comparison = Comparison.load(args.file)
        if args.jobs is not None:
            comparison = comparison.with_jobs(args.jobs)
        return comparison
    if args.trace is None or args.conf is None or not args.runs:
        raise UsageError("give FILE.toml, or --trace, --conf and at least one --run")
    return Comparison.from_options(
        trace=args.trace, conf_path=args.conf, runs=args.runs, map_path=args.map, jobs=args.jobs
    )


def run_compare(args: argparse.Namespace, out: TextIO) -> int:
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.dask_scheduler is not None and args.executor != "dask":
        raise UsageError("--dask-scheduler needs --executor dask")
    if args.jobs is not None and args.jobs < 0:
        raise UsageError("--jobs must be at least 0")
    tls = (args.dask_tls_ca, args.dask_tls_cert)
    if any(tls) or args.dask_tls_key:
        if args.executor != "dask":
            raise UsageError("--dask-tls-* options need --executor dask")
        if not all(tls):
            raise UsageError("TLS for Dask needs both --dask-tls-ca and --dask-tls-cert")
    security = (
        dask_security(args.dask_tls_ca, args.dask_tls_cert, args.dask_tls_key) if all(tls) else None
    )
    if args.dask_scheduler is not None and security is None and not args.quiet:
        print(
            f"plurm: warning: the connection to {args.dask_scheduler} is not authenticated, and "
            "Dask runs any pickle it is sent; use --dask-tls-ca/--dask-tls-cert on a network "
            "you do not trust",
            file=sys.stderr,
        )
    check_output_dir(args.out)  # before any work: a file in the way fails now
    comparison = _comparison(args)
    comparison.check()
    trace = comparison.read_trace(strict=args.strict)
    if trace.skipped:
        print(skipped_message(trace.skipped), file=sys.stderr)
    if not args.quiet:
        out.write(f"{trace.report}\n")
        out.flush()
    workers = args.workers or min(len(comparison.runs), os.cpu_count() or 1)

    def done(result: RunResult) -> None:
        if args.quiet:
            return
        status = "done" if result.ok else "FAILED"
        print(f"run {result.name}: {status} in {result.seconds:.1f} s", file=sys.stderr)

    with open_executor(args.executor, workers, args.dask_scheduler, security) as executor:
        results = run_runs(comparison.runs, trace, executor, done=done, report=not args.no_report)
    write_outputs(Path(args.out), comparison, results, trace)
    if not args.quiet:
        out.write("\n" + render_table(results))
    failed = [result for result in results if not result.ok]
    for result in failed:
        print(f"plurm: error: run {result.name!r} failed:\n{result.error}", file=sys.stderr)
    return 1 if failed else 0
