"""NodeBitmap: a node set as an int bitmap that reads as its node names."""

from __future__ import annotations

from plurm.model.bitmap import NodeBitmap, mask_names

TABLE = ("n1", "n2", "n3", "n4", "n5")


def test_a_bitmap_reads_as_its_names_in_table_order() -> None:
    nodes = NodeBitmap(0b10101, TABLE)
    assert list(nodes) == ["n1", "n3", "n5"]
    assert len(nodes) == 3
    assert nodes[1] == "n3"
    assert nodes[-1] == "n5"
    assert nodes[:2] == ("n1", "n3")
    assert "n3" in nodes
    assert "n2" not in nodes
    assert nodes == ["n1", "n3", "n5"]
    assert nodes == ("n1", "n3", "n5")
    assert nodes == NodeBitmap(0b10101, TABLE)
    assert nodes != NodeBitmap(0b101, TABLE)
    assert hash(nodes) == hash(("n1", "n3", "n5"))
    assert NodeBitmap(0, TABLE) == ()
    assert mask_names(0b11000, TABLE) == ("n4", "n5")
