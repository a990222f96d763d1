"""Rows of token ids of different lengths as one padded batch, torch-free (the encoders' preprocessors and the
runtime share it)."""

from __future__ import annotations

import numpy as np


def padded(rows: list[list[int]], pad: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, mask)``, int64 ``[N, T]``: each row's ids then ``pad`` up to the longest row (at least 1 wide), and
    1 where a row has an id, 0 at its padding."""
    width = max((len(row) for row in rows), default=1)
    ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for index, row in enumerate(rows):
        ids[index, : len(row)] = row
        mask[index, : len(row)] = 1
    return ids, mask
