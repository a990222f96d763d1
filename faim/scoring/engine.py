"""``score_dump``: stream a dump through a model into Parquet parts, in parallel, resumably.

The main process only reads raw rows and cuts shards; a pool of worker processes (started with
``spawn``, the model loaded once per worker, ``torch`` threads set so workers × threads = cores)
parses, decodes images, tokenises and runs the model, and writes one Parquet part per shard. At most
two shards per worker are in flight, so memory stays flat however large the dump.
"""

from __future__ import annotations

import multiprocessing
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from faim.detector import Detector
from faim.scoring.inputs import Shard, count_rows, find_inputs, read_shards
from faim.scoring.manifest import Manifest, run_identity
from faim.scoring.optimize import WORKER_ENVIRONMENT, ScoringOptions
from faim.scoring.worker import ShardReport, ShardScorer

ENGINES = ("embedded", "ray")


@dataclass
class ScoreSummary:
    """What a scoring run did (counting shards finished by earlier, interrupted runs too)."""

    rows: int = 0
    errors: Counter = field(default_factory=Counter)
    rows_this_run: int = 0
    seconds: float = 0.0
    output: str = ""
    shards: int = 0
    resumed_shards: int = 0
    workers: int = 0
    scoring_seconds: float = 0.0

    @property
    def rows_per_second(self) -> float:
        """Rows of this run per wall-clock second, worker start-up included."""
        return self.rows_this_run / self.seconds if self.seconds else 0.0

    @property
    def rows_per_second_scoring(self) -> float:
        """Rows per second while the workers were scoring: start-up and idle time left out (``scoring_seconds``
        is the time this run's ``workers`` processes spent on its shards, summed)."""
        return self.rows_this_run * self.workers / self.scoring_seconds if self.scoring_seconds else 0.0

    def format(self) -> str:
        errors = ", ".join(f"{kind}: {n}" for kind, n in self.errors.most_common()) or "none"
        resumed = f" ({self.resumed_shards} shards done by an earlier run)" if self.resumed_shards else ""
        return (
            f"rows: {self.rows}  errors: {sum(self.errors.values())} ({errors})\n"
            f"throughput: {self.rows_per_second:.1f} rows/s over {self.seconds:.1f} s{resumed}; "
            f"{self.rows_per_second_scoring:.1f} rows/s while {self.workers} worker(s) scored\n"
            f"output: {self.output} ({self.shards} Parquet parts)"
        )


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_device(device: str) -> None:
    """Raise ``ValueError`` unless ``device`` names a CPU or an available CUDA device."""
    try:
        kind = torch.device(device).type
    except RuntimeError as error:
        raise ValueError(f"device {device!r}: {error}") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: no CUDA device is available to torch here")
    if kind not in ("cpu", "cuda"):
        raise ValueError(f"device {device!r}: scoring runs on 'cpu' or 'cuda'")


@contextmanager
def model_directory(model: Detector | str | Path) -> Iterator[Path]:
    """A model directory workers can load: the path given, or the detector saved to a temporary one."""
    if not isinstance(model, Detector):
        yield Path(model)
        return
    with tempfile.TemporaryDirectory(prefix="faim-model-") as directory:
        model.save(str(Path(directory) / "model"))
        yield Path(directory) / "model"


_scorer: ShardScorer | None = None


def _start_worker(model_dir: str, threads: int, kwargs: dict[str, Any]) -> None:
    global _scorer
    _scorer = ShardScorer.from_artifact(model_dir, threads=threads, **kwargs)


def _score_in_worker(shard: Shard, out_dir: str) -> ShardReport:
    assert _scorer is not None, "worker was not initialised"
    return _scorer.write(shard, Path(out_dir))


def score_dump(
    model: Detector | str | Path,
    source: str | Path,
    out: str | Path,
    columns: dict | None = None,
    image_root: str | None = None,
    workers: int | None = None,
    batch_size: int = 64,
    shard_rows: int | None = None,
    options: ScoringOptions | None = None,
    scores: bool = True,
    embeddings: bool = False,
    engine: str = "embedded",
    progress: bool = True,
    overwrite: bool = False,
    device: str = "cpu",
) -> ScoreSummary:
    """Score every row of a dump into Parquet parts under ``out``; rerun the same call to resume.

    Args:
        model: A model directory, or a ``Detector`` built from a recipe (saved to a temporary directory).
        source: A JSONL/CSV/TSV/Parquet file, a folder of them, or a glob.
        out: Output folder: ``part-*.parquet`` (read it whole with ``pyarrow.parquet.read_table(out)``).
        columns: Column mapping, as in a recipe's ``data.columns``.
        image_root: Directory relative image paths resolve against (default: each file's folder).
        workers: Worker processes (default: all cores, one torch thread each); 0 scores in this process.
        batch_size: Posts per forward pass.
        shard_rows: Rows per shard (per part file, and per unit of restart); default: a sixteenth of the
            dump, between 32 and 1024 rows, so small dumps still spread over the workers.
        options: Speed-ups; default ``ScoringOptions()``; ``ScoringOptions.exact()`` matches ``Detector.score``.
        scores: Write per-task scores and decisions.
        embeddings: Write whole-post embeddings.
        engine: ``"embedded"`` (this machine) or ``"ray"`` (Ray Data; needs ``faim-sdk[ray]``).
        progress: Show a progress bar with rows/s and ETA.
        overwrite: Delete an earlier run's parts in ``out`` instead of resuming it.
        device: Where workers run the model: ``"cpu"`` or ``"cuda"`` (each embedded worker, or each Ray actor
            with one GPU of its own, ``num_gpus=1``); decoding and preprocessing stay on CPU cores.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_device(device)
    options = options or ScoringOptions()
    cores = available_cores()
    workers = cores if workers is None else workers
    threads = max(1, cores // max(1, workers))
    out_dir = Path(out)
    files = find_inputs(source)
    total = sum(count_rows(f) for f in files)
    shard_rows = shard_rows or min(1024, max(32, -(-total // 16)))
    settings = {"columns": columns, "image_root": image_root, "shard_rows": shard_rows, "options": options.to_dict(),
                "scores": scores, "embeddings": embeddings}  # fmt: skip
    scorer_kwargs = {"columns": columns, "image_root": image_root, "options": options, "batch_size": batch_size,
                     "scores": scores, "embeddings": embeddings, "device": device}  # fmt: skip
    with model_directory(model) as model_dir:
        manifest = Manifest(out_dir, run_identity(model_dir, files, settings), overwrite)
        summary = ScoreSummary(output=str(out_dir), resumed_shards=len(manifest.done))
        already = sum(report.rows for report in manifest.done.values())
        bar = tqdm(
            total=sum(count_rows(f) for f in files),
            initial=already,
            unit="row",
            desc="scoring",
            disable=not progress,
            smoothing=0.05,
        )
        pending = (shard for shard in read_shards(files, shard_rows) if shard.key not in manifest.done)
        start = time.perf_counter()
        try:
            if engine == "ray":
                from faim.scoring.ray_engine import run_ray

                reports = run_ray(str(model_dir), pending, out_dir, workers, scorer_kwargs)
            elif workers == 0:
                reports = _run_here(str(model_dir), pending, out_dir, threads, scorer_kwargs)
            else:
                reports = _run_pool(str(model_dir), pending, out_dir, workers, threads, scorer_kwargs)
            processes: set[int] = set()
            for report in reports:
                processes.add(report.worker)
                manifest.add(report)
                summary.rows_this_run += report.rows
                summary.scoring_seconds += report.seconds
                bar.update(report.rows)
        finally:
            bar.close()
            manifest.close()
        summary.seconds = time.perf_counter() - start
        summary.workers = len(processes)
    summary.rows = sum(report.rows for report in manifest.done.values())
    summary.shards = len(manifest.done)
    for report in manifest.done.values():
        summary.errors.update(report.errors)
    return summary


def _run_here(
    model_dir: str, shards: Iterator[Shard], out_dir: Path, threads: int, kwargs: dict[str, Any]
) -> Iterator[ShardReport]:
    scorer = ShardScorer.from_artifact(model_dir, threads=threads, **kwargs)
    for shard in shards:
        yield scorer.write(shard, out_dir)


@contextmanager
def worker_environment() -> Iterator[None]:
    """Processes started inside the block get ``WORKER_ENVIRONMENT`` (variables the user set win)."""
    added = {name: value for name, value in WORKER_ENVIRONMENT.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


def _run_pool(
    model_dir: str, shards: Iterator[Shard], out_dir: Path, workers: int, threads: int, kwargs: dict[str, Any]
) -> Iterator[ShardReport]:
    context = multiprocessing.get_context("spawn")
    with (
        worker_environment(),
        ProcessPoolExecutor(
            workers, mp_context=context, initializer=_start_worker, initargs=(model_dir, threads, kwargs)
        ) as pool,
    ):
        in_flight: set[Future] = set()
        try:
            for shard in shards:
                if len(in_flight) >= 2 * workers:
                    done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                    yield from (future.result() for future in done)
                in_flight.add(pool.submit(_score_in_worker, shard, str(out_dir)))
            while in_flight:
                done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                yield from (future.result() for future in done)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
