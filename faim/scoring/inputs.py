"""Cut a dump's inputs (``faim.data.inputs.find_inputs``) into shards of raw rows, in a deterministic order.

The reader does as little as possible: JSONL lines stay undecoded bytes, CSV cells stay bytes, so a
non-UTF-8 or malformed row becomes that row's error in the worker instead of stopping the read, as each row of a
Parquet row group that cannot be read becomes its own. A JSONL file whose
columns the mapping names is read twice, as ``faim.data.tabular`` reads it: first for the keys its objects hold, as
far as checking those columns takes, then for its lines, which only the worker parses. Rows are numbered
as ``faim.data.tabular`` numbers them: the line a JSONL or CSV row starts on (a CSV header is line 1), the 0-based
index of a Parquet or dataset row.
Shard keys (``FFFFF-SSSSSS``: file index, shard index, each of as many digits as the run's dump takes:
``key_widths``) are the same on every run over the same inputs, which is what lets a restarted run skip the shards
already written.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Container, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain, count, islice
from pathlib import Path
from typing import Any

from faim.data.columns import ColumnMap
from faim.data.hf import load_dataset, meta_types
from faim.data.inputs import DATASET, input_format, read_inputs
from faim.data.native import cell_count
from faim.data.sources import READERS
from faim.data.tabular import (
    csv_header,
    csv_records,
    file_delimiter,
    jsonl_lines,
    keys_holding,
    object_keys,
    open_parquet,
    parquet_records,
    python_rows,
    read_as,
)

KEY_WIDTHS = (5, 6)
"""The digits of the file and of the shard index of a shard key (``shard_key``) of a run whose record names none
(``faim.scoring.manifest.SHARD_KEYS``: begun by a faim that keyed every run so), and the fewest a run's keys have."""


@dataclass
class Shard:
    """A slice of one input file.

    Attributes:
        key: ``FFFFF-SSSSSS``, stable across runs.
        file: The input file, as it is read (and pictures named relative to it are found).
        format: ``jsonl``, ``csv``, ``tsv``, ``parquet`` or ``dataset`` (a saved Hugging Face dataset).
        header: Column names (CSV/TSV/Parquet/dataset); of JSONL, the keys the objects of the file hold, read as far
            as checking the columns the mapping names takes (``faim.data.tabular.keys_holding``: every key where one
            is missing; ``None`` where none was read, as where no line holds a JSON object), so that a mapping is
            checked against the file, whichever shard.
        rows: ``(row number, payload)``: a JSONL line's bytes, or a dict of column → cell.
        errors: ``(row number, kind, message)`` for rows the reader itself could not split into cells (``csv_row``)
            or read at all (``row_group``: of a Parquet row group that cannot be read).
        name: The input file as its rows' ``source`` and errors name it: as the run named it where it began
            (``faim.scoring.manifest.INPUT_NAMES``), which a resume naming the dump otherwise reads by another
            ``file``; ``file`` where none is given.
    """

    key: str
    file: str
    format: str
    header: list[str] | None
    rows: list[tuple[int, Any]] = field(default_factory=list)
    errors: list[tuple[int, str, str]] = field(default_factory=list)
    name: str = ""

    def __post_init__(self) -> None:
        self.name = self.name or self.file

    @property
    def size(self) -> int:
        return len(self.rows) + len(self.errors)

    @property
    def text_cells(self) -> bool:
        """Whether the shard's cells are text (kept as their bytes), a list written in one as a JSON list string, as
        the source reading its format says (``faim.data.tabular.FileSource.text_cells``)."""
        return READERS[self.format].text_cells


def count_rows(path: Path) -> int:
    """Rows in an input: Parquet or dataset metadata, or, of text formats, lines (minus the header), more than the
    rows where blank lines or CSV cells spanning lines are counted too."""
    kind = input_format(path)
    if kind == "parquet":
        return open_parquet(path).metadata.num_rows
    if kind == DATASET:
        return load_dataset(path).num_rows
    lines = 0
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 22), b""):
            lines += chunk.count(b"\n")
    return max(0, lines - (1 if kind in ("csv", "tsv") else 0))


def read_shards(
    files: list[Path],
    shard_rows: int,
    columns: ColumnMap,
    names: Sequence[str] | None = None,
    done: Container[str] = (),
    widths: tuple[int, int] = KEY_WIDTHS,
) -> Generator[Shard, None, None]:
    """Every file's rows, ``shard_rows`` at a time (the last shard of a file may be shorter), to be read with the
    mapping ``columns``, each shard named by its file's name in ``names`` (one per file, in order; ``None``: each
    file as given); a file holding no row gives none, and once reading ends (every file read, or the stream
    failing, stopped or closed before), one warning names those read that hold none (``read_inputs``). Of a Parquet
    file, only the columns the mapping may read are read (``_parquet_shards``). Each shard is keyed with ``widths``
    digits (``shard_key``).

    A shard whose key ``done`` holds (one an earlier run scored) comes in its place with no row or error, its rows
    read no further than finding where the next shard starts takes: none of them is converted, a Parquet row group
    or saved dataset batch all of whose rows are such shards' is not read, and of a JSON Lines or CSV file the lines
    are only counted (or split into cells, where a CSV cell may span lines)."""

    def shards(path: Path, skipped: Callable[[int], bool]) -> Iterator[Shard]:
        kind = input_format(path)
        if kind == "jsonl":
            return _jsonl_shards(path, shard_rows, columns, skipped)
        return _shards(path, kind, shard_rows, columns, skipped)

    return read_inputs(files, _keyed(shards, names, done, widths))


def own_shards(
    files: list[Path], shard_rows: int, names: Sequence[str] | None = None, columns: ColumnMap | None = None
) -> Iterator[Shard]:
    """The shards of a dump's inputs ``files``, keyed and named, as ``read_shards`` cuts them with the mapping
    ``columns`` (``None``: every column of a Parquet file read) but that the header of a JSON Lines shard is the keys
    of the objects of its own lines (``_own_shards``): read lazily, each only as far as it goes, where ``read_shards``
    reads a JSON Lines file for the keys of all its lines first."""
    return chain.from_iterable(map(_keyed(lambda path, _: _own_shards(path, shard_rows, columns), names), files))


def _keyed(
    shards: Callable[[Path, Callable[[int], bool]], Iterator[Shard]],
    names: Sequence[str] | None,
    done: Container[str] = (),
    widths: tuple[int, int] = KEY_WIDTHS,
) -> Callable[[Path], Iterator[Shard]]:
    """``shards``, each shard it cuts keyed ``FFFFF-SSSSSS`` (``shard_key``, of ``widths`` digits): by the file's
    place among the files it is called on (each once, in order) and the shard's in the file; and named by the file's
    name in ``names`` (``None``: as the file is given). ``shards`` is called with a file and whether the shard of
    each index in it is one whose key ``done`` holds, whose rows it need not read."""
    file_indexes = count()

    def keyed(path: Path) -> Iterator[Shard]:
        file_index = next(file_indexes)
        skipped = (lambda index: shard_key(file_index, index, widths) in done) if done else _none
        for shard_index, shard in enumerate(shards(path, skipped)):
            shard.key = shard_key(file_index, shard_index, widths)
            if names is not None:
                shard.name = names[file_index]
            yield shard

    return keyed


def shard_key(file_index: int, shard_index: int, widths: tuple[int, int] = KEY_WIDTHS) -> str:
    """The key ``FFFFF-SSSSSS`` of a file's shard: the file's index among the run's inputs and the shard's in it, each
    padded with zeros to its number of digits in ``widths``."""
    return f"{file_index:0{widths[0]}d}-{shard_index:0{widths[1]}d}"


def key_widths(rows: Sequence[int], shard_rows: int) -> tuple[int, int]:
    """The digits of the file and of the shard index of the keys of a run over inputs of ``rows`` rows each (as
    ``count_rows`` counts them: of a text input its lines, one fewer than its rows where its last line ends without a
    newline), ``shard_rows`` to a shard: as many as the largest of each takes, and at least ``KEY_WIDTHS``, so that
    every key of the run has as many digits and its parts' names sort in input order, as Parquet readers read them."""
    shards = max(rows, default=0) // shard_rows  # at least the last shard's index: (rows + 1 - 1) // shard_rows
    return max(KEY_WIDTHS[0], len(str(len(rows) - 1))), max(KEY_WIDTHS[1], len(str(shards)))


def _none(index: int) -> bool:
    """No shard skipped."""
    return False


def _own_shards(path: Path, shard_rows: int, columns: ColumnMap | None) -> Iterator[Shard]:
    """An input's shards as ``read_shards`` cuts them, not yet keyed, but that each JSON Lines shard's header is the
    keys of the objects of its own lines."""
    kind = input_format(path)
    if kind != "jsonl":
        yield from _shards(path, kind, shard_rows, columns)
        return
    for rows in _jsonl_chunks(path, shard_rows):
        keys = object_keys(row for _, line in rows if (row := _json_object(line)) is not None) or None
        yield Shard("", str(path), kind, keys, rows)


def _shards(
    path: Path, kind: str, shard_rows: int, columns: ColumnMap | None, skipped: Callable[[int], bool] = _none
) -> Iterator[Shard]:
    """An input's rows of format ``kind`` (not JSON Lines: ``_jsonl_shards``), ``shard_rows`` at a time, their shards
    not yet keyed, each whose index in the file ``skipped`` holds with no row or error; of a Parquet file, only the
    columns ``columns`` may read (``None``: all)."""
    if kind == "parquet":
        return _parquet_shards(path, shard_rows, columns, skipped)
    if kind in ("csv", "tsv"):
        return _csv_shards(path, kind, shard_rows, skipped)
    return _dataset_shards(path, kind, shard_rows, columns, skipped)


def _jsonl_shards(path: Path, shard_rows: int, columns: ColumnMap, skipped: Callable[[int], bool]) -> Iterator[Shard]:
    """A JSON Lines file's lines, ``shard_rows`` at a time, unparsed, their shards not yet keyed, each with the keys
    checking the columns ``columns`` names takes (``_jsonl_keys``), each whose index ``skipped`` holds with no row
    and no keys: the keys are read once a shard with rows comes, so a file every shard of which is skipped is not
    parsed for them (which may take every line, where a column named is in none)."""
    keys: list[str] | None = None
    read = False
    for rows in _jsonl_chunks(path, shard_rows, skipped):
        if rows and not read:
            keys, read = _jsonl_keys(path, columns), True
        yield Shard("", str(path), "jsonl", keys if rows else None, rows)


def _jsonl_chunks(
    path: Path, shard_rows: int, skipped: Callable[[int], bool] = _none
) -> Iterator[list[tuple[int, bytes]]]:
    """A JSON Lines file's lines that are not blank (``jsonl_lines``), each with its number, ``shard_rows`` at a time,
    unparsed; those of each chunk whose index ``skipped`` holds only counted, the chunk empty."""
    with open(path, "rb") as handle:
        lines = jsonl_lines(handle)
        for index in count():
            chunk = islice(lines, shard_rows)
            if skipped(index):
                if not sum(1 for _ in chunk):
                    return
                yield []
            elif rows := list(chunk):
                yield rows
            else:
                return


def _jsonl_keys(path: Path, columns: ColumnMap) -> list[str] | None:
    """The keys the objects of a JSON Lines file hold, read only as far as checking the columns ``columns`` names
    takes (``keys_holding``), lines that hold no JSON object (each its row's error) left out; ``None`` where none was
    read."""
    with open(path, "rb") as handle:
        objects = (row for _, line in jsonl_lines(handle) if (row := _json_object(line)) is not None)
        return keys_holding(objects, columns.required.values()) or None


def _json_object(line: bytes) -> dict[str, Any] | None:
    """The JSON object a line of UTF-8 holds, or ``None``."""
    try:
        row = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return row if isinstance(row, dict) else None


def _csv_shards(path: Path, kind: str, shard_rows: int, skipped: Callable[[int], bool]) -> Iterator[Shard]:
    """CSV (cells separated as its header shows) or TSV (at tabs), as ``file_delimiter`` says, with every cell as
    raw bytes (bytes that are not UTF-8 kept as they are, for the worker to report), each row numbered by the line it
    starts on; blank lines are skipped, and a row with another number of cells than the header is an error row of the
    shard, in its place. A shard whose index ``skipped`` holds comes with no row or error, its rows only counted."""
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        delimiter = file_delimiter(path, handle.readline())
        handle.seek(0)
        records = csv_records(handle, delimiter)
        names = csv_header(records)
        for index in count():
            chunk = islice(records, shard_rows)
            if skipped(index):
                if not sum(1 for _ in chunk):
                    return
                yield Shard("", str(path), kind, names)
            elif shard := _csv_shard(path, kind, names, delimiter, chunk):
                yield shard
            else:
                return


def _csv_shard(
    path: Path, kind: str, names: list[str], delimiter: str, records: Iterable[tuple[int, list[str] | str]]
) -> Shard | None:
    """The shard of a CSV or TSV file's ``records`` (``csv_records``: each a row's cells, or what is wrong with it),
    split as its header ``names`` is by ``delimiter``; ``None`` where there is none."""
    shard = Shard("", str(path), kind, names)
    for number, cells in records:
        if isinstance(cells, str):
            shard.errors.append((number, "csv_row", cells))
        elif len(cells) == len(names):
            shard.rows.append((number, {name: raw(cell) for name, cell in zip(names, cells)}))
        else:
            shard.errors.append((number, "csv_row", cell_count(names, cells, delimiter)))
    return shard if shard.size else None


def raw(cell: str) -> bytes:
    """A cell read as UTF-8 with undecodable bytes escaped, as the bytes the file holds."""
    return cell.encode("utf-8", "surrogateescape")


def _parquet_shards(
    path: Path, shard_rows: int, columns: ColumnMap | None, skipped: Callable[[int], bool]
) -> Iterator[Shard]:
    """A Parquet file's rows, ``shard_rows`` at a time, numbered from 0, their shards not yet keyed, each row holding
    the columns ``columns`` may read (``ColumnMap.projected``; ``None``: all), the header every column of the file;
    the rows of a row group that cannot be read (damaged) are errors of their shards (``row_group``), in their places
    (``parquet_records``), so that the file's other rows are scored, every row keeping its shard, and a column no
    field reads, damaged or holding what Python cannot hold, costs no row. A shard whose index ``skipped`` holds comes
    with no row or error, its rows not converted, nor read where they fill row groups (``parquet_records``)."""
    file = open_parquet(path)
    names = file.schema_arrow.names
    projected = columns.projected(names) if columns is not None else None
    records = parquet_records(file, shard_rows, projected, skipped, (columns or ColumnMap()).meta_columns)
    for index in count():
        if not (chunk := list(islice(records, shard_rows))):
            return
        shard = Shard("", str(path), "parquet", names)
        for number, row in chunk if not skipped(index) else ():
            if isinstance(row, str):
                shard.errors.append((number, "row_group", row))
            else:
                shard.rows.append((number, row))
        yield shard


def _dataset_shards(
    path: Path, kind: str, shard_rows: int, columns: ColumnMap | None, skipped: Callable[[int], bool]
) -> Iterator[Shard]:
    """A saved dataset's rows as Arrow batches, numbered from 0 (``Image`` columns arrive as ``{bytes, path}``), the
    BINARY of the meta columns of ``columns`` (``None``: an unmapped ``meta`` column) text or bytes as the whole dataset
    decides (``faim.data.hf.meta_types``); a shard whose index ``skipped`` holds comes with no row, its batch not
    read."""
    dataset = load_dataset(path)
    names = dataset.column_names
    types = meta_types(dataset, (columns or ColumnMap()).meta_columns)
    table = dataset.with_format("arrow")
    for index, start in enumerate(range(0, dataset.num_rows, shard_rows)):
        if skipped(index):
            yield Shard("", str(path), kind, names)
            continue
        rows = python_rows(read_as(table[start : start + shard_rows], types))
        yield Shard("", str(path), kind, names, list(enumerate(rows, start=start)))
