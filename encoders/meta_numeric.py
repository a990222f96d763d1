"""Numeric ``Post.meta`` fields (counts, scores) as one element of kind ``"meta"``: the features of
``faim.preprocess.meta`` (log counts, missing indicators, optional shares), mapped to ``output_dim`` by a linear
layer with a GELU.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from faim.data.post import ADDED_META
from faim.encoder import Encoder, Preprocessor
from faim.preprocess.meta import MetaRows
from faim.registry import refuse_new, register_encoder
from faim.wording import plural


class MetaFeatures(MetaRows):
    """``MetaRows`` as a float tensor ``[N, num_features]``, the encoder's input (picklable)."""

    def __call__(self, metas: list[Mapping[str, Any]]) -> torch.Tensor:
        return torch.from_numpy(super().__call__(metas))


@register_encoder("meta_numeric")
class MetaNumericEncoder(Encoder):
    """Embed numeric metadata fields of a post (``model.encoders.meta``).

    Args:
        fields: ``Post.meta`` keys to read, in order (e.g. LIAR's ``history_false``), none of those faim fills itself
            (``faim.data.post.ADDED_META``: ``source``, ``lang``), which are not a post's own metadata.
        shares: Also feed each field's share of the fields' sum, and the log of the sum.
        dim: Output size.
        freeze: Keep the projection fixed.
    """

    modality = "meta"

    def __init__(self, fields: list[str], shares: bool = False, dim: int = 64, freeze: bool = False) -> None:
        super().__init__()
        if not fields:
            raise ValueError("meta_numeric: fields must list at least one Post.meta key")
        check_own_fields(fields)
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


def check_own_fields(fields: list[str]) -> None:
    """Refuse ``fields`` naming a ``Post.meta`` field faim fills itself (``ADDED_META``): a post holding only those
    holds no metadata of its own (``Post.has_meta``), so it is left out or refused as empty, never read by the encoder.
    A model saved before faim refused them is loaded with a warning saying so (``refuse_new``).

    Raises:
        ValueError: Naming the fields, why, and what to do instead.
    """
    added = [field for field in fields if field in ADDED_META]
    if not added:
        return
    named = f"{plural(len(added), 'field')} {', '.join(map(repr, added))}"
    it, is_ = ("these", "they are") if len(added) > 1 else ("it", "it is")
    why = (
        f"meta_numeric: {named}: faim fills {it} itself (concat data names each post's source in meta.source, "
        f"language identification gives meta.lang), so {is_} not a post's own metadata"
    )
    refuse_new(
        f"{why}; read the column under another meta name (data.columns: {{meta: {{NAME: COLUMN}}}}) and list that "
        "name in fields",
        f"{why}: this model refuses as empty a post whose metadata holds nothing else",
    )
