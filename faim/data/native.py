"""Reading helpers shared by the adapters of native public formats (Davidson, ETHOS, LIAR, CoAID, VMU), and the
refusal of a split every dataset source shares (``unknown_split``).

Rows are numbered by the 1-based line they start on (header = line 1), exact even when a quoted cell
spans lines, so every ``origin`` and error message points at the right place in the file.
"""

from __future__ import annotations

import csv
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from pathlib import Path

from faim.data.columns import cell_text
from faim.data.inputs import check_exists
from faim.data.post import Post
from faim.registry import suggest
from faim.wording import plural

Records = Iterator[tuple[int, dict[str, str]]]


def read_delimited(
    path: Path,
    delimiter: str = ",",
    quoted: bool = True,
    names: Sequence[str] | None = None,
    required: Sequence[str] = (),
    where: str = "",
    hint: str = "",
) -> Records:
    """Stream ``(line, row)`` pairs of a delimited UTF-8 text file (``row``: column → cell), skipping blank lines.

    Args:
        path: The file; a leading byte-order mark is ignored.
        delimiter: Cell separator.
        quoted: Whether ``"`` quotes cells (which may then hold the delimiter and newlines); ``False`` reads
            quotes as text (pandas ``quoting=3``), as LIAR and MediaEval need.
        names: Column names of a file without a header row; ``None``: the first line is the header.
        required: Columns the header must have.
        where, hint: Put before and after the message of a ``path`` not there (``check_exists``).

    Raises:
        FileNotFoundError: When ``path`` does not exist, naming it (raised at once, not on iteration).
        ValueError: On iteration, when a required column is missing (naming the file and the columns it has),
            a row's cell count differs from the header's or a row cannot be parsed (naming file and line), or
            a cell is not UTF-8 (naming file, line and column: ``data.tsv:3: column 'text': not UTF-8 text (byte 4
            of the cell)``).
    """
    return read_found(check_exists(path, where, hint), delimiter, quoted, names, required)


def read_found(
    path: Path,
    delimiter: str = ",",
    quoted: bool = True,
    names: Sequence[str] | None = None,
    required: Sequence[str] = (),
) -> Records:
    """``read_delimited`` of a file its caller has found there, not looked for again: a missing one raises
    ``FileNotFoundError`` on iteration."""
    start = 1
    with open(path, encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE)
        try:
            header = list(names) if names is not None else _utf8(path, 1, [], next(reader, []))
            missing = [column for column in required if column not in header]
            if missing:
                said = f"missing {plural(len(missing), 'column')}: {', '.join(missing)}"
                raise ValueError(f"{path}: {said}; found: {', '.join(header) or 'none'}")
            start = reader.line_num + 1
            for cells in reader:
                line, start = start, reader.line_num + 1
                if not cells:
                    continue
                if len(cells) != len(header):
                    raise ValueError(f"{path}:{line}: {cell_count(header, cells, delimiter)}")
                yield line, dict(zip(header, _utf8(path, line, header, cells), strict=True))
        except csv.Error as error:
            raise ValueError(f"{path}:{start}: {error}") from error


def _utf8(path: Path, line: int, header: Sequence[str], cells: list[str]) -> list[str]:
    """``cells``, read with bytes that are not UTF-8 escaped (``surrogateescape``), decoded (``cell_text``).

    Raises:
        ValueError: Naming the file, the ``line`` and the column (by its name in ``header``; a header's cell by its
            place) of the first cell that is not UTF-8, and the byte of the cell where it stops being UTF-8.
    """
    decoded = []
    for index, cell in enumerate(cells):
        try:
            decoded.append(cell if cell.isascii() else cell_text(cell.encode("utf-8", "surrogateescape")))
        except ValueError as error:
            column = repr(header[index]) if header else str(index + 1)
            raise ValueError(f"{path}:{line}: column {column}: {error}") from None
    return decoded


def cell_count(header: Sequence[str], cells: Sequence[str], delimiter: str) -> str:
    """The problem of a row of a delimited file whose cells are not as many as its columns (``header``), for the
    caller to name its file and line first: the counts, the columns and how the row starts (``expected 2 cells (id,
    text), got 3: '3,too,many'``)."""
    start = delimiter.join(cells)[:80]
    return f"expected {plural(len(header), 'cell')} ({', '.join(header)}), got {len(cells)}: {start!r}"


class FilePerSplit(ABC):
    """A dataset folder holding one file per split: train and validation always, test where its file is there. A
    source mixing this in sets ``root`` and ``recipe_path`` (``faim.registry.source_path``), and in its class
    ``SPLIT_FILES`` (split → file name under ``root``) and ``LAYOUT`` (what the folder holds, for
    ``faim.data.inputs.check_exists``), and reads a file it has found (``posts_in``)."""

    SPLIT_FILES: dict[str, str]
    LAYOUT: str
    root: Path
    recipe_path: str

    def splits(self) -> list[str]:
        """The splits the folder gives (``_gives``)."""
        return [split for split in self.SPLIT_FILES if self._gives(split)]

    def location(self, split: str) -> Path:
        """The file of ``split``, looked for only where it decides whether the split is given (test).

        Raises:
            KeyError: On a split other than train, validation and test, or test where its file is not there, naming
                the splits there are.
            FileNotFoundError: For such a split, where ``root`` holds no train file either: the folder is named as
                not the dataset's (``faim.data.inputs.check_exists``).
        """
        if self._gives(split):
            return self._file(split)
        check_exists(self._file("train"), f"{self.recipe_path}.root", self.LAYOUT)  # a folder not the dataset's first
        raise unknown_split(self.recipe_path, split, self.splits(), self.root)

    def check_split(self, split: str) -> None:
        """Find the file of ``split``, reading none of it.

        Raises:
            KeyError: On a split the folder does not give (``location``).
            FileNotFoundError: Naming the file, the recipe key ``root`` and what the folder holds (``LAYOUT``).
        """
        self._found(split)

    def posts(self, split: str) -> list[Post]:
        """All posts of ``split``, in file order (``iter_posts``, which a subclass gives), its file found once.

        Raises:
            KeyError, FileNotFoundError: As ``check_split``.
        """
        return list(self.posts_in(self._found(split)))

    def iter_posts(self, path: str | Path) -> Iterator[Post]:
        """Every post of a file in the folder's format, in file order (``posts_in``).

        Raises:
            FileNotFoundError: When the file does not exist, naming it as given and as resolved (``check_exists``).
        """
        return self.posts_in(check_exists(Path(path)))

    @abstractmethod
    def posts_in(self, path: Path) -> Iterator[Post]:
        """Every post of ``path``, a file in the folder's format found there (``read_found`` reads such a file of
        delimited text), in file order."""

    def _found(self, split: str) -> Path:
        """The file of ``split``, there: test's found by ``location``, which looks for it, the others' checked here."""
        path = self.location(split)
        return path if split == "test" else check_exists(path, f"{self.recipe_path}.root", self.LAYOUT)

    def _gives(self, split: str) -> bool:
        """Whether the folder gives ``split``: train and validation always, test only where its file is there."""
        return split in self.SPLIT_FILES and (split != "test" or self._file(split).is_file())

    def _file(self, split: str) -> Path:
        return self.root / self.SPLIT_FILES[split]


def label_index(value: str, names: Sequence[str], origin: str) -> int:
    """The index of a raw label cell (surrounding spaces ignored) in ``names``.

    Raises:
        ValueError: Naming ``origin`` (``file:line``), the value and the valid ones.
    """
    value = value.strip()
    if value not in names:
        raise ValueError(f"{origin}: unknown label {value!r}{suggest(value, list(names))}; valid: {', '.join(names)}")
    return names.index(value)


def unknown_split(
    where: str, split: str, splits: Sequence[str], under: Path | None = None, given_as: str | None = None
) -> KeyError:
    """The error refusing a split a source does not give, in the one wording of every dataset source: naming the
    source by its recipe path (``where``: ``data``, ``data.sources[1]``; ``faim.registry.source_path``), the folder
    whose files decide which splits there are (``under``, where they do), the recipe key that would give it
    (``given_as``, where a recipe names each split's file) and the splits there are (``data.sources[1]: no split 'test'
    under hm; found: train, validation``, ``data: no split 'test' (give its file as data.test); found: train``)."""
    place = f" under {under}" if under is not None else ""
    key = f" (give its file as {given_as})" if given_as is not None else ""
    return KeyError(f"{where}: no split {split!r}{place}{key}; found: {', '.join(splits) or 'none'}")


def check_choice(owner: str, key: str, value: str, choices: Sequence[str]) -> None:
    """Raise ``ValueError`` naming ``owner``, ``key`` and the valid choices unless ``value`` is one of them."""
    if value not in choices:
        raise ValueError(f"{owner}: {key} {value!r} is not one of {', '.join(choices)}{suggest(value, list(choices))}")
