"""Rewriting a fused graph so that attention reads the padding mask: only an ``Attention`` whose bias is computed
from the ``attention_mask`` input alone is rewritten; the graph's other attention is left as it was."""

from __future__ import annotations

import numpy as np
import onnx_ir as ir
from onnx import TensorProto, helper, numpy_helper

from faim.export.fusions import padding_mask_read_by_attention


def two_attentions() -> ir.Graph:
    """Two ``Attention`` nodes over the same tokens: one biased by a mask computed from ``attention_mask``, one
    by a bias the graph takes as an input of its own."""
    weights = numpy_helper.from_array(np.zeros((4, 12), np.float32), "qkv")
    bias = numpy_helper.from_array(np.zeros(12, np.float32), "qkv_bias")
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["mask_bool"], to=TensorProto.BOOL),
        helper.make_node("Unsqueeze", ["mask_bool", "axes"], ["mask_4d"]),
        helper.make_node("Where", ["mask_4d", "zero", "minus_inf"], ["mask_bias"]),
        helper.make_node(
            "Attention", ["tokens", "qkv", "qkv_bias", "", "", "mask_bias"], ["from_mask"], domain="com.microsoft",
            num_heads=2, qkv_hidden_sizes=[4, 4, 4],
        ),
        helper.make_node(
            "Attention", ["tokens", "qkv", "qkv_bias", "", "", "other_bias"], ["from_elsewhere"],
            domain="com.microsoft", num_heads=2, qkv_hidden_sizes=[4, 4, 4],
        ),
    ]  # fmt: skip
    constants = [
        numpy_helper.from_array(np.array([1, 2], np.int64), "axes"),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array(-np.inf, np.float32), "minus_inf"),
    ]
    graph = helper.make_graph(
        nodes,
        "two_attentions",
        [
            helper.make_tensor_value_info("tokens", TensorProto.FLOAT, ["N", "T", 4]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["N", "T"]),
            helper.make_tensor_value_info("other_bias", TensorProto.FLOAT, ["N", 2, "T", "T"]),
        ],
        [
            helper.make_tensor_value_info("from_mask", TensorProto.FLOAT, ["N", "T", 4]),
            helper.make_tensor_value_info("from_elsewhere", TensorProto.FLOAT, ["N", "T", 4]),
        ],
        [weights, bias, *constants],
    )
    opsets = [helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)]
    return ir.from_proto(helper.make_model(graph, opset_imports=opsets)).graph


def test_only_the_attention_biased_by_the_padding_mask_reads_the_mask_instead() -> None:
    graph = two_attentions()
    assert padding_mask_read_by_attention(graph) == 1
    from_mask, from_elsewhere = (node for node in graph if node.op_type == "Attention")
    mask_index = from_mask.inputs[3]
    assert mask_index.producer().op_type == "Cast" and mask_index.producer().inputs[0].name == "attention_mask"
    assert mask_index.producer().attributes["to"].as_int() == ir.DataType.INT32
    assert len(from_mask.inputs) == 5 and "qkv_hidden_sizes" not in from_mask.attributes
    assert from_elsewhere.inputs[3] is None and from_elsewhere.inputs[5].name == "other_bias"
    assert "qkv_hidden_sizes" in from_elsewhere.attributes


def test_a_graph_without_an_attention_mask_input_is_left_as_it_was() -> None:
    graph = two_attentions()
    graph.inputs[1].name = "mask"
    assert padding_mask_read_by_attention(graph) == 0
    assert all(node.inputs[5] is not None for node in graph if node.op_type == "Attention")
