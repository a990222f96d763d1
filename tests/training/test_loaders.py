"""Loaders over training posts (``faim.training.loaders``): what their worker processes are refused for up front,
and what they draw at random, alike with any number of them."""

from __future__ import annotations

import functools
import sys
import types
from pathlib import Path

import pytest
import pytorch_lightning as pl
import torch
from torch.utils.data import DataLoader, RandomSampler, Sampler

from faim import Detector, WholePostModel
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.fusion import ConcatFusion
from faim.tasks import BinaryHead
from faim.training.augment import PostAugmenter
from faim.training.loaders import EpochDraws, TrainerEpochs, make_loader


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


class Wrapped(Sampler):
    """``sampler`` wrapped, telling it no epoch, as Lightning's wrapper for several processes did before 2.6.1."""

    def __init__(self, sampler: Sampler) -> None:
        self.sampler = sampler

    def __iter__(self):  # noqa: ANN204
        return iter(list(self.sampler))

    def __len__(self) -> int:
        return len(self.sampler)


class Orders(pl.LightningModule):
    """A module noting the order of the posts of each epoch it trains on."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.orders: list[list[int]] = []

    def on_train_epoch_start(self) -> None:
        self.orders.append([])

    def training_step(self, batch: torch.Tensor, index: int) -> torch.Tensor:
        self.orders[-1] += batch.tolist()
        return (self.weight * batch).sum()

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.0)


def test_a_loader_drawn_in_a_wrapped_sampler_draws_the_epoch_its_trainer_is_at_when_resumed_too(tmp_path: Path) -> None:
    draws = EpochDraws(RandomSampler(range(8), generator=torch.Generator()), seed=3)
    orders = []
    for epoch in range(3):
        draws.set_epoch(epoch)
        orders.append(list(draws))
    draws.set_epoch(0)
    loader = DataLoader(range(8), batch_size=4, sampler=draws)
    list(loader)  # read before training, as a fusion fitted on it reads it
    wrapped = DataLoader(range(8), batch_size=4, sampler=Wrapped(draws))
    options = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    first, resumed = Orders(), Orders()
    trainer = pl.Trainer(max_epochs=2, callbacks=[TrainerEpochs(loader)], **options)
    trainer.fit(first, wrapped)
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    pl.Trainer(max_epochs=3, callbacks=[TrainerEpochs(loader)], **options).fit(
        resumed, wrapped, ckpt_path=tmp_path / "last.ckpt"
    )
    assert first.orders + resumed.orders == orders  # each epoch's, where it drew its first (1, 2) and then 3
