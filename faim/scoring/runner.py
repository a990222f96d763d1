"""``run_shards``: stream a dump's shards through scorers into Parquet parts, in parallel, resumably.

What scores a shard is given as a ``Scorers``: a picklable recipe for one process's scorer (the saved model under
torch, ``faim.scoring.worker``; or an export under onnxruntime, ``faim.scoring.exported_worker``). This module
needs neither: a worker process imports only the module its ``Scorers`` comes from.

The main process reads raw rows and cuts shards; worker processes (started with ``spawn``, the model loaded once per
worker) and a scoring thread of the main process itself parse, decode images, tokenise and run the model, each
writing one Parquet part per shard, with threads set so scoring processes × threads = cores. The main process scores
too because a spawned torch worker spends several core-seconds importing torch and transformers before its first
shard (seven on a 2.8 GHz Xeon) while the main process has them already: it scores from its first second, and one
core less goes to start-up. Each scorer has one shard at a time, so memory stays flat however large the dump and no
scorer idles at the end while another still has shards queued.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from PIL import Image
from tqdm.auto import tqdm

from faim.data.columns import FIELD_OBJECTS, NAMED_OBJECTS, ColumnMap
from faim.data.images import IMAGE_DECODING, PILLOW_PIXELS
from faim.data.inputs import close_reading, find_inputs, input_format
from faim.data.sources import holds_objects, input_reading
from faim.data.tabular import JSONL_LINES, refuse_spread_json, refuse_utf16
from faim.notices import in_thread
from faim.registry import quiet_worker_warnings
from faim.scoring.inputs import Shard, count_rows, key_widths, read_shards
from faim.scoring.manifest import (
    DECODING,
    FIELD_OBJECTS_SETTING,
    JSONL_READING,
    PIXEL_LIMIT,
    Manifest,
    run_identity,
)
from faim.scoring.ray_engine import ray_module, run_ray
from faim.scoring.report import Held, ShardReport
from faim.scoring.rows import warn_unheld_at_first
from faim.wording import plural, shell_path

ENGINES = ("embedded", "ray")

WORKER_ENVIRONMENT = {"MALLOC_MMAP_THRESHOLD_": str(4 << 30), "MALLOC_TRIM_THRESHOLD_": str(4 << 30)}
"""Variables worker processes start with: glibc otherwise hands the large activation buffers of every image batch
back to the kernel and page-faults them in again at the next one, which cost 5 to 14 core-ms of system time per
image (EfficientNet-Lite0, batches of 16 to 64); keeping them in the heap takes that to zero."""


class ShardWriter(Protocol):
    """One process's scorer: writes a shard's part file and reports it."""

    def write(self, shard: Shard, out_dir: Path) -> ShardReport: ...

    def close(self) -> None:
        """Give back what loading changed in the calling process (called on the main process's scorer only)."""


class Scorers(Protocol):
    """A picklable recipe for a process's scorer, made once per process with its share of the cores; ``device``
    says where it computes (``"cpu"``, ``"cuda"``: a Ray actor then asks for a GPU)."""

    device: str

    def __call__(self, threads: int) -> ShardWriter: ...


class Reported(Protocol):
    def format(self) -> str: ...


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
    pooling: Reported | None = None
    held: Held | None = None
    """What the rows of every shard hold (``Held.of_all`` of the shards in the dump's order, so its unread columns are
    named in the order the dump holds them, however its shards finished); ``None`` where it is not known of some
    shard."""

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
        resumed = f" ({plural(self.resumed_shards, 'shard')} done by an earlier run)" if self.resumed_shards else ""
        throughput = (  # a rerun of a finished run scores no row, and no worker
            f"{self.rows_per_second:.1f} rows/s over {self.seconds:.1f} s{resumed}; "
            f"{self.rows_per_second_scoring:.1f} rows/s while {plural(self.workers, 'worker')} scored"
            if self.rows_this_run
            else f"no row scored by this run{resumed}"
        )
        return (
            f"rows: {self.rows}  errors: {sum(self.errors.values())} ({errors})\n"
            f"throughput: {throughput}\n"
            f"output: {shell_path(self.output)} ({plural(self.shards, 'Parquet part')})"
            + (f"\n{self.pooling.format()}" if self.pooling else "")
        )


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def check_run_arguments(
    workers: int | None, batch_size: int, shard_rows: int | None, engine: str, scores: bool, embeddings: bool
) -> None:
    """Refuse, before anything is read or written (a saved model exported for the run), a run writing neither
    ``scores`` nor ``embeddings``, an engine not in ``ENGINES`` or not installed (``ray``), or a count of scoring
    processes, posts per batch or rows per shard below 1 (``None``: its default).

    Raises:
        ValueError: Saying there is nothing to write, or naming the engine or the first such count.
        MissingExtra: Saying what to install for the engine.
    """
    if not (scores or embeddings):
        raise ValueError("scores and embeddings both off: nothing to write; ask for either or both")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "ray":
        ray_module()
    for name, count in (("workers", workers), ("batch_size", batch_size), ("shard_rows", shard_rows)):
        if count is not None and count < 1:
            raise ValueError(f"{name} must be at least 1, got {count}")


@dataclass(frozen=True)
class PixelLimited:
    """``scorers`` whose every process decodes pictures with one decompression-bomb limit (``max_image_pixels``,
    ``PIL.Image.MAX_IMAGE_PIXELS`` there), the limit of the process that runs the dump: a spawned worker or a Ray
    actor would start with Pillow's own, and a picture refused in one shard would be scored in another."""

    scorers: Scorers
    max_image_pixels: int | None

    @property
    def device(self) -> str:
        return self.scorers.device

    def __call__(self, threads: int) -> ShardWriter:
        Image.MAX_IMAGE_PIXELS = self.max_image_pixels
        return self.scorers(threads)


def picture_settings(kinds: Sequence[str]) -> dict[str, int | None]:
    """What decodes the pictures of a run reading ``kinds``, as its settings name it, for a run reading pictures
    (``image`` among them) alone: the version of faim's picture decoding (``faim.data.images.IMAGE_DECODING``), so
    that its resume under a faim decoding pictures to other pixels is refused
    (``faim.scoring.manifest.identity_differences``) rather than mixing shards decoded both ways, and, where it is
    not Pillow's own, the decompression-bomb limit of this process (``PIL.Image.MAX_IMAGE_PIXELS``), which every
    scorer of a run started here decodes with, so that a resume with another limit is refused. A run reading none
    records neither, as runs did before either was recorded, and its resume under another limit, which decodes no
    picture either, goes on."""
    if "image" not in kinds:
        return {}
    limit = Image.MAX_IMAGE_PIXELS
    return {DECODING: IMAGE_DECODING} | ({} if limit == PILLOW_PIXELS else {PIXEL_LIMIT: limit})


def line_settings(files: Sequence[Path]) -> dict[str, int]:
    """How a run reading ``files`` takes JSON Lines lines for rows, as its settings name it, for a run reading any JSON
    Lines file (``faim.data.tabular.JSONL_LINES``): its shards are cut by rows, so its resume under a faim taking
    other lines for rows is refused rather than leaving rows out or scoring them twice. A run reading none records
    nothing, as runs did before."""
    return {JSONL_READING: JSONL_LINES} if any(input_format(file) == "jsonl" for file in files) else {}


def object_settings(files: Sequence[Path], columns: ColumnMap) -> dict[str, int]:
    """How a run reading ``files`` with the mapping ``columns`` reads a labels or meta column holding a mapping, as
    its settings name it, for a run reading either (``ColumnMap.objects``) from a file whose cells may hold one (not CSV
    or TSV, whose cells are text): ``faim.data.columns.NAMED_OBJECTS`` where the mapping names some of the column's
    tasks or meta fields and an input holds the column (``faim.data.sources.holds_objects``), whose others faim before
    read none of; otherwise, as faim before recorded it, ``FIELD_OBJECTS`` where the mapping leaves one of the two
    unnamed, so that a run it began over inputs read alike resumes. Its resume under a faim reading such a column
    otherwise is refused rather than scoring some rows with the fields it holds and some without. Any other run
    records nothing, as runs did before."""
    reading = input_reading(files, columns)
    named = [field for field in reading.objects if getattr(reading, field)]
    if named and any(holds_objects(file, named) for file in files):
        return {FIELD_OBJECTS_SETTING: NAMED_OBJECTS}
    return {FIELD_OBJECTS_SETTING: FIELD_OBJECTS} if len(named) < len(reading.objects) else {}


@dataclass(frozen=True)
class RunPlan:
    """What a run reads and what it is: its input files, their rows, the rows per shard, its identity (recorded
    in the output folder; ``faim.scoring.manifest.run_identity``), the mapping its rows are read with, the element
    kinds it reads, and the ``Post.meta`` fields its model reads (``faim.artifact_manifest.read_meta_fields``)."""

    files: list[Path]
    rows: int
    shard_rows: int
    identity: dict[str, Any]
    columns: ColumnMap
    kinds: tuple[str, ...] = ()
    meta_fields: tuple[str, ...] = ()

    @property
    def image_root(self) -> str | None:
        """The folder relative picture paths resolve against, as the run's settings record it (``None``: each input
        file's folder)."""
        return self.identity["settings"].get("image_root")

    @property
    def action(self) -> str:
        """What the run does to each row, as its progress bar says: ``embedding`` where its settings turn the scores
        off (``faim embed``), else ``scoring``."""
        return "scoring" if self.identity["settings"].get("scores", True) else "embedding"


def plan_run(
    model: dict[str, Any],
    source: str | Path,
    out: str | Path,
    settings: dict[str, Any],
    shard_rows: int | None = None,
    *,
    kinds: Sequence[str],
    meta_fields: Sequence[str] = (),
) -> RunPlan:
    """The plan of a run of ``source`` into ``out``, found by reading its inputs' sizes alone (nothing is written).

    Args:
        model: The saved model's ``faim.json`` or the export's manifest, as read: a run is resumed only with the
            same model files and tasks (``faim.scoring.manifest.run_identity``).
        settings: Everything else that makes the run what it is (recorded in ``out``; a resume must match), its
            ``columns`` the column mapping the rows are read with (as in a recipe's ``data.columns``), to which
            the plan adds the rows per shard, for a run reading pictures what decodes them (``picture_settings``),
            and how it reads JSON Lines lines (``line_settings``) and unmapped labels or meta mappings
            (``object_settings``).
        shard_rows: Rows per shard (``None``: a thirty-second of the dump, between 32 and 1024 rows).
        kinds: The element kinds the run reads (a model reading more is recorded as reading pictures it may not).
        meta_fields: The ``Post.meta`` fields the model reads, warned of where the first rows hold none
            (``faim.scoring.rows.warn_unheld_at_first``).

    Raises:
        FileNotFoundError: When ``source`` holds no input outside ``out``.
        ValueError: When a JSON Lines input holds a JSON array or objects spread over lines (``refuse_spread_json``),
            or a text input is written as UTF-16 (``refuse_utf16``), naming it.
    """
    out_dir = Path(out)
    resolved_out = out_dir.resolve()  # an output folder inside a dump folder is not read back as input
    files = [file for file in find_inputs(source) if resolved_out not in file.resolve().parents]
    if not files:
        raise FileNotFoundError(f"{source}: holds no input outside the output folder {out_dir}")
    for file in files:
        if input_format(file) in ("jsonl", "csv", "tsv"):
            refuse_utf16(file)
        if input_format(file) == "jsonl":
            refuse_spread_json(file)
    rows = [count_rows(f) for f in files]
    total = sum(rows)
    shard_rows = shard_rows or min(1024, max(32, -(-total // 32)))
    columns = ColumnMap.from_recipe(settings.get("columns"))
    settings = settings | {"shard_rows": shard_rows} | picture_settings(kinds) | line_settings(files)
    settings |= object_settings(files, columns)
    identity = run_identity(model, files, settings, key_widths(rows, shard_rows))
    return RunPlan(files, total, shard_rows, identity, columns, tuple(kinds), tuple(meta_fields))


def run_shards(
    scorers: Scorers,
    plan: RunPlan,
    out: str | Path,
    workers: int | None = None,
    engine: str = "embedded",
    progress: bool = True,
    overwrite: bool = False,
    per_post: bool = False,
) -> ScoreSummary:
    """Score every row of a run's inputs into Parquet parts under ``out`` (see ``faim.scoring.engine.score_dump``);
    rerun the same call to resume. A rerun of a finished run (``Manifest.finished``) reads none of the inputs' rows.
    The rows' ``source`` names each file as the run named it where it began (``Manifest.input_names``), the files a
    resume reads being those ``plan`` names, as it is given them.

    Args:
        scorers: What each scoring process scores with, decoding pictures with the decompression-bomb limit of this
            process (``PixelLimited``).
        plan: The run's inputs and identity (``plan_run``).
        workers, engine: Checked by the caller, before the plan (``check_run_arguments``).
        per_post: Write the parts to ``out/_per_post`` (a run pooling by picture pools them afterwards).

    Raises:
        ValueError: When ``out`` holds another run.
        ChildProcessError: When a worker process dies (killed), saying what is kept and that a rerun resumes.
        KeyboardInterrupt: When the run is stopped (Ctrl-C), its message saying so too (``rows_kept``).
    """
    cores = available_cores()
    threads = max(1, cores // (workers or cores))
    scorers = PixelLimited(scorers, Image.MAX_IMAGE_PIXELS)
    out_dir = Path(out)
    manifest = Manifest(out_dir, plan.identity, overwrite, per_post=per_post)
    summary = ScoreSummary(output=str(out_dir), resumed_shards=len(manifest.done))
    if not manifest.done:  # else the run that scored one, of the same inputs, shards and mapping, warned before it
        warn_unheld_at_first(
            plan.files,
            plan.shard_rows,
            plan.columns,
            plan.image_root,
            plan.kinds,
            manifest.input_names,
            plan.meta_fields,
        )
    already = sum(report.rows for report in manifest.done.values())
    bar = tqdm(total=plan.rows, initial=already, unit="row", desc=plan.action, disable=not progress, smoothing=0.05)
    files = [] if manifest.finished else plan.files
    # named and keyed as the run began; the shards done already come unread
    shards = read_shards(files, plan.shard_rows, plan.columns, manifest.input_names, manifest.done, manifest.key_widths)
    pending = (shard for shard in shards if shard.key not in manifest.done)
    start = time.perf_counter()
    try:
        if engine == "ray":
            reports = run_ray(scorers, pending, manifest.parts_dir, workers, WORKER_ENVIRONMENT)
        else:
            reports = _run_embedded(scorers, pending, manifest.parts_dir, workers or cores, threads)
        processes: set[int] = set()
        for report in reports:
            processes.add(report.worker)
            manifest.add(report)
            summary.rows_this_run += report.rows
            summary.scoring_seconds += report.seconds
            bar.update(report.rows)
        bar.total = bar.n  # the rows read: the plan counted lines, blank ones and those inside a CSV cell too
        manifest.finish()
    except BrokenProcessPool as error:
        raise ChildProcessError(worker_died(manifest)) from error
    except KeyboardInterrupt as error:
        raise KeyboardInterrupt(rows_kept(manifest)) from error
    finally:
        bar.close()
        manifest.close()
        close_reading(shards)  # a run stopped or failing warns here of the inputs read so far that hold no row
    summary.seconds = time.perf_counter() - start
    summary.workers = len(processes)
    summary.rows = sum(report.rows for report in manifest.done.values())
    summary.shards = len(manifest.done)
    for report in manifest.done.values():
        summary.errors.update(report.errors)
    held = [manifest.done[key].held for key in sorted(manifest.done)]  # in the dump's order, not the finishing one
    summary.held = Held.of_all(held) if None not in held else None
    return summary


def worker_died(manifest: Manifest) -> str:
    """What a run whose worker process died says: the causes it may have had, then what it keeps and that a rerun
    scores the rest (``rows_kept``), once they are mended."""
    return (
        "a scoring worker process ended without finishing its shard (killed by a signal or by the system when memory "
        "runs out, or failed as it started: see any error printed above); "
        + rows_kept(manifest, until="once the cause is mended")
    )


def rows_kept(manifest: Manifest, until: str = "") -> str:
    """What a run stopped part way (a worker dead, Ctrl-C) says it leaves: at least the rows and parts ``manifest``
    records written (the shard the main process scores itself may be finished after it is said), where, and that the
    same command, run again (``until`` says when, if it must wait), scores the rest alone, scoring no row twice."""
    done = sum(report.rows for report in manifest.done.values())
    rerun = f"{f'{until}, ' if until else ''}the same command scores the rest, no row twice"
    return f"at least {kept(done, len(manifest.done), manifest.out_dir, rerun)}"


def kept(rows: int, parts: int, folder: Path, rerun: str) -> str:
    """``ROWS rows (PARTS parts) are scored and kept in FOLDER: RERUN``, what a run stopped part way keeps and what
    running it again does (``rerun``, from ``the same command``)."""
    are = "is" if rows == 1 else "are"
    return f"{plural(rows, 'row')} ({plural(parts, 'part')}) {are} scored and kept in {folder}: {rerun}"


_scorer: ShardWriter | None = None
_start_failure: Exception | None = None


def _start_worker(scorers: Scorers, threads: int) -> None:
    """Make this worker's scorer, having it end with the process that started it (``_exit_with_parent``) and leave
    to that process what it said of the plug-ins and the model. Where making it fails (an export's graph that
    onnxruntime cannot open), the error is raised at this worker's first shard (``_score_in_worker``), so that the
    process that started it stops on that error, as on one its own scorer raises, rather than on a broken pool with
    the worker's traceback printed."""
    global _scorer, _start_failure
    quiet_worker_warnings()
    atexit.register(_exit_without_teardown)
    threading.Thread(target=_exit_with_parent, name="faim-parent-watch", daemon=True).start()
    try:
        _scorer = scorers(threads)
    except Exception as error:
        _start_failure = error


def _exit_with_parent() -> None:
    """End this worker once the process that started it is gone (killed, even with ``kill -9``, and even before this
    worker got here): a worker waiting for shards from a dead pool never hears of it, and would hold its model in
    memory for good. Every part it wrote is on disk, and a rerun finishes the rest."""
    multiprocessing.connection.wait([multiprocessing.parent_process().sentinel])
    os._exit(1)


def _exit_without_teardown() -> None:
    """End a worker at once when the pool shuts down: every part it wrote is already on disk, and tearing down an
    interpreter holding torch, transformers and timm takes over a second, which the pool waits for."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _score_in_worker(shard: Shard, out_dir: str) -> ShardReport:
    if _start_failure is not None:
        raise _start_failure
    assert _scorer is not None, "worker was not initialised"
    return _scorer.write(shard, Path(out_dir))


class LocalScorer:
    """The main process's own scorer, made at its first shard and run from a thread of its own; ``close`` gives
    back what making it changed in this process (torch's thread count)."""

    def __init__(self, scorers: Scorers, threads: int) -> None:
        self.scorers, self.threads = scorers, threads
        self.scorer: ShardWriter | None = None

    def write(self, shard: Shard, out_dir: str) -> ShardReport:
        if self.scorer is None:
            self.scorer = self.scorers(self.threads)
        return self.scorer.write(shard, Path(out_dir))

    def close(self) -> None:
        if self.scorer is not None:
            self.scorer.close()


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
    scorers: Scorers, shards: Iterator[Shard], out_dir: Path, workers: int, threads: int
) -> Iterator[ShardReport]:
    """Score ``shards`` in ``workers - 1`` spawned worker processes and a thread of this process, one shard
    per scorer at a time; yield each shard's report as it finishes."""
    local = LocalScorer(scorers, threads)
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
                initargs=(scorers, threads),
            )
            executors.append(stack.enter_context(pool))
            lanes.append((partial(_submit_holding_interrupts, pool, _score_in_worker), workers - 1))
        here = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="faim-scorer"))
        executors.append(here)
        lanes.append((partial(here.submit, in_thread(local.write)), 1))
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
                if isinstance(executor, ProcessPoolExecutor):
                    _end_workers(executor)
                executor.shutdown(wait=False, cancel_futures=True)
            raise


def _end_workers(pool: ProcessPoolExecutor) -> None:
    """End ``pool``'s workers now, in the middle of a shard if need be: a part is written whole or not at all, and a
    rerun scores what is missing. A stopped run then ends at once, not once each worker has finished the shard it is
    scoring (they hold Ctrl-C back: ``interrupts_held``)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14 and later
    if terminate is not None:
        terminate()
        return
    for process in list((pool._processes or {}).values()):
        process.terminate()


def _submit_holding_interrupts(pool: ProcessPoolExecutor, fn: Callable, *args: Any) -> Future:
    """``pool.submit(fn, *args)`` with Ctrl-C held back from the workers it starts (``interrupts_held``)."""
    with interrupts_held():
        return pool.submit(fn, *args)


@contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold SIGINT back from this thread while the block runs; one that came meanwhile is taken once it ends (by
    another thread of the process, if one takes it, as the kernel then delivers it there). A process started inside
    inherits it held for good: Ctrl-C, which a terminal sends to every process of the run, then reaches only the
    main process, which ends the workers (``_end_workers``), where a worker it reached half-way through importing
    torch printed a traceback. Nothing is held where the system holds no signals back (Windows)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _free_lanes(lanes: list[tuple[Callable, int]], in_flight: dict[Future, int]) -> list[int]:
    busy = Counter(in_flight.values())
    return [index for index, (_, capacity) in enumerate(lanes) if busy[index] < capacity]


def _finished(in_flight: dict[Future, int], block: bool) -> Iterator[ShardReport]:
    """Reports of the shards that have finished (``block``: waiting for at least one)."""
    done, _ = wait(in_flight, timeout=None if block else 0, return_when=FIRST_COMPLETED)
    for future in done:
        del in_flight[future]
        yield future.result()
