"""Shared pieces of the fusion layers: kind ordering, masked pooling and learned absent vectors.

Every fusion receives ``elements: dict[str, tuple[Tensor, Tensor]]`` mapping a kind ("text", "image",
"comments", ...) to ``(embeddings [B, n_k, d_k], mask [B, n_k])``, where ``mask`` is True for real
elements. Values at masked positions are arbitrary (padding, even NaN) and must never reach an output.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

Elements = dict[str, tuple[Tensor, Tensor]]


def kind_order(input_dims: dict[str, int]) -> list[str]:
    """Return the kinds in the fixed (sorted) order fusions iterate them in.

    Raises:
        ValueError: If there is no kind or an embedding size is not positive.
    """
    if not input_dims:
        raise ValueError("a fusion needs at least one element kind in input_dims")
    for kind, dim in input_dims.items():
        if dim <= 0:
            raise ValueError(f"input_dims[{kind!r}] must be positive, got {dim}")
    return sorted(input_dims)


def zero_masked(embeddings: Tensor, mask: Tensor) -> Tensor:
    """Replace the embeddings at masked positions by zeros (``where``, so NaN padding is removed too)."""
    return torch.where(mask.unsqueeze(-1), embeddings, embeddings.new_zeros(()))


def masked_mean(embeddings: Tensor, mask: Tensor) -> Tensor:
    """Average ``[B, n, d]`` embeddings over their unmasked elements, giving ``[B, d]``.

    A row without any unmasked element (or ``n == 0``) gives zeros.
    """
    total = zero_masked(embeddings, mask).sum(dim=1)
    count = mask.sum(dim=1, keepdim=True).clamp_min(1).to(total.dtype)
    return total / count


class KindPooling(nn.Module):
    """Masked-mean pool each kind into one vector, using a learned absent vector for rows with none of it.

    The absent vectors let a downstream layer tell "this post has no image" apart from any real image
    embedding instead of seeing an all-zero mean.

    Args:
        input_dims: Embedding size of each element kind.
    """

    def __init__(self, input_dims: dict[str, int]) -> None:
        super().__init__()
        self.kinds = kind_order(input_dims)
        self.absent = nn.ParameterDict(
            {kind: nn.Parameter(0.02 * torch.randn(input_dims[kind])) for kind in self.kinds}
        )

    def forward(self, elements: Elements) -> list[Tensor]:
        """Return one ``[B, d_k]`` tensor per kind, in sorted kind order."""
        pooled = []
        for kind in self.kinds:
            embeddings, mask = elements[kind]
            mean = masked_mean(embeddings, mask)
            absent = self.absent[kind].to(mean.dtype).expand_as(mean)
            pooled.append(torch.where(mask.any(dim=1, keepdim=True), mean, absent))
        return pooled
