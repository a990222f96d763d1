"""The recipe's column mapping, and the one row → ``Post`` conversion every source shares.

A mapping names, for each post field, the column that holds it::

    columns: {id: tweet_id, text: tweet, image: img, comments: replies, labels: {hate: class}, meta: [lang]}

Unmapped fields default to the column of the same name (``images`` falls back, row by row, to ``image``: a row
whose ``images`` cell is empty or absent reads its ``image`` cell; a ``labels`` or ``meta`` column's cell holding a
mapping gives the post's tasks or meta fields the mapping does not name, as in a post given as a dict, those it
names read from their columns) and are simply absent when the file lacks that column; a column named explicitly
must exist in the file (of JSON Lines, in some object of it). Cells may hold a list (images, comments, a multilabel
task's labels), or, in a file whose cells are text (CSV, TSV: ``text_cells``), a JSON-encoded list string, where a
JSON Lines or Parquet file's string is one image, comment or label, whatever it holds, as in a post given as a dict;
empty cells mean "missing": no text, no images, no comments, or no label for that task.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faim.data.post import (
    FIELDS,
    OBJECT_FIELDS,
    ImageRef,
    Post,
    Unconvertible,
    field_names,
    is_missing,
    is_null,
    json_list,
    post_id,
    post_name,
)
from faim.registry import suggest

SINGLE = ("id", "text", "images", "comments")

FIELD_OBJECTS = 1
"""The version of how an unmapped ``labels`` or ``meta`` column is read: 1 reads a cell of it holding a mapping as
the post's tasks or meta fields (``ColumnMap.object_cell``), where faim before read no such column. A scoring run
reading a file whose cells may hold a mapping records it (``faim.scoring.runner.object_settings``), so that a run
begun by a faim reading them otherwise is not resumed."""
NAMED_OBJECTS = 2
"""The version of how a ``labels`` or ``meta`` column is read beside a mapping naming some of its tasks or meta fields:
2 reads the cell's others (``ColumnMap.object_cell``), where faim before read none once one was named. A scoring run
whose inputs hold such a column records it in place of ``FIELD_OBJECTS`` (``faim.scoring.runner.object_settings``)."""


@dataclass(frozen=True)
class ColumnMap:
    """Which column holds each post field.

    Attributes:
        id: Column of post ids; ``None`` (or a row without one) uses the row's place (``to_post``'s ``index``).
        text: Column of post texts.
        images: Column of image paths (one path, a list, or, in a CSV or TSV file, a JSON list string), image
            bytes, or Hugging Face image structs (``{"bytes", "path"}``).
        comments: Column of comment lists (a list or, in a CSV or TSV file, a JSON list string; any other string
            is one comment).
        labels: Task name to the column holding its raw label (a list of them for a multilabel task: a list or, in a
            CSV or TSV file, a JSON list string; any other string is one label).
        meta: Meta field name to the column kept in ``Post.meta``.
        explicit: The fields the recipe named; only those must exist in the file.
        objects: Those of ``OBJECT_FIELDS`` read from the column of their name where its cell holds a mapping
            (``object_cell``), for the tasks or meta fields ``labels`` or ``meta`` does not name: each the recipe does
            not map to ``None`` (which reads none) and whose column is no field's. The column is read for nothing
            else: it is no field's column (``fields``) and is listed among those ``unread``. Not given (``None``):
            each whose column is no field's.
    """

    id: str | None = "id"
    text: str | None = "text"
    images: str | None = "images"
    comments: str | None = "comments"
    labels: dict[str, str] = field(default_factory=dict)
    meta: dict[str, str] = field(default_factory=dict)
    explicit: tuple[str, ...] = ()
    objects: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        named = {column for _, column in self.fields}  # a column a field is read from holds that field alone
        objects = OBJECT_FIELDS if self.objects is None else self.objects
        object.__setattr__(self, "objects", tuple(key for key in objects if key not in named))

    @classmethod
    def from_recipe(cls, mapping: Mapping[str, Any] | None) -> ColumnMap:
        """Build a mapping from the recipe's ``columns:`` dict (``None``: identity mapping).

        ``image`` is accepted for ``images``; ``labels`` and ``meta`` take a dict (name → column) or a
        list of columns (each kept under its own name), the tasks or meta fields they do not name read from the
        column of their name where it holds a mapping, as where they are not given; a field mapped to ``None`` is
        not read (``labels`` or ``meta``: no task or meta field is).

        Raises:
            ValueError: On an unknown key (naming the valid ones), both ``image`` and ``images``, or a
                value of the wrong type.
        """
        mapping = dict(mapping or {})
        for key in mapping:
            if key not in FIELDS:
                raise ValueError(
                    f"columns: unknown key {key!r}{suggest(str(key), list(FIELDS))}; valid: {', '.join(FIELDS)}"
                )
        if "image" in mapping:
            if "images" in mapping:
                raise ValueError("columns: give either 'image' or 'images', not both")
            mapping["images"] = mapping.pop("image")
        for key in SINGLE:
            if mapping.get(key) is not None and not isinstance(mapping[key], str):
                raise ValueError(f"columns.{key}: expected a column name, got {mapping[key]!r}")
        return cls(
            **{key: mapping[key] for key in SINGLE if key in mapping},
            labels=_named_columns("labels", mapping.get("labels")),
            meta=_named_columns("meta", mapping.get("meta")),
            explicit=tuple(key for key in SINGLE if key in mapping),
            objects=tuple(key for key in OBJECT_FIELDS if key not in mapping or mapping[key] is not None),
        )

    def bind(self, available: Collection[str], file: str) -> ColumnMap:
        """Check the mapping against a file's columns (of JSON Lines, every key an object of the file holds), and
        give it back.

        Raises:
            ValueError: Naming the file, then what ``mismatch`` finds wrong.
        """
        problem = self.mismatch(available)
        if problem is not None:
            raise ValueError(f"{file}: {problem}")
        return self

    def mismatch(self, available: Collection[str]) -> str | None:
        """What is wrong with the mapping for a file of the columns ``available``, for the caller to say which file
        (or row) it is; ``None`` where nothing is: a column named in the recipe missing, naming the mapping key and
        the available columns; a column a field is read from unmapped missing where the file names it with spaces
        around it (``id, text``: ``padded_note``), the field otherwise read from no column without a word; a column a
        field is read from named more than once (a CSV header such as ``id,text,text``, of which reading would keep
        the last cell alone; an ``objects`` column too), naming it and the fields."""
        for key, column in self.required.items():
            if column not in available:
                close = padded_note(column, available) or suggest(column, list(available))
                return f"column {column!r} (columns.{key}) not found{close}; available: {', '.join(available)}"
        for name, column in self.fields:
            if column not in available and (note := padded_note(column, available)):
                return (
                    f"column {column!r}, which {field_names(name)} is read from where no mapping names another, not "
                    f"found{note}: write the names without the spaces, or map the field to the column so named"
                )
        names = list(available)
        for column in dict.fromkeys(self.projected(names)):
            if names.count(column) > 1:
                objects = [column] if column in self.objects else []
                fields = field_names([name for name, read in self.fields if read == column] + objects)
                return (
                    f"{names.count(column)} columns are named {column!r}, read into {fields}: which one is meant "
                    "cannot be told; rename all but one"
                )
        return None

    @property
    def required(self) -> dict[str, str]:
        """The columns the recipe names, each under its mapping key (``text``, ``labels.hate``, ``meta.lang``): those
        a file must have (``bind``); a field mapped to ``None`` names none."""
        named = {key: getattr(self, key) for key in self.explicit}
        named |= {f"labels.{task}": column for task, column in self.labels.items()}
        named |= {f"meta.{name}": column for name, column in self.meta.items()}
        return {key: column for key, column in named.items() if column is not None}

    @property
    def meta_columns(self) -> list[str]:
        """The columns meta fields are read from: those ``meta`` maps them to, and ``meta`` where it is read for the
        fields its cells hold (``objects``)."""
        return [*self.meta.values(), *(["meta"] if "meta" in self.objects else [])]

    @property
    def image_columns(self) -> tuple[str | None, ...]:
        """The columns images may be read from: the mapped one, or, unmapped, ``images`` and then ``image``."""
        return (self.images,) if "images" in self.explicit else (self.images, "image")

    def images_cell(self, row: Mapping[str, Any], text_cells: bool = False) -> tuple[str | None, Any]:
        """The column a row's images are read from and its cell there (``_listed_cell``: with ``text_cells``, a JSON
        list string decoded, each cell once): the mapped column, or, unmapped, ``images`` unless the row's ``images``
        cell is missing (absent, null or empty, ``faim.data.post.is_missing``; with ``text_cells``, an empty JSON list
        string too), then ``image``."""
        cell = _listed_cell(row, self.images, text_cells)
        if "images" in self.explicit or not is_missing(cell):
            return self.images, cell
        return "image", _listed_cell(row, "image", text_cells)

    @property
    def fields(self) -> list[tuple[str, str]]:
        """Each field of a post with a column it is read from, as ``(field, column)`` pairs: ``id``, ``text``,
        ``images`` (from each of ``image_columns``), ``comments``, ``labels.TASK`` and ``meta.NAME``; a field mapped
        to ``None`` reads none."""
        read = [("id", self.id), ("text", self.text), *(("images", column) for column in self.image_columns)]
        read += [("comments", self.comments), *((f"labels.{task}", column) for task, column in self.labels.items())]
        read += [(f"meta.{name}", column) for name, column in self.meta.items()]
        return [(name, column) for name, column in read if column is not None]

    def cell_name(self, column: str) -> str:
        """The fields read from ``column`` (``fields``: at least one) and the column, as an error about one of its
        cells names them: ``field 'text' (column 'body')``, ``fields 'labels.hate', 'meta.y' (column 'y')``."""
        return f"{field_names([name for name, read in self.fields if read == column])} (column {column!r})"

    def wanted(self, available: Collection[str]) -> list[str]:
        """The mapped columns present in ``available``, in file order (for column projection)."""
        mapped = {column for _, column in self.fields}
        return [column for column in available if column in mapped]

    def reading(self, text_cells: bool) -> ColumnMap:
        """The mapping as it reads a file whose cells are text where ``text_cells`` (CSV, TSV): one reading no
        ``objects``, a cell there never holding a mapping; otherwise this one."""
        return dataclasses.replace(self, objects=()) if text_cells else self

    def projected(self, available: Collection[str]) -> list[str]:
        """The columns of ``available`` a row is read from, in file order (for column projection): those ``wanted``
        and the ``objects`` ones."""
        read = {*self.wanted(available), *self.objects}
        return [column for column in available if column in read]

    def unread(self, available: Collection[str]) -> list[str]:
        """The columns of ``available`` no field of the mapping reads, in file order (the complement of ``wanted``),
        as a listing of them names each: an ``objects`` column, read only where its cell holds a mapping, as
        ``meta (read where it holds an object)`` (``object_read``)."""
        wanted = set(self.wanted(available))
        return [
            object_read(column) if column in self.objects else column for column in available if column not in wanted
        ]

    def fingerprint_key(self) -> str:
        """A stable text form of the mapping, mixed into cache fingerprints."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def post_id(self, row: Mapping[str, Any], index: int, origin: str = "") -> str:
        """The id of a row (column → value): its id cell, or ``index`` (as ``to_post`` takes it) where it has none
        (``faim.data.post.post_id``, as a post given as a dict).

        Raises:
            ValueError: Naming the row by ``origin``, the field and its column, on an id cell holding what no id is
                (a mapping, a list, a boolean, a float that is not a whole number or is past the integers its
                width holds exactly: ``faim.data.post.id_text``).
        """
        where = f"{post_name(origin)} {self.cell_name(self.id)}"
        return post_id(_text(_cell(row, self.id), where), index, where)

    def to_post(
        self, row: Mapping[str, Any], index: int, origin: str, image_root: Path | None, text_cells: bool = False
    ) -> Post:
        """Convert one row (column → value) of a bound mapping into a ``Post``.

        Args:
            row: The row's cells; absent columns read as missing.
            index: The row's place, used as the id when the row has none: the 0-based index among the posts read
                (``faim.data.tabular``), or, when a dump is scored, the row's number in ``origin``
                (``faim.scoring.inputs``).
            origin: ``"file:row"``, stored on the post and used in error messages.
            image_root: Directory relative image paths resolve against.
            text_cells: The row's cells are text, as a CSV or TSV file's are, where a list can only be written as a
                JSON-encoded list string: such a string in the images, comments or a label cell is read as its list.
                Otherwise (JSON Lines, Parquet, a dataset), lists are lists and a string is one image, comment or
                label.

        Raises:
            ValueError: When a cell has the wrong type (non-string text, a comment that is not a string...), naming
                the row by ``origin`` and the id the post takes (``faim.data.post.post_name``), the field and its
                column.
        """
        ident = self.post_id(row, index, origin)
        where = post_name(origin, ident)
        text = self.text_cell(row, self.text, where)
        if text is not None and not isinstance(text, str):
            raise ValueError(f"{where} field 'text' (column {self.text!r}): must be a string, got {text!r}")
        labels = {task: self.text_cell(row, column, where, text_cells) for task, column in self.labels.items()}
        labels = {task: value for task, value in labels.items() if value is not None}
        labels |= self.object_cell(row, "labels", where)
        meta = {name: _cell(row, column) for name, column in self.meta.items()}  # its bytes as its reader decides
        meta |= self.object_cell(row, "meta", where)
        column, images = self.images_cell(row, text_cells)
        return Post(
            id=ident,
            text=text,
            images=_images(images, where, column),
            comments=_comments(self.text_cell(row, self.comments, where, text_cells), where, self.comments),
            labels=labels,
            meta=meta,
            origin=origin,
            image_root=image_root,
        )

    def text_cell(self, row: Mapping[str, Any], column: str | None, where: str, text_cells: bool = False) -> Any:
        """The row's value for ``column`` (``_listed_cell``), bytes of it (a Parquet BINARY column's cell, as Impala
        and older Hive write text without marking it UTF-8), alone or in a list, the UTF-8 text they hold
        (``_text``), as a field holding text (text, comments, a label) reads them.

        Raises:
            ValueError: Naming the row by ``where``, the field and ``column``, where bytes are not UTF-8.
        """
        return _text(_listed_cell(row, column, text_cells), f"{where} {self.cell_name(column)}" if column else where)

    def object_cell(self, row: Mapping[str, Any], name: str, where: str) -> dict[str, Any]:
        """The tasks or meta fields (``name``) of a row read from the column of that name (``objects``): those of the
        mapping its cell holds (a JSON object, a Parquet struct, or a Parquet map keyed by text, which Arrow gives as
        a list of ``(key, value)`` pairs), as a post given as a dict holds them, but the ones ``labels`` or ``meta``
        names, read from their own columns; ``{}`` where the column is not read so or the cell holds no mapping
        (missing, or a value of a column that happens to bear the name, such as a CSV or TSV cell, which is text),
        left unread as a column no mapping reads is. Bytes among them are read as a field of their own is: a label's
        as the UTF-8 text they hold (``_text``), a meta field's as its reader gives them, text where every value of
        that field in the file is UTF-8 text, bytes where one is not (``faim.data.tabular.text_types``).

        Raises:
            ValueError: Naming the row by ``where``, the field and its column, where the cell is one Python cannot
                hold (``faim.data.post.Unconvertible``: a struct holding a timestamp past the year 9999), whose fields
                cannot be told.
        """
        value = row.get(name) if name in self.objects else None
        if isinstance(value, Unconvertible):
            raise ValueError(f"{where} field {name!r} (column {name!r}): {value!r}")
        if isinstance(value, list) and all(type(pair) is tuple and isinstance(pair[0], str) for pair in value):
            value = dict(value)
        named = getattr(self, name)
        if not isinstance(value, Mapping):
            return {}
        held = {key: item for key, item in value.items() if key not in named}
        if name == "meta":  # its bytes as its reader decides (faim.data.tabular.text_types)
            return held
        return {key: _text(item, f"{where} field '{name}.{key}' (column {name!r})") for key, item in held.items()}


def cell_text(cell: bytes) -> str:
    """A CSV cell's bytes, decoded: as a CSV's cells are split before they are decoded, text after a quoted cell's
    closing quote, which joins the cell, may complete a character the quote cut (``1,"ab<E2>"<82><AC>`` reads
    ``ab€``), wherever the cell is read.

    Raises:
        ValueError: Where it is not UTF-8, saying at which byte of the cell (``not UTF-8 text (byte 4 of the
            cell)``), for the caller to say which field, column, line and file it is.
    """
    try:
        return cell.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text (byte {error.start + 1} of the cell)") from None


def padded_note(column: str, available: Collection[str]) -> str:
    """What the error of ``column`` not found among ``available`` adds where one of them is ``column`` with whitespace
    around it (`` text`` of a CSV header written ``id, text, label``): that names are read as written, spaces too, as
    pandas and pyarrow read a header; ``""`` where none is."""
    padded = next((name for name in available if name != column and name.strip() == column), None)
    if padded is None:
        return ""
    as_written = "a name is read as written, the spaces around it too, as pandas and pyarrow read it"
    return f" (the file names {padded!r}: {as_written})"


def object_read(column: str) -> str:
    """``column``, an ``objects`` one, as ``ColumnMap.unread`` lists it: ``meta (read where it holds an object)``."""
    return f"{column} (read where it holds an object)"


def _named_columns(key: str, value: Any) -> dict[str, str]:
    """Normalise a ``labels``/``meta`` mapping: a dict name → column, or a list of columns."""
    if value is None:
        return {}
    if isinstance(value, (list, tuple)):
        value = {column: column for column in value}
    if not isinstance(value, Mapping):
        raise ValueError(f"columns.{key}: expected a dict of name to column or a list of columns, got {value!r}")
    if named := [item for item in [*value.keys(), *value.values()] if not isinstance(item, str)]:
        raise ValueError(f"columns.{key}: names and columns are text, got {named[0]!r} in {dict(value)!r}")
    return dict(value)


def _cell(row: Mapping[str, Any], column: str | None) -> Any:
    """The row's value for ``column``; absent, null, NaN and empty strings all read as ``None``."""
    value = row.get(column) if column is not None else None
    if value == "" or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _listed_cell(row: Mapping[str, Any], column: str | None, text_cells: bool) -> Any:
    """The row's value for ``column`` (``_cell``), with ``text_cells`` a JSON-encoded list string decoded."""
    value = _cell(row, column)
    decoded = json_list(value) if text_cells else None
    return value if decoded is None else decoded


def _text(value: Any, where: str) -> Any:
    """``value``, where it is bytes, or a list of which some are, with those bytes as the UTF-8 text they hold
    (``cell_text``); any other value as it is. A meta field's are not read so: its reader reads its column's BINARY as
    text or as bytes, as the whole file decides (``faim.data.tabular.text_types``).

    Raises:
        ValueError: Naming ``where`` (the row, its field and column) where bytes are not UTF-8.
    """
    if isinstance(value, list):
        return [_text(item, where) for item in value] if any(isinstance(item, bytes) for item in value) else value
    if not isinstance(value, bytes):
        return value
    try:
        return cell_text(value)
    except ValueError as error:
        raise ValueError(f"{where}: {error}") from None


def _as_list(value: Any) -> list[Any]:
    """A list cell as is, any other value as a one-item list."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def _images(value: Any, where: str, column: str | None) -> list[ImageRef]:
    """Image references: paths, encoded bytes, or Hugging Face ``{"bytes", "path"}`` structs; empties dropped, and
    anything else (a number, an object with neither key) refused, naming ``where`` (the post, ``post_name``) and
    ``column``."""
    images: list[ImageRef] = []
    for item in _as_list(value):
        if isinstance(item, Mapping) and ("bytes" in item or "path" in item):
            item = item.get("bytes") or item.get("path")
        if item is None or item == "" or item == b"":
            continue
        if not isinstance(item, (str, bytes)):
            raise ValueError(f"{where} field 'images' (column {column!r}): holds {item!r}, not an image path or bytes")
        images.append(item)
    return images


def _comments(value: Any, where: str, column: str | None) -> list[str]:
    """Comment texts in order; null (``is_null``: ``None``, NaN, as ``json.dumps`` writes a float NaN in a JSON Lines
    list) and blank comments dropped, as a post given as a dict drops them, anything else that is not a string refused,
    naming ``where`` (the post, ``post_name``) and ``column``."""
    comments: list[str] = []
    for item in _as_list(value):
        if isinstance(item, str):
            if item.strip():
                comments.append(item)
        elif not is_null(item):
            raise ValueError(f"{where} field 'comments' (column {column!r}): holds {item!r}, not a string")
    return comments
