"""Data sources: files of posts → ``Post`` objects, registered under their recipe ``data.type:``.

Importing this module registers every built-in source but ``concat``: ``jsonl``, ``csv``, ``parquet``, ``hf``
and the named adapters (``tweeteval``, ``davidson``, ...). ``concat``, a source made of these, sits on top of
them (``faim.data.concat``). ``read_posts`` reads any file, folder, glob or saved dataset of posts
(``faim.data.inputs``), for evaluating data no recipe describes.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Protocol, runtime_checkable

from faim.data import coaid, davidson, emoji_pairs, ethos, hateful_memes, liar, vmu  # noqa: F401  (registers them)
from faim.data.columns import ColumnMap
from faim.data.hf import HfSource, load_dataset
from faim.data.inputs import DATASET, find_inputs, input_format, read_inputs
from faim.data.post import Post
from faim.data.tabular import (
    FileSource,
    Rows,
    csv_file_header,
    csv_rows,
    jsonl_keys,
    jsonl_lines,
    jsonl_object,
    jsonl_rows,
    jsonl_text,
    open_parquet,
    parquet_rows,
)
from faim.data.tweeteval import TweetEvalSource
from faim.registry import register_source

__all__ = [
    "CsvSource",
    "HfSource",
    "JsonlSource",
    "ParquetSource",
    "Source",
    "TweetEvalSource",
    "check_split",
    "input_columns",
    "read_posts",
]


@runtime_checkable
class Source(Protocol):
    """What the recipe, training and evaluation layers need from a data source."""

    def splits(self) -> list[str]:
        """The configured split names."""

    def posts(self, split: str) -> list[Post]:
        """All posts of one split."""

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Stream the posts of one file in the source's format."""

    def describe(self, split: str) -> str:
        """Where a split comes from (file path or dataset id), for reports and cache keys."""

    def fingerprint(self, split: str) -> str:
        """sha256 identifying a split's content, for embedding-cache keys."""


def check_split(source: Any, split: str) -> None:
    """Find the files ``split`` of ``source`` is read from, reading no post, so that one not there is named before
    another split is read: by the source's own ``check_split(split)``, which the sources reading a file, folder or
    glob per split (``faim.data.tabular.FileSource``), the dataset adapters reading a folder's files (``tweeteval``,
    ``davidson``, ``ethos``, ``liar``, ``coaid``, ``vmu``, ``hateful_memes``), ``concat`` and ``without`` have. A
    source without one (``emoji_pairs``, which finds its files as it is built; one registered elsewhere) finds them as
    it reads them.

    Raises:
        FileNotFoundError: Naming the split and what stands for nothing, as reading it would.
    """
    check = getattr(source, "check_split", None)
    if check is not None:
        check(split)


@register_source("jsonl")
class JsonlSource(FileSource):
    """JSON Lines files, one post object per line; see ``FileSource`` for the arguments."""

    formats = ("jsonl",)

    def __init__(
        self,
        train: str | None = None,
        validation: str | None = None,
        test: str | None = None,
        columns: dict | None = None,
        image_root: str | None = None,
    ) -> None:
        super().__init__(train, validation, test, columns, image_root)

    def rows(self, path: Path) -> tuple[ColumnMap, Rows]:
        """Bind the mapping to the keys the file's objects hold and give them line by line."""
        return jsonl_rows(path, self.columns)


@register_source("csv")
class CsvSource(FileSource):
    """Delimited text files with a header row; see ``FileSource`` for the shared arguments.

    Args:
        delimiter: Cell separator; ``None`` (the default) takes tab for a ``.tsv`` file and, for a ``.csv`` one, the
            one of ``,``, ``;``, tab, ``|`` its header shows (``faim.data.tabular.file_delimiter``), as ``faim score``
            and ``faim eval`` read files.
        quote_char: Quote character around cells holding the delimiter or newlines; ``None`` reads
            quotes literally (files such as LIAR, read elsewhere with ``quoting=3``).
    """

    formats = ("csv", "tsv")
    text_cells = True

    def __init__(
        self,
        train: str | None = None,
        validation: str | None = None,
        test: str | None = None,
        columns: dict | None = None,
        image_root: str | None = None,
        delimiter: str | None = None,
        quote_char: str | None = '"',
    ) -> None:
        super().__init__(
            train, validation, test, columns, image_root, options={"delimiter": delimiter, "quote_char": quote_char}
        )
        self.delimiter = delimiter
        self.quote_char = quote_char

    def rows(self, path: Path) -> tuple[ColumnMap, Rows]:
        """Bind the mapping to the header and stream its rows (``faim.data.tabular.csv_rows``)."""
        return csv_rows(path, self.columns, self.delimiter, self.quote_char)


@register_source("parquet")
class ParquetSource(FileSource):
    """Parquet files; see ``FileSource`` for the arguments."""

    formats = ("parquet",)

    def __init__(
        self,
        train: str | None = None,
        validation: str | None = None,
        test: str | None = None,
        columns: dict | None = None,
        image_root: str | None = None,
    ) -> None:
        super().__init__(train, validation, test, columns, image_root)

    def rows(self, path: Path) -> tuple[ColumnMap, Rows]:
        """Bind the mapping to the schema and stream the mapped columns batch by batch."""
        return parquet_rows(path, self.columns)


READERS: dict[str, type[FileSource]] = {
    "jsonl": JsonlSource,
    "csv": CsvSource,
    "tsv": CsvSource,
    "parquet": ParquetSource,
    DATASET: HfSource,
}
"""Format (``faim.data.inputs.input_format``) → the source reading it."""


def read_posts(spec: str | Path, columns: dict | None = None, image_root: str | None = None) -> Iterator[Post]:
    """Stream the posts of a file, a folder, a glob or a saved dataset, one input after another
    (``faim.data.inputs.find_inputs`` says what a spec stands for), each read by the source of its format.

    Args:
        spec: The file, folder or glob.
        columns: Column mapping, as in a recipe's ``data.columns``.
        image_root: Directory relative image paths resolve against; ``None`` uses each input's directory.

    Raises:
        FileNotFoundError: When the spec stands for nothing.
        ValueError: On an unknown extension, naming the known ones; on a malformed row, naming file and row.

    Warns:
        FaimWarning: Once every input is read (or reading ends before), naming those read that hold no row
            (``faim.data.inputs.read_inputs``).
    """
    files = find_inputs(spec)
    sources = iter([READERS[input_format(path)](columns=columns, image_root=image_root) for path in files])
    indexes = itertools.count()  # a post without an id takes its place among all the inputs' posts, as iter_posts
    return read_inputs(files, lambda path: next(sources).file_posts(path, indexes))


def input_reading(files: Iterable[Path], columns: ColumnMap) -> ColumnMap:
    """The mapping ``columns`` as ``files`` are read with it (``ColumnMap.reading``): reading its ``objects`` unless
    every file's cells are text (CSV, TSV)."""
    return columns.reading(all(READERS[input_format(file)].text_cells for file in files))


def holds_objects(path: Path, columns: Collection[str]) -> bool:
    """Whether the input ``path`` holds one of ``columns`` whose cells may hold a mapping, as ``ColumnMap.object_cell``
    reads it: a JSON Lines file, a cell of one that holds a JSON object (a line that is not a JSON object is no row to
    read either way, and is passed over; one holding no brace but its own opening one holds no mapping, and is passed
    over without being decoded); a Parquet file or a saved dataset, the column; a CSV or TSV file, none (its cells are
    text)."""
    form = input_format(path)
    if form == "jsonl":
        with open(path, "rb") as handle:
            return any(isinstance(row.get(column), dict) for row in decoded(handle) for column in columns)
    if form in ("csv", "tsv"):
        return False
    names = open_parquet(path).schema_arrow.names if form == "parquet" else load_dataset(path).column_names
    return any(column in names for column in columns)


def decoded(handle: BinaryIO) -> Iterator[dict[str, Any]]:
    """The JSON objects of the lines of a JSON Lines file opened in binary (``jsonl_lines``) that may hold another
    (a brace beyond their own: a brace of JSON is that byte in UTF-8, within no other character's), those of lines
    that are not UTF-8 JSON objects passed over."""
    for _, line in jsonl_lines(handle):
        if line.count(b"{") < 2:
            continue
        try:
            yield jsonl_object(jsonl_text(line))
        except ValueError:
            continue


def input_columns(spec: str | Path) -> list[str]:
    """The columns of the inputs ``spec`` stands for, as ``read_posts`` reads them (a JSON Lines file's: every key its
    objects hold; a CSV or TSV file's: its header; a Parquet file's or a saved dataset's: its schema), mapped or not,
    each once, in the order they first appear.

    Raises:
        FileNotFoundError: When the spec stands for nothing.
        ValueError: On an unknown extension or a file that cannot be read, naming it.
    """
    names: list[str] = []
    for path in find_inputs(spec):
        form = input_format(path)
        if form == "jsonl":
            names += jsonl_keys(path)
        elif form == "parquet":
            names += open_parquet(path).schema_arrow.names
        elif form == DATASET:
            names += load_dataset(path).column_names
        else:
            names += csv_file_header(path)[0]
    return list(dict.fromkeys(names))
