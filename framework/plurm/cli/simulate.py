"""``plurm simulate``: replay a command session, or a workload trace.

* ``plurm simulate --conf slurm.conf SESSION`` prints each command of SESSION with its output;
* ``plurm simulate --conf slurm.conf --trace T.swf[.gz] [--map M.toml] --out DIR`` replays the
  trace, prints the cleaning report and the summary, and writes ``DIR/jobs.csv``,
  ``DIR/summary.json`` and the HTML report ``DIR/report.html`` (not with ``--no-report``).
* ``--explain JOBID`` (either way, repeatable) prints ``scontrol explain JOBID`` at the end of
  the run (``--explain-json``: its JSON form).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import traceback
from pathlib import Path
from typing import Any, TextIO

import attrs
from tqdm import tqdm

from plurm import conf
from plurm.errors import NumberError, PlurmError, TraceError
from plurm.inputfile import MAX_SESSION_BYTES, check_output_dir, read_text
from plurm.numbers import INT32_MAX, parse_float, parse_int
from plurm.plugin_errors import PluginHookError, explain
from plurm.sim.gpus import cluster_gpus
from plurm.sim.metrics import summarize, write_jobs_csv
from plurm.sim.session import Simulation, parse_session
from plurm.sim.tomlfile import read_toml
from plurm.sim.trace import JobRecord, TraceMapping, Transition, replay
from plurm.workload import clean, read_swf, skipped_message
from plurm.workload.names import read_names


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "simulate",
        help="replay a session of Slurm commands, or a workload trace, on a simulated cluster",
        description="Replay SESSION (lines of '<seconds> <command>') against the cluster "
        "slurm.conf describes and print each command with its output; or replay a workload "
        "trace (--trace) and report waits, slowdowns, utilization and preemptions.",
    )
    parser.add_argument("--conf", required=True, metavar="SLURM_CONF", help="the slurm.conf")
    parser.add_argument("session", metavar="SESSION", nargs="?")
    parser.add_argument("--trace", metavar="TRACE", help="an SWF trace (.swf or .swf.gz)")
    parser.add_argument("--map", metavar="MAP_TOML", help="how trace jobs map to the cluster")
    mapping = parser.add_argument_group(
        "trace mapping options",
        "The mapping as options, on their own or over --map's file (an option replaces the "
        "file's value; --map-partition, --map-queue and --high-match add to its tables).",
    )
    mapping.add_argument("--processors-as", choices=("tasks", "nodes"))
    mapping.add_argument(
        "--map-partition",
        action="append",
        default=[],
        metavar="NUMBER=PARTITION",
        help="SWF partition number to Plurm partition (repeatable)",
    )
    mapping.add_argument(
        "--map-queue",
        action="append",
        default=[],
        metavar="NUMBER=QOS",
        help="SWF queue number to QOS (repeatable)",
    )
    mapping.add_argument("--high-fraction", type=_fraction, metavar="F")
    mapping.add_argument("--high-partition", metavar="PARTITION")
    mapping.add_argument("--high-qos", metavar="QOS")
    mapping.add_argument("--high-seed", type=_integer, metavar="N")
    mapping.add_argument(
        "--high-match",
        action="append",
        default=[],
        metavar="FIELD=VALUES",
        help="only jobs whose FIELD is one of VALUES (3,17) or in a range (64-, -3600, "
        "600-7200; a leading - is a range up to the number) are high priority (repeatable; "
        "see plurm.sim.rule for the fields)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="where to write jobs.csv, summary.json and report.html"
    )
    parser.add_argument("--jobs", type=_count, metavar="N", help="replay only the first N jobs")
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse a trace with any bad line (by default bad lines are reported and skipped)",
    )
    parser.add_argument(
        "--no-report", action="store_true", help="do not write DIR/report.html (nor its plots)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="print nothing: no cleaning report, no progress bar"
    )
    parser.add_argument(
        "--explain",
        type=_count,
        action="append",
        default=[],
        metavar="JOBID",
        help="at the end, print scontrol explain JOBID (repeatable; Plurm job ids, as jobs.csv)",
    )
    parser.add_argument(
        "--explain-json", action="store_true", help="print --explain's answers as JSON"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="when a plugin's hook fails, print its traceback too",
    )
    parser.set_defaults(run=run_simulate)


class UsageError(PlurmError):
    """The command line asks for something contradictory."""


def _fraction(text: str) -> float:
    """argparse type: a finite number (ASCII; not nan nor inf); the mapping checks its range."""
    try:
        return parse_float(text, what="fraction")
    except NumberError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _integer(text: str) -> int:
    """argparse type: a 32-bit signed integer of ASCII digits."""
    try:
        return parse_int(text, what="number")
    except NumberError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _count(text: str) -> int:
    """argparse type: a count from 0 to INT32_MAX, ASCII digits."""
    try:
        return parse_int(text, minimum=0, maximum=INT32_MAX, what="count")
    except NumberError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def run_simulate(args: argparse.Namespace, out: TextIO) -> int:
    """Run the session or the trace. A plugin hook that raises stops the run with one
    message (:class:`~plurm.plugin_errors.PluginHookError`, exit 1) after what was done is
    written: the transcript so far, and for a trace jobs.csv of the jobs so far."""
    try:
        return _simulate(args, out)
    except PluginHookError as error:
        out.flush()
        if args.debug:
            sys.stderr.write("".join(traceback.format_exception(error.error)))
        if error.records is not None and args.out:
            directory = Path(args.out)
            directory.mkdir(parents=True, exist_ok=True)
            with (directory / "jobs.csv").open("w") as stream:
                write_jobs_csv(error.records, stream)
            sys.stderr.write(
                f"plurm: {directory / 'jobs.csv'}: the jobs as far as the replay got\n"
            )
        raise


def _simulate(args: argparse.Namespace, out: TextIO) -> int:
    if (args.session is None) == (args.trace is None):
        raise UsageError("give either a SESSION file or --trace, not both or neither")
    if args.trace is not None and args.out:
        check_output_dir(args.out)  # before any work: a file in the way fails now
    config = conf.load(args.conf)
    if args.trace is not None:
        return _run_trace(args, config, out)
    path = Path(args.session)
    try:
        text = read_text(path, limit=MAX_SESSION_BYTES)
    except OSError as error:
        out.flush()
        raise conf.ConfIncludeError(
            f"cannot read {path}: {error.strerror or error}", None
        ) from None
    except ValueError as error:  # a NUL in the path
        raise conf.ConfIncludeError(f"cannot read {path}: {error}", None) from None
    lines = parse_session(str(path), text)
    simulation = Simulation(config)

    def write(chunk: str) -> None:
        out.write(chunk)
        out.flush()

    try:
        simulation.run_lines(lines, path.parent, write=write)
    except Exception as error:
        plugins = simulation.plugins
        explained = explain(error, plugins.manager, plugins.loaded, simulation.clock.now())
        if explained is None:
            raise
        raise explained from error
    jobs = simulation.controller.cluster.jobs
    facts = {j: simulation.controller.explain(j) if j in jobs else None for j in args.explain}
    return _write_explanations(args, facts, out)


def _write_explanations(
    args: argparse.Namespace, facts: dict[int, dict[str, Any] | None], out: TextIO
) -> int:
    """--explain's answers (scontrol explain's forms); 1 when a job id is unknown."""
    from plurm.commands.explain import explain_text

    status = 0
    for job_id, answer in facts.items():
        if answer is None:
            sys.stderr.write(f"slurm_load_jobs error: Invalid job id specified ({job_id})\n")
            status = 1
        elif args.explain_json:
            out.write(json.dumps(answer, sort_keys=True) + "\n")
        else:
            out.write(explain_text(answer))
    return status


def _run_trace(args: argparse.Namespace, config: conf.SlurmConfig, out: TextIO) -> int:
    mapping, mapping_name = _mapping(args)  # before the trace: a typo fails at once
    mapping.check(config, mapping_name or "the mapping")
    trace = read_swf(args.trace, strict=args.strict)
    skipped = len(trace.skipped)
    if skipped:
        print(skipped_message(trace.skipped), file=sys.stderr)
    names = read_names(trace.header)
    mapping, taken = mapping.with_names(names.partitions, names.queues, config)
    if taken:
        named = f"the trace header ({', '.join(taken)})"
        mapping_name = f"{mapping_name} and {named}" if mapping_name else named
    cleaned = clean(trace)
    del trace
    if args.jobs is not None:
        cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[: max(0, args.jobs)])
    bar: Any = None
    if not args.quiet:
        out.write(f"{cleaned.report}\n")
        if taken:
            out.write(f"mapped from the trace header: {', '.join(taken)}\n")
        out.flush()
        bar = tqdm(total=len(cleaned.jobs), unit="job", file=sys.stderr, leave=False)

    def progress(simulated: float, submitted: int, ended: int) -> None:
        bar.update(submitted - bar.n)
        bar.set_postfix_str(f"t={simulated / 86400:.1f} d, ended {ended}")

    reporting = bool(args.out) and not args.no_report
    transitions: list[Transition] | None = [] if reporting else None
    facts: dict[int, dict[str, Any] | None] = dict.fromkeys(args.explain)
    records = replay(
        cleaned,
        config,
        mapping,
        progress=progress if bar is not None else None,
        transitions=transitions,
        controller_start=names.controller_start,
        explanations=facts,
    )
    if bar is not None:
        bar.close()
    # The simulation is garbage now (the records stand alone), but its reference cycles
    # wait for a full collection, which may come only while the report builds its series
    # on top of it: free it first, with the trace, to keep the peak down.
    jobs = len(cleaned.jobs)
    del cleaned
    gc.collect()
    total_cpus = sum(node.cpus * len(node.names) for node in config.nodes)
    total_gpus = cluster_gpus(config)
    summary = summarize(records, total_cpus, total_gpus)
    summary["skipped_lines"] = skipped
    if args.out:
        directory = Path(args.out)
        directory.mkdir(parents=True, exist_ok=True)
        with (directory / "jobs.csv").open("w") as stream:
            write_jobs_csv(records, stream, gpus=total_gpus > 0)
        (directory / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    report = None
    if transitions is not None:
        report = _write_report(
            args, config, records, transitions, summary, total_cpus, jobs, mapping_name
        )
    if not args.quiet:
        shown = {k: v for k, v in summary.items() if not k.startswith("by_")}
        out.write(json.dumps(shown, indent=1) + "\n")
        if report is not None:
            out.write(f"report: {report.resolve()}\n")
    return _write_explanations(args, facts, out)


def _pairs(values: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for value in values:
        key, equals, rest = value.partition("=")
        if not equals or not key.strip() or not rest.strip():
            raise UsageError(f"{option} {value!r}: expected KEY=VALUE")
        pairs[key.strip()] = rest.strip()
    return pairs


def _match_value(field: str, text: str) -> Any:
    """``3,17`` is a list of numbers; ``64-``, ``-3600`` and ``600-7200`` are ranges."""
    try:
        low, dash, high = text.partition("-")
        if dash:
            bounds = {}
            if low:
                bounds["min"] = int(low)
            if high:
                bounds["max"] = int(high)
            return bounds
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise UsageError(
            f"--high-match {field}={text!r}: expected numbers (3,17) or a range (64-, -3600, "
            "600-7200)"
        ) from None


def _mapping_options(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The mapping the options give, as a mapping file's table, and the options as given."""
    data: dict[str, Any] = {}
    given: list[str] = []
    if args.processors_as is not None:
        data["processors_as"] = args.processors_as
        given.append(f"--processors-as {args.processors_as}")
    for option, key, values in (
        ("--map-partition", "partitions", args.map_partition),
        ("--map-queue", "queues", args.map_queue),
    ):
        if values:
            data[key] = _pairs(values, option)
            given += [f"{option} {value}" for value in values]
    high: dict[str, Any] = {}
    for option, key, value in (
        ("--high-fraction", "fraction", args.high_fraction),
        ("--high-partition", "partition", args.high_partition),
        ("--high-qos", "qos", args.high_qos),
        ("--high-seed", "seed", args.high_seed),
    ):
        if value is not None:
            high[key] = value
            given.append(f"{option} {value}")
    if args.high_match:
        match = _pairs(args.high_match, "--high-match")
        high["match"] = {field: _match_value(field, text) for field, text in match.items()}
        given += [f"--high-match {value}" for value in args.high_match]
    if high:
        data["high_priority"] = high
    return data, given


def _mapping(args: argparse.Namespace) -> tuple[TraceMapping, str]:
    """--map's file with the mapping options over it (or either alone), and how the report
    names it. The file and the options are each checked alone first, so that an error
    names where it is."""
    options, given = _mapping_options(args)
    from_options = TraceMapping.from_dict(options, "the command line")
    if not args.map:
        return from_options, " ".join(given)
    data = read_toml(args.map, "mapping", TraceError)
    from_file = TraceMapping.from_dict(data, str(args.map))
    if not options:
        return from_file, str(args.map)
    merged = dict(data, **{k: v for k, v in options.items() if k != "high_priority"})
    for key in ("partitions", "queues"):  # the options add to the file's tables
        if key in options:
            merged[key] = {**data.get(key, {}), **options[key]}
    if "high_priority" in options:
        high = {**data.get("high_priority", {}), **options["high_priority"]}
        if "match" in options["high_priority"]:
            high["match"] = {**data.get("high_priority", {}).get("match", {}), **high["match"]}
        merged["high_priority"] = high
    name = f"{args.map} with {' '.join(given)}"
    return TraceMapping.from_dict(merged, name), name


def _write_report(
    args: argparse.Namespace,
    config: conf.SlurmConfig,
    records: list[JobRecord],
    transitions: list[Transition],
    summary: dict[str, Any],
    total_cpus: int,
    jobs: int,
    mapping: str,
) -> Path:
    from plurm.sim.report import write_report  # matplotlib only when a report is asked for
    from plurm.sim.settings import partition_settings, plugin_settings

    details = [
        ("trace", Path(args.trace).name + (f" (first {jobs} cleaned jobs)" if args.jobs else "")),
        ("configuration", str(args.conf)),
        ("mapping", mapping or "none (defaults)"),
        ("CPUs", str(total_cpus)),
    ]
    return write_report(
        Path(args.out) / "report.html",
        records,
        transitions,
        summary,
        total_cpus,
        title=f"Plurm replay of {Path(args.trace).name}",
        details=details,
        settings=plugin_settings(config),
        partitions=partition_settings(config),
    )
