"""Cut a dump's inputs (``faim.data.inputs.find_inputs``) into shards of raw rows, in a deterministic order.

The reader does as little as possible: JSONL lines stay undecoded bytes, CSV cells stay bytes, so a
non-UTF-8 or malformed row becomes that row's error in the worker instead of stopping the read.
Shard keys (``FFFFF-SSSSSS``: file index, shard index) are the same on every run over the same
inputs, which is what lets a restarted run skip the shards already written.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq

from faim.data.hf import load_dataset
from faim.data.inputs import DATASET, input_format
from faim.data.tabular import sniffed_delimiter


@dataclass
class Shard:
    """A slice of one input file.

    Attributes:
        key: ``FFFFF-SSSSSS``, stable across runs.
        file: The input file.
        format: ``jsonl``, ``csv``, ``tsv``, ``parquet`` or ``dataset`` (a saved Hugging Face dataset).
        header: Column names (CSV/TSV/Parquet/dataset); ``None`` for JSONL.
        rows: ``(row number, payload)``: a JSONL line's bytes, or a dict of column → cell.
        errors: ``(where, kind, message)`` for rows the reader itself could not split into cells
            (``where`` is e.g. ``"line 17"``).
    """

    key: str
    file: str
    format: str
    header: list[str] | None
    rows: list[tuple[int, Any]] = field(default_factory=list)
    errors: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.rows) + len(self.errors)


def count_rows(path: Path) -> int:
    """Rows in an input: Parquet or dataset metadata, or newline count for text formats (minus the header)."""
    kind = input_format(path)
    if kind == "parquet":
        return pq.ParquetFile(path).metadata.num_rows
    if kind == DATASET:
        return load_dataset(path).num_rows
    lines = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            lines += chunk.count(b"\n")
    return max(0, lines - (1 if kind in ("csv", "tsv") else 0))


def read_shards(files: list[Path], shard_rows: int) -> Iterator[Shard]:
    """Every file's rows, ``shard_rows`` at a time (the last shard of a file may be shorter)."""
    readers = {"jsonl": _jsonl_shards, "csv": _csv_shards, "tsv": _csv_shards, "parquet": _parquet_shards}
    for file_index, path in enumerate(files):
        kind = input_format(path)
        reader = readers.get(kind, _dataset_shards)
        for shard_index, shard in enumerate(reader(path, kind, shard_rows)):
            shard.key = f"{file_index:05d}-{shard_index:06d}"
            yield shard


def _jsonl_shards(path: Path, kind: str, shard_rows: int) -> Iterator[Shard]:
    shard = Shard("", str(path), kind, None)
    with open(path, "rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            shard.rows.append((number, line))
            if len(shard.rows) == shard_rows:
                yield shard
                shard = Shard("", str(path), kind, None)
    if shard.rows:
        yield shard


def _csv_shards(path: Path, kind: str, shard_rows: int) -> Iterator[Shard]:
    """CSV (cells separated as its header shows, ``sniffed_delimiter``) or TSV in pyarrow batches with every cell
    as raw bytes. Rows are numbered 1, 2, … after the header; a line with the wrong number of cells comes through
    pyarrow's invalid-row handler and becomes an error row (labelled by its line, or its order among invalid rows
    when pyarrow cannot tell the line) of the shard being read."""
    invalid: list[tuple[str, str, str]] = []
    seen_invalid = 0

    def on_invalid(row: Any) -> str:
        nonlocal seen_invalid
        seen_invalid += 1
        where = f"line {row.number}" if row.number is not None else f"invalid row #{seen_invalid}"
        message = f"expected {row.expected_columns} cells, got {row.actual_columns}: {row.text[:80]!r}"
        invalid.append((where, "csv_row", message))
        return "skip"

    with open(path, "rb") as handle:
        header_line = handle.readline()
    delimiter = "\t" if kind == "tsv" else sniffed_delimiter(header_line.decode("utf-8-sig", errors="replace"))
    names = pcsv.read_csv(pa.py_buffer(header_line), parse_options=pcsv.ParseOptions(delimiter=delimiter)).column_names
    names = [name.lstrip("\ufeff") for name in names]
    reader = pcsv.open_csv(
        path,
        read_options=pcsv.ReadOptions(block_size=1 << 20, column_names=names, skip_rows=1),
        parse_options=pcsv.ParseOptions(delimiter=delimiter, newlines_in_values=True, invalid_row_handler=on_invalid),
        convert_options=pcsv.ConvertOptions(column_types=dict.fromkeys(names, pa.binary()), check_utf8=False),
    )
    shard = Shard("", str(path), kind, names)
    number = 1
    for batch in reader:
        for row in batch.to_pylist():
            shard.rows.append((number, row))
            number += 1
            if len(shard.rows) == shard_rows:
                shard.errors, invalid[:] = list(invalid), []
                yield shard
                shard = Shard("", str(path), kind, names)
    shard.errors = list(invalid)
    if shard.size:
        yield shard


def _parquet_shards(path: Path, kind: str, shard_rows: int) -> Iterator[Shard]:
    file = pq.ParquetFile(path)
    names = file.schema_arrow.names
    number = 0
    for batch in file.iter_batches(batch_size=shard_rows):
        rows = batch.to_pylist()
        yield Shard("", str(path), kind, names, list(enumerate(rows, start=number)))
        number += len(rows)


def _dataset_shards(path: Path, kind: str, shard_rows: int) -> Iterator[Shard]:
    """A saved dataset's rows as Arrow batches, numbered from 0 (``Image`` columns arrive as ``{bytes, path}``)."""
    dataset = load_dataset(path)
    names = dataset.column_names
    number = 0
    for batch in dataset.with_format("arrow").iter(shard_rows):
        rows = batch.to_pylist()
        yield Shard("", str(path), kind, names, list(enumerate(rows, start=number)))
        number += len(rows)
