"""The base of the sources split from one file (``StratifiedFileSource``), and what the sources built on it (Davidson,
ETHOS) share: the refusals of a wrong root, a split the file does not give and a fraction out of range."""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterator
from pathlib import Path

import pytest

from faim.data.davidson import DavidsonSource
from faim.data.ethos import EthosSource
from faim.data.post import Post
from faim.data.sources import check_split
from faim.data.splits import StratifiedFileSource, stratified_split
from faim.registry import build_source_spec

ADAPTERS = [
    pytest.param(
        "davidson",
        DavidsonSource,
        "labeled_data.csv",
        "root must be the Davidson et al. \\(2017\\) folder holding labeled_data.csv",
        id="davidson",
    ),
    pytest.param(
        "ethos",
        EthosSource,
        "Ethos_Dataset_Binary.csv",
        "root must be the ETHOS folder holding Ethos_Dataset_Binary.csv",
        id="ethos",
    ),
]
"""The sources split from one file: registered name, class, the file and how an error says what the folder holds."""


class LineSource(StratifiedFileSource):
    """A base without ``FILE``: each line of its subclass's file is a post, stratified by its first word."""

    LAYOUT = "a folder holding one post a line"

    def posts_in(self, path: Path) -> Iterator[Post]:
        for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
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


@pytest.mark.parametrize(("name", "source", "file", "layout"), ADAPTERS)
@pytest.mark.parametrize("split", ["train", "validation"])
def test_a_root_pointed_at_the_wrong_folder_is_named_by_its_recipe_key_with_what_the_folder_holds(
    name, source, file, layout, split, tmp_path, monkeypatch
):
    built = build_source_spec({"type": name, "root": str(tmp_path)}, "data.sources[1]")
    monkeypatch.setattr(source, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    expected = f"^data.sources\\[1\\].root: {re.escape(str(tmp_path / file))} does not exist .*; {layout}"
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(FileNotFoundError, match=expected):
            read(built, split)


@pytest.mark.parametrize(("name", "source", "file", "layout"), ADAPTERS)
def test_a_split_the_file_does_not_give_is_refused_by_recipe_path_after_a_wrong_root(
    name, source, file, layout, tmp_path, monkeypatch
):
    (tmp_path / file).write_text("", encoding="utf-8")
    monkeypatch.setattr(source, "iter_posts", lambda self, path: pytest.fail(f"{path} was read"))
    built = build_source_spec({"type": name, "root": str(tmp_path)}, "data.sources[1]")
    expected = f"^.data.sources\\[1\\]: no split 'test' under {re.escape(str(tmp_path))}; found: train, validation.$"
    for read in (check_split, lambda source, split: source.posts(split)):
        with pytest.raises(KeyError, match=expected):
            read(built, "test")
    built = build_source_spec({"type": name, "root": str(tmp_path / "nowhere")}, "data.sources[1]")
    with pytest.raises(FileNotFoundError, match=f"^data.sources\\[1\\].root: .*{re.escape(file)} does not exist"):
        check_split(built, "test")


@pytest.mark.parametrize(("name", "source", "file", "layout"), ADAPTERS)
@pytest.mark.parametrize("fraction", [0.0, 1.0, -0.1])
def test_a_validation_fraction_out_of_range_is_refused_naming_the_source(
    name, source, file, layout, fraction, tmp_path
):
    with pytest.raises(ValueError, match=f"^{name}: validation_fraction must be in \\(0, 1\\), got {fraction}$"):
        source(str(tmp_path), validation_fraction=fraction)


def test_stratified_split_golden_assignment():
    """Pinned output: the split must not depend on the process (hash seeds) or the Python version."""
    assignment = stratified_split(list("aaaabbbbbb"), 0.5, 0)
    assert assignment == ["train", "train", "validation", "validation"] + [
        "train",
        "validation",
        "validation",
        "train",
        "train",
        "validation",
    ]
