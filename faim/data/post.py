"""The unit faim scores: a post with its text, images, comments, labels and metadata."""

from __future__ import annotations

import ast
import decimal
import json
import math
import numbers
import sys
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field
from dataclasses import fields as dataclass_fields
from pathlib import Path
from typing import Any

from faim.notices import warn
from faim.registry import a_type, suggest
from faim.wording import plural

ImageRef = str | bytes | Path


SOURCE = "source"
"""The ``meta`` field naming the dataset a post comes from where several are read together (``faim.data.concat``
sets it): ``train.balance`` and ``eval.threshold_balance`` read it, ``eval.slice: source`` reports each apart."""

LANGUAGE = "lang"
"""The ``meta`` field giving the language a post is written in, which evaluation fills where a post has none
(``faim.data.language``)."""

ADDED_META = frozenset({SOURCE, LANGUAGE})
"""The ``meta`` fields faim gives posts itself (``SOURCE``, ``LANGUAGE``), for slicing and balancing: no metadata
encoder reads them (``meta_numeric`` reads numbers), so they are not the metadata a post holds (``Post.has_meta``),
even where a post's own data gives them."""


@dataclass
class Post:
    """One post.

    Attributes:
        id: Stable identifier, carried to every output row.
        text: The post's text; ``None`` or an empty string means "no text" (masked, not an error).
        images: Image paths (relative paths resolve against the source's image root) or encoded bytes.
        comments: Comment texts, in order; empty and null comments are dropped.
        labels: Task name to label: an int class index, a label name, or a list of either for multilabel
            tasks (a list, not a string spelling one, which is one label). A missing task means "unlabelled for
            that task".
        meta: Free-form fields kept for slicing and reporting (e.g. ``{"slice": "en"}``).
        origin: Where the post came from (``"file.jsonl:17"``), used in error messages.
        image_root: Directory that relative image paths resolve against (``None``: the working directory).
    """

    id: str
    text: str | None = None
    images: list[ImageRef] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    labels: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    origin: str = ""
    image_root: Path | None = None

    def __post_init__(self) -> None:
        """Check and normalise the fields as ``from_dict`` reads them from a dict (see ``checked_fields``), naming the
        post by its origin and id (``post_name``); the post holds lists and dicts of its own, not those given.

        Raises:
            ValueError: Also for a missing id (``is_missing``), which ``from_dict`` and a file's rows replace by the
                post's place (``post_id``).
        """
        self.id = checked_id(self.origin, self.id)
        given = self.images, self.comments, self.labels, self.meta
        self.text, *checked = checked_fields(post_name(self.origin, self.id), self.text, *given)
        self.images, self.comments, self.labels, self.meta = owned(checked, given)

    @classmethod
    def from_dict(cls, row: Mapping[str, Any], index: int = 0) -> Post:
        """Build a post from a plain dict with the field names above.

        ``image`` (one path) is accepted as a shorthand for ``images``, read where ``images`` is missing (absent, null
        or empty: ``is_missing``); a missing ``id`` (``post_id``) becomes ``index``, the post's place. Unknown keys
        (``unknown_fields``), and a field of the wrong type (see ``checked_fields``), raise ``ValueError`` naming the
        post by its index and id (``post_name``) and the field so typos and misplaced values do not pass silently. A
        subclass of ``Post`` reads its own fields (``own_fields``) from the dict too, one missing there taking its
        default where it has one (``defaulted``), a null one ``None`` where it has none (``own_value``), and is built
        through its ``__init__``, so that they are set and its ``__post_init__`` runs; a ``Post`` without, its fields
        checked once.
        """
        if not isinstance(row, Mapping):
            raise ValueError(f"post {index}: expected a mapping of fields, got {type(row).__name__}{unmapped(row)}")
        ident = post_id(row.get("id"), index, f"post {index} field 'id'")
        where = post_name(f"post {index}", ident)
        own = own_fields(cls)
        unknown_fields(where, row, (*FIELDS, *own))
        images, named = (
            (row["images"], "images") if not is_missing(row.get("images")) else ([row.get("image")], "image")
        )
        given = images, row.get("comments"), row.get("labels"), row.get("meta")
        text, *checked = checked_fields(where, row.get("text"), *given, named)
        if cls is not Post:  # built as it is, so that a subclass's own fields are set and its __post_init__ runs
            if required := [name for name in own if name not in row and not has_default(cls, name)]:
                raise ValueError(f"{where} field {required[0]!r}: not given, and {cls.__name__} has no default for it")
            given_own = {name: row[name] for name in own if name in row}
            read = {name: own_value(value) for name, value in given_own.items() if not defaulted(cls, name, value)}
            return cls(ident, text, *checked, **read)
        images, comments, labels, meta = owned(checked, given)
        post = object.__new__(cls)  # not through __post_init__, which would check the fields checked here once more
        fields = {"images": images, "comments": comments, "labels": labels, "meta": meta}
        post.__dict__.update(id=ident, text=text, **fields, origin="", image_root=None)
        return post

    def named(self, origin: str) -> Post:
        """A copy of this post (its fields shared, not copied) whose origin is ``origin``, its fields not checked
        again: they were as it was built, or normalised since (``normalise_posts``), where building the copy would
        check them all once more."""
        copied = object.__new__(type(self))
        copied.__dict__.update(vars(self), origin=origin)
        return copied

    @property
    def has_text(self) -> bool:
        """Whether the post has non-blank text."""
        return bool(self.text and self.text.strip())

    @property
    def has_meta(self) -> bool:
        """Whether some field of the post's own metadata (``own_meta``) holds a value (one not missing,
        ``is_missing``): a column mapped to ``meta`` whose cell is empty gives the post the field, holding ``None``."""
        return any(not is_missing(value) for value in own_meta(self.meta).values())


def owned(checked: Sequence[Any], given: Sequence[Any]) -> list[Any]:
    """A post's ``checked`` fields (``checked_fields``' images, comments, labels and meta), each that is the very list
    or dict ``given`` for it (``given``, in the same order) a copy: a post holds lists and dicts of its own."""
    return [type(value)(value) if value is original else value for value, original in zip(checked, given)]


def unmapped(row: Any) -> str:
    """What the error refusing ``row``, given as a post but no mapping, adds: how to give a post's text, where it is a
    string, and a picture's, where it is bytes; a table's rows, where it is one not given as a mapping (a pandas
    ``Series``, as ``iterrows`` gives each row with its index, a named tuple, as ``itertuples`` gives them, or a NumPy
    record, as ``to_records`` does); and a post's fields, where it is a plain tuple or an array of one dimension (a
    row's values without their columns, as ``itertuples(name=None)``, a database cursor or a frame's ``values`` give
    them); ``""`` where it is none of these."""
    if isinstance(row, str):
        return ": give each post as a mapping, its text as {'text': TEXT}"
    if isinstance(row, (bytes, *BYTES_LIKE)):
        return ": give each post as a mapping, its picture's bytes as {'images': [DATA]}"
    series = row[1] if isinstance(row, tuple) and len(row) == 2 else row
    record = getattr(getattr(row, "dtype", None), "names", None)  # a structured array's row: its columns named
    if hasattr(row, "_asdict") or (hasattr(series, "to_dict") and hasattr(series, "index")) or record:
        return ", a table's row: give its rows as mappings (a pandas frame's frame.to_dict('records'))"
    if isinstance(row, tuple) or getattr(row, "ndim", None) == 1:
        fields = "{'id': ID, 'text': TEXT} (a pandas frame's rows as frame.to_dict('records'))"
        return f", a row of values: give each post as a mapping of its fields, {fields}"
    return ""


def own_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """A post's ``meta`` without the fields faim gives posts itself (``ADDED_META``): the metadata a model's metadata
    encoder may read."""
    return {name: value for name, value in meta.items() if name not in ADDED_META}


FIELDS = ("id", "text", "images", "image", "comments", "labels", "meta")
"""The fields of a post given as a dict (``Post.from_dict``): ``image`` is one picture, read where ``images`` is
missing."""

OBJECT_FIELDS = ("labels", "meta")
"""The fields of a post given as a dict that hold a mapping (task name to label, field name to value)."""


def own_fields(cls: type[Post]) -> tuple[str, ...]:
    """The fields a subclass of ``Post`` (a dataclass of its own) adds to a post's, set as it is built (``init``)."""
    return tuple(
        each.name for each in dataclass_fields(cls) if each.init and each.name not in Post.__dataclass_fields__
    )


def has_default(cls: type[Post], name: str) -> bool:
    """Whether the field ``name`` of a subclass of ``Post`` has a default (a value or a factory)."""
    declared = cls.__dataclass_fields__[name]
    return declared.default is not MISSING or declared.default_factory is not MISSING


def defaulted(cls: type[Post], name: str, value: Any) -> bool:
    """Whether a subclass's own field ``name`` given ``value`` takes its default instead: where the value is missing
    (``is_missing``: null, NaN, empty, as a frame's empty cell gives it) and the field has a default; a field without
    one is given the value (``own_value``), for its ``__init__`` to read."""
    return has_default(cls, name) and is_missing(value)


def own_value(value: Any) -> Any:
    """A subclass's own field's ``value`` as ``from_dict`` gives it where it does not take the field's default
    (``defaulted``): as it is, but a null (``is_null``: NaN, pandas' ``NA``, as a frame's empty cell gives it) as
    ``None``, as a post's own fields read a null as none."""
    return None if is_null(value) else value


def unknown_fields(where: str, row: Mapping[Any, Any], valid: Sequence[str] = FIELDS) -> None:
    """Refuse a post given as a dict (``row``) with keys that are none of ``valid`` (``FIELDS``, and a subclass's own
    fields where it is one).

    Raises:
        ValueError: Naming ``where`` (the post, ``post_name``), the unknown keys in the order given, each with the
            field it may be a typo of (``faim.registry.suggest``), and the fields.
    """
    unknown = [key for key in row if key not in valid]
    if unknown:
        said = ", ".join(f"{key!r}{suggest(str(key), list(valid))}" for key in unknown)
        plural = "s" if len(unknown) > 1 else ""
        raise ValueError(f"{where} field{plural} {said}: unknown; valid: {', '.join(valid)}")


def checked_id(origin: str, value: Any) -> str:
    """A post's id as text (``id_text``).

    Raises:
        ValueError: Naming the post by its ``origin`` (``post_name``) where it is missing (``is_missing``) or of a
            type an id is not (``id_text``).
    """
    if is_missing(value):
        raise ValueError(
            f"{post_name(origin)} field 'id': missing; give each post an id (a post given as a dict, or a file's row, "
            "without one takes its place as its id)"
        )
    return id_text(value, f"{post_name(origin)} field 'id'")


SIGNIFICAND_BITS = {16: 11, 32: 24, 64: 53}
"""The bits of a float's significand by its width in bits: a whole float of a width is the one integer it reads as
below 2 to the power of its significand bits, and at it or past it may not be the integer the data held (a tweet id
read through a float column, 123456789 through a float32 one, reads as 123456792), so such an id is refused rather
than read as another post's id."""


class NarrowFloat(float):
    """A float read from a column narrower than 64 bits (an Arrow ``float32`` or ``float16`` column: ``arrow_rows``
    in ``faim.data.tabular``), a Python float as any other but for its ``width`` in bits, which the integers it
    holds exactly depend on (``float_width``)."""

    width: int

    def __new__(cls, value: float, width: int) -> NarrowFloat:
        made = super().__new__(cls, value)
        made.width = width
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return NarrowFloat, (float(self), self.width)


class ClassName(int):
    """A class index read from a Hugging Face dataset's ``ClassLabel`` column, an int as any other but for the
    ``names`` the dataset gives the classes of its ``column`` (``faim.data.hf.HfSource``): a task among whose labels is
    each of them reads it as the label of its name (``faim.data.targets.TaskSpec.index``), not by its index, as a
    dataset may order its classes otherwise than a recipe's labels do (``hate, offensive, neither`` for ``neither,
    offensive, hate``)."""

    names: tuple[str, ...]
    column: str

    def __new__(cls, value: int, names: tuple[str, ...], column: str) -> ClassName:
        made = super().__new__(cls, value)
        made.names, made.column = names, column
        return made

    def __reduce__(self) -> tuple[Any, ...]:
        return ClassName, (int(self), self.names, self.column)


class Unconvertible:
    """An Arrow cell Python cannot hold (a timestamp or a date past the year 9999, a time zone this system does not
    know), which ``faim.data.tabular.python_rows`` gives in its place, so that its row is read: a field read from it is
    refused as a value of the wrong type, naming its Arrow type and why (its ``repr``), and a column no field reads
    costs nothing."""

    def __init__(self, arrow_type: str, problem: str) -> None:
        self.arrow_type, self.problem = arrow_type, problem

    def __repr__(self) -> str:
        return f"a {self.arrow_type} value Python cannot hold ({self.problem})"


def float_width(value: Any) -> int:
    """The width in bits of a float: a ``NarrowFloat``'s, a numpy float's (``np.float32``: 32), else 64."""
    if isinstance(value, NarrowFloat):
        return value.width
    dtype = getattr(value, "dtype", None)
    return 8 * dtype.itemsize if dtype is not None else 64


def id_text(value: Any, where: str) -> str:
    """An id given (not missing) as text: a string as it is, a UUID in its canonical form, an integer (numpy's too) and
    a whole decimal (a Parquet ``decimal(38, 0)`` column, as warehouses export their integers) in decimal digits,
    and a float that is a whole number below 2 to the power of its width's significand bits (``SIGNIFICAND_BITS``:
    2**53 for a Python float, 2**24 for a float32) as that integer (``123.0``, as pandas gives an
    integer column holding a null, and a Parquet double column, reads ``"123"``), so that scores join back to the
    posts by id.

    Raises:
        ValueError: Naming ``where`` (the post and its field), on any other value: a mapping, a list, a boolean, a
            number that is not whole, a whole float at that bound or past it, bytes, a date.
    """
    if isinstance(value, (str, uuid.UUID)):
        return str(value)
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    expected = f"{where}: expected a string or an integer, got"
    if isinstance(value, decimal.Decimal) and value.is_finite():
        if value != value.to_integral_value():
            raise ValueError(f"{expected} {value!r}, a number that is not whole")
        return str(int(value))
    if is_real(value) and not isinstance(value, bool):
        if not float(value).is_integer():
            raise ValueError(f"{expected} {value!r}, a number that is not whole")
        width = float_width(value)
        bits = SIGNIFICAND_BITS.get(width, SIGNIFICAND_BITS[64])
        if abs(value) >= 2**bits:
            kind = "float" if bits == SIGNIFICAND_BITS[64] else f"float{width}"
            raise ValueError(
                f"{expected} the float {float(value)!r}, 2**{bits} or past it, where a {kind} may not be the integer "
                f"written (2**{bits} + 1 reads as 2**{bits}): write ids as strings or integers"
            )
        return str(int(value))
    raise ValueError(f"{expected} {a_type(value)} ({value!r})")


def normalise_posts(posts: Iterable[Post]) -> None:
    """Check and normalise the fields of each of ``posts`` in place, as a ``Post`` does those it is built with
    (``checked_id``, ``checked_fields``: an id of ``7`` becomes ``"7"``, one comment given as a string a list of one),
    refusing the first holding a field of the wrong type. A ``Post`` checks its fields as it is built, but they may be
    set after (a data source's plug-in setting ``post.id = None``, a caller's ``post.text = 5`` or ``post.comments =
    "one"``), and a field of the wrong type would be read as it is after: an id of ``None`` as a score row's id, a
    number as the seed of a post's perturbation, a text that is a number failing deep inside the tokenizer, a string
    of comments read as one comment per character.

    Raises:
        ValueError: Naming the post by its origin or, where it has none, its place among ``posts`` (``post 3``), and
            the field.
    """
    for index, post in enumerate(posts):
        normalised(post, index)


def normalised(post: Post, index: int) -> Post:
    """``post``, its fields checked and normalised in place (see ``normalise_posts``), named in an error by its origin
    or, where it has none, its place ``index`` among the posts given."""
    origin = post.origin or f"post {index}"
    post.id = checked_id(origin, post.id)
    post.text, post.images, post.comments, post.labels, post.meta = checked_fields(
        post_name(origin, post.id), post.text, post.images, post.comments, post.labels, post.meta
    )
    return post


def post_name(origin: str, ident: str | None = None) -> str:
    """A post as an error names it: by its ``origin`` (``file.jsonl:3``, or ``post 1``, its place among the posts
    given) and its id, ``post 1 (post id='b')``, or by its id alone where it has no origin (``post id='b'``); one
    refused for having no id (``ident`` ``None``) by its origin alone, ``post`` where it has none either (a ``Post``
    built so, refused before it has a place among the posts given)."""
    if ident is None:
        return origin or "post"
    return f"{origin} (post id={ident!r})" if origin else f"post id={ident!r}"


def field_names(fields: str | Sequence[str]) -> str:
    """One field or several as an error names them: ``field 'text'``, ``fields 'image', 'text'``."""
    names = [fields] if isinstance(fields, str) else list(fields)
    return f"{'fields' if len(names) > 1 else 'field'} {', '.join(map(repr, names))}"


def is_real(value: Any) -> bool:
    """Whether ``value`` is a number that may be NaN: a float of any width (numpy's too), never an integer (one
    past a float's range cannot be asked)."""
    return isinstance(value, numbers.Real) and not isinstance(value, numbers.Integral)


def is_missing(value: Any) -> bool:
    """Whether a field's value stands for nothing: absent or null (``None``), NaN or pandas' ``NA`` and ``NaT`` (nulls
    as pandas gives them), or an empty string, list, tuple or array; a post's ``images`` that is falls back to its
    ``image``, in a dict as in a file's row (``faim.data.columns.ColumnMap.images_cell``)."""
    if is_null(value):
        return True
    value = listed(value)
    return isinstance(value, (str, list, tuple)) and not value


NEVER_NULL = frozenset({str, int, bool, list, dict})
"""Types no value of which is null (``is_null``), told at once: those of most fields, read for every post."""


def is_null(value: Any) -> bool:
    """Whether ``value`` is null: ``None``, NaN (a ``Decimal``'s too, quiet or signalling, as a Parquet decimal column
    may hold it), or pandas' ``NA`` and ``NaT``, as a table gives an empty cell (a pandas frame's
    ``to_dict("records")``, a NaN where its column holds text)."""
    if value is None:
        return True
    kind = type(value)
    if kind in NEVER_NULL:
        return False
    if kind is float:
        return math.isnan(value)
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    return (is_real(value) and math.isnan(value)) or is_pandas_null(value)


def is_pandas_null(value: Any) -> bool:
    """Whether ``value`` is pandas' ``NA`` or ``NaT``; pandas is not imported for it, as no value can be one before."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and (value is pandas.NA or value is pandas.NaT)


def post_id(value: Any, index: int, where: str = "post field 'id'") -> str:
    """The id of a post given ``value`` as its id: ``value`` as text (``id_text``), or, where it is missing
    (``is_missing``: absent, null, NaN or empty), ``index``, the post's place (in the list a dict comes in, or a file's
    row number: ``faim score`` and ``faim embed`` write it as the id), so that posts without ids stay apart from each
    other (not from a post whose own id is a number: give every post an id, or none).

    Raises:
        ValueError: Naming ``where`` (the post and its field), on a value no id is (``id_text``).
    """
    return str(index) if is_missing(value) else id_text(value, where)


def json_list(value: Any) -> list[Any] | None:
    """The list a JSON-encoded list string holds, or ``None`` when ``value`` is not one."""
    if not (isinstance(value, str) and value.lstrip().startswith("[")):
        return None
    try:
        decoded = json.loads(value)
    except json.JSONDecodeError:
        return None
    return decoded if isinstance(decoded, list) else None


def list_as_text(value: Any, items: str) -> str:
    """What an error refusing ``value`` adds where it is a string spelling a list: one spelling a JSON list
    (``json_list``) is read as a list of ``items`` (``"pictures"``, ``"labels"``) only in a CSV or TSV cell, and is
    one item in a JSON Lines or Parquet file or a post given as a dict (``faim.data.columns.ColumnMap.to_post``); one
    spelling a list as Python writes it (``python_list``: ``['spam']``, as pandas' ``to_csv`` writes a column of
    lists) is read as a list nowhere. ``""`` where it is neither."""
    if json_list(value) is not None:
        where = "only in a CSV or TSV cell: elsewhere give a list"
        return f"; a JSON list written as text is read as a list of {items} {where}"
    if (written := python_list(value)) is None:
        return ""
    as_json = json.dumps(written, ensure_ascii=False)
    return (
        f"; a list written as text is read as a list of {items} only where it is JSON, in a CSV or TSV cell "
        f"({as_json}); {value.strip()} is a list as Python writes it (pandas' to_csv of a column of lists): write "
        "each cell with json.dumps"
    )


def python_list(value: Any) -> list[Any] | None:
    """The list a string spelling a Python list of plain values holds (``['spam', "it's"]``: quoted as Python quotes
    text, which JSON does not read), or ``None`` when ``value`` is not one."""
    if not (isinstance(value, str) and value.lstrip().startswith("[")):
        return None
    try:
        written = ast.literal_eval(value.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    return written if isinstance(written, list) else None


def listed(value: Any) -> Any:
    """A field's value, an array (numpy's, as pandas gives a list column: ``to_dict("records")``) as its list."""
    return value.tolist() if hasattr(value, "tolist") and not isinstance(value, (str, bytes)) else value


def checked_fields(
    where: str, text: Any, images: Any, comments: Any, labels: Any, meta: Any, images_field: str = "images"
) -> tuple[str | None, list[ImageRef], list[str], dict[str, Any], dict[str, Any]]:
    """A post's fields checked and normalised: a null field (``is_null``: ``None``, NaN, pandas' ``NA``, as a table
    gives an empty cell) as none, one image or comment (a string) as a list of one, an array (numpy's, see
    ``listed``) as its list, empty or null images and blank comments left out, a null label ``None``
    (``unlabelled_as_none``), missing labels or meta as ``{}``. A field that already holds what a ``Post`` holds (a
    list of images none empty, of comments none blank, a dict) is given back itself, not a copy: a ``Post`` built
    copies those it is given (``Post.__post_init__``), and one normalised after (``normalise_posts``) keeps its own.

    Args:
        where: The post, as an error names it (``post_name``).
        images_field: The name the images were given under (``image``, ``from_dict``'s shorthand, or ``images``).

    Raises:
        ValueError: Naming ``where`` and the field, on text or a comment that is not a string, an image that is
            neither a path nor bytes, or labels or meta that are not mappings.
    """
    text = None if is_null(text) else text
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where} field 'text': expected a string, got {type(text).__name__}")
    return (
        text,
        checked_images(where, images, images_field),
        checked_comments(where, comments),
        unlabelled_as_none(checked_mapping(where, "labels", labels, "task name to label")),
        checked_mapping(where, "meta", meta, "field name to value"),
    )


def unlabelled_as_none(labels: dict[str, Any]) -> dict[str, Any]:
    """A post's labels, each null one (``is_null``: NaN, pandas' ``NA``, as a table gives an empty cell and
    ``json.dumps`` writes a float NaN) ``None``, which every reader of labels takes for a task's label missing, as a
    file's empty label cell is; ``labels`` itself where none is."""
    if all(value is None or not is_null(value) for value in labels.values()):
        return labels
    return {task: None if is_null(value) else value for task, value in labels.items()}


def decoded(image: Any) -> str:
    """What the error refusing ``image`` as a post's picture adds where it is a decoded one (a PIL image, an array of
    pixels): how to give it encoded; where it is an array of bytes (one dimension of ``uint8``, as ``cv2.imencode``
    gives a picture encoded): how to give its bytes; ``""`` otherwise."""
    if hasattr(image, "getpixel") or getattr(image, "ndim", 0) > 1:
        encode = "buffer = io.BytesIO(); image.save(buffer, 'PNG'); buffer.getvalue()"
        return f", a decoded picture: give it encoded: {encode}"
    if getattr(image, "ndim", 0) == 1 and str(getattr(image, "dtype", "")) == "uint8":
        return ", an array of bytes (as cv2.imencode gives a picture encoded): give its bytes, array.tobytes()"
    return ""


BYTES_LIKE = (bytearray, memoryview)
"""The types of encoded bytes a post holds as ``bytes`` (``checked_images``), as a file's reader gives them."""


def checked_images(where: str, images: Any, images_field: str) -> list[ImageRef]:
    """A post's images (``checked_fields``) as a list, missing ones (``is_missing``: null, ``""``) left out, each given
    as a ``bytearray`` or a ``memoryview`` (``BYTES_LIKE``) as its bytes.

    Raises:
        ValueError: Naming ``where`` and ``images_field`` when ``images`` is neither an image nor a list of them,
            or one of them is neither a path nor bytes (saying how to encode a decoded picture or give an array's
            bytes, ``decoded``: an array of either given as ``images`` is refused so, not listed as numbers first).
    """
    if type(images) is list or not decoded(images):
        images = [] if is_null(images) else listed(bytes(images) if isinstance(images, BYTES_LIKE) else images)
    images = [images] if isinstance(images, (str, bytes, Path)) else images
    if not isinstance(images, (list, tuple)):
        raise ValueError(
            f"{where} field '{images_field}': expected a path, encoded bytes or a list of them, got "
            f"{type(images).__name__}{decoded(images)}"
        )
    bytes_like = False
    for number, image in enumerate(images):
        if not is_null(image) and not isinstance(image, (str, bytes, Path)):
            bytes_like = isinstance(image, BYTES_LIKE)
            if not bytes_like:
                raise ValueError(
                    f"{where} field '{images_field}': image {number}: expected a path or encoded bytes, got "
                    f"{type(image).__name__}{decoded(image)}"
                )
    if bytes_like:
        images = [bytes(image) if isinstance(image, BYTES_LIKE) else image for image in images]
    return kept_list(images, [image for image in images if not is_missing(image)])


def checked_comments(where: str, comments: Any) -> list[str]:
    """A post's comments (``checked_fields``) as a list, blank and null ones (``is_null``) left out, as a file's reader
    leaves them out (``faim.data.columns``).

    Raises:
        ValueError: Naming ``where`` and the field when ``comments`` is neither a string nor a list of strings (nulls
            among them).
    """
    comments = [] if is_null(comments) else listed(comments)
    comments = [comments] if isinstance(comments, str) else comments
    if not isinstance(comments, (list, tuple)):
        raise ValueError(
            f"{where} field 'comments': expected a string or a list of strings, got {type(comments).__name__}"
        )
    for number, comment in enumerate(comments):
        if not isinstance(comment, str) and not is_null(comment):
            raise ValueError(f"{where} field 'comments': comment {number} is {a_type(comment)}, not a string")
    return kept_list(comments, [comment for comment in comments if isinstance(comment, str) and comment.strip()])


def kept_list(given: list[Any] | tuple[Any, ...], kept: list[Any]) -> list[Any]:
    """``given`` itself where it is a list and ``kept`` (the items of it a post keeps, in order) holds them all, else
    ``kept``: a field that already holds what a ``Post`` holds is not replaced by a copy."""
    return given if type(given) is list and len(kept) == len(given) else kept


def checked_mapping(where: str, name: str, value: Any, holds: str) -> dict[str, Any]:
    """Field ``name`` of a post (labels or meta) as a dict: ``value`` itself where it is one, ``{}`` where it is
    null (``is_null``).

    Raises:
        ValueError: Naming ``where`` and the field, and what it ``holds``, when it is not a mapping.
    """
    if type(value) is dict:
        return value
    if is_null(value):
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{where} field '{name}': expected a mapping of {holds}, got {type(value).__name__}")
    return dict(value)


def as_posts(items: Iterable[Post | Mapping[str, Any]]) -> list[Post]:
    """Accept ``Post`` objects or plain dicts (see ``Post.from_dict``), in a list or any iterable (``posts_given``),
    and return posts (``as_post``), warning of dicts without an id that take another post's id as theirs
    (``warn_places_taken``).

    Raises:
        TypeError: Where ``posts_given`` refuses the posts.
        ValueError: On the first post ``as_post`` refuses: each post is checked once, a dict as its ``Post`` is built,
            a ``Post`` given as it is now.
    """
    given = posts_given(items)
    posts = [as_post(item, index) for index, item in enumerate(given)]
    warn_places_taken(dict(enumerate(posts)), given)
    return posts


def posts_given(items: Iterable[Post | Mapping[str, Any]]) -> list[Any]:
    """The posts given where a list of them is expected, listed, none read as a post yet (``as_post``).

    Raises:
        TypeError: Given one post (a ``Post`` or a mapping), posts by key (``by_key``), a string or bytes where the
            posts are expected, what is no iterable (``None``, a number), or a table (a pandas ``DataFrame``: what has
            ``columns``), whose iteration gives its columns.
    """
    if isinstance(items, Mapping) and by_key(items):
        held = all(isinstance(value, Post) for value in items.values())
        listed = "list(posts.values())" if held else "[{'id': key, **post} for key, post in posts.items()]"
        raise TypeError(f"expected a list of posts, got posts by key ({a_type(items)}): pass {listed}")
    if isinstance(items, (Post, Mapping, str)):
        one = "one string" if isinstance(items, str) else "one post"
        misspelt = misspelt_fields(items) if isinstance(items, Mapping) else []
        said = f"; its field{'s' if len(misspelt) > 1 else ''} {', '.join(misspelt)}: unknown" if misspelt else ""
        raise TypeError(f"expected a list of posts, got {one} ({a_type(items)}): pass [post]{said}")
    if isinstance(items, (bytes, bytearray, memoryview)):
        said = "pass [{'text': TEXT}], a picture's bytes as [{'images': [DATA]}]"
        raise TypeError(f"expected a list of posts, got {type(items).__name__}: {said}")
    if not isinstance(items, Iterable):
        raise TypeError(f"expected a list of posts (or any iterable of them), got {type(items).__name__}")
    if hasattr(items, "columns"):
        raise TypeError(
            f"expected a list of posts, got a table ({type(items).__name__}), which gives its columns, not its rows, "
            "when iterated: pass its rows as mappings (a pandas frame's frame.to_dict('records'))"
        )
    return list(items)


def as_post(item: Any, index: int) -> Post:
    """``item``, the ``index``-th of the posts given (``posts_given``), as a post: a ``Post`` checked as it is now
    (``normalised``, which makes an id set to a number after its post was built text, as the fields set after are
    read as the ``Post`` reads them), anything else read as a dict (``Post.from_dict``).

    Raises:
        ValueError: On a dict that ``Post.from_dict`` refuses (or what is no mapping), or a ``Post`` whose id was
            taken away or a field set to a value of the wrong type after it was built, naming the post and the field.
    """
    return normalised(item, index) if isinstance(item, Post) else Post.from_dict(item, index)


SHOWN_PLACES = 3
"""How many of the posts without an id taking another's as theirs ``warn_places_taken`` names."""


def warn_places_taken(posts: Mapping[int, Post], given: Sequence[Any]) -> None:
    """Warn (``FaimWarning``) where some of ``posts`` (each by its place among the posts ``given``, ``posts_given``:
    those read as posts, ``as_post``) given as dicts without an id, which take their places as their ids
    (``post_id``), take an id another post is given as its own (a pandas frame's nullable integer id column holding
    ``<NA>`` beside the ids 0, 1, ...): their score rows share it, and joining them back by id mixes them; naming how
    many, the first ``SHOWN_PLACES`` and the ids."""
    placed = [place for place in posts if isinstance(given[place], Mapping) and is_missing(given[place].get("id"))]
    ids = {post.id for place, post in posts.items() if place not in placed}
    taken = [place for place in placed if str(place) in ids]
    if not taken:
        return
    shown = ", ".join(f"post {place} ({str(place)!r})" for place in taken[:SHOWN_PLACES])
    more = ", ..." if len(taken) > SHOWN_PLACES else ""
    warn(
        f"the posts given: {plural(len(taken), 'post')} without an id took an id another post is given as its own (a "
        f"post without one takes its place among them as its id): {shown}{more}; their score rows share ids; give each "
        "post an id of its own, or none"
    )


def by_key(items: Mapping[Any, Any]) -> bool:
    """Whether ``items``, given where a list of posts is expected, holds posts by key (a pandas frame's
    ``to_dict('index')``, a dict of ``Post`` objects by their ids): some, each a mapping or a ``Post``, under keys none
    of which is a post's field (``FIELDS``), nor, where none is a ``Post`` and not each is a mapping holding a post
    field (``{'id1': {'text': 'a', 'lang': 'en'}}``, a frame's with a column of no field), a field misspelt
    (``misspelt_fields``: a post whose labels and meta are under such keys, ``{'lables': {'hate': 1}}``), nor, where
    each is and holds no post field but ``id``, fields holding a mapping misspelt: each key close to one of them, no
    two to one (``OBJECT_FIELDS``: a post whose meta, misspelt, holds a field's name, ``{'metadata': {'id': 'u42'}}``);
    ids some of which are close to none, or two to one (``{'alpha': ..., 'beta': ...}``, ``{'beta': ..., 'zeta':
    ...}``), or whose posts hold a field but ``id`` (``{'beta': {'text': 'a'}}``), are posts by key, but where each
    key writes such a field out (``writes_out_field``: ``{'metadata': {'text': 'bio', 'image': 'avatar.png'}}``, an
    author's profile, is a post whose meta is misspelt)."""
    if not items or any(key in FIELDS for key in items):
        return False
    if all(isinstance(value, Mapping) and any(key in FIELDS for key in value) for value in items.values()):
        close = [suggest(str(key), list(OBJECT_FIELDS)) for key in items]
        if not all(close) or len(set(close)) < len(close):
            return True
        # a post's own fields (text, labels) under ids close to meta or labels, not under meta written out
        holding = any(key in FIELDS and key != "id" for value in items.values() for key in value)
        return holding and not all(writes_out_field(key) for key in items)
    if any(isinstance(value, Post) for value in items.values()):
        return all(isinstance(value, (Mapping, Post)) for value in items.values())
    return all(isinstance(value, Mapping) for value in items.values()) and not misspelt_fields(items)


def writes_out_field(key: Any) -> bool:
    """Whether ``key``, a key of a mapping given where posts are expected, is a field holding a mapping
    (``OBJECT_FIELDS``) written out another way: it begins, in any case, with the field's name or its singular
    (``metadata``, ``Meta``, ``label_map``), where an id merely close to it (``beta``, ``media``) does not."""
    return str(key).lower().startswith(tuple(name.removesuffix("s") for name in OBJECT_FIELDS))


def misspelt_fields(row: Mapping[Any, Any]) -> list[str]:
    """The keys of ``row`` that are none of ``FIELDS`` but close to one, each with the field it may be a typo of
    (``faim.registry.suggest``): ``'lables' (did you mean 'labels'?)``."""
    return [f"{key!r}{said}" for key in row if key not in FIELDS and (said := suggest(str(key), list(FIELDS)))]


MAP_LABELS = (
    "map a column to a task's labels with --map labels.TASK=COLUMN (columns: {labels: {TASK: COLUMN}} in Python)"
)
"""What to do about posts read from a file that carry no label for a task, as ``check_labelled`` says it by default."""

Remedy = str | Callable[[], str]
"""What ``check_labelled``'s error ends in: the text, or what gives it where finding it reads more (the columns of a
file no mapping reads: ``faim.data.preflight.labels_remedy``), asked only where the posts are refused."""


def refuse_no_posts(posts: Sequence[Post], where: str) -> None:
    """Refuse data that holds no post at all (an empty file, or one of blank lines), naming it (``where``), before
    any check of what its posts hold, which would otherwise say that none of them holds it.

    Raises:
        ValueError: ``"WHERE: holds no post"``.
    """
    if not posts:
        raise ValueError(f"{where}: holds no post")


def check_labelled(posts: Iterable[Post], tasks: Iterable[str], where: str, remedy: Remedy = MAP_LABELS) -> None:
    """Refuse, before a model reads any of them, posts none of which carries a label for any of ``tasks``; first warn
    of labels they carry under names none of ``tasks`` has (``warn_labels_of_no_task``).

    Args:
        where: The data, as the error names it.
        remedy: What the user may do, as the error ends: by default how labels are mapped to tasks, which a caller
            reading posts that no mapping reaches (a recipe's split) replaces.

    Raises:
        ValueError: Naming ``where``, the tasks and ``remedy`` (``unlabelled_error``).
    """
    names = list(tasks)
    posts = list(posts)
    warn_labels_of_no_task(posts, names, where)
    if not carries_labels(posts, names):
        raise unlabelled_error(where, names, remedy() if callable(remedy) else remedy)


def carries_labels(posts: Iterable[Post], tasks: Sequence[str]) -> bool:
    """Whether some of ``posts`` carries a label for one of ``tasks`` (``check_labelled`` refuses them otherwise)."""
    return any(post.labels.get(name) is not None for post in posts for name in tasks)


def warn_labels_of_no_task(posts: Sequence[Post], tasks: list[str], where: str) -> None:
    """Warn, once, of the labels ``posts`` (of ``where``) carry under names that are none of ``tasks``: those labels are
    not read, and a name misspelt in some rows' labels (``Scam`` for ``scam``) leaves those posts out of the task's
    training and figures. Names each such name with how many posts carry it (null labels aside) and the task it is
    closest to."""
    known = set(tasks)
    counts: dict[str, int] = {}
    for post in posts:
        for name, value in post.labels.items():
            if name not in known and value is not None:
                counts[name] = counts.get(name, 0) + 1
    if not counts:
        return
    named = ", ".join(f"{name!r} of {plural(count, 'post')}{suggest(name, tasks)}" for name, count in counts.items())
    warn(
        f"{where}: labels under a name that is no task of the model (its tasks: {', '.join(tasks)}) are not read: "
        f"{named}"
    )


def unlabelled_error(where: str, tasks: Iterable[str], remedy: str = MAP_LABELS) -> ValueError:
    """The error of posts (of ``where``) none of which carries a label for any of ``tasks`` (names), ending in what
    the user may do (``remedy``), as ``check_labelled`` raises it and evaluation where it finds so only once the model
    has read the posts (``faim.eval.evaluate.evaluate_loader``)."""
    return ValueError(f"{where}: no post carries a label for any task ({', '.join(tasks)}); {remedy}")


def post_texts(posts: Iterable[Post]) -> list[str]:
    """Each post's text in order, ``""`` for a post without one (``None`` or empty), as a text model or a word count
    reads it."""
    return [post.text or "" for post in posts]


def shortest_text_first(posts: list[Post]) -> list[int]:
    """The indices of ``posts``, shortest text first (ties in input order): batches taken in this order pad their
    texts to nearly their own length instead of the longest text of a random few, which in a transformer is time
    spent on nothing."""
    return sorted(range(len(posts)), key=lambda index: len(posts[index].text or ""))


def length_batches(posts: list[Post], batch_size: int) -> tuple[list[list[Post]], list[int]]:
    """``posts`` in batches of ``batch_size``, shortest text first (``shortest_text_first``), and where each post's
    row lands in the batches' rows laid end to end: ``rows[positions]`` puts them back in input order.

    Raises:
        TypeError: Naming ``batch_size`` when it is not a whole number (``2.5``, ``"8"``, ``None``, ``True``).
        ValueError: Naming ``batch_size`` when it is below 1.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral):
        raise TypeError(f"batch_size must be a whole number, got {batch_size!r} ({type(batch_size).__name__})")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = shortest_text_first(posts)
    positions = [0] * len(order)
    for rank, index in enumerate(order):
        positions[index] = rank
    ordered = [posts[index] for index in order]
    return [ordered[start : start + batch_size] for start in range(0, len(ordered), batch_size)], positions
