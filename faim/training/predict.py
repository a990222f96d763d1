"""Run a model over a loader and collect ids, logits, targets and metadata (for calibration and evaluation)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from faim.model import Elements, WholePostModel


@dataclass
class Predictions:
    """Outputs over a split, in loader order.

    Attributes:
        ids: Post ids.
        logits: Task → raw logits (``[N]`` binary, ``[N, C]`` multiclass, ``[N, L]`` multilabel).
        targets: Task → targets as the heads' losses take them (NaN / -100 = unlabelled).
        meta: Per-post metadata dicts (for slices).
        link_embeddings: With ``predict(link_kind=...)``, each post's first element of that kind embedded,
            ``[N, d]`` (zeros where ``link_present`` is False); otherwise ``None``.
        link_present: Whether each post has (an unmasked) element of the link kind, ``[N]`` bool, or ``None``.
    """

    ids: list[str] = field(default_factory=list)
    logits: dict[str, np.ndarray] = field(default_factory=dict)
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    meta: list[dict[str, Any]] = field(default_factory=list)
    link_embeddings: np.ndarray | None = None
    link_present: np.ndarray | None = None


@torch.inference_mode()
def predict(
    model: WholePostModel,
    loader: DataLoader,
    drop: Iterable[str] = (),
    desc: str = "predicting",
    link_kind: str | None = None,
) -> Predictions:
    """Logits of every head for every post the loader yields; ``drop`` masks element kinds out.

    With ``link_kind`` (e.g. ``"image"``), also each post's first element of that kind embedded, for linking
    posts that share it; a dropped kind links nothing.
    """
    model.eval()
    drop = tuple(drop)
    ids: list[str] = []
    meta: list[dict[str, Any]] = []
    logits: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    targets: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    links: list[torch.Tensor] = []
    present: list[torch.Tensor] = []
    kinds = model.kinds_with(link_kind)
    for batch in tqdm(loader, desc=desc, unit="batch", leave=False):
        elements = model.encode(batch, drop, kinds)  # each kind encoded once, fused or linking or both
        out = model.logits(elements)
        ids.extend(batch.ids)
        meta.extend(batch.meta)
        for name in model.heads:
            logits[name].append(out[name].float().cpu())
            if name in batch.targets:
                targets[name].append(batch.targets[name].cpu())
        if link_kind is not None:
            vectors, first = first_elements(elements, link_kind, batch.size)
            links.append(vectors.cpu())
            present.append(first.cpu())
    return Predictions(
        ids,
        {name: torch.cat(parts).numpy() for name, parts in logits.items() if parts},
        {name: torch.cat(parts).numpy() for name, parts in targets.items() if parts},
        meta,
        torch.cat(links).numpy() if links else None,
        torch.cat(present).numpy() if present else None,
    )


def first_elements(elements: Elements, kind: str, size: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Each post's first element of ``kind`` embedded, ``[B, d]`` float32 (zeros where it has none), and whether
    it has one (unmasked), ``[B]`` bool."""
    embeddings, mask = elements[kind]
    first = mask[:, 0] if mask.shape[1] else torch.zeros(size, dtype=torch.bool, device=mask.device)
    vectors = embeddings[:, 0] if mask.shape[1] else embeddings.new_zeros(size, embeddings.shape[-1])
    return torch.where(first.unsqueeze(-1), vectors, 0.0).float(), first
