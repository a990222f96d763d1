"""Hate-CLIPper feature interaction between pooled text and image embeddings."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from faim.registry import register_fusion

from .pooling import Elements, KindPooling

MODES = ("cross", "align")


@register_fusion("interaction")
class InteractionFusion(nn.Module):
    """Feature interaction of Hate-CLIPper (Kumar & Nandakumar, 2022).

    Pooled text ``t`` and image ``v`` (learned absent vectors where a post lacks one) are each
    projected to ``dim`` and L2-normalised, as in the reference implementation; ``cross`` is the
    flattened outer product ``t v^T`` (the feature interaction matrix, ``dim**2`` features) and
    ``align`` its diagonal ``t * v`` (``dim`` features). Every other kind (e.g. comments) is
    masked-mean pooled and concatenated after the interaction, in sorted kind order.

    Args:
        input_dims: Embedding size of each element kind; must contain ``text`` and ``image``.
        dim: Size of the text and image projections.
        mode: "cross" or "align".
        text: Kind used as the text side.
        image: Kind used as the image side.
        dropout: Dropout probability applied to the output.
    """

    def __init__(
        self,
        input_dims: dict[str, int],
        dim: int = 64,
        mode: str = "cross",
        text: str = "text",
        image: str = "image",
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"unknown interaction mode {mode!r}; valid modes: {', '.join(MODES)}")
        for role, kind in (("text", text), ("image", image)):
            if kind not in input_dims:
                raise ValueError(
                    f"interaction fusion needs a {kind!r} kind for its {role} side; "
                    f"available kinds: {', '.join(sorted(input_dims)) or 'none'}"
                )
        if text == image:
            raise ValueError(f"text and image must be different kinds, both are {text!r}")
        if dim <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        self.pool = KindPooling(input_dims)
        self.mode, self.text, self.image = mode, text, image
        self.text_projection = nn.Linear(input_dims[text], dim)
        self.image_projection = nn.Linear(input_dims[image], dim)
        self.others = [kind for kind in self.pool.kinds if kind not in (text, image)]
        self.dropout = nn.Dropout(dropout)
        self.output_dim = (dim * dim if mode == "cross" else dim) + sum(input_dims[kind] for kind in self.others)

    def forward(self, elements: Elements) -> Tensor:
        """Fuse the elements of a batch of posts into ``[B, output_dim]``."""
        pooled = dict(zip(self.pool.kinds, self.pool(elements), strict=True))
        t = F.normalize(self.text_projection(pooled[self.text]), dim=-1)
        v = F.normalize(self.image_projection(pooled[self.image]), dim=-1)
        fused = torch.einsum("bi,bj->bij", t, v).flatten(1) if self.mode == "cross" else t * v
        return self.dropout(torch.cat([fused, *(pooled[kind] for kind in self.others)], dim=-1))
