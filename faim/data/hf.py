"""Local Hugging Face datasets as a source: saved ``DatasetDict``/``Dataset`` folders or local data files.

Only local paths are read (``load_from_disk``, or a packaged builder such as ``json`` on a file that
exists), so nothing ever reaches the hub. Rows are read as Arrow batches without decoding, so
``Image`` columns arrive as ``{"bytes", "path"}`` structs, which become post images.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

import pyarrow as pa

from faim.data.columns import ColumnMap
from faim.data.inputs import check_exists, data_path
from faim.data.post import ClassName
from faim.data.tabular import (
    ARROW_READ_ERRORS,
    BATCH_ROWS,
    SPLITS,
    FileSource,
    Rows,
    arrow_rows,
    binary_paths,
    csv_records,
    jsonl_lines,
    one_line,
    open_parquet,
    parse_number,
    read_as,
    text_types,
)
from faim.notices import MissingExtra
from faim.registry import register_source

BUILDERS: dict[str, tuple[str, dict[str, Any]]] = {
    ".json": ("json", {}),
    ".jsonl": ("json", {}),
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"delimiter": "\t"}),
    ".parquet": ("parquet", {}),
    ".arrow": ("arrow", {}),
}


@register_source("hf")
class HfSource(FileSource):
    """A local Hugging Face dataset.

    Two layouts: ``path`` names a folder saved with ``DatasetDict.save_to_disk`` and ``train``,
    ``validation``, ``test`` name splits inside it (default: those of the three names it has); or
    ``path`` is unset and each of ``train``, ``validation``, ``test`` is a folder saved with
    ``Dataset.save_to_disk`` or a local data file (``.jsonl``, ``.json``, ``.csv``, ``.tsv``,
    ``.parquet``, ``.arrow``) read with ``datasets.load_dataset`` (a CSV or TSV file's cells as the text they hold, as
    the ``csv`` source reads them: ``cells_are_text``).

    Args:
        path: Folder of a saved ``DatasetDict``.
        train: Split name inside ``path``, or a saved dataset folder / data file.
        validation: Same, for the validation split.
        test: Same, for the test split.
        columns: The recipe's column mapping (see ``faim.data.columns``).
        image_root: Directory relative image paths resolve against (relative to the working
            directory); ``None`` uses the folder holding ``path``, or each split's data file or folder.

    Raises:
        ValueError: When ``path`` is empty (or spaces), naming its recipe key and saying to write null for none.
        FileNotFoundError: When ``path`` is not there, naming its recipe key (``data.path``), it resolved and, where
            it is relative, that a recipe's data paths are read from the working directory (``check_exists``); when it
            is not a saved ``DatasetDict``.
        KeyError: When a split name is not in it.
    """

    def __init__(
        self,
        path: str | None = None,
        train: str | None = None,
        validation: str | None = None,
        test: str | None = None,
        columns: dict | None = None,
        image_root: str | None = None,
    ) -> None:
        super().__init__(train, validation, test, columns, image_root)
        if path is not None and not path.strip():  # most often a variable not set, which would read the working folder
            raise ValueError(
                "hf: path is empty (a variable not set?), which names no folder; name the folder saved with "
                "DatasetDict.save_to_disk, or write null for none (each split then names its own folder or file)"
            )
        self.path = data_path(path) if path is not None else None
        if self.path is None:
            return
        check_exists(self.path, f"{self.recipe_path}.path", folder=True)
        index = self.path / "dataset_dict.json"
        if not index.is_file():
            raise FileNotFoundError(f"hf: {path} is not a folder saved with DatasetDict.save_to_disk (no {index.name})")
        stored = json.loads(index.read_text(encoding="utf-8"))["splits"]
        names = {split: str(name) for split, name in self.files.items()} or {s: s for s in SPLITS if s in stored}
        for split, name in names.items():
            if name not in stored:
                raise KeyError(f"hf: {split}: split {name!r} is not in {path} (splits: {', '.join(stored)})")
        self.files = {split: self.path / name for split, name in names.items()}
        self.image_root = self.image_root or self.path.absolute().parent

    def rows(self, path: Path) -> tuple[ColumnMap, Rows]:
        """Bind the mapping to the dataset at ``path`` and stream the columns it reads (``ColumnMap.projected``) as
        Arrow batches; of a CSV or TSV file, whose cells are text (``cells_are_text``), label and meta cells that spell
        a number become an int or a float, as the ``csv`` source reads them (``faim.data.tabular.csv_rows``); a meta
        column's BINARY is text or bytes as the whole dataset decides (``meta_types``). A data
        file holding no row (``holds_no_row``) gives none, its columns unchecked, as a JSON Lines file's are. A label
        column of classes (``ClassLabel``, or a list of them) gives each class its name (``_classes_named``)."""
        if holds_no_row(path):
            return self.columns, iter(())
        dataset = load_dataset(path)
        bound = self.columns.reading(self.cells_are_text(path)).bind(dataset.column_names, str(path))
        types = meta_types(dataset, bound.meta_columns)
        batches = dataset.select_columns(bound.projected(dataset.column_names)).with_format("arrow").iter(BATCH_ROWS)
        rows = arrow_rows((read_as(batch, types) for batch in batches), path)
        if self.cells_are_text(path):
            return bound, _numbers_read(rows, bound)
        named = {
            column: tuple(names) for column in bound.labels.values() if (names := class_names(dataset.features[column]))
        }
        return bound, _classes_named(rows, named) if named else rows

    def cells_are_text(self, file: Path) -> bool:
        """Whether ``file`` is a CSV or TSV file, read cell by cell as text (``load_dataset``)."""
        return file.suffix in TEXT_CELLS and not file.is_dir()


def holds_no_row(path: Path) -> bool:
    """Whether the data file at ``path`` (not a saved dataset's folder) holds no row, as every source reading its
    format reads it: a Parquet file of no row (a Spark dump's empty part), a CSV or TSV file of its header alone or
    nothing, a JSON Lines file of blank lines alone or nothing; ``datasets``' builders refuse each with an error naming
    nothing (``Instruction "train" corresponds to no data!``), where ``faim.data.inputs.read_inputs`` warns of it."""
    if path.is_dir():
        return False
    if path.suffix == ".parquet":
        return open_parquet(path).metadata.num_rows == 0
    if path.suffix in (".json", ".jsonl"):
        with open(path, "rb") as handle:
            return next(jsonl_lines(handle), None) is None
    if path.suffix in TEXT_CELLS:
        with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
            records = csv_records(handle, BUILDERS[path.suffix][1].get("delimiter", ","))
            return next(itertools.islice(records, 1, None), None) is None  # past its header
    return False


TEXT_CELLS = (".csv", ".tsv")
"""The data files whose cells are text, read as the text they hold (``load_dataset``)."""


def _numbers_read(rows: Rows, bound: ColumnMap) -> Rows:
    """``rows`` of text cells, each of the label and meta cells ``bound`` reads that spells a number read as it."""
    numeric = set(bound.labels.values()) | set(bound.meta.values())
    for number, row in rows:
        yield number, {name: parse_number(cell) if name in numeric else cell for name, cell in row.items()}


def class_names(feature: Any) -> list[str] | None:
    """The names of the classes a dataset's column holds, where it is a ``ClassLabel`` column or one of lists of
    them (``Sequence(ClassLabel)``, ``List(ClassLabel)``); ``None`` otherwise."""
    feature = getattr(feature, "feature", feature)
    names = getattr(feature, "names", None) if type(feature).__name__ == "ClassLabel" else None
    return list(names) if names else None


def _classes_named(rows: Rows, named: dict[str, tuple[str, ...]]) -> Rows:
    """``rows``, each class index of a column ``named`` holds the names of (``class_names``) a ``ClassName`` carrying
    them, alone or in a list: a task naming every one of them, in another order than the dataset's, reads each by
    name. An index naming no class (-1, a dataset's mark of a post without a label) stays as it is."""
    for number, row in rows:
        for column, names in named.items():
            value = row.get(column)
            if isinstance(value, list):
                row[column] = [_class_name(item, names, column) for item in value]
            else:
                row[column] = _class_name(value, names, column)
        yield number, row


def _class_name(value: Any, names: tuple[str, ...], column: str) -> Any:
    """``value``, where it is the index of one of ``names`` (those of ``column``), as a ``ClassName`` of it; as it is
    otherwise."""
    return ClassName(value, names, column) if isinstance(value, int) and 0 <= value < len(names) else value


def _unreadable_dataset(path: Path) -> ValueError | None:
    """The error of a saved dataset folder that could not be loaded, naming the first of its Arrow files that cannot be
    read (cut short or damaged: ``datasets`` does not say which) and pyarrow's error (``one_line``), and what to do;
    ``None`` where each can be read."""
    for file in sorted(path.rglob("*.arrow")):
        try:
            with pa.memory_map(str(file)) as source:
                pa.ipc.open_stream(source).read_all()
        except ARROW_READ_ERRORS as error:
            return ValueError(
                f"{path}: a saved dataset whose file {file.relative_to(path)} cannot be read ({one_line(error)}); "
                "save the dataset again, or restore the file"
            )
    return None


def load_dataset(path: Path) -> Any:
    """A ``datasets.Dataset`` from a saved folder or a local data file (which must exist).

    Raises:
        faim.notices.MissingExtra: Without the optional Hugging Face ``datasets`` package, saying how to install
            it.
        ValueError: Naming a data file ``datasets`` cannot read (a damaged Parquet page, a line that is not JSON, a
            CSV quote never closed) and its error, which names neither the file nor, often, the cause
            (``DatasetGenerationError: An error occurred while generating the dataset``).
    """
    try:
        import datasets  # optional heavy dependency (faim-sdk[hf]): imported when a dataset is read
    except ImportError:
        raise MissingExtra(f"reading {path} needs Hugging Face datasets: pip install 'faim-sdk[hf]'") from None

    if path.is_dir():
        try:
            dataset = datasets.load_from_disk(str(path))
        except ARROW_READ_ERRORS as error:
            unreadable = _unreadable_dataset(path)
            if unreadable is None:
                raise
            raise unreadable from error
        if isinstance(dataset, datasets.DatasetDict):
            raise ValueError(
                f"hf: {path} holds a DatasetDict (splits: {', '.join(dataset)}); "
                "set path: to it and name the splits, or point at one split's folder"
            )
        return dataset
    if path.suffix not in BUILDERS:
        raise ValueError(f"hf: cannot read {path}; data files must end in {', '.join(BUILDERS)}")
    builder, options = BUILDERS[path.suffix]
    try:
        if path.suffix in TEXT_CELLS:
            # every cell as the text it holds, as faim's own reader reads it: pandas would guess each column's type
            # from its cells, reading the ids 007 and 7 both as 7, and NA or an empty cell as missing
            import pandas  # the csv builder's own reader, naming the columns as it does (a second "text" as "text.1")

            header = pandas.read_csv(path, sep=options.get("delimiter", ","), nrows=0).columns
            text = datasets.Features({name: datasets.Value("string") for name in header})
            options = options | {"features": text, "na_filter": False}
        return datasets.load_dataset(builder, data_files=str(path.absolute()), split="train", **options)
    except (datasets.exceptions.DatasetGenerationError, *ARROW_READ_ERRORS, ValueError) as error:
        cause = error.__cause__ if isinstance(error, datasets.exceptions.DatasetGenerationError) else error
        raise ValueError(
            f"{path}: Hugging Face datasets cannot read it ({type(cause).__name__}: {one_line(cause)})"
        ) from error


def meta_types(dataset: Any, columns: Collection[str]) -> dict[str, pa.DataType]:
    """The types the meta ``columns`` of a Hugging Face ``Dataset`` holding BINARY are read as
    (``faim.data.tabular.text_types``), its rows all read for them alone; none where no such column holds BINARY."""
    schema = dataset.features.arrow_schema
    held = [name for name in columns if name in schema.names and binary_paths(schema.field(name).type)]
    if not held:
        return {}
    return text_types(dataset.select_columns(held).with_format("arrow").iter(BATCH_ROWS), held)
