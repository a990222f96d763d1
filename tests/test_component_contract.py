"""One contract over every registered encoder, fusion and head: shapes, masks, no NaN, gradients,
and a save → load round trip through safetensors that reproduces outputs exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import safetensors.torch
import torch
from PIL import Image
from tiny_clip import save_tiny_clip
from transformers import AutoModel, BertConfig

import faim.components  # noqa: F401  (registers every built-in component)
from faim.encoders.tiny_text import tiny_vocab
from faim.registry import ENCODERS, FUSIONS, HEADS


@pytest.fixture(scope="module")
def tiny_hf_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny BERT saved like a hub model (config, safetensors, tokenizer), to load through ``hf_text``."""
    from transformers import BertTokenizer

    directory = tmp_path_factory.mktemp("tiny_bert")
    vocab = tiny_vocab()
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    torch.manual_seed(0)
    AutoModel.from_config(config).save_pretrained(directory)
    BertTokenizer(vocab=vocab).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def tiny_clip_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_clip(tmp_path_factory.mktemp("tiny_clip"))


@pytest.fixture(scope="module")
def tiny_weights(tiny_hf_dir: Path, tiny_clip_dir: Path) -> dict[str, Path]:
    """The tiny checkpoints encoders load offline: ``hf`` (a BERT), ``clip``."""
    return {"hf": tiny_hf_dir, "clip": tiny_clip_dir}


def encoder_args(name: str, tiny_weights: dict[str, Path]) -> dict[str, Any]:
    """Small, offline constructor arguments for each registered encoder."""
    return {
        "hf_text": {"weights": str(tiny_weights["hf"]), "max_length": 16},
        "clip_text": {"weights": str(tiny_weights["clip"]), "max_length": 16, "freeze": False},
        "clip_image": {"weights": str(tiny_weights["clip"]), "freeze": False},
        "meta_numeric": {"fields": ["shares", "likes"], "shares": True, "dim": 8},
        "tiny_text": {"dim": 16},
        "timm_image": {"name": "test_efficientnet", "pretrained": False},
        "torchvision_image": {"name": "mobilenet_v3_small", "pretrained": False, "image_size": 32},
        "tiny_image": {"dim": 8},
        "tiny_use": {"dim": 16},
        "tiny_e5": {"dim": 32},
        "ngram_text": {"dim": 8, "min_df": 1, "freeze": False},
    }[name]


REAL_WEIGHTS_ONLY = {"use_text": "tiny_use", "e5_text": "tiny_e5"}
"""Encoders built from bundled weights alone, each covered here by its tiny variant (same network and preprocessing,
random weights) and by a marked real-weights test."""
CONTRACT_ENCODERS = sorted(set(ENCODERS) - set(REAL_WEIGHTS_ONLY))


def raw_inputs(modality: str) -> list[Any]:
    if modality == "meta":
        return [{"shares": 3, "likes": 10.5}, {"shares": None}, {"likes": 0, "other": "x"}]
    if modality == "text":
        return ["a short post", "another, longer post with more words", "x"]
    return [Image.new("RGB", (40, 30), (200, 10, 10)), Image.new("RGB", (64, 64), (10, 10, 200))]


def trainable(module: torch.nn.Module) -> list[tuple[str, torch.nn.Parameter]]:
    return [(n, p) for n, p in module.named_parameters() if p.requires_grad]


def assert_round_trip(module: torch.nn.Module, rebuilt: torch.nn.Module, run, tmp_path: Path) -> None:
    path = tmp_path / "weights.safetensors"
    safetensors.torch.save_model(module, str(path))
    safetensors.torch.load_model(rebuilt, str(path))
    module.eval()
    rebuilt.eval()
    with torch.no_grad():
        assert torch.equal(run(module), run(rebuilt))


def test_every_real_weights_encoder_has_a_tiny_variant() -> None:
    assert set(REAL_WEIGHTS_ONLY.values()) <= set(CONTRACT_ENCODERS)


@pytest.mark.parametrize("name", CONTRACT_ENCODERS)
def test_encoder_contract(name: str, tiny_weights: dict[str, Path], tmp_path: Path) -> None:
    cls = ENCODERS[name]
    torch.manual_seed(0)
    encoder = cls(**encoder_args(name, tiny_weights))
    assert encoder.modality in ("text", "image", "meta") and encoder.output_dim > 0
    if encoder.needs_fit:
        encoder.fit(raw_inputs(encoder.modality) * 2)
    inputs = encoder.preprocessor()(raw_inputs(encoder.modality))
    encoder.train()
    out = encoder(inputs)
    assert out.shape == (len(raw_inputs(encoder.modality)), encoder.output_dim)
    assert torch.isfinite(out).all()
    out.pow(2).mean().backward()
    params = trainable(encoder)
    assert params, f"{name} has no trainable parameters"
    reached = [n for n, p in params if p.grad is not None and p.grad.abs().sum() > 0]
    assert len(reached) >= 0.9 * len(params), f"{name}: gradients reach only {len(reached)}/{len(params)}"
    empty = encoder(encoder.preprocessor()([]))
    assert empty.shape == (0, encoder.output_dim)
    overrides = encoder.export_assets(tmp_path / "assets")
    rebuilt = cls(**(encoder_args(name, tiny_weights) | overrides))
    assert_round_trip(encoder, rebuilt, lambda m: m(inputs), tmp_path)


def test_frozen_encoder_has_no_trainable_parameters_and_stays_in_eval(tiny_weights: dict[str, Path]) -> None:
    for name in CONTRACT_ENCODERS:
        encoder = ENCODERS[name](**(encoder_args(name, tiny_weights) | {"freeze": True}))
        if encoder.needs_fit:
            encoder.fit(raw_inputs(encoder.modality) * 2)
        encoder.train()
        assert not trainable(encoder) and not encoder.training, name


def fusion_inputs(dims: dict[str, int], batch: int = 4) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    """Every row pattern at once: all present, some kinds missing, nothing at all, n_k = 0 for comments."""
    sizes = {"text": 1, "image": 3, "comments": 0}
    out = {}
    for kind, dim in dims.items():
        n = sizes[kind]
        mask = torch.ones(batch, n, dtype=torch.bool)
        if n:
            mask[1] = False  # row 1 has none of this kind
            mask[3, 1:] = False
        mask[2] = False  # row 2 has no elements at all
        out[kind] = (torch.randn(batch, n, dim), mask)
    return out


@pytest.mark.parametrize("name", sorted(FUSIONS))
def test_fusion_contract(name: str, tmp_path: Path) -> None:
    dims = {"text": 6, "image": 5, "comments": 6}
    torch.manual_seed(0)
    fusion = FUSIONS[name](dims)
    inputs = fusion_inputs(dims)
    out = fusion(inputs)
    assert out.shape == (4, fusion.output_dim) and torch.isfinite(out).all()
    fusion.eval()
    scrambled = {k: (torch.where(m.unsqueeze(-1), e, torch.full_like(e, 1e6)), m) for k, (e, m) in inputs.items()}
    with torch.no_grad():
        assert torch.allclose(fusion(inputs), fusion(scrambled)), "masked values changed the output"
    fusion.train()
    fusion(inputs).pow(2).mean().backward()
    missing = [n for n, p in trainable(fusion) if p.grad is None]
    assert not missing, f"{name}: no gradient for {missing}"
    assert_round_trip(fusion, FUSIONS[name](dims), lambda m: m(inputs), tmp_path)


@pytest.mark.parametrize("name", sorted(HEADS))
def test_head_contract(name: str, tmp_path: Path) -> None:
    cls = HEADS[name]
    sizes = {"multiclass": {"num_classes": 3}, "multilabel": {"num_labels": 3}}.get(cls.task_type, {})
    head = cls(8, **sizes)
    embedding = torch.randn(5, 8, requires_grad=True)
    logits = head(embedding)
    targets = {
        "binary": torch.tensor([1.0, 0.0, float("nan"), 1.0, 0.0]),
        "multiclass": torch.tensor([0, 2, -100, 1, 1]),
        "multilabel": torch.tensor([[1.0, 0, 1]] * 4 + [[float("nan")] * 3]),
    }[cls.task_type]
    loss = head.loss(logits, targets)
    assert loss.ndim == 0 and torch.isfinite(loss)
    loss.backward()
    assert all(p.grad is not None for _, p in trainable(head)) and embedding.grad is not None
    assert_round_trip(head, cls(8, **sizes), lambda m: m(embedding.detach()), tmp_path)
