"""DataLoaders whose worker processes give the process reading them the error of a post they refuse (a
``PostError``: a picture that does not decode, say) as it is, as a loader without workers raises it. Torch gives that
process a ``RuntimeError`` holding the worker's traceback in its stead, which ended ``faim train`` with
``train.num_workers`` above 0 in a traceback rather than in the post's name, field and problem. Their workers leave
SIGTERM to that process while it lives (``ignore_sigterm``)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from torch.utils.data import DataLoader

from faim.data.elements import PostError


class Refused:
    """What a worker process gives in the place of a batch holding a post its collate function refused: the error."""

    def __init__(self, error: PostError) -> None:
        self.error = error


class RefusalsGiven:
    """``collate``, giving the error of a post it refuses as a ``Refused`` rather than raising it (in a worker
    process, where raising it would reach the process reading the loader as torch's ``RuntimeError``)."""

    def __init__(self, collate: Callable[[list[Any]], Any]) -> None:
        self.collate = collate

    def __call__(self, items: list[Any]) -> Any:
        try:
            return self.collate(items)
        except PostError as error:
            return Refused(error)


class PostLoader(DataLoader):
    """A DataLoader whose collate function gives its refusals (``RefusalsGiven``), each raised, as the ``PostError``
    it holds, in the process reading the loader."""

    def __iter__(self) -> Iterator[Any]:
        for batch in super().__iter__():
            if isinstance(batch, Refused):
                raise batch.error
            yield batch


class SigtermUnlessOrphaned:
    """A worker process's SIGTERM handler: SIGTERM ignored while the process that started the worker (``parent``, a
    pid) lives, the worker ended by it (status 143) once that process is gone (``kill -9``, the OOM killer), when
    nothing else would end it."""

    def __init__(self, parent: int) -> None:
        self.parent = parent

    def __call__(self, signum: int, frame: Any) -> None:
        if os.getppid() != self.parent:
            os._exit(128 + signum)


def ignore_sigterm(worker_id: int) -> None:
    """A worker process's ``worker_init_fn``: SIGTERM ignored while the process reading the loader lives
    (``SigtermUnlessOrphaned``), where it is sent to every process of a run (a job scheduler stopping it,
    ``kill -TERM -- -PGID``), so that the process reading the loader stops the run as it stops one sent it alone
    (``faim train`` saying what resumes it, status 143) and ends its workers itself, where a worker killed by it ended
    that process in torch's ``RuntimeError`` (DataLoader worker is killed by signal). On Linux the worker is also sent
    SIGTERM as that process dies (``PR_SET_PDEATHSIG``), so it does not outlive it. The worker's random generators
    are seeded as torch seeds them, from the loader's generator."""
    handler = SigtermUnlessOrphaned(os.getppid())
    signal.signal(signal.SIGTERM, handler)
    if sys.platform == "linux":
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGTERM), 0, 0, 0)
        handler(signal.SIGTERM, None)  # the parent may have gone before the line above


def post_loader(items: Sequence[Any], collate_fn: Callable[[list[Any]], Any], **options: Any) -> DataLoader:
    """A DataLoader over ``items`` with ``collate_fn`` and torch's ``options``: with ``num_workers`` above 0, a
    ``PostLoader`` raising the ``PostError`` of a post a worker process refuses where the loader is read, whose
    workers ignore SIGTERM (``ignore_sigterm``)."""
    if not options.get("num_workers"):
        return DataLoader(items, collate_fn=collate_fn, **options)
    return PostLoader(items, collate_fn=RefusalsGiven(collate_fn), worker_init_fn=ignore_sigterm, **options)
