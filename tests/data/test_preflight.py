"""Checks of posts before a model reads them: pictures that are not there are refused up front, naming the rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from faim.data.post import Post
from faim.data.preflight import refuse_missing_pictures

KINDS = ["comments", "image", "text"]


def test_pictures_not_there_are_refused_naming_the_count_and_the_first_rows(tmp_path: Path) -> None:
    (tmp_path / "ok.png").write_bytes(b"not decoded here")
    (tmp_path / "empty.png").touch()
    (tmp_path / "folder.png").mkdir()
    refs = ["ok.png", "gone.png", "empty.png", "folder.png", b"", *[f"gone{n}.png" for n in range(4)]]
    posts = [Post(str(n), "t", images=["ok.png", ref], origin=f"p.jsonl:{n + 1}", image_root=tmp_path)
             for n, ref in enumerate(refs)]  # fmt: skip
    with pytest.raises(ValueError) as error:
        refuse_missing_pictures(posts, KINDS, 8, "p.jsonl")
    message = str(error.value)
    assert message.startswith("p.jsonl: 8 of 9 posts name a picture that is not there (missing, a folder or empty): ")
    assert "p.jsonl:2 (post id='1') field 'images': image 'gone.png': file not found (resolved to " in message
    assert "p.jsonl:3 (post id='2') field 'images': image 'empty.png': empty file" in message
    assert "p.jsonl:4 (post id='3') field 'images': image 'folder.png': is a directory" in message
    assert "p.jsonl:5 (post id='4') field 'images': image <0 bytes>: empty" in message
    assert "p.jsonl:6 (post id='5')" in message and "p.jsonl:7" not in message
    assert message.endswith("; and 3 more; mend the paths or the folder they resolve against, or leave those posts out")


def test_pictures_the_model_does_not_read_are_not_looked_at(tmp_path: Path) -> None:
    posts = [Post("a", "t", images=["ok.png", "gone.png"], image_root=tmp_path)]
    (tmp_path / "ok.png").write_bytes(b"x")
    refuse_missing_pictures(posts, ["text"], 8, "p.jsonl")  # a text model
    refuse_missing_pictures(posts, KINDS, 1, "p.jsonl")  # the second picture is beyond what a post gives the model
    with pytest.raises(ValueError, match=re.escape("p.jsonl: 1 of 1 posts name a picture that is not there")):
        refuse_missing_pictures(posts, KINDS, 2, "p.jsonl")
