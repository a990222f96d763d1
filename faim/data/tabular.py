"""Streaming row readers for JSONL, CSV and Parquet, and the base class of file-per-split sources.

Each reader yields ``(number, row)`` pairs, ``row`` a dict of column → value and ``number`` the row's
place in ``origin``: the 1-based line a JSONL or CSV row starts on (a CSV's header is line 1), the 0-based row index
for Parquet and Hugging Face datasets. Files are read in batches of rows (pyarrow) or record by record, so a dump
larger than memory streams (where a recipe names columns, a JSON Lines file is streamed twice: first for the keys
its objects hold, as far as checking those columns takes).
"""

from __future__ import annotations

import bisect
import codecs
import csv
import functools
import hashlib
import io
import itertools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from faim.data.columns import ColumnMap, cell_text
from faim.data.inputs import data_path, expand, input_format, read_inputs, recipe_path_note
from faim.data.native import cell_count, unknown_split
from faim.data.post import SIGNIFICAND_BITS, NarrowFloat, Post, Unconvertible, post_name
from faim.registry import source_path

Rows = Iterator[tuple[int, dict[str, Any]]]
BATCH_ROWS = 1024
SPLITS = ("train", "validation", "test")


def arrow_rows(batches: Iterable[pa.RecordBatch | pa.Table], file: Path) -> Rows:
    """Rows of Arrow batches numbered from 0; Arrow read errors are re-raised naming ``file`` and the first row not
    read (``unreadable_rows``)."""
    number = 0
    try:
        for batch in batches:
            for row in python_rows(batch):
                yield number, row
                number += 1
    except ARROW_READ_ERRORS as error:
        raise unreadable_rows(file, number, error) from error


def python_rows(batch: pa.RecordBatch | pa.Table) -> list[dict[str, Any]]:
    """The rows of an Arrow batch as Python dicts, a value of a float column narrower than 64 bits at or past the
    integers its width holds exactly a ``NarrowFloat`` of its width (``faim.data.post.float_width``), so that an id
    read from one is refused (``faim.data.post.id_text``): a float32 column rounds 123456789 to 123456792; and a value
    Python cannot hold an ``Unconvertible`` (``_rows_cell_by_cell``), so that its row is read."""
    try:
        rows = batch.to_pylist()
    except PYTHON_VALUE_ERRORS:
        rows = _rows_cell_by_cell(batch)
    for index, field in enumerate(batch.schema):
        if pa.types.is_floating(field.type) and field.type.bit_width < 64:
            # only a value at or past its width's bound reads otherwise as an id: the others stay plain floats, so a
            # column of probabilities costs no object a cell (nulls arrive as NaN, which no bound holds)
            values = np.asarray(batch.column(index).to_numpy(zero_copy_only=False), dtype=np.float64)
            for position in np.flatnonzero(np.abs(values) >= 2.0 ** SIGNIFICAND_BITS[field.type.bit_width]):
                rows[position][field.name] = NarrowFloat(rows[position][field.name], field.type.bit_width)
    return rows


def text_types(batches: Iterable[pa.RecordBatch | pa.Table], names: Collection[str]) -> dict[str, pa.DataType]:
    """The type each column of ``names`` (those meta fields are read from: ``ColumnMap.meta_columns``) holding BINARY
    values (alone, in a list, a struct's field or a map's values) is read as, decided over every one of ``batches`` (a
    file's rows, all of them): each BINARY part of its type (``binary_paths``) STRING where every value there is UTF-8
    text (as Impala and older Hive write text, without marking it so), and BINARY where one is not (a digest, a
    thumbnail), so that a meta field is read as text in every row or as bytes in every row, never in some as the one
    and in others as the other. Columns holding no BINARY are left out (``read_as``)."""
    held: dict[str, pa.DataType] = {}
    not_utf8: dict[str, set[tuple[Any, ...]]] = {}
    for batch in batches:
        for name in names:
            if name not in batch.schema.names or not binary_paths(kind := batch.schema.field(name).type):
                continue
            held[name] = kind
            column = batch.column(name)
            for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
                not_utf8.setdefault(name, set()).update(_not_utf8(chunk, binary_paths(kind)))
    return {name: _as_text(kind, not_utf8[name]) for name, kind in held.items()}


def binary_paths(kind: pa.DataType, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where the Arrow type ``kind`` holds BINARY values (``_text_type``): ``path`` for BINARY itself, and below it a
    struct's field by its place, a list's or a map's values by ``"items"``, a dictionary's by ``"dictionary"``."""
    if _text_type(kind) is not None:
        return [path]
    if pa.types.is_dictionary(kind):
        return binary_paths(kind.value_type, (*path, "dictionary"))
    if pa.types.is_struct(kind):
        return [part for index, field in enumerate(kind) for part in binary_paths(field.type, (*path, index))]
    if pa.types.is_map(kind):
        return binary_paths(kind.item_type, (*path, "items"))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        return binary_paths(kind.value_type, (*path, "items"))
    return []


def _part(array: pa.Array, path: tuple[Any, ...]) -> pa.Array:
    """The values of ``array`` at ``path`` (``binary_paths``), every one of them, null or under a null, as a cast of
    ``array`` casts them."""
    for step in path:
        if step == "dictionary":
            array = array.dictionary
        elif step == "items":
            array = array.items if pa.types.is_map(array.type) else array.values
        else:
            array = array.field(step)
    return array


def _not_utf8(array: pa.Array, paths: list[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    """Those of ``paths``, BINARY parts of ``array`` (``binary_paths``), holding a value that is not UTF-8 text."""
    refused = set()
    for path in paths:
        try:
            _part(array, path).cast(pa.large_string())
        except pa.ArrowInvalid:
            refused.add(path)
    return refused


def _as_text(kind: pa.DataType, not_utf8: set[tuple[Any, ...]], path: tuple[Any, ...] = ()) -> pa.DataType:
    """The Arrow type ``kind`` with each BINARY part of it (``binary_paths``) not in ``not_utf8`` STRING."""
    if (text := _text_type(kind)) is not None:
        return kind if path in not_utf8 else text
    if pa.types.is_dictionary(kind):
        return pa.dictionary(kind.index_type, _as_text(kind.value_type, not_utf8, (*path, "dictionary")), kind.ordered)
    if pa.types.is_struct(kind):
        return pa.struct([field.with_type(_as_text(field.type, not_utf8, (*path, i))) for i, field in enumerate(kind)])
    if pa.types.is_map(kind):
        items = kind.item_field.with_type(_as_text(kind.item_type, not_utf8, (*path, "items")))
        return pa.map_(kind.key_field, items, kind.keys_sorted)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        items = kind.value_field.with_type(_as_text(kind.value_type, not_utf8, (*path, "items")))
        if pa.types.is_fixed_size_list(kind):
            return pa.list_(items, kind.list_size)
        return pa.large_list(items) if pa.types.is_large_list(kind) else pa.list_(items)
    return kind


def _text_type(kind: pa.DataType) -> pa.DataType | None:
    """The Arrow type of text the BINARY type ``kind`` is read as where its values are UTF-8 text: ``string`` of
    ``binary`` and of fixed-size ``binary(n)`` (a Parquet FIXED_LEN_BYTE_ARRAY), ``large_string`` of ``large_binary``,
    ``string_view`` of ``binary_view``; ``None`` for a type that is none of them."""
    if pa.types.is_large_binary(kind):
        return pa.large_string()
    if pa.types.is_binary_view(kind):
        return pa.string_view()
    return pa.string() if pa.types.is_binary(kind) or pa.types.is_fixed_size_binary(kind) else None


def read_as(batch: pa.RecordBatch | pa.Table, types: Mapping[str, pa.DataType]) -> pa.RecordBatch | pa.Table:
    """``batch`` with each of its columns ``types`` names cast to its type there (``text_types``)."""
    if not types:
        return batch
    fields = [field.with_type(types.get(field.name, field.type)) for field in batch.schema]
    return batch.cast(pa.schema(fields, metadata=batch.schema.metadata))


PYTHON_VALUE_ERRORS = (ValueError, OverflowError, pa.ArrowException)
"""What making an Arrow value a Python one raises where Python cannot hold it: ``OverflowError`` (a timestamp or a
date past the year 9999), ``ArrowInvalid`` (a time zone this system does not know)."""


def _rows_cell_by_cell(batch: pa.RecordBatch | pa.Table) -> list[dict[str, Any]]:
    """The rows of an Arrow batch as Python dicts, as ``to_pylist`` gives them, but that each value of a column
    Python cannot hold is an ``Unconvertible`` naming its type and why: the slow way, taken where ``to_pylist``
    fails."""
    names, columns = batch.schema.names, []
    for field, column in zip(batch.schema, batch.columns):
        try:
            columns.append(column.to_pylist())
        except PYTHON_VALUE_ERRORS:
            columns.append([_python_value(column[index], field.type) for index in range(len(column))])
    return [dict(zip(names, values)) for values in zip(*columns)]


def _python_value(cell: pa.Scalar, arrow_type: pa.DataType) -> Any:
    """An Arrow cell as a Python value, or, where Python cannot hold it, an ``Unconvertible``."""
    try:
        return cell.as_py()
    except PYTHON_VALUE_ERRORS as error:
        return Unconvertible(str(arrow_type), one_line(error))


ARROW_READ_ERRORS = (OSError, pa.ArrowException)
"""What reading an Arrow or Parquet file's batches raises where a part of it cannot be read: ``ArrowInvalid``, or an
``OSError`` (a damaged Parquet page: ``Corrupt snappy compressed data.``)."""


def unreadable_rows(file: str | Path, number: int, error: Exception) -> ValueError:
    """The error of a file whose reading from its row ``number`` on failed (``error``, pyarrow's: ``one_line``)."""
    return ValueError(f"{file}: reading its rows from {number} on failed ({one_line(error)})")


def one_line(error: Exception) -> str:
    """pyarrow's message of ``error`` on one line (it may span lines), characters that are not printable (bytes of a
    damaged file it quotes) escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in " ".join(str(error).split()))


def jsonl_rows(path: Path, columns: ColumnMap) -> tuple[ColumnMap, Rows]:
    """Bind ``columns`` to a JSON Lines file and give its objects; blank lines are skipped (``jsonl_lines``).

    JSON Lines has no header: the keys any object holds are the columns those a recipe names are checked
    against, so the file is streamed first for its keys, as far as that check takes (``keys_holding``: to the line
    where the last of them is first found, the whole file where one is never found; not at all where the recipe
    names none), then for its objects. An object may omit keys (read as missing). A file holding a JSON array
    or objects spread over lines is refused first (``refuse_spread_json``), as is one written as UTF-16
    (``refuse_utf16``).
    """
    refuse_utf16(path)
    refuse_spread_json(path)
    keys = keys_holding((row for _, row in _jsonl_objects(path)), columns.required.values())
    return (columns.bind(keys, str(path)) if keys else columns), _jsonl_objects(path)


def jsonl_keys(path: Path) -> list[str]:
    """The columns of a JSON Lines file: every key its objects hold (``object_keys``), the file streamed once; one
    holding a JSON array or objects spread over lines is refused (``refuse_spread_json``), as is one written as UTF-16
    (``refuse_utf16``)."""
    refuse_utf16(path)
    refuse_spread_json(path)
    return object_keys(row for _, row in _jsonl_objects(path))


def once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's ``pairs`` as a dict.

    Raises:
        ValueError: Where it gives a key twice, naming it: a dict would keep its last value alone, dropping the other
            without a word.
    """
    row = dict(pairs)
    if len(row) < len(pairs):
        key = next(key for index, (key, _) in enumerate(pairs) if key in dict(pairs[:index]))
        raise ValueError(f"key {key!r} given twice in one object, whose values cannot both be read; give it once")
    return row


JSON_OBJECTS = json.JSONDecoder(object_pairs_hook=once_each)
"""The decoder of a JSON Lines line (``jsonl_object``), each object of it refused where it gives a key twice."""


def jsonl_object(line: str) -> dict[str, Any]:
    """The object a JSON Lines line holds, decoded (``jsonl_text``).

    Raises:
        ValueError: Where it is not JSON, saying what JSON expected and at which character of the line (``invalid
            JSON (Unterminated string starting at column 8)``), is JSON but not an object (``_not_an_object``), or an
            object of it gives a key twice (``once_each``), for the caller to say which line of which file it is.
    """
    try:  # without the line's end, which JSON reads as space, lest a line cut short be said wrong at line 2 column 1
        row = JSON_OBJECTS.decode(line.rstrip(" \t\r\n"))
    except json.JSONDecodeError as error:
        said = error.msg.removesuffix(" at")  # "Invalid control character at", to be read "at column N"
        raise ValueError(f"invalid JSON ({said} at column {error.colno})") from error
    if not isinstance(row, dict):
        raise ValueError(_not_an_object(row))
    return row


def _not_an_object(value: Any) -> str:
    """What is wrong with a JSON Lines line that holds ``value``, not an object: a list says how such files are read
    (a ``.json`` file holding one array of posts is not)."""
    hint = (
        " (JSON Lines files, .json ones too, hold one object per line, not an array)" if isinstance(value, list) else ""
    )
    return f"expected a JSON object, got {type(value).__name__}{hint}"


def object_keys(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Every key of the objects ``rows``, in the order they first appear."""
    return list(dict.fromkeys(key for row in rows for key in row))


def keys_holding(rows: Iterable[dict[str, Any]], needed: Collection[str]) -> list[str]:
    """The keys of the objects ``rows``, in the order they first appear, read only until each of ``needed`` is among
    them (all the objects' keys where one never is): what checking a mapping's columns against them (``ColumnMap.bind``)
    takes, which fails where one is missing, naming every key."""
    keys: dict[str, None] = {}
    missing = set(needed)
    for row in rows if missing else ():
        keys.update(dict.fromkeys(row))
        missing.difference_update(row)
        if not missing:
            break
    return list(keys)


def jsonl_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Each line of a JSON Lines file opened in binary that is not blank (``blank``), numbered by its place among all
    the file's lines, from 1, a UTF-8 byte order mark before the first removed (as a CSV file's is): what every reader
    of JSON Lines takes for its rows, so that a line is a row to each or to none."""
    return ((number, line) for number, line in numbered_lines(handle) if not blank(line))


def numbered_lines(handle: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """Each line of a file opened in binary, numbered from 1, a UTF-8 byte order mark before the first removed."""
    for number, line in enumerate(handle, start=1):
        yield number, line.removeprefix(codecs.BOM_UTF8) if number == 1 else line


FIRST_LINE_BYTES = 65536
"""How much of a JSON Lines file ``first_line`` reads: a line opening a spread array or object is short, and a longer
first line (a post, or a whole array on one line) is not one."""


def first_line(path: Path) -> bytes | None:
    """The first line of a JSON Lines file that is not blank (``jsonl_lines``), stripped, read from its first
    ``FIRST_LINE_BYTES`` alone; ``None`` where it has none, or one longer (a post, or a whole array on one line)."""
    with open(path, "rb") as handle:
        head = handle.read(FIRST_LINE_BYTES)
    first = next(jsonl_lines(io.BytesIO(head)), None)
    if first is None or (len(head) == FIRST_LINE_BYTES and not first[1].endswith(b"\n")):  # none, or a long line
        return None
    return first[1].strip()


def spread_json_array(path: Path) -> bool:
    """Whether the first line of a JSON Lines file (``first_line``) opens a JSON array it does not close: ``[`` alone,
    or ``[`` and the start of a post (``{``, or ``[``) on a line not ending with ``]`` (``[{...},``, ``[{``, or a first
    post whose followers start with a comma): a file holding one array of posts spread over lines, each line of which
    would be read as a row of its own, none of them a post. No line is parsed, so a header line in brackets
    (``[2024-05-01] export``) or a one-line array is read as rows."""
    line = first_line(path)
    opened = line is not None and line.startswith(b"[") and line[1:].lstrip()[:1] in (b"", b"{", b"[")
    return opened and not line.endswith(b"]")


def spread_json_object(path: Path) -> bool:
    """Whether the first line of a JSON Lines file (``first_line``) opens a JSON object it leaves to the lines after:
    ``{`` alone, as ``jq`` and Python's ``json.dump(..., indent=2)`` write each object, or ``{`` and its first key,
    ending with a comma: posts written over several lines each, every line of which would be read as a row of its
    own, none of them a post. A first line cut short otherwise is read as a row, as any line that is not JSON."""
    line = first_line(path)
    return line is not None and (line == b"{" or (line.startswith(b"{") and line.endswith(b",")))


def refuse_spread_json(path: Path) -> None:
    """Refuse a JSON Lines file holding a JSON array spread over lines (``spread_json_array``), or objects each spread
    over lines (``spread_json_object``), as every reader of posts and scoring run does before reading a row of it.

    Raises:
        ValueError: Naming the file and saying to write one post per line.
    """
    if spread_json_array(path):
        raise ValueError(
            f"{path}: holds a JSON array spread over lines, not JSON Lines (one post's object per line, .json "
            "files too), each line of which would be a row of its own; write it one post per line (jq -c '.[]')"
        )
    if spread_json_object(path):
        raise ValueError(
            f"{path}: holds JSON objects spread over lines, not JSON Lines (one post's object per line, .json "
            "files too), each line of which would be a row of its own; write it one post per line (jq -c .)"
        )


def refuse_utf16(path: Path) -> None:
    """Refuse a text file (JSON Lines, CSV, TSV) written as UTF-16 (or UTF-32), as its byte order mark says, as every
    reader of posts and scoring run does before reading a row of it: read as the UTF-8 faim reads, each character
    of it would come with a NUL byte, its header naming no column written and none of its rows read as written (as
    Excel's Unicode Text export, UTF-16 with tabs, would be).

    Raises:
        ValueError: Naming the file and saying to save it as UTF-8.
    """
    with open(path, "rb") as handle:
        if handle.read(2) in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
            raise ValueError(
                f"{path}: holds UTF-16 text (its byte order mark says so), where faim reads UTF-8: save it as UTF-8 "
                "(iconv -f UTF-16 -t UTF-8)"
            )


JSONL_LINES = 2
"""The version of how a JSON Lines line is taken for a row or passed over as blank (``blank``): 2 passes over a line of
Unicode whitespace, which 1 read as a row. A scoring run reading JSON Lines records it, as its shards are cut by
rows, so that a resume under a faim that cuts them otherwise is refused (``faim.scoring.runner.line_settings``)."""


def blank(line: bytes) -> bool:
    """Whether a line holds nothing but whitespace, as Python's ``str.isspace`` knows it, Unicode's too (a no-break
    space, U+00A0); a line that is not UTF-8 is not blank (its bytes are its row's error). Only a line whose first
    byte after ASCII whitespace is not ASCII is decoded to tell."""
    stripped = line.strip(ASCII_WHITESPACE)
    return not stripped or (stripped[0] >= 0x80 and not line.decode("utf-8", "replace").strip())


ASCII_WHITESPACE = bytes(code for code in range(0x80) if chr(code).isspace())
"""The ASCII characters ``str.isspace`` knows (the file, group, record and unit separators too)."""


def holds_lines_read_otherwise(path: Path) -> bool:
    """Whether the JSON Lines file ``path`` holds a line that ``JSONL_LINES`` 1 read as a row and 2 passes over as blank
    (one of Unicode whitespace beyond the ASCII spaces): a run over it begun under 1 cut its shards otherwise."""
    with open(path, "rb") as handle:
        return any(line.strip() and blank(line) for _, line in numbered_lines(handle))


def jsonl_text(line: bytes) -> str:
    """A JSON Lines line, as read, decoded.

    Raises:
        ValueError: Where it is not UTF-8, saying at which byte of the line (``not UTF-8 text (byte 14 of the
            line)``), for the caller to say which line of which file it is.
    """
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text (byte {error.start + 1} of the line)") from None


def _jsonl_objects(path: Path) -> Rows:
    """The objects of a JSON Lines file, numbered by line."""
    with open(path, "rb") as handle:
        for number, raw in jsonl_lines(handle):
            try:
                line = jsonl_text(raw)
            except ValueError as error:
                raise ValueError(f"{path}:{number}: {error}") from None
            try:
                yield number, jsonl_object(line)
            except ValueError as error:
                raise ValueError(f"{path}:{number}: {error}") from error


DELIMITERS = (",", ";", "\t", "|")
"""The cell separators ``sniffed_delimiter`` tells apart, the first winning ties."""


def sniffed_delimiter(header_line: str, quote_char: str | None = '"') -> str:
    """The one of ``DELIMITERS`` that splits a CSV file's header line into the most columns, so a ``;``-separated
    export (as spreadsheets write where the decimal mark is a comma) reads as it was meant."""
    return max(DELIMITERS, key=lambda d: len(next(csv.reader([header_line], delimiter=d, **quoting(quote_char)), [])))


def file_delimiter(path: Path, header_line: str, quote_char: str | None = '"') -> str:
    """The cell separator of the delimited file at ``path``, as its name and header say: tab for a ``.tsv`` file,
    else (a ``.csv`` file, or one of any other name a recipe's csv source reads) the one its first line shows
    (``sniffed_delimiter``)."""
    return "\t" if Path(path).suffix.lower() == ".tsv" else sniffed_delimiter(header_line, quote_char)


MAX_CELL = 2**31 - 1
"""The longest CSV cell read, in characters: Python's ``csv`` stops at 131,072 by default, and its limit is one for
the whole process, which ``csv_records`` raises to this."""


def csv_records(
    lines: Iterable[str], delimiter: str, quote_char: str | None = '"', first: int = 1
) -> Iterator[tuple[int, list[str] | str]]:
    """Each record of a CSV file's ``lines`` (a file opened as text with ``newline=""``), its header first, with the
    line it starts on (the first is line ``first``); blank lines are skipped. Quoted cells may hold the delimiter and
    newlines; text after a closing quote joins the cell, as Python's ``csv`` reads it (whitespace after a cell over
    lines too). A quote never closed (no quote after it in the file: a later one would close it, as for any CSV
    reader) would take the rest of the file into its cell, and a stray one closed lines later by another cell's quote
    (``stray_quote_line``: text other than whitespace after it) the lines between: such a record comes as what is
    wrong with it instead of its cells, and the lines after its first are read again as records of their own. So does
    a record Python's ``csv`` gives up on (a cell over ``MAX_CELL``), reading going on at the next line."""
    csv.field_size_limit(MAX_CELL)
    read: list[str] = []

    def recorded() -> Iterator[str]:
        for line in lines:
            read.append(line)
            yield line

    def checked(number: int, cells: list[str], raw: list[str]) -> Iterable[tuple[int, list[str] | str]]:
        """The record of ``raw`` (read as ``cells``), or where a stray quote took lines into it, what is wrong with
        it and the records of its lines after the first (not a generator, which would cost every record one)."""
        closed = stray_quote_line(raw, delimiter, quote_char) if quote_char and len(raw) > 1 else None
        if closed is None:
            return ((number, cells),)
        message = (
            f"a quote opening a cell of this row is closed on line {number + closed} with text after it, taking the "
            "lines between into the cell (a stray quote?): the row is not read, and the lines after its first are read "
            "as rows of their own"
        )
        return itertools.chain([(number, message)], csv_records(raw[1:], delimiter, quote_char, number + 1))

    reader = csv.reader(recorded(), delimiter=delimiter, **quoting(quote_char))
    held: tuple[int, list[str], list[str]] | None = None  # the last record, until it is known not to be the last
    starts = first
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            number, starts = starts, first + reader.line_num
            if held is not None:
                yield from checked(*held)
            held = None
            read.clear()
            yield number, f"not CSV ({error})"
            continue
        number, starts = starts, first + reader.line_num
        if held is not None:
            yield from checked(*held)
        held = (number, cells, list(read)) if cells else None
        read.clear()
    if held is None:
        return
    number, cells, raw = held
    if quote_char and never_closed(raw, delimiter, quote_char):
        yield number, "a quote opened in this row is never closed"
        yield from csv_records(raw[1:], delimiter, quote_char, number + 1)
    else:
        yield from checked(number, cells, raw)


def stray_quote_line(raw: list[str], delimiter: str, quote_char: str) -> int | None:
    """Where the lines of a record hold a quoted cell over lines whose closing quote has text other than whitespace
    after it, the line of ``raw`` (from 0) that quote is on, else ``None``: as where a stray quote opening a cell is
    closed by another cell's quote lines later (``2,"5`` then ``3,"six"``), taking the lines between into that cell,
    text no CSV writer puts there and Python's ``csv`` joins to the cell without a word. Text after a quote closing a
    cell of one line, and whitespace after any, are read as Python's ``csv`` reads them."""
    if not _text_after_quote(delimiter, quote_char).search("".join(raw[1:])):  # most records are done here
        return None
    close = _quote_closing_lines(re.compile(rf"[{re.escape(delimiter)}\r\n]"), "".join(raw), quote_char)
    if close is None:
        return None
    return sum(1 for end in itertools.accumulate(map(len, raw)) if end <= close)


@functools.cache
def _text_after_quote(delimiter: str, quote_char: str) -> re.Pattern[str]:
    """A quote, not one of a doubled pair, with text other than whitespace after it in its cell: what a stray quote,
    or the quote closing a cell it opened, has; quickly found, where most records over lines (a cell holding line
    breaks, closed at its end) have none."""
    quote, cut = re.escape(quote_char), re.escape(delimiter)
    return re.compile(rf"{quote}(?<!{quote}{quote})(?:{quote}{quote})*(?!{quote})[^{cut}\r\n]*?[^\s{cut}]")


def _quote_closing_lines(cut: re.Pattern[str], text: str, quote_char: str) -> int | None:
    """The place in ``text`` (a record's lines) of the closing quote of its first quoted cell that holds a line break
    and has text other than whitespace after that quote, its cells read as Python's ``csv`` reads them: a cell opening
    with a quote runs to the next quote not doubled, then, as one not so opening, to the next delimiter or line break
    (``cut``); ``None`` where there is none, or a quote is never closed (``never_closed``'s to say)."""
    start = 0
    while start < len(text):
        if text[start] == quote_char:
            close = start + 1
            while (close := text.find(quote_char, close)) >= 0 and text[close + 1 : close + 2] == quote_char:
                close += 2  # a doubled quote stands for one
            if close < 0:
                return None
            found = cut.search(text, close + 1)
            end = found.start() if found else len(text)
            if ("\n" in text[start:close] or "\r" in text[start:close]) and text[close + 1 : end].strip():
                return close
        else:
            found = cut.search(text, start)
            end = found.start() if found else len(text)
        start = end + 1
    return None


def never_closed(raw: list[str], delimiter: str, quote_char: str) -> bool:
    """Whether the lines of a file's last record leave a quoted cell open: a line holding a lone quote after them
    then closes it, instead of starting a record of its own."""
    return len(list(csv.reader([*raw, quote_char], delimiter=delimiter, quotechar=quote_char))) == 1


def quoting(quote_char: str | None) -> dict[str, Any]:
    """``csv.reader``'s arguments for cells quoted with ``quote_char``, or not quoted at all (``None``)."""
    return {"quotechar": quote_char} if quote_char else {"quoting": csv.QUOTE_NONE}


def csv_header(records: Iterator[tuple[int, list[str] | str]]) -> list[str]:
    """The column names in a CSV file's first record (``csv_records``; none for a file without one), bytes that are
    not UTF-8 written as ``\\xff`` escapes so that messages naming them can be printed and stored."""
    first = next(records, (1, []))[1]
    names = first if isinstance(first, list) else []
    return [name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace") for name in names]


def csv_rows(
    path: Path, columns: ColumnMap, delimiter: str | None = ",", quote_char: str | None = '"'
) -> tuple[ColumnMap, Rows]:
    """Bind ``columns`` to a CSV file's header and stream its rows (``csv_records``).

    Every cell is read as text, so no column's type is guessed from the first rows and then contradicted by later
    ones; label and meta cells that spell a number become an int or a float (``"1"`` → 1, ``"nan"`` → NaN, i.e.
    missing). ``delimiter=None`` takes the one the file's name and header show (``file_delimiter``). A row whose
    cells the header does not match, or a mapped cell that is not UTF-8, stops the read naming its file and line (and
    for such a cell the post's id where its id cell is readable, ``row_name``, the fields it is read into and its
    column, as an error about a post's cell reads: ``file:2 (post id='b') field 'text' (column 'body'): not UTF-8
    text (byte 4 of the cell)``, ``cell_text``) (``ValueError``).
    """
    header, delimiter = csv_file_header(path, delimiter, quote_char)
    bound = columns.reading(text_cells=True).bind(header, str(path))
    return bound, _csv_mapped_rows(path, header, bound, delimiter, quote_char)


def csv_file_header(path: Path, delimiter: str | None = None, quote_char: str | None = '"') -> tuple[list[str], str]:
    """A CSV file's header and the delimiter it is read with (``delimiter``, or where it is ``None`` the one the
    file's name and header show); a file written as UTF-16 is refused (``refuse_utf16``)."""
    refuse_utf16(path)
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        delimiter = delimiter or file_delimiter(path, handle.readline(), quote_char)
        handle.seek(0)
        return csv_header(csv_records(handle, delimiter, quote_char)), delimiter  # a quoted name may span lines


def _csv_mapped_rows(path: Path, header: list[str], bound: ColumnMap, delimiter: str, quote_char: str | None) -> Rows:
    wanted = set(bound.wanted(header))
    numeric = set(bound.labels.values()) | set(bound.meta.values())
    at = {name: index for index, name in enumerate(header)}.get(bound.id)  # the cell a row's id is read from
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        records = csv_records(handle, delimiter, quote_char)
        next(records, None)
        for number, cells in records:
            if isinstance(cells, str):
                raise ValueError(f"{path}:{number}: {cells}")
            if len(cells) != len(header):
                raise ValueError(f"{path}:{number}: {cell_count(header, cells, delimiter)}")
            row = {}
            for name, cell in zip(header, cells):
                if name in wanted:
                    if not cell.isascii() and not utf8(cell):
                        try:  # the cell's own bytes, as faim score decodes them (``cell_text``)
                            cell = cell_text(cell.encode("utf-8", "surrogateescape"))
                        except ValueError as error:
                            where = row_name(f"{path}:{number}", cells[at] if at is not None else None)
                            raise ValueError(f"{where} {bound.cell_name(name)}: {error}") from None
                    row[name] = parse_number(cell) if name in numeric else cell
            yield number, row


def row_name(origin: str, ident: str | None) -> str:
    """A row of a text file (CSV, TSV) as an error about one of its cells names it: as the post it gives
    (``faim.data.post.post_name``), by ``origin`` and its id cell ``ident``, where that holds UTF-8 text; by ``origin``
    alone where the row has no id cell, where it is empty (the post's id is then its place among the posts read, which
    ``FileSource.iter_posts`` counts, not the rows) or where it is not UTF-8."""
    return post_name(origin, ident if ident and utf8(ident) else None)


def utf8(cell: str) -> bool:
    """Whether a cell read with undecodable bytes escaped (``surrogateescape``) had none."""
    try:
        cell.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_number(cell: str | None) -> Any:
    """A CSV cell as an int or a float when it spells one, else unchanged: one spelling NaN (``nan``, ``NaN``) is NaN,
    read as missing as an empty cell is, as Python's ``csv`` module and pandas' ``astype(str)`` write a missing number,
    and one of digits joined by underscores (``20_24``), which Python reads as a number (2024) and no CSV writer
    writes one, stays its text."""
    if isinstance(cell, str) and "_" in cell:
        return cell
    for kind in (int, float):
        try:
            return kind(cell)
        except (TypeError, ValueError):
            continue
    return cell


def open_parquet(path: Path) -> pq.ParquetFile:
    """The Parquet file at ``path``, its footer read (schema, row count), each page it holds a checksum of (as Spark's
    writer gives each) to be checked as it is read: a damaged one cannot be read (``parquet_records``), where
    unchecked it may be read as other text.

    Raises:
        ValueError: When the file is not Parquet (another format renamed, a truncated or empty file), naming it.
    """
    try:
        return pq.ParquetFile(path, page_checksum_verification=True)
    except pa.ArrowInvalid as error:
        raise ValueError(f"{path}: not a Parquet file ({error})") from None


def parquet_rows(path: Path, columns: ColumnMap) -> tuple[ColumnMap, Rows]:
    """Bind ``columns`` to a Parquet file's schema and stream the columns it reads (``ColumnMap.projected``) batch by
    batch (``parquet_records``, its meta columns' BINARY read as text or as bytes as the whole file decides); rows of a
    row group that cannot be read stop the read, naming the file, the first of them and the row group
    (``ValueError``)."""
    file = open_parquet(path)
    names = file.schema_arrow.names
    bound = columns.bind(names, str(path))
    records = parquet_records(file, BATCH_ROWS, bound.projected(names), meta_columns=bound.meta_columns)
    return bound, _read_rows(records, path)


def _read_rows(records: Iterator[tuple[int, dict[str, Any] | str]], path: Path) -> Rows:
    """The rows of ``records`` (``parquet_records``), stopping at the first that is what is wrong with it, naming
    ``path`` and its number and saying what to do (``ValueError``)."""
    for number, row in records:
        if isinstance(row, str):
            raise ValueError(f"{path}:{number}: {row}; restore the file from a sound copy")
        yield number, row


def parquet_records(
    file: pq.ParquetFile,
    batch_rows: int,
    columns: list[str] | None = None,
    skipped: Callable[[int], bool] | None = None,
    meta_columns: Collection[str] = (),
) -> Iterator[tuple[int, dict[str, Any] | str | None]]:
    """Each row of a Parquet file (``open_parquet``), numbered from 0, with its ``columns`` (``None``: all), read
    ``batch_rows`` at a time. Where a row group cannot be read (a damaged page, which pyarrow cannot decode or
    decompress), each of its rows not read comes as what is wrong with it (``unreadable_group``) instead of its cells,
    and reading goes on at the next row group: one damaged group costs its own rows alone, and every row keeps its
    number. The rows of each block of ``batch_rows`` (a row's block is its number // ``batch_rows``) that ``skipped``
    holds come as ``None``, neither converted nor checked, and a row group every row of which does is not read at all.
    The row groups between two such are read by one pyarrow reader (one begun per group costs about 0.6 ms, several
    times the reading of a group of 100 short rows); where it fails, the group of the first row it did not give is read
    alone from that row on, as a batch may reach from a sound group into the damaged one. The BINARY values of the
    ``meta_columns`` read are text in every row or bytes in every row (``text_types``), as the whole file decides."""
    types = text_types(_readable_groups(file, meta_columns), meta_columns)
    metadata = file.metadata
    groups = metadata.num_row_groups
    starts = list(itertools.accumulate((metadata.row_group(g).num_rows for g in range(groups)), initial=0))
    whole = [
        skipped is not None and all(map(skipped, range(starts[g] // batch_rows, (starts[g + 1] - 1) // batch_rows + 1)))
        for g in range(groups)
    ]
    group = 0
    while group < groups:
        if whole[group]:
            yield from ((row, None) for row in range(starts[group], starts[group + 1]))
            group += 1
            continue
        end = next((g for g in range(group + 1, groups) if whole[g]), groups)
        failed = yield from _group_records(file, range(group, end), starts[group], batch_rows, columns, skipped, types)
        if failed is None:
            group = end
            continue
        group = min(bisect.bisect_right(starts, failed[0]), end) - 1
        start, stop = starts[group], starts[group + 1]
        failed = yield from _group_records(
            file, range(group, group + 1), start, batch_rows, columns, skipped, types, failed[0]
        )
        if failed is not None:
            problem = unreadable_group(group, start, stop, *failed)
            yield from ((row, problem) for row in range(failed[0], stop))
        group += 1


def _group_records(
    file: pq.ParquetFile,
    groups: range,
    first: int,
    batch_rows: int,
    columns: list[str] | None,
    skipped: Callable[[int], bool] | None,
    types: Mapping[str, pa.DataType],
    given: int = 0,
) -> Generator[tuple[int, dict[str, Any] | None], None, tuple[int, Exception] | None]:
    """The rows of the consecutive row ``groups`` of ``file`` (``parquet_records``), whose first row is numbered
    ``first``, its columns ``types`` names read as their types there (``read_as``), but those numbered below ``given``
    (read but not given); returns ``None`` where every row was read, or the number of the first row not given and
    pyarrow's error that stopped the reading."""
    number = first
    read = file.iter_batches(batch_size=batch_rows, row_groups=groups, columns=columns)
    batches = (read_as(batch, types) for batch in read)
    while True:
        try:
            batch = next(batches, None)
        except ARROW_READ_ERRORS as error:
            return max(number, given), error
        if batch is None:
            return None
        if (drop := max(given - number, 0)) < batch.num_rows:
            rows = _block_rows(batch.slice(drop), number + drop, batch_rows, skipped)
            yield from zip(itertools.count(number + drop), rows)
        number += batch.num_rows


def _block_rows(
    batch: pa.RecordBatch, first: int, block_rows: int, skipped: Callable[[int], bool] | None
) -> Iterator[dict[str, Any] | None]:
    """The rows of ``batch``, whose first row is numbered ``first``, as Python dicts (``python_rows``), but ``None``
    for each row of a block of ``block_rows`` (a row's block is its number // ``block_rows``) that ``skipped`` holds."""
    if skipped is None:
        yield from python_rows(batch)
        return
    number, end = first, first + batch.num_rows
    while number < end:
        block_end = min(end, (number // block_rows + 1) * block_rows)
        if skipped(number // block_rows):
            yield from itertools.repeat(None, block_end - number)
        else:
            yield from python_rows(batch.slice(number - first, block_end - number))
        number = block_end


def _readable_groups(file: pq.ParquetFile, columns: Collection[str]) -> Iterator[pa.Table]:
    """The row groups of a Parquet file, each with those of its ``columns`` that hold BINARY (``binary_paths``) alone,
    but one that cannot be read (its rows are errors of their own: ``parquet_records``); none where no column does."""
    schema = file.schema_arrow
    held = [name for name in columns if name in schema.names and binary_paths(schema.field(name).type)]
    for group in range(file.metadata.num_row_groups) if held else ():
        try:
            yield file.read_row_group(group, columns=held)
        except ARROW_READ_ERRORS:
            continue


def unreadable_group(group: int, start: int, end: int, number: int, error: Exception) -> str:
    """What is wrong with the rows ``number`` to ``end - 1`` of a Parquet file's row ``group`` (its rows ``start`` to
    ``end - 1``), whose reading failed there (``error``, pyarrow's: ``one_line``)."""
    where = f" from row {number} on" if number > start else ""
    rows = f"rows {start} to {end - 1}"
    return f"row group {group} ({rows}) of the Parquet file cannot be read{where} ({one_line(error)})"


def data_files(spec: Path) -> list[Path]:
    """The files whose bytes identify a split: its files (``faim.data.inputs.expand``), a saved dataset folder by its
    Arrow files."""
    return [file for path in expand(spec) for file in (sorted(path.rglob("*.arrow")) if path.is_dir() else [path])]


def sha256_files(files: Iterable[Path], extra: str = "") -> str:
    """sha256 over ``extra`` and the bytes of ``files``, in order."""
    digest = hashlib.sha256(extra.encode())
    for file in files:
        with open(file, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


class FileSource(ABC):
    """Base of sources with one data file (or folder) per split, mapped to posts by a ``ColumnMap``.

    Subclasses implement ``rows(path)``, returning the bound mapping and the file's rows.

    Args:
        train: Data file of the training split.
        validation: Data file of the validation split.
        test: Data file of the test split.
        columns: The recipe's column mapping (see ``faim.data.columns``); ``None`` maps fields to
            same-named columns.
        image_root: Directory relative image paths resolve against (relative to the working
            directory); ``None`` uses each data file's directory.
        options: Reading options of the subclass (delimiter...), mixed into the fingerprint.

    Its recipe path (``faim.registry.source_path``: ``data``, or a member's, ``data.sources[1]``) names a split whose
    file is not there by the key the recipe gives it (``data.sources[1].validation: ...``).
    """

    def __init__(
        self,
        train: str | None,
        validation: str | None,
        test: str | None,
        columns: dict | None,
        image_root: str | None,
        options: dict[str, Any] | None = None,
    ) -> None:
        self.files = {
            name: data_path(file)
            for name, file in zip(SPLITS, (train, validation, test), strict=True)
            if file is not None
        }
        self.columns = ColumnMap.from_recipe(columns)
        self.image_root = data_path(image_root).absolute() if image_root is not None else None
        self.options = options or {}
        self.recipe_path = source_path()

    formats: tuple[str, ...] = ()
    """The formats (``faim.data.inputs.FORMATS``) this source reads from a folder or glob; empty: any."""

    text_cells: bool = False
    """Whether the cells of this source's files are text (CSV, TSV), a list written as a JSON list string
    (``faim.data.columns.ColumnMap.to_post``)."""

    @abstractmethod
    def rows(self, path: Path) -> tuple[ColumnMap, Rows]:
        """The mapping bound to the file at ``path`` and a stream of its ``(number, row)`` pairs."""

    def splits(self) -> list[str]:
        """The configured split names (among train, validation, test)."""
        return list(self.files)

    def location(self, split: str) -> Path:
        """The file or folder holding ``split``.

        Raises:
            KeyError: When ``split`` is not configured, naming it by the source's recipe path, the configured ones
                and, for a split a recipe may give, its key (``faim.data.native.unknown_split``: ``data: no split 'test'
                (give its file as data.test); found: train, validation``).
        """
        if split not in self.files:
            key = f"{self.recipe_path}.{split}" if split in SPLITS else None
            raise unknown_split(self.recipe_path, split, self.splits(), given_as=key)
        return self.files[split]

    def posts(self, split: str) -> list[Post]:
        """All posts of ``split``, its files found once (``split_inputs``) and then read.

        Raises:
            FileNotFoundError, ValueError: As ``check_split`` raises them, before any file is read.
        """
        return list(self.read_files(self.split_inputs(split)))

    def check_split(self, split: str) -> None:
        """Find the files of ``split`` as reading it does (``split_inputs``), reading none of them: a misspelt file of
        one split is named before another is read.

        Raises:
            FileNotFoundError, ValueError: As ``split_inputs`` raises them.
        """
        self.split_inputs(split)

    def split_inputs(self, split: str) -> list[Path]:
        """The files ``split`` is read from (``inputs`` of its ``location``), listed once, none of them read.

        Raises:
            FileNotFoundError: When the split's location stands for nothing, naming the split by its recipe key
                (``data.validation: ...``), and where the location is relative, that a recipe's data paths are read
                from the working directory (``recipe_path_note``).
            ValueError: On a file a folder or glob holds in another format (``inputs``), naming the split so too.
        """
        location = self.location(split)
        try:
            return self.inputs(location)
        except (FileNotFoundError, ValueError) as error:
            note = recipe_path_note(location) if isinstance(error, FileNotFoundError) else ""
            raise type(error)(f"{self.recipe_path}.{split}: {error}{note}") from None

    def inputs(self, path: str | Path) -> list[Path]:
        """The files ``path`` stands for (``faim.data.inputs.expand``), each in this source's format.

        Raises:
            FileNotFoundError: When ``path`` stands for nothing.
            ValueError: On a file a folder or glob holds in another format.
        """
        files = expand(path)
        if len(files) > 1 or files[0] != Path(path):
            wrong = [f for f in files if self.formats and input_format(f) not in self.formats]
            if wrong:
                raise ValueError(f"{path}: {wrong[0]} is not {' or '.join(self.formats)}, which this source reads")
        return files

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Stream the posts of a file in this source's format, or of every one a folder or glob stands for
        (``inputs``), with its mapping and image root (default: each file's folder).

        Raises:
            FileNotFoundError: When ``path`` stands for nothing.
            ValueError: On a file a folder or glob holds in another format, a malformed file, a missing mapped
                column, or a cell of the wrong type.

        Warns:
            FaimWarning: Once every file is read (or reading ends before), naming those read that hold no row
                (``faim.data.inputs.read_inputs``).
        """
        yield from self.read_files(self.inputs(path))

    def read_files(self, files: list[Path]) -> Iterator[Post]:
        """Stream the posts of ``files``, found already (``inputs``), one after another (``file_posts``), a post
        without an id taking its place among all of them.

        Warns:
            FaimWarning: Naming the files read that hold no row (``faim.data.inputs.read_inputs``).
        """
        indexes = itertools.count()
        return read_inputs(files, lambda file: self.file_posts(file, indexes))

    def file_posts(self, file: Path, indexes: Iterator[int]) -> Iterator[Post]:
        """Stream the posts of one file, with its mapping and image root (default: the file's folder), each taking
        the next of ``indexes`` as its place (what names a post without an id)."""
        root = self.image_root or file.absolute().parent
        bound, rows = self.rows(file)
        text_cells = self.cells_are_text(file)
        for number, row in rows:
            yield bound.to_post(row, next(indexes), f"{file}:{number}", root, text_cells)

    def cells_are_text(self, file: Path) -> bool:
        """Whether the cells of ``file`` are text, a list written as a JSON list string: of every file of this source,
        ``text_cells``."""
        return self.text_cells

    def describe(self, split: str) -> str:
        """The data file of ``split``, as reports and cache keys show it."""
        return str(self.location(split))

    def fingerprint(self, split: str) -> str:
        """sha256 of the split's data bytes, the column mapping and the reading options (embedding-cache key)."""
        options = json.dumps({"columns": self.columns.fingerprint_key(), **self.options}, sort_keys=True)
        return sha256_files(data_files(self.location(split)), extra=options)
