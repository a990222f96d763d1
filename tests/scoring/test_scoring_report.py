"""What shards' rows hold, together: the kinds no shard's posts hold, the columns unread in any."""

from __future__ import annotations

from faim.scoring.report import Held


def test_the_rows_of_every_shard_hold_the_kinds_any_holds_and_leave_unread_the_columns_any_leaves() -> None:
    parts = [Held(2, ("image", "meta"), ("likes",)), Held(0, ("text", "image", "meta")), Held(1, ("image",), ("img",))]
    assert Held.of_all(parts) == Held(3, ("image",), ("likes", "img"))
    assert Held.of_all([]) == Held()
    assert Held.read(parts[0].record()) == parts[0]
