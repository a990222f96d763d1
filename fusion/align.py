"""Whether a post's elements belong together: kinds projected into shared spaces fitted on the training posts by
canonical correlation, and the products of the projections beside each kind's own embedding.

A caption and a picture that are harmless alone but hateful together, or a real photo under a false caption, are
about the pair. Frozen text and image encoders embed into unrelated spaces, and a few hundred labelled posts are too
few to learn a map between them from the labels (attention over the elements stays at chance on such pairs). But
every training post shows which caption goes with which picture: canonical correlation analysis (CCA) fitted on
those pairs finds the directions along which caption and picture vary together, in closed form. In that shared
space the elementwise product of a caption's and a picture's projections (the diagonal of Hate-CLIPper's
interaction matrix) is high where they agree and low where they do not, and the heads read it. The projections
are fitted before training (``fit``, which training calls on the training posts) and then train with the rest.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import combinations

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from faim.notices import warn
from faim.registry import register_fusion
from faim.wording import plural

from .pooling import Elements, KindPooling, masked_mean

MIN_PAIRS = 3
"""The fewest training posts holding both kinds of a pair that ``AlignFusion.fit`` fits the pair's projections on."""


@register_fusion("align")
class AlignFusion(nn.Module):
    """Pairwise alignment features of a post's element kinds, and the kinds themselves.

    Each kind is masked-mean pooled (a learned absent vector where a post has none). For each pair of kinds, both
    are projected to ``dim`` (CCA fitted on the training posts with both, ``fit``), L2-normalised, and multiplied
    elementwise; the output is every pair's product, then, with ``keep_kinds``, every kind's pooled embedding.

    Args:
        input_dims: Embedding size of each element kind.
        dim: Size of each pair's shared space.
        pairs: The pairs of kinds to align (``[[text, image]]``); ``None``: every pair.
        ridge: Regularisation of the CCA's covariances, as a share of each covariance's mean variance; more
            generalises better from few posts.
        keep_kinds: Also output each kind's pooled embedding (what each says alone).
        dropout: Dropout probability applied to the output.
    """

    needs_fit = True

    def __init__(
        self,
        input_dims: dict[str, int],
        dim: int = 64,
        pairs: list[list[str]] | None = None,
        ridge: float = 10.0,
        keep_kinds: bool = True,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        self.pool = KindPooling(input_dims)
        chosen = [tuple(pair) for pair in pairs] if pairs is not None else list(combinations(self.pool.kinds, 2))
        for pair in chosen:
            if len(pair) != 2 or pair[0] == pair[1] or not set(pair) <= set(input_dims):
                raise ValueError(f"align: pair {list(pair)} must name two kinds of {', '.join(sorted(input_dims))}")
        if not chosen:
            raise ValueError("align: needs a pair of kinds to align; with one kind, use concat")
        if dim <= 0 or ridge < 0:
            raise ValueError(f"align: dim must be positive and ridge non-negative, got {dim} and {ridge}")
        self.pairs = chosen
        self.ridge = ridge
        self.keep_kinds = keep_kinds
        self.projections = nn.ModuleList(
            nn.ModuleList([nn.Linear(input_dims[a], dim), nn.Linear(input_dims[b], dim)]) for a, b in chosen
        )
        self.dropout = nn.Dropout(dropout)
        self.output_dim = dim * len(chosen) + (sum(input_dims.values()) if keep_kinds else 0)

    def forward(self, elements: Elements) -> Tensor:
        """Fuse the elements of a batch of posts into ``[B, output_dim]``."""
        pooled = dict(zip(self.pool.kinds, self.pool(elements), strict=True))
        features = []
        for (a, b), (project_a, project_b) in zip(self.pairs, self.projections):
            features.append(F.normalize(project_a(pooled[a]), dim=-1) * F.normalize(project_b(pooled[b]), dim=-1))
        if self.keep_kinds:
            features += [pooled[kind] for kind in self.pool.kinds]
        return self.dropout(torch.cat(features, dim=-1))

    @torch.no_grad()
    def fit(self, batches: Iterable[Elements]) -> None:
        """Fit each pair's projections by CCA on the pooled embeddings of the posts that have both kinds; a pair
        fewer than ``MIN_PAIRS`` posts have both of keeps its random initialisation, with a ``FaimWarning`` naming
        it."""
        means: dict[str, list[Tensor]] = {kind: [] for kind in self.pool.kinds}
        present: dict[str, list[Tensor]] = {kind: [] for kind in self.pool.kinds}
        for elements in batches:
            for kind in self.pool.kinds:
                embeddings, mask = elements[kind]
                means[kind].append(masked_mean(embeddings.float(), mask))
                present[kind].append(mask.any(dim=1))
        pooled = {kind: torch.cat(parts).double().numpy() for kind, parts in means.items()}
        has = {kind: torch.cat(parts).numpy() for kind, parts in present.items()}
        for (a, b), (project_a, project_b) in zip(self.pairs, self.projections):
            both = has[a] & has[b]
            if both.sum() < MIN_PAIRS:
                count = int(both.sum())
                warn(
                    f"align: {plural(count, 'training post')} {'holds' if count == 1 else 'hold'} both {a} and {b}, "
                    f"{MIN_PAIRS} needed to fit their shared space by canonical correlation; its projections keep "
                    "their random initialisation (list in pairs: the kinds the posts hold together, or fuse with "
                    "concat)"
                )
                continue
            for layer, (weight, bias) in zip((project_a, project_b), cca(pooled[a][both], pooled[b][both], self)):
                layer.weight.copy_(torch.from_numpy(weight).float())
                layer.bias.copy_(torch.from_numpy(bias).float())


def cca(x: np.ndarray, y: np.ndarray, fusion: AlignFusion) -> list[tuple[np.ndarray, np.ndarray]]:
    """Regularised CCA of paired rows ``x [N, d_x]`` and ``y [N, d_y]``: per side, the ``(weight [dim, d],
    bias [dim])`` of a linear layer mapping a row to its first ``dim`` canonical variates (unused directions, when
    there are fewer than ``dim``, map to zero)."""
    dim = fusion.projections[0][0].out_features
    x_mean, y_mean = x.mean(0), y.mean(0)
    xc, yc = x - x_mean, y - y_mean
    whiten_x = inverse_sqrt(xc.T @ xc / len(x), fusion.ridge)
    whiten_y = inverse_sqrt(yc.T @ yc / len(y), fusion.ridge)
    left, _, right = np.linalg.svd(whiten_x @ (xc.T @ yc / len(x)) @ whiten_y, full_matrices=False)
    kept = min(dim, left.shape[1])
    sides = []
    for whiten, basis, mean in ((whiten_x, left[:, :kept], x_mean), (whiten_y, right.T[:, :kept], y_mean)):
        weight = np.zeros((dim, whiten.shape[0]))
        weight[:kept] = (whiten @ basis).T
        sides.append((weight, -weight @ mean))
    return sides


def inverse_sqrt(covariance: np.ndarray, ridge: float) -> np.ndarray:
    """``(C + ridge * mean variance * I)^(-1/2)`` of a covariance matrix ``C``."""
    regularised = covariance + ridge * np.trace(covariance) / len(covariance) * np.eye(len(covariance))
    values, vectors = np.linalg.eigh(regularised)
    return vectors @ np.diag(1.0 / np.sqrt(np.clip(values, 1e-12, None))) @ vectors.T
