"""A scoring run's output folder is a folder and holds only what scoring writes there."""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import synced_and_renamed

from faim import __version__
from faim.data.images import IMAGE_DECODING
from faim.file_digests import sealed
from faim.notices import FaimWarning
from faim.scoring import runner
from faim.scoring.engine import score_dump
from faim.scoring.exported import score_exported
from faim.scoring.manifest import Manifest, check_output_folder, check_resumable, run_identity, writing_run
from faim.scoring.report import Held, ShardReport


def forty_posts(path: Path) -> Path:
    path.write_text(
        "".join(json.dumps({"id": str(i), "text": f"post {i}"}) + "\n" for i in range(40)), encoding="utf-8"
    )
    return path


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text(json.dumps({"id": "1", "text": "a post"}) + "\n", encoding="utf-8")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"mine: holds files that are not a scoring run's \(notes.txt\)"):
        score_dump(tiny_model_dir, dump, out, workers=1, progress=False)
    assert sorted(path.name for path in out.iterdir()) == ["notes.txt"]
    (out / "notes.txt").unlink()
    assert score_dump(tiny_model_dir, dump, out, workers=1, progress=False).rows == 1  # an empty folder is fine


def test_a_file_named_as_the_output_folder_is_refused_as_a_file(tmp_path: Path) -> None:
    single = tmp_path / "scores.parquet"
    single.write_bytes(b"x")
    for out in (single, single / "run"):
        with pytest.raises(NotADirectoryError, match=rf"^{single}: is a file, not a folder"):
            check_output_folder(out)
    assert single.read_bytes() == b"x"


def test_an_output_folder_spelt_through_one_not_there_and_dot_dot_is_checked_as_the_folder_written_into(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "thesis.tex").write_text("years of work", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileExistsError, match=r"^missing/\.\.: holds files that are not a scoring run's \(thesis"):
        check_output_folder(Path("missing/.."))


def held_by_another_process(out: Path) -> subprocess.Popen:
    """A process holding ``out`` as a run writing into it holds it (``writing_run``), once it holds it."""
    code = (
        "import sys, time\nfrom pathlib import Path\nfrom faim.scoring.manifest import writing_run\n"
        "with writing_run(Path(sys.argv[1])):\n    print('held', flush=True)\n    time.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_a_run_into_a_folder_another_run_is_writing_is_refused_touching_nothing_and_a_killed_one_keeps_none_out(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "scores"
    assert score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=8, progress=False).shards == 5
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    holder = held_by_another_process(out)
    try:
        refused = rf"^{re.escape(str(out))}: another scoring run is writing into this folder now; nothing was written"
        for score, engine in ((score_dump, "embedded"), (score_dump, "ray"), (score_exported, "embedded")):
            with pytest.raises(BlockingIOError, match=refused):
                score(tiny_model_dir, dump, out, workers=1, shard_rows=8, engine=engine, progress=False, overwrite=True)
        assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    finally:
        holder.kill()  # as kill -9 ends a run: the system lets its lock go
        holder.wait()
    resumed = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=8, progress=False)
    assert resumed.resumed_shards == 5 and resumed.rows_this_run == 0 and resumed.rows == 40


def test_a_folder_a_run_holds_is_refused_to_another_of_the_same_process_and_its_lock_is_part_of_a_runs_folder(
    tmp_path: Path,
) -> None:
    out = tmp_path / "scores"
    with writing_run(out):
        with pytest.raises(BlockingIOError, match=rf"^{re.escape(str(out))}: another scoring run is writing"):
            with writing_run(out):
                pass
    with writing_run(out):  # let go once the run holding it ended
        pass
    check_output_folder(out)
    assert check_resumable(out, RUN) is None  # a run's record, not the lock, says whether the folder holds a run


def test_a_folder_on_a_file_system_taking_no_lock_is_written_unlocked_saying_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fcntl = pytest.importorskip("fcntl")  # no flock on Windows: nothing is locked there

    def refused(*args: Any) -> None:
        raise OSError(errno.ENOLCK, os.strerror(errno.ENOLCK))  # an NFS mount without its lock service

    monkeypatch.setattr(fcntl, "flock", refused)
    out = tmp_path / "scores"
    with pytest.warns(FaimWarning, match=rf"^{re.escape(str(out))}: its file system takes no lock \(No locks"):
        with writing_run(out):
            (out / "part-0.parquet").write_bytes(b"")  # the run goes on
    assert (out / "part-0.parquet").is_file()


RUN = {
    "model": {"model.safetensors": "aa"},
    "tasks": [{"name": "harmful", "threshold": 0.5}],
    "inputs": [["/data/a.jsonl", 10, 1], ["/data/b.jsonl", 20, 2]],
    "settings": {"columns": None, "options": {"bf16": False}, "shard_rows": 32},
}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"model": {"model.safetensors": "bb"}}, "the model's files differ"),
        ({"tasks": [{"name": "harmful", "threshold": 0.9}]}, "the model's tasks, thresholds or calibration differ"),
        (
            {"inputs": [*RUN["inputs"], ["/data/c.jsonl", 10, 1]]},
            "the inputs differ: /data/c.jsonl (not an input of the run: new since it began, or the dump named "
            "otherwise)",
        ),
        (
            {"inputs": [["/data/c.jsonl", 10, 1]]},
            "the inputs differ: /data/a.jsonl (an input of the run, not found now: removed, or the dump named "
            "otherwise), /data/b.jsonl (an input of the run, not found now: removed, or the dump named otherwise), ...",
        ),
        ({"inputs": [["/data/b.jsonl", 20, 2], ["/data/a.jsonl", 10, 1]]}, "the inputs come in another order"),
        ({"engine": "ray"}, "its record differs: see RUN_FILE"),
        (
            {"settings": {"columns": {"text": "body"}, "options": {"bf16": True}, "shard_rows": 32}},
            'settings differ: columns null → {"text": "body"}, options.bf16 false → true',
        ),
        (
            {"model": {}, "settings": {"options": {"bf16": False}, "shard_rows": 64, "pool_by_image": True}},
            "the model's files differ; settings differ: columns null → (not set), pool_by_image (not set) → true, "
            "shard_rows 32 → 64",
        ),
    ],
)
def test_a_folder_holding_another_run_is_refused_naming_what_differs(change: dict, said: str, tmp_path: Path) -> None:
    (tmp_path / "_run.json").write_text(json.dumps(RUN), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, RUN | change)
    assert str(refused.value) == (
        f"{tmp_path} holds another scoring run ({said.replace('RUN_FILE', str(tmp_path / '_run.json'))}); write to a "
        "new folder, or pass --overwrite "
        "(overwrite=True) to start afresh"
    )
    check_resumable(tmp_path, RUN)
    check_resumable(tmp_path, RUN | change, overwrite=True)


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        (
            [["/data/a.jsonl", 10, 1], ["/data/b.jsonl", 21, 3]],
            "an input has changed since the run began (/data/b.jsonl: 20 → 21 bytes): the rows scored from it may "
            "not be its rows now",
        ),
        (
            [["/data/a.jsonl", 10, 5], ["/data/b.jsonl", 20, 3]],
            "inputs have changed since the run began (/data/a.jsonl: same size, another modification time; "
            "/data/b.jsonl: same size, another modification time): the rows scored from them may not be their rows "
            "now",
        ),
    ],
)
def test_a_run_whose_inputs_were_replaced_since_is_refused_as_this_run_saying_why_it_is_not_resumed(
    inputs: list, said: str, tmp_path: Path
) -> None:
    (tmp_path / "_run.json").write_text(json.dumps(RUN), encoding="utf-8")  # as a file was replaced by a good one
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, RUN | {"inputs": inputs})
    assert str(refused.value) == (
        f"{tmp_path} holds this run, but {said}, so it is not resumed; to score the dump as it is now, pass "
        "--overwrite (overwrite=True), or write to a new folder"
    )


def test_another_run_in_the_folder_an_output_folder_spelt_through_one_not_there_and_dot_dot_names_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "_run.json").write_text(json.dumps(RUN), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"holds another scoring run"):
        check_resumable(Path("missing/.."), RUN | {"settings": {**RUN["settings"], "shard_rows": 64}})
    check_resumable(Path("missing/.."), RUN)


def test_a_run_recorded_while_bf16_was_chosen_by_the_cpu_resumes_as_a_run_without_it(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump = forty_posts(tmp_path / "dump.jsonl")
    out = tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    recorded["settings"]["options"]["bf16"] = None  # as runs recorded it before bf16 had to be asked for
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    assert again.rows == 40 and again.rows_this_run == 0


def test_the_model_calibrated_otherwise_does_not_resume_the_run_of_its_earlier_calibration(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    recalibrated = tmp_path / "recalibrated"
    shutil.copytree(tiny_model_dir, recalibrated)
    manifest = json.loads((recalibrated / "faim.json").read_text(encoding="utf-8"))
    manifest["tasks"][0]["threshold"] = 0.9  # what faim calibrate changes: the same files, other thresholds
    (recalibrated / "faim.json").write_text(json.dumps(sealed(manifest)), encoding="utf-8")
    with pytest.raises(ValueError, match=r"\(the model's tasks, thresholds or calibration differ\)"):
        score_dump(recalibrated, dump, out, workers=1, shard_rows=20, progress=False)
    assert score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False).rows_this_run == 0


def test_a_run_recorded_without_the_models_tasks_resumes_as_before(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    del recorded["tasks"]  # as runs recorded it before the model's tasks were part of a run's identity
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    assert again.rows == 40 and again.rows_this_run == 0


def test_a_run_keeps_the_names_it_was_begun_with_for_its_inputs_and_a_record_naming_none_names_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    model, out = {"files": {}, "tasks": []}, tmp_path / "out"
    Manifest(out, run_identity(model, [Path("dump/a.jsonl")], {})).close()
    resumed = Manifest(out, run_identity(model, [tmp_path / "dump" / "a.jsonl"], {}))  # the same file, named otherwise
    resumed.close()
    assert resumed.input_names == ["dump/a.jsonl"]
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    del recorded["input_names"]  # as a faim that recorded no names wrote it
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    earlier = Manifest(out, run_identity(model, [tmp_path / "dump" / "a.jsonl"], {}))
    earlier.close()
    assert earlier.input_names is None


def test_a_resumed_run_parses_its_record_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    model, out = {"files": {}, "tasks": []}, tmp_path / "out"
    Manifest(out, run_identity(model, [tmp_path / "a.jsonl"], {})).close()
    record, loads, parsed = (out / "_run.json").read_bytes(), json.loads, []

    def counted(text: str | bytes, *args: object, **kwargs: object) -> object:
        if text in (record, record.decode("utf-8")):
            parsed.append(text)
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(json, "loads", counted)
    resumed = Manifest(out, run_identity(model, [tmp_path / "a.jsonl"], {}))
    resumed.close()
    assert len(parsed) == 1 and resumed.input_names == [str(tmp_path / "a.jsonl")]


def test_a_run_given_a_tuple_in_its_settings_resumes(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    columns = {"text": "text", "meta": ("topic",)}  # a tuple, which the run's record holds as a list
    score_dump(tiny_model_dir, dump, out, columns=columns, workers=1, shard_rows=20, progress=False)
    again = score_dump(tiny_model_dir, dump, out, columns=columns, workers=1, shard_rows=20, progress=False)
    assert again.rows == 40 and again.rows_this_run == 0


def test_a_run_recorded_without_its_picture_decoding_is_refused_where_it_reads_pictures_and_resumes_where_not(
    tmp_path: Path,
) -> None:
    recorded = RUN | {"settings": RUN["settings"] | {"max_image_pixels": None}}  # as faims before it recorded runs
    (tmp_path / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    check_resumable(tmp_path, RUN | {"faim_version": "9.9"})  # a run reading no picture: its record as before
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, recorded | {"settings": recorded["settings"] | {"image_decoding": 7}})
    assert str(refused.value) == (
        f"{tmp_path} holds another scoring run (its pictures were decoded otherwise: by an older faim, which "
        "recorded no picture decoding, where this faim decodes by picture decoding 7); write to a new folder, or "
        "pass --overwrite (overwrite=True) to start afresh, or finish the run with the faim that began it"
    )


def test_a_run_reading_no_picture_recorded_with_a_picture_decoding_resumes_and_one_reading_pictures_is_refused(
    tmp_path: Path,
) -> None:
    recorded = RUN | {"settings": RUN["settings"] | {"image_decoding": 1}}  # as faims recorded an unfused picture's
    (tmp_path / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    check_resumable(tmp_path, RUN | {"faim_version": "9.9"})
    with pytest.raises(ValueError, match=r"\(its pictures were decoded otherwise: by picture decoding 1, where"):
        check_resumable(tmp_path, RUN | {"settings": RUN["settings"] | {"image_decoding": 2}})


def test_a_run_begun_by_another_faim_version_decoding_pictures_alike_resumes_and_other_settings_are_named_too(
    tmp_path: Path,
) -> None:
    recorded = RUN | {"settings": RUN["settings"] | {"image_decoding": 7}, "faim_version": "0.0.9"}
    (tmp_path / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    check_resumable(tmp_path, recorded | {"faim_version": "0.1.0"})
    said = (
        r"\(its pictures were decoded otherwise: by picture decoding 7 of faim 0.0.9, where this faim decodes by "
        r"picture decoding 8; settings differ: shard_rows 32 → 64\).* or finish the run with the faim that began it "
        r"\(faim 0.0.9\)$"
    )
    settings = recorded["settings"] | {"image_decoding": 8, "shard_rows": 64}
    with pytest.raises(ValueError, match=said):
        check_resumable(tmp_path, recorded | {"settings": settings})


def test_a_run_of_a_model_reading_pictures_is_not_resumed_by_a_faim_decoding_them_otherwise(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    assert recorded["settings"]["image_decoding"] == IMAGE_DECODING and recorded["faim_version"] == __version__
    monkeypatch.setattr(runner, "IMAGE_DECODING", IMAGE_DECODING + 1)
    with pytest.raises(ValueError, match=r"\(its pictures were decoded otherwise: .* or finish the run with the faim"):
        score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)


def test_a_relative_image_root_is_recorded_as_the_folder_it_names_so_a_resume_from_elsewhere_is_refused(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    for place in ("here", "there"):
        (tmp_path / place / "pics").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "here")
    score_dump(tiny_model_dir, dump, out, image_root="pics", workers=1, shard_rows=20, progress=False)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    assert recorded["settings"]["image_root"] == str(tmp_path / "here" / "pics")
    monkeypatch.chdir(tmp_path / "there")  # the same words name other pictures here
    with pytest.raises(ValueError, match=r"settings differ: image_root .*here/pics.* → .*there/pics"):
        score_dump(tiny_model_dir, dump, out, image_root="pics", workers=1, shard_rows=20, progress=False)
    again = score_dump(tiny_model_dir, dump, out, image_root=str(tmp_path / "here" / "pics"), workers=1,
                       shard_rows=20, progress=False)  # fmt: skip
    assert again.rows_this_run == 0


@pytest.mark.parametrize("given", ["pics", "pics/", "link", "pics/../pics", "{tmp}/pics/", "{tmp}/link"])
def test_a_run_that_recorded_its_image_root_as_given_resumes_given_it_alike_from_the_folder_it_was_begun_in(
    given: str, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = given.format(tmp=tmp_path)
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    (tmp_path / "pics").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "pics")
    monkeypatch.chdir(tmp_path)
    score_dump(tiny_model_dir, dump, out, image_root=given, workers=1, shard_rows=20, progress=False)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    recorded["settings"]["image_root"] = given  # as runs recorded the folder: as given
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    again = score_dump(tiny_model_dir, dump, out, image_root=given, workers=1, shard_rows=20, progress=False)
    assert again.rows == 40 and again.rows_this_run == 0


def test_what_a_shards_rows_hold_is_recorded_and_read_back_and_unknown_where_its_line_does_not_say(
    tmp_path: Path,
) -> None:
    identity = {"model": {}, "tasks": [], "inputs": [], "settings": {}}
    out = tmp_path / "out"
    manifest = Manifest(out, identity)
    part = pa.table({"id": ["a"], "error_kind": pa.array([None], pa.string())})
    for key in ("00000-000000", "00000-000001"):
        pq.write_table(part, out / f"part-{key}.parquet")
    manifest.add(ShardReport("00000-000000", 1, held=Held(1, ("image",), ("img",))))
    manifest.add(ShardReport("00000-000001", 1))  # as a faim that did not record it wrote its line
    manifest.close()
    resumed = Manifest(out, identity)
    resumed.close()
    assert [resumed.done[key].held for key in sorted(resumed.done)] == [Held(1, ("image",), ("img",)), None]


def test_a_runs_record_is_read_once_where_it_is_checked_and_not_read_back_where_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    for method in ("read_text", "read_bytes"):
        read = getattr(Path, method)

        def counted(path: Path, *args: object, _read=read, **kwargs: object) -> str | bytes:
            if path.name == "_run.json":
                reads.append(path.name)
            return _read(path, *args, **kwargs)

        monkeypatch.setattr(Path, method, counted)
    out, identity = tmp_path / "out", {"model": {}, "tasks": [], "inputs": [], "settings": {}, "input_names": ["a"]}
    begun = Manifest(out, identity)
    begun.finish()
    begun.close()
    assert reads == [] and begun.input_names == ["a"]
    resumed = Manifest(out, identity)
    resumed.close()
    assert reads == ["_run.json"] and resumed.finished and resumed.input_names == ["a"]


def test_a_finished_record_another_run_left_in_the_folder_is_not_taken_for_this_runs(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manifest = Manifest(out, {"model": {}, "tasks": [], "inputs": [["a.jsonl", 2, 0]], "settings": {}})
    part = pa.table({"id": ["a"], "error_kind": pa.array([None], pa.string())})
    for key in ("00000-000000", "00000-000001"):
        pq.write_table(part, out / f"part-{key}.parquet")
        manifest.add(ShardReport(key, 1))
    manifest.finish()
    manifest.close()
    again = Manifest(out, json.loads((out / "_run.json").read_text()))
    again.close()
    assert again.finished
    # another run, of four shards, two of them done, written by a faim that knew no _finished.json and left it
    other = {"model": {}, "tasks": [], "inputs": [["a.jsonl", 2, 0], ["b.jsonl", 2, 0]], "settings": {}}
    (out / "_run.json").write_text(json.dumps(other), encoding="utf-8")
    resumed = Manifest(out, other)
    resumed.close()
    assert len(resumed.done) == 2 and not resumed.finished


def test_a_run_killed_before_recording_a_written_part_warns_at_its_end_of_every_row_on_each_resume(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    manifest = out / "_manifest.jsonl"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    manifest.write_text(lines[0] + "\n", encoding="utf-8")  # killed after the second part was written
    for _ in range(2):
        with pytest.warns(FaimWarning) as said:
            again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
        assert again.rows == 40 and again.rows_this_run == 0
        ends = [str(warning.message) for warning in said if "(its 40 rows, scored)" in str(warning.message)]
        assert [end.split(": ")[1] for end in ends] == [
            f"no post holds any {kind}, which the model reads" for kind in ("comments", "image")
        ]
    recorded = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    assert [entry["key"] for entry in recorded] == ["00000-000000", "00000-000001"]
    held = {"posts": 20, "unheld": ["comments", "image"], "unread": [], "overfull": 0, "most": 0, "limit": 8}
    assert recorded[1]["held"] == recorded[0]["held"] == held
    assert sorted(path.name for path in out.glob("part-*")) == [
        "part-00000-000000.parquet",
        "part-00000-000001.parquet",
    ]


def test_a_run_keeps_the_digits_of_its_shard_keys_it_was_begun_with_and_a_record_giving_none_the_first_faims(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    model, out = {"files": {}, "tasks": []}, tmp_path / "out"
    Manifest(out, run_identity(model, [tmp_path / "a.jsonl"], {}, (6, 7))).close()
    resumed = Manifest(out, run_identity(model, [tmp_path / "a.jsonl"], {}, (5, 8)))  # as the record says
    resumed.close()
    assert resumed.key_widths == (6, 7)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    del recorded["shard_key_widths"]  # as a faim that keyed every run 00000-000000 wrote it
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    earlier = Manifest(out, run_identity(model, [tmp_path / "a.jsonl"], {}, (6, 7)))
    earlier.close()
    assert earlier.key_widths == (5, 6)


def test_an_overwrite_killed_as_it_deletes_the_earlier_run_leaves_its_record_so_no_other_run_takes_its_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, earlier = tmp_path / "out", {"model": {}, "tasks": [], "inputs": [["a.jsonl", 2, 0]], "settings": {}}
    manifest = Manifest(out, earlier)
    for key in ("00000-000000", "00000-000001"):
        pq.write_table(
            pa.table({"id": ["a"], "error_kind": pa.array([None], pa.string())}), out / f"part-{key}.parquet"
        )
        manifest.add(ShardReport(key, 1))
    manifest.close()
    other = earlier | {"inputs": [["b.jsonl", 2, 0]]}
    deleted, unlink = [], Path.unlink

    def killed_at_the_second(path: Path, missing_ok: bool = False) -> None:
        if deleted:
            raise KeyboardInterrupt
        deleted.append(path)
        unlink(path, missing_ok=missing_ok)

    with monkeypatch.context() as patched, pytest.raises(KeyboardInterrupt):
        patched.setattr(Path, "unlink", killed_at_the_second)
        Manifest(out, other, overwrite=True)
    with pytest.raises(ValueError, match="holds another scoring run"):  # not resumed with the earlier run's part
        Manifest(out, other)
    Manifest(out, other, overwrite=True).close()
    resumed = Manifest(out, other)
    resumed.close()
    assert not resumed.done and not list(out.glob("part-*"))


def test_parts_of_a_run_whose_record_is_gone_are_refused_not_taken_for_the_shards_of_the_run_begun(
    tmp_path: Path,
) -> None:
    out, earlier = tmp_path / "out", {"model": {}, "tasks": [], "inputs": [["a.jsonl", 2, 0]], "settings": {}}
    Manifest(out, earlier, per_post=True).close()
    pq.write_table(
        pa.table({"id": ["a"], "error_kind": pa.array([None], pa.string())}), out / "_per_post" / "part-0.parquet"
    )
    (out / "_run.json").unlink()
    other = earlier | {"inputs": [["b.jsonl", 2, 0]]}
    with pytest.raises(ValueError, match=r"out holds parts of a scoring run \(part-0.parquet\) but no record of it"):
        Manifest(out, other, per_post=True)
    Manifest(out, other, per_post=True, overwrite=True).close()
    resumed = Manifest(out, other, per_post=True)
    resumed.close()
    assert not resumed.done and not list(out.rglob("part-*"))


def test_a_part_no_finished_shard_records_that_cannot_be_read_is_deleted_saying_so_and_its_shard_scored_again(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = forty_posts(tmp_path / "dump.jsonl"), tmp_path / "out"
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    manifest = out / "_manifest.jsonl"
    manifest.write_text(manifest.read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8")
    (out / "_finished.json").unlink()
    (out / "part-00000-000001.parquet").write_bytes(b"")  # renamed, its bytes never written: the system stopped
    with pytest.warns(FaimWarning, match=r"part-00000-000001.parquet: a part no finished shard records cannot be read"):
        again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=20, progress=False)
    assert again.rows == 40 and again.rows_this_run == 20
    assert pq.read_table(out, columns=["id"]).column("id").to_pylist() == [str(i) for i in range(40)]


def test_a_runs_record_and_its_finished_record_are_on_the_disk_before_their_names_and_an_overwrite_before_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    (out / "_per_post").mkdir(parents=True)
    (out / "_per_post" / "part-00000-000000.parquet").write_bytes(b"another run's")
    (out / "_run.json").write_text(json.dumps(RUN | {"tasks": []}), encoding="utf-8")
    done = synced_and_renamed(monkeypatch)
    manifest = Manifest(out, RUN, overwrite=True, per_post=True)
    manifest.finish()
    manifest.close()
    record, finished = (("fsync", (out / name).stat().st_ino) for name in ("_run.json", "_finished.json"))
    folder = ("fsync", out.stat().st_ino)
    assert done[done.index(record) :][:3] == [record, ("replace", "_run.json"), folder]
    assert done[done.index(finished) :][:3] == [finished, ("replace", "_finished.json"), folder]
    assert done.index(("fsync", (out / "_per_post").stat().st_ino)) < done.index(record)  # the old part gone first


@pytest.mark.parametrize(
    ("settings", "parts", "said"),
    [
        ({"text_chunking": 1}, {}, "settings.text_chunking"),
        ({}, {"record_format": 2}, "record_format"),
        ({"options": {"bf16": False, "int8": True}}, {}, "settings.options.int8"),
        (
            {"image_decoding": 9, "jsonl_lines": 7},
            {"extra": 1},
            "extra, settings.image_decoding 9 (this faim's: 8), settings.jsonl_lines 7 (this faim's: 2)",
        ),
    ],
)
def test_a_run_begun_by_a_newer_faim_is_refused_saying_so_naming_what_this_faim_does_not_know(
    settings: dict, parts: dict, said: str, tmp_path: Path
) -> None:
    run = RUN | {"settings": RUN["settings"] | {"image_decoding": 8, "jsonl_lines": 2}, "faim_version": __version__}
    newer = run | parts | {"settings": run["settings"] | settings, "faim_version": "9.0.0"}
    (tmp_path / "_run.json").write_text(json.dumps(newer), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, run)
    assert str(refused.value) == (
        f"{tmp_path} holds a scoring run begun by a newer faim (faim 9.0.0; this is faim {__version__}): its record "
        f"({tmp_path / '_run.json'}) holds {said}, which this faim does not know, so it cannot resume the run; "
        "finish it with faim 9.0.0 or later, or pass --overwrite (overwrite=True) to start afresh, or write to a new "
        "folder"
    )
    check_resumable(tmp_path, run, overwrite=True)


def test_a_run_begun_by_a_newer_faim_of_this_version_number_is_refused_without_a_version_pair(tmp_path: Path) -> None:
    newer = RUN | {"settings": RUN["settings"] | {"text_chunking": 1}, "faim_version": __version__}
    (tmp_path / "_run.json").write_text(json.dumps(newer), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, RUN)
    assert str(refused.value) == (
        f"{tmp_path} holds a scoring run begun by a newer faim: its record ({tmp_path / '_run.json'}) holds "
        "settings.text_chunking, which this faim does not know, so it cannot resume the run; finish it with the faim "
        "that began it, or pass --overwrite (overwrite=True) to start afresh, or write to a new folder"
    )


def test_a_run_recording_a_setting_faim_no_longer_records_is_refused_as_another_run_not_a_newer_faims(
    tmp_path: Path,
) -> None:
    older = RUN | {"settings": RUN["settings"] | {"float_id_cells": 1}, "faim_version": __version__}
    (tmp_path / "_run.json").write_text(json.dumps(older), encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        check_resumable(tmp_path, RUN)
    assert str(refused.value) == (
        f"{tmp_path} holds another scoring run (settings differ: float_id_cells 1 → (not set)); write to a new "
        "folder, or pass --overwrite (overwrite=True) to start afresh"
    )


@pytest.mark.parametrize("score", [score_dump, score_exported])
def test_an_output_folder_empty_a_file_or_not_writable_is_refused_before_any_work(
    score: Any, tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = forty_posts(tmp_path / "dump.jsonl")
    (tmp_path / "scores.parquet").write_bytes(b"x")
    locked = tmp_path / "locked"
    locked.mkdir()
    access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != locked and access(path, mode))
    monkeypatch.setattr(runner, "count_rows", lambda *_: pytest.fail("the dump was read"))
    monkeypatch.chdir(tmp_path / "locked")  # where an empty name would write
    refused = [
        ("", ValueError, r"^out '': an empty folder name \(a variable not set\?\); name a folder, '\.' for this one"),
        (tmp_path / "scores.parquet", NotADirectoryError, r"scores\.parquet: is a file, not a folder"),
        (locked, PermissionError, rf"^{locked}: this user may not write into {locked}; name a folder it may write"),
        (locked / "new" / "out", PermissionError, rf"^{locked}/new/out: this user may not write into {locked};"),
    ]
    for out, error, said in refused:
        with pytest.raises(error, match=said):
            score(tiny_model_dir, dump, out, workers=1, progress=False)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dump.jsonl", "locked", "scores.parquet"]
    assert not any(locked.iterdir())
