"""Worker processes start with the allocator settings (settings the user made win) and end with a stopped run; the
progress bar says what a run writes."""

from __future__ import annotations

import inspect
import json
import multiprocessing
import os
import re
import signal
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from faim import __version__
from faim.data.columns import ColumnMap
from faim.data.images import IMAGE_DECODING
from faim.data.tabular import JSONL_LINES
from faim.notices import FaimWarning, warn
from faim.scoring import rows, runner
from faim.scoring.engine import score_dump
from faim.scoring.inputs import Shard, count_rows, read_shards
from faim.scoring.manifest import check_resumable
from faim.scoring.report import ShardReport
from faim.scoring.rows import ShardRows, shard_posts
from faim.scoring.runner import (
    WORKER_ENVIRONMENT,
    RunPlan,
    _run_embedded,
    plan_run,
    run_shards,
    worker_environment,
)
from faim.wording import shell_path


def test_worker_environment_is_set_inside_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = list(WORKER_ENVIRONMENT)
    monkeypatch.delenv(first, raising=False)
    monkeypatch.setenv(second, "12345")
    with worker_environment():
        assert os.environ[first] == WORKER_ENVIRONMENT[first]
        assert os.environ[second] == "12345"
    assert first not in os.environ and os.environ[second] == "12345"


class SleepingWriter:
    """A scorer that notes its process id in the output folder, then takes a minute over each shard."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        (out_dir / f"worker-{os.getpid()}").touch()
        time.sleep(60)
        return ShardReport(shard.key, 0)

    def close(self) -> None:
        pass


def sleeping_writers(threads: int) -> SleepingWriter:
    return SleepingWriter()


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie no one reaped has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").is_file(), reason="reads processes from /proc")
def test_a_stopped_run_ends_its_workers_at_once_not_when_their_shards_are_done(tmp_path: Path) -> None:
    def shards() -> Iterator[Shard]:
        yield from (Shard(f"00000-{n:06d}", "dump.jsonl", "jsonl", None, []) for n in range(2))
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("worker-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        raise KeyboardInterrupt  # Ctrl-C, once both workers are in the middle of a shard

    with pytest.raises(KeyboardInterrupt):
        for _ in _run_embedded(sleeping_writers, shards(), tmp_path, workers=3, threads=1):
            pass
    workers = [int(path.name.split("-")[1]) for path in tmp_path.glob("worker-*")]
    deadline = time.monotonic() + 15
    while any(running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(workers) == 2 and not any(running(pid) for pid in workers), "a worker went on with its shard"


class OneRowWriter:
    """A scorer that reports each shard as one row scored (writing nothing)."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        return ShardReport(shard.key, 1)

    def close(self) -> None:
        pass


def one_row_writers(threads: int) -> OneRowWriter:
    return OneRowWriter()


def test_the_progress_bar_of_a_finished_run_ends_at_the_rows_read_not_the_lines_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n\n\n{"text": "b"}\n', encoding="utf-8")
    plan = RunPlan([dump], count_rows(dump), 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    assert plan.rows == 4  # the plan counts lines: reading the rows to count them would read the dump twice
    run_shards(one_row_writers, plan, tmp_path / "out", workers=1)
    assert "2/2 " in capsys.readouterr().err.rsplit("\r", 1)[-1]


class WarningWriter(OneRowWriter):
    """A scorer that warns (as a shard's posts are warned of) as it scores each shard, in the thread scoring it."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        warn(f"shard {shard.key} warned of")
        return super().write(shard, out_dir)


def test_a_warning_given_in_the_thread_scoring_a_shard_names_the_line_that_started_the_run(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n', encoding="utf-8")
    plan = RunPlan([dump], count_rows(dump), 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        line = inspect.currentframe().f_lineno + 1
        run_shards(lambda threads: WarningWriter(), plan, tmp_path / "out", workers=1, progress=False)
    thread = [(warning.filename, warning.lineno) for warning in said if "warned of" in str(warning.message)]
    assert thread == [(__file__, line)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=FaimWarning, module=__name__)
        run_shards(lambda threads: WarningWriter(), plan, tmp_path / "again", workers=1, progress=False)


class PartWriter(OneRowWriter):
    """A scorer that reports each shard as one row scored, writing an empty part for it (a finished shard)."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        pq.write_table(pa.table({"error_kind": pa.array([], pa.string())}), out_dir / f"part-{shard.key}.parquet")
        return super().write(shard, out_dir)


def part_writers(threads: int) -> PartWriter:
    return PartWriter()


@pytest.mark.parametrize("before", [None, "\n", "{not json\n"])
def test_the_first_shard_is_warned_of_before_it_is_scored_not_again_by_a_run_resumed_past_it(
    before: str | None, tmp_path: Path
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(f'{{"text": "post {n}"}}\n' for n in range(3)), encoding="utf-8")
    first = tmp_path / "first.jsonl"  # read first, holding ``before``: no post, the first shard warned of is the dump's
    first.write_text(before or "", encoding="utf-8")
    identity = {"model": {}, "tasks": [], "inputs": [], "settings": {}}
    plan = RunPlan([first, dump] if before else [dump], 3, 1, identity, ColumnMap(), kinds=("image", "text"))
    said = []
    for _ in range(2):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            run_shards(part_writers, plan, tmp_path / "out", workers=1, progress=False)
        messages = [str(warning.message) for warning in caught if warning.category is FaimWarning]
        said.append([message for message in messages if "no post holds" in message])  # an empty first: warned of too
    assert [len(messages) for messages in said] == [1, 0]
    assert said[0][0].startswith(f"{dump} (its first 1 row, read before scoring): no post holds any image")


def test_a_resumed_run_reads_no_row_before_scoring_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read = []

    def counted(shard: Shard, *args: Any) -> ShardRows:
        read.append(shard.key)
        return shard_posts(shard, *args)

    monkeypatch.setattr(rows, "shard_posts", counted)
    dump = tmp_path / "dump.jsonl"  # no row a post: read before scoring for one, as far as the first shards
    dump.write_text('{"body": "b"}\n' * 3, encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap(), ("text",))
    run_shards(part_writers, plan, tmp_path / "out", workers=1, progress=False)
    assert read == ["00000-000000", "00000-000001", "00000-000002"]
    read.clear()
    run_shards(part_writers, plan, tmp_path / "out", workers=1, progress=False)  # the earlier run warned
    assert read == []


def test_a_rerun_of_a_finished_run_reads_no_row_of_its_inputs_unless_a_part_was_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []

    def counted(*args: Any) -> Iterator[Shard]:
        for shard in read_shards(*args):
            read.append(shard.key)
            yield shard

    monkeypatch.setattr(runner, "read_shards", counted)
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap(), ("text",))
    out = tmp_path / "out"
    assert run_shards(part_writers, plan, out, workers=1, progress=False).rows == 3
    assert len(read) == 3
    read.clear()
    again = run_shards(part_writers, plan, out, workers=1, progress=False)
    assert read == [] and (again.rows, again.shards, again.resumed_shards) == (3, 3, 3)
    (out / "part-00000-000001.parquet").unlink()
    assert run_shards(part_writers, plan, out, workers=1, progress=False).rows == 3
    assert read == ["00000-000000", "00000-000001", "00000-000002"]


def test_a_dump_named_through_a_link_and_dot_dot_is_read_where_the_file_system_takes_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "dump").mkdir()
    (tmp_path / "real" / "dump" / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    (tmp_path / "C" / "dump").mkdir(parents=True)  # what link/../dump names when .. is taken out by text
    (tmp_path / "C" / "dump" / "a.jsonl").write_text('{"text": "b"}\n' * 2, encoding="utf-8")
    (tmp_path / "C" / "link").symlink_to(Path("..") / "real" / "sub")
    monkeypatch.chdir(tmp_path / "C")
    plan = plan_run({"files": {}, "tasks": []}, "link/../dump", tmp_path / "out", {}, 1, kinds=["text"])
    assert plan.rows == 1 and plan.identity["inputs"][0][0] == str(tmp_path / "real" / "dump" / "a.jsonl")
    run_shards(part_writers, plan, tmp_path / "out", workers=1, progress=False)
    assert len(list((tmp_path / "out").glob("part-*.parquet"))) == 1


class SourceWriter(OneRowWriter):
    """A scorer writing the ``source`` of each row of a shard (as ``shard_posts`` names it) to the shard's part."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        sources = [post.origin for _, post in shard_posts(shard, ColumnMap(), None, ["text"]).posts]
        errors = pa.array([None] * len(sources), pa.string())
        pq.write_table(pa.table({"source": sources, "error_kind": errors}), out_dir / f"part-{shard.key}.parquet")
        return ShardReport(shard.key, len(sources))


def source_writers(threads: int) -> SourceWriter:
    return SourceWriter()


def begun_and_resumed(tmp_path: Path, begun: str, folder: str, resumed: str, forget_names: bool = False) -> list[str]:
    """The ``source`` of every row of a run of ``w/dump`` (3 rows; ``w/linkdump`` links to it) begun in ``w`` naming
    the dump ``begun``, its second shard's part deleted and the run resumed in ``folder`` naming it ``resumed``, in
    the rows' order (``forget_names``: the run's record stripped of its inputs' names, as an earlier faim wrote it)."""
    (tmp_path / "w" / "dump").mkdir(parents=True)
    (tmp_path / "w" / "dump" / "a.jsonl").write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    (tmp_path / "w" / "linkdump").symlink_to("dump")
    (tmp_path / "elsewhere").mkdir()
    out = tmp_path / "out"

    def run(where: str, named: str) -> None:
        os.chdir(tmp_path / where)
        plan = plan_run({"files": {}, "tasks": []}, named, out, {}, 1, kinds=["text"])
        run_shards(source_writers, plan, out, workers=1, progress=False)

    run("w", begun)
    (out / "part-00000-000001.parquet").unlink()
    if forget_names:
        record = json.loads((out / "_run.json").read_text(encoding="utf-8"))
        record.pop("input_names", None)
        (out / "_run.json").write_text(json.dumps(record), encoding="utf-8")
    run(folder, resumed)
    return sorted(pq.read_table(out).column("source").to_pylist(), key=lambda source: source.rsplit(":")[-1])


@pytest.mark.parametrize(
    ("begun", "folder", "resumed"),
    [("dump", "elsewhere", "../w/dump/"), ("dump", ".", "./w/dump"), ("linkdump", "w", "dump")],
)
def test_a_run_resumed_naming_its_dump_otherwise_or_from_another_folder_names_its_files_as_the_run_began(
    begun: str, folder: str, resumed: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # put back once the test ends
    assert begun_and_resumed(tmp_path, begun, folder, resumed) == [f"{begun}/a.jsonl:{row}" for row in (1, 2, 3)]


def test_a_run_whose_record_names_no_inputs_is_resumed_naming_its_files_as_the_resume_is_given_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    sources = begun_and_resumed(tmp_path, "dump", ".", "./w/dump", forget_names=True)
    assert sources == ["dump/a.jsonl:1", "w/dump/a.jsonl:2", "dump/a.jsonl:3"]


@pytest.mark.parametrize("first", ["[\n", ' [{"text": "a"},\n'])
def test_a_json_lines_input_holding_a_json_array_spread_over_lines_is_refused_before_any_row_is_scored(
    first: str, tmp_path: Path
) -> None:
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    array = tmp_path / "dump" / "b.json"
    array.write_text(f'\n{first}  {{"text": "b"}}\n]\n', encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{re.escape(str(array))}: holds a JSON array spread over lines"):
        plan_run({"files": {}, "tasks": []}, tmp_path / "dump", tmp_path / "out", {}, 1, kinds=["text"])
    array.write_text('[{"text": "b"}]\n', encoding="utf-8")  # on one line: a row, its error saying what it holds
    plan_run({"files": {}, "tasks": []}, tmp_path / "dump", tmp_path / "out", {}, 1, kinds=["text"])


class StoppedWriter(OneRowWriter):
    """A scorer stopped (Ctrl-C) at its first shard."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        raise KeyboardInterrupt


def test_a_run_stopped_while_scoring_warns_of_the_inputs_read_so_far_holding_no_row_before_it_ends(
    tmp_path: Path,
) -> None:
    empty, dump = tmp_path / "empty.jsonl", tmp_path / "dump.jsonl"
    empty.write_text("", encoding="utf-8")
    dump.write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    identity = {"model": {}, "tasks": [], "inputs": [], "settings": {}}
    plan = RunPlan([empty, dump], 3, 1, identity, ColumnMap(), ("text",))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(KeyboardInterrupt):
            run_shards(lambda threads: StoppedWriter(), plan, tmp_path / "out", workers=1, progress=False)
        said = [str(warning.message) for warning in caught if "holds no row" in str(warning.message)]
    assert len(said) == 1 and said[0].startswith(f"{empty}: holds no row")


def test_a_run_stopped_while_scoring_with_warnings_made_errors_ends_stopped_not_on_the_warning(tmp_path: Path) -> None:
    empty, dump = tmp_path / "empty.jsonl", tmp_path / "dump.jsonl"
    empty.write_text("", encoding="utf-8")
    dump.write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    identity = {"model": {}, "tasks": [], "inputs": [], "settings": {}}
    plan = RunPlan([empty, dump], 3, 1, identity, ColumnMap(), ("text",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(KeyboardInterrupt):
            run_shards(lambda threads: StoppedWriter(), plan, tmp_path / "out", workers=1, progress=False)


class DyingWriter(OneRowWriter):
    """A scorer whose spawned worker processes are killed (``SIGKILL``, as the system's out-of-memory killer ends
    one) at their first shard; the main process's own reports each shard as one row."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        if multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return super().write(shard, out_dir)


def dying_writers(threads: int) -> DyingWriter:
    return DyingWriter()


def test_a_worker_that_dies_is_one_error_saying_what_is_kept_and_that_a_rerun_resumes(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(f'{{"text": "post {n}"}}\n' for n in range(3)), encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    out = tmp_path / "out"
    with pytest.raises(ChildProcessError) as error:
        run_shards(dying_writers, plan, out, workers=2, progress=False)
    said = (
        r"a scoring worker process ended without finishing its shard \(killed by a signal or by the system when "
        r"memory runs out, or failed as it started: see any error printed above\); "
        rf"at least \d rows \(\d parts\) are scored and kept in {re.escape(str(out))}: once the cause is mended, the "
        r"same command scores the rest, no row twice$"
    )
    assert re.match(said, str(error.value)), str(error.value)


def unmade_in_workers(threads: int) -> OneRowWriter:
    """A scorer the main process makes and a spawned worker cannot (as one opening a graph its onnxruntime cannot)."""
    if multiprocessing.parent_process() is not None:
        raise ValueError("fusion.onnx: onnxruntime cannot open this graph")
    return OneRowWriter()


def test_a_worker_that_cannot_make_its_scorer_stops_the_run_on_that_error_printing_no_traceback(
    tmp_path: Path, capfd: pytest.CaptureFixture
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(f'{{"text": "post {n}"}}\n' for n in range(3)), encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    with pytest.raises(ValueError, match="^fusion.onnx: onnxruntime cannot open this graph$"):
        run_shards(unmade_in_workers, plan, tmp_path / "out", workers=2, progress=False)
    assert "Traceback" not in capfd.readouterr().err


class SecondShardStoppedWriter(OneRowWriter):
    """A scorer stopped (Ctrl-C) at its second shard, having scored the first."""

    def __init__(self) -> None:
        self.shards = 0

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        self.shards += 1
        if self.shards == 2:
            raise KeyboardInterrupt
        return super().write(shard, out_dir)


def test_a_summary_counts_one_shard_and_one_part_in_the_singular() -> None:
    summary = runner.ScoreSummary(3, rows_this_run=1, seconds=1, output="out", shards=1, resumed_shards=1, workers=1)
    assert summary.format() == (
        "rows: 3  errors: 0 (none)\n"
        "throughput: 1.0 rows/s over 1.0 s (1 shard done by an earlier run); 0.0 rows/s while 1 worker scored\n"
        "output: out (1 Parquet part)"
    )


def test_a_summary_quotes_its_output_folder_to_be_pasted_into_a_shell() -> None:
    said = runner.ScoreSummary(output="my scores", shards=2).format()
    assert said.endswith(f"output: {shell_path('my scores')} (2 Parquet parts)")


def test_a_stopped_run_says_what_it_keeps_and_that_the_same_command_scores_the_rest(tmp_path: Path) -> None:
    dump, out = tmp_path / "dump.jsonl", tmp_path / "out"
    dump.write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    with pytest.raises(KeyboardInterrupt) as stopped:
        run_shards(lambda threads: SecondShardStoppedWriter(), plan, out, workers=1, progress=False)
    assert (
        str(stopped.value)
        == f"at least 1 row (1 part) is scored and kept in {out}: the same command scores the rest, no row twice"
    )


@pytest.mark.parametrize(("scores", "named"), [(True, "scoring"), (False, "embedding")])
def test_the_progress_bar_says_what_the_run_writes(
    scores: bool, named: str, tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, capsys
) -> None:
    score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "out", workers=1, scores=scores, embeddings=True)
    assert re.findall(r"(scoring|embedding):", capsys.readouterr().err)[-1] == named


class LimitWriter(OneRowWriter):
    """A scorer that notes, in the output folder, the decompression-bomb limit its process decodes pictures with."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        (out_dir / f"limit-{os.getpid()}-{Image.MAX_IMAGE_PIXELS}").touch()
        time.sleep(0.5)  # so the other scorer takes the other shards
        return super().write(shard, out_dir)


def limit_writers(threads: int) -> LimitWriter:
    return LimitWriter()


@pytest.mark.parametrize("limit", [1234, None])
def test_every_scoring_process_decodes_with_the_pixel_limit_of_the_process_that_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: int | None
) -> None:
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", limit)
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(f'{{"text": "post {n}"}}\n' for n in range(6)), encoding="utf-8")
    plan = RunPlan([dump], 6, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap())
    run_shards(limit_writers, plan, tmp_path / "out", workers=2, progress=False)
    noted = [path.name.split("-") for path in (tmp_path / "out").glob("limit-*")]
    assert len({pid for _, pid, _ in noted}) == 2 and {value for _, _, value in noted} == {str(limit)}


def test_a_run_records_a_pixel_limit_other_than_pillows_and_a_resume_with_another_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n', encoding="utf-8")
    model = {"files": {}, "tasks": []}
    assert "max_image_pixels" not in plan_run(model, dump, tmp_path / "out", {}, kinds=["image"]).identity["settings"]
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    plan = plan_run(model, dump, tmp_path / "out", {}, kinds=["image"])
    assert plan.identity["settings"]["max_image_pixels"] is None
    run_shards(one_row_writers, plan, tmp_path / "out", workers=1, progress=False)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 5000)
    with pytest.raises(ValueError, match=r"settings differ: max_image_pixels null → 5000"):
        check_resumable(tmp_path / "out", plan_run(model, dump, tmp_path / "out", {}, kinds=["image"]).identity)


def test_a_run_reading_no_picture_records_no_pixel_limit_and_resumes_under_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump, out = tmp_path / "dump.jsonl", tmp_path / "out"
    dump.write_text('{"text": "a"}\n', encoding="utf-8")
    model = {"files": {}, "tasks": []}
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", None)
    plan = plan_run(model, dump, out, {}, kinds=["text"])
    assert "max_image_pixels" not in plan.identity["settings"]
    run_shards(one_row_writers, plan, out, workers=1, progress=False)
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 5000)
    check_resumable(out, plan_run(model, dump, out, {}, kinds=["text"]).identity)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    recorded["settings"]["max_image_pixels"] = None  # as faims recorded the limit of every run
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    check_resumable(out, plan_run(model, dump, out, {}, kinds=["text"]).identity)


def test_a_run_reading_json_lines_records_how_it_takes_lines_for_rows_and_one_begun_reading_them_otherwise_is_refused(
    tmp_path: Path,
) -> None:
    dump, table, out = tmp_path / "dump.jsonl", tmp_path / "dump.csv", tmp_path / "out"
    dump.write_text('{"text": "a"}\n\u00a0\n{"text": "b"}\n', encoding="utf-8")
    table.write_text("text\na\n", encoding="utf-8")
    model = {"files": {}, "tasks": []}
    assert "jsonl_lines" not in plan_run(model, table, out, {}, kinds=["text"]).identity["settings"]
    plan = plan_run(model, dump, out, {}, kinds=["text"])
    assert plan.identity["settings"]["jsonl_lines"] == JSONL_LINES
    run_shards(one_row_writers, plan, out, workers=1, progress=False)
    check_resumable(out, plan_run(model, dump, out, {}, kinds=["text"]).identity)
    recorded = json.loads((out / "_run.json").read_text(encoding="utf-8"))
    del recorded["settings"]["jsonl_lines"]  # as a faim reading a line of Unicode whitespace as a row recorded it
    (out / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"settings differ: jsonl_lines \(not set\) → {JSONL_LINES}"):
        check_resumable(out, plan_run(model, dump, out, {}, kinds=["text"]).identity)
    plain, elsewhere = tmp_path / "plain.jsonl", tmp_path / "elsewhere"  # no line the two faims read otherwise
    plain.write_text('{"text": "a"}\n \n{"text": "b"}\n', encoding="utf-8")
    begun = plan_run(model, plain, elsewhere, {}, kinds=["text"])
    run_shards(one_row_writers, begun, elsewhere, workers=1, progress=False)
    recorded = json.loads((elsewhere / "_run.json").read_text(encoding="utf-8"))
    del recorded["settings"]["jsonl_lines"]
    (elsewhere / "_run.json").write_text(json.dumps(recorded), encoding="utf-8")
    check_resumable(elsewhere, plan_run(model, plain, elsewhere, {}, kinds=["text"]).identity)


def test_a_run_reading_pictures_records_the_picture_decoding_and_a_resume_decoding_otherwise_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n', encoding="utf-8")
    model, out = {"files": {}, "tasks": []}, tmp_path / "out"
    assert "image_decoding" not in plan_run(model, dump, out, {}, kinds=["text"]).identity["settings"]
    plan = plan_run(model, dump, out, {}, kinds=["image", "text"])
    assert plan.identity["settings"]["image_decoding"] == IMAGE_DECODING
    run_shards(one_row_writers, plan, out, workers=1, progress=False)
    check_resumable(out, plan_run(model, dump, out, {}, kinds=["image", "text"]).identity)
    monkeypatch.setattr(runner, "IMAGE_DECODING", IMAGE_DECODING + 1)
    with pytest.raises(ValueError) as refused:
        check_resumable(out, plan_run(model, dump, out, {}, kinds=["image", "text"]).identity)
    assert str(refused.value) == (
        f"{out} holds another scoring run (its pictures were decoded otherwise: by picture decoding {IMAGE_DECODING} "
        f"of faim {__version__}, where this faim decodes by picture decoding {IMAGE_DECODING + 1}); write to a new "
        "folder, or pass --overwrite (overwrite=True) to start afresh, or finish the run with the faim that began it "
        f"(faim {__version__})"
    )


def test_the_columns_no_mapping_reads_are_named_in_the_dumps_order_whichever_shard_finished_first(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = tmp_path / "dump.jsonl", tmp_path / "out"
    rows = [{"id": str(n), "text": f"post {n}", "zeta" if n < 2 else "alpha": 1} for n in range(4)]
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=2, progress=False)
    manifest = out / "_manifest.jsonl"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    manifest.write_text("".join(line + "\n" for line in reversed(lines)), encoding="utf-8")  # the second done first
    again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=2, progress=False)
    assert again.rows_this_run == 0 and again.held is not None and again.held.unread == ("zeta", "alpha")


@pytest.mark.parametrize(("name", "encoding"), [("b.csv", "utf-16"), ("b.tsv", "utf-16-be"), ("b.jsonl", "utf-16")])
def test_a_text_input_written_as_utf16_is_refused_before_any_row_is_scored(name: str, encoding: str, tmp_path) -> None:
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / "a.jsonl").write_text('{"text": "a"}\n', encoding="utf-8")
    written = tmp_path / "dump" / name
    sep = "," if name.endswith(".csv") else "\t"
    text = '{"text": "b"}\n' if name.endswith(".jsonl") else f"id{sep}text\n1{sep}b\n"
    written.write_bytes(("\ufeff" if encoding == "utf-16-be" else "").encode(encoding) + text.encode(encoding))
    said = f"{written}: holds UTF-16 text (its byte order mark says so), where faim reads UTF-8: save it as UTF-8"
    with pytest.raises(ValueError, match=f"^{re.escape(said)}"):
        plan_run({"files": {}, "tasks": []}, tmp_path / "dump", tmp_path / "out", {}, 1, kinds=["text"])


def test_a_run_keys_its_shards_with_the_digits_it_began_with_so_its_resume_scores_each_row_once(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump, out = tmp_path / "dump.jsonl", tmp_path / "out"
    dump.write_text("".join(json.dumps({"id": f"p{i}", "text": f"post {i}"}) + "\n" for i in range(60)))
    with monkeypatch.context() as patched:  # the digits a dump of 100,000 files and a million shards a file takes
        patched.setattr(runner, "key_widths", lambda rows, shard_rows: (6, 7))
        score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=25, progress=False)
    names = [f"part-000000-000000{shard}.parquet" for shard in range(3)]
    assert sorted(part.name for part in out.glob("part-*")) == names
    (out / names[1]).unlink()  # lost: scored again by the resume, which keys as the run began
    again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=25, progress=False)
    assert again.rows_this_run == 25 and sorted(part.name for part in out.glob("part-*")) == names
    assert pq.read_table(out, columns=["id"]).column("id").to_pylist() == [f"p{i}" for i in range(60)]
    score_dump(tiny_model_dir, dump, tmp_path / "new", workers=1, shard_rows=25, progress=False)
    assert json.loads((tmp_path / "new" / "_run.json").read_text())["shard_key_widths"] == [5, 6]
