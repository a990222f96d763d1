"""int8 exports: the weights of every encoder graph's matrix products quantized to int8, one scale per output channel,
by onnxruntime's dynamic quantization (activations are quantized per batch as the graph runs), the fusion-and-heads
graph kept in fp32 (small, and it holds the calibration). A transformer's query, key and value products stay in
fp32 inside its fused ``Attention`` (``faim.export.fusions``). On ``hate_text_frozen``'s 1,000 validation posts
these settings lose 0.004 macro-F1 at 1.1x-1.3x the fp32 posts/s (``python -m faim.eval.bench_quantization``); in
scripts of their own beside them, one scale per tensor lost 0.028 at 1.3x-1.4x, and quantizing the query, key and
value products too (on the graph before fusion) 0.015 at 1.4x, static quantization (activation scales fixed from
256 training posts) 0.024-0.027, no faster in one pass. On two AVX2 cores without VNNI the int8 products run
about 1.6x as fast as in fp32 and take 58 % of the text graph's fp32 time, which bounds the whole at about 1.3x.
Whether the quantized model is good enough is measured on labelled posts by the caller (``faim.eval.quantization``)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from onnxruntime.quantization import QuantType, quantize_dynamic

from faim.export.staging import staged, write_manifest
from faim.runtime.bundle import read_bundle


def quantize_export(source: str | Path, target: str | Path) -> Path:
    """Write ``source`` (an fp32 export) to ``target`` with its encoder graphs quantized to int8; ``target`` is
    replaced atomically if it exists, ``source`` is left as it is."""
    source, target = Path(source), Path(target)
    manifest = read_bundle(source)
    with staged(target) as staging:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        for entry in manifest["encoders"].values():
            for part in entry["parts"]:
                logging.disable(logging.WARNING)  # onnxruntime advises its pre-processing on the root logger
                try:
                    quantize_dynamic(
                        source / part["graph"],
                        staging / part["graph"],
                        weight_type=QuantType.QInt8,
                        per_channel=True,
                        op_types_to_quantize=["MatMul"],
                    )
                finally:
                    logging.disable(logging.NOTSET)
        write_manifest(staging, manifest | {"quantized": "int8"})
    return target
