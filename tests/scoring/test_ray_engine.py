"""The Ray Data engine writes the same rows and scores as the embedded engine, fed a window at a time."""

from __future__ import annotations

import signal
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import pooling_detector

from faim.data.columns import ColumnMap
from faim.eval.benchmark_runs import write_dump
from faim.notices import FaimWarning
from faim.scoring import ray_engine
from faim.scoring.engine import score_dump
from faim.scoring.inputs import Shard
from faim.scoring.options import ScoringOptions
from faim.scoring.report import ShardReport
from faim.scoring.runner import RunPlan, run_shards

ray = pytest.importorskip("ray", reason="Ray Data is an optional extra (faim-sdk[ray])")
pytest.importorskip("ray.data", reason="Ray Data is an optional extra (faim-sdk[ray])")


def test_windows_group_shards_by_rows_and_read_the_stream_lazily() -> None:
    read = []

    def shards():
        for index, size in enumerate([3, 3, 3, 5, 1, 2]):
            read.append(index)
            yield Shard(f"00000-{index:06d}", "dump.jsonl", "jsonl", None, [(row, b"{}") for row in range(size)])

    groups = ray_engine.windows(shards(), rows=6)
    first = next(groups)
    assert [shard.key[-1] for shard in first] == ["0", "1"] and read == [0, 1]
    assert [[shard.size for shard in window] for window in groups] == [[3, 5], [1, 2]]


class EmptyPartWriter:
    """A scorer that writes an empty part for each shard (a finished shard) and reports it as one row."""

    device = "cpu"

    def __call__(self, threads: int) -> EmptyPartWriter:
        return self

    def write(self, shard: Shard, out_dir: Path) -> ShardReport:
        pq.write_table(pa.table({"error_kind": pa.array([], pa.string())}), out_dir / f"part-{shard.key}.parquet")
        return ShardReport(shard.key, 1)

    def close(self) -> None:
        pass


def test_a_rerun_of_a_finished_run_on_ray_ends_without_starting_ray(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "dump.jsonl"
    dump.write_text('{"text": "a"}\n' * 3, encoding="utf-8")
    plan = RunPlan([dump], 3, 1, {"model": {}, "tasks": [], "inputs": [], "settings": {}}, ColumnMap(), ("text",))
    out = tmp_path / "out"
    assert run_shards(EmptyPartWriter(), plan, out, workers=1, progress=False).rows == 3  # the embedded engine

    def refused() -> None:
        raise AssertionError("Ray started with no shard to score")

    monkeypatch.setattr(ray_engine, "running_ray", refused)
    again = run_shards(EmptyPartWriter(), plan, out, workers=1, progress=False, engine="ray")
    assert (again.rows, again.shards, again.resumed_shards) == (3, 3, 3)
    assert list(ray_engine.run_ray(EmptyPartWriter(), iter([]), out, None, {})) == []  # nothing to score: no Ray


@pytest.mark.parametrize(
    ("gpus", "actors", "said"),
    [(None, 2, "2 actors, one per CPU Ray has (2)"), (1, 1, "1 actor, one per GPU Ray has (1)")],
)
def test_fewer_actors_than_workers_asked_for_are_warned_of_saying_how_many_and_why(
    gpus: int | None, actors: int, said: str
) -> None:
    with pytest.warns(FaimWarning) as caught:
        assert ray_engine.actor_count(4, cpus=2, gpus=gpus) == actors
    assert [str(warning.message) for warning in caught] == [f"4 workers asked for: Ray runs {said}"]


def test_the_actors_asked_for_or_one_per_cpu_run_without_a_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [ray_engine.actor_count(workers, cpus=2) for workers in (1, 2, None)] == [1, 2, 2]


def test_a_run_on_gpus_where_a_ray_started_here_has_none_is_refused_and_on_a_cluster_waits_for_one() -> None:
    with pytest.raises(ValueError, match="^--device cuda: Ray has no GPU to run an actor on$"):
        ray_engine.actor_count(None, cpus=2, gpus=0)
    assert ray_engine.actor_count(None, cpus=2, gpus=0, local=False) == 1  # a cluster may add a GPU node when asked


@pytest.mark.slow
def test_ray_engine_matches_embedded_engine(tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path) -> None:
    exact = ScoringOptions.exact()
    score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "here", workers=1, options=exact, progress=False)
    summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "ray", workers=1, options=exact,
                         engine="ray", progress=False)  # fmt: skip
    here = {r["id"]: r["harmful"] for r in pq.read_table(tmp_path / "here").to_pylist()}
    ray_rows = {r["id"]: r["harmful"] for r in pq.read_table(tmp_path / "ray").to_pylist()}
    assert summary.rows == len(here) == len(ray_rows) == 160
    assert max(abs(here[k] - ray_rows[k]) for k in here) < 1e-6


@pytest.mark.slow
def test_ray_engine_scores_every_row_once_across_windows(
    tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_engine, "WINDOW_ROWS", 50)  # 160 rows in shards of 20: windows of 60, 60, 40
    summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "ray", workers=1, shard_rows=20,
                         options=ScoringOptions.exact(), engine="ray", progress=False)  # fmt: skip
    ids = [row["id"] for row in pq.read_table(tmp_path / "ray", columns=["id"]).to_pylist()]
    assert summary.rows == len(ids) == len(set(ids)) == 160
    assert not ray.is_initialized()  # the Ray it started is shut down


@pytest.mark.slow
def test_a_ray_the_caller_started_stays_up(tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path) -> None:
    held = signal.getsignal(signal.SIGTERM)
    ray.init(include_dashboard=False, log_to_driver=False)
    try:
        summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "ray", workers=1, engine="ray",
                             options=ScoringOptions.exact(), progress=False)  # fmt: skip
        assert summary.rows == 160 and ray.is_initialized()
    finally:
        ray.shutdown()
        signal.signal(signal.SIGTERM, held)  # ray.init's handler, which its shutdown leaves, outlives no test


@pytest.mark.slow
def test_ray_engine_pools_by_picture_as_the_embedded_engine(demo_data: dict[str, Path], tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    dump = write_dump(posts, tmp_path / "dump.jsonl")
    exact = ScoringOptions.exact()
    for engine in ("embedded", "ray"):
        score_dump(detector, dump, tmp_path / engine, workers=1, options=exact, engine=engine, progress=False,
                   pool_by_image=True)  # fmt: skip
    here, ray_rows = (pq.read_table(tmp_path / engine).to_pylist() for engine in ("embedded", "ray"))
    assert [row["id"] for row in here] == [row["id"] for row in ray_rows] and len(here) == 160
    assert max(abs(a["harmful"] - b["harmful"]) for a, b in zip(here, ray_rows)) < 1e-6
    assert [row["picture_group"] for row in here] == [row["picture_group"] for row in ray_rows]


def test_a_ray_started_here_leaves_sigterm_to_the_handler_set_before_it() -> None:
    def stop(signum: int, frame: object) -> None:  # faim score's, which stops the run as Ctrl-C does
        raise KeyboardInterrupt

    for held in (stop, signal.SIG_IGN):  # faim score's handler; an application ignoring SIGTERM
        previous = signal.signal(signal.SIGTERM, held)
        try:
            with ray_engine.running_ray() as (_, started_here):
                assert started_here
                assert signal.getsignal(signal.SIGTERM) == held  # not Ray's, which aborted the run with a stack trace
        finally:
            signal.signal(signal.SIGTERM, previous)
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    with ray_engine.running_ray():  # no handler of the process's: Ray's is kept, which ends Ray's processes with it
        assert callable(signal.getsignal(signal.SIGTERM))
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL  # Ray's handler outlives no Ray
