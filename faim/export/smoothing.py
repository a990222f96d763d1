"""Activation smoothing before int8 (SmoothQuant, Xiao et al., 2023): a few channels of a transformer's activations
run far larger than the rest (up to 25 against a median near 2 in MiniLM's feed-forward layers, measured on training
posts), and dynamic quantization gives a whole activation tensor one scale, so those channels decide the step every
other channel is rounded to. Dividing each input channel ``j`` of a matrix product by ``s_j`` and multiplying row
``j`` of its weight by the same ``s_j`` leaves the product as it was in exact arithmetic and moves the outliers into
the weights, which int8 quantizes one output channel at a time; ``s_j = peak_j ** strength / weight_peak_j **
(1 - strength)``, ``peak_j`` the largest magnitude channel ``j`` reached on sample inputs, ``weight_peak_j`` the
largest of row ``j``. The division is an fp32 ``Mul`` inserted before each product.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper

Feeds = dict[str, np.ndarray]
SMALLEST = 1e-5
"""Peaks below this count as this, so a channel that stayed at zero gets a finite scale."""


def smoothable(model: onnx.ModelProto) -> list[int]:
    """The positions in ``model.graph.node`` of the matrix products int8 quantizes whose weight is a matrix of this
    graph's own, used by that product alone: ``MatMul`` with a 2-D initializer as its second input, and a fused
    ``Attention`` (its packed query, key and value weight). A shared weight is left alone: scaling it for one product
    would change the others."""
    weights = {tensor.name: tensor for tensor in model.graph.initializer}
    uses: dict[str, int] = {}
    for node in model.graph.node:
        for name in node.input:
            uses[name] = uses.get(name, 0) + 1
    return [
        index
        for index, node in enumerate(model.graph.node)
        if node.op_type in ("MatMul", "Attention")
        and len(node.input) > 1
        and node.input[1] in weights
        and len(weights[node.input[1]].dims) == 2
        and uses[node.input[1]] == 1
    ]


def outputs_and_peaks(model: onnx.ModelProto, feeds: Sequence[Feeds]) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """The graph run once over ``feeds``: each of its outputs (batches concatenated), and each smoothable product's
    activation input → the largest magnitude of each of its channels (last axis)."""
    names = sorted({model.graph.node[index].input[0] for index in smoothable(model)})
    probe = onnx.ModelProto.FromString(model.SerializeToString())
    outputs = [output.name for output in probe.graph.output]
    probe.graph.output.extend(
        helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None) for name in names if name not in outputs
    )
    session = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    runs, peaks = [], {}
    for feed in feeds:
        values = session.run(outputs + names, feed)
        runs.append(values[: len(outputs)])
        for name, value in zip(names, values[len(outputs) :]):
            peak = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            peaks[name] = np.maximum(peaks[name], peak) if name in peaks else peak
    return [np.concatenate([run[index] for run in runs]) for index in range(len(outputs))], peaks


def smoothed(model: onnx.ModelProto, peaks: dict[str, np.ndarray], strength: float) -> onnx.ModelProto:
    """A copy of ``model`` with every smoothable product's input channels divided by ``s`` and its weight's rows
    multiplied by it (see the module); products whose input has no peak in ``peaks`` are left as they are."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    weights = {tensor.name: tensor for tensor in model.graph.initializer}
    chosen = {index for index in smoothable(model) if model.graph.node[index].input[0] in peaks}
    nodes = []
    for index, original in enumerate(model.graph.node):
        node = onnx.NodeProto.FromString(original.SerializeToString())
        if index in chosen:
            weight = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)
            rows = np.maximum(np.abs(weight).max(axis=1), SMALLEST)
            peak = np.maximum(peaks[node.input[0]], SMALLEST)
            scale = (peak**strength / rows ** (1 - strength)).astype(np.float32)
            weights[node.input[1]].CopyFrom(numpy_helper.from_array(weight * scale[:, None], node.input[1]))
            inverse = numpy_helper.from_array(1 / scale, f"smoothing_{index}")
            model.graph.initializer.append(inverse)
            divided = f"smoothed_{index}"
            nodes.append(helper.make_node("Mul", [node.input[0], inverse.name], [divided], f"smoothing_{index}"))
            node.input[0] = divided
        nodes.append(node)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model
