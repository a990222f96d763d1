"""int8 exports: the weights of every encoder graph's matrix products quantized to int8, one scale per output channel,
by onnxruntime's dynamic quantization (activations are quantized per batch as the graph runs), a transformer's
fused ``Attention`` included (``QAttention``: its query, key and value products in int8, the attention itself in
fp32), the fusion-and-heads graph kept in fp32 (small, and it holds the calibration). Whether the quantized model
is good enough is measured on labelled posts by the caller (``faim.eval.quantization``).

The figures that chose these settings (``python -m faim.eval.bench_quantization``, validation posts, two cores):
with AVX-512 VNNI, ``hate_text_frozen`` loses 0.009 macro-F1 at 1.8x the fp32 posts/s (0.006 with its posts
batched in input order rather than shortest text first); keeping ``Attention`` in fp32 loses 0.012 at 1.45x there (that ``Attention`` is then half the int8 graph's time). Measured earlier on AVX2
cores without VNNI, where the int8 products run only about 1.6x as fast as in fp32 and the whole gains far less:
one scale per tensor instead of per channel lost 0.028, static quantization (activation scales fixed from 256
training posts) 0.024-0.027 and ran no faster."""

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
                        op_types_to_quantize=["MatMul", "Attention"],
                    )
                finally:
                    logging.disable(logging.NOTSET)
        write_manifest(staging, manifest | {"quantized": "int8"})
    return target
