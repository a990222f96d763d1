"""Where posts are read from: a file, a folder, a glob, or a saved Hugging Face dataset, resolved one way for
evaluation (``read_posts``), training (a recipe source's split) and batch scoring (``score_dump``) alike.

The rule, in order:

1. A folder saved with ``Dataset.save_to_disk`` (it holds ``state.json`` and ``dataset_info.json``) is one input,
   read as that dataset (``faim-sdk[hf]``). A folder saved with ``DatasetDict.save_to_disk`` is refused: name one
   of its splits' folders, or use the ``hf`` source with ``path:``.
2. Any other folder stands for every input inside it, recursively, in sorted order: files with a known extension
   and saved datasets (a saved dataset's own files are not read one by one).
3. A path with ``*``, ``?`` or ``[`` that does not exist is a glob (``dumps/2026-*/*.jsonl``), matched
   recursively with ``**``; a folder it matches named as a file of a known extension stands for the inputs inside it,
   as in 2 (a Spark dump's ``posts.parquet/`` folder of parts, which ``*.parquet`` matches); another folder it
   matches is passed over.

A folder's walk warns (``FaimWarning``), before any file is read and once a process, of the files it does not read,
saying how many and naming the first three: a compressed dump (``posts.jsonl.gz``), a ``.txt`` or ``.xlsx`` file; and
of each folder it passes over as one faim wrote (below), naming the file that says so. It passes over without a word
hidden names, scoring runs and pictures (an extension Pillow opens), which posts name.

Inside folders and globs, names starting with ``.`` or ``_`` are skipped: hidden files and a scoring run's own manifest
and per-post parts. A folder holding a scoring run (its record, ``RUN_FILE``) or another that faim wrote
(``faim.folders.written_by_faim``: a saved model, an export, explanations, a training run's output folder, a report of
``faim eval`` or ``faim calibrate``) is skipped too: an earlier run's output written into a dump's folder is not read
back as posts. A glob skips what a folder it starts in would: a match under a hidden folder, a run's folder, one faim
wrote or a saved dataset below where its wildcards start (``dumps/**/*.parquet`` reads no part of a run written to
``dumps/scores``).
Known extensions: ``.jsonl``, ``.ndjson`` and ``.json`` (JSON Lines), ``.csv``, ``.tsv``, ``.parquet``.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import itertools
import re
import sys
from collections.abc import Callable, Generator, Iterable
from pathlib import Path
from typing import Any, TypeVar

from PIL import Image

from faim.folders import written_by_faim
from faim.notices import warn
from faim.wording import plural

T = TypeVar("T")

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}
"""File extension → format."""

DATASET = "dataset"
"""The format of a saved Hugging Face dataset folder."""

RUN_FILE = "_run.json"
"""The record a scoring run keeps in its output folder (``faim.scoring.manifest``)."""


SAID: set[str] = set()
"""The warnings of a walk said in this process (``_warn_once``), of files a folder holds that are not read
(``_unread_message``) and of folders passed over as faim wrote them (``_faim_output_message``): each said once,
however often its folder is looked in (``faim eval`` looks in it for the posts, then for their columns; training, for
a split's files as it checks them, then as it reads them), as Python says a warning once where it is given."""


def is_saved_dataset(path: Path) -> bool:
    """Whether ``path`` is a folder ``Dataset.save_to_disk`` wrote."""
    return path.is_dir() and (path / "state.json").is_file() and (path / "dataset_info.json").is_file()


def is_saved(path: Path) -> bool:
    """Whether ``path`` is a folder ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk`` wrote: one input,
    never read file by file."""
    return is_saved_dataset(path) or (path.is_dir() and (path / "dataset_dict.json").is_file())


def input_format(path: Path) -> str:
    """``jsonl``, ``csv``, ``tsv``, ``parquet``, or ``dataset`` for a saved dataset folder.

    Raises:
        ValueError: For a saved ``DatasetDict`` or an unknown extension, naming the known ones.
    """
    if is_saved_dataset(path):
        return DATASET
    if path.is_dir() and (path / "dataset_dict.json").is_file():
        splits = sorted(child.name for child in path.iterdir() if is_saved_dataset(child))
        raise ValueError(
            f"{path} holds a DatasetDict (splits: {', '.join(splits) or 'none saved'}): point at one split's folder"
            + (f", such as {path / splits[0]}" if splits else "")
        )
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(
            f"cannot read {path}: unknown extension; known: {', '.join(FORMATS)}, or a saved dataset folder"
        )
    return FORMATS[suffix]


def check_exists(path: Path, where: str = "", hint: str = "", folder: bool = False) -> Path:
    """``path``, where it is a file (a folder, with ``folder``): the one check every reader of a named file or folder
    makes before reading it, so that each says the same of one not there, naming it as given and as resolved.

    Args:
        path: The file or folder.
        where: What chose it, put before the message: the recipe key, by the source's recipe path (``data.root``,
            ``data.sources[1].validation``; ``faim.registry.source_path``); empty where no recipe did.
        hint: What should be there, put after the message: for a dataset's folder, what it holds (each adapter's
            ``LAYOUT``), so that a ``root:`` naming another folder (the one above it, a download's archive folder)
            says which.

    Raises:
        FileNotFoundError: ``"data.root: ds/labeled_data.csv does not exist (resolved to /abs/ds/labeled_data.csv);
            root must be the Davidson et al. (2017) folder holding labeled_data.csv ...; a recipe's data paths are
            read from the working directory, not its folder"`` (that note where ``where`` names a recipe's key and
            the path is relative: ``recipe_path_note``), or without ``where`` and ``hint``, ``"posts.jsonl does not
            exist (resolved to /abs/posts.jsonl)"``.
    """
    if not (path.is_dir() if folder else path.is_file()):
        prefix = f"{where}: " if where else ""
        suffix = f"; {hint}" if hint else ""
        read_from = recipe_path_note(path) if where else ""
        raise FileNotFoundError(f"{prefix}{path} does not exist (resolved to {path.absolute()}){suffix}{read_from}")
    return path


def data_path(given: str | Path) -> Path:
    """A data path a recipe gives (a split's file, a dataset's root), a ``~`` it begins with the home folder, as of a
    ``train.output_dir``: it is read by no shell, which would make it so."""
    return Path(given).expanduser()


def recipe_path_note(path: str | Path) -> str:
    """What a recipe's data path not found adds, where the path is relative and not there (a glob's folder before
    its wildcards not there, or the working directory itself, as of ``*.jsonl``, which names no folder of its own):
    that it was read from the working directory, not the recipe's folder (which ``base:`` is read from); empty for a
    path given whole, or one there (a folder holding no input, a glob whose folder is there matching none)."""
    start = _glob_start(path) if glob.has_magic(str(path)) else Path(path)
    found = start != Path() and start.exists()
    return (
        ""
        if Path(path).is_absolute() or found
        else "; a recipe's data paths are read from the working directory, not its folder"
    )


def find_inputs(spec: str | Path) -> list[Path]:
    """The inputs a file, folder or glob stands for (see the module docstring), in a stable order, each of a known
    format.

    Raises:
        FileNotFoundError: When it stands for nothing.
        ValueError: For a file of an unknown extension or a saved ``DatasetDict`` (``input_format``).
    """
    found = expand(spec)
    for item in found:
        input_format(item)
    return found


def expand(spec: str | Path) -> list[Path]:
    """What a file, folder or glob stands for (see the module docstring): a file or saved dataset folder itself,
    whatever its name; the inputs inside another folder; the inputs a glob matches.

    Raises:
        FileNotFoundError: When it stands for nothing (a missing file of an unknown extension is a ``ValueError``).
    """
    path = Path(spec)
    passed: list[str] = []  # why each folder faim wrote is passed over (_faim_output_message)
    why = ""  # what the error of nothing found adds
    if path.is_dir() and not is_saved(path):
        unread: list[Path] = []
        found = _inside(path, unread, passed)
        if unread:
            _warn_once(_unread_message(path, unread))
    elif path.exists():
        found = [path]
    elif not glob.has_magic(str(spec)):
        input_format(path)  # an unknown extension is named before the missing file
        found = [check_exists(path)]  # refused: nothing is there
    else:
        matches = sorted(Path(p) for p in glob.glob(str(spec), recursive=True))
        skipped = _skipped_below(_glob_start(spec), passed)
        unread: list[Path] = []
        kept = [match for match in matches if not skipped(match)]
        found = list(dict.fromkeys(item for p in kept for item in _matched(p, unread, passed)))
        if unread:
            _warn_once(_unread_message(Path(spec), unread))
        why = "" if found else _folders_matched(spec, kept) + _wildcards_in_folder(spec)
    for message in passed:
        _warn_once(message)
    if not found:
        raise FileNotFoundError(
            f"{spec}: no input files (expected a file, a folder or a glob of {', '.join(FORMATS)} files, or a "
            f"saved dataset folder){why}"
        )
    return found


def input_name(spec: str | Path) -> str:
    """A short name for what a file, folder or glob stands for, to name what is written from it: a file's name
    without its extension, a folder's name, and for a glob the folder its wildcards start in (``dumps`` for
    ``dumps/2026-*/*.jsonl``), so that no wildcard reaches a folder name."""
    path = Path(spec)
    if path.exists() or not glob.has_magic(str(spec)):
        return path.absolute().stem
    return _glob_start(spec).absolute().name


def read_from(spec: str | Path) -> Path | None:
    """The folder a file, folder or glob's posts are read from: a folder itself, the folder holding a file, and the
    folder holding a glob's matches where its folders are named (``posts`` for ``posts/*.jsonl``; ``.`` for
    ``*.jsonl``), or, where they are ``**`` alone, which matches no folder too, where that starts (``posts`` for
    ``posts/**/*.json``); none for a glob whose folders are wildcards otherwise (``d*/posts.jsonl``), whose matches
    lie in other folders than any one named."""
    path = Path(spec)
    if path.is_dir():
        return path
    if path.exists() or not glob.has_magic(str(path.parent)):
        return path.parent
    if all(part == "**" for part in path.parent.parts if _wildcard(part)):
        return _glob_start(path.parent)
    return None


def check_apart_from_data(data: str | Path, out: str | Path, written: str, option: str = "-o") -> None:
    """Refuse an output folder ``out`` (given as ``option``) that is the folder of posts ``data`` (DATA) or the folder
    a file or glob given as DATA is read from (``read_from``): ``written`` (what goes there: "the
    report") would be read as posts of it by the next command given it (a folder inside it, which faim wrote, a walk
    of it passes over).

    Raises:
        ValueError: Naming ``out``.
    """
    folder = read_from(data)
    if folder is not None and Path(out).resolve() == folder.resolve():
        what = "the data, DATA," if Path(data).is_dir() else "the folder DATA is read from,"
        raise ValueError(f"{option} {out}: that is {what} whose posts its files would join; {written} goes elsewhere")


def _matched(match: Path, unread: list[Path], passed: list[str]) -> list[Path]:
    """The inputs a glob's ``match`` stands for: a file or saved dataset itself; the inputs of a folder named as an
    input is (``FORMATS``), as a folder given stands for them (``_inside``: a Spark dump's ``posts.parquet/`` folder of
    parts, which ``*.parquet`` matches, a Hive table's ``posts.jsonl/``), none where a walk passes it over
    (``_passed_over``); none of another folder (``data/validation/``, which ``data/*`` matches beside the files it
    means)."""
    if match.is_file() or is_saved(match):
        return [match]
    if match.is_dir() and match.suffix.lower() in FORMATS and not _passed_over(match, passed):
        return _inside(match, unread, passed)
    return []


def _folders_matched(spec: str | Path, matches: list[Path], named: int = 3) -> str:
    """What the error of a glob ``spec`` that found no input adds where its ``matches`` (those a walk would not skip)
    hold folders not named as inputs (``_matched`` passes over ``data/validation/``): how many, the first ``named``, and
    how to read the inputs inside them; ``""`` where they hold none."""
    folders = [match for match in matches if match.is_dir() and match.suffix.lower() not in FORMATS]
    if not folders:
        return ""
    names = ", ".join(map(str, folders[:named]))
    more = f" and {len(folders) - named} more" if len(folders) > named else ""
    return (
        f"; it matches {plural(len(folders), 'folder')} ({names}{more}), which a glob reads only where one is named as "
        f"an input is (posts.parquet/, as Spark writes a table's parts): glob the files in them ({Path(spec, '**')}) "
        "or give one folder, which stands for every input inside it"
    )


def _wildcards_in_folder(spec: str | Path) -> str:
    """What the error of a glob ``spec`` that found no input adds where a folder it names is there as written though
    its name holds a wildcard (``data[2024]/*.jsonl``, of the folder ``data[2024]``): that a glob reads it as one
    (``[2024]`` one character of 2, 0 and 4), and the glob naming that folder (``data[[]2024]/*.jsonl``,
    ``glob.escape``); ``""`` where none is."""
    parts = Path(spec).parts
    for end in range(len(parts) - 1, 0, -1):
        folder = Path(*parts[:end])
        if glob.has_magic(str(folder)) and folder.is_dir():
            escaped = Path(glob.escape(str(folder)), *parts[end:])
            return (
                f"; {folder} is a folder, but a glob reads *, ? and [...] in a name as wildcards ([ab] one character, "
                f"a or b): write each in brackets to name it ({escaped})"
            )
    return ""


def _glob_start(spec: str | Path) -> Path:
    """The folder a glob's wildcards start in (``dumps`` for ``dumps/2026-*/*.jsonl``; ``.`` for ``*.jsonl``), each
    folder before them by its name, wildcard characters escaped in it read as themselves (``data[2024]`` for
    ``data[[]2024]/*.jsonl``)."""
    named = itertools.takewhile(lambda part: not _wildcard(part), Path(spec).parts)
    return Path(*(ESCAPED_CHARACTER.sub(r"\1", part) for part in named))


ESCAPED_CHARACTER = re.compile(r"\[([*?[])\]")
"""A wildcard character escaped in a glob (``[[]``, ``[*]``, ``[?]``, as ``glob.escape`` writes it), which matches
itself alone."""


def _wildcard(part: str) -> bool:
    """Whether the part ``part`` of a glob (a folder's or a file's name) holds a wildcard: one not escaped
    (``ESCAPED_CHARACTER``), so that it matches names other than one alone."""
    return glob.has_magic(ESCAPED_CHARACTER.sub("", part))


def _skipped_below(top: Path, passed: list[str]) -> Callable[[Path], bool]:
    """A test of whether a folder's walk from ``top`` (``_inside``) would skip a glob's match: a hidden name, its
    own or a folder's between, or a folder between holding a scoring run, written by faim (said in ``passed``, as
    ``_passed_over`` says it) or saved as a dataset. Each folder between is looked at once, however many matches lie
    under it, and only by the test of one glob's matches: what a folder holds may change before the next."""
    depth = len(top.parts)

    @functools.cache
    def folder_skipped(folder: Path) -> bool:
        """Whether ``folder`` (or a folder above it, below ``top``) is one the walk skips."""
        if len(folder.parts) <= depth:
            return False
        return folder_skipped(folder.parent) or _passed_over(folder, passed) or is_saved(folder)

    return lambda match: _hidden(match) or folder_skipped(match.parent)


def _inside(folder: Path, unread: list[Path], passed: list[str]) -> list[Path]:
    """Every input in ``folder``, recursively: known files and saved datasets, hidden names, the output folders of
    scoring runs and folders faim wrote skipped (``_passed_over``, which says why of the last in ``passed``); the
    other files, but pictures (``_picture``), are added to ``unread``."""
    found = []
    for child in sorted(folder.iterdir()):
        if _hidden(child):
            continue
        if child.is_dir():
            if _passed_over(child, passed):
                continue
            if is_saved(child):
                found.append(child)
            else:
                found += _inside(child, unread, passed)
        elif child.suffix.lower() in FORMATS:
            found.append(child)
        elif not _picture(child):
            unread.append(child)
    return found


def _picture(path: Path) -> bool:
    """Whether ``path`` is named as a picture Pillow opens: one a post may name, read as the post is."""
    return path.suffix.lower() in _picture_extensions()


@functools.cache
def _picture_extensions() -> frozenset[str]:
    """The extensions of pictures Pillow opens (``.jpg``, ``.png``, ...), looked up (Pillow loads its plug-ins for
    them) only where a folder holds a file of no known format."""
    return frozenset(ext for ext, kind in Image.registered_extensions().items() if kind in Image.OPEN)


def _warn_once(message: str) -> None:
    """Warn (``FaimWarning``) of what a walk ``expand`` made found, ``message``, once a process (``SAID``)."""
    if message not in SAID:
        warn(message)
        SAID.add(message)  # once said: one made an error (-W error) stops above, and is raised again


def _unread_message(folder: Path, unread: list[Path], named: int = 3) -> str:
    """What is said of the files ``unread`` (at least one) that a walk of ``folder`` does not read: how many, the
    first ``named``, and what a folder's walk reads."""
    names = ", ".join(map(str, unread[:named]))
    more = f" and {len(unread) - named} more" if len(unread) > named else ""
    known = ", ".join(list(FORMATS)[:-1]) + f" and {list(FORMATS)[-1]}"
    return (
        f"{folder}: {plural(len(unread), 'file')} in it {'is' if len(unread) == 1 else 'are'} not read: {names}{more}:"
        f" faim reads a folder's {known} files (not compressed) and saved datasets"
    )


def _passed_over(folder: Path, passed: list[str]) -> bool:
    """Whether a walk skips the folder ``folder``: a hidden name, or a folder holding a scoring run or another that
    faim wrote (``faim.folders.written_by_faim``), whose passing over is said in ``passed``
    (``_faim_output_message``) where it is a folder the user may have meant to be read (posts beside a copied
    ``faim-explanations.json``). Files are never looked in: only a folder can be one faim wrote."""
    if _hidden(folder) or (folder / RUN_FILE).is_file():
        return True
    if writer := written_by_faim(folder):
        passed.append(_faim_output_message(folder, writer))
        return True
    return False


def _faim_output_message(folder: Path, writer: str) -> str:
    """What is said of ``folder``, passed over as faim wrote it (``writer``: ``faim.folders.written_by_faim``)."""
    return f"passed over {folder}: {writer}; move what it holds out of it to read it"


def _hidden(path: Path) -> bool:
    return path.name.startswith((".", "_"))


def read_inputs(files: list[Path], read: Callable[[Path], Iterable[T]]) -> Generator[T, None, None]:
    """What ``read`` gives of each of ``files`` in turn (called once per file, in order), passed on as it comes, with
    one warning (``FaimWarning``) once reading ends if any file read gave nothing (an empty file, one of blank lines
    alone, a CSV or TSV of its header alone, a Parquet file or saved dataset of no row), naming it, or the first of
    them (``_no_row_message``): reading such a file gives nothing, which would otherwise pass unsaid. Reading ends
    once every file is read, or earlier where a file fails to be read, the reading is stopped (``KeyboardInterrupt``)
    or the stream is closed: the files found empty so far are then warned of too, before the error goes on.

    With warnings made errors (``-W error``), the warning is raised where reading ends as it should: by the last
    file, or by ``close()`` (a stream dropped unclosed warns as it is collected, as Python's files do of being left
    open); it is left unsaid where it would take the place of an error ending the reading (``close_reading`` closes
    a stream as an error goes on)."""
    empty: list[Path] = []
    begun = 0  # files whose reading began: the count the warning gives where reading ends early
    try:
        for path in files:
            begun += 1
            given = False
            for item in read(path):
                given = True
                yield item
            if not given:
                empty.append(path)
    except GeneratorExit:  # closed: reading ended as it should, before every file was read
        _warn_no_row(empty, begun)
        raise
    except BaseException:
        with contextlib.suppress(Warning):  # warnings made errors (-W error) must not hide the error going on
            _warn_no_row(empty, begun)
        raise
    _warn_no_row(empty, begun)


def close_reading(stream: Generator[Any, None, None]) -> None:
    """Close ``stream`` (``read_inputs``'s), which warns of the files read so far that hold no row; called as an
    error goes on (in a ``finally`` or ``except`` block it unwinds through), a warning made an error (``-W error``)
    is left unsaid, so that it does not take that error's place."""
    failing = sys.exc_info()[1] is not None
    with contextlib.suppress(*([Warning] if failing else [])):
        stream.close()


def _warn_no_row(empty: list[Path], count: int) -> None:
    """Warn of the inputs ``empty`` holding no row among the ``count`` read (``_no_row_message``), if any."""
    if empty:
        warn(_no_row_message(empty, count))


def _no_row_message(empty: list[Path], count: int, named: int = 3) -> str:
    """What is said of the inputs ``empty`` (at least one) holding no row among the ``count`` read (those whose
    reading began, all of them unless reading ended early): the file itself where it is one, else how many of them
    and the first ``named``."""
    kinds = "(an empty file, blank lines alone, or a header alone)"
    if len(empty) == 1:
        return f"{empty[0]}: holds no row {kinds}: nothing is read from it"
    names = ", ".join(map(str, empty[:named]))
    more = f" and {len(empty) - named} more" if len(empty) > named else ""
    return f"{len(empty)} of the {count} input files read hold no row {kinds}: {names}{more}: nothing is read from them"
