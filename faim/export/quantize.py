"""int8 exports: every encoder graph's weights quantized to int8 by onnxruntime's dynamic quantization (activations
are quantized per batch as the graph runs), the fusion-and-heads graph kept in fp32 (small, and it holds the
calibration). Whether the quantized model is good enough is measured on labelled posts by the caller
(``faim.eval.quantization``)."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from onnxruntime.quantization import QuantType, quantize_dynamic

from faim.file_digests import file_digests
from faim.runtime.bundle import MANIFEST, read_bundle


def quantize_export(source: str | Path, target: str | Path) -> Path:
    """Write ``source`` (an fp32 export) to ``target`` with its encoder graphs quantized to int8; ``target`` is
    replaced atomically if it exists, ``source`` is left as it is."""
    source, target = Path(source), Path(target)
    manifest = read_bundle(source)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".faim-int8-", dir=target.parent))
    try:
        shutil.copytree(source, staging, dirs_exist_ok=True)
        for entry in manifest["encoders"].values():
            for part in entry["parts"]:
                quantize_dynamic(source / part["graph"], staging / part["graph"], weight_type=QuantType.QInt8)
        (staging / MANIFEST).unlink()
        manifest |= {"quantized": "int8", "files": file_digests(staging)}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if target.exists():
        shutil.rmtree(target)
    staging.rename(target)
    return target
