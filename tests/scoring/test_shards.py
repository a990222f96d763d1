"""Sharding a dump: deterministic shard keys; raw rows kept raw."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from faim.scoring.inputs import count_rows, read_shards


def write_jsonl(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"{path.stem}-{i}", "text": f"post {i}"}) + "\n" for i in range(n)))
    return path


def test_shard_keys_are_stable_and_cover_every_row(tmp_path: Path) -> None:
    files = [write_jsonl(tmp_path / "a.jsonl", 25), write_jsonl(tmp_path / "b.jsonl", 7)]
    shards = list(read_shards(files, 10))
    assert [s.key for s in shards] == ["00000-000000", "00000-000001", "00000-000002", "00001-000000"]
    assert sum(s.size for s in shards) == 32 == sum(count_rows(f) for f in files)
    assert [s.key for s in read_shards(files, 10)] == [s.key for s in shards]
    assert shards[0].rows[0] == (1, (tmp_path / "a.jsonl").read_bytes().splitlines(keepends=True)[0])


def test_csv_cells_stay_bytes_and_bad_rows_become_errors(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b'id,text\n1,hello\n2,"two\nlines"\n3,too,many\n4,\xff\xfe\n')
    (shard,) = read_shards([path], 100)
    assert [n for n, _ in shard.rows] == [1, 2, 3]
    assert shard.rows[2][1] == {"id": b"4", "text": b"\xff\xfe"}
    assert len(shard.errors) == 1 and shard.errors[0][1] == "csv_row"


def test_a_semicolon_separated_csv_is_cut_at_its_semicolons(tmp_path: Path) -> None:
    path = tmp_path / "export.csv"
    path.write_bytes(b'\xef\xbb\xbfid;text\n1;hello, world\n2;"a; b"\n')
    (shard,) = read_shards([path], 100)
    assert shard.header == ["id", "text"] and not shard.errors
    assert [row for _, row in shard.rows] == [{"id": b"1", "text": b"hello, world"}, {"id": b"2", "text": b"a; b"}]


def test_parquet_rows_are_numbered_from_zero(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [str(i) for i in range(5)], "text": ["t"] * 5}), path)
    shards = list(read_shards([path], 2))
    assert [n for s in shards for n, _ in s.rows] == [0, 1, 2, 3, 4]
    assert count_rows(path) == 5
