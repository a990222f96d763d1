"""Smoothing before int8: the fp32 graph computes what it did, outlier channels move into the weights, and the
int8 graph comes out closer to fp32 than without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper

from faim.export.quantize import STRENGTHS, quantize_graph, quantized, run_graph
from faim.export.smoothing import outputs_and_peaks, smoothable, smoothed


def two_products(shared: bool = False) -> onnx.ModelProto:
    """``x [N, 32] → MatMul → Relu → MatMul → y [N, 8]``; with ``shared``, a third product reads the first weight."""
    rng = np.random.default_rng(0)
    first = numpy_helper.from_array(rng.normal(size=(32, 64)).astype(np.float32), "first")
    second = numpy_helper.from_array(rng.normal(size=(64, 8)).astype(np.float32), "second")
    nodes = [
        helper.make_node("MatMul", ["x", "first"], ["hidden"], "up"),
        helper.make_node("Relu", ["hidden"], ["active"], "relu"),
        helper.make_node("MatMul", ["active", "second"], ["y"], "down"),
    ]
    outputs = [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["n", 8])]
    if shared:
        nodes.append(helper.make_node("MatMul", ["x", "first"], ["again"], "again"))
        outputs.append(helper.make_tensor_value_info("again", onnx.TensorProto.FLOAT, ["n", 64]))
    graph = helper.make_graph(
        nodes, "two", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["n", 32])], outputs, [first, second]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def outlier_feeds() -> list[dict[str, np.ndarray]]:
    """Inputs whose channel 3 runs 60 times larger than the others, as a transformer's outlier channels do."""
    rng = np.random.default_rng(1)
    batches = [rng.normal(size=(16, 32)).astype(np.float32) for _ in range(4)]
    for batch in batches:
        batch[:, 3] *= 60
    return [{"x": batch} for batch in batches]


def run(model: onnx.ModelProto, feeds: list[dict[str, np.ndarray]]) -> np.ndarray:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.concatenate([session.run(["y"], feed)[0] for feed in feeds])


def test_smoothing_leaves_the_fp32_graph_computing_what_it_did_and_flattens_the_outlier() -> None:
    model, feeds = two_products(), outlier_feeds()
    outputs, peaks = outputs_and_peaks(model, feeds)
    np.testing.assert_array_equal(outputs[0], run(model, feeds))
    assert set(peaks) == {"x", "active"} and peaks["x"].shape == (32,)
    assert peaks["x"][3] > 20 * np.median(peaks["x"])
    smooth = smoothed(model, peaks, 0.8)
    np.testing.assert_allclose(run(smooth, feeds), run(model, feeds), rtol=1e-4, atol=1e-3)
    flattened = outputs_and_peaks(smooth, feeds)[1]["smoothed_0"]
    assert flattened[3] < 3 * np.median(flattened)
    assert [node.op_type for node in smooth.graph.node] == ["Mul", "MatMul", "Relu", "Mul", "MatMul"]


def test_a_weight_two_products_share_is_not_smoothed() -> None:
    model = two_products(shared=True)
    assert [model.graph.node[index].name for index in smoothable(model)] == ["down"]


def test_the_strength_chosen_brings_int8_closer_to_fp32_than_quantizing_alone(tmp_path: Path) -> None:
    source, feeds = tmp_path / "fp32.onnx", outlier_feeds()
    onnx.save(two_products(), str(source))
    reference = run_graph(source, feeds)[0]
    quantized(source, tmp_path / "plain.onnx")
    plain = np.mean((run_graph(tmp_path / "plain.onnx", feeds)[0] - reference) ** 2)
    strength = quantize_graph(source, tmp_path / "int8.onnx", feeds)
    chosen = np.mean((run_graph(tmp_path / "int8.onnx", feeds)[0] - reference) ** 2)
    assert strength in STRENGTHS and chosen < plain / 2
    assert sorted(path.name for path in tmp_path.iterdir()) == ["fp32.onnx", "int8.onnx", "plain.onnx"]
    assert quantize_graph(source, tmp_path / "unsmoothed.onnx", []) is None
