"""Run a model over a loader and collect ids, logits, targets and metadata (for calibration and evaluation)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from faim.model import WholePostModel


@dataclass
class Predictions:
    """Outputs over a split, in loader order.

    Attributes:
        ids: Post ids.
        logits: Task → raw logits (``[N]`` binary, ``[N, C]`` multiclass, ``[N, L]`` multilabel).
        targets: Task → targets as the heads' losses take them (NaN / -100 = unlabelled).
        meta: Per-post metadata dicts (for slices).
    """

    ids: list[str] = field(default_factory=list)
    logits: dict[str, np.ndarray] = field(default_factory=dict)
    targets: dict[str, np.ndarray] = field(default_factory=dict)
    meta: list[dict[str, Any]] = field(default_factory=list)


@torch.inference_mode()
def predict(
    model: WholePostModel, loader: DataLoader, drop: Iterable[str] = (), desc: str = "predicting"
) -> Predictions:
    """Logits of every head for every post the loader yields; ``drop`` masks element kinds out."""
    model.eval()
    drop = tuple(drop)
    ids: list[str] = []
    meta: list[dict[str, Any]] = []
    logits: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    targets: dict[str, list[torch.Tensor]] = {name: [] for name in model.heads}
    for batch in tqdm(loader, desc=desc, unit="batch", leave=False):
        out = model(batch, drop)
        ids.extend(batch.ids)
        meta.extend(batch.meta)
        for name in model.heads:
            logits[name].append(out[name].float().cpu())
            if name in batch.targets:
                targets[name].append(batch.targets[name].cpu())
    return Predictions(
        ids,
        {name: torch.cat(parts).numpy() for name, parts in logits.items() if parts},
        {name: torch.cat(parts).numpy() for name, parts in targets.items() if parts},
        meta,
    )
