"""Replay one trace under several configurations and set their figures side by side.

A :class:`Comparison` is a trace, a base slurm.conf, an optional :class:`TraceMapping` and a
list of :class:`Run`\\ s. A run is the base configuration with some keys set (each ``Key=Value``
is appended to the base text and read by Plurm's own parser, so a later value wins as it does
in Slurm, and a bad key or value is refused as ``plurm conf check`` refuses it), or another
slurm.conf altogether. :meth:`Comparison.load` reads a comparison file::

    trace = "../../../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz"  # relative to this file
    conf = "slurm.conf"                # the base configuration
    map = "map.toml"                   # optional: a TraceMapping file
    jobs = 2000                        # optional: the first N cleaned jobs only

    [[run]]
    name = "builtin"
    set = { SchedulerType = "sched/builtin" }

    [[run]]
    name = "other"
    conf = "other/slurm.conf"          # optional: instead of the base (set applies to it)
    map = "other-map.toml"             # optional: instead of the base mapping

:func:`run_runs` hands each run to a ``concurrent.futures.Executor`` (:func:`open_executor`:
a local process pool, or Dask's distributed executor behind the same interface) as plain,
picklable data: the configuration's text, the mapping and the cleaned trace. :func:`run_one`
replays it where it lands and sends back the summary and the jobs CSV, so every file is written
by the caller and the results do not depend on the executor or the worker count. A run that
fails comes back as a :class:`RunResult` with its error; the others are still reported.

:func:`write_outputs` writes ``compare.csv`` (one row per figure, one column per run, full
precision), ``compare.md`` (the same, rounded, with what each run changed), ``compare.json``,
``compare.html`` (the page: the figures and the plots side by side, see
:mod:`plurm.sim.compare_report`; when the runs brought back their series, as they do unless
``report=False``) and, per run, ``<name>/jobs.csv`` and ``<name>/summary.json``.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import attrs

from plurm import conf
from plurm.conf.model import SlurmConfig
from plurm.errors import CompareError, PlurmError
from plurm.inputfile import MAX_CONF_BYTES, read_text
from plurm.manager import Plugins
from plurm.sim.gpus import cluster_gpus
from plurm.sim.metrics import summarize, write_jobs_csv
from plurm.sim.runseries import RunSeries
from plurm.sim.tomlfile import read_toml
from plurm.sim.trace import TraceMapping, Transition, replay
from plurm.workload import CleanedTrace, clean, read_swf

__all__ = [
    "GPU_ROWS",
    "ROWS",
    "Comparison",
    "Run",
    "RunResult",
    "open_executor",
    "parse_run_option",
    "render_csv",
    "render_markdown",
    "render_table",
    "rows_for",
    "run_one",
    "run_runs",
    "write_outputs",
]

#: A run's name is also the name of its output directory.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")
#: Files of the comparison's own; no run may take their name.
_OUTPUTS = ("compare.csv", "compare.md", "compare.json", "compare.html")
_TOP_KEYS = {"title", "trace", "conf", "map", "jobs", "run"}
_RUN_KEYS = {"name", "conf", "set", "map"}


@attrs.frozen
class Run:
    """One configuration to replay: plain data, so that it pickles to any worker.

    ``conf_path`` is the slurm.conf ``conf_text`` stands for (Includes resolve beside it, on the
    worker's disk); ``qos_text`` is the qos.conf beside it ("" for none); ``overrides`` are
    the ``Key=Value`` lines appended to the text, in order.
    """

    name: str
    conf_path: str
    conf_text: str
    qos_text: str = ""
    overrides: tuple[tuple[str, str], ...] = ()
    mapping: TraceMapping = TraceMapping()

    def text(self) -> str:
        """The slurm.conf text with the overrides appended."""
        if not self.overrides:
            return self.conf_text
        # The blank line ends a continuation the text might leave open.
        lines = [self.conf_text.rstrip("\n"), "", "# plurm compare: this run's settings"]
        lines += [f"{key}={_quoted(value)}" for key, value in self.overrides]
        return "\n".join(lines) + "\n"

    def config(self) -> SlurmConfig:
        return conf.parse_text(self.text(), path=self.conf_path, qos_text=self.qos_text)

    def describe(self) -> str:
        """The keys the run sets, for the report."""
        parts = [f"{key}={value}" for key, value in self.overrides]
        return ", ".join(parts) if parts else "(the base configuration)"


def _quoted(value: str) -> str:
    if value == "" or any(c.isspace() or c == "#" for c in value):
        return '"' + value + '"'
    return value


@attrs.frozen
class RunResult:
    """What came back from one run: its summary and jobs CSV, or why it failed.

    ``seconds`` is the wall time the replay took (for progress messages only; it is kept out of
    every output file, which depend on the configuration and the trace alone). ``series``
    is what the page draws (None when the run was asked for no report, or failed).
    """

    name: str
    summary: dict[str, Any] | None = None
    jobs_csv: str = ""
    error: str | None = None
    seconds: float = 0.0
    series: RunSeries | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def total_cpus(config: SlurmConfig) -> int:
    return sum(node.cpus * len(node.names) for node in config.nodes)


def run_one(run: Run, trace: CleanedTrace, report: bool = True) -> RunResult:
    """Replay ``trace`` under ``run``; never raises (a failure is the result's ``error``).
    With ``report``, the result brings back the series the comparison page draws.

    A top-level function of picklable arguments, so that any executor can ship it.
    """
    started = time.perf_counter()
    drawn: RunSeries | None = None
    try:
        config = run.config()
        transitions: list[Transition] | None = [] if report else None
        records = replay(trace, config, run.mapping, transitions=transitions)
        cpus = total_cpus(config)
        gpus = cluster_gpus(config)
        summary = summarize(records, cpus, gpus)
        if transitions is not None:
            drawn = RunSeries.build(records, transitions, summary, config, cpus)
        stream = io.StringIO()
        write_jobs_csv(records, stream, gpus=gpus > 0)
    except PlurmError as error:
        message = str(error)
    except Exception:
        # Exceptions need not pickle back from a worker; their text always does.
        message = traceback.format_exc().rstrip()
    else:
        seconds = time.perf_counter() - started
        return RunResult(run.name, summary, stream.getvalue(), None, seconds, drawn)
    return RunResult(run.name, error=message, seconds=time.perf_counter() - started)


@attrs.frozen
class Comparison:
    """A trace, the runs to replay it under, and how many of its jobs to replay."""

    source: str
    trace: str
    runs: tuple[Run, ...]
    jobs: int | None = None
    title: str = ""
    base_conf: str = ""

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Comparison:
        """Read a comparison file (see the module's doc); paths in it are relative to it."""
        data = read_toml(path, "comparison", CompareError)
        return cls.from_dict(data, source=str(path), base_dir=Path(path).parent)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, source: str = "<comparison>", base_dir: Path = Path(".")
    ) -> Comparison:
        unknown = sorted(set(data) - _TOP_KEYS)
        if unknown:
            raise CompareError(f"{source}: unknown key {unknown[0]!r} (known: {_known(_TOP_KEYS)})")
        trace = _string(data, "trace", source, required=True)
        base = _string(data, "conf", source)
        mapping_path = _string(data, "map", source)
        title = _string(data, "title", source) or ""
        jobs = data.get("jobs")
        if jobs is not None and (type(jobs) is not int or jobs < 0):
            raise CompareError(f"{source}: jobs must be a whole number >= 0, not {jobs!r}")
        entries = data.get("run")
        if not isinstance(entries, list) or not entries:
            raise CompareError(f"{source}: no runs: add at least one [[run]] table")
        mapping = _mapping(base_dir, mapping_path, source) if mapping_path else TraceMapping()
        texts: dict[Path, tuple[str, str]] = {}
        runs: list[Run] = []
        for number, entry in enumerate(entries, start=1):
            runs.append(_run(entry, number, source, base_dir, base, mapping, texts))
        _check_names([run.name for run in runs], source)
        return cls(
            source=source,
            trace=str(base_dir / trace) if trace else "",
            runs=tuple(runs),
            jobs=jobs,
            title=title,
            base_conf=str(base_dir / base) if base else "",
        )

    @classmethod
    def from_options(
        cls,
        *,
        trace: str,
        conf_path: str,
        runs: Sequence[str],
        map_path: str | None = None,
        jobs: int | None = None,
    ) -> Comparison:
        """The command-line form: ``--run NAME[:Key=Value,Key=Value...]`` per run."""
        source = "the command line"
        mapping = _mapping(Path("."), map_path, source) if map_path else TraceMapping()
        path, text, qos = _read_conf(Path(conf_path), source)
        built = []
        for option in runs:
            name, overrides = parse_run_option(option)
            if not _NAME.match(name):
                raise CompareError(f"--run {option!r}: {_bad_name(name)}")
            built.append(Run(name, path, text, qos, overrides, mapping))
        if not built:
            raise CompareError("no runs: give at least one --run NAME[:Key=Value,...]")
        _check_names([run.name for run in built], source)
        return cls(source, trace, tuple(built), jobs, base_conf=conf_path)

    def with_jobs(self, jobs: int | None) -> Comparison:
        """The same comparison on the first ``jobs`` jobs (None: all of them)."""
        return attrs.evolve(self, jobs=jobs)

    def read_trace(self, *, strict: bool = False) -> CleanedTrace:
        """The trace, read and cleaned, cut to its first ``jobs`` jobs.

        As ``plurm simulate`` reads a trace: by default each bad line is skipped and listed on
        the result's ``skipped`` (the valid jobs are replayed); with ``strict`` the first bad
        lines refuse the trace.
        """
        cleaned = clean(read_swf(self.trace, strict=strict))
        if self.jobs is not None:
            cleaned = attrs.evolve(cleaned, jobs=cleaned.jobs[: self.jobs])
        return cleaned

    def check(self) -> None:
        """Read every run's configuration and load its plugins here, before any replay, so
        that a typo fails at once and names its run."""
        for run in self.runs:
            try:
                Plugins.load(run.config())
            except PlurmError as error:
                raise CompareError(
                    f"{self.source}: run {run.name!r}: its configuration is refused:\n{error}"
                ) from None


def _known(keys: set[str]) -> str:
    return ", ".join(sorted(keys))


def _string(data: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            raise CompareError(f"{where}: missing key {key!r}")
        return None
    if not isinstance(value, str) or not value:
        raise CompareError(f"{where}: {key} must be a non-empty string, not {value!r}")
    return value


def _mapping(base_dir: Path, path: str, where: str) -> TraceMapping:
    try:
        return TraceMapping.load(base_dir / path)
    except PlurmError as error:
        raise CompareError(f"{where}: {error}") from None


def _read_conf(path: Path, where: str) -> tuple[str, str, str]:
    """(path, text, qos.conf text or "") of a slurm.conf, read once by the caller."""
    try:
        text = read_text(path, limit=MAX_CONF_BYTES)
        qos_path = path.parent / "qos.conf"
        qos = read_text(qos_path, limit=MAX_CONF_BYTES) if qos_path.exists() else ""
    except OSError as error:
        raise CompareError(f"{where}: cannot read {path}: {error.strerror}") from None
    return str(path), text, qos


def _bad_name(name: str) -> str:
    return (
        f"run name {name!r} must start with a letter or digit and hold only letters, "
        "digits, '.', '_' and '-' (it names the run's output directory)"
    )


def _run(
    entry: object,
    number: int,
    source: str,
    base_dir: Path,
    base: str | None,
    mapping: TraceMapping,
    texts: dict[Path, tuple[str, str]],
) -> Run:
    if not isinstance(entry, dict):
        raise CompareError(f"{source}: run {number} must be a table ([[run]])")
    name = entry.get("name")
    label = f"run {name!r}" if isinstance(name, str) and name else f"run {number}"
    where = f"{source}: {label}"
    unknown = sorted(set(entry) - _RUN_KEYS)
    if unknown:
        raise CompareError(f"{where}: unknown key {unknown[0]!r} (known: {_known(_RUN_KEYS)})")
    if not isinstance(name, str) or not name:
        raise CompareError(f"{where}: missing key 'name'")
    if not _NAME.match(name) or name in _OUTPUTS:
        raise CompareError(f"{where}: {_bad_name(name)}")
    conf_name = _string(entry, "conf", where) or base
    if conf_name is None:
        raise CompareError(f"{where}: no configuration: set conf at the top or in the run")
    settings = entry.get("set", {})
    if not isinstance(settings, dict):
        raise CompareError(f"{where}: set must be a table of slurm.conf keys")
    overrides = []
    for key, value in settings.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise CompareError(
                f"{where}: set.{key} = {value!r}: give the value as slurm.conf writes it, "
                'as a string (for example "YES") or a number'
            )
        overrides.append(_setting(key, str(value), f"{where}: set.{key}"))
    run_map = _string(entry, "map", where)
    path = base_dir / conf_name
    if path not in texts:
        _, text, qos = _read_conf(path, where)
        texts[path] = (text, qos)
    text, qos = texts[path]
    return Run(
        name=name,
        conf_path=str(path),
        conf_text=text,
        qos_text=qos,
        overrides=tuple(overrides),
        mapping=_mapping(base_dir, run_map, where) if run_map else mapping,
    )


def _check_names(names: Sequence[str], source: str) -> None:
    seen: dict[str, str] = {}
    for name in names:
        # Output directories: two names that differ only in case collide on some disks.
        other = seen.get(name.lower())
        if other is not None:
            same = "twice" if other == name else f"twice (as {other!r} and {name!r})"
            raise CompareError(f"{source}: run name {name!r} is used {same}")
        seen[name.lower()] = name


_CONF_KEY = re.compile(r"[A-Z][A-Za-z0-9]*=")


def parse_run_option(option: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``NAME[:Key=Value,Key=Value...]`` -> (name, overrides).

    A comma starts a new setting only when what follows is ``Key=`` with Key capitalised, as
    slurm.conf keys are; otherwise it belongs to the value, so that
    ``SchedulerParameters=bf_window=1440,bf_continue`` and ``PreemptMode=SUSPEND,GANG`` read
    as one setting each.
    """
    name, _, rest = option.partition(":")
    overrides: list[tuple[str, str]] = []
    if rest:
        pieces: list[str] = []
        for piece in rest.split(","):
            if pieces and not _CONF_KEY.match(piece):
                pieces[-1] += "," + piece
            else:
                pieces.append(piece)
        for piece in pieces:
            key, equals, value = piece.partition("=")
            if not equals or not key:
                raise CompareError(f"--run {option!r}: {piece!r} is not Key=Value")
            overrides.append(_setting(key, value, f"--run {option!r}"))
    return name, tuple(overrides)


_KEY = re.compile(r"[A-Za-z][A-Za-z0-9]*", re.ASCII)


def _setting(key: str, value: str, where: str) -> tuple[str, str]:
    """A setting appended to slurm.conf as one line: the key a plain word, and the value
    without line breaks, NULs, backslashes or double quotes, any of which would end the
    line early or let the value write lines of its own."""
    if not _KEY.fullmatch(key):
        raise CompareError(f"{where}: {key!r} is not a slurm.conf key")
    bad = next((char for char in value if char in '\n\r\0\\"' or char in "\v\f"), None)
    if bad is not None:
        raise CompareError(
            f"{where}: the value {value!r} holds {bad!r}; a setting is one line of slurm.conf"
        )
    return key, value


# ----------------------------------------------------------------------------- running


@contextlib.contextmanager
def open_executor(
    kind: str = "process",
    workers: int | None = None,
    address: str | None = None,
    security: Any = None,
) -> Iterator[Executor]:
    """A ``concurrent.futures.Executor`` to run on.

    ``process``: a local process pool of ``workers`` processes (started the platform's way; as
    with any process pool, a script that uses one guards its entry point with
    ``if __name__ == "__main__":``). ``dask``: Dask's distributed executor (``Client.get_executor``)
    on the scheduler at ``address``, or on a local cluster of ``workers`` single-threaded
    processes; it needs the optional extra ``plurm[dask]``.

    Dask moves pickles, and whoever can reach its scheduler or workers can run code there.
    The local cluster therefore listens on the loopback interface only (127.0.0.1). For a
    remote scheduler, ``security`` is Dask's ``distributed.security.Security`` (TLS with
    certificates: see :func:`dask_security`); without it the connection is unauthenticated.
    """
    if kind == "process":
        with ProcessPoolExecutor(max_workers=workers) as pool:
            yield pool
        return
    if kind != "dask":
        raise CompareError(f"unknown executor {kind!r} (expected 'process' or 'dask')")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise CompareError(
            "the dask executor needs Dask's distributed package: pip install 'plurm[dask]'"
        ) from None
    with contextlib.ExitStack() as stack:
        if address:
            try:
                client = stack.enter_context(Client(address, timeout=30, security=security))
            except (OSError, TimeoutError, ValueError) as error:
                raise CompareError(f"cannot reach the Dask scheduler {address}: {error}") from None
        else:
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    host="127.0.0.1",  # loopback only: Dask runs whatever pickle it is sent
                    security=security,
                )
            )
            client = stack.enter_context(Client(cluster))
        yield client.get_executor()


def dask_security(ca_file: str, cert_file: str, key_file: str | None = None) -> Any:
    """Dask's TLS ``Security`` object: the CA that signed the scheduler's certificate, and
    this client's certificate and key (``key_file`` None when the certificate file holds
    the key too). Encryption is required: a plain ``tcp://`` address is then refused."""
    try:
        from distributed.security import Security
    except ImportError:
        raise CompareError(
            "the dask executor needs Dask's distributed package: pip install 'plurm[dask]'"
        ) from None
    for path in (ca_file, cert_file, key_file):
        if path is not None and not Path(path).is_file():
            raise CompareError(f"{path}: no such certificate or key file")
    return Security(
        tls_ca_file=ca_file,
        tls_client_cert=cert_file,
        tls_client_key=key_file,
        require_encryption=True,
    )


def run_runs(
    runs: Sequence[Run],
    trace: CleanedTrace,
    executor: Executor,
    *,
    done: Callable[[RunResult], None] | None = None,
    report: bool = True,
) -> list[RunResult]:
    """Run every run on ``executor``; the results in the runs' order, whatever order they end
    in. ``done(result)`` is called as each one ends. A worker that dies makes its run's result
    an error; it never stops the others from being collected. ``report``: bring back each
    run's series for the page (see :func:`run_one`)."""
    futures: dict[Future[RunResult], int] = {
        executor.submit(run_one, run, trace, report): index for index, run in enumerate(runs)
    }
    results: list[RunResult | None] = [None] * len(runs)
    for future in as_completed(futures):
        index = futures[future]
        try:
            result = future.result()
        except Exception as error:
            reason = str(error) or type(error).__name__
            result = RunResult(runs[index].name, error=f"the worker failed: {reason}")
        results[index] = result
        if done is not None:
            done(result)
    return [result for result in results if result is not None]


# ----------------------------------------------------------------------------- the table


@attrs.frozen
class Row:
    """One figure of the table: its label, where it is in a summary, and how to show it."""

    key: str
    label: str
    format: str

    def value(self, summary: Mapping[str, Any]) -> Any:
        """The figure (None where it does not apply, as a user class without jobs)."""
        value: Any = summary
        for part in self.key.split("."):
            if value is None:
                return None
            value = value.get(part)
        return value

    def show(self, summary: Mapping[str, Any]) -> str:
        value = self.value(summary)
        if value is None:
            return "n/a"
        if self.format == "%":
            return f"{value:.1%}"
        return format(value, self.format)


ROWS = (
    Row("jobs", "jobs", ",d"),
    Row("ended", "ended", ",d"),
    Row("rejected", "rejected", ",d"),
    Row("wait_mean", "mean wait (s)", ",.1f"),
    Row("wait_median", "median wait (s)", ",.1f"),
    Row("wait_p95", "p95 wait (s)", ",.1f"),
    Row("bounded_slowdown_mean", "mean bounded slowdown", ",.2f"),
    Row("bounded_slowdown_p95", "p95 bounded slowdown", ",.2f"),
    Row("utilization", "utilization", "%"),
    Row("makespan", "makespan (s)", ",.0f"),
    Row("throughput_per_hour", "throughput (jobs/h)", ",.2f"),
    Row("preemptions.requeue", "preemptions: requeue", ",d"),
    Row("preemptions.cancel", "preemptions: cancel", ",d"),
    Row("preemptions.suspend", "preemptions: suspend", ",d"),
    Row("lost_cpu_hours", "lost CPU-hours", ",.2f"),
    Row("suspended_cpu_hours", "suspended CPU-hours", ",.2f"),
    Row("high_priority.jobs", "high-priority jobs", ",d"),
    Row("high_priority.wait_mean", "high-priority mean wait (s)", ",.1f"),
    Row("high_priority.wait_p95", "high-priority p95 wait (s)", ",.1f"),
    Row("by_user_class.heavy.users", "heavy users", ",d"),
    Row("by_user_class.heavy.wait_mean", "heavy users: mean wait (s)", ",.1f"),
    Row("by_user_class.heavy.bounded_slowdown_mean", "heavy users: mean bounded slowdown", ",.2f"),
    Row("by_user_class.light.users", "light users", ",d"),
    Row("by_user_class.light.wait_mean", "light users: mean wait (s)", ",.1f"),
    Row("by_user_class.light.bounded_slowdown_mean", "light users: mean bounded slowdown", ",.2f"),
    Row("fairshare_factor.p5", "fair-share factor at start: p5", ".3f"),
    Row("fairshare_factor.median", "fair-share factor at start: median", ".3f"),
    Row("fairshare_factor.p95", "fair-share factor at start: p95", ".3f"),
    Row("fairshare_factor.stdev", "fair-share factor at start: std. dev.", ".3f"),
)
#: The figures of runs on a cluster with GPUs (left out of a comparison where no run has any).
GPU_ROWS = (
    Row("gpu_jobs", "GPU jobs", ",d"),
    Row("gpu_utilization", "GPU utilization", "%"),
    Row("lost_gpu_hours", "lost GPU-hours", ",.2f"),
)


def rows_for(results: Sequence[RunResult]) -> tuple[Row, ...]:
    """The table's figures: the GPU ones too when a run had GPUs."""
    gpus = any(r.summary is not None and "gpu_utilization" in r.summary for r in results)
    return ROWS + GPU_ROWS if gpus else ROWS


def render_csv(results: Sequence[RunResult]) -> str:
    """One row per figure (its summary key), one column per run, values at full precision;
    a failed run's column is empty."""
    stream = io.StringIO()
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["metric", *(result.name for result in results)])
    for row in rows_for(results):
        values = [
            None if result.summary is None else row.value(result.summary) for result in results
        ]
        cells = ["" if value is None else repr(value) for value in values]
        writer.writerow([row.key, *cells])
    return stream.getvalue()


def render_table(results: Sequence[RunResult]) -> str:
    """The side-by-side markdown table: a column per run, figures rounded."""
    lines = [
        "| | " + " | ".join(result.name for result in results) + " |",
        "|---|" + "---:|" * len(results),
    ]
    for row in rows_for(results):
        cells = [
            "failed" if result.summary is None else row.show(result.summary) for result in results
        ]
        lines.append(f"| {row.label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def render_markdown(
    comparison: Comparison, results: Sequence[RunResult], trace: CleanedTrace
) -> str:
    """compare.md: what was compared, the table, and any run that failed."""
    title = comparison.title or f"Comparison of {len(results)} runs"
    lines = [
        f"# {title}",
        "",
        f"Trace `{comparison.trace}`: {len(trace.jobs):,} cleaned jobs replayed"
        + (f" (the first {comparison.jobs:,})" if comparison.jobs is not None else "")
        + f". Base configuration `{comparison.base_conf or '-'}`.",
        "",
        "| run | configuration | changes |",
        "|---|---|---|",
    ]
    for run in comparison.runs:
        changes = run.describe().replace("|", "\\|")
        lines.append(f"| {run.name} | `{run.conf_path}` | {changes} |")
    lines += ["", render_table(results)]
    failed = [result for result in results if result.error is not None]
    if failed:
        lines += ["## Failed runs", ""]
        for result in failed:
            lines += [f"### {result.name}", "", "```", result.error or "", "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def write_outputs(
    directory: Path,
    comparison: Comparison,
    results: Sequence[RunResult],
    trace: CleanedTrace,
) -> None:
    """compare.csv, compare.md, compare.json and each successful run's jobs.csv and
    summary.json under ``directory/<run name>/``; compare.json says how many bad trace lines
    were left out (``skipped_lines``). compare.html too when a run brought back its series
    (matplotlib is imported only then)."""
    directory.mkdir(parents=True, exist_ok=True)
    for result in results:
        if result.summary is None:
            continue
        run_dir = directory / result.name
        run_dir.mkdir(exist_ok=True)
        (run_dir / "jobs.csv").write_text(result.jobs_csv)
        (run_dir / "summary.json").write_text(json.dumps(result.summary, indent=1) + "\n")
    (directory / "compare.csv").write_text(render_csv(results))
    (directory / "compare.md").write_text(render_markdown(comparison, results, trace))
    document = {
        "title": comparison.title,
        "trace": comparison.trace,
        "jobs": len(trace.jobs),
        "skipped_lines": len(trace.skipped),
        "base_conf": comparison.base_conf,
        "runs": [
            {
                "name": run.name,
                "conf": run.conf_path,
                "set": dict(run.overrides),
                "summary": result.summary,
                "error": result.error,
            }
            for run, result in zip(comparison.runs, results, strict=True)
        ],
    }
    (directory / "compare.json").write_text(json.dumps(document, indent=1) + "\n")
    if any(result.series is not None for result in results):
        from plurm.sim.compare_report import render_page

        page = render_page(comparison, results, trace)
        (directory / "compare.html").write_text(page, encoding="utf-8")
