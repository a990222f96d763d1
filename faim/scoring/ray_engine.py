"""The Ray Data engine: the same scorers (``faim.scoring.runner.Scorers``) as a stateful ``map_batches`` actor class.

Locally (``ray.init()`` here) it runs ``workers`` actors, at most one per core, whose CPU reservations stay below
the core count when there is more than one core: Ray hangs when actors take every CPU. On a cluster, connect first
(``ray.init(address=...)`` or ``RAY_ADDRESS``) and each actor loads the model once. Actors ask for one CPU each,
and with ``device="cuda"`` one GPU each too (``num_gpus=1``), as many actors as the cluster has GPUs.
The driver reads the dump as a stream and hands Ray one window of shards at a time (``WINDOW_ROWS`` rows,
one Ray Data dataset each, actors loading the model once per window), so its memory stays bounded however
large the dump is. Parts, manifest and resume work as with the embedded engine: the driver records each
finished shard.
"""

from __future__ import annotations

import pickle
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from faim.notices import MissingExtra, warn
from faim.registry import quiet_worker_warnings
from faim.scoring.inputs import Shard
from faim.scoring.report import ShardReport
from faim.wording import plural

# Rows the driver holds at once. With the default multimodal model (about 48 posts/s on two CPUs) a window
# is about 23 minutes of scoring, against about 20 s for a window's actors to start and load the model.
WINDOW_ROWS = 65_536


class RayShardScorer:
    """Ray Data actor: loads the model once, then scores pickled shards into part files; what the plug-ins and the model
    leaves to the process that started the run to say."""

    def __init__(self, scorers: Any, out_dir: str, threads: int) -> None:
        quiet_worker_warnings()
        self.scorer = scorers(threads)
        self.out_dir = Path(out_dir)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        reports = [self.scorer.write(pickle.loads(blob), self.out_dir) for blob in batch["shard"]]
        return {"report": np.array([pickle.dumps(report) for report in reports], dtype=object)}


def windows(shards: Iterator[Shard], rows: int) -> Iterator[list[Shard]]:
    """Consecutive groups of ``shards`` of at least ``rows`` rows each (the last may hold fewer), read from
    the stream only as each group is asked for."""
    window: list[Shard] = []
    held = 0
    for shard in shards:
        window.append(shard)
        held += shard.size
        if held >= rows:
            yield window
            window, held = [], 0
    if window:
        yield window


def ray_module() -> Any:
    """The ``ray`` module, its Data API imported: an optional heavy dependency (``faim-sdk[ray]``), imported only where
    the engine is asked for.

    Raises:
        MissingExtra: Saying what to install, where it is not installed.
    """
    try:
        import ray  # optional heavy dependency (faim-sdk[ray]), imported where the engine is asked for
        import ray.data  # noqa: F401  (the engine's API)
    except ImportError:
        raise MissingExtra("--engine ray needs Ray Data: pip install 'faim-sdk[ray]'") from None
    return ray


@contextmanager
def running_ray() -> Iterator[tuple[Any, bool]]:
    """The ``ray`` module with Ray running, and whether it was started here: the caller's Ray if one is up (left up),
    else a local one started here and shut down at the end (left running, it keeps CPUs busy). Starting one sets
    SIGTERM's handler, in the main thread, back to one the process had set before (``faim score`` stopping as Ctrl-C
    does, ``faim.cli.main.sigterm_stops``, or an application's, SIGTERM ignored too): ``ray.init`` puts its own in its
    place, with which such a run sent SIGTERM aborted with a stack trace, its workers' parts kept but nothing said of
    them. Where SIGTERM had no handler of the process's (its default), Ray's is kept while Ray runs, which ends Ray's
    own processes with it; the handler before is set back once Ray is shut down, so that it outlives no Ray."""
    ray = ray_module()
    started_here = not ray.is_initialized()
    if started_here:
        held = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
        ray.init(include_dashboard=False, log_to_driver=False)
        if held not in (None, signal.SIG_DFL):
            signal.signal(signal.SIGTERM, held)
    try:
        yield ray, started_here
    finally:
        if started_here:
            ray.shutdown()
            if held is not None:
                signal.signal(signal.SIGTERM, held)


def actor_count(workers: int | None, cpus: int, gpus: int | None = None, local: bool = True) -> int:
    """Actors to run: ``workers`` (default: one per CPU), at most one per CPU Ray has and, on GPUs (``gpus``: how
    many Ray has; ``None`` on CPUs), one per GPU, and at least one. A count asked for and cut is warned of, saying
    how many run and why.

    Raises:
        ValueError: When the run is on GPUs and a ``local`` Ray (started here) has none: an actor asking for one
            would wait forever, where a cluster the caller started may add a GPU node when asked.
    """
    if gpus == 0 and local:
        raise ValueError("--device cuda: Ray has no GPU to run an actor on")
    actors, why = min(workers or cpus, cpus), f"one per CPU Ray has ({cpus})"
    if gpus is not None and gpus < actors:
        actors, why = gpus, f"one per GPU Ray has ({gpus})"
    actors = max(1, actors)
    if workers is not None and actors < workers:
        said = f"{workers} workers asked for: Ray runs {plural(actors, 'actor')}, {why}"
        warn(said)
    return actors


def run_ray(
    scorers: Any, shards: Iterator[Shard], out_dir: Path, workers: int | None, environment: dict[str, str]
) -> Iterator[ShardReport]:
    """Score ``shards`` on Ray Data, ``WINDOW_ROWS`` rows at a time; yields a report per finished shard.

    ``workers`` actors (``actor_count``) each make a scorer of ``scorers`` (``faim.scoring.runner.Scorers``)
    computing with their share of the CPUs, and start with ``environment``, while
    their Ray reservations add up to less than every CPU (locally on two cores: two actors of half a CPU
    each), so Ray always has a CPU to schedule its own tasks on. A local Ray started here is shut down at
    the end; one the caller started (``ray.init``) stays up for the next run. Ray is started (or joined) only once
    there is a shard to score: a rerun of a run whose every shard is done ends as the embedded engine does, at once.
    """
    first = next(shards, None)
    if first is None:
        return
    with running_ray() as (ray, started_here):
        resources = ray.cluster_resources()
        cpus = int(resources.get("CPU", 1))
        gpus = 1 if scorers.device.startswith("cuda") else 0
        actors = actor_count(workers, cpus, int(resources.get("GPU", 0)) if gpus else None, local=started_here)
        # Actors reserve less than every CPU between them (Ray hangs otherwise), while each computes on its share.
        cpus_per_actor = min(1.0, (cpus - 1) / actors) if cpus > 1 else 1.0
        threads = max(1, cpus // actors)
        for window in windows(chain([first], shards), WINDOW_ROWS):
            items = [{"shard": pickle.dumps(shard)} for shard in window]
            dataset = ray.data.from_items(items, override_num_blocks=len(items)).map_batches(
                RayShardScorer,
                fn_constructor_args=(scorers, str(out_dir), threads),
                batch_size=1,
                compute=ray.data.ActorPoolStrategy(size=min(actors, len(items))),
                num_cpus=cpus_per_actor,
                num_gpus=gpus,
                runtime_env={"env_vars": environment},
            )
            for row in dataset.iter_rows():
                yield pickle.loads(row["report"])
