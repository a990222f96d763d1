"""The int8 benchmark's reading of where the time goes: the share of fp32 time int8 replaced, the rate of the
replacements, and Amdahl's bound from the two."""

from __future__ import annotations

from collections import Counter

import pytest

from faim.eval.bench_quantization import where_time_goes


def test_the_bound_follows_from_the_quantized_share_and_their_speedup() -> None:
    fp32 = Counter({"MatMul": 700, "Attention": 200, "SkipLayerNormalization": 100})
    # int8 kept 100 µs of products between activations as MatMul; the 600 µs of weight products ran in 300 µs
    int8 = Counter({"MatMul": 100, "DynamicQuantizeMatMul": 300, "Attention": 200, "SkipLayerNormalization": 100})
    figures = where_time_goes(fp32, int8)
    assert figures["quantized_share"] == pytest.approx(0.6)
    assert figures["quantized_ops_speedup"] == pytest.approx(2.0)
    assert figures["bound"] == pytest.approx(1 / (0.4 + 0.3))
    assert figures["profiled_speedup"] == pytest.approx(1000 / 700)
