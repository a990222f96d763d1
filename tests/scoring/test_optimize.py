"""Speed-up defaults follow the hardware; image graphs fuse on CPUs in fp32; devices are checked before scoring."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from faim.scoring.engine import scoring_device
from faim.scoring.optimize import (
    AutocastEncoder,
    FusedGraph,
    bf16_is_fast,
    freeze_backbone,
    optimise_for_inference,
)
from faim.scoring.options import ScoringOptions


@pytest.mark.parametrize("native", [False, True])
def test_bf16_only_when_asked_for_even_where_the_cpu_has_it(native: bool, tiny_model_dir, monkeypatch) -> None:
    import faim

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert bf16_is_fast("cpu") is native
    model = optimise_for_inference(faim.load(tiny_model_dir).model, ScoringOptions())
    assert not isinstance(model.encoders["text"], AutocastEncoder)
    assert model.encoders["image"].bf16 is False  # image encoders are wrapped for channels-last anyway
    model = optimise_for_inference(faim.load(tiny_model_dir).model, ScoringOptions(bf16=True))
    assert model.encoders["text"].bf16 and model.encoders["image"].bf16


def test_devices_are_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert scoring_device("cpu") == scoring_device(None) == scoring_device(torch.device("cpu")) == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="'cuda': no CUDA device"):
        scoring_device("cuda")
    with pytest.raises(ValueError, match="'meta': scoring runs on 'cpu' or 'cuda'"):
        scoring_device("meta")
    with pytest.raises(ValueError, match="'gpu0'"):
        scoring_device("gpu0")
    with pytest.raises(ValueError, match="^device 1.5: expected a device name such as 'cpu' or 'cuda'$"):
        scoring_device(1.5)


def frozen_convolutions() -> torch.jit.ScriptModule:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU6(), nn.Conv2d(8, 4, 1), nn.Flatten()).eval()
    example = torch.zeros(2, 3, 8, 8).contiguous(memory_format=torch.channels_last)
    with torch.no_grad():
        return torch.jit.freeze(torch.jit.trace(model.to(memory_format=torch.channels_last), example))


@pytest.mark.parametrize("caller_setting", [False, True])
def test_fused_graph_returns_the_real_rows_and_restores_the_fuser_setting(caller_setting: bool) -> None:
    graph = frozen_convolutions()
    fused = FusedGraph(graph)
    torch.jit.enable_onednn_fusion(caller_setting)
    try:
        with torch.inference_mode():
            for rows in (1, 3, 4, 5, 0):
                images = torch.randn(rows, 3, 8, 8).contiguous(memory_format=torch.channels_last)
                for _ in range(3):  # the first two runs of a shape profile it, the third runs fused
                    out = fused(images)
                    assert out.shape == (rows, 4 * 8 * 8)
                    torch.testing.assert_close(out, graph(images), rtol=1e-4, atol=1e-5)
                    assert torch.jit.onednn_fusion_enabled() is caller_setting
    finally:
        torch.jit.enable_onednn_fusion(False)


@pytest.mark.parametrize(
    ("options", "fused"),
    [(ScoringOptions(bf16=False), True), (ScoringOptions(bf16=False, fuse_images=False), False),
     (ScoringOptions(bf16=True), False), (ScoringOptions.exact(), False)],
)  # fmt: skip
def test_image_graphs_fuse_on_cpu_in_fp32_only(options: ScoringOptions, fused: bool, tiny_model_dir) -> None:
    import faim

    model = optimise_for_inference(faim.load(tiny_model_dir).model, options)
    assert isinstance(model.encoders["image"].inner.backbone if options.channels_last else
                      model.encoders["image"].backbone, FusedGraph) is fused  # fmt: skip


def test_efficientnet_lite0_fused_embeddings_match_eager() -> None:
    from faim.encoders.timm_image import TimmImageEncoder

    torch.manual_seed(0)
    eager = TimmImageEncoder("tf_efficientnet_lite0", pretrained=False, freeze=True, image_size=64).eval()
    fused = AutocastEncoder(
        TimmImageEncoder("tf_efficientnet_lite0", pretrained=False, freeze=True, image_size=64), False, True, "cpu"
    )
    fused.inner.load_state_dict(eager.state_dict())
    freeze_backbone(fused, bf16=False, channels_last=True, fuse=True)
    images = torch.randn(3, 3, 64, 64)  # padded to 4 inside
    with torch.inference_mode():
        expected = eager(images)
        for _ in range(3):  # profiled twice, then fused
            torch.testing.assert_close(fused(images), expected, rtol=1e-4, atol=1e-4)
    assert isinstance(fused.inner.backbone, FusedGraph)
