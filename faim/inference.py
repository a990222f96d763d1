"""The one inference loop: batches of posts through a model, collecting each head's logits and, on request, the
whole-post embeddings and each post's first element of a kind posts are linked by (their picture).

``Detector.score`` and ``.embed``, the scoring workers, calibration and evaluation all run ``predict``; what they
do with its ``Predictions`` (probabilities, decisions, metrics, Parquet rows) is theirs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from tqdm.auto import tqdm

from faim.data.batch import PostBatch
from faim.model import Elements, WholePostModel, check_full_precision, evaluating, model_device, on_model_device


@dataclass
class Predictions:
    """Outputs over a sequence of batches, one row per post, in batch order.

    Attributes:
        ids: Post ids.
        logits: Task → raw logits (``[N]`` binary, ``[N, C]`` multiclass, ``[N, L]`` multilabel).
        targets: Task → targets as the heads' losses take them (NaN / -100 = unlabelled); only for tasks the
            batches carry targets of.
        meta: Per-post metadata dicts (for slices).
        embeddings: With ``predict(embeddings=True)``, whole-post embeddings ``[N, D]``; otherwise ``None``.
        link_embeddings: With ``predict(link_kind=...)``, each post's first element of that kind embedded,
            ``[N, d]`` (zeros where ``link_present`` is False); otherwise ``None``.
        link_present: Whether each post has (an unmasked) element of the link kind, ``[N]`` bool, or ``None``.
        corrections: Whether each post questions or corrects what it shares (``faim.preprocess.corrections``),
            ``[N]`` bool, or ``None`` where the batches did not tell.
    """

    ids: list[str] = field(default_factory=list)
    logits: dict[str, np.ndarray] = field(default_factory=dict)
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    meta: list[dict[str, Any]] = field(default_factory=list)
    embeddings: np.ndarray | None = None
    link_embeddings: np.ndarray | None = None
    link_present: np.ndarray | None = None
    corrections: np.ndarray | None = None

    def rows(self, indices: Sequence[int] | np.ndarray) -> Predictions:
        """These predictions' rows at ``indices``, in that order."""
        indices = np.asarray(indices, dtype=np.int64)

        def pick(array: np.ndarray | None) -> np.ndarray | None:
            return None if array is None else array[indices]

        return Predictions(
            [self.ids[index] for index in indices],
            {name: array[indices] for name, array in self.logits.items()},
            {name: array[indices] for name, array in self.targets.items()},
            [self.meta[index] for index in indices],
            pick(self.embeddings),
            pick(self.link_embeddings),
            pick(self.link_present),
            pick(self.corrections),
        )


CROWD_KINDS = {"text", "comments"}
"""The element kinds ``faim.preprocess.corrections`` reads."""


@torch.inference_mode()
def predict(
    model: WholePostModel,
    batches: Iterable[PostBatch],
    drop: Iterable[str] = (),
    desc: str | None = "predicting",
    link_kind: str | None = None,
    embeddings: bool = False,
    device: torch.device | None = None,
    source: str | None = None,
) -> Predictions:
    """Run ``model`` over every batch (a DataLoader, or any iterable of collated batches), in eval mode; each of its
    modules is left in the mode it was in.

    Args:
        model: The network.
        batches: Collated batches; each must hold the fused kinds (and ``link_kind``).
        drop: Element kinds masked out, as if no post had them (unimodal ablations). With the text or the
            comments masked, no post is read as questioning or correcting what it shares (``corrections``): the
            crowd's words are text.
        desc: Label of the progress bar; ``None`` shows none.
        link_kind: Also embed each post's first element of this kind (e.g. ``"image"``), for linking posts that
            share it; a dropped kind links nothing.
        embeddings: Also keep the whole-post embeddings.
        device: Move each batch there first (``None``: where the model's weights are, ``model_device``).
        source: Where the model was read from, as an error names it.

    Raises:
        ValueError: On a model put in half precision (``check_full_precision``), before a batch is drawn.
    """
    check_full_precision(model, source)
    drop = tuple(drop)
    kinds = model.kinds_with(link_kind)
    ids: list[str] = []
    meta: list[dict[str, Any]] = []
    logits: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    targets: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    fused: list[torch.Tensor] = []
    links: list[torch.Tensor] = []
    present: list[torch.Tensor] = []
    corrections: list[bool] = []
    told, crowd_read = True, not set(drop) & CROWD_KINDS
    with evaluating(model):
        for batch in tqdm(batches, desc=desc, unit="batch", leave=False, disable=desc is None):
            batch = on_model_device(batch, model, device)
            elements = model.encode(batch, drop, kinds)  # each kind encoded once, fused or linking or both
            embedding = model.fuse(elements)
            out = model.head_logits(embedding)
            ids.extend(batch.ids)
            meta.extend(batch.meta)
            corrections.extend(batch.corrections)
            told &= len(batch.corrections) == batch.size
            for name in model.heads:
                logits[name].append(out[name].float().cpu())
                if name in batch.targets:
                    targets[name].append(batch.targets[name].cpu())
            if embeddings:
                fused.append(embedding.float().cpu())
            if link_kind is not None:
                vectors, first = first_elements(elements, link_kind, batch.size)
                links.append(vectors.cpu())
                present.append(first.cpu())
        if not ids:
            for name, out in no_logits(model).items():
                logits[name].append(out.float().cpu())
    return Predictions(
        ids,
        {name: torch.cat(parts).numpy() for name, parts in logits.items() if parts},
        {name: torch.cat(parts).numpy() for name, parts in targets.items() if parts},
        meta,
        _stack(fused, embeddings, (0, model.fusion.output_dim)),
        torch.cat(links).numpy() if links else None,
        torch.cat(present).numpy() if present else None,
        np.array(corrections, dtype=bool) & crowd_read if told else None,
    )


def no_logits(model: WholePostModel) -> dict[str, torch.Tensor]:
    """Each head's logits of no post (``[0]`` binary, ``[0, C]`` multiclass, ``[0, L]`` multilabel), as the heads give
    them, so that predictions over no post hold every task, as those over some do."""
    return model.head_logits(torch.zeros(0, model.fusion.output_dim, device=model_device(model)))


def _stack(parts: list[torch.Tensor], wanted: bool, empty: tuple[int, int]) -> np.ndarray | None:
    """The rows of ``parts`` as one float32 array (``empty``-shaped when there are none), or ``None`` unless
    ``wanted``."""
    if not wanted:
        return None
    return torch.cat(parts).numpy() if parts else np.zeros(empty, np.float32)


def first_elements(elements: Elements, kind: str, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each post's first element of ``kind`` embedded, ``[B, d]`` float32 (zeros where it has none), and whether
    it has one (unmasked), ``[B]`` bool."""
    embeddings, mask = elements[kind]
    first = mask[:, 0] if mask.shape[1] else torch.zeros(size, dtype=torch.bool, device=mask.device)
    vectors = embeddings[:, 0] if mask.shape[1] else embeddings.new_zeros(size, embeddings.shape[-1])
    return torch.where(first.unsqueeze(-1), vectors, 0.0).float(), first
