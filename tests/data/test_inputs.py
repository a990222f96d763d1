"""What a file, folder or glob stands for, read the same way by evaluation, training and batch scoring."""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faim.artifact_manifest import EXPORT_MANIFEST, MANIFEST, WEIGHTS
from faim.data.columns import ColumnMap
from faim.data.hateful_memes import HatefulMemesSource
from faim.data.inputs import check_apart_from_data, check_exists, close_reading, find_inputs, input_name
from faim.data.native import read_delimited
from faim.data.sources import JsonlSource, read_posts
from faim.eval.report import WRITTEN, replace_written
from faim.explain.report import LISTING
from faim.notices import FaimWarning
from faim.scoring.engine import score_dump
from faim.scoring.inputs import read_shards


def write_jsonl(path: Path, n: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"id": f"{path.stem}-{i}", "text": f"post {i}"}) + "\n" for i in range(n)))
    return path


def test_find_inputs_file_folder_and_glob(tmp_path: Path) -> None:
    a, b = write_jsonl(tmp_path / "a.jsonl", 3), write_jsonl(tmp_path / "b.jsonl", 2)
    (tmp_path / "_manifest.jsonl").write_text("{}\n")
    assert find_inputs(a) == [a]
    assert find_inputs(tmp_path) == [a, b]
    assert find_inputs(str(tmp_path / "*.jsonl")) == [a, b]
    with pytest.raises(FileNotFoundError, match="no input files"):
        find_inputs(tmp_path / "none-*.jsonl")


def test_the_name_of_a_file_folder_or_glob_holds_no_wildcard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "dumps" / "2026-01").mkdir(parents=True)
    (tmp_path / "dumps" / "2026-01" / "a.jsonl").write_text("{}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert input_name("dumps/2026-01/a.jsonl") == "a"
    assert input_name("dumps/") == input_name(tmp_path / "dumps") == "dumps"
    assert input_name("dumps/2026-*/*.jsonl") == input_name("dumps/**/*.jsonl") == "dumps"
    assert input_name("*.jsonl") == input_name(".") == tmp_path.name


def test_a_glob_naming_a_folder_by_its_wildcards_escaped_names_that_folder_as_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(tmp_path / "data[2024]" / "a.jsonl", 1)
    monkeypatch.chdir(tmp_path)
    assert find_inputs("data[[]2024]/*.jsonl") == [Path("data[2024]/a.jsonl")]
    assert input_name("data[[]2024]/*.jsonl") == "data[2024]"  # the working directory's name before
    with pytest.raises(ValueError, match=r"^-o data\[2024\]: that is the folder DATA is read from"):  # accepted before
        check_apart_from_data("data[[]2024]/*.jsonl", "data[2024]", "the report")
    check_apart_from_data("data[[]2024]/*.jsonl", ".", "the report")
    assert input_name("d*[[]2024]/*.jsonl") == tmp_path.name  # a wildcard beside an escaped one: still a wildcard


def test_a_folder_stands_for_its_inputs_recursively_and_skips_hidden_names(tmp_path: Path) -> None:
    a, b = write_jsonl(tmp_path / "a.jsonl", 1), write_jsonl(tmp_path / "sub" / "b.jsonl", 1)
    write_jsonl(tmp_path / ".cache" / "c.jsonl", 1)
    write_jsonl(tmp_path / "_per_post" / "d.jsonl", 1)
    (tmp_path / "notes.txt").write_text("not posts")
    with pytest.warns(FaimWarning, match="1 file in it is not read: .*notes.txt"):
        assert find_inputs(tmp_path) == [a, b]


def unread_dump(dump: Path) -> str:
    """Write a dump of two posts, an input faim does not read in a folder below and another beside them, hidden files
    and a picture; what is said of it."""
    write_jsonl(dump / "a.jsonl", 2)
    (dump / "z.jsonl.gz").write_bytes(b"\x1f\x8b")
    (dump / "sub").mkdir()
    (dump / "sub" / "notes.txt").write_text("not posts")
    (dump / ".DS_Store").write_bytes(b"")
    (dump / "_SUCCESS").write_bytes(b"")
    (dump / "images").mkdir()
    (dump / "images" / "p.png").write_bytes(b"")
    return (
        f"{dump}: 2 files in it are not read: {dump / 'sub' / 'notes.txt'}, {dump / 'z.jsonl.gz'}: faim reads a "
        "folder's .jsonl, .ndjson, .json, .csv, .tsv and .parquet files (not compressed) and saved datasets"
    )


@pytest.mark.parametrize("read", ["find_inputs", "read_posts", "score_dump"])
def test_files_a_folder_holds_that_are_not_read_are_warned_of_by_eval_and_scoring_alike(
    tmp_path: Path, read: str, request: pytest.FixtureRequest
) -> None:
    dump = tmp_path / "dump"
    said = unread_dump(dump)
    with pytest.warns(FaimWarning, match=re.escape(said)):
        if read == "find_inputs":
            assert find_inputs(dump) == [dump / "a.jsonl"]
        elif read == "read_posts":
            assert [post.id for post in read_posts(dump)] == ["a-0", "a-1"]
        else:
            model = request.getfixturevalue("tiny_model_dir")
            assert score_dump(model, dump, tmp_path / "out", workers=1, progress=False).rows == 2


def test_files_a_folder_holds_that_are_not_read_are_warned_of_once_however_often_it_is_looked_in(
    tmp_path: Path,
) -> None:
    said = unread_dump(tmp_path / "dump")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        find_inputs(tmp_path / "dump")
        list(read_posts(tmp_path / "dump"))
    assert [str(warning.message) for warning in caught if warning.category is FaimWarning] == [said]


def test_many_files_a_folder_holds_that_are_not_read_are_counted_and_the_first_three_named(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "a.jsonl", 1)
    for index in range(5):
        (tmp_path / f"part-{index}.jsonl.gz").write_bytes(b"")
    named = ", ".join(str(tmp_path / f"part-{index}.jsonl.gz") for index in range(3))
    with pytest.warns(FaimWarning, match=re.escape(f"{tmp_path}: 5 files in it are not read: {named} and 2 more: ")):
        find_inputs(tmp_path)


def test_a_folder_of_inputs_pictures_and_hidden_files_alone_is_read_without_a_warning(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", 1)
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "p.JPG").write_bytes(b"")
    (tmp_path / ".DS_Store").write_bytes(b"")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert find_inputs(tmp_path) == [a]


def test_a_folder_holding_a_scoring_run_inside_a_folder_is_not_read_as_input(tmp_path: Path) -> None:
    posts = write_jsonl(tmp_path / "posts.jsonl", 1)
    (tmp_path / "scores").mkdir()
    (tmp_path / "scores" / "_run.json").write_text("{}", encoding="utf-8")
    pq.write_table(pa.table({"id": ["posts-0"]}), tmp_path / "scores" / "part-00000-000000.parquet")
    assert find_inputs(tmp_path) == [posts]


def test_a_report_faim_eval_wrote_inside_a_folder_is_not_read_as_input_by_a_folder_or_a_glob(tmp_path: Path) -> None:
    posts = write_jsonl(tmp_path / "posts.jsonl", 1)
    report = tmp_path / "report"  # faim eval MODEL DATA -o DATA/report
    report.mkdir()
    for name in ("metrics.json", "metrics.md"):
        (report / name).write_text('{\n  "tasks": {}\n}\n', encoding="utf-8")
    replace_written(report, ["metrics.json", "metrics.md", WRITTEN])
    with pytest.warns(FaimWarning) as said:  # metrics.md is not warned of as a file not read: the report is not read
        assert find_inputs(tmp_path) == [posts] == find_inputs(str(tmp_path / "**" / "*.json*"))
    assert [str(warning.message) for warning in said] == [
        f"passed over {report}: faim eval wrote it (its {WRITTEN}); move what it holds out of it to read it"
    ]
    theirs = tmp_path / "theirs"  # a record of that name that faim did not write is data like any other file
    theirs.mkdir()
    (theirs / WRITTEN).write_text(json.dumps({"files": ["a.json"]}), encoding="utf-8")
    assert find_inputs(tmp_path) == [posts, theirs / WRITTEN]


def test_explanations_a_saved_model_and_an_export_faim_wrote_inside_a_folder_are_not_read_as_input(
    tmp_path: Path,
) -> None:
    posts = write_jsonl(tmp_path / "posts.jsonl", 1)
    written = {
        "explained": [LISTING, "0000-post-0.json"],  # faim explain MODEL DATA -o DATA/explained
        "model": [MANIFEST, WEIGHTS, "recipe.yaml"],
        "export": [EXPORT_MANIFEST, "config.json"],
    }
    for folder, names in written.items():
        (tmp_path / folder).mkdir()
        for name in names:
            (tmp_path / folder / name).write_text('{\n  "posts": []\n}\n', encoding="utf-8")
    assert find_inputs(tmp_path) == [posts] == find_inputs(str(tmp_path / "**" / "*.json*"))
    (tmp_path / "model" / WEIGHTS).unlink()  # a faim.json without a model's weights is a file of posts like any other
    assert find_inputs(tmp_path) == [tmp_path / "model" / MANIFEST, posts]


def test_a_training_run_faim_wrote_inside_a_folder_is_passed_over_from_its_start(tmp_path: Path) -> None:
    posts = write_jsonl(tmp_path / "posts.jsonl", 1)
    run = tmp_path / "run"  # train.output_dir: DATA/run, stopped after its recipe, before its record and logs
    (run / "checkpoints" / "version_0").mkdir(parents=True)
    (run / "checkpoints" / "version_0" / "recipe.yaml").write_text("train: {}\n", encoding="utf-8")
    (run / "checkpoints" / "version_0" / "last.ckpt").write_bytes(b"")
    said = f"passed over {run}: faim train wrote it (its checkpoints/version_0/recipe.yaml)"
    with pytest.warns(FaimWarning, match=re.escape(said)):
        assert find_inputs(tmp_path) == [posts]
    (run / "logs" / "version_0").mkdir(parents=True)  # written as it trains, and its record once it is done
    (run / "logs" / "version_0" / "metrics.csv").write_text("epoch,val/loss\n0,0.5\n", encoding="utf-8")
    (run / "train_record.json").write_text("{}", encoding="utf-8")
    assert find_inputs(tmp_path) == [posts] == find_inputs(str(tmp_path / "**" / "*.*"))
    (run / "checkpoints" / "version_0" / "recipe.yaml").unlink()  # no run's recipe: a folder of files like any other
    assert find_inputs(tmp_path) == [posts, run / "logs" / "version_0" / "metrics.csv", run / "train_record.json"]


def test_a_folder_passed_over_as_one_faim_wrote_is_said_once_naming_the_file_that_marks_it(tmp_path: Path) -> None:
    posts = write_jsonl(tmp_path / "proj" / "data" / "posts.jsonl", 1)
    (posts.parent / LISTING).write_text("{}", encoding="utf-8")  # a copy of an explanation's listing beside posts
    other = write_jsonl(tmp_path / "proj" / "other.jsonl", 1)
    said = f"passed over {posts.parent}: faim explain wrote it (its {LISTING}); move what it holds out of it to read it"
    with pytest.warns(FaimWarning) as warned:
        assert find_inputs(str(tmp_path / "proj" / "**" / "*.jsonl")) == [other]
    assert [str(warning.message) for warning in warned] == [said]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once a process, as the files a folder does not read are
        assert find_inputs(tmp_path / "proj") == [other]
    (tmp_path / "proj" / "model").mkdir()
    for name in (MANIFEST, WEIGHTS):
        (tmp_path / "proj" / "model" / name).write_text("{}", encoding="utf-8")
    with pytest.warns(FaimWarning, match=re.escape(f"passed over {tmp_path / 'proj' / 'model'}: faim saved a model")):
        assert find_inputs(tmp_path / "proj") == [other]


def test_a_folder_a_glob_matches_stands_for_its_inputs_as_a_spark_dumps_folder_of_parts(tmp_path: Path) -> None:
    (tmp_path / "b.parquet").mkdir()  # as Spark writes a table: a folder of parts, named as a file
    parts = [tmp_path / "b.parquet" / f"part-0000{n}.parquet" for n in range(2)]
    for part in [tmp_path / "a.parquet", *parts]:
        pq.write_table(pa.table({"id": [part.name], "text": ["t"]}), part)
    assert find_inputs(str(tmp_path / "*.parquet")) == [tmp_path / "a.parquet", *parts]  # the parts dropped before
    assert find_inputs(str(tmp_path / "**")) == find_inputs(tmp_path)  # each file once, however many matches hold it
    (tmp_path / "x.jsonl").mkdir()  # as Hive writes one, named as a JSON Lines file
    (tmp_path / "x.jsonl" / "000000_0.jsonl").write_text('{"id": "x", "text": "t"}\n', encoding="utf-8")
    (tmp_path / "validation").mkdir()  # a folder named as no input: passed over, as the glob's other folders are
    (tmp_path / "validation" / "v.jsonl").write_text('{"id": "v", "text": "t"}\n', encoding="utf-8")
    expected = [tmp_path / "a.parquet", *parts, tmp_path / "x.jsonl" / "000000_0.jsonl"]
    assert find_inputs(str(tmp_path / "*")) == expected  # validation/v.jsonl read too before


def test_a_glob_matching_folders_not_named_as_inputs_alone_says_it_matched_them(tmp_path: Path) -> None:
    for split in ("train", "validation"):
        write_jsonl(tmp_path / "data" / split / "a.jsonl", 1)
    said = re.escape(f"it matches 2 folders ({tmp_path / 'data' / 'train'}, {tmp_path / 'data' / 'validation'})")
    with pytest.raises(FileNotFoundError, match=f"no input files .*; {said}, which a glob reads only where"):
        find_inputs(str(tmp_path / "data" / "*"))
    assert find_inputs(str(tmp_path / "data" / "*" / "**")) == find_inputs(tmp_path / "data")  # as it says
    with pytest.raises(FileNotFoundError, match=r"no input files \([^;]*\)$"):  # none matched: nothing more to say
        find_inputs(str(tmp_path / "data" / "x*"))


def test_a_glob_naming_a_folder_whose_name_holds_a_wildcard_says_how_to_name_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_jsonl(tmp_path / "data[2024]" / "a.jsonl", 1)
    monkeypatch.chdir(tmp_path)
    assert find_inputs("data[2024]") == find_inputs("data[2024]/a.jsonl") == [Path("data[2024]/a.jsonl")]  # as named
    said = "data[2024] is a folder, but a glob reads *, ? and [...] in a name as wildcards"
    with pytest.raises(
        FileNotFoundError,
        match=re.escape(
            f"; {said} ([ab] one character, a or b): write each in brackets to name it (data[[]2024]/*.jsonl)"
        ),
    ):
        find_inputs("data[2024]/*.jsonl")  # [2024] one character of 2, 0 and 4: data2/ and data0/ match, not itself
    assert find_inputs("data[[]2024]/*.jsonl") == [Path("data[2024]/a.jsonl")]  # as it says
    with pytest.raises(FileNotFoundError, match=r"no input files \([^;]*\)$"):  # a folder not there: nothing to say
        find_inputs("data[2025]/*.jsonl")


def test_a_glob_skips_what_a_folder_it_starts_in_skips_below_where_its_wildcards_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    posts = tmp_path / "dump" / "2026" / "posts.parquet"
    posts.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": ["0"], "text": ["t"]}), posts)
    run = tmp_path / "dump" / "scores"  # an earlier run's output, its per-post parts too
    (run / "_per_post").mkdir(parents=True)
    (run / "_run.json").write_text("{}", encoding="utf-8")
    for part in (run / "part-00000-000000.parquet", run / "_per_post" / "part-00000-000000.parquet"):
        pq.write_table(pa.table({"id": ["0"]}), part)
    write_jsonl(tmp_path / "dump" / "_stash" / "c.jsonl", 1)
    assert find_inputs(str(tmp_path / "dump" / "**" / "*.parquet")) == [posts] == find_inputs(tmp_path / "dump")
    with pytest.raises(FileNotFoundError, match="no input files"):
        find_inputs(str(tmp_path / "dump" / "*" / "*.jsonl"))
    assert find_inputs(str(run / "*.parquet")) == [run / "part-00000-000000.parquet"]  # named: read
    monkeypatch.chdir(tmp_path / "dump")
    assert find_inputs("*/*.parquet") == [Path("2026/posts.parquet")]


def test_a_glob_looks_at_each_folder_between_once_per_expansion_however_many_matches_lie_under_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [write_jsonl(tmp_path / "dump" / f"d{d}" / "sub" / f"f{f}.jsonl", 1) for d in range(3) for f in range(4)]
    probed = Counter()
    stat = os.stat

    def counted(path: str | Path, *args: Any, **kwargs: Any) -> os.stat_result:
        if Path(path).name == "_run.json":  # a folder between looked at for a scoring run's record
            probed[Path(path).parent] += 1
        return stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    spec = str(tmp_path / "dump" / "**" / "*.jsonl")
    assert find_inputs(spec) == files
    folders = [tmp_path / "dump" / f"d{d}" / sub for d in range(3) for sub in ("", "sub")]
    assert probed == Counter(folders)
    (tmp_path / "dump" / "d1" / "sub" / "_run.json").write_text("{}", encoding="utf-8")
    assert find_inputs(spec) == files[:4] + files[8:]  # looked at again: it holds a run now


def test_a_missing_file_and_an_unknown_extension_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"posts.xlsx: unknown extension; known: \.jsonl"):
        find_inputs(tmp_path / "posts.xlsx")
    with pytest.raises(FileNotFoundError, match=r"posts.jsonl does not exist"):
        find_inputs(tmp_path / "posts.jsonl")


def test_a_file_or_folder_not_there_is_named_as_given_and_resolved_with_what_chose_it_and_what_should_be_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = re.escape(str(tmp_path / "ds" / "posts.txt"))
    with pytest.raises(FileNotFoundError, match=f"^ds/posts.txt does not exist \\(resolved to {resolved}\\)$"):
        check_exists(Path("ds/posts.txt"))
    from_recipe = "a recipe's data paths are read from the working directory, not its folder"
    with pytest.raises(
        FileNotFoundError, match=f"^data.root: ds/posts.txt does not exist \\(resolved to {resolved}\\); {from_recipe}$"
    ):
        check_exists(Path("ds/posts.txt"), "data.root")
    with pytest.raises(FileNotFoundError, match=f"^data.root: {resolved} does not exist \\(resolved to {resolved}\\)$"):
        check_exists(tmp_path / "ds" / "posts.txt", "data.root")  # a path given whole was read from nowhere else
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "posts.txt").mkdir()
    with pytest.raises(
        FileNotFoundError, match=f"^data.root: ds/posts.txt does not exist \\(resolved to {resolved}\\)$"
    ):
        check_exists(Path("ds/posts.txt"), "data.root")  # there, a folder: found where it was looked for
    with pytest.raises(
        FileNotFoundError, match=f"^ds/posts.txt does not exist \\(resolved to {resolved}\\); root must$"
    ):
        check_exists(Path("ds/posts.txt"), hint="root must")
    assert check_exists(Path("ds/posts.txt"), folder=True) == Path("ds/posts.txt")


@pytest.mark.parametrize("read", ["read_posts", "read_delimited", "hateful_memes"])
def test_every_reader_of_a_named_file_says_the_same_of_one_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, read: str
) -> None:
    monkeypatch.chdir(tmp_path)
    readers = {
        "read_posts": lambda path: list(read_posts(path)),
        "read_delimited": read_delimited,
        "hateful_memes": lambda path: list(HatefulMemesSource(".").iter_posts(path)),
    }
    with pytest.raises(FileNotFoundError) as raised:
        readers[read](Path("gone.jsonl"))
    with pytest.raises(FileNotFoundError) as checked:
        check_exists(Path("gone.jsonl"))
    assert str(raised.value) == str(checked.value)


def test_a_saved_dataset_folder_is_one_input_for_eval_training_and_scoring(
    tmp_path: Path, tiny_model_dir: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    folder = tmp_path / "saved"
    datasets.Dataset.from_dict({"id": ["a", "b"], "text": ["first", "second"]}).save_to_disk(folder)
    assert find_inputs(folder) == [folder]
    assert find_inputs(tmp_path) == [folder]  # inside a folder too, and its own files are not read one by one
    assert [p.text for p in read_posts(folder)] == ["first", "second"]
    score_dump(tiny_model_dir, folder, tmp_path / "out", workers=1, progress=False)
    rows = pq.read_table(tmp_path / "out").to_pylist()
    assert [(row["id"], row["error"]) for row in rows] == [("a", None), ("b", None)]


def test_a_recipe_split_may_be_a_folder_or_a_glob_of_its_format(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "train" / "part-1.jsonl", 2)
    write_jsonl(tmp_path / "train" / "part-2.jsonl", 3)
    folder = JsonlSource(train=str(tmp_path / "train")).posts("train")
    glob = JsonlSource(train=str(tmp_path / "train" / "*.jsonl")).posts("train")
    assert (
        [p.id for p in folder]
        == [p.id for p in glob]
        == [f"part-1-{i}" for i in range(2)] + [f"part-2-{i}" for i in range(3)]
    )
    (tmp_path / "train" / "more.csv").write_text("id,text\nx,y\n")
    with pytest.raises(ValueError, match=r"more.csv is not jsonl, which this source reads"):
        JsonlSource(train=str(tmp_path / "train")).posts("train")


def test_a_saved_dataset_dict_is_refused_naming_its_splits_and_one_to_point_at(tmp_path: Path) -> None:
    folder = tmp_path / "dd"
    for split in ("train", "validation"):
        (folder / split).mkdir(parents=True)
        (folder / split / "state.json").write_text("{}")
        (folder / split / "dataset_info.json").write_text("{}")
    (folder / "dataset_dict.json").write_text('{"splits": ["train", "validation"]}')
    message = f"{folder} holds a DatasetDict (splits: train, validation): point at one split's folder, such as {folder}"
    with pytest.raises(ValueError, match=re.escape(message)):
        find_inputs(folder)


@pytest.mark.parametrize("name, content", [("empty.csv", ""), ("header.csv", "id,text\n"), ("empty.jsonl", " \n\n")])
def test_an_input_holding_no_row_is_warned_of_by_name_by_read_posts_and_scoring_alike(
    tmp_path: Path, name: str, content: str
) -> None:
    empty = tmp_path / "dump" / name
    write_jsonl(tmp_path / "dump" / "a.jsonl", 2)
    empty.write_text(content)
    said = f"{empty}: holds no row"
    with pytest.warns(FaimWarning, match=re.escape(said)):
        assert [post.id for post in read_posts(tmp_path / "dump")] == ["a-0", "a-1"]
    with pytest.warns(FaimWarning, match=re.escape(said)):
        shards = list(read_shards(find_inputs(tmp_path / "dump"), 10, ColumnMap.from_recipe(None)))
    assert [shard.file for shard in shards] == [str(tmp_path / "dump" / "a.jsonl")]


def test_inputs_holding_no_row_are_warned_of_once_where_a_later_input_fails_or_reading_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "dump"
    (dump / "a.csv").parent.mkdir()
    (dump / "a.csv").write_text("id,text\n")
    write_jsonl(dump / "b.jsonl", 2)
    (dump / "c.parquet").write_text("not Parquet")
    said = f"{dump / 'a.csv'}: holds no row"
    files = find_inputs(dump)
    for read in (
        lambda: list(read_posts(dump)),
        lambda: list(read_shards(files, 10, ColumnMap.from_recipe(None))),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="not a Parquet file"):
                read()
        assert [str(warning.message) for warning in caught if warning.category is FaimWarning] == [
            f"{said} (an empty file, blank lines alone, or a header alone): nothing is read from it"
        ]
    posts = read_posts(dump)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [next(posts).id for _ in range(2)] == ["b-0", "b-1"]
        assert caught == []  # not while the posts stream
        posts.close()  # as a run stopped (Ctrl-C) while it scores these posts
        posts.close()
    assert [str(warning.message).startswith(said) for warning in caught] == [True]


def test_a_warning_made_an_error_does_not_hide_the_error_that_ended_reading(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "a.jsonl").write_text("")
    (dump / "b.parquet").write_text("not Parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="not a Parquet file"):
            list(read_posts(dump))
        (dump / "b.parquet").unlink()
        write_jsonl(dump / "c.jsonl", 2)
        posts = read_posts(dump)
        with pytest.raises(KeyboardInterrupt):
            for _ in posts:
                posts.throw(KeyboardInterrupt)  # as Ctrl-C while the posts are read
        with pytest.raises(FaimWarning, match="a.jsonl: holds no row"):  # where reading ends as it should
            list(read_posts(dump / "a.jsonl"))


def test_with_warnings_made_errors_closing_a_stream_raises_its_warning_unless_an_error_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    (dump / "a.jsonl").write_text("")
    write_jsonl(dump / "b.jsonl", 2)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        posts = read_posts(dump)
        next(posts)
        with pytest.raises(FaimWarning, match="a.jsonl: holds no row"):
            posts.close()
        posts = read_posts(dump)
        next(posts)
        del posts  # dropped unclosed: the warning is raised as it is collected, as of a file left open
        assert [type(error.exc_value) for error in unraisable] == [FaimWarning]
        posts = read_posts(dump)
        next(posts)
        with pytest.raises(KeyError, match="scoring failed"):  # as a run failing while it reads
            try:
                raise KeyError("scoring failed")
            finally:
                close_reading(posts)


def test_inputs_holding_no_row_are_counted_among_those_read_where_reading_ends_early(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    for name in ("a.jsonl", "b.jsonl"):
        (dump / name).write_text("")
    (dump / "c.jsonl").write_text("{not json\n")
    for name in ("d.jsonl", "e.jsonl"):  # never read: reading ends at c.jsonl
        write_jsonl(dump / name, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="c.jsonl"):
            list(read_posts(dump))
    assert [str(warning.message).split(" (")[0] for warning in caught] == ["2 of the 3 input files read hold no row"]


def test_many_inputs_holding_no_row_are_warned_of_once_naming_the_first_three(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    for number in range(200):  # a dump whose writers mostly had no row to write
        (dump / f"part-{number:05d}.json").write_text("")
    write_jsonl(dump / "part-00200.json", 2)
    names = ", ".join(str(dump / f"part-{number:05d}.json") for number in range(3))
    said = "200 of the 201 input files read hold no row (an empty file, blank lines alone, or a header alone): "
    said += f"{names} and 197 more: nothing is read from them"
    for read in (
        lambda: len(list(read_posts(dump))),
        lambda: len(list(JsonlSource().iter_posts(dump))),
        lambda: sum(shard.size for shard in read_shards(find_inputs(dump), 10, ColumnMap.from_recipe(None))),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert read() == 2  # the one file holding rows is read
        assert [str(warning.message) for warning in caught if warning.category is FaimWarning] == [said]


def test_a_report_into_the_folder_a_data_file_or_glob_is_read_from_is_refused_another_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # only DATA itself was refused: a report into the folder of posts/validation.jsonl joined its posts
    (tmp_path / "posts").mkdir()
    monkeypatch.chdir(tmp_path)
    refused = [("posts", "posts"), ("posts/a.jsonl", "posts/"), ("posts/*.jsonl", "posts"), ("*.jsonl", ".")]
    for data, out in [*refused, ("posts/**/*.json", "posts")]:  # ** matching no folder too
        with pytest.raises(ValueError, match="whose posts its files would join; the report goes elsewhere"):
            check_apart_from_data(data, out, "the report")
    kept = [("posts/a.jsonl", "."), ("posts/*.jsonl", "posts/report"), ("posts", "report"), ("p*/a.jsonl", ".")]
    for data, out in kept:  # the last: its matches lie in the folders its wildcards match, none of them .
        check_apart_from_data(data, out, "the report")
