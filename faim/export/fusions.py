"""A graph from torch.onnx's dynamo exporter rewritten into onnxruntime's fused operators (``Attention``,
``SkipLayerNormalization``, ``BiasGelu`` and the like: onnxscript's ``optimize_for_ort``), then its constants
folded, so that the weights an operator reads (a transformer layer's query, key and value projections joined into
one matrix) are stored as such rather than computed as the graph runs.

Why: the exporter writes attention, layer norm and GELU as dozens of small operators; fused, MiniLM's text graph
scores ``hate_text_frozen``'s validation posts about 1.1x faster in fp32, and its int8 copy (``faim.export.quantize``)
loses 0.004 macro-F1 there rather than 0.015, because the fused ``Attention`` keeps the query, key and value
products in fp32. The fused operators are onnxruntime's own (domain ``com.microsoft``): an export is read by
onnxruntime (``faim.runtime``), nothing else."""

from __future__ import annotations

from pathlib import Path

import onnx_ir as ir
import onnxscript.optimizer
from onnxscript.rewriter.ort_fusions import optimize_for_ort

FOLDED_ELEMENTS = 2**24
"""The largest constant (in elements) folding may compute: enough for a joined query-key-value matrix of any
encoder faim ships, small against the weights themselves."""


def write_fused(model: ir.Model, path: Path) -> None:
    """Write ``model`` (an exported program's ONNX model, changed in place) to ``path`` with onnxruntime's fusions
    applied and its constants folded, weights inside the file."""
    optimize_for_ort(model)
    onnxscript.optimizer.optimize(model, input_size_limit=FOLDED_ELEMENTS, output_size_limit=FOLDED_ELEMENTS)
    ir.save(model, path)
