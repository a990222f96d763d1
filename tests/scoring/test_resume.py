"""A scoring run killed with SIGKILL and started again completes every row exactly once."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from faim.scoring.engine import score_dump


def text_dump(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": f"p{i}", "text": f"post number {i}"}) + "\n" for i in range(n)))
    return path


READS_PROCESS_TREE = pytest.mark.skipif(
    not Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").is_file(), reason="reads the process tree from /proc"
)


def said_what_is_kept(printed: str, stopped: str, out: Path) -> None:
    """Assert that a stopped run's stderr (``printed``) says how it was ``stopped``, what it keeps in ``out`` and that
    the same command scores the rest, without a traceback."""
    assert re.search(
        rf"faim: {stopped}: at least \d+ rows? \(\d+ parts?\) are scored and kept in {re.escape(str(out))}: "
        "the same command scores the rest, no row twice",
        printed,
    ), printed
    assert "Traceback" not in printed, printed


def score_command(model: Path, dump: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "faim", "score", str(model), str(dump), "-o", str(out),
            "--workers", "2", "--shard-rows", "25", "--batch-size", "5"]  # fmt: skip


def scoring_under_way(
    command: list[str], env: dict[str, str], out: Path, parts: int, stderr: Any = subprocess.DEVNULL
) -> subprocess.Popen:
    """``command`` started in a session of its own, taking Ctrl-C as a terminal's command would, once it has written
    ``parts`` parts into ``out`` (or two minutes have passed); its stderr goes to ``stderr``."""
    process = subprocess.Popen(command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=stderr,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip
    deadline = time.monotonic() + 120
    while len(list(out.glob("part-*.parquet"))) < parts and time.monotonic() < deadline:
        time.sleep(0.05)
    return process


@pytest.mark.slow
def test_killed_run_resumes_without_duplicates_or_gaps(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump, out = text_dump(tmp_path / "dump.jsonl", 1500), tmp_path / "out"
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    process = scoring_under_way(score_command(tiny_model_dir, dump, out), env, out, parts=5)
    os.killpg(process.pid, signal.SIGKILL)  # the main process and its workers, mid-run
    process.wait()
    parts_before = len(list(out.glob("part-*.parquet")))
    assert 5 <= parts_before < 60, "the kill should land mid-run"
    result = subprocess.run(score_command(tiny_model_dir, dump, out), env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "shards done by an earlier run" in result.stdout
    ids = pq.read_table(out, columns=["id"]).column("id").to_pylist()
    assert len(ids) == 1500 and set(ids) == {f"p{i}" for i in range(1500)}
    assert not list(out.glob(".part-*"))


def worker_processes(pid: int) -> list[int]:
    """The scoring workers process ``pid`` spawned (its children started by multiprocessing's spawn)."""
    children = (Path(f"/proc/{pid}/task") / task / "children" for task in os.listdir(f"/proc/{pid}/task"))
    pids = [int(child) for path in children for child in path.read_text().split()]
    return [child for child in pids if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes()]


def running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie no one reaped has)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def still_running(pids: list[int], seconds: float = 30) -> list[int]:
    """The processes of ``pids`` that have not ended after waiting up to ``seconds`` for them to."""
    deadline = time.monotonic() + seconds
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [pid for pid in pids if running(pid)]


def kill_what_is_left(process: subprocess.Popen, workers: list[int]) -> None:
    """End a scoring run's main ``process`` and its ``workers``, whatever a test saw of them."""
    for pid in [pid for pid in [process.pid, *workers] if running(pid)]:
        with contextlib.suppress(ProcessLookupError):  # it may end between the two
            os.kill(pid, signal.SIGKILL)
    process.wait()


@READS_PROCESS_TREE
def test_workers_end_when_the_run_that_started_them_is_killed(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump, out = text_dump(tmp_path / "dump.jsonl", 1500), tmp_path / "out"
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    process = scoring_under_way(score_command(tiny_model_dir, dump, out), env, out, parts=1)
    workers: list[int] = []
    try:
        workers = worker_processes(process.pid)
        assert workers, "the run should have a worker scoring"
        process.kill()  # the main process alone, as kill -9 PID does
        process.wait()
        assert not still_running(workers), "a worker outlived the run that started it"
    finally:
        kill_what_is_left(process, workers)


@READS_PROCESS_TREE
def test_ctrl_c_reaches_only_the_main_process_which_ends_the_run_and_its_workers(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = text_dump(tmp_path / "dump.jsonl", 1500), tmp_path / "out"
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        process = scoring_under_way(score_command(tiny_model_dir, dump, out), env, out, parts=1, stderr=stderr)
        workers: list[int] = []
        try:
            workers = worker_processes(process.pid)
            assert workers, "the run should have a worker scoring"
            for worker in workers:
                os.kill(worker, signal.SIGINT)  # what a terminal's Ctrl-C sends each process of the run
            time.sleep(1)
            assert all(running(worker) for worker in workers), "Ctrl-C ended a worker, not the run"
            os.killpg(process.pid, signal.SIGINT)
            assert process.wait(timeout=60) == 130
            assert not still_running(workers), "a worker outlived the interrupted run"
        finally:
            kill_what_is_left(process, workers)
        stderr.seek(0)
        printed = stderr.read()
    said_what_is_kept(printed, "interrupted", out)


@pytest.mark.slow
@READS_PROCESS_TREE
def test_sigterm_stops_a_run_as_ctrl_c_does_and_the_same_command_scores_the_rest_once(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump, out = text_dump(tmp_path / "dump.jsonl", 200), tmp_path / "out"
    env = os.environ | {"PYTHONWARNINGS": "ignore"}
    with (tmp_path / "stderr.txt").open("w+") as stderr:
        process = scoring_under_way(score_command(tiny_model_dir, dump, out), env, out, parts=2, stderr=stderr)
        workers: list[int] = []
        try:
            workers = worker_processes(process.pid)
            assert workers, "the run should have a worker scoring"
            os.killpg(process.pid, signal.SIGTERM)  # every process of the run, as systemd, Slurm and timeout send it
            assert process.wait(timeout=60) == -signal.SIGTERM  # ended by SIGTERM, as a killed process, not failed
            assert not still_running(workers), "a worker outlived the stopped run"
        finally:
            kill_what_is_left(process, workers)
        stderr.seek(0)
        printed = stderr.read()
    said_what_is_kept(printed, "stopped by SIGTERM", out)
    assert len(list(out.glob("part-*.parquet"))) < 8, "SIGTERM should land mid-run"
    summary = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=25, progress=False)  # the run, resumed
    assert summary.resumed_shards >= 2 and summary.rows == 200
    ids = pq.read_table(out, columns=["id"]).column("id").to_pylist()
    assert len(ids) == 200 and set(ids) == {f"p{i}" for i in range(200)}
    assert not list(out.glob(".part-*"))


def test_rerun_of_a_finished_run_scores_nothing(tiny_model_dir: Path, tmp_path: Path) -> None:
    dump, out = text_dump(tmp_path / "dump.jsonl", 60), tmp_path / "out"
    first = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=25, progress=False)
    again = score_dump(tiny_model_dir, dump, out, workers=1, shard_rows=25, progress=False)
    assert first.rows == again.rows == 60 and again.rows_this_run == 0 and again.resumed_shards == 3
    assert pq.read_table(out).num_rows == 60
    assert "throughput: no row scored by this run (3 shards done by an earlier run)\n" in again.format()
    assert "while 0 workers" not in again.format()


def test_an_output_folder_inside_the_dump_folder_is_not_read_back_as_input(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    text_dump(dump / "a.jsonl", 50)
    first = score_dump(tiny_model_dir, dump, dump / "scores", workers=1, progress=False)
    again = score_dump(tiny_model_dir, dump, dump / "scores", workers=1, progress=False)
    assert first.rows == again.rows == 50 and again.rows_this_run == 0
    assert pq.read_table(dump / "scores").num_rows == 50


def test_rerun_with_other_inputs_is_refused(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    score_dump(tiny_model_dir, text_dump(tmp_path / "a.jsonl", 10), out, workers=1, progress=False)
    gone_and_new = r"\(the inputs differ: .*a\.jsonl \(an input of the run, not found now.*, .*b\.jsonl \(not an input"
    with pytest.raises(ValueError, match=gone_and_new):
        score_dump(tiny_model_dir, text_dump(tmp_path / "b.jsonl", 10), out, workers=1, progress=False)
    summary = score_dump(tiny_model_dir, tmp_path / "b.jsonl", out, workers=1, progress=False, overwrite=True)
    assert summary.rows == 10
