"""Posts: their texts as a list, the order they are batched in, and how their rows are put back."""

from __future__ import annotations

from faim.data.post import Post, length_batches, post_texts, shortest_text_first


def test_shortest_text_first_orders_by_text_length_keeping_ties_in_input_order() -> None:
    posts = [Post("a", "a long text"), Post("b", "mid"), Post("c"), Post("d", "two"), Post("e", "")]
    assert shortest_text_first(posts) == [2, 4, 1, 3, 0]


def test_length_batches_put_the_shortest_together_and_say_where_each_row_lands() -> None:
    posts = [Post("a", "a long text"), Post("b", "mid"), Post("c"), Post("d", "two"), Post("e", "")]
    batches, positions = length_batches(posts, 2)
    assert [[post.id for post in batch] for batch in batches] == [["c", "e"], ["b", "d"], ["a"]]
    laid_out = [post.id for batch in batches for post in batch]
    assert [laid_out[position] for position in positions] == ["a", "b", "c", "d", "e"]


def test_post_texts_keeps_the_order_and_reads_a_post_without_text_as_empty() -> None:
    posts = [Post("a", "first"), Post("b"), Post("c", ""), Post("d", "last")]
    assert post_texts(posts) == ["first", "", "", "last"]
    assert post_texts(post for post in posts if post.id != "a") == ["", "", "last"]
