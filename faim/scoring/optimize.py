"""Inference-only speed-ups for scoring, each optional and each within a stated tolerance of fp32.

- ``channels_last``: image encoders run in NHWC memory layout (faster convolutions on CPUs); exact.
- ``bf16``: encoders run under bf16 autocast; off unless asked for, because scores move by as much as the model
  is sharp: the demo model, whose logits reach ±90, moved by up to 0.998 and changed 2 of its 200 validation
  decisions. It pays only where the device computes bf16 natively (a CPU with AVX512-BF16 or AMX, a GPU with
  bf16 support: ``bf16_is_fast``). On such a CPU MiniLM takes 8.0 core-ms per tweet against 6.9 for dynamic
  int8 quantisation, with embeddings far closer to fp32 (cosine ≥ 0.9999 against 0.84 for int8; 0.89 even
  with per-channel int8 weights), which is why int8 is not offered. A CPU without native bf16 emulates it
  about 4x slower than fp32 matrix multiplies (MiniLM 37 against 11 core-ms per tweet).
- ``draft_jpeg``: JPEGs decode at a reduced scale no smaller than the encoder's resize target.
- ``freeze_images``: image backbones are traced and frozen with TorchScript, which folds batch norm into
  the convolutions (EfficientNet-Lite0, bf16, channels-last, one core: 11.7 core-ms per image against 20.7
  eager; fp32 on a CPU without bf16: 18 against 24); about a second per worker. TensorFlow-style "SAME"
  padding is made static for the encoder's image size first (``static_padding``).
- ``fuse_images``: on a CPU in fp32, frozen image graphs run under oneDNN Graph fusion, which fuses each
  convolution with its activation and residual add (EfficientNet-Lite0, batches of 16, one core: 13.8
  core-ms per image against 19.2 frozen alone; within 1e-5 of eager). Each batch shape is compiled on its
  first two runs (0.3 to 0.5 s), so image batches are padded to a power of two: a handful of shapes per
  worker. The fuser is switched on only while these graphs run.
- ``compile``: ``torch.compile`` the encoder backbones. EfficientNet-Lite0 batches run about a quarter
  faster, but the first batches pay the compile: about 16 core-seconds per worker even with inductor's
  on-disk cache warm, so it pays off only for dumps of several thousand images per worker.

Worker processes also start with ``faim.scoring.runner.WORKER_ENVIRONMENT``, which keeps glibc from handing image
batches' activation buffers back to the kernel between batches.

The default speed-ups compute in fp32; of them, JPEG draft decoding alone changes what an encoder reads. The tests
check that scores of the default path, and of a stack under bf16, stay within ``SCORE_TOLERANCE`` (absolute, on
probabilities) of the exact path on their tiny models.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import Any

import torch
from torch import nn

from faim.encoder import Encoder, Preprocessor
from faim.model import WholePostModel, model_device
from faim.scoring.options import ScoringOptions
from faim.scoring.static_padding import make_padding_static

SCORE_TOLERANCE = 0.05


def bf16_is_fast(device: str | torch.device = "cpu") -> bool:
    """Whether ``device`` has native bf16 arithmetic (a CPU with AVX512-BF16 or AMX tiles; a bf16 GPU)."""
    device = torch.device(device)
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    return device.type == "cpu" and (torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


class AutocastEncoder(Encoder):
    """Runs a wrapped encoder under bf16 autocast (images also channels-last); outputs float32.

    Args:
        device_type: Where the encoder runs (``"cpu"``, ``"cuda"``): autocast's device, whatever form the
            encoder's inputs take (a tensor, a tokenizer's dict, a stack's list of its members' inputs).
    """

    def __init__(self, inner: Encoder, bf16: bool, channels_last: bool, device_type: str) -> None:
        super().__init__()
        self.inner = inner
        self.modality = inner.modality  # type: ignore[misc]
        self.output_dim = inner.output_dim
        self.frozen = inner.frozen
        self.bf16 = bf16
        self.channels_last = channels_last
        self.device_type = device_type
        if channels_last:
            inner.to(memory_format=torch.channels_last)

    def preprocessor(self) -> Preprocessor:
        return self.inner.preprocessor()

    def forward(self, inputs: Any) -> torch.Tensor:
        if self.channels_last:
            inputs = inputs.contiguous(memory_format=torch.channels_last)
        with torch.autocast(self.device_type, dtype=torch.bfloat16, enabled=self.bf16):
            return self.inner(inputs).float()


def optimise_for_inference(
    model: WholePostModel, options: ScoringOptions, kinds: Iterable[str] | None = None
) -> WholePostModel:
    """Apply ``options`` to ``model`` in place, on the device it is on (for scoring only: not to be saved), to the
    encoders of the element ``kinds`` scoring encodes (default: the fused ones; the others never run)."""
    model.eval()
    device = model_device(model)
    bf16 = options.bf16
    fuse = options.fuse_images and device.type == "cpu" and not bf16
    scoring = {model.routes[kind] for kind in (model.fused_kinds if kinds is None else kinds)}
    for name, encoder in list(model.encoders.items()):
        if name not in scoring:
            continue
        if options.compile and hasattr(encoder, "backbone"):
            encoder.backbone = torch.compile(encoder.backbone, dynamic=True)
        channels_last = options.channels_last and encoder.modality == "image"
        if bf16 or channels_last:
            encoder = model.encoders[name] = AutocastEncoder(encoder, bf16, channels_last, device.type)
        if options.freeze_images and encoder.modality == "image":
            freeze_backbone(encoder, bf16, channels_last, fuse)
    return model


def freeze_backbone(encoder: Encoder, bf16: bool, channels_last: bool, fuse: bool) -> None:
    """Replace an image encoder's ``backbone`` by its TorchScript trace, frozen (weights as constants), at
    the preprocessor's image size; with ``fuse``, run it under oneDNN Graph fusion (``FusedGraph``)."""
    inner = encoder.inner if isinstance(encoder, AutocastEncoder) else encoder
    height, width = inner.preprocessor().image_size
    device = model_device(inner.backbone)
    backbone = inner.backbone.requires_grad_(False).eval()  # frozen graphs hold weights as constants
    make_padding_static(backbone, (height, width))
    if channels_last:
        backbone.to(memory_format=torch.channels_last)  # the new convolutions' weights too
    example = torch.zeros(2, 3, height, width, device=device)
    if channels_last:
        example = example.contiguous(memory_format=torch.channels_last)
    with warnings.catch_warnings(), torch.no_grad(), torch.autocast(device.type, torch.bfloat16, enabled=bf16):
        warnings.simplefilter("ignore")  # TorchScript's deprecation and tracer notices, once per worker
        frozen = torch.jit.freeze(torch.jit.trace(backbone, example))
    inner.backbone = FusedGraph(frozen) if fuse else frozen


class FusedGraph(nn.Module):
    """Runs a frozen TorchScript image graph under oneDNN Graph fusion, on batches padded with zero images
    to the next power of two (each new shape costs two slow runs), returning the real rows only. The fuser
    setting is process-wide, so it is on only during the call and set back after."""

    def __init__(self, graph: torch.jit.ScriptModule) -> None:
        super().__init__()
        self.graph = graph

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        rows = images.shape[0]
        padded = 1 << (rows - 1).bit_length() if rows else 0
        if padded != rows:
            full = images.new_zeros((padded, *images.shape[1:]))
            if images.is_contiguous(memory_format=torch.channels_last):
                full = full.contiguous(memory_format=torch.channels_last)
            full[:rows] = images
            images = full
        was_on = torch.jit.onednn_fusion_enabled()
        torch.jit.enable_onednn_fusion(True)
        try:
            return self.graph(images)[:rows]
        finally:
            torch.jit.enable_onednn_fusion(was_on)
