"""``score_dump``: stream a dump through a model into Parquet parts, in parallel, resumably.

The main process reads raw rows and cuts shards; worker processes (started with ``spawn``, the model
loaded once per worker) and a scoring thread of the main process itself parse, decode images, tokenise
and run the model, each writing one Parquet part per shard, with ``torch`` threads set so scoring
processes × threads = cores. The main process scores too because a spawned worker spends several
core-seconds importing torch and transformers before its first shard (seven on a 2.8 GHz Xeon) while
the main process has them already: it scores from its first second, and one core less goes to start-up.
Each scorer has one shard at a time, so memory stays flat however large the dump and no scorer idles
at the end while another still has shards queued.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import torch
from tqdm.auto import tqdm

from faim.data.inputs import find_inputs
from faim.detector import Detector
from faim.scoring.inputs import Shard, count_rows, read_shards
from faim.scoring.manifest import Manifest, run_identity
from faim.scoring.optimize import WORKER_ENVIRONMENT, ScoringOptions
from faim.scoring.pool_parts import PoolingReport, pool_parts
from faim.scoring.ray_engine import run_ray
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
    pooling: PoolingReport | None = None

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
            + (f"\n{self.pooling.format()}" if self.pooling else "")
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
    atexit.register(_exit_without_teardown)
    _scorer = ShardScorer.from_artifact(model_dir, threads=threads, **kwargs)


def _exit_without_teardown() -> None:
    """End a worker at once when the pool shuts down: every part it wrote is already on disk, and tearing
    down an interpreter holding torch, transformers and timm takes over a second, which the pool waits for."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


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
    batch_size: int = 16,
    shard_rows: int | None = None,
    options: ScoringOptions | None = None,
    scores: bool = True,
    embeddings: bool = False,
    engine: str = "embedded",
    progress: bool = True,
    overwrite: bool = False,
    device: str = "cpu",
    pool_by_image: bool = False,
) -> ScoreSummary:
    """Score every row of a dump into Parquet parts under ``out``; rerun the same call to resume.

    Args:
        model: A model directory, or a ``Detector`` built from a recipe (saved to a temporary directory).
        source: A JSONL/CSV/TSV/Parquet file, a saved Hugging Face dataset folder, a folder of them, or a glob
            (``faim.data.inputs``).
        out: Output folder: ``part-*.parquet`` (read it whole with ``pyarrow.parquet.read_table(out)``).
        columns: Column mapping, as in a recipe's ``data.columns``.
        image_root: Directory relative image paths resolve against (default: each file's folder).
        workers: Processes that score, this one included (default: one per core, one torch thread each);
            1 scores in this process only. With ``engine="ray"``: Ray actors (default: one per CPU).
        batch_size: Posts per forward pass. 16 keeps a batch's activations small enough for the caches
            and for the allocator to reuse: MiniLM + EfficientNet-Lite0 on one core took 37 ms per post at
            16 against 42 (worker processes) to 56 (this process) at 64.
        shard_rows: Rows per shard (per part file, and per unit of restart); default: a thirty-second of
            the dump, between 32 and 1024 rows, so small dumps still spread evenly over the workers.
        options: Speed-ups; default ``ScoringOptions()``; ``ScoringOptions.exact()`` matches ``Detector.score``.
        scores: Write per-task scores and decisions.
        embeddings: Write whole-post embeddings.
        engine: ``"embedded"`` (this machine) or ``"ray"`` (Ray Data; needs ``faim-sdk[ray]``).
        progress: Show a progress bar with rows/s and ETA.
        overwrite: Delete an earlier run's parts in ``out`` instead of resuming it.
        device: Where workers run the model: ``"cpu"`` or ``"cuda"`` (each embedded worker, or each Ray actor
            with one GPU of its own, ``num_gpus=1``); decoding and preprocessing stay on CPU cores.
        pool_by_image: Score the dump's posts together, as evaluation pools them (a recipe with
            ``eval.pool_by_image``): each post takes the mean logits of every post in the dump whose picture is a
            near-duplicate of its own, under the pooled calibration, and gains ``picture_group``. A second pass
            once every row is scored (``faim.scoring.pool_parts``); each post's own scores, logits and picture
            embedding stay in ``out/_per_post``. Pictures are read even when the heads do not see them.

    Raises:
        ValueError: On bad arguments, a model that cannot pool, or ``out`` holding another run.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    check_device(device)
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1 (this process alone), got {workers}")
    if pool_by_image and not scores:
        raise ValueError("pool_by_image pools scores: it cannot be used when only embeddings are written")
    options = options or ScoringOptions()
    cores = available_cores()
    threads = max(1, cores // (workers or cores))
    out_dir = Path(out)
    files = find_inputs(source)
    total = sum(count_rows(f) for f in files)
    shard_rows = shard_rows or min(1024, max(32, -(-total // 32)))
    settings = {"columns": columns, "image_root": image_root, "shard_rows": shard_rows, "options": options.to_dict(),
                "scores": scores, "embeddings": embeddings}  # fmt: skip
    if pool_by_image:  # named only when set: the identity of a run that does not pool stays what it was
        settings["pool_by_image"] = True
    scorer_kwargs = {"columns": columns, "image_root": image_root, "options": options, "batch_size": batch_size,
                     "scores": scores, "embeddings": embeddings, "device": device,
                     "pool_by_image": pool_by_image}  # fmt: skip
    with model_directory(model) as model_dir:
        detector = None
        if pool_by_image:
            detector = model if isinstance(model, Detector) else Detector.load(model_dir)
            detector.check_pooling()  # refused before any row is scored
        manifest = Manifest(out_dir, run_identity(model_dir, files, settings), overwrite, per_post=pool_by_image)
        parts_dir = manifest.parts_dir
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
                reports = run_ray(str(model_dir), pending, parts_dir, workers, scorer_kwargs)
            else:
                reports = _run_embedded(str(model_dir), pending, parts_dir, workers or cores, threads, scorer_kwargs)
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
        if detector is not None:
            summary.pooling = pool_parts(detector, parts_dir, out_dir, progress)
        summary.seconds = time.perf_counter() - start
        summary.workers = len(processes)
    summary.rows = sum(report.rows for report in manifest.done.values())
    summary.shards = len(manifest.done)
    for report in manifest.done.values():
        summary.errors.update(report.errors)
    return summary


class LocalScorer:
    """The main process's own ``ShardScorer``, loaded at its first shard, run from a thread of its own with
    ``threads`` torch threads. Torch applies a thread count to the thread that sets it and to threads that
    first use torch later, so ``close`` sets the caller's count back."""

    def __init__(self, model_dir: str, threads: int, kwargs: dict[str, Any]) -> None:
        self.model_dir, self.threads, self.kwargs = model_dir, threads, kwargs
        self.caller_threads = torch.get_num_threads()
        self.scorer: ShardScorer | None = None

    def write(self, shard: Shard, out_dir: str) -> ShardReport:
        if self.scorer is None:
            self.scorer = ShardScorer.from_artifact(self.model_dir, threads=self.threads, **self.kwargs)
        return self.scorer.write(shard, Path(out_dir))

    def close(self) -> None:
        torch.set_num_threads(self.caller_threads)


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


def _run_embedded(
    model_dir: str, shards: Iterator[Shard], out_dir: Path, workers: int, threads: int, kwargs: dict[str, Any]
) -> Iterator[ShardReport]:
    """Score ``shards`` in ``workers - 1`` spawned worker processes and a thread of this process, one shard
    per scorer at a time; yield each shard's report as it finishes."""
    local = LocalScorer(model_dir, threads, kwargs)
    with ExitStack() as stack:
        stack.callback(local.close)
        lanes: list[tuple[Callable[[Shard, str], Future], int]] = []  # (submit, shards in flight at most)
        executors: list[Executor] = []
        if workers > 1:  # first, so the workers start while this process loads its own model
            stack.enter_context(worker_environment())
            pool = ProcessPoolExecutor(
                workers - 1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_worker,
                initargs=(model_dir, threads, kwargs),
            )
            executors.append(stack.enter_context(pool))
            lanes.append((partial(pool.submit, _score_in_worker), workers - 1))
        here = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="faim-scorer"))
        executors.append(here)
        lanes.append((partial(here.submit, local.write), 1))
        in_flight: dict[Future, int] = {}  # each shard's future -> index of the lane scoring it
        try:
            for shard in shards:
                while not (free := _free_lanes(lanes, in_flight)):
                    yield from _finished(in_flight, block=True)
                submit, _ = lanes[free[0]]
                in_flight[submit(shard, str(out_dir))] = free[0]
                yield from _finished(in_flight, block=False)
            while in_flight:
                yield from _finished(in_flight, block=True)
        except BaseException:
            for executor in executors:
                executor.shutdown(wait=False, cancel_futures=True)
            raise


def _free_lanes(lanes: list[tuple[Callable, int]], in_flight: dict[Future, int]) -> list[int]:
    busy = Counter(in_flight.values())
    return [index for index, (_, capacity) in enumerate(lanes) if busy[index] < capacity]


def _finished(in_flight: dict[Future, int], block: bool) -> Iterator[ShardReport]:
    """Reports of the shards that have finished (``block``: waiting for at least one)."""
    done, _ = wait(in_flight, timeout=None if block else 0, return_when=FIRST_COMPLETED)
    for future in done:
        del in_flight[future]
        yield future.result()
