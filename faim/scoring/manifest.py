"""The record of a scoring run in its output folder, so a killed run restarts where it stopped.

``_run.json`` says what the run is (the model's files and its tasks with their thresholds and calibration, inputs
with sizes and modification times, shard size, options, and for a run reading pictures the version of faim's
picture decoding); a restart with anything different is refused rather than mixing two runs' rows. It also names
the faim version that began the run, which a restart does not compare, and each input as the run was given it, which
every restart names it by (``INPUT_NAMES``).
``_manifest.jsonl`` gets one line per finished shard, appended after the shard's part file was renamed into place,
its bytes and name on the disk (``faim.folders.replace_durably``), with what its rows hold (the kinds the model
reads that no post of it holds, and the columns no mapping reads), which the end of the run warns of. A part file is
the truth: on restart, parts missing from the manifest (killed between the rename and the append) are added back
from their Parquet metadata (what their rows hold too, which each part records), and half-written temporary files
are deleted. ``_finished.json`` is written once a run has read its inputs to their end and every shard is done, with
the digests of the run's record and of its shards' keys: a rerun of that run whose parts are all in place then reads
none of its inputs' rows. ``_run.json`` and ``_finished.json`` are on the disk before their names, as parts are
(``faim.folders.write_durably``), and what an overwrite deletes is gone from it before the new ``_run.json``. No
file name of these is read as data by Parquet readers (they skip names starting with ``_``), nor is ``_run.lock``,
which a run holds locked while it writes into the folder (``writing_run``), so that a second run into it is refused.
A run that pools by picture keeps its shards' per-post parts in ``_per_post/`` and writes its pooled parts,
one per shard, once all shards are done (``faim.scoring.pool_parts``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from faim.data.inputs import RUN_FILE, input_format
from faim.data.tabular import ARROW_READ_ERRORS, holds_lines_read_otherwise, one_line
from faim.folders import check_folder_path, named_folder, sync_folder, write_durably
from faim.notices import warn
from faim.scoring.inputs import KEY_WIDTHS
from faim.scoring.options import ScoringOptions
from faim.scoring.report import HELD_KEY, Held, ShardReport
from faim.version import __version__

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

MANIFEST_FILE = "_manifest.jsonl"
FINISHED_FILE = "_finished.json"
"""The record that every shard of a run is done (``Manifest.finish``)."""
LOCK_FILE = "_run.lock"
"""The file a run holds locked while it writes into its output folder (``writing_run``), left there after it: removing
it would let a run starting meanwhile lock a new file of the same name beside the one locked."""
PER_POST_DIR = "_per_post"
"""Folder, inside the output of a run pooling by picture, of its per-post parts."""
BEGUN_WITH = "faim_version"
"""The part of a run's record naming the faim version that began it: said where a restart is refused, not compared
(a faim of another version scores as the run's did unless its picture decoding differs, which the settings record)."""
SHARD_KEYS = "shard_key_widths"
"""The part of a run's record giving the digits of its shard keys' file and shard index
(``faim.scoring.inputs.key_widths``, chosen from the dump's size where the run began): a restart keys its shards
alike, so the parts written already are passed over. Not compared (``compared``); a run begun by a faim that recorded
none keeps ``faim.scoring.inputs.KEY_WIDTHS``, whose keys it wrote."""
INPUT_NAMES = "input_names"
"""The part of a run's record naming each of its inputs (in the order of ``inputs``, which records them resolved) as
the run that began it was given them (the dump as typed: ``dump/a.jsonl``), the names its rows' ``source`` gives them
from then on: a restart, however it names the dump (``./dump/``, through a link) and from whichever folder, reads the
same files and names them as the run did. Not compared (``compared``); a run begun by a faim that recorded none names
each input as its restart is given it (``Manifest.input_names``)."""
DECODING = "image_decoding"
"""The setting recording the version of faim's picture decoding of a run reading pictures
(``faim.scoring.runner.picture_settings``)."""
JSONL_READING = "jsonl_lines"
"""The setting recording how a run reading JSON Lines takes their lines for rows (``faim.data.tabular.JSONL_LINES``;
``faim.scoring.runner.line_settings``): a run begun by a faim that recorded none is resumed unless its inputs hold a
line the two read otherwise (``lines_read_otherwise``)."""
FIELD_OBJECTS_SETTING = "field_objects"
"""The setting recording how a run reads an unmapped labels or meta column holding a mapping
(``faim.data.columns.FIELD_OBJECTS``; ``faim.scoring.runner.object_settings``): a run begun by a faim that recorded
none read no such column, and its resume is refused (its settings differ) rather than scoring its rows both ways."""
PIXEL_LIMIT = "max_image_pixels"
"""The setting recording the decompression-bomb limit of a run reading pictures, where it is not Pillow's own
(``faim.scoring.runner.picture_settings``)."""

RECORD_PARTS = ("model", "tasks", "inputs", "settings", BEGUN_WITH, INPUT_NAMES, SHARD_KEYS)
"""The parts of a run's record this faim writes (``run_identity``); a record holding another was written by a newer
faim (``unknown_to_this_faim``)."""
SETTINGS = ("columns", "image_root", "options", "scores", "embeddings", "pool_by_image", "runtime", "shard_rows",
            DECODING, PIXEL_LIMIT, JSONL_READING, FIELD_OBJECTS_SETTING)  # fmt: skip
"""The settings a run of this faim records (``faim.scoring.engine.score_dump``'s, ``faim.scoring.exported``'s and
``faim.scoring.runner.plan_run``'s), ``options`` each of ``faim.scoring.options.ScoringOptions``."""
RETIRED_SETTINGS = ("float_id_cells",)
"""The settings an older faim recorded and this one no longer does (``float_id_cells``: CSV and TSV id cells spelling a
whole float read as integers), known rather than a newer faim's: a run recording one differs in its settings from this
faim's run, and is refused as another run is."""
VERSIONED = (DECODING, JSONL_READING)
"""The settings naming the version of how a run reads its inputs, which only grows from one faim to the next."""


def absolute_image_root(image_root: str | None) -> str | None:
    """``image_root`` (a folder relative image paths resolve against; ``None`` or empty: each input file's folder)
    as an absolute path, as a run records and its workers read it: a relative folder names another one in another
    working directory (a resume started elsewhere, a Ray actor), as the run's input files, recorded resolved, do
    not."""
    return str(Path(image_root).resolve()) if image_root else None


def run_identity(
    model: dict[str, Any], files: list[Path], settings: dict[str, Any], widths: tuple[int, int] = KEY_WIDTHS
) -> dict[str, Any]:
    """What makes two runs the same run: the model's file hashes (a saved model's or an export's, by name) and its
    tasks as its ``faim.json`` or export manifest records them (thresholds and calibration: ``faim calibrate``
    writes a model of the same files with other ones), inputs (path resolved, size, mtime) and settings; and, not
    compared, the faim version making it (``BEGUN_WITH``), the inputs as ``files`` names them (``INPUT_NAMES``) and
    the digits of its shard keys, ``widths`` (``SHARD_KEYS``).

    Args:
        model: The saved model's ``faim.json`` or the export's manifest, as read.
    """
    inputs = [[str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files]
    identity = {"model": model["files"], "tasks": model["tasks"], "inputs": inputs, "settings": settings,
                BEGUN_WITH: __version__, INPUT_NAMES: [str(f) for f in files], SHARD_KEYS: list(widths)}  # fmt: skip
    return json.loads(json.dumps(identity))  # as the run's record reads it back: a tuple given is a list there


def check_output_folder(out_dir: Path) -> None:
    """Refuse an output folder holding anything but what scoring writes there (parts, and names starting with ``_``
    or ``.``, which Parquet readers skip): reading the folder back as one table would read those files too. The
    folder checked is the one ``out_dir`` names as it is written into (``faim.folders.named_folder``: ``missing/..``
    is the folder holding ``missing``).

    Raises:
        NotADirectoryError: When ``out_dir`` is a file or lies inside one (``faim.folders.check_folder_path``).
        FileExistsError: Naming the folder and a few of the files.
    """
    check_folder_path(out_dir)
    folder = named_folder(out_dir)  # the folder written into: missing/.. is the folder holding missing
    if not folder.is_dir():
        return
    foreign = sorted(path.name for path in folder.iterdir() if not path.name.startswith(("_", ".", "part-")))
    if foreign:
        raise FileExistsError(
            f"{out_dir}: holds files that are not a scoring run's ({', '.join(foreign[:3])}"
            f"{', ...' if len(foreign) > 3 else ''}); name a new or empty folder"
        )


def check_run_output(out: str | Path) -> None:
    """Refuse, before any work, an output folder ``out`` that a run could not write into: an empty name (a variable
    not set), which a path reads as the working directory; one ``check_output_folder`` refuses (a file, or a folder
    holding files a run does not write); or one this user may not write into, or, where it is not there, the nearest
    folder above it that is (``os.access``).

    Raises:
        ValueError: Naming the empty name.
        NotADirectoryError, FileExistsError: As ``check_output_folder``.
        PermissionError: Naming ``out`` and the folder this user may not write into.
    """
    if not os.fspath(out):
        raise ValueError("out '': an empty folder name (a variable not set?); name a folder, '.' for this one")
    check_output_folder(Path(out))
    folder = named_folder(Path(out))
    there = next(path for path in (folder, *folder.parents) if path.exists())
    if not os.access(there, os.W_OK | os.X_OK):
        raise PermissionError(f"{out}: this user may not write into {there}; name a folder it may write into")


@contextmanager
def writing_run(out_dir: Path) -> Iterator[None]:
    """Hold the output folder ``out_dir`` for the run writing into it for the block: refused as
    ``check_output_folder`` refuses one, else made where absent and locked (an advisory lock, ``fcntl.flock``, on its
    ``LOCK_FILE``), so that a second run into the same folder, from this process or another, is refused rather than
    mixing its parts and record with this one's. The system lets the lock go as the process ends, however it ends
    (``kill -9`` too): a run killed part way never keeps its resume out. Nothing is locked where the system has no
    ``flock`` (Windows), nor, warned of (``FaimWarning``), where the folder's file system takes no lock (an NFS
    mount without its lock service): the run goes on unlocked.

    Raises:
        NotADirectoryError, FileExistsError: As ``check_output_folder``.
        BlockingIOError: Naming the folder, where another run holds it.
    """
    check_output_folder(out_dir)
    folder = named_folder(out_dir)  # the folder written into, as check_output_folder reads it
    folder.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    with open(folder / LOCK_FILE, "a", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BlockingIOError(
                f"{out_dir}: another scoring run is writing into this folder now; nothing was written or removed, "
                "wait for it to end or write to another folder"
            ) from None
        except OSError as error:
            warn(
                f"{out_dir}: its file system takes no lock ({error.strerror or error}): the run goes on, but a second "
                "run into this folder at once would not be refused"
            )
        yield


def recorded_identity(record: bytes, identity: dict[str, Any]) -> dict[str, Any]:
    """The identity ``record`` (a run's ``_run.json``, its bytes) holds, as this version writes it for the run
    ``identity`` (``run_identity``'s parts): a run recorded while bf16 was chosen by the CPU (``"bf16": null``) is a run
    without it, as scoring is now unless asked; a run recorded before a model's tasks were part of a run's identity
    takes ``identity``'s, as those versions took any; and where ``identity`` reads no picture (its settings name no
    picture decoding), the record names no picture decoding or decompression-bomb limit either: versions that recorded
    the decoding of every model embedding pictures, fused or not, and the limit of every run, recorded them for runs
    that read none, and a run of the same model and settings reads the pictures this one reads. An ``image_root`` as
    versions recorded it, as given (a link, ``..``, a trailing slash; relative), is taken as the folder it names from
    here (``absolute_image_root``): the folder a relative one was begun in is not recorded."""
    recorded = json.loads(record.decode("utf-8"))
    recorded.setdefault("tasks", identity["tasks"])
    settings = recorded.get("settings", {})
    options = settings.get("options")
    if isinstance(options, dict) and "bf16" in options and options["bf16"] is None:
        options["bf16"] = False
    if isinstance(settings.get("image_root"), str):
        settings["image_root"] = absolute_image_root(settings["image_root"])
    if DECODING not in identity["settings"]:
        for name in (DECODING, PIXEL_LIMIT):
            settings.pop(name, None)
    if JSONL_READING in identity["settings"] and JSONL_READING not in settings and not lines_read_otherwise(identity):
        settings[JSONL_READING] = identity["settings"][JSONL_READING]
    return recorded


def lines_read_otherwise(identity: dict[str, Any]) -> bool:
    """Whether a JSON Lines input of the run ``identity`` holds a line a faim that recorded no ``JSONL_READING`` took
    for a row and this one passes over (``faim.data.tabular.holds_lines_read_otherwise``): only then does a run such a
    faim began, cutting its shards by rows, differ from this one's."""
    paths = [Path(path) for path, *_ in identity["inputs"]]
    return any(input_format(path) == "jsonl" and holds_lines_read_otherwise(path) for path in paths)


def check_resumable(
    out_dir: Path, identity: dict[str, Any], overwrite: bool = False
) -> tuple[bytes, dict[str, Any]] | None:
    """Refuse, reading alone, an output folder a run of ``identity`` may not write into: a file, one holding files a
    scoring run does not write (``check_output_folder``), or, unless ``overwrite``, another run (model, its
    thresholds and calibration, inputs or settings), or parts of a run whose record is gone.

    Returns:
        The record (``_run.json``) of the run ``identity`` resumes, its bytes as read, and the identity it holds
        (``recorded_identity``); ``None`` where the folder records no run, or with ``overwrite`` (its record is not
        read).

    Raises:
        NotADirectoryError: Naming the file.
        FileExistsError: Naming the folder and a few of the foreign files.
        ValueError: Naming the folder holding another run, or parts of no record.
    """
    check_output_folder(out_dir)
    folder = named_folder(out_dir)  # the folder written into, as check_output_folder reads it
    run_file = folder / RUN_FILE
    if overwrite:
        return None
    if not run_file.exists():
        if parts := sorted(
            part.name for part in [*folder.glob("part-*.parquet"), *(folder / PER_POST_DIR).glob("part-*.parquet")]
        ):
            raise ValueError(
                f"{out_dir} holds parts of a scoring run ({parts[0]}{', ...' if len(parts) > 1 else ''}) but no "
                f"record of it ({RUN_FILE}, removed): their rows may be another run's, so they are not taken for this "
                "run's; write to a new folder, or pass --overwrite (overwrite=True) to delete them and start afresh"
            )
        return None
    record = run_file.read_bytes()
    recorded = recorded_identity(record, identity)
    if compared(recorded) == compared(identity):
        return record, recorded
    if unknown := unknown_to_this_faim(recorded, identity):
        began = begun_by(recorded)
        other = began != f"faim {__version__}"  # one of this version number: no version tells the two apart
        by = f" ({began}; this is faim {__version__})" if began else f" (this is faim {__version__})"
        by = by if other else ""
        raise ValueError(
            f"{out_dir} holds a scoring run begun by a newer faim{by}: its record ({run_file}) holds "
            f"{', '.join(unknown)}, which this faim does not know, so it cannot resume the run; finish it with "
            f"{f'{began} or later' if began and other else 'the faim that began it'}, or pass --overwrite "
            "(overwrite=True) to start afresh, or write to a new folder"
        )
    if replaced := replaced_inputs(recorded, identity):
        one = len(replaced) == 1
        raise ValueError(
            f"{out_dir} holds this run, but {'an input has' if one else 'inputs have'} changed since the run began "
            f"({'; '.join(replaced)}): the rows scored from {'it' if one else 'them'} may not be "
            f"{'its' if one else 'their'} rows now, so it is not resumed; to score the dump as it is now, pass "
            "--overwrite (overwrite=True), or write to a new folder"
        )
    decoding = decoding_difference(recorded, identity)
    differences = identity_differences(recorded, identity, decoding) or [f"its record differs: see {run_file}"]
    finish = ""
    if decoding:
        began = begun_by(recorded)
        finish = ", or finish the run with the faim that began it" + (f" ({began})" if began else "")
    raise ValueError(
        f"{out_dir} holds another scoring run ({'; '.join(differences)}); write to a new folder, or pass "
        f"--overwrite (overwrite=True) to start afresh{finish}"
    )


def unknown_to_this_faim(recorded: dict[str, Any], identity: dict[str, Any]) -> list[str]:
    """What the record of a run (``recorded``) holds that this faim does not know, so that a newer faim began it: a
    part (``RECORD_PARTS``), setting (``SETTINGS``) or option (``ScoringOptions``'s) of no name this faim records or
    once recorded (``RETIRED_SETTINGS``), by its dotted name, and a version of how the run read its inputs
    (``VERSIONED``) beyond the one this faim's run ``identity`` reads them by, with both versions."""
    settings = recorded.get("settings")
    settings = settings if isinstance(settings, dict) else {}
    options = settings.get("options")
    unknown = [name for name in recorded if name not in RECORD_PARTS]
    unknown += [f"settings.{name}" for name in settings if name not in SETTINGS + RETIRED_SETTINGS]
    known_options = {option.name for option in fields(ScoringOptions)}
    unknown += [f"settings.options.{name}" for name in options or () if name not in known_options]
    for name in VERSIONED:
        was, now = settings.get(name), identity["settings"].get(name)
        if isinstance(was, int) and isinstance(now, int) and was > now:
            unknown.append(f"settings.{name} {was} (this faim's: {now})")
    return unknown


def compared(identity: dict[str, Any]) -> dict[str, Any]:
    """``identity`` as runs are compared: without the faim version that made it (``BEGUN_WITH``), the names it gives
    its inputs (``INPUT_NAMES``) or the digits of its shard keys (``SHARD_KEYS``)."""
    return {name: part for name, part in identity.items() if name not in (BEGUN_WITH, INPUT_NAMES, SHARD_KEYS)}


def replaced_inputs(recorded: dict[str, Any], identity: dict[str, Any]) -> list[str]:
    """Of the run ``recorded``, which ``identity`` repeats but for its inputs' sizes or modification times (the same
    files, in the same order: each replaced or written to since, as a damaged file replaced by a good one), each
    such input with how it changed; none where anything else differs."""
    before, now = recorded.get("inputs", []), identity["inputs"]
    if [path for path, *_ in before] != [path for path, *_ in now]:
        return []
    if compared(recorded) | {"inputs": None} != compared(identity) | {"inputs": None}:
        return []
    return [
        f"{path}: {size} → {found} bytes" if size != found else f"{path}: same size, another modification time"
        for (path, size, *rest), (_, found, *rest_now) in zip(before, now)
        if [size, *rest] != [found, *rest_now]
    ]


def begun_by(recorded: dict[str, Any]) -> str | None:
    """``faim VERSION``, the faim that began the run ``recorded``; ``None`` where its record names none (a run begun
    before records named it)."""
    return f"faim {recorded[BEGUN_WITH]}" if BEGUN_WITH in recorded else None


def identity_differences(recorded: dict[str, Any], identity: dict[str, Any], decoding: str | None) -> list[str]:
    """What sets the run ``identity`` apart from the one ``recorded`` (``run_identity``'s parts), a phrase each:
    the model's files or else its tasks (another model has other thresholds too), the first two inputs that differ
    (each with how: ``input_difference``), or that the same inputs come in another order, ``decoding`` (their
    ``decoding_difference``: that its pictures were decoded otherwise), and each other setting (by dotted name, its
    values as JSON); none where nothing of these differs."""
    differences = []
    if recorded.get("model") != identity["model"]:
        differences.append("the model's files differ")
    elif recorded.get("tasks") != identity["tasks"]:
        differences.append("the model's tasks, thresholds or calibration differ")
    before = {path: rest for path, *rest in recorded.get("inputs", [])}
    now = {path: rest for path, *rest in identity["inputs"]}
    if inputs := sorted(path for path in before.keys() | now.keys() if before.get(path) != now.get(path)):
        named = [input_difference(path, before.get(path), now.get(path)) for path in inputs[:2]]
        differences.append(f"the inputs differ: {', '.join(named)}{', ...' if len(inputs) > 2 else ''}")
    elif list(before) != list(now):  # the same files in another order: each shard names its file by its place
        differences.append("the inputs come in another order")
    before, now = recorded.get("settings", {}), identity["settings"]
    if decoding:
        differences.append(decoding)
        before, now = ({name: value for name, value in part.items() if name != DECODING} for part in (before, now))
    if settings := setting_differences(before, now):
        differences.append(f"settings differ: {', '.join(settings)}")
    return differences


def input_difference(path: str, recorded: list[int] | None, found: list[int] | None) -> str:
    """``path`` and how it differs between the inputs a run recorded and those found now, each ``[size, mtime_ns]``
    as ``run_identity`` records them (``None``: not among them): a file added to a dump's folder since, one gone from
    it, one grown or cut (its sizes), or one of the same size written to since (its modification time alone)."""
    if recorded is None:
        return f"{path} (not an input of the run: new since it began, or the dump named otherwise)"
    if found is None:
        return f"{path} (an input of the run, not found now: removed, or the dump named otherwise)"
    if recorded[0] != found[0]:
        return f"{path} ({recorded[0]} → {found[0]} bytes since the run began)"
    return f"{path} (modified since the run began: same size, another modification time)"


def decoding_difference(recorded: dict[str, Any], identity: dict[str, Any]) -> str | None:
    """That the run ``recorded`` decoded its pictures otherwise than the run ``identity``, which reads pictures, would
    (their settings' picture decoding, ``DECODING``, differ), naming both decodings and the faim that began the run
    where it is recorded; ``None`` where they match or ``identity`` reads no picture. A run recorded without a
    picture decoding was begun by a faim that recorded none (before the decoding was recorded, whose pictures may
    decode to other pixels: grey ones of more than 8 bits a sample were clipped before decoding 2), so its resume
    reading pictures is refused."""
    decoded, decoding = recorded.get("settings", {}).get(DECODING), identity["settings"].get(DECODING)
    if decoding is None or decoded == decoding:
        return None
    if decoded is None:
        by = "an older faim, which recorded no picture decoding"
    else:
        began = begun_by(recorded)
        by = f"picture decoding {decoded}" + (f" of {began}" if began else "")
    return f"its pictures were decoded otherwise: by {by}, where this faim decodes by picture decoding {decoding}"


def setting_differences(recorded: dict[str, Any], settings: dict[str, Any], prefix: str = "") -> list[str]:
    """Each setting whose value differs, as ``name old → new`` (a dict of settings, such as the options, by each of
    its own; a setting one of them lacks as ``(not set)``)."""
    unset = object()
    differences = []
    for name in sorted(recorded.keys() | settings.keys()):
        old, new = recorded.get(name, unset), settings.get(name, unset)
        if isinstance(old, dict) and isinstance(new, dict):
            differences += setting_differences(old, new, f"{prefix}{name}.")
        elif old != new:
            shown = ["(not set)" if value is unset else json.dumps(value) for value in (old, new)]
            differences.append(f"{prefix}{name} {shown[0]} → {shown[1]}")
    return differences


def part_held(part: pq.ParquetFile) -> Held | None:
    """What the rows of a part hold, as its key-value metadata records it (``HELD_KEY``); ``None`` of a part written
    by a faim that did not record it."""
    recorded = (part.metadata.metadata or {}).get(HELD_KEY.encode())
    return Held.read(json.loads(recorded)) if recorded is not None else None


class Manifest:
    """Done shards of a run in ``out_dir``, whose shards' part files are in ``out_dir`` or, with ``per_post``
    (a run pooling by picture), in ``out_dir/_per_post``; see the module docstring for the files. ``finished`` says
    whether every shard of the run is done (``finish``), ``done`` what each done shard holds, ``input_names`` the
    names the run's rows give its inputs, as the run that began it recorded them (``INPUT_NAMES``; ``None`` of a run
    begun by a faim that recorded none, whose inputs are named as this run is given them)."""

    def __init__(
        self, out_dir: Path, identity: dict[str, Any], overwrite: bool = False, per_post: bool = False
    ) -> None:
        self.out_dir = out_dir
        resumed = check_resumable(out_dir, identity, overwrite)
        self.parts_dir = out_dir / PER_POST_DIR if per_post else out_dir
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        run_file = out_dir / RUN_FILE
        folders = {out_dir, out_dir / PER_POST_DIR}  # an overwritten run may have pooled or not
        if overwrite:
            parts = [part for folder in folders for part in folder.glob("part-*.parquet")]
            # the record last: an overwrite stopped midway leaves the earlier run's, which no other run resumes, not
            # parts of no record, which a run into the folder would take for its own
            for path in [out_dir / FINISHED_FILE, *parts, out_dir / MANIFEST_FILE, run_file]:
                path.unlink(missing_ok=True)
            for folder in (folder for folder in folders if folder.is_dir()):  # gone before the new record is there
                sync_folder(folder)
        record, recorded = resumed or (json.dumps(identity, indent=1).encode("utf-8"), identity)
        if resumed is None:
            write_durably(run_file, record)
        self._run_digest = hashlib.sha256(record).hexdigest()  # what _finished.json records of the record
        self.input_names: list[str] | None = recorded.get(INPUT_NAMES)
        self.key_widths: tuple[int, int] = tuple(recorded.get(SHARD_KEYS, KEY_WIDTHS))
        for stale in [stale for folder in folders for stale in folder.glob(".part-*.tmp")]:
            stale.unlink()
        self.done: dict[str, ShardReport] = self._read()
        self._handle = open(out_dir / MANIFEST_FILE, "a", encoding="utf-8")
        sync_folder(out_dir)  # the names of the manifest, the run's record and the per-post folder, on the disk
        for report in self._recover():
            self.add(report)
        self.finished = self._finished()

    def _finished(self) -> bool:
        """Whether the run recorded its every shard done (``finish``) and the same shards are done now, their parts in
        place (a part deleted since is scored again), for the same run (a record left by another run in the folder,
        such as one an older faim overwrote without knowing the record, is not this run's)."""
        try:
            recorded = json.loads((self.out_dir / FINISHED_FILE).read_text(encoding="utf-8"))
        except (FileNotFoundError, UnicodeDecodeError, json.JSONDecodeError):
            return False
        return recorded == self._finish_record()

    def _finish_record(self) -> dict[str, Any]:
        """What ``_finished.json`` records of the run finished: the sha256 of its record (``_run.json``), how many
        shards are done and the sha256 of their keys."""
        keys = "\n".join(sorted(self.done)).encode("utf-8")
        return {"run": self._run_digest, "shards": len(self.done), "keys": hashlib.sha256(keys).hexdigest()}

    def finish(self) -> None:
        """Record that every shard of the run is done, once it has read its inputs to their end: a rerun then finds
        the run finished (``finished``) without reading them."""
        write_durably(self.out_dir / FINISHED_FILE, json.dumps(self._finish_record()).encode("utf-8"))
        self.finished = True

    def _read(self) -> dict[str, ShardReport]:
        path = self.out_dir / MANIFEST_FILE
        done: dict[str, ShardReport] = {}
        if not path.exists():
            return done
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:  # a line torn by a kill: its part is recovered below
                continue
            if (self.parts_dir / f"part-{entry['key']}.parquet").exists():
                held = Held.read(entry["held"]) if "held" in entry else None
                done[entry["key"]] = ShardReport(entry["key"], entry["rows"], Counter(entry["errors"]), held=held)
        return done

    def _recover(self) -> list[ShardReport]:
        """The reports of the parts the manifest does not record (a kill between a part's rename and its line), as
        their Parquet files say; such a part that cannot be read (cut short or empty, as where the system stopped
        before writing it to disk) is deleted, warning of it, so that its shard is scored again."""
        reports = []
        for part in sorted(self.parts_dir.glob("part-*.parquet")):
            key = part.name[len("part-") : -len(".parquet")]
            if key in self.done:
                continue
            try:
                parquet = pq.ParquetFile(part)
                kinds = parquet.read(columns=["error_kind"]).column("error_kind")
            except ARROW_READ_ERRORS as error:
                warn(f"{part}: a part no finished shard records cannot be read ({one_line(error)}): deleted, so its "
                     "shard is scored again")  # fmt: skip
                part.unlink()
                continue
            counts = Counter({c["values"]: c["counts"] for c in pc.value_counts(pc.drop_null(kinds)).to_pylist()})
            reports.append(ShardReport(key, parquet.metadata.num_rows, counts, held=part_held(parquet)))
        return reports

    def add(self, report: ShardReport) -> None:
        """Record a finished shard (its part file is already in place), with what its rows hold where that is known."""
        self.done[report.key] = report
        entry = {"key": report.key, "rows": report.rows, "errors": dict(report.errors)}
        if report.held is not None:
            entry["held"] = report.held.record()
        self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def close(self) -> None:
        self._handle.close()
