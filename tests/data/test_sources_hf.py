"""The ``hf`` source on local Hugging Face datasets: saved DatasetDict/Dataset folders and data files, offline."""

from __future__ import annotations

import csv
import json
import re
import socket
import warnings

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import damaged_parquet

from faim.data.collate import post_targets
from faim.data.hf import HfSource
from faim.data.sources import CsvSource, read_posts
from faim.data.targets import TaskSpec, refuse_flag_rows
from faim.notices import FaimWarning

datasets = pytest.importorskip("datasets")

ROWS = {
    "post_id": ["a", "b"],
    "tweet": ["first", None],
    "replies": [["r1", "r2"], []],
    "label": [1, None],
    "img": [{"bytes": b"\x89PNG", "path": None}, None],
}
FEATURES = {
    "post_id": datasets.Value("string"),
    "tweet": datasets.Value("string"),
    "replies": datasets.Sequence(datasets.Value("string")),
    "label": datasets.Value("int64"),
    "img": datasets.Image(),
}
COLUMNS = {"id": "post_id", "text": "tweet", "comments": "replies", "image": "img", "labels": {"hate": "label"}}
EXPECTED = [("a", "first", [b"\x89PNG"], ["r1", "r2"], {"hate": 1}), ("b", None, [], [], {})]


@pytest.fixture(autouse=True)
def offline(tmp_path, monkeypatch):
    """Fail on any network connection and keep datasets' cache inside the test folder."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", str(tmp_path / "hf-cache"))


@pytest.fixture
def dataset():
    return datasets.Dataset.from_dict(ROWS, features=datasets.Features(FEATURES))


def fields(posts):
    return [(p.id, p.text, p.images, p.comments, p.labels) for p in posts]


def test_saved_dataset_dict_with_default_split_names(tmp_path, dataset):
    datasets.DatasetDict({"train": dataset, "validation": dataset, "extra": dataset}).save_to_disk(tmp_path / "dd")
    source = HfSource(path=str(tmp_path / "dd"), columns=COLUMNS)
    assert source.splits() == ["train", "validation"]
    posts = source.posts("validation")
    assert fields(posts) == EXPECTED
    assert posts[0].origin == f"{tmp_path / 'dd' / 'validation'}:0"
    assert posts[0].image_root == tmp_path.absolute()
    assert source.describe("train") == str(tmp_path / "dd" / "train")
    assert source.fingerprint("train") == source.fingerprint("validation")


def test_split_names_inside_the_dict(tmp_path, dataset):
    datasets.DatasetDict({"train": dataset, "valid": dataset}).save_to_disk(tmp_path / "dd")
    source = HfSource(path=str(tmp_path / "dd"), validation="valid", columns=COLUMNS)
    assert source.splits() == ["validation"] and fields(source.posts("validation")) == EXPECTED
    with pytest.raises(KeyError, match="split 'dev' is not in .* \\(splits: train, valid\\)"):
        HfSource(path=str(tmp_path / "dd"), test="dev")


def test_path_must_be_a_saved_dataset_dict(tmp_path, dataset):
    dataset.save_to_disk(tmp_path / "single")
    with pytest.raises(FileNotFoundError, match="not a folder saved with DatasetDict.save_to_disk"):
        HfSource(path=str(tmp_path / "single"))


def test_a_path_not_there_is_named_by_its_recipe_key_resolved_and_read_from_the_working_directory(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # a recipe read from another folder, whose data path names a folder beside it
    resolved = re.escape(str(tmp_path / "my ds"))
    from_recipe = "a recipe's data paths are read from the working directory, not its folder"
    with pytest.raises(
        FileNotFoundError, match=f"^data.path: my ds does not exist \\(resolved to {resolved}\\); {from_recipe}$"
    ):
        HfSource(path="my ds")


@pytest.mark.parametrize("path", ["", "  "])
def test_an_empty_path_is_refused_saying_to_write_null_for_none(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # which an empty path would otherwise name
    with pytest.raises(ValueError, match=r"^hf: path is empty .*which names no folder; .* or write null for none"):
        HfSource(path=path)


def test_saved_dataset_folder_per_split_and_read_posts(tmp_path, dataset):
    dataset.save_to_disk(tmp_path / "train_ds")
    source = HfSource(train=str(tmp_path / "train_ds"), columns=COLUMNS)
    assert fields(source.posts("train")) == EXPECTED
    assert fields(read_posts(tmp_path / "train_ds", columns=COLUMNS)) == EXPECTED


def test_dataset_dict_folder_given_as_one_split_is_explained(tmp_path, dataset):
    datasets.DatasetDict({"train": dataset}).save_to_disk(tmp_path / "dd")
    with pytest.raises(ValueError, match="holds a DatasetDict \\(splits: train\\)"):
        list(HfSource(columns=COLUMNS).iter_posts(tmp_path / "dd"))


def test_local_data_file_through_load_dataset(tmp_path):
    path = tmp_path / "posts.jsonl"
    path.write_text(
        "".join(json.dumps({"id": i, "text": f"t{i}", "y": i % 2}) + "\n" for i in range(3)), encoding="utf-8"
    )
    source = HfSource(test=str(path), columns={"labels": {"y": "y"}})
    posts = source.posts("test")
    assert [(p.id, p.text, p.labels) for p in posts] == [
        ("0", "t0", {"y": 0}),
        ("1", "t1", {"y": 1}),
        ("2", "t2", {"y": 0}),
    ]
    assert posts[0].image_root == tmp_path.absolute()


def test_missing_column_and_missing_file(tmp_path, dataset):
    dataset.save_to_disk(tmp_path / "ds")
    with pytest.raises(
        ValueError, match="column 'text' \\(columns.text\\) not found \\(did you mean 'tweet'\\?\\); available: post_id"
    ):
        HfSource(train=str(tmp_path / "ds"), columns={"text": "text"}).posts("train")
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl does not exist"):
        HfSource(train=str(tmp_path / "nowhere.jsonl")).posts("train")


@pytest.mark.parametrize("suffix", ["csv", "tsv"])
def test_a_csv_or_tsv_files_cells_are_read_as_the_text_they_hold_as_the_csv_source_reads_them(tmp_path, suffix):
    path = tmp_path / f"posts.{suffix}"
    rows = [
        ["id", "text", "label", "likes", "replies"],
        ["007", "12", "1", "3", '["a", "b"]'],
        ["7", "NA", "0", "", ""],
    ]
    with open(path, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle, delimiter="\t" if suffix == "tsv" else ",").writerows(
            [*rows, ["0012", "1.50", "x", "1.5", ""]]
        )
    columns = {"labels": {"hate": "label"}, "meta": ["likes"], "comments": "replies"}

    def read(source):
        return [
            (p.id, p.text, p.comments, p.labels, p.meta)
            for p in source(train=str(path), columns=columns).posts("train")
        ]

    assert read(HfSource) == read(CsvSource)
    assert read(HfSource)[:2] == [
        ("007", "12", ["a", "b"], {"hate": 1}, {"likes": 3}),
        ("7", "NA", [], {"hate": 0}, {"likes": None}),
    ]


def test_a_saved_dataset_whose_arrow_file_is_cut_short_is_refused_naming_it(tmp_path):
    rows = {"id": [str(i) for i in range(400)], "text": [f"post {i} " * 20 for i in range(400)]}
    datasets.Dataset.from_dict(rows).save_to_disk(tmp_path / "saved", num_shards=2)
    cut = tmp_path / "saved" / "data-00001-of-00002.arrow"
    cut.write_bytes(cut.read_bytes()[:-4000])
    said = f"{tmp_path / 'saved'}: a saved dataset whose file {cut.name} cannot be read (Expected to be able to read"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}.*; save the dataset again, or restore the file$"):
        list(read_posts(tmp_path / "saved"))


def test_data_files_holding_no_row_give_none_and_are_warned_of_as_every_source_does(tmp_path):
    spark = tmp_path / "spark"
    spark.mkdir()
    schema = pa.schema([("id", pa.string()), ("text", pa.string())])
    pq.write_table(pa.table({"id": ["a"], "text": ["one"]}, schema=schema), spark / "part-0.parquet")
    for index in (1, 2):  # a Spark dump's parts of no row
        pq.write_table(schema.empty_table(), spark / f"part-{index}.parquet")
    (tmp_path / "header.csv").write_text("id,text\n")
    (tmp_path / "header.tsv").write_text("id\ttext\n")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    with pytest.warns(FaimWarning, match=r"2 of the 3 input files read hold no row .*part-1.parquet, .*part-2.parquet"):
        assert [post.id for post in HfSource(train=str(spark)).posts("train")] == ["a"]
    for name in ("header.csv", "header.tsv", "blank.jsonl"):
        with pytest.warns(FaimWarning, match=f"{name}: holds no row"):
            assert HfSource(train=str(tmp_path / name)).posts("train") == []


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("damaged.parquet", None, "OSError: Couldn't deserialize thrift"),
        ("posts.jsonl", '{"id": 1, "text": "a"}\n{"id": 2, "text": \n', "ArrowInvalid: JSON parse error"),
        ("posts.csv", 'id,text\n1,"never closed\n2,b\n', "ParserError: Error tokenizing data"),
    ],
)
def test_a_data_file_hugging_face_datasets_cannot_read_is_refused_naming_it_and_why(tmp_path, name, content, said):
    path = tmp_path / name
    if content is None:
        damaged_parquet(path, 12, 4, group=1)
    else:
        path.write_text(content)
    with pytest.raises(ValueError, match=f"^{re.escape(f'{path}: Hugging Face datasets cannot read it ({said}')}"):
        HfSource(train=str(path)).posts("train")


def test_a_class_label_column_is_read_by_its_class_names_where_a_task_names_them_in_another_order(tmp_path) -> None:
    classes = datasets.ClassLabel(names=["hate", "offensive", "neither"])
    features = {"text": datasets.Value("string"), "label": classes, "tags": datasets.Sequence(classes)}
    rows = {"text": ["x", "y", "z"], "label": [0, 1, -1], "tags": [[0, 2], [], [1]]}
    datasets.Dataset.from_dict(rows, features=datasets.Features(features)).save_to_disk(tmp_path / "ds")
    posts = HfSource(train=str(tmp_path / "ds"), columns={"labels": ["label", "tags"]}).posts("train")
    ordered = TaskSpec("label", "multiclass", ("neither", "offensive", "hate"))  # the dataset's order reversed
    with pytest.warns(FaimWarning, match=r"column 'label' .* read by their names in another order"):
        assert [post_targets(post, [ordered]) for post in posts[:2]] == [{"label": 2}, {"label": 1}]
    assert posts[2].labels["label"] == -1  # no class: the dataset's mark of a post without a label
    tags = TaskSpec("tags", "multilabel", ("neither", "offensive", "hate"))
    with pytest.warns(FaimWarning, match=r"column 'tags' .* read by their names in another order"):
        assert post_targets(posts[0], [tags]) == {"tags": [1.0, 0.0, 1.0]}
    other = TaskSpec("label", "multiclass", ("none", "rude", "hateful"))  # named otherwise: read by index as before
    assert post_targets(posts[1], [other]) == {"label": 1}
    pair = datasets.Sequence(datasets.ClassLabel(names=["spam", "scam"]))
    rows = {"text": ["x", "y"], "tags": [[1, 0], [0, 1]]}
    datasets.Dataset.from_dict(rows, features=datasets.Features({"text": features["text"], "tags": pair})).save_to_disk(
        tmp_path / "pairs"
    )
    both = HfSource(train=str(tmp_path / "pairs"), columns={"labels": ["tags"]}).posts("train")
    tags = TaskSpec("tags", "multilabel", ("spam", "scam"))
    refuse_flag_rows([tags], both, "pairs")  # each a list of the dataset's classes, no row of flags
    assert [post_targets(post, [tags]) for post in both] == [{"tags": [1.0, 1.0]}] * 2


def test_a_class_label_column_some_of_whose_names_no_label_has_is_read_by_index_and_one_reordered_is_warned_of(
    tmp_path,
) -> None:
    classes = datasets.ClassLabel(names=["normal", "hate"])
    features = datasets.Features({"text": datasets.Value("string"), "label": classes})
    datasets.Dataset.from_dict({"text": ["x", "y"], "label": [0, 1]}, features=features).save_to_disk(tmp_path / "ds")
    posts = HfSource(train=str(tmp_path / "ds"), columns={"labels": ["label"]}).posts("train")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # read by index as before: no word of names
        for labels in [("hate", "offensive"), ("not hate", "hate"), ("normal", "hate", "offensive")]:
            task = TaskSpec("label", "multiclass", labels)  # normal no label of the first two: two classes, not one
            assert [post_targets(post, [task]) for post in posts] == [{"label": 0}, {"label": 1}]
    task = TaskSpec("label", "multiclass", ("hate", "normal"))
    with pytest.warns(FaimWarning) as caught:
        assert [post_targets(post, [task]) for post in posts * 2] == [{"label": 1}, {"label": 0}] * 2
    assert len(caught) == 1  # once for the column, however many posts read it
    assert re.fullmatch(
        r"task 'label': column 'label' holds classes of a dataset \(ClassLabel\), read by their names in another "
        r"order than their indices \(class 0 'normal' as label 1, class 1 'hate' as label 0\); a model an earlier "
        r"faim trained on it read them by index, each as the label of its index, so its figures on them change",
        str(caught[0].message),
    )
