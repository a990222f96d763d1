"""Pool evidence across posts that share a picture.

A picture reused across many posts usually carries one verdict: in MediaEval's "Verifying Multimedia Use"
set the label belongs to the image, and in a content dump a meme or a doctored photo is re-shared with many
captions. One caption is weak evidence about the picture; the mean over every post that shows it is much
stronger. Here posts are linked when the embeddings of their pictures are near-duplicates (cosine at least
``min_cosine``), groups are the connected components of those links, and each post takes its group's mean
logits. Posts without a picture stay alone. A group's share of posts that question or correct its picture
(``correction_evidence``) is the crowd's own verdict on it.

The comparison is all pairs of distinct pictures, in blocks, so its time grows with their square: fine for
evaluation sets and for dumps with tens of thousands of distinct pictures (``faim score --pool-by-image``);
far more need an approximate nearest-neighbour index instead.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

BLOCK = 2048
"""Rows of the cosine matrix computed at a time (BLOCK x distinct pictures floats)."""


def shared_image_groups(embeddings: np.ndarray, present: np.ndarray, min_cosine: float) -> np.ndarray:
    """Group posts whose pictures are near-duplicates.

    Args:
        embeddings: One picture embedding per post, ``[N, d]``; rows where ``present`` is False are ignored.
        present: Whether each post has a picture, ``[N]`` bool.
        min_cosine: Two pictures are linked when the cosine of their embeddings is at least this, in (0, 1].

    Returns:
        Group index per post, ``[N]`` int64; posts in one group share a value, posts without a picture each
        have a group of their own.

    Raises:
        ValueError: On mismatched shapes, non-finite embeddings of present posts or ``min_cosine`` outside (0, 1].
    """
    vectors = np.asarray(embeddings, dtype=np.float64)
    has = np.asarray(present, dtype=bool)
    if vectors.ndim != 2 or has.shape != (vectors.shape[0],):
        raise ValueError(f"embeddings must be [N, d] and present [N], got {vectors.shape} and {has.shape}")
    if not 0 < min_cosine <= 1:
        raise ValueError(f"min_cosine must be in (0, 1], got {min_cosine}")
    if not np.isfinite(vectors[has]).all():
        raise ValueError("picture embeddings must be finite")
    groups = np.arange(len(has), dtype=np.int64) + len(has)  # singletons, numbered after the picture groups
    if not has.any():
        return groups
    distinct, inverse = np.unique(vectors[has], axis=0, return_inverse=True)
    norms = np.linalg.norm(distinct, axis=1, keepdims=True)
    unit = distinct / np.where(norms > 0, norms, 1.0)
    rows, cols = [], []
    for start in range(0, len(unit), BLOCK):
        block = unit[start : start + BLOCK] @ unit.T
        i, j = np.nonzero(block >= min_cosine - 1e-9)
        rows.append(i + start)
        cols.append(j)
    links = coo_matrix(
        (np.ones(sum(map(len, rows)), dtype=np.int8), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(unit), len(unit)),
    )
    _, component = connected_components(links, directed=False)
    groups[has] = component[inverse.ravel()]
    return groups


def pool_by_group(logits: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Replace each row of ``logits`` (``[N]`` or ``[N, C]``) by the mean over the rows of its group."""
    values = np.asarray(logits, dtype=np.float64)
    index = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    if index.shape[0] != values.shape[0]:
        raise ValueError(f"logits and groups must have one row per post, got {values.shape[0]} and {index.shape[0]}")
    counts = np.bincount(index).astype(np.float64)
    flat = values.reshape(len(values), -1)
    sums = np.stack([np.bincount(index, weights=flat[:, c]) for c in range(flat.shape[1])], axis=1)
    return (sums / counts[:, None])[index].reshape(values.shape)


def correction_evidence(corrections: np.ndarray, groups: np.ndarray, has_picture: np.ndarray) -> np.ndarray:
    """Per post, ``log(1 + the percentage of its group's posts that question or correct what they share)``
    (``faim.preprocess.corrections``): 0 where none does, 0.69 where one in a hundred does, 2.4 where one in ten
    does, 4.6 where all do; 0 for a post without a picture (``has_picture`` False), which no crowd shares. The
    logarithm lets a few such posts among many count: a crowd rarely corrects a picture in more than a few of the
    posts that share it."""
    flags = np.asarray(corrections, dtype=np.float64)
    has = np.asarray(has_picture, dtype=bool)
    index = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    if not index.shape == flags.shape == has.shape:
        raise ValueError(
            f"corrections, groups and has_picture must have one row per post, got {flags.shape}, {index.shape} "
            f"and {has.shape}"
        )
    share = np.bincount(index, weights=flags * has) / np.bincount(index)
    return np.where(has, np.log1p(100.0 * share)[index], 0.0)
