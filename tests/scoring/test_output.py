"""The Parquet parts a scoring run writes: one per shard, with what its rows hold."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from faim.data.columns import ColumnMap
from faim.data.post import Post
from faim.data.targets import TaskSpec as Task
from faim.scoring.inputs import read_shards
from faim.scoring.manifest import part_held
from faim.scoring.output import Pooling, output_schema, output_table, write_part, write_shard
from faim.scoring.report import Held
from faim.scoring.rows import ShardRows


def test_a_shard_is_written_as_its_scorers_rows_reported_with_what_its_rows_hold_in_its_part_too(
    tmp_path: Path,
) -> None:
    dump = tmp_path / "dump.jsonl"
    crowded = '{"id": "c", "text": "yo", "comments": ["ok", "ok", "ok"]}\n'
    dump.write_text('{"id": "a", "text": "hi", "likes": 3}\n{"id": "b"}\n' + crowded, encoding="utf-8")
    (shard,) = read_shards([dump], 3, ColumnMap())
    given: list[ShardRows] = []

    def table(rows: ShardRows) -> pa.Table:
        given.append(rows)
        return output_table(output_schema([], False, False), rows.posts, {}, rows.errors)

    kinds = ["text", "image", "comments"]
    report = write_shard(shard, tmp_path, table, ColumnMap(), None, kinds, 2, kinds)
    (rows,) = given
    assert [post.id for _, post in rows.posts] == ["a", "c"] and [error.post_id for error in rows.errors] == ["b"]
    assert (report.key, report.rows, dict(report.errors)) == (shard.key, 3, {"empty": 1})
    assert report.held == Held(2, ("image",), ("likes",), overfull=1, most=3, limit=2)
    part = pq.ParquetFile(tmp_path / f"part-{shard.key}.parquet")
    assert part.read().column("id").to_pylist() == ["a", "b", "c"] and part_held(part) == report.held
    assert json.loads(part.metadata.metadata[b"faim.held"]) == report.held.record()
    recorded = {"posts": 2, "unheld": ["image"], "unread": ["likes"]}  # as a faim not counting them recorded it
    assert Held.read(recorded) == Held(2, ("image",), ("likes",))


def test_a_part_is_on_the_disk_before_its_name_and_its_name_before_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done: list[tuple[str, int | str]] = []  # files synced by their inode, renames by the name given
    fsync, replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: done.append(("fsync", os.fstat(fd).st_ino)) or fsync(fd))
    monkeypatch.setattr(os, "replace", lambda old, new: done.append(("replace", Path(new).name)) or replace(old, new))
    table = output_table(output_schema([], False, False), [(0, Post(id="a", text="hi"))], {}, [])
    report = write_part(table, tmp_path, "00000-000000", 0.0, Held(1))
    part = tmp_path / "part-00000-000000.parquet"  # its inode the written file's, renamed
    assert done == [("fsync", part.stat().st_ino), ("replace", part.name), ("fsync", tmp_path.stat().st_ino)]
    assert report.rows == 1 and pq.read_table(part).column("id").to_pylist() == ["a"]


@pytest.mark.parametrize(
    ("tasks", "pooling", "said"),
    [
        (
            [Task("severity", "multiclass", ("low", "decision"))],
            None,
            "'severity.decision' would hold both the score of label 'decision' of task 'severity' and the decision of "
            "task 'severity'",
        ),
        ([Task("id", "binary", ("no", "yes"))], None, "'id' would hold both each row's id and the score of task 'id'"),
        (
            [Task("error", "binary", ("no", "yes"))],
            None,
            "'error' would hold both the score of task 'error' and each row's error",
        ),
        (
            [Task("severity", "multiclass", ("low", "logits"))],
            "inputs",
            "'severity.logits' would hold both the score of label 'logits' of task 'severity' and the logits of task "
            "'severity'",
        ),
    ],
)
def test_columns_that_would_share_a_name_are_refused_naming_both_and_what_to_do(
    tasks: list[Task], pooling: Pooling, said: str
) -> None:
    # a part was written with two columns of one name that no reader of the output folder reads back, or scoring
    # stopped at its first batch on pyarrow's "Could not convert 'decision' with type str: tried to convert to float32"
    with pytest.raises(ValueError, match=re.escape(f"the output column {said}, so faim score cannot write")) as info:
        output_schema(tasks, True, False, pooling)
    assert "train it again with the task or label renamed" in str(info.value)
    assert output_schema(tasks, False, True, pooling).names[:3] == ["source", "id", "embedding"]  # no scores written
