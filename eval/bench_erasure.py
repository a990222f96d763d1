"""Erasure check of token attributions: whether the pieces an explanation ranks highest are the ones a saved model's
score rests on (the comprehensiveness of DeYoung et al., 2020), on its recipe's validation posts or labelled posts
given.

    python -m faim.eval.bench_erasure MODEL [--data POSTS --map labels.TASK=COLUMN] [--task NAME] [--posts 100]
        [--fraction 0.2] [--draws 5] [--seed 0]

MODEL is a saved model (``faim train``'s ``<output_dir>/model``) whose text encoder has token attributions, e.g.
``runs/hate_text_general/model``. Each of ``--posts`` posts labelled positive for the binary task (drawn with
``--seed``; every one when there are fewer), from the recipe's validation posts or from ``--data``, is explained as
``faim explain`` does, by integrated gradients at the embeddings of its text's pieces. Then the ``k`` pieces with
the highest attribution (``k = max(1, round(fraction × pieces))``, the fixed pieces such as sentence markers not
counted) are replaced by the encoder's blank piece, the explanation's own baseline, and the fall of the task's logit
is measured; likewise for the ``k`` lowest and for ``k`` pieces drawn at random (the mean over ``--draws`` draws).
A post whose text has too few such pieces for ``k`` to leave one (or no text) is passed over. In a stack, each member
that reads the text in pieces is checked on its own pieces, the others' embeddings of the text kept: one reading
each. Printed: the mean fall of each over the readings, and the share of readings whose highest ``k`` take more off
the logit than the random ones. Attributions the score rests on give a fall for the highest well above the random
one, and the lowest a rise or a smaller fall.
"""

from __future__ import annotations

import argparse
import json
import random
from statistics import mean

import torch
from tqdm import tqdm

from faim.artifact import read_recipe
from faim.cli.common import add_columns, parse_columns, positive_integer
from faim.data.batch import PostBatch
from faim.data.post import Post
from faim.data.sources import read_posts
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.explain.attribute import PostExplainer, TextPieces
from faim.model import WholePostModel

WAYS = ("highest", "random", "lowest")
"""Which pieces are erased: the highest attributed, as many drawn at random, the lowest attributed."""


def erasure_falls(
    model: WholePostModel, batch: PostBatch, task: TaskSpec, fraction: float, draws: int, rng: random.Random
) -> list[tuple[str, dict[str, float]]]:
    """How far the logit of ``task``'s positive label falls when one collated post's highest attributed pieces,
    as many random ones and the lowest attributed ones are blanked (see the module): ``(reader, figures)`` for each
    encoder reading its text in pieces (a stack's members each erase their own), none where it has no ranking to
    check: no token attributions (no text, an encoder without token embeddings), or so few that the share erased is
    all of them.

    Raises:
        ValueError: For a ``fraction`` not above 0 and below 1, or ``draws`` below 1.
    """
    if not 0 < fraction < 1 or draws < 1:
        raise ValueError(f"erasure needs a fraction above 0 and below 1 and a draw or more, got {fraction}, {draws}")
    explainer = PostExplainer(model, batch)
    texts, _ = explainer.text_pieces()
    return [
        (text.reader, falls)
        for text in texts
        if (falls := reading_falls(explainer, text, task, fraction, draws, rng)) is not None
    ]


def reading_falls(
    explainer: PostExplainer, text: TextPieces, task: TaskSpec, fraction: float, draws: int, rng: random.Random
) -> dict[str, float] | None:
    """``erasure_falls`` for one encoder's reading of the text, ``None`` where it has too few pieces to rank."""
    count = max(1, round(fraction * len(text.attributed)))
    if count >= len(text.attributed):
        return None
    tokens = explainer.reading(text, task, 1).tokens
    ranked = [position for position, _ in sorted(zip(text.attributed, tokens), key=lambda item: -item[1][1])]
    with torch.no_grad():
        full = explainer.text_logit(text, text.ids, task, 1)

    def fall(positions: list[int]) -> float:
        with torch.no_grad():
            return (full - explainer.text_logit(text, text.blanked(positions), task, 1)).item()

    return {
        "highest": fall(ranked[:count]),
        "random": mean(fall(rng.sample(text.attributed, count)) for _ in range(draws)),
        "lowest": fall(ranked[-count:]),
        "pieces": float(len(text.attributed)),
        "erased": float(count),
    }


def positive_posts(posts: list[Post], task: TaskSpec, count: int, seed: int) -> list[Post]:
    """``count`` posts labelled with ``task``'s positive label (drawn with ``seed``; all of them if fewer)."""
    positive = [post for post in posts if task.name in post.labels and task.index(post.labels[task.name]) == 1]
    return sorted(random.Random(seed).sample(positive, min(count, len(positive))), key=lambda post: post.id)


def validation_posts(model_dir: str) -> list[Post]:
    """The validation posts of a saved model's recipe.

    Raises:
        SystemExit: For a model whose recipe names no data (one composed in code), saying to pass ``--data``.
    """
    recipe = read_recipe(model_dir)
    if recipe.data is None:
        raise SystemExit(
            f"{model_dir}: no validation posts to take (its recipe describes a model alone); give labelled posts "
            "with --data"
        )
    return recipe.data_source().posts("validation")


def measure(
    model_dir: str, posts: list[Post], task_name: str | None, count: int, fraction: float, draws: int, seed: int
) -> dict:
    """The erasure figures of one saved model on ``count`` of ``posts`` labelled positive (see the module).

    Raises:
        SystemExit: When the model has no binary task of that name, naming those it has; when no post has a label
            for it (saying how to map one) or none is labelled positive; or when no post checked had pieces to rank.
    """
    detector = Detector.load(model_dir)
    binary = [task for task in detector.tasks if task.type == "binary"]
    task = next((t for t in binary if t.name == task_name), None) if task_name else (binary[0] if binary else None)
    if task is None:
        names = ", ".join(t.name for t in binary) or "none"
        raise SystemExit(f"{model_dir}: no binary task {task_name or ''} to check (binary tasks: {names})")
    if not any(task.name in post.labels for post in posts):
        raise SystemExit(
            f"{model_dir}: no post has a label for {task.name} (name its column: --map labels.{task.name}=COLUMN)"
        )
    chosen = positive_posts(posts, task, count, seed)
    if not chosen:
        raise SystemExit(f"{model_dir}: none of the posts is labelled positive for {task.name}")
    collate = detector.collator(kinds=detector.model.fused_kinds)
    rng = random.Random(seed)
    falls: list[dict[str, float]] = []
    by_reader: dict[str, list[dict[str, float]]] = {}
    posts_checked = 0
    for post in tqdm(chosen, desc="erasing", unit="post"):
        readings = erasure_falls(detector.model, collate([post]), task, fraction, draws, rng)
        posts_checked += bool(readings)
        for reader, fall in readings:
            falls.append(fall)
            by_reader.setdefault(reader, []).append(fall)
    if not falls:
        raise SystemExit(
            f"{model_dir}: no post had pieces to rank: a text of at least two pieces with token attributions (a post "
            "without text, or a text encoder without token embeddings, has none)"
        )
    return summarised(falls) | {
        "by_reader": {reader: summarised(reader_falls) for reader, reader_falls in by_reader.items()},
        "model": model_dir,
        "task": task.name,
        "posts": posts_checked,
        "readings": len(falls),
        "passed_over": len(chosen) - posts_checked,
        "pieces": mean(fall["pieces"] for fall in falls),
        "erased": mean(fall["erased"] for fall in falls),
        "fraction": fraction,
        "draws": draws,
    }


def summarised(falls: list[dict[str, float]]) -> dict[str, float]:
    """The mean fall of each way over ``falls``, and the share of them whose highest fell more than the random."""
    summary = {way: mean(fall[way] for fall in falls) for way in WAYS}
    return summary | {"highest_above_random": mean(float(fall["highest"] > fall["random"]) for fall in falls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", help="a saved model directory, e.g. runs/hate_text_general/model")
    parser.add_argument(
        "--data", help="labelled posts to take the positive ones from (default: the recipe's validation posts)"
    )
    add_columns(parser)
    parser.add_argument("--task", help="the binary task to check (default: the model's first binary task)")
    parser.add_argument("--posts", type=positive_integer, default=100, help="positive posts checked (default: 100)")
    parser.add_argument("--fraction", type=float, default=0.2, help="share of each text's pieces erased (0.2)")
    parser.add_argument(
        "--draws", type=positive_integer, default=5, help="random draws of as many pieces per post (default: 5)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the posts and pieces drawn (default: 0)")
    args = parser.parse_args()
    if not 0 < args.fraction < 1:
        parser.error(f"argument --fraction: expected a share above 0 and below 1, got {args.fraction}")
    if args.data:
        posts = list(read_posts(args.data, parse_columns(args.columns), args.image_root))
    else:
        posts = validation_posts(args.model)
    figures = measure(args.model, posts, args.task, args.posts, args.fraction, args.draws, args.seed)
    stacked = len(figures["by_reader"]) > 1
    readings = f" ({figures['readings']} readings by the encoders of a stack)" * stacked
    print(
        f"{figures['model']}: task {figures['task']}, {figures['posts']} positive posts{readings}, "
        f"{figures['pieces']:.1f} pieces each on average, {figures['erased']:.1f} erased "
        f"({figures['passed_over']} passed over: no text, or too few pieces to rank)"
    )
    for way in WAYS:
        print(f"  fall of the logit, {way} attributed pieces erased: {figures[way]:+.3f}")
    unit = "readings" if stacked else "posts"
    print(f"  {unit} whose highest take more off than random ones: {figures['highest_above_random']:.0%}")
    if stacked:
        for reader, shown in figures["by_reader"].items():
            falls = ", ".join(f"{way} {shown[way]:+.3f}" for way in WAYS)
            print(f"  {reader}: falls {falls}; highest above random in {shown['highest_above_random']:.0%}")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
