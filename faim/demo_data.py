"""A generated multimodal dataset whose label needs text and image together.

Each post pairs a caption with a picture of a shape. The caption is either about "them" (a target
group) or about the weather; the picture is a red or a blue shape. A post is harmful only when a
caption about "them" comes with a red picture: neither modality alone decides the label, which is the
case whole-post fusion exists for. Used by ``faim demo`` and the tests.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

GROUP_CAPTIONS = ["look at them again", "they are all like this", "this is what they do", "them, every single time"]
NEUTRAL_CAPTIONS = ["look at the weather again", "the sky is like this", "this is what rain does", "sunny, every time"]
COLORS = {"red": (200, 30, 30), "blue": (30, 60, 200)}
COMMENTS = ["lol", "so true", "wow", "seen this before", "ok"]


def draw_shape(color: tuple[int, int, int], rng: random.Random, size: int) -> Image.Image:
    """A shape of ``color`` at a random place and size on a light, slightly noisy background."""
    background = tuple(rng.randint(215, 245) for _ in range(3))
    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    radius = rng.randint(size // 6, size // 3)
    cx, cy = rng.randint(radius, size - radius), rng.randint(radius, size - radius)
    box = (cx - radius, cy - radius, cx + radius, cy + radius)
    shade = tuple(max(0, min(255, c + rng.randint(-25, 25))) for c in color)
    (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=shade)
    return image


def split_path(root: str | Path, split: str) -> Path:
    """Where ``make_split`` writes the posts of ``split`` under ``root``, known before they are generated."""
    return Path(root) / f"{split}.jsonl"


def make_split(root: Path, split: str, n: int, seed: int, image_size: int = 64) -> Path:
    """Write ``root/<split>.jsonl`` and its images under ``root/images/``; returns the JSONL path."""
    rng = random.Random(f"{seed}-{split}")
    (root / "images").mkdir(parents=True, exist_ok=True)
    path = split_path(root, split)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n):
            about_group, red = rng.random() < 0.5, rng.random() < 0.5
            caption = rng.choice(GROUP_CAPTIONS if about_group else NEUTRAL_CAPTIONS)
            image_name = f"images/{split}_{i}.jpg"
            draw_shape(COLORS["red" if red else "blue"], rng, image_size).save(root / image_name, quality=90)
            row = {
                "id": f"{split}-{i}",
                "text": caption,
                "image": image_name,
                "comments": rng.sample(COMMENTS, rng.randint(0, 2)),
                "label": int(about_group and red),
                "topic": "group" if about_group else "weather",
            }
            out.write(json.dumps(row) + "\n")
    return path


def make_demo_data(root: str | Path, n_train: int = 600, n_validation: int = 200, seed: int = 0) -> dict[str, Path]:
    """Generate train and validation splits under ``root``; returns split → JSONL path."""
    root = Path(root)
    return {
        "train": make_split(root, "train", n_train, seed),
        "validation": make_split(root, "validation", n_validation, seed),
    }
