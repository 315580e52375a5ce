"""Partition access at submission, as slurmctld checks it (RootOnly, AllowGroups,
Allow/DenyAccounts, Allow/DenyQos), in simulation; and accounts.conf's AdminLevel."""

from __future__ import annotations

import os
import pwd
from pathlib import Path

import attrs
import pytest

from plurm import conf
from plurm.controller import RequestError
from plurm.errors import ConfError
from plurm.testing.cluster import JobBuilder, build_cluster

HEAD = "AccountingStorageType=accounting_storage/slurmdbd\nNodeName=n[1-2] CPUs=1\n"
QOS = "QOS=high\nQOS=low\n"
ACCOUNTS = (
    "Account=physics QOS=normal,high,low\n"
    "Account=chem QOS=normal,high,low\n"
    "User=alice Account=physics,chem DefaultAccount=physics AdminLevel=Operator\n"
    "User=bob Account=chem AdminLevel=Admin\n"
)


def cluster(tmp_path: Path, partition: str):  # type: ignore[no-untyped-def]
    return build_cluster(
        HEAD + f"PartitionName=p Nodes=ALL Default=YES {partition}\n",
        tmp_path,
        qos_text=QOS,
        accounts_text=ACCOUNTS,
    )


def as_user(builder: JobBuilder, user: str, uid: int, group: str, gid: int) -> JobBuilder:
    return builder._with(user=user, uid=uid, group=group, gid=gid)


def alice(**changes: object) -> JobBuilder:
    return as_user(JobBuilder(), "alice", 5001, "alice", 5001)._with(**changes)


def test_root_only_refuses_a_user_and_accepts_root(tmp_path: Path) -> None:
    sim = cluster(tmp_path, "RootOnly=YES")
    with pytest.raises(RequestError, match=r"^Access/permission denied$"):
        sim.submit(alice())
    assert sim.submit(JobBuilder()) == 1  # root


def test_allow_groups_refuses_another_group(tmp_path: Path) -> None:
    sim = cluster(tmp_path, "AllowGroups=physicists")
    with pytest.raises(RequestError, match=r"^User's group not permitted to use this partition$"):
        sim.submit(alice())
    assert sim.submit(JobBuilder()) >= 1  # root may always
    # a group this machine knows, with the user's primary gid
    root_group = "root"
    sim = cluster(tmp_path, f"AllowGroups={root_group}")
    ok = as_user(JobBuilder(), "alice", 5001, "other", 0)
    assert sim.submit(ok) >= 1


@pytest.mark.parametrize(
    ("partition", "account", "refused"),
    [
        ("AllowAccounts=chem", "physics", True),
        ("AllowAccounts=chem", "chem", False),
        ("DenyAccounts=chem", "chem", True),
        ("DenyAccounts=chem", "physics", False),
    ],
)
def test_accounts(tmp_path: Path, partition: str, account: str, refused: bool) -> None:
    sim = cluster(tmp_path, partition)
    job = alice(account=account)
    if refused:
        with pytest.raises(
            RequestError, match=r"^Invalid account or account/partition combination specified$"
        ):
            sim.submit(job)
    else:
        assert sim.job(sim.submit(job)).account == account


@pytest.mark.parametrize(
    ("partition", "qos", "refused"),
    [
        ("AllowQos=high", "low", True),
        ("AllowQos=high", "high", False),
        ("DenyQos=low", "low", True),
        ("DenyQos=low", None, False),
    ],
)
def test_qos(tmp_path: Path, partition: str, qos: str | None, refused: bool) -> None:
    sim = cluster(tmp_path, partition)
    job = alice(qos=qos)
    if refused:
        with pytest.raises(RequestError, match=r"^Invalid qos specification$"):
            sim.submit(job)
    else:
        sim.submit(job)


def test_admin_levels_from_accounts_conf(tmp_path: Path) -> None:
    config = cluster(tmp_path, "").config
    assert config.admin_levels == {"alice": "Operator", "bob": "Administrator"}


def test_bad_admin_level_is_a_conf_error(tmp_path: Path) -> None:
    with pytest.raises(ConfError, match="AdminLevel=boss"):
        conf.parse_text(
            "ClusterName=c\nSlurmctldHost=h\nNodeName=n1\nPartitionName=p Nodes=n1\n",
            path=tmp_path / "slurm.conf",
            accounts_text="Account=a\nUser=x Account=a AdminLevel=boss\n",
        )


def test_slurm_user_may_use_root_only(tmp_path: Path) -> None:
    me = pwd.getpwuid(os.getuid()).pw_name
    sim = build_cluster(
        f"SlurmUser={me}\nNodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 Default=YES RootOnly=YES\n",
        tmp_path,
    )
    request = attrs.evolve(JobBuilder().build(), uid=os.getuid(), user=me)
    assert sim.submit(request) == 1


COORDINATED = (
    "Account=lab Coordinators=Alice\n"
    "Account=lab_sub Parent=lab\n"
    "Account=lab_sub2 Parent=lab_sub\n"
    "Account=other\n"
    "User=alice Account=lab\n"
    "User=bob Account=lab_sub,other\n"
    "User=carol Account=other\n"
)


def _accounts(tmp_path: Path, text: str) -> conf.SlurmConfig:
    return conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\nNodeName=n1\nPartitionName=p Nodes=n1\n",
        path=tmp_path / "slurm.conf",
        accounts_text=text,
    )


def test_coordinators_of_an_account_coordinate_its_sub_accounts(tmp_path: Path) -> None:
    from plurm.controller.access import coordinated_accounts

    config = _accounts(tmp_path, COORDINATED)
    specs = {spec.name: spec for spec in config.accounts}
    assert specs["lab"].coordinators == ("alice",)  # stored lower-case, as slurmdbd does
    assert specs["lab_sub"].coordinators == ()
    assert coordinated_accounts(config.accounts, "alice") == {"lab", "lab_sub", "lab_sub2"}
    assert coordinated_accounts(config.accounts, "bob") == frozenset()
    both = _accounts(tmp_path, COORDINATED + "Account=other2 Parent=other Coordinators=bob,alice\n")
    assert coordinated_accounts(both.accounts, "alice") == {"lab", "lab_sub", "lab_sub2", "other2"}
    assert coordinated_accounts(both.accounts, "bob") == {"other2"}  # not its parent


def test_a_coordinator_must_be_a_user(tmp_path: Path) -> None:
    with pytest.raises(ConfError, match="account lab: coordinator dave is not a user"):
        _accounts(tmp_path, "Account=lab Coordinators=dave\nUser=alice Account=lab\n")
    with pytest.raises(ConfError, match="Coordinators"):
        _accounts(tmp_path, "Account=lab\nUser=alice Account=lab Coordinators=lab\n")
