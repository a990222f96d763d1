"""Gated Multimodal Unit generalised from two modalities to any number of element kinds."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from faim.registry import register_fusion

from .pooling import Elements, KindPooling


@register_fusion("gated")
class GatedFusion(nn.Module):
    """Gated Multimodal Unit (Arevalo et al., 2017, "Gated Multimodal Units for Information Fusion").

    Each kind is masked-mean pooled (a learned absent vector where a post has none of it) to ``x_k``;
    ``h_k = tanh(W_k x_k)``. The gates ``z = softmax_k(W_z [x_1; ...; x_K])`` are per output feature,
    as in the GMU, with the sigmoid of its two-modality form replaced by a softmax over the K kinds;
    the output is ``sum_k z_k * h_k``. With a single kind the gate is constant 1.

    Args:
        input_dims: Embedding size of each element kind.
        dim: Size of the fused embedding.
        dropout: Dropout probability applied to the output.
    """

    def __init__(self, input_dims: dict[str, int], dim: int = 256, dropout: float = 0.0) -> None:
        super().__init__()
        if dim <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        self.pool = KindPooling(input_dims)
        self.hidden = nn.ModuleDict({kind: nn.Linear(input_dims[kind], dim) for kind in self.pool.kinds})
        self.gate = nn.Linear(sum(input_dims.values()), len(self.pool.kinds) * dim)
        self.dropout = nn.Dropout(dropout)
        self.output_dim = dim

    def forward(self, elements: Elements) -> Tensor:
        """Fuse the elements of a batch of posts into ``[B, output_dim]``."""
        pooled = self.pool(elements)
        hidden = torch.stack(
            [torch.tanh(self.hidden[kind](x)) for kind, x in zip(self.pool.kinds, pooled, strict=True)], dim=1
        )
        gates = self.gate(torch.cat(pooled, dim=-1)).view_as(hidden).softmax(dim=1)
        return self.dropout((gates * hidden).sum(dim=1))
