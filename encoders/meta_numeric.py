"""Numeric ``Post.meta`` fields (counts, scores) as one element of kind ``"meta"``.

Each field becomes ``log1p(max(value, 0))``; with ``shares`` the fields' shares of their sum are added (for
counts that make up a whole, such as a speaker's history of verdicts) and ``log1p`` of the sum. A missing
field (absent or ``None``) counts as 0 and sets its own missing-indicator feature. A linear layer with a
GELU maps the features to ``output_dim``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from faim.encoder import Encoder, Preprocessor
from faim.registry import register_encoder


class MetaFeatures:
    """Turn a list of ``Post.meta`` mappings into ``[N, num_features]`` float features (picklable).

    ``check`` (called per post by the collator, which names the post) raises ``ValueError`` when a listed
    field holds something that is not a number.
    """

    def __init__(self, fields: list[str], shares: bool) -> None:
        self.fields = list(fields)
        self.shares = shares

    @property
    def num_features(self) -> int:
        return 2 * len(self.fields) + (len(self.fields) + 1 if self.shares else 0)

    def check(self, meta: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the first listed field that is neither a number nor missing."""
        for name in self.fields:
            value = meta.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ValueError(f"meta field {name!r} must be a number or missing, got {value!r}")

    def row(self, meta: Mapping[str, Any]) -> list[float]:
        self.check(meta)
        values, missing = [], []
        for name in self.fields:
            value = meta.get(name)
            missing.append(float(value is None or math.isnan(value)))
            values.append(0.0 if missing[-1] else max(float(value), 0.0))
        features = [math.log1p(v) for v in values] + missing
        if self.shares:
            total = sum(values)
            features += [v / total if total else 0.0 for v in values] + [math.log1p(total)]
        return features

    def __call__(self, metas: list[Mapping[str, Any]]) -> torch.Tensor:
        return torch.tensor([self.row(meta) for meta in metas], dtype=torch.float32).reshape(-1, self.num_features)


@register_encoder("meta_numeric")
class MetaNumericEncoder(Encoder):
    """Embed numeric metadata fields of a post (``model.encoders.meta``).

    Args:
        fields: ``Post.meta`` keys to read, in order (e.g. LIAR's ``history_false``).
        shares: Also feed each field's share of the fields' sum, and the log of the sum.
        dim: Output size.
        freeze: Keep the projection fixed.
    """

    modality = "meta"

    def __init__(self, fields: list[str], shares: bool = False, dim: int = 64, freeze: bool = False) -> None:
        super().__init__()
        if not fields:
            raise ValueError("meta_numeric: fields must list at least one Post.meta key")
        self.features = MetaFeatures(fields, shares)
        self.projection = nn.Sequential(nn.Linear(self.features.num_features, dim), nn.GELU())
        self.output_dim = dim
        self.apply_freeze(freeze)

    def preprocessor(self) -> Preprocessor:
        return self.features

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """``[N, num_features]`` → ``[N, output_dim]``."""
        return self.projection(inputs)

    def identity(self) -> dict[str, Any]:
        return {"class": type(self).__name__, "fields": self.features.fields, "shares": self.features.shares}
