"""Why a post got its scores, with Captum: each element's share of each task's logit, token attributions for the
text and each comment, and a heat map over each picture.

- **Element shares**: integrated gradients (Captum ``IntegratedGradients``) over the element embeddings the fusion
  reads, from all-zero embeddings; an element's contribution is the sum of its attributions (they add up to the
  logit's change from that baseline), its share that contribution's magnitude over all of them.
- **Tokens**: for the text and each comment in turn, integrated gradients at the output of its encoder's piece
  embeddings (``LayerIntegratedGradients`` on ``Encoder.token_embeddings().layer``), the rest of the post as it
  is, from the same text with every piece but the fixed ones (sentence markers, e5's ``query:`` prefix) replaced
  by the encoder's blank piece; for the encoders that read a text as embedded pieces (``hf_text``, ``e5_text``,
  ``use_text`` and their tiny variants). In a stack, each member that reads pieces is attributed in turn, the
  other members' embeddings of the text as they are, so each member's tokens add up to the change its reading
  makes. Encoders whose output is no function of such embeddings (n-grams) get no token attributions, and the
  explanation says so.
- **Pictures**: occlusion (Captum ``Occlusion``): each square of a 7 × 7 grid over the picture, as the encoder sees
  it after cropping and normalising, set to zero in turn; the change in the logit is the heat of the pixels it covered
  (49 runs of the image encoder per picture and task).

What is explained is the logit of each task's leading label (binary: the positive class; multiclass and multilabel:
the most probable label), before calibration, which is monotone and so changes no ranking.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import torch

from faim.data.batch import PostBatch
from faim.data.elements import PostError
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.decisions import nonfinite_scores, nonfinite_tasks
from faim.encoder import TokenEmbeddings
from faim.encoders.stack import encoder_parts, part_inputs
from faim.model import Elements, WholePostModel, on_model_device

STEPS = 32
"""Integration steps of the integrated gradients (element shares and tokens)."""

ELEMENT_NAMES = {"text": "text", "image": "picture", "comments": "comment", "meta": "metadata"}


def element_label(kind: str, slot: int, count: int) -> str:
    """An element's name for people: ``"text"``, ``"picture"`` where the post has one picture, ``"picture 2"``
    where it has ``count`` of them."""
    return ELEMENT_NAMES[kind] if count == 1 else f"{ELEMENT_NAMES[kind]} {slot + 1}"


@dataclass
class ElementShare:
    """One element's part in a task's logit: ``contribution`` (signed, in logit units), ``share`` (its magnitude
    over all elements'); ``label`` names it for people (``"picture 2"``)."""

    kind: str
    index: int
    label: str
    contribution: float
    share: float


@dataclass
class TokenReading:
    """A text element's tokens as one encoder reads them: ``reader`` names the encoder (its recipe type; a stack's
    member also by its place, ``"use_text, 2 of 3"``, and ``in_stack`` is set), ``tokens`` are ``(token,
    attribution)`` in the text's order (empty for a text with no piece to attribute)."""

    reader: str
    tokens: list[tuple[str, float]]
    in_stack: bool = False


@dataclass
class TaskExplanation:
    """One task's explanation of one post.

    Attributes:
        task: The task's name.
        label: The label whose logit is explained.
        probability: The post's calibrated probability of ``label``.
        shares: Every element the fusion read, largest share first.
        tokens: The text's tokens as each encoder reading it in pieces reads them: one reading, or one per member
            of a stack that reads pieces; empty where no encoder of the text has token embeddings, or the post has
            no text.
        pictures: A heat map ``[H, W]`` per picture (logit change when that region is hidden; positive: the region
            raises the score), in the post's picture order.
        comments: Each comment's readings, as ``tokens`` are the text's, in the post's comment order; empty for a
            post without comments or a model that reads none.
    """

    task: str
    label: str
    probability: float
    shares: list[ElementShare]
    tokens: list[TokenReading]
    pictures: list[np.ndarray] = field(default_factory=list)
    comments: list[list[TokenReading]] = field(default_factory=list)


@dataclass
class Explanation:
    """Why one post got its scores: ``tasks`` one per task; ``pictures`` the post's pictures as the encoder saw
    them (``[H, W, 3]`` uint8, cropped, rescaled for display) for drawing the heat maps on; ``notes`` what could
    not be explained and why."""

    post_id: str
    tasks: list[TaskExplanation]
    pictures: list[np.ndarray]
    notes: list[str]


@dataclass
class TextPieces:
    """One text element of a post (its text, or one of its comments) as one encoder reads it: the element's ``kind``
    and ``slot``; the ``encoder`` reading it, the element's encoder or a member of its stack (``in_stack``), its
    name (``reader``, as ``TokenReading`` names it) and the ``columns`` of the element's embedding its embedding
    fills; ``ids`` and ``mask`` ``[1, T]``, where the pieces enter that encoder as embeddings (``embeddings``), and
    the positions of the pieces that get an attribution (``attributed``)."""

    kind: str
    slot: int
    reader: str
    encoder: torch.nn.Module
    in_stack: bool
    columns: slice
    embeddings: TokenEmbeddings
    ids: torch.Tensor
    mask: torch.Tensor
    attributed: list[int]

    def blanked(self, positions: list[int]) -> torch.Tensor:
        """The ids with the pieces at ``positions`` replaced by the blank piece (all attributed ones: the baseline)."""
        blanked = self.ids.clone()
        blanked[0, positions] = self.embeddings.blank
        return blanked


def reader_name(encoder: torch.nn.Module, index: int, count: int) -> str:
    """An encoder's name for people: its recipe type (its class name where it has none), and for one of a stack's
    ``count`` members its place in the stack (``"use_text, 2 of 3"``)."""
    name = type(encoder).__dict__.get("registry_name", type(encoder).__name__)
    return name if count == 1 else f"{name}, {index + 1} of {count}"


def leading_label(task: TaskSpec, probabilities: np.ndarray) -> int:
    """Index of the label explained: the positive class of a binary task, else the most probable label."""
    return 1 if task.type == "binary" else int(np.argmax(probabilities))


def task_logit(logits: torch.Tensor, task: TaskSpec, label: int) -> torch.Tensor:
    """``[B]`` logits of ``label`` from a head's output (``[B]`` for a binary task, ``[B, C]`` otherwise)."""
    return logits if task.type == "binary" else logits[:, label]


class PostExplainer:
    """Explains posts one at a time with a model's fused element embeddings as the common ground.

    Args:
        model: The model (left in eval mode; gradients flow through frozen weights too, which are not changed).
        batch: One post, collated by the detector's collator (not cached embeddings: encoders run here); it is
            moved to where the model's weights are.
    """

    def __init__(self, model: WholePostModel, batch: PostBatch) -> None:
        if batch.size != 1:
            raise ValueError(f"explanations are computed one post at a time, got a batch of {batch.size}")
        self.model = model.eval()
        self.batch = batch = on_model_device(batch, model)
        with torch.no_grad():
            self.elements = model.encode(batch, kinds=model.fused_kinds)

    def logit(self, elements: Elements, task: TaskSpec, label: int) -> torch.Tensor:
        return task_logit(self.model.logits(elements)[task.name], task, label)

    def repeated(self, size: int, replace: dict[str, torch.Tensor] | None = None) -> Elements:
        """The post's elements repeated ``size`` times, with the embeddings of the kinds in ``replace`` swapped."""
        out = {}
        for kind, (embeddings, mask) in self.elements.items():
            values = (replace or {}).get(kind, embeddings.expand(size, -1, -1))
            out[kind] = (values, mask.expand(size, -1))
        return out

    def shares(self, task: TaskSpec, label: int) -> list[ElementShare]:
        """Integrated gradients over every element embedding the post has (see the module docstring)."""
        from captum.attr import IntegratedGradients  # heavy (brings matplotlib): loaded when first used

        present = [kind for kind, (_, mask) in self.elements.items() if bool(mask.any())]
        if not present:
            return []

        def forward(*embeddings: torch.Tensor) -> torch.Tensor:
            return self.logit(self.repeated(embeddings[0].shape[0], dict(zip(present, embeddings))), task, label)

        inputs = tuple(self.elements[kind][0] for kind in present)
        attributions = IntegratedGradients(forward).attribute(
            inputs, baselines=tuple(torch.zeros_like(x) for x in inputs), n_steps=STEPS
        )
        found = []
        for kind, values in zip(present, attributions):
            mask = self.elements[kind][1][0]
            per_slot = values[0].sum(-1)
            count = int(mask.sum())
            for slot in range(values.shape[1]):
                if mask[slot]:
                    label_text = element_label(kind, slot, count)
                    found.append((kind, slot, label_text, float(per_slot[slot])))
        total = sum(abs(value) for *_, value in found) or 1.0
        shares = [ElementShare(k, s, name, value, abs(value) / total) for k, s, name, value in found]
        return sorted(shares, key=lambda share: -share.share)

    def text_pieces(self, kind: str = "text", slot: int = 0) -> tuple[list[TextPieces], list[str]]:
        """One text element (the post's text, or its comment in ``slot``) as each encoder reading it in pieces reads
        it (its encoder, or each member of its stack), and why any encoder of it gets no token attributions (both
        empty where the post has no such element)."""
        if slot not in self.slots(kind):
            return [], []
        encoder = self.model.encoder_for(kind)
        element = self.batch.elements[kind]
        row = int(torch.nonzero(element.slot_index == slot)[0])
        parts = encoder_parts(encoder)
        texts, notes, start = [], [], 0
        for index, (part, inputs) in enumerate(zip(parts, part_inputs(encoder, element.values))):
            columns, start = slice(start, start + part.output_dim), start + part.output_dim
            reader, in_stack = reader_name(part, index, len(parts)), len(parts) > 1
            embeddings = part.token_embeddings()
            if embeddings is None or not isinstance(inputs, dict) or "input_ids" not in inputs:
                element_kind = ELEMENT_NAMES[kind] + "s" * (kind == "comments")
                if in_stack:
                    shares = f"its part of the {element_kind} is in the shares only"
                else:
                    shares = f"shares only for the {element_kind}"
                notes.append(f"{reader} has no token embeddings to attribute to: {shares}")
                continue
            ids, mask = inputs["input_ids"][row : row + 1], inputs["attention_mask"][row : row + 1]
            attributed = embeddings.attributed(ids, mask)[0].nonzero().flatten().tolist()
            texts.append(TextPieces(kind, slot, reader, part, in_stack, columns, embeddings, ids, mask, attributed))
        return texts, notes

    def text_logit(self, text: TextPieces, ids: torch.Tensor, task: TaskSpec, label: int) -> torch.Tensor:
        """``[k]`` logits of ``label`` with the text element ``text`` read by its reader as the piece ids ``[k, T]``,
        the rest of the post (and the other members' embeddings of the element, in a stack) as it is."""
        values = self.elements[text.kind][0].expand(ids.shape[0], -1, -1).clone()
        mask = text.mask.expand(ids.shape[0], -1)
        values[:, text.slot, text.columns] = text.encoder({"input_ids": ids, "attention_mask": mask})
        return self.logit(self.repeated(ids.shape[0], {text.kind: values}), task, label)

    def slots(self, kind: str) -> list[int]:
        """The slots of the post's elements of ``kind`` (its comments, its text), in order; none where it has none."""
        return self.elements[kind][1][0].nonzero().flatten().tolist() if kind in self.elements else []

    def tokens(
        self, task: TaskSpec, label: int, kind: str = "text", slot: int = 0
    ) -> tuple[list[TokenReading], list[str]]:
        """Token attributions of a text element (the post's text, or its comment in ``slot``) as each encoder
        reading it in pieces reads it, and why any encoder of it has none (``text_pieces``)."""
        texts, notes = self.text_pieces(kind, slot)
        return [self.reading(text, task, label) for text in texts], notes

    def reading(self, text: TextPieces, task: TaskSpec, label: int) -> TokenReading:
        """The attributions of ``text``'s attributed pieces, in order."""
        from captum.attr import LayerIntegratedGradients  # heavy (brings matplotlib): loaded when first used

        if not text.attributed:
            return TokenReading(text.reader, [], text.in_stack)
        layer = LayerIntegratedGradients(lambda ids: self.text_logit(text, ids, task, label), text.embeddings.layer)
        scores = layer.attribute(text.ids, baselines=text.blanked(text.attributed), n_steps=STEPS).sum(-1)[0]
        names = text.embeddings.names(text.ids[0].tolist())
        tokens = [(names[position], float(scores[position])) for position in text.attributed]
        return TokenReading(text.reader, tokens, text.in_stack)

    def pictures(self, task: TaskSpec, label: int) -> list[np.ndarray]:
        """An occlusion heat map per picture of the post."""
        from captum.attr import Occlusion  # heavy (brings matplotlib): loaded when first used

        if "image" not in self.elements or not bool(self.elements["image"][1].any()):
            return []
        encoder = self.model.encoder_for("image")
        pixels = self.batch.elements["image"].values
        slots = self.batch.elements["image"].slot_index.tolist()
        maps = []
        for index, slot in enumerate(slots):
            forward = self.picture_forward(encoder, slot, task, label)
            height, width = pixels.shape[-2:]
            window = max(1, -(-min(height, width) // 7))
            heat = Occlusion(forward).attribute(
                pixels[index : index + 1],
                sliding_window_shapes=(pixels.shape[1], window, window),
                strides=(pixels.shape[1], window, window),
                baselines=0.0,
                perturbations_per_eval=16,
            )
            maps.append(heat[0].sum(0).detach().cpu().numpy())
        return maps

    def picture_forward(
        self, encoder: torch.nn.Module, slot: int, task: TaskSpec, label: int
    ) -> Callable[[torch.Tensor], torch.Tensor]:
        """The task's logit as a function of one picture's pixels ``[k, C, H, W]``, the rest of the post fixed."""

        def forward(images: torch.Tensor) -> torch.Tensor:
            embeddings = self.elements["image"][0].expand(images.shape[0], -1, -1).clone()
            embeddings[:, slot] = encoder(images)
            return self.logit(self.repeated(images.shape[0], {"image": embeddings}), task, label)

        return forward

    def displayed_pictures(self) -> list[np.ndarray]:
        """The post's pictures as the encoder saw them, rescaled to 0–255 for display."""
        if "image" not in self.batch.elements or not self.batch.elements["image"].post_index.numel():
            return []
        shown = []
        for picture in self.batch.elements["image"].values:
            values = picture.permute(1, 2, 0).float().cpu().numpy()
            low, high = values.min(), values.max()
            shown.append(((values - low) / ((high - low) or 1.0) * 255).astype(np.uint8))
        return shown


def unread_elements(post: Post, kinds: Iterable[str], limit: int) -> list[str]:
    """Notes on the pictures and comments of ``post`` past the first ``limit`` of each, for the kinds of ``kinds``
    (those the model reads): the model reads no more of a post (``max_elements``), so they are not explained."""
    notes = []
    for kind, elements in (("image", post.images), ("comments", post.comments)):
        if kind in kinds and len(elements) > limit:
            notes.append(
                f"only the first {limit} of its {len(elements)} {ELEMENT_NAMES[kind]}s were read and explained, as "
                f"the model reads a post (max_elements: {limit})"
            )
    return notes


def cut_texts(explainer: PostExplainer, post: Post) -> list[str]:
    """Notes on the text elements of ``post`` (its text and each comment the model reads, as ``explainer`` read them)
    longer than an encoder reading them in pieces reads (its ``max_length``, as ``TokenEmbeddings.length`` tells):
    the pieces past the limit are not read, so they get no attribution and play no part in its scores."""
    slots = explainer.slots("comments")
    elements = [("text", 0, post.text, "its text")]
    elements += [("comments", slot, post.comments[slot], element_label("comments", slot, len(slots))) for slot in slots]
    notes = []
    for kind, slot, said, label in elements:
        for text in explainer.text_pieces(kind, slot)[0]:
            length, read = text.embeddings.length, int(text.mask.sum())
            pieces = length(said) if length else read
            if pieces > read:
                notes.append(
                    f"{text.reader} reads {read} of the {pieces} pieces of {label} (its max_length, markers included): "
                    f"the last {pieces - read} are not read, so they get no attribution and play no part in the scores"
                )
    return notes


def explain_post(
    model: WholePostModel,
    batch: PostBatch,
    tasks: list[TaskSpec],
    calibrated: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]],
    post: Post,
    notes: list[str],
) -> Explanation:
    """Explain one collated post, ``post``, for every task (``calibrated``: raw logits per task → calibrated
    probabilities, as ``Detector.probabilities``); ``notes``: what the caller knows is not explained
    (``unread_elements``), the explanation's first notes, then the texts cut to an encoder's ``max_length``
    (``cut_texts``).

    Raises:
        PostError: Of kind ``scores``, naming the post and the tasks, where its logits of some task are not finite
            (``faim.decisions.nonfinite_tasks``): they have no probabilities to explain, as ``faim score`` records
            such a post.
    """
    explainer = PostExplainer(model, batch)
    with torch.no_grad():
        logits = {name: value.cpu().numpy() for name, value in model.logits(explainer.elements).items()}
    found = nonfinite_tasks(tasks, logits)  # of its one row
    if found:
        raise PostError(post, (), nonfinite_scores(found[0]), "scores")
    probabilities = calibrated(logits)
    explained, notes, slots = [], [*notes, *cut_texts(explainer, post)], explainer.slots("comments")
    for task in tasks:
        value = np.atleast_1d(probabilities[task.name][0])
        label = leading_label(task, value)
        probability = float(value[0] if task.type == "binary" else value[label])
        texts = [explainer.tokens(task, label), *(explainer.tokens(task, label, "comments", slot) for slot in slots)]
        for _, text_notes in texts:
            for note in text_notes:
                if note not in notes:
                    notes.append(note)
        explained.append(
            TaskExplanation(
                task.name,
                task.labels[label],
                probability,
                explainer.shares(task, label),
                texts[0][0],
                explainer.pictures(task, label),
                [tokens for tokens, _ in texts[1:]],
            )
        )
    return Explanation(post.id, explained, explainer.displayed_pictures(), notes)
