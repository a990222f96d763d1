"""A graph from torch.onnx's dynamo exporter rewritten into onnxruntime's fused operators (``Attention``,
``SkipLayerNormalization``, ``BiasGelu`` and the like: onnxscript's ``optimize_for_ort``), then its constants
folded, so that the weights an operator reads (a transformer layer's query, key and value projections joined into
one matrix) are stored as such rather than computed as the graph runs.

Why: the exporter writes attention, layer norm and GELU as dozens of small operators; fused, MiniLM's text graph
scores ``hate_text_frozen``'s validation posts about 1.1x faster in fp32. The fused operators are onnxruntime's own
(domain ``com.microsoft``): an export is read by onnxruntime (``faim.runtime``), nothing else.

Each fused ``Attention`` then reads the padding mask itself (``padding_mask_read_by_attention``) rather than an
additive bias the graph computes from it: the same scores, and the form onnxruntime's int8 quantization can turn
into ``QAttention`` (``faim.export.quantize``), which it cannot do for an ``Attention`` that takes a bias."""

from __future__ import annotations

from pathlib import Path

import onnx_ir as ir
import onnxscript.optimizer
from onnxscript.rewriter.ort_fusions import optimize_for_ort

FOLDED_ELEMENTS = 2**24
"""The largest constant (in elements) folding may compute: enough for a joined query-key-value matrix of any
encoder faim ships, small against the weights themselves."""

MASK_INPUT = "attention_mask"
"""The graph input holding a text batch's padding mask (``[N, T]``, 1 for a token, 0 for padding)."""


def write_fused(model: ir.Model, path: Path, attention_reads_mask: bool = True) -> None:
    """Write ``model`` (an exported program's ONNX model, changed in place) to ``path`` with onnxruntime's fusions
    applied, attention reading the padding mask (unless ``attention_reads_mask`` is false) and constants folded
    (which drops a bias no longer read), weights inside the file."""
    optimize_for_ort(model)
    if attention_reads_mask:
        padding_mask_read_by_attention(model.graph)
    onnxscript.optimizer.optimize(model, input_size_limit=FOLDED_ELEMENTS, output_size_limit=FOLDED_ELEMENTS)
    ir.save(model, path)


def padding_mask_read_by_attention(graph: ir.Graph) -> int:
    """Give each fused ``Attention`` whose additive bias is computed from the ``attention_mask`` input alone that
    mask (as int32, onnxruntime's 2-D ``mask_index``: 1 attend, 0 skip) in place of the bias, and drop the
    ``qkv_hidden_sizes`` it carries when the query, key and value are equally wide (the operator's default then).
    An attention that also reads a mask index or past state, or whose bias comes from any other input, is left as
    it is. A bias computed from the mask and constants may hold more than the padding (a causal mask): whether the
    result scores as the model does is checked on padded texts by the export (``faim.export.model.traced``), which
    writes the graph again without this step where it does not. Returns how many were rewritten."""
    mask = next((value for value in graph.inputs if value.name == MASK_INPUT), None)
    if mask is None:
        return 0
    as_int32 = None
    rewritten = 0
    for node in list(graph):
        if node.op_type != "Attention" or node.domain != "com.microsoft" or len(node.inputs) < 6:
            continue
        mask_index, past, bias = node.inputs[3], node.inputs[4], node.inputs[5]
        later = [value for value in node.inputs[6:] if value is not None]  # past sequence length and the like
        if mask_index is not None or past is not None or later or bias is None or graph_inputs_of(bias) != {mask}:
            continue
        if as_int32 is None:
            cast = ir.node("Cast", inputs=[mask], attributes={"to": ir.DataType.INT32}, name="attention_mask_int32")
            graph.insert_before(node, cast)
            as_int32 = cast.outputs[0]
        node.replace_input_with(3, as_int32)
        node.resize_inputs(5)
        sizes = node.attributes.get("qkv_hidden_sizes")
        if sizes is not None and len(set(sizes.as_ints())) == 1:
            del node.attributes["qkv_hidden_sizes"]
        rewritten += 1
    return rewritten


def graph_inputs_of(value: ir.Value) -> set[ir.Value]:
    """The graph inputs ``value`` is computed from (constants and initializers aside)."""
    found, seen, pending = set(), set(), [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if current.is_graph_input():
            found.add(current)
        producer = current.producer()
        if producer is not None:
            pending.extend(v for v in producer.inputs if v is not None)
    return found
