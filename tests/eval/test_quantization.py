"""The int8 check refuses posts none of which can be read."""

from __future__ import annotations

from pathlib import Path

import pytest

from faim.data.post import Post
from faim.eval.quantization import compare_exports
from faim.runtime import ExportedModel


def test_posts_none_of_which_can_be_read_are_refused_with_the_first_ones_error(exported: tuple[Path, Path]) -> None:
    model = ExportedModel(exported[1])
    posts = [
        Post(str(i), "words", images=["nowhere.png"], labels={"harm": "yes"}, origin=f"a.jsonl:{i}") for i in (1, 2)
    ]
    with pytest.raises(ValueError, match=r"^all 2 posts could not be read, so the int8 check has none to measure; "
                       r"the first: a.jsonl:1 \(post id='1'\) field 'images'"):  # fmt: skip
        compare_exports(model, model, posts)
