"""The int8 check refuses posts none of which can be read, names the tasks no post is labelled for, and gives no
speed measured on too few posts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import export_posts

from faim.data.post import Post, as_posts
from faim.eval.quantization import TIMED_POSTS, compare_exports
from faim.runtime.model import ExportedModel


def test_posts_none_of_which_can_be_read_are_refused_with_the_first_ones_error(exported: tuple[Path, Path]) -> None:
    model = ExportedModel(exported[1])
    posts = [
        Post(str(i), "words", images=["nowhere.png"], labels={"harm": "yes"}, origin=f"a.jsonl:{i}") for i in (1, 2)
    ]
    with pytest.raises(ValueError, match=r"^all 2 posts could not be read, so the int8 check has none to measure; "
                       r"the first: a.jsonl:1 \(post id='1'\) field 'images'"):  # fmt: skip
        compare_exports(model, model, posts)


def test_the_tasks_no_post_is_labelled_for_are_named_and_too_few_posts_are_not_timed(
    exported: tuple[Path, Path],
) -> None:
    model = ExportedModel(exported[1])
    posts = as_posts(export_posts())
    for post, label in zip(posts, ["yes", "no", "yes", "no", "yes"]):
        post.labels = {"harm": label}
    check = compare_exports(model, model, posts)
    assert list(check.macro_f1) == ["harm"] and check.unmeasured == ["topic", "flags"]
    assert check.posts == len(posts) < TIMED_POSTS and not check.timed
    assert compare_exports(model, model, posts * (TIMED_POSTS // len(posts) + 1)).timed


def test_without_onnxruntime_importing_the_int8_check_names_the_missing_package() -> None:
    # as where onnxruntime is not installed: importing it raises ModuleNotFoundError
    script = "import sys; sys.modules['onnxruntime'] = None\nimport faim.eval.quantization"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert result.stderr.splitlines()[-1].startswith("ModuleNotFoundError: import of onnxruntime")
