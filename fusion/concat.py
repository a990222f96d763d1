"""Late fusion by concatenating one pooled vector per element kind."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from faim.registry import register_fusion

from .pooling import Elements, KindPooling


@register_fusion("concat")
class ConcatFusion(nn.Module):
    """Late fusion: the "Concat BERT" baseline of the Hateful Memes Challenge (Kiela et al., 2020).

    Each kind is masked-mean pooled (a learned absent vector where a post has none of that kind) and
    the pooled vectors are concatenated in sorted kind order, then optionally projected.

    Args:
        input_dims: Embedding size of each element kind.
        dim: Size of a Linear + GELU projection of the concatenation; None keeps the concatenation
            itself, so ``output_dim = sum(input_dims.values())``.
        dropout: Dropout probability applied to the output.
    """

    def __init__(self, input_dims: dict[str, int], dim: int | None = None, dropout: float = 0.0) -> None:
        super().__init__()
        self.pool = KindPooling(input_dims)
        concat_dim = sum(input_dims.values())
        if dim is None:
            self.project: nn.Module = nn.Identity()
            self.output_dim = concat_dim
        else:
            if dim <= 0:
                raise ValueError(f"dim must be positive or None, got {dim}")
            self.project = nn.Sequential(nn.Linear(concat_dim, dim), nn.GELU())
            self.output_dim = dim
        self.dropout = nn.Dropout(dropout)

    def forward(self, elements: Elements) -> Tensor:
        """Fuse the elements of a batch of posts into ``[B, output_dim]``."""
        return self.dropout(self.project(torch.cat(self.pool(elements), dim=-1)))
