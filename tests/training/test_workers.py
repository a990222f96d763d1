"""Loaders whose worker processes give a post's error to the process reading them as it is, and leave SIGTERM to it
(``faim.training.workers``)."""

from __future__ import annotations

import os
import signal

import pytest
from torch.utils.data import DataLoader

from faim.data.elements import PostError
from faim.data.post import Post
from faim.training.workers import post_loader

POSTS = [Post(id=str(n), text="fine" if n != 5 else "broken", origin=f"posts.jsonl:{n + 1}") for n in range(8)]
REFUSED = r"^posts.jsonl:6 \(post id='5'\) field 'images': image 'p.jpg': not a recognised image format$"


def refusing(posts: list[Post]) -> list[str]:
    """A collate function refusing a post of the text ``broken``, as a picture that does not decode is refused."""
    for post in posts:
        if post.text == "broken":
            raise PostError(post, "images", "image 'p.jpg': not a recognised image format", "image_format")
    return [post.id for post in posts]


@pytest.mark.parametrize("workers", [0, 1])
def test_a_post_a_worker_process_refuses_is_raised_as_its_error_where_the_loader_is_read(workers: int) -> None:
    loader = post_loader(POSTS, refusing, batch_size=2, num_workers=workers)
    batches = iter(loader)
    assert next(batches) == ["0", "1"] and next(batches) == ["2", "3"]
    with pytest.raises(PostError, match=REFUSED) as error:
        next(batches)
    assert (error.value.post_id, error.value.field, error.value.kind) == ("5", "images", "image_format")
    with pytest.raises(RuntimeError, match="Caught PostError in DataLoader worker process"):  # torch's, without
        list(DataLoader(POSTS, batch_size=2, collate_fn=refusing, num_workers=1))


def terminating(posts: list[Post]) -> list[str]:
    """A collate function sending its own process SIGTERM, as a run's every process is sent it (in a worker alone)."""
    os.kill(os.getpid(), signal.SIGTERM)
    return [post.id for post in posts]


def test_a_worker_process_sent_sigterm_goes_on_leaving_the_process_reading_the_loader_to_stop_the_run() -> None:
    loader = post_loader(POSTS[:4], terminating, batch_size=2, num_workers=1)
    assert list(loader) == [["0", "1"], ["2", "3"]]  # not torch's RuntimeError: DataLoader worker is killed by signal


def orphaned_terminating(posts: list[Post]) -> list[str]:
    """A collate function whose process finds its parent gone (as after ``kill -9`` of the run or the OOM killer),
    then is sent SIGTERM (its parent found again after, lest torch's watchdog end it)."""
    getppid, os.getppid = os.getppid, lambda: 1  # in the worker process alone
    os.kill(os.getpid(), signal.SIGTERM)
    os.getppid = getppid
    return [post.id for post in posts]


def test_a_worker_process_whose_parent_is_gone_ends_when_sent_sigterm() -> None:
    loader = post_loader(POSTS[:4], orphaned_terminating, batch_size=2, num_workers=1)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(loader)
