"""Folders faim writes into: refusing a path that is a file, and replacing a folder faim wrote (a model, an export)
with one freshly written beside it, and never a folder it did not write; a file written whole or not at all."""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import stat
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from faim.artifact_manifest import EXPORT_MANIFEST, MANIFEST, WEIGHTS
from faim.file_digests import portable
from faim.notices import warn

WRITTEN = "written.json"
"""The record a faim command keeps in a folder it writes a report into (``faim eval``'s, ``faim calibrate``'s) of the
files the last run wrote there (``faim.eval.report.replace_written``), naming the command under ``"writer"``."""
LISTING = "faim-explanations.json"
"""The file a folder of explanations (``faim explain``'s, ``faim.explain.report``) holds last: its posts in input
order, each with its explanation's file or, for one that could not be read, its ``error`` and ``error_kind``."""
RUN_RECIPE = "recipe.yaml"
"""The recipe a training run (``faim train``) writes first into its output folder, in ``checkpoints/version_N/``
beside the checkpoints it saves (``faim.training.run_recipe``), before it logs or trains: its folder says a run is
there from its start, though a run stopped part way writes no record (``train_record.json``)."""
RUN_RECIPES = re.compile(rf"checkpoints/version_\d+/{re.escape(RUN_RECIPE)}")

NAME_BYTES = 255
"""The most bytes of UTF-8 a file's name may take (ext4's and APFS's limit; NTFS counts as many UTF-16 units at most,
each character taking as many bytes or more)."""

Key = TypeVar("Key", bound=Hashable)


def check_folder_path(path: Path) -> None:
    """Refuse a folder to write into (``path``, made if absent) that is a file or lies inside one, or inside a link to
    nothing, through which making it would make the folders the link names.

    Raises:
        NotADirectoryError: Naming the file or the link, and ``path`` where that lies inside a file.
    """
    for folder in (path, *path.parents):
        if folder.is_dir():
            return
        if folder.is_symlink() and not folder.exists():
            raise NotADirectoryError(
                f"{folder}: is a link to {os.readlink(folder)}, which is not there (a volume not mounted?); name a "
                "folder to write into"
            )
        if folder.exists():
            inside = "" if folder == path else f" (it would hold {path})"
            raise NotADirectoryError(f"{folder}: is a file, not a folder{inside}; name a folder to write into")


def as_named(target: Path) -> Path:
    """``target`` as written where it has a name of its own, so that a folder named after it beside it is named as the
    user wrote it (a relative path stays relative); ``.``, ``..`` and ``out/..``, which have none, as ``named_folder``
    reads them."""
    return named_folder(target) if target.name in ("", "..") else target


def named_folder(target: Path) -> Path:
    """``target`` as the absolute path of the folder it names, its ``.`` and ``..`` read as the file system reads
    them, after the links before them (``latest/..`` where ``latest`` is a link is the folder holding what it points
    to): a target written ``.``, ``..`` or ``out/..`` has, so read, the parent it really has, so that the folder made
    beside it (``staging_folder``) never lies inside it, and the folder ``check_replaceable`` checked is the one
    ``replace_folder`` removes. A target that is itself a link stays the link (in the folder its parent names), which
    ``check_replaceable`` refuses, never what it points to."""
    target = Path(target)
    if target.is_symlink():
        return Path(os.path.realpath(target.parent)) / target.name
    return Path(os.path.realpath(target))


def staging_folder(target: Path, prefix: str) -> Path:
    """A new empty folder beside ``target`` to write into before ``replace_folder`` puts it in its place, with the
    permissions a folder made by ``mkdir`` gets under the process's umask (``tempfile`` makes it readable by its
    owner alone, and a model or export is read by other users: a service, a scoring job), named for ``target``, this
    process table and this process (``staging_stem``), then at random. The folders of ``target`` that processes killed
    part way left are removed first, and the folder before put back in place where one was killed as it replaced it
    (``clear_stale``); those made in another process table (``foreign_staging``) are warned of and kept."""
    target = named_folder(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    clear_stale(target, prefix)
    for other in foreign_staging(target, prefix):
        warn(
            f"{other} was left beside {target} by a faim writing it on another machine, in another container or "
            f"before a restart, which this process cannot tell is still running; remove it if no faim is writing "
            f"{target} now"
        )
    while True:
        staging = staging_name(target, prefix)
        try:
            staging.mkdir()  # the umask applies, as to any folder made
            return staging
        except FileExistsError:
            continue


def clear_stale(target: Path, prefix: str) -> None:
    """Remove, each with a warning, the folders beside ``target`` that processes killed part way writing it left
    (``stale_staging``); one holding what ``target`` held before (``aside_prefix``) is put back in its place where
    ``target`` is not there (the process was killed between the two renames of ``replace_folder``), and removed where
    it is (killed as it removed it)."""
    for aside, pid in stale_staging(target, aside_prefix(prefix)):
        if target.exists() or target.is_symlink():
            remove_stale(aside, f"what {target} held before it was replaced, left by process {pid}")
        else:
            try:
                aside.rename(target)
            except FileNotFoundError:  # another write put it back meanwhile
                continue
            warn(
                f"restored {target} from {aside}, where process {pid} moved it aside to replace it and was stopped "
                "before the new one took its place"
            )
    for stale, pid in stale_staging(target, prefix):
        remove_stale(stale, f"left unfinished by process {pid}, stopped part way writing {target}")


def remove_stale(folder: Path, left: str) -> None:
    """Remove ``folder`` and all it holds, warning that it was (or could not be) removed, and what it is (``left``)."""
    shutil.rmtree(folder, ignore_errors=True)
    done = "could not remove" if folder.exists() else "removed"
    warn(f"{done} {folder}, {left}")


def aside_prefix(prefix: str) -> str:
    """How the names of the folders ``replace_folder`` moves a target aside into start, where those it writes the
    target in start with ``prefix``: told apart from them, as what they hold is the target before, not part of it."""
    return f"{prefix}aside-"


def staging_name(target: Path, prefix: str) -> Path:
    """A path beside ``target`` (resolved: ``named_folder``) named as ``staging_folder`` names the folders it makes:
    ``staging_stem``, this process's id, a dot and 16 random hex digits; a folder there that this process leaves (it
    is killed, or stopped) is removed, or put back in place, by the next ``staging_folder`` for ``target``
    (``clear_stale``)."""
    return target.parent / f"{staging_stem(target, prefix)}{os.getpid()}.{secrets.token_hex(8)}"


def staging_stem(target: Path, prefix: str) -> str:
    """How the names of the folders ``staging_folder`` makes for ``target`` in this process table start: ``prefix``,
    then digests of the target's name and of ``process_table()``, each followed by a dot (the process's id, a dot and
    16 random hex digits end them)."""
    return f"{prefix}{digest(target.name)}.{digest(process_table())}."


PROCESS_TABLE_FILES = ("/proc/sys/kernel/random/boot_id", "/proc/self/ns/pid")
"""What tells one process table apart from another on Linux besides the machine's name: the boot, and the PID
namespace (containers sharing the machine's name and a folder each have their own process ids)."""


def process_table() -> str:
    """What the process ids of this process table mean in: the machine's name, with, where the system tells them
    (``PROCESS_TABLE_FILES``), its boot and PID namespace; so a process id found in a folder's name is looked up only
    in the table that gave it (a folder a machine left before it restarted stays, as one of another machine does)."""
    parts = [socket.gethostname()]
    for path in PROCESS_TABLE_FILES:
        try:
            parts.append(os.readlink(path) if Path(path).is_symlink() else Path(path).read_text().strip())
        except OSError:
            continue
    return "\n".join(parts)


def digest(name: str) -> str:
    """The first 8 hex digits of the sha256 of ``name``."""
    return hashlib.sha256(name.encode()).hexdigest()[:8]


def staging_left(target: Path, prefix: str) -> list[tuple[Path, str, int]]:
    """The folders beside ``target`` that ``staging_folder`` made for it, with ``prefix``, or ``replace_folder`` moved
    it aside into, with ``aside_prefix`` of it (by their names, as ``staging_stem`` begins them; not links), each with
    the digest of the process table that made it and the id of the process that did."""
    name = re.compile(rf"{re.escape(prefix + digest(target.name))}\.([0-9a-f]{{8}})\.(\d+)\.[0-9a-f]{{16}}")
    return [
        (path, match[1], int(match[2]))
        for path in sorted(target.parent.iterdir())
        if (match := name.fullmatch(path.name)) and path.is_dir() and not path.is_symlink()
    ]


STOPPED_REMOVING: set[Path] = set()
"""The folders this process moved a target aside into (``replace_folder``), under either name they had, and was
stopped (Ctrl-C) before it removed them, once the new folder took the target's place, and those it wrote or worked
towards a target in (``replacing``, ``working_folder``) and was stopped as it removed them: stale though the process
that made them runs, so that the next write of their target from this process (a notebook, a service) removes them,
as the next from another does once this one ends."""


def stale_staging(target: Path, prefix: str) -> list[tuple[Path, int]]:
    """The folders of ``staging_left`` made in this process table (``process_table``) by a process no longer running
    (killed part way: ``kill -9``, the out-of-memory killer), or by this one, stopped before it removed them
    (``STOPPED_REMOVING``), with that process's id. Nothing else is one: not a folder another target's, another
    machine's, container's or boot's, or a running process's, nor one named otherwise (those of faim versions that
    named them at random alone), nor a link."""
    table = digest(process_table())
    return [
        (path, pid)
        for path, made_in, pid in staging_left(target, prefix)
        if made_in == table and (not running(pid) or path in STOPPED_REMOVING)
    ]


def foreign_staging(target: Path, prefix: str) -> list[Path]:
    """The folders of ``staging_left`` made in another process table (another machine, container or boot,
    ``process_table``), where whether the process that made them still runs cannot be told: a write from there may be
    going on, or one killed before a restart left it."""
    table = digest(process_table())
    return [path for path, made_in, _ in staging_left(target, prefix) if made_in != table]


def running(pid: int) -> bool:
    """Whether the process ``pid`` runs in this process table; true where that cannot be told (Windows, where signal 0
    would stop it; a process of another user; an id no process can have)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # PermissionError: another user's; an id out of range
        return True
    return True


@contextmanager
def working_folder(target: Path, prefix: str) -> Iterator[Path]:
    """Yield a new folder beside ``target`` (``staging_folder``) to work towards it in, removed afterwards whatever
    happens: by the next ``staging_folder`` for ``target`` where this process is killed, or stopped (Ctrl-C) as it
    removes it (``STOPPED_REMOVING``), which a warning naming the folder says (the stop goes on as it came)."""
    folder = staging_folder(target, prefix)
    try:
        yield folder
    finally:
        try:
            shutil.rmtree(folder, ignore_errors=True)
        except KeyboardInterrupt:
            STOPPED_REMOVING.add(folder)
            with suppress(Warning):  # warnings taken as errors (-W error) must not take the stop's place
                warn(
                    f"stopped as it removed {folder}, where {target} was worked out: what is left of it is removed by "
                    f"the next write of {target}"
                )
            raise


@contextmanager
def writing_towards(target: Path) -> Iterator[None]:
    """Run the work that ends writing ``target`` (``replacing``): stopped (Ctrl-C) before that write began, it says
    that nothing was written and ``target`` is left as it was, as the write says what it left once it began.

    Raises:
        KeyboardInterrupt: When stopped, saying what ``target`` holds.
    """
    try:
        yield
    except KeyboardInterrupt as error:
        if error.args:  # what the write of target left, which replacing says
            raise
        raise KeyboardInterrupt(f"nothing was written: {target} is left as it was") from error


@contextmanager
def replacing(target: Path, prefix: str) -> Iterator[Path]:
    """Yield a new folder beside ``target`` to write into (``staging_folder``); on success it replaces ``target``
    (``replace_folder``: check first that it may, ``check_replaceable``); on an error before it took that place, or
    as it was to take it, it is removed and ``target`` is left as it was.

    Raises:
        KeyboardInterrupt: When stopped (Ctrl-C), saying what the write of ``target`` left, for every writer alike:
            before the new folder took its place, that nothing was written (whatever a write within said of its own
            folder), and, stopped as it removed the new folder, what is left of it, removed by the next write of
            ``target`` (``STOPPED_REMOVING``); once it took its place, that ``target`` is written whole
            (``replace_folder``).
    """
    staging = staging_folder(target, prefix)
    try:
        yield staging
        replace_folder(staging, target, prefix)
    except BaseException as error:
        if not staging.exists():  # in the place of target
            if isinstance(error, KeyboardInterrupt) and not error.args:  # stopped as replace_folder returned
                raise KeyboardInterrupt(f"{target} is written whole") from error
            raise
        try:
            shutil.rmtree(staging, ignore_errors=True)
        except KeyboardInterrupt as stop:
            STOPPED_REMOVING.add(staging)
            raise KeyboardInterrupt(
                f"nothing was written: {target} is left as it was; what was written of it, left beside it in part "
                f"({staging}), is removed by the next write of {target}"
            ) from stop
        if isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt(f"nothing was written: {target} is left as it was") from error
        raise


WINDOWS_DEVICES = re.compile(r"(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³])(\..*)?", re.IGNORECASE)
"""The names Windows keeps for its devices, in any case, alone or before an extension (``nul``, ``con.txt``): no
file or folder there takes one."""


def names_apart(bases: Mapping[Key, str], taken: Iterable[str] = (), limit: int = NAME_BYTES) -> dict[Key, str]:
    """A file name for each key of ``bases`` from its base name there: the base itself, and where an earlier key's
    name or one of ``taken`` is already that, or that in another case (``Hate`` beside ``hate``: one file where file
    names are told apart regardless of case, as on macOS and Windows), the base with a number after it
    (``hate-2``) that is no key's own base, so that the name of every key holding its base alone stays as it was
    whatever other keys there are beside it; names are compared as macOS compares them, regardless of how their
    accents are written too (``caf\u00e9`` beside ``cafe\u0301``; ``compared``). No name takes more than ``limit``
    bytes (UTF-8): a longer base is cut short, at a character, where its number too would not fit (``cut``)."""
    used = {compared(name) for name in taken}
    reserved = used | {compared(cut(base, limit)) for base in bases.values()}
    names: dict[Key, str] = {}
    for key, base in bases.items():
        name, number = cut(base, limit), 1
        while compared(name) in used or (number > 1 and compared(name) in reserved):
            number += 1
            name = cut(base, limit - len(f"-{number}")) + f"-{number}"
        names[key] = name
        used.add(compared(name))
    return names


def compared(name: str) -> str:
    """``name`` as a file system that tells names apart regardless of case and of how accents are written (macOS's;
    Windows's regardless of case) compares it: case folded, composed (NFC)."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def cut(name: str, limit: int) -> str:
    """``name`` cut short, at a character, to at most ``limit`` bytes of UTF-8."""
    return name.encode()[:limit].decode(errors="ignore")


def write_whole(path: Path, write: Callable[[Path], object]) -> None:
    """Write ``path`` with ``write``, given a file beside it to write that then takes its place, so that a write cut
    short (a full disk, a run stopped part way) leaves what ``path`` held before, never part of what is written. A
    symbolic link is written through, as ``open`` writes it: the file it names is replaced and the link stays, or,
    where that file lies in a folder the process may not write, it is written in place. The file keeps its mode and
    group, but for a group the process may not give it, whose permissions it then drops rather than give them to the
    process's own; a new one gets those ``open`` gives under the process's umask."""
    target = Path(os.path.realpath(path))
    if path.is_symlink() and not os.access(target.parent, os.W_OK):
        write(path)
        return
    tail = f".{secrets.token_hex(4)}.tmp"
    partial = target.with_name(f".{cut(target.name, NAME_BYTES - 1 - len(tail))}{tail}")  # a name as long as any
    try:
        write(partial)
        with suppress(FileNotFoundError):
            held = os.stat(target)
            mode = stat.S_IMODE(held.st_mode)
            if held.st_gid != os.stat(partial).st_gid:
                try:
                    os.chown(partial, -1, held.st_gid)
                except OSError:  # a group the process is not in, or a system without groups
                    mode &= ~0o070
            os.chmod(partial, mode)
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_text_whole(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` (UTF-8) whole, or leave what it held before (``write_whole``)."""
    write_whole(path, lambda partial: partial.write_text(text, encoding="utf-8"))


def replace_synced(partial: Path, final: Path) -> None:
    """Rename the written file ``partial`` to ``final`` once its bytes are on the disk (``os.fsync``): a file renamed
    into place before its bytes reach the disk may be found empty or cut short after a power loss. The rename reaches
    the disk with the caller's ``sync_folder`` of the folder, once for all the files it renames there, before anything
    records them."""
    with open(partial, "r+b") as handle:  # written to: Windows flushes only a file opened for writing
        os.fsync(handle.fileno())
    os.replace(partial, final)


def replace_durably(partial: Path, final: Path) -> None:
    """Rename the written file ``partial`` to ``final`` once its bytes are on the disk (``replace_synced``), and the
    rename after it (``sync_folder``), so that what records ``final`` after this call outlives a power loss with
    it."""
    replace_synced(partial, final)
    sync_folder(final.parent)


def write_durably(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through ``.NAME.tmp`` beside it, renamed into place once on the disk
    (``replace_durably``): ``path`` holds what it held before or ``data``, whole, whatever stops the write, a power
    loss too. For a file one process alone writes at a time (a scoring run's records, under its lock)."""
    partial = path.with_name(f".{path.name}.tmp")
    partial.write_bytes(data)
    replace_durably(partial, path)


def sync_folder(folder: Path) -> None:
    """Have the names made, renamed or removed in ``folder`` reach the disk (``os.fsync`` of the folder), where the
    system lets a folder be opened for it (not Windows, whose file system records a rename in its journal)."""
    if os.name == "nt":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def umask_permissions(path: Path) -> None:
    """Give the file ``path`` the permissions a file made by ``open`` beside it gets under the process's umask, where
    its writer made it readable by its owner alone (safetensors writes through a temporary file, as ``tempfile`` makes
    them; a model or export is read by other users)."""
    probe = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    probe.touch(exist_ok=False)  # the umask applies, as to any file made
    try:
        shutil.copymode(probe, path)
    finally:
        probe.unlink()


def check_replaceable(target: Path, manifest: str) -> None:
    """Refuse a ``target`` that ``replace_folder`` must not remove: anything there but an empty folder or a folder
    holding ``manifest`` (the file faim writes last into what it writes), and such a folder holding files besides those
    its manifest lists (``unlisted_files``), so that a mistyped output path, or a note or a run's output written into a
    model, never deletes a user's files. What is checked is the folder ``replace_folder`` removes (``named_folder``): a
    target spelt through a folder that is not there and ``..`` (``docs/typo/..``) is the folder holding it (``docs``),
    named beside the target in the refusal.

    Raises:
        NotADirectoryError: When ``target`` is a file or lies inside one (``check_folder_path``).
        FileExistsError: Naming ``target`` and ``manifest``, or the first files it does not list; or ``target`` as a
            link, or as the working directory or a folder holding it (``.``, ``..``), which replacing would remove from
            under the process.
    """
    check_folder_path(target)
    folder = named_folder(target)  # what replace_folder removes: missing/.. is the folder holding missing
    named = f"{target}" if Path(target).absolute() == folder else f"{target} ({folder})"
    if not folder.exists() and not folder.is_symlink():
        return
    if folder.is_symlink():
        raise FileExistsError(
            f"{named}: is a link, which faim does not replace (nor what it points to); nothing was written or "
            "removed, name the folder itself or a new directory"
        )
    if holds_working_directory(folder):
        raise FileExistsError(
            f"{named}: is the working directory or holds it, which replacing it would remove from under this "
            "process; nothing was written or removed, run from outside it or name another directory"
        )
    if folder.is_dir() and not any(folder.iterdir()):
        return
    if not (folder.is_dir() and (folder / manifest).is_file()):
        raise FileExistsError(
            f"{named}: exists and is not one faim wrote (no {manifest} in it); nothing was written or removed, "
            "name a new or empty directory"
        )
    if unlisted := unlisted_files(folder, manifest):
        more = f", and {len(unlisted) - 3} more" if len(unlisted) > 3 else ""
        raise FileExistsError(
            f"{named}: holds files its {manifest} does not list ({', '.join(unlisted[:3])}{more}); nothing was "
            "written or removed, move them out or name a new or empty directory"
        )


def unlisted_files(folder: Path, manifest: str) -> list[str]:
    """The files under ``folder`` (paths relative to it, ``/`` between parts, sorted) that its ``manifest`` does not
    list under ``"files"`` (a model's, an export's or an explanation report's lists every other file it wrote there),
    which replacing the folder would delete with it: a scoring run's output or a note written into it. Hidden files
    (``.DS_Store``, the ``._`` files macOS writes on shared drives) are passed over, as loading a model passes them
    over. None where the manifest lists no files (a report written before reports listed them) or cannot be read: a
    folder too damaged to say what it wrote is replaced as it is."""
    try:
        listed = {portable(name) for name in json.loads((folder / manifest).read_text(encoding="utf-8"))["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        return []
    found = (path.relative_to(folder) for path in sorted(folder.rglob("*")) if path.is_file())
    shown = (path.as_posix() for path in found if not any(part.startswith(".") for part in path.parts))
    return [name for name in shown if name not in listed and name != manifest]


def holds_working_directory(folder: Path) -> bool:
    """Whether the existing ``folder`` is this process's working directory or one of the folders above it (false
    where the working directory itself was removed)."""
    try:
        here = Path.cwd().resolve()
    except OSError:
        return False
    return here.is_relative_to(folder.resolve())


def replace_folder(staging: Path, target: Path, prefix: str) -> None:
    """Put the written folder ``staging`` in the place of ``target`` (see ``check_replaceable``): the folder there, if
    any, is renamed aside (``staging_name`` with ``aside_prefix(prefix)``), ``staging`` renamed in its place, and then
    the folder aside removed. ``target`` is thus never part of a folder, however the process stops: it is the folder
    there before, whole, or ``staging``, whole. Where ``staging`` cannot take its place (an error, Ctrl-C), the folder
    aside is put back; a process killed between the two renames leaves ``target`` not there until the next
    ``staging_folder`` for it puts the folder aside back (``clear_stale``). The folder aside is renamed as an
    unfinished one before it is removed, so a process killed or stopped as it removes it leaves what remains to that
    ``staging_folder`` to remove, never to put back; one stopped at any point after ``staging`` took the place of
    ``target`` leaves the folder aside to the next write of ``target``, from this process too (``STOPPED_REMOVING``).

    Raises:
        KeyboardInterrupt: When stopped (Ctrl-C) once ``staging`` took the place of ``target``, saying that
            ``target`` is written.
    """
    target = named_folder(target)
    if not target.exists():
        staging.rename(target)  # a Ctrl-C as it returns is said to have written target whole by replacing
        return
    aside = staging_name(target, aside_prefix(prefix))
    removed = staging_name(target, prefix)  # named as unfinished, so what a stop leaves of it is never put back
    try:
        target.rename(aside)  # inside: a Ctrl-C as this rename returns puts the folder back
        staging.rename(target)
        aside.rename(removed)
        shutil.rmtree(removed, ignore_errors=True)
    except BaseException as error:
        if staging.exists():  # staging is not in its place: the folder before goes back
            if not target.exists() and aside.exists():  # moved aside (not gone before the first rename)
                aside.rename(target)
            raise
        if not isinstance(error, KeyboardInterrupt):
            raise
        STOPPED_REMOVING.update((aside, removed))
        left = f"left beside it in part ({removed})" if removed.exists() else f"left beside it ({aside})"
        raise KeyboardInterrupt(
            f"{target} is written whole; what it held before, {left}, is removed by the next write of {target}"
        ) from error


def written_by_faim(folder: Path) -> str | None:
    """Who wrote ``folder``, where a faim command did, as the file it holds to say so shows, said as a walk of the
    folder holding it says why it passes it over (``"faim explain wrote it (its faim-explanations.json)"``): a saved
    model (its manifest beside its weights), an export (its manifest), explanations (``LISTING``), a training run's
    output folder (a run's recipe, ``RUN_RECIPES``), or a report of ``faim eval`` or ``faim calibrate`` (their
    record, ``WRITTEN``: a JSON object naming a ``faim`` command as its writer and listing files; a file of that name
    holding anything else does not say so). None for any other folder."""
    if (folder / MANIFEST).is_file() and (folder / WEIGHTS).is_file():
        return f"faim saved a model there (its {MANIFEST} beside {WEIGHTS})"
    if (folder / EXPORT_MANIFEST).is_file():
        return f"faim export wrote it (its {EXPORT_MANIFEST})"
    if (folder / LISTING).is_file():
        return f"faim explain wrote it (its {LISTING})"
    if recipe := run_recipe(folder):
        return f"faim train wrote it (its {recipe})"
    try:
        record = json.loads((folder / WRITTEN).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not (isinstance(record, dict) and isinstance(record.get("files"), list)):
        return None
    writer = str(record.get("writer"))
    return f"{writer} wrote it (its {WRITTEN})" if writer.startswith("faim ") else None


def run_recipe(folder: Path) -> str | None:
    """The first recipe a training run saved in ``folder`` as its output folder (``RUN_RECIPES``), as a path relative
    to it with ``/`` between parts; None where it holds none."""
    found = (path.relative_to(folder).as_posix() for path in sorted(folder.glob(f"checkpoints/*/{RUN_RECIPE}")))
    return next((name for name in found if RUN_RECIPES.fullmatch(name) and (folder / name).is_file()), None)
