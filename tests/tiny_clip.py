"""A tiny random CLIP checkpoint saved as transformers saves one (config, safetensors, tokenizer, picture
preprocessing), for ``clip_text`` and ``clip_image`` to load offline."""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import BertTokenizer, CLIPConfig, CLIPImageProcessor, CLIPModel

from faim.encoders.tiny_text import tiny_vocab

SIDE = 32
"""The picture tower's input side, in pixels."""


def save_tiny_clip(directory: Path) -> Path:
    """Write a tiny CLIP (two 1-layer towers, an 8-d joint space) into ``directory``; returns it."""
    tokenizer = BertTokenizer(vocab=tiny_vocab())
    text = {"vocab_size": len(tokenizer), "hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1}
    text |= {"num_attention_heads": 2, "max_position_embeddings": 77, "eos_token_id": tokenizer.sep_token_id}
    text |= {"bos_token_id": tokenizer.cls_token_id, "pad_token_id": tokenizer.pad_token_id}
    vision = {"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2}
    vision |= {"image_size": SIDE, "patch_size": 8}
    torch.manual_seed(0)
    CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=8)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    processor = CLIPImageProcessor(size={"shortest_edge": 36}, crop_size={"height": SIDE, "width": SIDE})
    processor.save_pretrained(directory)
    return directory
