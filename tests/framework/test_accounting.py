"""Accounting as slurmdbd does it at submission: accounts.conf (the associations sacctmgr
makes), the account and QOS each job gets, and what AccountingStorageEnforce refuses.

The recorded behaviour of real Slurm 22.05 is checked in test_cli_oracle.py (scenario
``accounting``); these tests pin the rules around it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plurm import conf
from plurm.controller import RequestError
from plurm.errors import ConfError
from plurm.testing import JobBuilder, TestCluster

Make = Callable[..., TestCluster]
Job = Callable[[], JobBuilder]

NODES = "NodeName=n[1-2] CPUs=1 RealMemory=1000\nPartitionName=p Nodes=ALL Default=YES\n"
DBD = "AccountingStorageType=accounting_storage/slurmdbd\n"
QOS = "QOS=high Priority=100\nQOS=low\n"
ACCOUNTS = (
    "Account=physics QOS=normal,high\n"
    "Account=theory Parent=physics DefaultQOS=high\n"
    "User=alice Account=theory,physics\n"
    "User=bob Account=physics DefaultAccount=physics QOS=low DefaultQOS=low\n"
)

INVALID_ACCOUNT = "Invalid account or account/partition combination specified"


def _config(tmp_path: Path, accounts: str, qos: str = QOS, head: str = DBD) -> conf.SlurmConfig:
    return conf.parse_text(
        "ClusterName=c\nSlurmctldHost=h\n" + head + NODES,
        path=tmp_path / "slurm.conf",
        qos_text=qos,
        accounts_text=accounts,
    )


def test_the_root_account_and_user_always_exist(tmp_path: Path) -> None:
    config = _config(tmp_path, "")
    assert [a.name for a in config.accounts] == ["root"]
    root = config.association("root", "root")
    assert root is not None and root.qos == ("normal",) and root.default_qos is None
    assert config.default_accounts == {"root": "root"}


def test_associations_inherit_qos_down_the_account_tree(tmp_path: Path) -> None:
    config = _config(tmp_path, ACCOUNTS)
    theory = config.association("alice", "theory")
    physics = config.association("alice", "physics")
    assert theory is not None and physics is not None
    assert theory.qos == ("normal", "high") and theory.default_qos == "high"
    assert physics.qos == ("normal", "high") and physics.default_qos is None
    bob = config.association("bob", "physics")
    assert bob is not None and bob.qos == ("low",) and bob.default_qos == "low"
    # the first account a user is added to is its default, unless DefaultAccount says
    assert config.default_accounts["alice"] == "theory"
    assert config.default_accounts["bob"] == "physics"
    assert config.association("bob", "theory") is None


def test_adding_root_to_an_account_keeps_its_default_account(tmp_path: Path) -> None:
    """As ``sacctmgr add user root account=acct`` after ``add cluster``."""
    config = _config(tmp_path, "Account=acct\nUser=root Account=acct\n")
    assert config.association("root", "acct") is not None
    assert config.default_accounts["root"] == "root"


def test_names_are_stored_lower_case(tmp_path: Path) -> None:
    config = _config(tmp_path, "Account=Physics\nUser=Alice Account=PHYSICS\n")
    assert config.association("alice", "physics") is not None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Account=a QOS=nosuch\n", "account a: unknown QOS nosuch"),
        ("Account=a Parent=nosuch\n", "account a: unknown Parent nosuch"),
        ("Account=a\nAccount=a\n", "account a is defined twice"),
        ("User=u Account=nosuch\n", "user u: unknown account nosuch"),
        ("User=u\n", "user u: Account= is needed"),
        ("Account=a\nUser=u Account=a DefaultAccount=b\n", "DefaultAccount b is not one of"),
        ("Account=a QOS=low\nUser=u Account=a DefaultQOS=high\n", "DefaultQOS high is not in"),
        ("Group=g\n", "starts with Account= or User="),
        ("Account=a Parnet=root\n", "did you mean 'Parent'"),
    ],
)
def test_bad_accounts_files_are_refused(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfError, match=message):
        _config(tmp_path, text)


def test_accounts_conf_beside_slurm_conf_is_read(tmp_path: Path) -> None:
    (tmp_path / "slurm.conf").write_text("ClusterName=c\nSlurmctldHost=h\n" + DBD + NODES)
    (tmp_path / "accounts.conf").write_text("Account=acct\nUser=root Account=acct\n")
    config = conf.load(tmp_path / "slurm.conf")
    assert config.association("root", "acct") is not None
    assert str(tmp_path / "accounts.conf") in config.files


def test_enforce_words_imply_others_as_slurm_conf_says(tmp_path: Path) -> None:
    head = DBD + "AccountingStorageEnforce=safe,qos\n"
    config = _config(tmp_path, "", head=head)
    assert config.accounting_enforce == {"safe", "limits", "associations", "qos"}
    assert "AccountingStorageEnforce" not in config.inactive


@pytest.mark.parametrize(
    ("words", "enforced"),
    [
        ("1", {"associations"}),
        ("2", {"associations", "limits"}),
        ("WCKeys,NoJobs", {"wckeys", "associations", "nojobs", "nosteps"}),
        ("all", {"associations", "limits", "qos", "safe", "wckeys"}),
        ('""', set()),
    ],
)
def test_each_enforce_word_is_accepted_with_what_it_implies(
    tmp_path: Path, words: str, enforced: set[str]
) -> None:
    config = _config(tmp_path, "", head=DBD + f"AccountingStorageEnforce={words}\n")
    assert config.accounting_enforce == enforced


def test_an_unknown_enforce_word_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfError, match="Invalid parameter for AccountingStorageEnforce: bogus"):
        _config(tmp_path, "", head=DBD + "AccountingStorageEnforce=qos,bogus\n")


def _cluster(make_cluster: Make, enforce: str | None = "associations,qos") -> TestCluster:
    head = DBD + (f"AccountingStorageEnforce={enforce}\n" if enforce else "")
    return make_cluster(head + NODES, qos_text=QOS, accounts_text=ACCOUNTS)


def _refusal(cluster: TestCluster, request: JobBuilder) -> str:
    with pytest.raises(RequestError) as refused:
        cluster.submit(request)
    return refused.value.message


def test_a_job_is_charged_to_the_default_account_and_qos(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    alice = cluster.job(cluster.submit(job().user("alice")))
    assert (alice.account, alice.qos) == ("theory", "high")  # theory's DefaultQOS
    root = cluster.job(cluster.submit(job()))
    assert (root.account, root.qos) == ("root", "normal")
    chosen = cluster.job(cluster.submit(job().user("alice").account("PHYSICS").qos("normal")))
    assert (chosen.account, chosen.qos) == ("physics", "normal")


def test_enforced_associations_refuse_an_unknown_account_or_user(
    make_cluster: Make, job: Job
) -> None:
    cluster = _cluster(make_cluster)
    assert _refusal(cluster, job().account("nosuch")) == INVALID_ACCOUNT
    assert _refusal(cluster, job().user("bob").account("theory")) == INVALID_ACCOUNT
    assert _refusal(cluster, job().user("carol")) == INVALID_ACCOUNT


def test_enforced_qos_refuses_a_qos_outside_the_association(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    assert _refusal(cluster, job().qos("nosuch")) == "Invalid qos specification"
    assert _refusal(cluster, job().qos("high")) == "Invalid qos specification"  # root: normal
    assert _refusal(cluster, job().user("bob").qos("normal")) == "Invalid qos specification"
    assert cluster.job(cluster.submit(job().user("bob"))).qos == "low"


def test_refused_submissions_take_no_job_id(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster)
    _refusal(cluster, job().qos("nosuch"))
    assert cluster.submit(job()) == 1


def test_without_enforcement_only_unknown_qos_is_refused(make_cluster: Make, job: Job) -> None:
    cluster = _cluster(make_cluster, enforce=None)
    outside = cluster.job(cluster.submit(job().qos("high")))
    assert (outside.account, outside.qos) == ("root", "high")
    stranger = cluster.job(cluster.submit(job().user("carol").account("nosuch")))
    assert (stranger.account, stranger.qos) == ("nosuch", "normal")
    assert _refusal(cluster, job().qos("nosuch")) == "Invalid qos specification"


def test_without_slurmdbd_a_job_has_no_account_or_qos(make_cluster: Make, job: Job) -> None:
    cluster = make_cluster(NODES)
    plain = cluster.job(cluster.submit(job().qos("nosuch").account("acct")))
    assert (plain.account, plain.qos) == ("acct", None)
    out = cluster.command(f"scontrol show job {plain.job_id}").stdout
    assert "Account=acct QOS=(null)" in out


def test_scontrol_and_sbatch_show_the_charge(make_cluster: Make) -> None:
    cluster = _cluster(make_cluster)
    result = cluster.command("sbatch -A nosuch --wrap='sleep 5'")
    assert (result.status, result.stderr) == (
        1,
        f"sbatch: error: Batch job submission failed: {INVALID_ACCOUNT}\n",
    )
    assert cluster.command("sbatch -A physics --uid=0 --wrap='sleep 5'").status == 1
    assert cluster.command("sbatch --wrap='sleep 5'").stdout == "Submitted batch job 1\n"
    assert "Account=root QOS=normal" in cluster.command("scontrol show job 1").stdout
