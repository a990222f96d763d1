"""The int8 benchmark's reading of where the time goes: the share of fp32 time int8 replaced, the rate of the
replacements, the speed-up the profile shows and the most that quantizing that share could give (Amdahl's law)."""

from __future__ import annotations

from collections import Counter

import pytest

from faim.eval.bench_quantization import where_time_goes

FP32 = Counter({"MatMul": 700, "Attention": 200, "SkipLayerNormalization": 100})


def test_the_share_and_the_rate_of_the_replaced_operators_and_the_profiled_speedup_are_read_from_the_profiles() -> None:
    # int8 kept 100 µs of products between activations as MatMul; the 600 µs of weight products ran in 300 µs
    int8 = Counter({"MatMul": 100, "DynamicQuantizeMatMul": 300, "Attention": 200, "SkipLayerNormalization": 100})
    figures = where_time_goes(FP32, int8)
    assert figures["quantized_share"] == pytest.approx(0.6)
    assert figures["quantized_ops_speedup"] == pytest.approx(2.0)
    assert figures["profiled_speedup"] == pytest.approx(1000 / 700)


@pytest.mark.parametrize("replacements", [300, 60, 6])
def test_the_bound_is_what_the_share_allows_however_fast_the_replacements_run(replacements: int) -> None:
    int8 = Counter(
        {"MatMul": 100, "DynamicQuantizeMatMul": replacements, "Attention": 200, "SkipLayerNormalization": 100}
    )
    figures = where_time_goes(FP32, int8)
    assert figures["bound"] == pytest.approx(1 / (1 - 0.6))
    assert figures["profiled_speedup"] == pytest.approx(1000 / (400 + replacements))
    assert figures["profiled_speedup"] < figures["bound"]
