"""Self-attention over all elements of a post, read out through a learned [POST] token."""

from __future__ import annotations

import torch
from torch import Tensor, nn

from faim.registry import register_fusion

from .pooling import Elements, kind_order, zero_masked


@register_fusion("attention")
class AttentionFusion(nn.Module):
    """Single-stream transformer fusion over a post's elements with a [CLS]-style summary token.

    As in ViLT (Kim et al., 2021), every element (texts, each image, each comment) becomes one token,
    tagged with a learned kind embedding (and position-within-kind embedding); a learned [POST] token,
    like BERT's [CLS] (Devlin et al., 2019), is prepended and never masked, so a post with no element
    at all still gets a finite embedding. Masked elements are zeroed before projection and excluded
    as keys, so their values never reach the [POST] output.

    Args:
        input_dims: Embedding size of each element kind.
        dim: Transformer width and size of the fused embedding.
        num_heads: Attention heads per layer; must divide ``dim``.
        num_layers: Number of pre-norm transformer encoder layers.
        dropout: Dropout probability inside the transformer layers.
        max_elements: Number of position-within-kind embeddings; elements past it share the last
            one. 0 disables position embeddings (elements of a kind form an unordered set).
    """

    def __init__(
        self,
        input_dims: dict[str, int],
        dim: int = 256,
        num_heads: int = 4,
        num_layers: int = 1,
        dropout: float = 0.1,
        max_elements: int = 64,
    ) -> None:
        super().__init__()
        if dim <= 0 or num_heads <= 0 or dim % num_heads:
            raise ValueError(f"dim ({dim}) must be a positive multiple of num_heads ({num_heads})")
        if num_layers <= 0 or max_elements < 0:
            raise ValueError(f"need num_layers > 0 and max_elements >= 0, got {num_layers} and {max_elements}")
        self.kinds = kind_order(input_dims)
        self.project = nn.ModuleDict({kind: nn.Linear(input_dims[kind], dim) for kind in self.kinds})
        self.kind_embedding = nn.Parameter(0.02 * torch.randn(len(self.kinds), dim))
        self.position_embedding = nn.Parameter(0.02 * torch.randn(max_elements, dim)) if max_elements else None
        self.post_token = nn.Parameter(0.02 * torch.randn(dim))
        layer = nn.TransformerEncoderLayer(
            dim, num_heads, 4 * dim, dropout, activation="gelu", batch_first=True, norm_first=True
        )
        # Nested tensors are off (they require post-norm anyway): padded positions stay dense and finite.
        self.encoder = nn.TransformerEncoder(layer, num_layers, norm=nn.LayerNorm(dim), enable_nested_tensor=False)
        self.output_dim = dim

    def forward(self, elements: Elements) -> Tensor:
        """Fuse the elements of a batch of posts into ``[B, output_dim]``."""
        first = elements[self.kinds[0]][1]
        batch = first.shape[0]
        tokens = [self.post_token.expand(batch, 1, -1)]
        keep = [torch.ones(batch, 1, dtype=torch.bool, device=first.device)]
        for index, kind in enumerate(self.kinds):
            embeddings, mask = elements[kind]
            token = self.project[kind](zero_masked(embeddings, mask)) + self.kind_embedding[index]
            if self.position_embedding is not None:
                positions = torch.arange(mask.shape[1], device=mask.device).clamp_max(len(self.position_embedding) - 1)
                token = token + self.position_embedding[positions]
            tokens.append(token)
            keep.append(mask)
        sequence = torch.cat(tokens, dim=1)
        encoded = self.encoder(sequence, src_key_padding_mask=~torch.cat(keep, dim=1))
        return encoded[:, 0]
