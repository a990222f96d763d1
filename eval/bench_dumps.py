"""Dumps for the scoring benchmarks: real tweet texts and real photos when ``../shared/data`` is there,
generated stand-ins of the same size otherwise (so the benchmark runs anywhere)."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

SHARED = Path("../shared/data")  # relative to the repository root, where benchmarks run
TWEETS = SHARED / "tweeteval_hate" / "train_text.txt"
PHOTOS = SHARED / "mediaeval2016_vmu" / "mediaeval2016" / "devset" / "Medieval2016_DevSet_Images"
WORDS = "the a people they this that what when never always again today news look see really just like so".split()


def tweet_texts(n: int, seed: int = 0) -> tuple[list[str], str]:
    """``n`` texts: TweetEval tweets (cycled) if present, else generated ~25-word sentences."""
    if TWEETS.is_file():
        tweets = [t for t in TWEETS.read_text(encoding="utf-8").split("\n") if t.strip()]
        return [tweets[i % len(tweets)] for i in range(n)], f"TweetEval tweets ({TWEETS})"
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=25)) for _ in range(n)], "generated sentences"


def photos(root: Path, seed: int = 0) -> tuple[list[Path], str]:
    """Real VMU JPEG photos if present, else 40 generated 800x600 JPEGs written under ``root``."""
    if PHOTOS.is_dir():
        found = sorted(p for p in PHOTOS.rglob("*") if p.suffix.lower() in (".jpg", ".jpeg"))
        if found:
            return found, f"MediaEval VMU photos ({len(found)} JPEGs)"
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(40):
        image = Image.effect_noise((800, 600), 60).convert("RGB")
        draw = ImageDraw.Draw(image)
        for _ in range(20):
            x, y = rng.randrange(800), rng.randrange(600)
            draw.ellipse(
                (x, y, x + rng.randrange(20, 200), y + rng.randrange(20, 200)), fill=tuple(rng.choices(range(256), k=3))
            )
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=90)
        paths.append(root / f"photo_{i}.jpg")
        paths[-1].write_bytes(buffer.getvalue())
    return paths, "generated 800x600 JPEGs"


def multimodal_dump(path: Path, n: int, seed: int = 0) -> str:
    """Write ``n`` posts (tweet text + one photo, by absolute path) as JSONL; returns a description."""
    texts, text_source = tweet_texts(n, seed)
    images, image_source = photos(path.parent / "photos", seed)
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(texts):
            out.write(json.dumps({"id": f"p{i}", "text": text, "image": str(images[i % len(images)].resolve())}) + "\n")
    return f"{n} posts: {text_source}; {image_source}"


def text_dump(path: Path, n: int, seed: int = 0) -> str:
    """Write ``n`` text-only posts as JSONL; returns a description."""
    texts, source = tweet_texts(n, seed)
    with open(path, "w", encoding="utf-8") as out:
        for i, text in enumerate(texts):
            out.write(json.dumps({"id": f"t{i}", "text": text}) + "\n")
    return f"{n} text posts: {source}"
