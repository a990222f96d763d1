"""Replacing a folder faim wrote, and never one it did not nor a file; the folder written first is made as mkdir
would, and a file its writer made for its owner alone is given what open would."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import faim
from faim import folders
from faim.folders import (
    check_folder_path,
    check_replaceable,
    foreign_staging,
    process_table,
    replacing,
    staging_folder,
    staging_stem,
    stale_staging,
    umask_permissions,
    working_folder,
    write_text_whole,
    write_whole,
)
from faim.notices import FaimWarning

MANIFEST = "faim.json"


def stop_after_rename(monkeypatch: pytest.MonkeyPatch, when: Callable[[Path, Path], bool]) -> None:
    """Make a rename from ``source`` to ``to`` for which ``when(source, to)`` holds raise KeyboardInterrupt once it is
    done, as a Ctrl-C arriving as the rename returns does."""
    rename = Path.rename

    def stopped(self: Path, to: Path) -> Path:
        moved = rename(self, to)
        if when(Path(self), Path(to)):
            raise KeyboardInterrupt
        return moved

    monkeypatch.setattr(Path, "rename", stopped)


def test_a_folder_faim_did_not_write_is_refused_by_name(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(FileExistsError, match=rf"{mine}: exists and is not one faim wrote \(no faim.json"):
        check_replaceable(mine, MANIFEST)
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "keep"


def test_a_link_is_refused_as_a_link_even_to_a_folder_faim_wrote(tmp_path: Path) -> None:
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / MANIFEST).write_text("{}", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(ours)
    with pytest.raises(FileExistsError, match=rf"^{link}: is a link, which faim does not replace"):
        check_replaceable(link, MANIFEST)
    assert (ours / MANIFEST).read_text(encoding="utf-8") == "{}"


def test_a_file_or_a_folder_inside_one_is_refused_as_a_file_not_a_folder(tmp_path: Path) -> None:
    single = tmp_path / "scores.csv"
    single.write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match=rf"^{single}: is a file, not a folder; name a folder to write into"):
        check_replaceable(single, MANIFEST)
    inside = single / "model" / "new"
    with pytest.raises(NotADirectoryError, match=rf"^{single}: is a file, not a folder \(it would hold {inside}\)"):
        check_replaceable(inside, MANIFEST)
    assert single.read_text(encoding="utf-8") == "x"
    for folder in (tmp_path, tmp_path / "absent" / "new"):
        check_folder_path(folder)


def test_an_absent_or_empty_folder_or_one_holding_the_manifest_may_be_replaced(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / MANIFEST).write_text("{}", encoding="utf-8")
    for target in (tmp_path / "absent", tmp_path / "empty", ours):
        check_replaceable(target, MANIFEST)


def test_a_folder_holding_files_its_manifest_does_not_list_is_refused_naming_them_and_keeps_them(
    tmp_path: Path,
) -> None:
    ours = tmp_path / "ours"
    (ours / "weights").mkdir(parents=True)
    (ours / "weights" / "head.bin").write_bytes(b"w")
    (ours / MANIFEST).write_text(json.dumps({"files": {"weights/head.bin": "0" * 64}}), encoding="utf-8")
    (ours / ".DS_Store").write_bytes(b"\0")  # a system's hidden file is passed over
    check_replaceable(ours, MANIFEST)
    notes = ["NOTES.md", "a.txt", "scores/part-0.parquet", "weights/mine.bin"]
    for name in notes:
        (ours / name).parent.mkdir(exist_ok=True)
        (ours / name).write_text("keep", encoding="utf-8")
    refusal = (
        f"{ours}: holds files its faim.json does not list (NOTES.md, a.txt, scores/part-0.parquet, and 1 more); "
        "nothing was written or removed, move them out or name a new or empty directory"
    )
    with pytest.raises(FileExistsError, match=f"^{re.escape(refusal)}$"):
        check_replaceable(ours, MANIFEST)
    assert all((ours / name).read_text(encoding="utf-8") == "keep" for name in notes)
    (ours / MANIFEST).write_text("{", encoding="utf-8")  # too damaged to say what it wrote: replaced as it is
    check_replaceable(ours, MANIFEST)


def test_a_model_saved_over_one_holding_a_users_file_is_refused_and_the_file_kept(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "model"
    shutil.copytree(tiny_model_dir, target)
    (target / "NOTES.md").write_text("keep", encoding="utf-8")
    detector = faim.load(tiny_model_dir)
    with pytest.raises(FileExistsError, match=r"holds files its faim.json does not list \(NOTES.md\)"):
        detector.save(target)
    assert (target / "NOTES.md").read_text(encoding="utf-8") == "keep"
    (target / "NOTES.md").unlink()
    assert detector.save(target) == target


def test_the_working_directory_or_a_folder_holding_it_is_refused_and_nothing_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = tmp_path / "ours"
    (ours / "inner").mkdir(parents=True)
    (ours / MANIFEST).write_text("{}", encoding="utf-8")
    monkeypatch.chdir(ours / "inner")
    for target in (Path(".."), ours, Path("."), Path("")):
        with pytest.raises(FileExistsError, match="is the working directory or holds it"):
            check_replaceable(target, MANIFEST)
    assert (ours / MANIFEST).read_text(encoding="utf-8") == "{}"


def test_a_folder_named_through_dot_dot_is_replaced_by_one_made_beside_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours = tmp_path / "ours"
    (ours / "inner").mkdir(parents=True)
    (ours / MANIFEST).write_text("old", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with replacing(Path("ours/inner/.."), ".faim-") as staging:
        assert staging.parent == tmp_path
        (staging / MANIFEST).write_text("new", encoding="utf-8")
    assert (ours / MANIFEST).read_text(encoding="utf-8") == "new"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["ours"]


@pytest.mark.parametrize("before", ["old", None])
def test_a_write_stopped_before_the_new_folder_took_the_place_of_the_target_says_nothing_was_written(
    before: str | None, tmp_path: Path
) -> None:
    target = tmp_path / "report"
    if before is not None:
        target.mkdir()
        (target / MANIFEST).write_text(before, encoding="utf-8")
    with pytest.raises(KeyboardInterrupt, match=rf"^nothing was written: {re.escape(str(target))} is left as it was$"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            with replacing(staging / "part", ".faim-"):  # a folder written within, stopped as it is
                raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == ([target] if before else [])
    assert before is None or (target / MANIFEST).read_text(encoding="utf-8") == before


def test_a_write_stopped_as_the_folder_before_is_moved_aside_puts_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report"
    target.mkdir()
    (target / MANIFEST).write_text("old", encoding="utf-8")

    with pytest.raises(KeyboardInterrupt, match=rf"^nothing was written: {re.escape(str(target))} is left as it was$"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            stop_after_rename(monkeypatch, lambda source, to: source == target)  # as the folder before is moved aside
    monkeypatch.undo()
    assert [path.name for path in tmp_path.iterdir()] == ["report"]
    assert (target / MANIFEST).read_text(encoding="utf-8") == "old"


def test_a_write_stopped_as_the_new_folder_takes_an_empty_place_says_it_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report"

    with pytest.raises(KeyboardInterrupt, match=rf"^{re.escape(str(target))} is written whole$"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            stop_after_rename(monkeypatch, lambda source, to: to == target)  # as it takes the place none held
    monkeypatch.undo()
    assert (target / MANIFEST).read_text(encoding="utf-8") == "new"


def test_a_write_stopped_as_the_replace_returns_says_it_is_written_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report"
    replace = folders.replace_folder

    def stopped_as_it_returns(*args: Any) -> None:
        replace(*args)
        raise KeyboardInterrupt

    monkeypatch.setattr(folders, "replace_folder", stopped_as_it_returns)
    with pytest.raises(KeyboardInterrupt, match=rf"^{re.escape(str(target))} is written whole$"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
    assert (target / MANIFEST).read_text(encoding="utf-8") == "new"


def test_a_folder_gone_before_it_is_moved_aside_is_named_as_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report"
    target.mkdir()
    rename = Path.rename

    def removed_first(self: Path, to: Path) -> Path:
        if self == target:
            target.rmdir()  # another process took it away
        return rename(self, to)

    monkeypatch.setattr(Path, "rename", removed_first)
    with pytest.raises(FileNotFoundError) as error:
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
    assert error.value.filename == str(target)
    assert list(tmp_path.iterdir()) == []


def test_a_folder_replaced_is_never_left_in_part_when_stopped_as_the_one_before_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "export"
    target.mkdir()
    for name in (MANIFEST, "graph.onnx"):
        (target / name).write_text("old", encoding="utf-8")

    def stopped_part_way(path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "graph.onnx").unlink()
        raise KeyboardInterrupt  # Ctrl-C with one file of the folder removed

    with pytest.raises(KeyboardInterrupt, match=rf"^{re.escape(str(target))} is written whole; what it held before"):
        with replacing(target, ".faim-") as staging:
            for name in (MANIFEST, "graph.onnx"):
                (staging / name).write_text("new", encoding="utf-8")
            monkeypatch.setattr(folders.shutil, "rmtree", stopped_part_way)
    monkeypatch.undo()
    assert {path.name: path.read_text(encoding="utf-8") for path in target.iterdir()} == {
        MANIFEST: "new",
        "graph.onnx": "new",
    }


def test_what_a_folder_held_before_left_in_part_when_stopped_is_removed_by_the_next_write_from_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model"
    target.mkdir()
    for name in (MANIFEST, "weights"):
        (target / name).write_text("old", encoding="utf-8")

    def stopped(path: Path, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C as the folder moved aside is removed

    with pytest.raises(KeyboardInterrupt, match="is removed by the next write of"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            monkeypatch.setattr(folders.shutil, "rmtree", stopped)
    monkeypatch.undo()
    (aside,) = set(tmp_path.iterdir()) - {target}
    with pytest.warns(FaimWarning, match=rf"^removed {re.escape(str(aside))}, left unfinished by process \d+, stop"):
        with replacing(target, ".faim-") as staging:  # this process, a notebook, writes the same model again
            (staging / MANIFEST).write_text("newer", encoding="utf-8")
    assert list(tmp_path.iterdir()) == [target] and (target / MANIFEST).read_text(encoding="utf-8") == "newer"


def test_what_a_folder_held_before_is_removed_by_the_next_write_from_the_same_process_when_stopped_once_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / MANIFEST).write_text("old", encoding="utf-8")

    with pytest.raises(KeyboardInterrupt, match=rf"^{re.escape(str(target))} is written whole; what it held before"):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            stop_after_rename(monkeypatch, lambda source, to: to == target)  # as the new folder took its place
    monkeypatch.undo()
    (aside,) = set(tmp_path.iterdir()) - {target}
    assert (aside / MANIFEST).read_text(encoding="utf-8") == "old"  # whole, beside the new one
    with pytest.warns(FaimWarning, match=rf"^removed {re.escape(str(aside))}, what {re.escape(str(target))} held"):
        with replacing(target, ".faim-") as staging:  # this process, a notebook, writes the same model again
            (staging / MANIFEST).write_text("newer", encoding="utf-8")
    assert list(tmp_path.iterdir()) == [target] and (target / MANIFEST).read_text(encoding="utf-8") == "newer"


def test_a_working_folder_stopped_as_it_is_removed_is_named_and_removed_by_the_next_write_from_the_same_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "export"
    rmtree = shutil.rmtree

    def stopped(path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "graph.onnx").unlink()
        raise KeyboardInterrupt  # Ctrl-C part way removing the working folder

    with pytest.raises(KeyboardInterrupt), pytest.warns(FaimWarning) as said:
        with working_folder(target, ".faim-") as folder:
            for name in ("graph.onnx", "weights"):
                (folder / name).write_text("work", encoding="utf-8")
            monkeypatch.setattr(folders.shutil, "rmtree", stopped)
    monkeypatch.setattr(folders.shutil, "rmtree", rmtree)
    assert [str(warning.message) for warning in said] == [
        f"stopped as it removed {folder}, where {target} was worked out: what is left of it is removed by the next "
        f"write of {target}"
    ]
    with pytest.warns(FaimWarning, match=rf"^removed {re.escape(str(folder))}, left unfinished by process \d+, stop"):
        with replacing(target, ".faim-") as staging:  # this process, a notebook, writes the same target again
            (staging / MANIFEST).write_text("new", encoding="utf-8")
    assert list(tmp_path.iterdir()) == [target]


@pytest.mark.parametrize("error", [KeyboardInterrupt(), ValueError("a post that cannot be written")])
def test_a_write_stopped_as_its_new_folder_is_removed_names_what_is_left_which_the_next_write_from_the_process_removes(
    error: BaseException, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report"
    target.mkdir()
    (target / MANIFEST).write_text("old", encoding="utf-8")
    rmtree = shutil.rmtree

    def stopped(path: Path, *args: object, **kwargs: object) -> None:
        (Path(path) / "page.html").unlink()
        raise KeyboardInterrupt  # Ctrl-C part way removing the new folder

    with pytest.raises(KeyboardInterrupt) as stop:
        with replacing(target, ".faim-") as staging:
            for name in (MANIFEST, "page.html"):
                (staging / name).write_text("new", encoding="utf-8")
            monkeypatch.setattr(folders.shutil, "rmtree", stopped)
            raise error
    monkeypatch.setattr(folders.shutil, "rmtree", rmtree)
    assert str(stop.value) == (
        f"nothing was written: {target} is left as it was; what was written of it, left beside it in part ({staging}), "
        f"is removed by the next write of {target}"
    )
    assert (target / MANIFEST).read_text(encoding="utf-8") == "old"
    with pytest.warns(FaimWarning, match=rf"^removed {re.escape(str(staging))}, left unfinished by process \d+, stop"):
        with replacing(target, ".faim-") as again:  # this process, a notebook, writes the same target again
            (again / MANIFEST).write_text("newer", encoding="utf-8")
    assert list(tmp_path.iterdir()) == [target] and (target / MANIFEST).read_text(encoding="utf-8") == "newer"


def test_a_folder_named_through_a_link_and_dot_dot_is_the_one_checked_and_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    exports = tmp_path / "elsewhere" / "exports"
    (exports / "v1").mkdir(parents=True)
    (exports / MANIFEST).write_text("old", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text("keep me", encoding="utf-8")
    (project / "latest").symlink_to(exports / "v1")
    monkeypatch.chdir(project)
    with replacing(Path("latest/.."), ".faim-") as staging:  # the folder holding v1, as the file system reads it
        assert staging.parent == exports.parent
        (staging / MANIFEST).write_text("new", encoding="utf-8")
    assert (exports / MANIFEST).read_text(encoding="utf-8") == "new"
    assert sorted(path.name for path in project.iterdir()) == ["latest", "train.py"]  # the one spelt before ..


def test_a_folder_spelt_through_one_not_there_and_dot_dot_is_checked_as_the_folder_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "thesis.tex").write_text("years of work", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileExistsError, match=rf"^docs/typo/\.\. \({re.escape(str(docs))}\): exists and is not one"):
        check_replaceable(Path("docs/typo/.."), MANIFEST)
    with pytest.raises(FileExistsError, match="is the working directory or holds it"):
        check_replaceable(Path("missing/.."), MANIFEST)
    assert (docs / "thesis.tex").read_text(encoding="utf-8") == "years of work"


def test_a_folder_inside_a_link_to_nothing_is_refused_and_nothing_is_made(tmp_path: Path) -> None:
    (tmp_path / "models").symlink_to(tmp_path / "unmounted" / "volume")
    with pytest.raises(NotADirectoryError, match=r"models: is a link to .*volume, which is not there"):
        check_replaceable(tmp_path / "models" / "m1", MANIFEST)
    assert not (tmp_path / "unmounted").exists()


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_staging_folder_has_the_permissions_the_umask_gives_a_new_folder(umask: int, tmp_path: Path) -> None:
    before = os.umask(umask)
    try:
        staging = staging_folder(tmp_path / "model", ".faim-")
    finally:
        os.umask(before)
    assert staging.parent == tmp_path and staging.name.startswith(".faim-") and not any(staging.iterdir())
    assert stat.S_IMODE(staging.stat().st_mode) == 0o777 & ~umask


@pytest.mark.parametrize("umask", [0o022, 0o002])
def test_a_file_made_for_its_owner_alone_gets_the_permissions_the_umask_gives_a_new_file(
    umask: int, tmp_path: Path
) -> None:
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"weights")
    weights.chmod(0o600)
    before = os.umask(umask)
    try:
        umask_permissions(weights)
    finally:
        os.umask(before)
    assert stat.S_IMODE(weights.stat().st_mode) == 0o666 & ~umask
    assert [path.name for path in tmp_path.iterdir()] == ["model.safetensors"]


def test_a_text_file_is_written_whole_or_left_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "results.json"
    before = os.umask(0o022)
    try:
        write_text_whole(path, "first\n")
    finally:
        os.umask(before)
    assert path.read_text(encoding="utf-8") == "first\n" and stat.S_IMODE(path.stat().st_mode) == 0o644

    def cut_short(self: Path, text: str, *args, **kwargs) -> int:
        with open(self, "w", encoding="utf-8") as handle:
            handle.write(text[:3])
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", cut_short)
    with pytest.raises(KeyboardInterrupt):
        write_text_whole(path, "second\n")
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == "first\n" and [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_a_text_file_written_whole_keeps_its_mode_and_a_link_to_it_writes_its_target(tmp_path: Path) -> None:
    shared = tmp_path / "shared" / "latest.json"
    shared.parent.mkdir()
    shared.write_text("{}", encoding="utf-8")
    shared.chmod(0o640)
    link = tmp_path / "metrics.json"
    link.symlink_to(Path("shared") / "latest.json")  # a report's file kept elsewhere, shared with others
    write_text_whole(link, "first\n")
    assert link.is_symlink() and shared.read_text(encoding="utf-8") == "first\n"
    assert stat.S_IMODE(shared.stat().st_mode) == 0o640
    assert sorted(p.name for p in shared.parent.iterdir()) == ["latest.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.json", "shared"]
    plain = tmp_path / "metrics.md"
    plain.write_text("", encoding="utf-8")
    plain.chmod(0o600)
    write_text_whole(plain, "second\n")
    assert plain.read_text(encoding="utf-8") == "second\n" and stat.S_IMODE(plain.stat().st_mode) == 0o600


def test_a_file_written_whole_keeps_its_group_and_a_link_into_a_folder_not_writable_is_written_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared" / "latest.json"
    shared.parent.mkdir()
    shared.write_text("{}", encoding="utf-8")
    link = tmp_path / "metrics.json"
    link.symlink_to(shared)

    def stopped(partial: Path) -> None:  # a full disk part way through
        partial.write_text("par", encoding="utf-8")
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_whole(link, stopped)
    assert shared.read_text(encoding="utf-8") == "{}"  # a link whose file the process may replace: whole
    inode = shared.stat().st_ino
    with monkeypatch.context() as patched:  # the folder of the file it names not the process's to write
        patched.setattr(os, "access", lambda folder, mode: Path(folder) != shared.parent)
        write_text_whole(link, "first\n")
    assert shared.read_text(encoding="utf-8") == "first\n" and shared.stat().st_ino == inode  # no file beside it
    plain = tmp_path / "metrics.md"
    plain.write_text("", encoding="utf-8")
    plain.chmod(0o640)
    real_stat = os.stat
    team = SimpleNamespace(st_mode=real_stat(plain).st_mode, st_gid=real_stat(plain).st_gid + 1)

    def refused(*_: object) -> None:
        raise PermissionError("not a member of the group")

    with monkeypatch.context() as patched:  # of a team's group the process may not give: kept from its own
        patched.setattr(os, "chown", refused)
        patched.setattr(os, "stat", lambda path, *a, **k: team if Path(path) == plain else real_stat(path, *a, **k))
        write_text_whole(plain, "second\n")
    assert stat.S_IMODE(plain.stat().st_mode) == 0o600
    others = [group for group in os.getgroups() if group != os.getegid()] or ([1] if os.geteuid() == 0 else [])
    if not others:
        pytest.skip("the process is in no group but its own")
    os.chown(plain, -1, others[0])  # shared with a team, its members reading it by its group
    plain.chmod(0o640)
    write_text_whole(plain, "third\n")
    assert (plain.stat().st_gid, stat.S_IMODE(plain.stat().st_mode)) == (others[0], 0o640)


def test_only_a_folder_a_process_no_longer_running_made_for_the_same_target_is_stale(tmp_path: Path) -> None:
    target = tmp_path / "model"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = int(gone.stdout)
    stem = staging_stem(target, ".faim-")
    stale = tmp_path / f"{stem}{dead}.{'a' * 16}"
    kept = [
        staging_folder(target, ".faim-"),  # this process's
        tmp_path / f"{staging_stem(tmp_path / 'other', '.faim-')}{dead}.{'a' * 16}",  # another target's
        tmp_path / f"{staging_stem(target, '.faim-explain-')}{dead}.{'a' * 16}",  # another kind's
        tmp_path / f".faim-{'b' * 16}",  # an earlier version's, named at random
        tmp_path / f"{stem}{dead}.{'a' * 16}.mine",  # a user's
    ]
    for folder in [stale, *kept]:
        folder.mkdir(exist_ok=True)
    (tmp_path / f"{stem}{dead}.{'c' * 16}").symlink_to(tmp_path / f".faim-{'b' * 16}")
    assert stale_staging(target, ".faim-") == [(stale, dead)]


def test_a_folder_of_another_process_table_is_warned_of_and_kept_and_an_impossible_process_is_read_as_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model"
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    boot, namespace = tmp_path / "boot_id", tmp_path / "pid_namespace"
    boot.write_text("first boot\n")
    namespace.symlink_to("pid:[1]")
    monkeypatch.setattr(folders, "PROCESS_TABLE_FILES", (str(boot), str(namespace)))
    assert process_table().splitlines()[1:] == ["first boot", "pid:[1]"]
    before = tmp_path / f"{staging_stem(target, '.faim-')}{int(gone.stdout)}.{'a' * 16}"  # before a restart
    before.mkdir()
    boot.write_text("second boot\n")
    impossible = tmp_path / f"{staging_stem(target, '.faim-')}{10**30}.{'a' * 16}"
    impossible.mkdir()
    assert staging_stem(target, ".faim-") not in before.name
    assert stale_staging(target, ".faim-") == [] and foreign_staging(target, ".faim-") == [before]
    namespace.unlink()
    namespace.symlink_to("pid:[2]")  # another container sharing the machine's name
    assert set(foreign_staging(target, ".faim-")) == {before, impossible}
    with pytest.warns(FaimWarning, match=rf"{before} was left beside {target} by a faim writing it on another machine"):
        staging_folder(target, ".faim-")
    assert before.is_dir() and impossible.is_dir()


KILLED_BETWEEN_RENAMES = """
import os, sys
from pathlib import Path
from types import SimpleNamespace
from faim.folders import replace_folder, staging_folder
target = Path(sys.argv[1])
staging = staging_folder(target, ".faim-")
(staging / "faim.json").write_text("new", encoding="utf-8")
rename = Path.rename
def killed_once_moved_aside(self, destination):
    moved = rename(self, destination)
    if self == target:
        os._exit(137)  # kill -9 once the folder before is moved aside, before the new one takes its place
    return moved
Path.rename = killed_once_moved_aside
replace_folder(staging, target, ".faim-")
"""


def test_a_folder_a_process_killed_between_the_two_renames_moved_aside_is_put_back_by_the_next_write(
    tmp_path: Path,
) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / MANIFEST).write_text("old", encoding="utf-8")
    killed = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_RENAMES, str(target)])
    assert killed.returncode == 137 and not target.exists()
    with pytest.warns(FaimWarning) as warned:
        staging = staging_folder(target, ".faim-")
    assert (target / MANIFEST).read_text(encoding="utf-8") == "old"
    assert sorted(tmp_path.iterdir()) == sorted([target, staging])  # the killed process's new folder removed
    restored, removed = (str(warning.message) for warning in warned)
    assert restored.startswith(f"restored {target} from ") and "moved it aside to replace it" in restored
    assert removed.startswith("removed ") and f"stopped part way writing {target}" in removed


KILLED_REMOVING_THE_FOLDER_BEFORE = """
import os, shutil, sys
from pathlib import Path
from types import SimpleNamespace
from faim.folders import replace_folder, staging_folder
target = Path(sys.argv[1])
staging = staging_folder(target, ".faim-")
(staging / "faim.json").write_text("new", encoding="utf-8")
def killed_part_way(path, *args, **kwargs):
    (Path(path) / "faim.json").unlink()
    os._exit(137)  # kill -9 once one file of the folder before is removed
shutil.rmtree = killed_part_way
replace_folder(staging, target, ".faim-")
"""


def test_what_a_process_killed_as_it_removed_the_folder_before_left_is_removed_never_put_back(tmp_path: Path) -> None:
    target = tmp_path / "model"
    target.mkdir()
    for name in (MANIFEST, "weights"):
        (target / name).write_text("old", encoding="utf-8")
    killed = subprocess.run([sys.executable, "-c", KILLED_REMOVING_THE_FOLDER_BEFORE, str(target)])
    assert killed.returncode == 137 and (target / MANIFEST).read_text(encoding="utf-8") == "new"
    shutil.rmtree(target)  # the new model removed by hand: what remains of the one before must not take its place
    with pytest.warns(FaimWarning, match=r"^removed .*, left unfinished by process \d+, stopped part way writing"):
        staging = staging_folder(target, ".faim-")
    assert not target.exists() and list(tmp_path.iterdir()) == [staging]


def test_the_folder_before_is_put_back_where_the_new_one_cannot_take_its_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model"
    target.mkdir()
    (target / MANIFEST).write_text("old", encoding="utf-8")
    rename = Path.rename

    def refused_in_place(self: Path, destination: Path) -> Path:
        if Path(destination) == target and (self / MANIFEST).read_text(encoding="utf-8") == "new":
            raise PermissionError(f"{self} -> {destination}")
        return rename(self, destination)

    with pytest.raises(PermissionError):
        with replacing(target, ".faim-") as staging:
            (staging / MANIFEST).write_text("new", encoding="utf-8")
            monkeypatch.setattr(Path, "rename", refused_in_place)
    monkeypatch.undo()
    assert (target / MANIFEST).read_text(encoding="utf-8") == "old"
    assert [path.name for path in tmp_path.iterdir()] == ["model"]


def test_a_working_folder_stopped_as_it_is_removed_stays_a_stop_where_warnings_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stopped(path: Path, *args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), warnings.catch_warnings():
        warnings.simplefilter("error")  # as -W error takes them
        with working_folder(tmp_path / "export", ".faim-"):
            monkeypatch.setattr(folders.shutil, "rmtree", stopped)
