"""The fair-share tree: shares and usage per association, and the fair-share factor of each
user association by Fair Tree (Slurm 22.05's default) or by the classic algorithm
(``PriorityFlags=NO_FAIR_TREE``).

The tree is the accounts of accounts.conf (root at the top) with each user's associations
as leaves under their account. Usage charged to a user association counts for it and for
every account above it.

Fair Tree, as Slurm's fair_tree.html describes it: at each level, every association gets a
Level Fairshare ``LF = S / U``, ``S`` its shares over the shares of all its siblings and
``U`` its usage over theirs (``LF`` is infinite without usage, 0 without shares). Walking
the tree from the root, each level's associations are visited in descending ``LF``, and
an account is walked into as it comes (sibling accounts tied on ``LF`` and next to each
other have their children walked together, each keeping the ``LF`` it has among its own
siblings). Users are counted down from the number of user associations, one each as they
are visited; a user takes the count it is visited at as its rank, unless it is tied: its
``LF`` equals the one visited before it at its level, or it is first at a level reached
through a tied account; then it keeps the rank the one before it had. The factor is
``rank / number of user associations``. (Real Slurm 22.05: with root's own user, ``acct``'s
root user, and accounts ``heavy`` and ``light`` of equal shares where only heavy's user has
used the cluster, the three others are tied at infinite LF and all get 1.0, heavy's user
0.25: tests/data/priority/fairshare-light-first.json.)

Classic (classic_fair_share.html): normalized shares are the product, down the path from
the root, of each association's shares over its siblings'; normalized usage is its usage
over the root's; effective usage is the normalized usage for children of the root, and
otherwise ``UA + (UE_parent - UA) * S_raw / S_siblings``; the factor is
``2 ** (-UE / S)`` (0 without shares).

``Fairshare=parent``: an account's children count as children of its parent (Fair Tree)
and a user association takes its account's values (both algorithms).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import attrs

__all__ = [
    "FairTreePlan",
    "Key",
    "Node",
    "Tree",
    "build_tree",
    "classic",
    "fair_tree",
    "level_values",
]

#: An association: (account, user), user None for the account itself.
Key = tuple[str, str | None]


@attrs.define
class Node:
    """One association: an account (``user`` None) or a user's association."""

    account: str
    user: str | None
    #: Shares among its siblings; None: ``parent``.
    shares: int | None
    parent: Node | None = None
    children: list[Node] = attrs.field(factory=list)
    usage: float = 0.0

    @property
    def key(self) -> Key:
        return (self.account, self.user)

    @property
    def depth(self) -> int:
        return 0 if self.parent is None else self.parent.depth + 1


@attrs.define
class Tree:
    """The association tree: its root and every node by (account, user)."""

    root: Node
    nodes: dict[Key, Node]

    def users(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.user is not None]

    def walk(self) -> list[Node]:
        """Every node, root first, depth first: under an account its users (by name), then
        its sub-accounts (by name), as sshare lists them."""
        found: list[Node] = []

        def visit(node: Node) -> None:
            found.append(node)
            for child in _ordered(node.children):
                visit(child)

        visit(self.root)
        return found


def _ordered(children: list[Node]) -> list[Node]:
    return sorted(children, key=lambda n: (n.user is None, n.user or n.account))


def build_tree(
    accounts: Mapping[str, tuple[str | None, int | None]],
    users: Mapping[tuple[str, str], int | None],
) -> Tree:
    """The tree of ``accounts`` (name -> (parent, shares); the one without a parent is the
    root) and ``users`` ((user, account) -> shares)."""
    nodes: dict[Key, Node] = {}
    for name, (_, shares) in accounts.items():
        nodes[(name, None)] = Node(name, None, shares)
    root = None
    for name, (parent, _) in accounts.items():
        node = nodes[(name, None)]
        if parent is None or (parent, None) not in nodes:
            root = node if root is None or parent is None else root
            continue
        node.parent = nodes[(parent, None)]
        node.parent.children.append(node)
    if root is None:
        root = Node("root", None, None)
        nodes[("root", None)] = root
    for (user, account), shares in users.items():
        owner = nodes.get((account, None))
        if owner is None:
            continue
        leaf = Node(account, user, shares, parent=owner)
        owner.children.append(leaf)
        nodes[(account, user)] = leaf
    return Tree(root, nodes)


# ----------------------------------------------------------------------------- Fair Tree


def _level(children: list[Node]) -> list[Node]:
    """The associations of one level: accounts of ``Fairshare=parent`` give way to their
    own children."""
    level: list[Node] = []
    for child in children:
        if child.user is None and child.shares is None:
            level.extend(_level(child.children))
        else:
            level.append(child)
    return level


def level_values(level: list[Node]) -> dict[Key, tuple[float, float, float]]:
    """(S, U, LF) of each association of one level: shares and usage over the level's
    totals (a user of ``Fairshare=parent`` takes its account's values, computed among the
    account's siblings)."""
    own = [node for node in level if node.shares is not None]
    total_shares = sum(node.shares or 0 for node in own)
    total_usage = sum(node.usage for node in own)
    values: dict[Key, tuple[float, float, float]] = {}
    for node in own:
        share = (node.shares or 0) / total_shares if total_shares else 0.0
        used = node.usage / total_usage if total_usage else 0.0
        values[node.key] = (share, used, _lf(share, used))
    return values


def _lf(share: float, used: float) -> float:
    if share <= 0.0:
        return 0.0  # no shares: behind everyone with shares, used or not
    if used <= 0.0:
        return math.inf
    return share / used


def fair_tree(
    tree: Tree,
) -> tuple[dict[Key, float], dict[Key, tuple[float, float, float]]]:
    """The Fair Tree factor of each user association, and (S, U, LF) of every association
    at its level."""
    count = len(tree.users())
    factors: dict[Key, float] = {}
    values: dict[Key, tuple[float, float, float]] = {}
    for node in tree.nodes.values():  # each level's values among its own siblings
        if node.user is None and (node is tree.root or node.shares is not None):
            values.update(level_values(_level(node.children)))
    #: [the rank tied users share, users still to rank]
    counter = [count, count]

    def visit(level: list[Node], tied_above: bool) -> None:
        ranked = sorted(
            (node for node in level if node.key in values),
            key=lambda node: (-values[node.key][2], node.user is None, node.user or node.account),
        )
        previous: float | None = None
        index = 0
        while index < len(ranked):
            node = ranked[index]
            lf = values[node.key][2]
            tied = tied_above if index == 0 else lf == previous
            previous = lf
            if node.user is not None:
                if not tied:
                    counter[0] = counter[1]
                factors[node.key] = counter[0] / count
                counter[1] -= 1
                index += 1
                continue
            # an account: with the accounts right after it that tie with it, their
            # children ranked together
            group = [node]
            while (
                index + len(group) < len(ranked)
                and ranked[index + len(group)].user is None
                and values[ranked[index + len(group)].key][2] == lf
            ):
                group.append(ranked[index + len(group)])
            index += len(group)
            visit(_level([child for account in group for child in account.children]), tied)
        for node in level:  # Fairshare=parent users: their account's place
            if node.user is not None and node.shares is None:
                factors[node.key] = _account_factor(node, factors)

    visit(_level(tree.root.children), False)
    return factors, values


class FairTreePlan:
    """Fair Tree's factors for one tree, worked out again after each change of usage at a
    fraction of :func:`fair_tree`'s cost: the tree's shape and shares do not change, so its
    levels, each association's share of its level and its place among ties are found once;
    a call only divides usage and sorts each level. :func:`fair_tree` is the reference it
    equals, float for float (the same sums in the same order)."""

    def __init__(self, tree: Tree) -> None:
        nodes = list(tree.nodes.values())
        place = {id(node): index for index, node in enumerate(nodes)}
        self._nodes = nodes
        self._keys = [node.key for node in nodes]
        self._count = len(tree.users())
        #: Per level: its associations with shares, and each one's share of the level.
        self._levels: list[tuple[list[int], list[float]]] = []
        for node in nodes:
            if node.user is None and (node is tree.root or node.shares is not None):
                own = [child for child in _level(node.children) if child.shares is not None]
                total = sum(child.shares or 0 for child in own)
                self._levels.append(
                    (
                        [place[id(child)] for child in own],
                        [(child.shares or 0) / total if total else 0.0 for child in own],
                    )
                )
        #: Each association's level below it (its children, Fairshare=parent resolved).
        self._below = [[place[id(child)] for child in _level(node.children)] for node in nodes]
        self._is_user = [node.user is not None for node in nodes]
        self._tie = [(node.user is None, node.user or node.account) for node in nodes]
        #: Fairshare=parent users, each with its account's users.
        self._parent_users = [
            (place[id(node)], [place[id(child)] for child in node.parent.children])
            for node in nodes
            if node.user is not None and node.shares is None and node.parent is not None
        ]
        self._top = self._below[place[id(tree.root)]]

    def usage(self) -> list[float]:
        """Each association's usage now, in the order :meth:`factors` takes it."""
        return [node.usage for node in self._nodes]

    def factors(self, usage: list[float] | None = None) -> dict[Key, float]:
        """The Fair Tree factor of each user association, as :func:`fair_tree` gives it, on
        the tree's usage or on ``usage`` (as :meth:`usage` gave it earlier)."""
        used = self.usage() if usage is None else usage
        lf: list[float | None] = [None] * len(used)
        for members, shares in self._levels:
            total = sum(used[index] for index in members)
            for index, share in zip(members, shares, strict=True):
                lf[index] = _lf(share, used[index] / total if total else 0.0)
        keys, is_user, tie, below, count = (
            self._keys,
            self._is_user,
            self._tie,
            self._below,
            self._count,
        )
        factors: dict[Key, float] = {}
        counter = [count, count]

        def visit(level: list[int], tied_above: bool) -> None:
            ranked = sorted(
                (index for index in level if lf[index] is not None),
                key=lambda index: (-lf[index], tie[index]),  # type: ignore[operator]
            )
            previous: float | None = None
            position = 0
            while position < len(ranked):
                index = ranked[position]
                value = lf[index]
                tied = tied_above if position == 0 else value == previous
                previous = value
                if is_user[index]:
                    if not tied:
                        counter[0] = counter[1]
                    factors[keys[index]] = counter[0] / count
                    counter[1] -= 1
                    position += 1
                    continue
                group = [index]
                while (
                    position + len(group) < len(ranked)
                    and not is_user[ranked[position + len(group)]]
                    and lf[ranked[position + len(group)]] == value
                ):
                    group.append(ranked[position + len(group)])
                position += len(group)
                visit([child for account in group for child in below[account]], tied)

        visit(self._top, False)
        for index, siblings in self._parent_users:
            found = [factors[keys[other]] for other in siblings if keys[other] in factors]
            factors[keys[index]] = max(found, default=1.0)
        return factors


def _account_factor(node: Node, factors: dict[Key, float]) -> float:
    """A ``Fairshare=parent`` user's factor: the best of its account's users (1.0 when
    the account has no other users)."""
    assert node.parent is not None
    siblings = [factors[c.key] for c in node.parent.children if c.key in factors]
    return max(siblings, default=1.0)


# ----------------------------------------------------------------------------- classic


@attrs.frozen
class Classic:
    """The classic algorithm's values of one association."""

    norm_shares: float
    norm_usage: float
    effective_usage: float
    factor: float


def classic(tree: Tree) -> dict[Key, Classic]:
    """The classic values of every association (the root's norm shares are 1)."""
    root_usage = tree.root.usage
    result: dict[Key, Classic] = {tree.root.key: Classic(1.0, 1.0 if root_usage else 0.0, 1.0, 1.0)}

    def visit(node: Node) -> None:
        mine = result[node.key]
        own = [child for child in node.children if child.shares is not None]
        total = sum(child.shares or 0 for child in own)
        for child in node.children:
            norm_usage = child.usage / root_usage if root_usage else 0.0
            if child.shares is None:
                values = Classic(mine.norm_shares, norm_usage, mine.effective_usage, mine.factor)
            else:
                part = (child.shares or 0) / total if total else 0.0
                norm_shares = part * mine.norm_shares
                if node is tree.root:
                    effective = norm_usage
                else:
                    effective = norm_usage + (mine.effective_usage - norm_usage) * part
                values = Classic(
                    norm_shares, norm_usage, effective, _factor(effective, norm_shares)
                )
            result[child.key] = values
            visit(child)

    visit(tree.root)
    return result


def _factor(effective: float, norm_shares: float) -> float:
    if norm_shares <= 0.0:
        return 0.0
    return float(2.0 ** (-effective / norm_shares))
