"""TensorFlow "SAME" padding made static for one input size, so that frozen image graphs fuse.

timm's ``tf_*`` models (EfficientNet-Lite among them) pad strided convolutions the TensorFlow way: the
padding depends on the input size and is uneven (one more row and column after than before), so timm's
``Conv2dSame`` computes it per call and copies the activations into a padded tensor first. That copy costs
memory bandwidth and, worse, splits the graph at every strided layer, so oneDNN cannot fuse the
convolutions around it with their activations.

For a known input size the padding is a constant. Even padding becomes the convolution's own padding. Uneven
padding (``after = before + 1``) becomes an equivalent convolution with the kernel grown by one leading zero
tap and padding ``after`` on both sides: it reads the same input rows with the same weights (EfficientNet-
Lite0 at 224 px gave a largest difference of 0.0; the tests allow float rounding, 1e-5).
"""

from __future__ import annotations

import torch
from timm.layers.conv2d_same import Conv2dSame
from timm.layers.padding import get_same_padding
from torch import nn


def same_padding(size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """TensorFlow's (before, after) padding of one spatial dimension (timm's total, split as timm splits it)."""
    total = get_same_padding(size, kernel, stride, dilation)
    return total // 2, total - total // 2


def static_conv(conv: Conv2dSame, input_size: tuple[int, int]) -> nn.Conv2d | None:
    """A plain ``Conv2d`` computing what ``conv`` computes on inputs of ``input_size`` (height, width), or
    ``None`` where none exists: uneven padding of a dilated convolution (its taps are more than a row apart,
    so a leading zero tap cannot shift it by one row)."""
    pads = [same_padding(*args) for args in zip(input_size, conv.kernel_size, conv.stride, conv.dilation)]
    grow = [after - before for before, after in pads]  # 0 or 1 leading zero taps per dimension
    if any(extra and dilation != 1 for extra, dilation in zip(grow, conv.dilation)):
        return None
    weight = nn.functional.pad(conv.weight.detach(), (grow[1], 0, grow[0], 0))
    static = nn.Conv2d(
        conv.in_channels,
        conv.out_channels,
        tuple(weight.shape[-2:]),
        stride=conv.stride,
        padding=(pads[0][1], pads[1][1]),
        dilation=conv.dilation,
        groups=conv.groups,
        bias=conv.bias is not None,
    ).to(device=weight.device, dtype=weight.dtype)
    with torch.no_grad():
        static.weight.copy_(weight)
        if conv.bias is not None:
            static.bias.copy_(conv.bias)
    return static.requires_grad_(conv.weight.requires_grad)


def make_padding_static(backbone: nn.Module, image_size: tuple[int, int]) -> int:
    """Replace, in place, each ``Conv2dSame`` in ``backbone`` that has a static equivalent for images of
    ``image_size`` (height, width) by it; the backbone is then only right for that size. Returns how many
    were replaced."""
    sizes: dict[str, tuple[int, int]] = {}

    def record(name: str, inputs: tuple[torch.Tensor, ...]) -> None:
        sizes[name] = tuple(inputs[0].shape[-2:])

    hooks = [
        module.register_forward_pre_hook(lambda _, inputs, name=name: record(name, inputs))
        for name, module in backbone.named_modules()
        if isinstance(module, Conv2dSame)
    ]
    if not hooks:
        return 0
    parameter, training = next(backbone.parameters()), backbone.training
    backbone.eval()  # the probe must not move batch-norm statistics
    try:
        with torch.no_grad():
            backbone(torch.zeros(1, 3, *image_size, device=parameter.device, dtype=parameter.dtype))
    finally:
        for hook in hooks:
            hook.remove()
        backbone.train(training)
    replaced = 0
    for name, size in sizes.items():
        parent, _, attribute = name.rpartition(".")
        owner = backbone.get_submodule(parent)
        static = static_conv(getattr(owner, attribute), size)
        if static is not None:
            setattr(owner, attribute, static)
            replaced += 1
    return replaced
