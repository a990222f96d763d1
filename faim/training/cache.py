"""Frozen-encoder embedding cache: encode every element of a split once, reuse it across runs.

The key covers each encoder's identity (class, weights and their sha256, preprocessing), the element
cap, and a fingerprint of the posts (ids, texts, comments, image paths with size and mtime), so a
change to any of them computes anew. Files are written atomically (safe with several DDP processes).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import safetensors.torch
import torch
from torch.utils.data import DataLoader
from tqdm.auto import tqdm

from faim.data.batch import Elements
from faim.data.collate import PostCollator
from faim.data.post import Post
from faim.model import WholePostModel


def posts_fingerprint(posts: list[Post]) -> str:
    """sha256 over what the encoders read from each post."""
    digest = hashlib.sha256()
    for post in posts:
        images = []
        for ref in post.images:
            if isinstance(ref, bytes):
                images.append(hashlib.sha256(ref).hexdigest())
                continue
            path = Path(ref) if post.image_root is None else post.image_root / ref
            stat = path.stat() if path.exists() else None
            images.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}" if stat else f"{path}:missing")
        digest.update(json.dumps([post.id, post.text, post.comments, images], default=str).encode())
    return digest.hexdigest()


def cache_key(model: WholePostModel, posts: list[Post], max_elements: int) -> str:
    identity = {kind: model.encoder_for(kind).identity() for kind in model.kinds}
    payload = json.dumps({"encoders": identity, "max_elements": max_elements}, sort_keys=True)
    return hashlib.sha256((payload + posts_fingerprint(posts)).encode()).hexdigest()[:32]


class EmbeddingCache:
    """Per-kind element embeddings of a list of posts: ``values [M, d]`` and ``counts [N]`` per kind."""

    def __init__(self, tensors: dict[str, torch.Tensor]) -> None:
        self.tensors = tensors
        self.kinds = sorted({name.split(".")[0] for name in tensors})
        self.offsets = {k: torch.cumsum(tensors[f"{k}.counts"], 0) - tensors[f"{k}.counts"] for k in self.kinds}

    def elements(self, indices: list[int]) -> dict[str, Elements]:
        """Encoded ``Elements`` for the posts at ``indices`` (in that order)."""
        out = {}
        for kind in self.kinds:
            counts = self.tensors[f"{kind}.counts"][indices]
            starts = self.offsets[kind][indices]
            rows = [torch.arange(s, s + c) for s, c in zip(starts.tolist(), counts.tolist())]
            flat = torch.cat(rows) if rows else torch.zeros(0, dtype=torch.long)
            post_index = torch.repeat_interleave(torch.arange(len(indices)), counts)
            slot_index = torch.cat([torch.arange(c) for c in counts.tolist()]) if rows else flat
            num_slots = int(counts.max()) if len(indices) else 0
            out[kind] = Elements(self.tensors[f"{kind}.values"][flat], post_index, slot_index, num_slots, encoded=True)
        return out


@torch.inference_mode()
def compute_embeddings(
    model: WholePostModel, collator: PostCollator, posts: list[Post], batch_size: int, num_workers: int, label: str
) -> dict[str, torch.Tensor]:
    """Run every encoder over every element of ``posts``; returns the tensors an ``EmbeddingCache`` holds."""
    model.eval()
    loader = DataLoader(posts, batch_size=batch_size, collate_fn=collator, num_workers=num_workers)
    values: dict[str, list[torch.Tensor]] = {kind: [] for kind in model.kinds}
    counts: dict[str, list[torch.Tensor]] = {kind: [] for kind in model.kinds}
    for batch in tqdm(loader, desc=f"embedding {label}", unit="batch", leave=False):
        for kind in model.kinds:
            elements = batch.elements[kind]
            values[kind].append(model.encoder_for(kind)(elements.values).float())
            counts[kind].append(torch.bincount(elements.post_index, minlength=batch.size))
    return {
        **{f"{k}.values": torch.cat(v) for k, v in values.items()},
        **{f"{k}.counts": torch.cat(c) for k, c in counts.items()},
    }


def cached_embeddings(
    model: WholePostModel,
    collator: PostCollator,
    posts: list[Post],
    cache_dir: str | Path,
    batch_size: int = 64,
    num_workers: int = 0,
    label: str = "posts",
) -> EmbeddingCache:
    """Load the split's embeddings from ``cache_dir``, computing and storing them on a miss."""
    path = Path(cache_dir).expanduser() / f"{cache_key(model, posts, collator.max_elements)}.safetensors"
    if path.exists():
        return EmbeddingCache(safetensors.torch.load_file(str(path)))
    tensors = compute_embeddings(model, collator, posts, batch_size, num_workers, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{os.getpid()}.tmp")
    safetensors.torch.save_file({k: v.contiguous() for k, v in tensors.items()}, str(partial))
    os.replace(partial, path)
    return EmbeddingCache(tensors)
