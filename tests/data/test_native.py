"""The reading helpers shared by the native-format adapters (``faim.data.native``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from faim.data.davidson import DavidsonSource
from faim.data.ethos import EthosSource
from faim.data.liar import LiarSource
from faim.data.native import FilePerSplit, read_delimited
from faim.data.post import Post

LIAR_ROW = "\t".join(["1.json", "false", "a claim", "tax", "bob", "", "", "", "0", "1", "0", "0", "0", ""]) + "\n"
DAVIDSON = ",count,hate_speech_count,offensive_language_count,neither_count,class,tweet\n" + "".join(
    f"{i},3,0,0,3,{i % 3},tweet {i}\n" for i in range(30)
)
ETHOS = "comment;isHate\n" + "".join(f"comment {i};{i % 2}\n" for i in range(30))


class Folder(FilePerSplit):
    """A folder of one text file per split, a post per line."""

    SPLIT_FILES = {"train": "train.txt", "validation": "val.txt", "test": "test.txt"}
    LAYOUT = "root must hold train.txt, val.txt and test.txt"

    def __init__(self, root: Path) -> None:
        self.root = root
        self.recipe_path = "data"

    def posts_in(self, path: Path) -> Iterator[Post]:
        for index, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
            yield Post(id=str(index), text=line)


@pytest.mark.parametrize("split", ["train", "validation", "test"])
def test_posts_look_for_the_split_file_once(tmp_path, monkeypatch, split):
    for name in Folder.SPLIT_FILES.values():
        (tmp_path / name).write_text(f"{name}\n", encoding="utf-8")
    looked = []
    is_file = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda path: looked.append(path.name) or is_file(path))
    posts = Folder(tmp_path).posts(split)
    assert [post.text for post in posts] == [Folder.SPLIT_FILES[split]]
    assert looked == [Folder.SPLIT_FILES[split]]


@pytest.mark.parametrize(
    ("source", "files", "split"),
    [
        (LiarSource, {"train.tsv": LIAR_ROW, "valid.tsv": LIAR_ROW, "test.tsv": LIAR_ROW}, "train"),
        (LiarSource, {"train.tsv": LIAR_ROW, "valid.tsv": LIAR_ROW, "test.tsv": LIAR_ROW}, "test"),
        (DavidsonSource, {"labeled_data.csv": DAVIDSON}, "validation"),
        (EthosSource, {"Ethos_Dataset_Binary.csv": ETHOS}, "train"),
    ],
)
def test_the_dataset_readers_look_for_the_split_file_once(tmp_path, monkeypatch, source, files, split):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    looked = []
    is_file = Path.is_file
    monkeypatch.setattr(Path, "is_file", lambda path: looked.append(path.name) or is_file(path))
    assert source(str(tmp_path)).posts(split)
    assert looked == [source.SPLIT_FILES[split]]


def test_a_missing_split_file_is_named_and_a_missing_test_refused(tmp_path):
    (tmp_path / "train.txt").write_text("a\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError, match=r"^data\.root: .*val\.txt does not exist .*root must hold"):
        Folder(tmp_path).posts("validation")
    with pytest.raises(KeyError, match=r"data: no split 'test' under .*; found: train, validation"):
        Folder(tmp_path).posts("test")


def test_a_cell_that_is_not_utf8_is_named_by_line_and_column(tmp_path):
    path = tmp_path / "posts.csv"
    path.write_bytes(b'id,text\n1,fine\n2,"quoted\nover lines"\n3,caf\xe9\n4,"ab\xe2"\x82\xac\n')
    with pytest.raises(ValueError, match=r"posts\.csv:5: column 'text': not UTF-8 text \(byte 4 of the cell\)$"):
        list(read_delimited(path))
    path.write_bytes(b'id,text\n4,"ab\xe2"\x82\xac\n')
    assert list(read_delimited(path)) == [(2, {"id": "4", "text": "ab\u20ac"})]
    path.write_bytes(b"\xef\xbb\xbfid,t\xffext\n1,a\n")
    with pytest.raises(ValueError, match=r"posts\.csv:1: column 2: not UTF-8 text \(byte 2 of the cell\)$"):
        list(read_delimited(path))
