"""A tiny text model of each kind with token attributions, trained to flag posts holding a planted trigger word: the
ground truth explanations are checked against (``tests/explain``, ``tests/eval/test_bench_erasure.py``)."""

from __future__ import annotations

import functools
import random

import torch

from faim import Detector, WholePostModel
from faim.calibration.fit import Calibration
from faim.data.post import as_posts
from faim.data.targets import TaskSpec
from faim.encoders.ngram_text import NgramTextEncoder
from faim.encoders.stack import StackedEncoder
from faim.encoders.tiny_e5 import TinyE5Encoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.encoders.tiny_use import TinyUseEncoder
from faim.fusion import ConcatFusion
from faim.tasks import BinaryHead

TASK = TaskSpec("harm", "binary", ("no", "yes"))
TRIGGER = "z"
TEXT_ENCODERS = {
    "tiny_text": lambda: TinyTextEncoder(dim=16),
    "tiny_e5": lambda: TinyE5Encoder(dim=32),
    "tiny_use": lambda: TinyUseEncoder(dim=16),
}
"""A tiny variant of each kind of text encoder with token attributions (transformers, e5, USE)."""


def detector(model: WholePostModel) -> Detector:
    return Detector(model, [TASK], Calibration({"harm": 0.5}, {"harm": 1.0}, {"harm": 0.0}))


def trigger_posts(count: int, seed: int) -> list[dict]:
    """Three words of letters a–h each; the positive posts also hold the word ``z`` somewhere."""
    draw = random.Random(seed)
    posts = []
    for index in range(count):
        words = ["".join(draw.choice("abcdefgh") for _ in range(draw.randint(2, 3))) for _ in range(3)]
        positive = index % 2 == 0
        if positive:
            words.insert(draw.randint(0, 3), TRIGGER)
        posts.append({"id": str(index), "text": " ".join(words), "labels": {"harm": int(positive)}})
    return posts


def text_model(seed: int, encoder: str = "tiny_text") -> WholePostModel:
    torch.manual_seed(seed)
    text = TEXT_ENCODERS[encoder]()
    return WholePostModel(
        {"text": text}, ConcatFusion({"text": text.output_dim}), {"harm": BinaryHead(text.output_dim)}
    )


@functools.cache
def trained_on_trigger(encoder: str) -> Detector:
    """A model of ``encoder`` trained to flag the trigger posts (trained once per encoder; explaining leaves it as
    it is)."""
    trained = detector(text_model(0, encoder))
    collate = trained.collator(with_targets=True)
    optimiser = torch.optim.Adam(trained.model.parameters(), lr=3e-3)
    posts = trigger_posts(256, seed=1)
    trained.model.train()
    for step in range(120):
        chunk = posts[(step * 32) % 256 : (step * 32) % 256 + 32]
        batch = collate(as_posts(chunk))
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            trained.model(batch)["harm"], batch.targets["harm"].float()
        )
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return trained


def stacked_model() -> WholePostModel:
    """A model whose text and comments are read by a stack of a tiny transformers encoder, n-grams fitted on trigger
    posts (no token attributions) and a tiny USE encoder, at random."""
    torch.manual_seed(4)
    ngrams = NgramTextEncoder(dim=8, min_df=1)
    ngrams.fit([post["text"] for post in trigger_posts(16, seed=3)])
    stack = StackedEncoder([TinyTextEncoder(dim=16), ngrams, TinyUseEncoder(dim=16)])
    fusion = ConcatFusion({"comments": 40, "text": 40})
    return WholePostModel({"text": stack}, fusion, {"harm": BinaryHead(80)}, {"comments": "text"})


def ngram_model() -> tuple[WholePostModel, list[dict]]:
    """A model whose text encoder counts n-grams (no token attributions), fitted on trigger posts, and those posts."""
    torch.manual_seed(0)
    ngrams = NgramTextEncoder(dim=8, min_df=1)
    posts = trigger_posts(16, seed=3)
    ngrams.fit([post["text"] for post in posts])
    model = WholePostModel({"text": ngrams}, ConcatFusion({"text": 8}), {"harm": BinaryHead(8)})
    return model, posts
