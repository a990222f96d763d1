"""Loaders over training posts (``faim.training.loaders``): what their worker processes are refused for up front,
and what they draw at random, alike with any number of them."""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import pytest
import torch

from faim import Detector, WholePostModel
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import ConcatFusion
from faim.tasks import BinaryHead
from faim.training.augment import PostAugmenter
from faim.training.loaders import make_loader


class LocalPreprocessorText(TinyTextEncoder):
    def preprocessor(self):  # a closure, which pickle cannot carry to a worker process
        preprocess = super().preprocessor()
        return lambda texts: preprocess(texts)


def test_a_preprocessor_workers_cannot_be_given_is_refused_naming_its_kind_before_any_worker_starts() -> None:
    model = WholePostModel({"text": LocalPreprocessorText(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    detector = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))])
    posts = [Post(id=str(i), text=f"post {i}", labels={"hate": i % 2}) for i in range(4)]
    collator = detector.collator(with_targets=True)
    message = (
        r"^element kind 'text': the preprocessor its encoder \(LocalPreprocessorText\) gives cannot be pickled "
        r"\(.*local object.*\), and train.num_workers: 2 needs it to be, to give it to its DataLoader worker "
        r"processes; return an instance of a class defined at a module's top level from preprocessor\(\), or set "
        r"train.num_workers: 0$"
    )
    with pytest.raises(ValueError, match=message):
        make_loader(model, collator, posts, 2, False, num_workers=2)
    assert len(next(iter(make_loader(model, collator, posts, 2, False))).ids) == 2  # read in this process, it loads


class SessionPreprocess:
    def __call__(self, texts: list[str]) -> list[str]:
        return texts


def session_prepare(texts: list[str]) -> list[str]:
    return texts


@pytest.mark.parametrize(
    ("given", "defined"),
    [
        (SessionPreprocess, "SessionPreprocess"),
        (lambda: session_prepare, "session_prepare"),  # a function, pickled by name
        (lambda: functools.partial(session_prepare), "session_prepare"),  # held by what is pickled
    ],
    ids=["instance", "function", "partial"],
)
def test_a_preprocessor_of_or_holding_a_class_or_function_an_interactive_session_defined_is_refused_up_front(
    monkeypatch: pytest.MonkeyPatch, given, defined: str
) -> None:
    class SessionText(TinyTextEncoder):
        def preprocessor(self):
            return given()

    session = types.ModuleType("__main__")  # a notebook's: it holds the class, pickled by name, but no file to import
    session.SessionPreprocess, session.session_prepare = SessionPreprocess, session_prepare
    monkeypatch.setitem(sys.modules, "__main__", session)
    monkeypatch.setattr(SessionPreprocess, "__module__", "__main__")
    monkeypatch.setattr(session_prepare, "__module__", "__main__")
    model = WholePostModel({"text": SessionText(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    collator = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))]).collator(with_targets=True)
    posts = [Post(id=str(i), text=f"post {i}", labels={"hate": i % 2}) for i in range(4)]
    message = (
        r"^element kind 'text': the preprocessor its encoder \(SessionText\) gives is or holds a class or function "
        rf"defined in this interactive session \(__main__.{defined}\), which the DataLoader worker processes of "
        r"train.num_workers: 1 cannot import; define it in a module they import, or set train.num_workers: 0$"
    )
    with pytest.raises(ValueError, match=message):
        make_loader(model, collator, posts, 2, False, num_workers=1)


def test_a_seeded_loader_draws_and_augments_alike_with_any_number_of_workers_and_leaves_torchs_generator_alone() -> (
    None
):
    torch.manual_seed(0)
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": BinaryHead(8)})
    collator = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))]).collator(with_targets=True)
    posts = [Post(id=str(i), text=f"those people should leave {i}", labels={"hate": i % 2}) for i in range(24)]
    swaps = PostAugmenter({"text.char_swap": 0.5})
    epochs = {}
    for workers in (0, 1):
        loader = make_loader(model, collator, posts, 4, True, num_workers=workers, augment=swaps, seed=3)
        state = torch.random.get_rng_state()
        epochs[workers] = [[(batch.ids, batch.elements["text"].values["input_ids"]) for batch in loader] for _ in "12"]
        assert torch.equal(torch.random.get_rng_state(), state)  # the model's dropout draws alike, too
    for main, worker in zip(epochs[0], epochs[1], strict=True):
        assert [ids for ids, _ in main] == [ids for ids, _ in worker]
        assert all(torch.equal(one, other) for (_, one), (_, other) in zip(main, worker, strict=True))
    first, second = epochs[0]
    assert [ids for ids, _ in first] != [ids for ids, _ in second]  # each epoch is drawn afresh
    plain = [(batch.ids, batch.elements["text"].values["input_ids"]) for batch in make_loader(
        model, collator, posts, 4, True, seed=3)]  # fmt: skip
    assert [ids for ids, _ in plain] == [ids for ids, _ in first]  # augmenting draws the same posts
    assert not all(torch.equal(one, other) for (_, one), (_, other) in zip(plain, first, strict=True))


def test_a_picture_a_worker_process_cannot_decode_is_refused_naming_its_post_as_without_workers(tmp_path: Path) -> None:
    model = WholePostModel({"image": TinyImageEncoder(dim=8)}, ConcatFusion({"image": 8}), {"hate": BinaryHead(8)})
    collator = Detector(model, [TaskSpec("hate", "binary", ("no", "yes"))]).collator(with_targets=True)
    (tmp_path / "p.jpg").write_bytes(b"not a picture")
    posts = [Post(id="a", images=["p.jpg"], image_root=str(tmp_path), labels={"hate": 1}, origin="posts.jsonl:1")]
    said = r"^posts.jsonl:1 \(post id='a'\) field 'images': image 'p.jpg': "
    for workers in (0, 1):
        with pytest.raises(PostError, match=said):  # not torch's RuntimeError holding the worker's traceback
            list(make_loader(model, collator, posts, 2, False, num_workers=workers))
