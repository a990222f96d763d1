"""Static "SAME" padding computes exactly what timm's per-call padding computes, for the size it was made for."""

from __future__ import annotations

import pytest
import timm
import torch
from timm.layers.conv2d_same import Conv2dSame
from torch import nn

from faim.scoring.static_padding import make_padding_static, same_padding


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "expected"),
    [(224, 3, 2, (0, 1)), (112, 5, 2, (1, 2)), (7, 3, 1, (1, 1)), (225, 3, 2, (1, 1)), (5, 1, 2, (0, 0))],
)
def test_same_padding_is_tensorflows(size: int, kernel: int, stride: int, expected: tuple[int, int]) -> None:
    assert same_padding(size, kernel, stride, 1) == expected


@pytest.mark.parametrize("size", [(32, 32), (33, 30), (31, 29)])
@pytest.mark.parametrize(("kernel", "stride", "dilation"), [(3, 2, 1), (5, 2, 1), (4, 2, 1), (3, 1, 2), (3, 1, 1)])
def test_a_static_convolution_equals_the_dynamic_one(size, kernel: int, stride: int, dilation: int) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(Conv2dSame(3, 4, kernel, stride=stride, dilation=dilation), nn.ReLU())
    images = torch.randn(2, 3, *size)
    expected = model(images)
    assert make_padding_static(model, size) == 1
    assert type(model[0]) is nn.Conv2d
    torch.testing.assert_close(model(images), expected, rtol=0, atol=1e-6)


def test_uneven_padding_of_a_dilated_convolution_stays_dynamic() -> None:
    model = nn.Sequential(Conv2dSame(3, 4, 3, stride=2, dilation=2))
    images = torch.randn(1, 3, 32, 32)  # padding (1, 2): a one-row shift that taps two rows apart cannot make
    expected = model(images)
    assert make_padding_static(model, (32, 32)) == 0
    assert type(model[0]) is Conv2dSame
    torch.testing.assert_close(model(images), expected)


def test_efficientnet_lite0_keeps_its_outputs_and_batch_norm_statistics() -> None:
    torch.manual_seed(0)
    backbone = timm.create_model("tf_efficientnet_lite0", num_classes=0).train()
    statistics = {name: value.clone() for name, value in backbone.state_dict().items() if "running" in name}
    images = torch.randn(2, 3, 64, 64)
    with torch.no_grad():
        expected = backbone.eval()(images)
    backbone.train()
    assert make_padding_static(backbone, (64, 64)) == 5
    assert backbone.training  # the probe ran in eval mode and set the mode back
    assert not any(isinstance(module, Conv2dSame) for module in backbone.modules())
    for name, value in statistics.items():
        assert torch.equal(backbone.state_dict()[name], value), name
    with torch.no_grad():
        torch.testing.assert_close(backbone.eval()(images), expected, rtol=0, atol=1e-5)


def test_a_backbone_without_same_padding_is_left_alone() -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1))
    before = model[0]
    assert make_padding_static(model, (8, 8)) == 0
    assert model[0] is before
