"""Explanations pass the sanity checks: a model that ignores pictures gives them no share; element contributions add
up to the logit's change from the baseline, and so do token attributions, for each kind of text encoder that has
them; a planted trigger token gets the top attribution; and a trained model's attributions differ from those of
the same architecture with re-initialised weights (Adebayo et al., 2018)."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch
from PIL import Image
from token_pieces import attributed_names
from trigger_models import (
    TASK,
    TEXT_ENCODERS,
    TRIGGER,
    detector,
    ngram_model,
    stacked_model,
    text_model,
    trained_on_trigger,
    trigger_posts,
)

from faim import Detector, WholePostModel
from faim.data.post import as_posts
from faim.encoder import Encoder
from faim.encoders.tiny_image import TinyImageEncoder
from faim.encoders.tiny_text import TinyTextEncoder
from faim.explain.attribute import PostExplainer, explain_post
from faim.fusion import ConcatFusion
from faim.tasks import BinaryHead


def picture() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (32, 32), (200, 40, 40)).save(buffer, format="PNG")
    return buffer.getvalue()


def text_and_picture_model(picture_weight: float) -> WholePostModel:
    """Concat fusion of a text and a picture encoder under a linear head whose weights on the picture's part of the
    embedding (the first 8 dimensions: kinds are concatenated in sorted order) are ``picture_weight``."""
    torch.manual_seed(0)
    model = WholePostModel(
        {"text": TinyTextEncoder(dim=16), "image": TinyImageEncoder(dim=8)},
        ConcatFusion({"image": 8, "text": 16}),
        {"harm": BinaryHead(24)},
    )
    with torch.no_grad():
        head = next(module for module in model.heads["harm"].modules() if isinstance(module, torch.nn.Linear))
        head.weight[:, :8] = picture_weight
    return model


def test_a_model_that_ignores_pictures_gives_them_no_share_and_contributions_add_up() -> None:
    post = {"id": "p", "text": "a caption", "images": [picture(), picture()]}
    ignoring = detector(text_and_picture_model(0.0))
    explained = ignoring.explain([post])[0].tasks[0]
    shares = {share.label: share.share for share in explained.shares}
    assert set(shares) == {"text", "picture 1", "picture 2"}
    assert shares["picture 1"] < 1e-6 and shares["picture 2"] < 1e-6 and shares["text"] > 0.999
    assert all(np.abs(heat).max() < 1e-6 for heat in explained.pictures)

    reading = detector(text_and_picture_model(0.5))
    batch = reading.collator()(as_posts([post]))
    explainer = PostExplainer(reading.model, batch)
    with torch.no_grad():
        logit = explainer.logit(explainer.elements, TASK, 1).item()
        zeros = {kind: (torch.zeros_like(e), m) for kind, (e, m) in explainer.elements.items()}
        baseline = explainer.logit(zeros, TASK, 1).item()
    contributions = [share.contribution for share in explainer.shares(TASK, 1)]
    assert sum(contributions) == pytest.approx(logit - baseline, abs=0.02)
    assert min(share.share for share in reading.explain([post])[0].tasks[0].shares) > 0.01


# Not the tiny random USE network: which piece its trained model's attributions rank first, and how like a
# re-initialised one's they are, turn on its initialisation (trained from 0, the trigger tops 8 of 8 posts on one CPU's
# arithmetic and 4 of 8 on another's; from 1 and 3, 8 of 8 but with attributions as like a random model's as not),
# where erasing its top pieces takes the most off its score all the same (test_bench_erasure) and the real USE
# model's top fifth takes more off than a random fifth on every post checked (README, bench_erasure).
@pytest.mark.parametrize("encoder", sorted(set(TEXT_ENCODERS) - {"tiny_use"}))
def test_a_planted_trigger_gets_the_top_attribution_and_a_re_initialised_model_attributes_otherwise(
    encoder: str,
) -> None:
    trained = trained_on_trigger(encoder)
    posts = [post for post in trigger_posts(40, seed=7) if post["labels"]["harm"]][:8]
    attributions = [task.tokens[0].tokens for explanation in trained.explain(posts) for task in explanation.tasks]
    tops = [max(tokens, key=lambda item: item[1])[0] for tokens in attributions]
    assert tops.count(TRIGGER) >= 7, tops

    randomised = detector(text_model(123, encoder))
    random_tokens = [task.tokens[0].tokens for explanation in randomised.explain(posts) for task in explanation.tasks]
    similarities = []
    for ours, theirs in zip(attributions, random_tokens):
        a, b = np.array([value for _, value in ours]), np.array([value for _, value in theirs])
        similarities.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12)))
    assert np.mean(similarities) < 0.5, similarities


@pytest.mark.parametrize("encoder", sorted(TEXT_ENCODERS))
def test_token_attributions_add_up_to_the_change_from_the_blank_text_and_skip_the_fixed_pieces(encoder: str) -> None:
    reading = detector(text_model(5, encoder))
    post = {"id": "p", "text": "abc z hd"}
    batch = reading.collator()(as_posts([post]))
    explainer = PostExplainer(reading.model, batch)
    text: Encoder = reading.model.encoder_for("text")
    pieces = text.token_embeddings()
    ids = batch.elements["text"].values["input_ids"]
    mask = batch.elements["text"].values["attention_mask"]
    blank = torch.where(pieces.fixed(ids, mask), ids, torch.full_like(ids, pieces.blank))
    with torch.no_grad():
        logits = [
            explainer.logit(explainer.repeated(1, {"text": text({"input_ids": row, "attention_mask": mask})[:, None]}),
                            TASK, 1).item()
            for row in (ids, blank)
        ]  # fmt: skip
    (reading,), notes = explainer.tokens(TASK, 1)
    tokens = reading.tokens
    assert notes == [] and reading.reader == encoder
    assert [name for name, _ in tokens] == attributed_names(text, post["text"])
    assert 0 < len(tokens) < ids.shape[1]
    assert sum(value for _, value in tokens) == pytest.approx(
        logits[0] - logits[1], abs=0.02 * max(1.0, abs(logits[0]))
    )


@pytest.mark.parametrize("encoder", sorted(TEXT_ENCODERS))
def test_each_comment_gets_token_attributions_adding_up_to_its_change_from_its_blank_text(encoder: str) -> None:
    torch.manual_seed(3)
    text = TEXT_ENCODERS[encoder]()
    width = text.output_dim
    fusion = ConcatFusion({"comments": width, "text": width})
    model = WholePostModel({"text": text}, fusion, {"harm": BinaryHead(2 * width)}, {"comments": "text"})
    post = {"id": "p", "text": "abc", "comments": ["z hd", "bb z ce"]}
    reading = detector(model)
    explained = reading.explain([post])[0].tasks[0]
    assert [[name for name, _ in reading.tokens] for (reading,) in explained.comments] == [
        attributed_names(text, comment) for comment in post["comments"]
    ]
    assert [name for name, _ in explained.tokens[0].tokens] == attributed_names(text, "abc")
    explainer = PostExplainer(model, reading.collator()(as_posts([post])))
    assert explainer.slots("comments") == [0, 1]
    with torch.no_grad():
        logit = explainer.logit(explainer.elements, TASK, 1).item()
        for slot, (reading,) in enumerate(explained.comments):
            (comment,), _ = explainer.text_pieces("comments", slot)
            assert explainer.text_logit(comment, comment.ids, TASK, 1).item() == pytest.approx(logit, abs=1e-5)
            blank = explainer.text_logit(comment, comment.blanked(comment.attributed), TASK, 1).item()
            total = sum(value for _, value in reading.tokens)
            assert total == pytest.approx(logit - blank, abs=0.02 * max(1.0, abs(logit))) and total != 0


@pytest.mark.parametrize("encoder", sorted(TEXT_ENCODERS))
def test_a_text_or_comment_longer_than_the_encoder_reads_is_noted_with_the_pieces_left_unread(encoder: str) -> None:
    torch.manual_seed(3)
    text = TEXT_ENCODERS[encoder]()
    width = text.output_dim
    model = WholePostModel(
        {"text": text}, ConcatFusion({"comments": width, "text": width}), {"harm": BinaryHead(2 * width)},
        {"comments": "text"},
    )  # fmt: skip
    long = " ".join(["abc hd z"] * 20)
    post = {"id": "p", "text": long, "comments": ["z hd", long]}
    pieces = text.token_embeddings().length
    short = text.preprocessor()(["z hd"])["attention_mask"]
    assert pieces("z hd") == int(short.sum())  # as many as are read of a text read whole
    explained = detector(model).explain([post])[0]
    assert explained.notes == [
        f"{encoder} reads 32 of the {pieces(long)} pieces of {label} (its max_length, markers included): the last "
        f"{pieces(long) - 32} are not read, so they get no attribution and play no part in the scores"
        for label in ("its text", "comment 2")
    ]
    assert pieces(long) > 32 and len(explained.tasks[0].tokens[0].tokens) < 32


@pytest.mark.parametrize(("kind", "slot"), [("text", 0), ("comments", 0), ("comments", 1)])
def test_each_member_of_a_stack_reading_pieces_gets_tokens_adding_up_to_the_change_its_reading_makes(
    kind: str, slot: int
) -> None:
    model = stacked_model()
    post = {"id": "p", "text": "abc z hd", "comments": ["z hd", "bb z ce"]}
    explainer = PostExplainer(model, detector(model).collator()(as_posts([post])))
    readings, notes = explainer.tokens(TASK, 1, kind, slot)
    assert [(r.reader, r.in_stack) for r in readings] == [("tiny_text, 1 of 3", True), ("tiny_use, 3 of 3", True)]
    element = "text" if kind == "text" else "comments"
    assert notes == [
        f"ngram_text, 2 of 3 has no token embeddings to attribute to: its part of the {element} is in the shares only"
    ]
    texts, _ = explainer.text_pieces(kind, slot)
    members = model.encoder_for(kind).members
    assert [(text.columns.start, text.columns.stop) for text in texts] == [(0, 16), (24, 40)]
    said = post["text"] if kind == "text" else post["comments"][slot]
    with torch.no_grad():
        logit = explainer.logit(explainer.elements, TASK, 1).item()
        for text, read, member in zip(texts, readings, (members[0], members[2])):
            assert [name for name, _ in read.tokens] == attributed_names(member, said)
            assert explainer.text_logit(text, text.ids, TASK, 1).item() == pytest.approx(logit, abs=1e-5)
            blank = explainer.text_logit(text, text.blanked(text.attributed), TASK, 1).item()
            total = sum(value for _, value in read.tokens)
            assert total == pytest.approx(logit - blank, abs=0.02 * max(1.0, abs(logit))) and total != 0


def test_an_explanation_of_a_post_read_by_a_stack_holds_each_members_tokens_and_one_note_per_element() -> None:
    model = stacked_model()
    post = {"id": "p", "text": "abc z hd", "comments": ["z hd", "bb z ce"]}
    explained = detector(model).explain([post])[0]
    readers = ["tiny_text, 1 of 3", "tiny_use, 3 of 3"]
    task = explained.tasks[0]
    assert [r.reader for r in task.tokens] == readers
    assert [[r.reader for r in comment] for comment in task.comments] == [readers, readers]
    assert explained.notes == [
        f"ngram_text, 2 of 3 has no token embeddings to attribute to: its part of the {element} is in the shares only"
        for element in ("text", "comments")
    ]


def test_an_encoder_without_token_embeddings_gives_shares_and_says_why() -> None:
    model, posts = ngram_model()
    explained = detector(model).explain(posts[:1])[0]
    assert explained.tasks[0].tokens == []
    assert explained.tasks[0].shares[0].label == "text"
    assert explained.notes == ["ngram_text has no token embeddings to attribute to: shares only for the text"]


def test_the_pictures_and_comments_past_the_models_limit_are_named_in_the_notes_as_not_read() -> None:
    torch.manual_seed(0)
    fusion = ConcatFusion({"comments": 16, "image": 8, "text": 16})
    encoders = {"text": TinyTextEncoder(dim=16), "image": TinyImageEncoder(dim=8)}
    model = WholePostModel(encoders, fusion, {"harm": BinaryHead(40)}, {"comments": "text"})
    limited = Detector(model, [TASK], max_elements=2)
    many = {"id": "many", "text": "a caption", "images": [picture()] * 3, "comments": ["one", "two", "three", "four"]}
    few = {"id": "few", "text": "a caption", "images": [picture()] * 2, "comments": ["one", "two"]}
    explained, within = limited.explain([many, few])
    assert explained.notes == [
        "only the first 2 of its 3 pictures were read and explained, as the model reads a post (max_elements: 2)",
        "only the first 2 of its 4 comments were read and explained, as the model reads a post (max_elements: 2)",
    ]
    assert len(explained.tasks[0].comments) == 2 and len(explained.tasks[0].pictures) == 2 and within.notes == []


class AcceleratorTensor(torch.Tensor):
    """A tensor as one on an accelerator behaves: what is computed from it is one too, and it reaches numpy only
    through ``cpu()``."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs)
        return result.as_subclass(torch.Tensor) if func is torch.Tensor.cpu else result

    def numpy(self, *args, **kwargs) -> np.ndarray:
        raise TypeError("can't convert an accelerator tensor to numpy: copy it to the host with cpu() first")


def on_accelerator(values):
    """``values`` (a tensor, or a mapping or list of them) as ``AcceleratorTensor``."""
    if isinstance(values, torch.Tensor):
        return values.as_subclass(AcceleratorTensor)
    if isinstance(values, dict):
        return {key: on_accelerator(value) for key, value in values.items()}
    return values


def test_a_post_explained_on_an_accelerator_comes_back_in_numpy_arrays() -> None:
    reading, post = detector(text_and_picture_model(0.5)), {"id": "p", "text": "a caption", "images": [picture()]}
    batch = reading.collator()(as_posts([post]))
    for elements in batch.elements.values():
        values = elements.values
        elements.values = on_accelerator(dict(values) if isinstance(values, dict) else values)
    explained = explain_post(reading.model, batch, [TASK], reading.probabilities, as_posts([post])[0], [])
    assert explained.tasks[0].probability == pytest.approx(reading.score([post])[0][TASK.name], abs=1e-5)
    assert [heat.shape for heat in explained.tasks[0].pictures] == [explained.pictures[0].shape[:2]]
