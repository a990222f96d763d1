"""The base of the sources split from one file (``StratifiedFileSource``)."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from pathlib import Path

from faim.data.post import Post
from faim.data.splits import StratifiedFileSource


class LineSource(StratifiedFileSource):
    """A base without ``FILE``: each line of its subclass's file is a post, stratified by its first word."""

    LAYOUT = "a folder holding one post a line"

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        for index, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines()):
            yield Post(id=str(index), text=line)

    def stratum(self, post: Post) -> Hashable:
        return (post.text or "").split()[0]


class Lines(LineSource):
    FILE = "lines.txt"


def test_a_base_without_a_file_is_defined_and_its_subclass_reads_both_splits_from_its_file(tmp_path: Path) -> None:
    (tmp_path / "lines.txt").write_text("".join(f"{'ab'[i % 2]} post {i}\n" for i in range(20)), encoding="utf-8")
    source = Lines(str(tmp_path), validation_fraction=0.25, seed=0)
    assert Lines.SPLIT_FILES == {"train": "lines.txt", "validation": "lines.txt"}
    train, validation = source.posts("train"), source.posts("validation")
    assert len(train) == 14 and len(validation) == 6
    assert sorted(post.id for post in train + validation) == sorted(str(i) for i in range(20))
    assert "SPLIT_FILES" not in vars(LineSource)
