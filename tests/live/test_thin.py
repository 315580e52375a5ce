"""The thin sbatch (plurm.live.thin): plurmctld runs the command for it, with the same
command module, and the user sees the same bytes and exit codes as from the full client;
the client itself imports neither attrs, pluggy, the command modules nor even re or json;
the controller asks the client for the script file and standard input instead of reading
them itself, and refuses a malformed ``command`` request with a clear error, and keeps
running."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.conftest import LiveCluster, make_cluster

pytestmark = pytest.mark.live

PROBE = """
import sys
sys.argv = ["sbatch", "--parsable", "--wrap", "true"]
from plurm.live.thin import main
try:
    main()
except SystemExit as stop:
    status = stop.code
heavy = sorted(
    name for name in sys.modules
    if name.split(".")[0]
    in ("attr", "attrs", "pluggy", "typing", "pathlib", "logging", "re", "json", "socket")
    or name.startswith(("plurm.commands", "plurm.conf", "plurm.live.client", "plurm.model"))
)
print(status, *heavy)
"""

FULL = "import sys; sys.argv[0] = 'sbatch'; from plurm.live.client import main; main()"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveCluster]:
    cluster = make_cluster(tmp_path_factory.mktemp("thin"))
    try:
        cluster.up()
        yield cluster
    finally:
        cluster.down()


def _full(cluster: LiveCluster, *argv: str, input: str | None = None) -> tuple[int, str, str]:
    result = subprocess.run(
        [sys.executable, "-c", FULL, *argv],
        env=cluster.env,
        cwd=cluster.root,
        text=True,
        capture_output=True,
        timeout=60,
        input=input,
    )
    return result.returncode, result.stdout, result.stderr


def _thin(cluster: LiveCluster, *argv: str, input: str | None = None) -> tuple[int, str, str]:
    result = cluster.run("sbatch", *argv, check=False, input=input)
    return result.returncode, result.stdout, result.stderr


def test_the_thin_sbatch_imports_none_of_the_model(cluster: LiveCluster) -> None:
    # sys.path as a console script has it; the first run hands over to the full client,
    # which writes the sidecar (the plugin directories on sys.path are part of its stamp)
    command = [sys.executable, "-I", "-c", f"import sys; sys.path[:0] = {sys.path!r}\n{PROBE}"]
    runs = [
        subprocess.run(
            command, env=cluster.env, cwd=cluster.root, capture_output=True, text=True, timeout=60
        )
        for _ in range(2)
    ]
    first, second = (run.stdout.split() for run in runs)
    assert first[1] == "0" and "attrs" in first[2:], runs[0]
    job_id, status, *heavy = second
    assert (status, heavy, runs[1].stderr) == ("0", [], "")
    cluster.wait_for(lambda: cluster.state(int(job_id)) == "COMPLETED", what="thin job's end")


def test_scripts_from_a_file_and_from_stdin_run_with_their_sbatch_lines(
    cluster: LiveCluster,
) -> None:
    script = "#!/bin/sh\n#SBATCH -J fromfile\n#SBATCH -o out-%j.txt\necho hello $SLURM_JOB_NAME\n"
    (cluster.root / "job.sh").write_text(script)
    job = cluster.sbatch("job.sh")
    piped = int(
        cluster.run("sbatch", "--parsable", input=script.replace("fromfile", "fromstdin")).stdout
    )
    for job_id, name in ((job, "fromfile"), (piped, "fromstdin")):
        cluster.wait_for(lambda j=job_id: cluster.state(j) == "COMPLETED", what=f"job {job_id}")
        assert (cluster.root / f"out-{job_id}.txt").read_text() == f"hello {name}\n"


def test_errors_are_the_full_clients_bytes_and_exit_codes(cluster: LiveCluster) -> None:
    os.mkfifo(cluster.root / "fifo.sh")
    (cluster.root / "empty.sh").write_text("\n")
    cases: list[tuple[tuple[str, ...], str | None]] = [
        (("nosuch.sh",), None),
        (("fifo.sh",), None),
        (("empty.sh",), None),
        ((), ""),
        (("--bogus", "--wrap", "true"), None),
        (("-p", "nopart", "--wrap", "true"), None),
        (("--dependency=afterok:999999", "--wrap", "true"), None),
        (("-t", "bogus", "--wrap", "true"), None),
        (("--wrap", "true", "extra"), None),
        (("--version",), None),
        (("--uid", "nosuchuser", "--wrap", "true"), None),
    ]
    for argv, stdin in cases:
        thin = _thin(cluster, *argv, input=stdin)
        assert thin == _full(cluster, *argv, input=stdin), argv
        assert thin[0] != 0 or argv == ("--version",), (argv, thin)


def test_a_malformed_command_request_is_refused_and_the_controller_runs_on(
    cluster: LiveCluster,
) -> None:
    from plurm.live import thin

    name = Path(thin.sidecar_path(str(cluster.conf))).name
    sidecar = json.loads((Path(cluster.env["XDG_CACHE_HOME"]) / "plurm" / name).read_text())
    good = {"command": "sbatch", "argv": [], "cwd": "/", "environ": {}, "host": "h", "files": {}}
    bad = [
        dict(good, command="scancel"),
        dict(good, argv="--wrap true"),
        dict(good, cwd="relative"),
        dict(good, environ={"A": 1}),
        dict(good, stdin="not base64!"),
        dict(good, files=[]),
    ]
    for message in bad:
        status, body = thin._post(
            sidecar["host"], sidecar["port"], 5.0, json.dumps(message).encode()
        )
        error = json.loads(body)["error"]
        assert status == 400 and error["message"].startswith("bad command request"), error
    # the controller asks for standard input rather than reading anything itself
    status, body = thin._post(sidecar["host"], sidecar["port"], 5.0, json.dumps(good).encode())
    assert (status, json.loads(body)) == (200, {"result": {"need": "stdin"}})
    assert cluster.run("squeue", "-h").returncode == 0


def test_sbatch_wait_is_left_to_the_full_client(cluster: LiveCluster) -> None:
    result = cluster.run("sbatch", "-W", "--wrap", "exit 3", check=False)
    assert result.returncode == 3
    assert result.stdout.startswith("Submitted batch job ")


def test_a_large_script_is_left_to_the_full_client(cluster: LiveCluster) -> None:
    # over the 64 KiB the controller parses on its loop: the full client parses it instead
    padding = "# padding\n" * 8000
    script = f"#!/bin/sh\n#SBATCH -J large\n{padding}true\n"
    (cluster.root / "large.sh").write_text(script)
    job_id = cluster.sbatch("large.sh")
    out = cluster.run("squeue", "-h", "-t", "all", "-j", str(job_id), "-o", "%j").stdout
    assert out.strip() == "large"
    # the controller answers so (the client then hands over, with the input it read)
    from plurm.live import thin

    name = Path(thin.sidecar_path(str(cluster.conf))).name
    sidecar = json.loads((Path(cluster.env["XDG_CACHE_HOME"]) / "plurm" / name).read_text())
    message = {
        "command": "sbatch",
        "argv": [],
        "cwd": "/",
        "environ": {},
        "stdin": base64.b64encode(script.encode()).decode(),
    }
    status, body = thin._post(sidecar["host"], sidecar["port"], 5.0, json.dumps(message).encode())
    assert (status, json.loads(body)) == (200, {"result": {"need": "local"}})
    piped = cluster.run("sbatch", "--parsable", input=script.replace("large", "piped")).stdout
    out = cluster.run("squeue", "-h", "-t", "all", "-j", piped.strip(), "-o", "%j").stdout
    assert out.strip() == "piped"
