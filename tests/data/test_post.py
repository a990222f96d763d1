"""Posts: the order they are batched in."""

from __future__ import annotations

from faim.data.post import Post, shortest_text_first


def test_shortest_text_first_orders_by_text_length_keeping_ties_in_input_order() -> None:
    posts = [Post("a", "a long text"), Post("b", "mid"), Post("c"), Post("d", "two"), Post("e", "")]
    assert shortest_text_first(posts) == [2, 4, 1, 3, 0]
