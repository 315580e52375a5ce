"""Slurm 22.05's plugins that have nothing to do in simulation load as explicit no-ops
that say so once; a plugin no installed distribution provides is named by ``plurm conf
check`` (exit 1) and refused by ``plurm simulate``."""

from __future__ import annotations

from pathlib import Path

import pytest

from plurm import conf
from plurm.cli.main import main
from plurm.manager import Plugins
from tests.support.cli import simulate

HEAD = "ClusterName=c\nSlurmctldHost=h\n"
NODES = "NodeName=n[1-2] CPUs=1\nPartitionName=p Nodes=ALL Default=YES\n"

#: Every type string Slurm 22.05 ships for these keys (slurm.conf(5) and the plugins of a
#: 22.05 build), as written in slurm.conf; MpiDefault's are written without ``mpi/``.
SLURM_22_05 = {
    "AcctGatherEnergyType": "acct_gather_energy/{none,cray_aries,gpu,ibmaem,ipmi,"
    "pm_counters,rapl,xcc}",
    "AcctGatherProfileType": "acct_gather_profile/{none,hdf5,influxdb}",
    "AcctGatherInterconnectType": "acct_gather_interconnect/{none,ofed,sysfs}",
    "AcctGatherFilesystemType": "acct_gather_filesystem/{none,lustre}",
    "AccountingStorageType": "accounting_storage/{none,slurmdbd}",
    "CredType": "cred/{munge,none}",
    "JobCompType": "jobcomp/{none,elasticsearch,filetxt,lua,mysql,script}",
    "JobContainerType": "job_container/{none,cncu,tmpfs}",
    "LaunchType": "launch/{slurm}",
    "MpiDefault": "{none,pmi2,pmix,pmix_v4,cray_shasta}",
    "PrEpPlugins": "prep/{script}",
    "ProctrackType": "proctrack/{cgroup,linuxproc,pgid,cray_aries}",
    "SwitchType": "switch/{none,cray_aries}",
    "TaskPlugin": "task/{none,affinity,cgroup,cray_aries}",
    "TopologyPlugin": "topology/{none,tree,3d_torus,hypercube}",
}


def _expand(pattern: str) -> list[str]:
    head, _, rest = pattern.partition("{")
    names, _, tail = rest.partition("}")
    return [f"{head}{name}{tail}" for name in names.split(",")]


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "slurm.conf"
    path.write_text(HEAD + body + NODES)
    return path


@pytest.mark.parametrize("key", sorted(SLURM_22_05))
def test_every_slurm_type_string_loads(key: str, tmp_path: Path) -> None:
    # job_container/tmpfs needs PrologFlags=Contain, as in Slurm.
    extra = "PrologFlags=Contain\n" if key == "JobContainerType" else ""
    for value in _expand(SLURM_22_05[key]):
        config = conf.load(_write(tmp_path, f"{extra}{key}={value}\n"))
        loaded = Plugins.load(config).type_strings()
        expected = value if "/" in value else f"mpi/{value}"
        assert expected in loaded, (key, value)


def test_task_plugin_lists_load_each(tmp_path: Path) -> None:
    config = conf.load(_write(tmp_path, "TaskPlugin=task/affinity,task/cgroup\n"))
    loaded = Plugins.load(config).type_strings()
    assert "task/affinity" in loaded and "task/cgroup" in loaded


def test_unset_keys_load_nothing(tmp_path: Path) -> None:
    loaded = Plugins.load(conf.load(_write(tmp_path, ""))).type_strings()
    assert not any(t.startswith(("proctrack/", "task/", "mpi/", "topology/")) for t in loaded)


def test_no_op_plugins_say_so_once_each_in_plurm_simulate(tmp_path: Path) -> None:
    """One warning line per plugin that does something in Slurm; the ``*/none`` ones and
    those the core stands in for (AccountingStorageType) load silently."""
    path = _write(
        tmp_path,
        "ProctrackType=proctrack/cgroup\nTaskPlugin=task/affinity,task/cgroup\n"
        "MpiDefault=pmi2\nSwitchType=switch/none\nJobCompType=jobcomp/filetxt\n"
        "AccountingStorageType=accounting_storage/none\n",
    )
    session = tmp_path / "session"
    session.write_text("0 sbatch -N1 --wrap='sleep 5'\n1 squeue -h -o %T\n3 sinfo -h -o %T\n")
    done = simulate(path, session, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "RUNNING" in done.stdout
    lines = done.stderr.splitlines()
    warned = sorted(line.split()[0] for line in lines)
    assert warned == [
        "plugin=jobcomp/filetxt",
        "plugin=mpi/pmi2",
        "plugin=proctrack/cgroup",
        "plugin=task/affinity",
        "plugin=task/cgroup",
    ]
    assert all(
        line.endswith("has no effect in Plurm's simulation; loaded as a no-op") for line in lines
    )


def test_conf_check_names_each_missing_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(
        tmp_path,
        "ProctrackType=proctrack/cgroupp\nTaskPlugin=task/affinity,task/numa\n"
        "TopologyPlugin=topology/tree\nJobAcctGatherType=jobacct_gather/linuks\n",
    )
    assert main(["conf", "check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"plurm: {path}: 3 error(s)" in err
    assert (
        f"{path}:3:15: ProctrackType=proctrack/cgroupp: no such plugin is installed" in err
        and "did you mean proctrack/cgroup?" in err
    )
    assert f"{path}:4:26: TaskPlugin=task/numa: no such plugin is installed" in err
    assert f"{path}:6:19: JobAcctGatherType=jobacct_gather/linuks" in err
    assert "did you mean jobacct_gather/linux?" in err
    assert "topology/tree:" not in err


def test_conf_check_passes_when_every_plugin_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "ProctrackType=proctrack/cgroup\nMpiDefault=pmix\n")
    assert main(["conf", "check", str(path)]) == 0
    assert "ProctrackType" in capsys.readouterr().out


def test_plurm_simulate_refuses_a_missing_plugin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, "SwitchType=switch/hpe_slingshot\n")
    session = tmp_path / "session"
    session.write_text("0 sinfo\n")
    assert main(["simulate", "--conf", str(path), str(session)]) == 1
    err = capsys.readouterr().err
    assert "switch/hpe_slingshot: no such plugin is installed" in err
    assert "installed switch plugins: switch/cray_aries, switch/none" in err
