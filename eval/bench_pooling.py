"""How the picture comparison of pooled scoring (``faim score --pool-by-image``) grows with distinct pictures.

The pooling pass compares every pair of distinct picture embeddings (``faim.shared_images``). This times
that comparison on generated 1,280-dimensional embeddings (EfficientNet-Lite0's size) at growing counts, half of
them near-duplicate copies of the other half (cosine above 0.99), checks that exactly those pairs are grouped,
and prints each count's time, its ratio to the smallest count's and the peak memory numpy allocated for the
comparison (traced by ``tracemalloc``). Once the pair comparisons dominate, each doubling takes about 4 times as
long, the square (on two cores: 13 s for 20,000, 51 s for 40,000).

    python -m faim.eval.bench_pooling [--sizes 5000 10000 20000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Sequence

import numpy as np

from faim.shared_images import shared_image_groups

DIM = 1280
MIN_COSINE = 0.95  # the cut of the shipped pooling recipe


def pictures_with_copies(distinct: int, seed: int = 0) -> np.ndarray:
    """``distinct`` embeddings: ``distinct // 2`` non-negative originals (like pooled ReLU features), then a
    slightly perturbed copy of each."""
    rng = np.random.default_rng(seed)
    originals = np.abs(rng.standard_normal((distinct // 2, DIM))).astype(np.float32)
    copies = originals + 0.1 * np.abs(rng.standard_normal(originals.shape)).astype(np.float32)
    return np.concatenate([originals, copies])


def time_grouping(distinct: int) -> tuple[float, int]:
    """``(seconds, peak bytes allocated)`` grouping ``distinct`` pictures (the embeddings themselves not counted);
    raises ``AssertionError`` unless each copy joins its original."""
    vectors = pictures_with_copies(distinct)
    tracemalloc.start()
    start = time.perf_counter()
    groups = shared_image_groups(vectors, np.ones(len(vectors), dtype=bool), MIN_COSINE)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    half = len(vectors) // 2
    assert np.array_equal(groups[:half], groups[half:]) and len(np.unique(groups)) == half, "wrong groups"
    return seconds, peak


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m faim.eval.bench_pooling",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[5000, 10000, 20000], help="distinct picture counts")
    args = parser.parse_args(argv)
    print(f"{'distinct pictures':>18} {'seconds':>9} {'x smallest':>11} {'x if quadratic':>15} {'peak GB':>8}")
    first = None
    for size in sorted(args.sizes):
        seconds, peak = time_grouping(size)
        first = first or (size, seconds)
        ratio, quadratic = seconds / first[1], (size / first[0]) ** 2
        print(f"{size:>18,} {seconds:>9.1f} {ratio:>11.1f} {quadratic:>15.1f} {peak / 1e9:>8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
