"""Explanation benchmark: seconds ``faim explain`` spends on one post of a frozen text recipe, on this machine.

    python -m faim.eval.bench_explain [--recipe hate_text_frozen] [--posts 10]

The recipe's model is built as it ships (its bundled pretrained encoder, frozen; n-grams fitted on 1,000 of the same
tweets; an untrained head: the time does not depend on what the head learnt) and explains real tweets one at a time
(``Detector.explain``: element shares and token attributions by integrated gradients). Printed: the median seconds per
post over ``--posts`` posts after one warm-up post, the slowest, and, for scale, the median seconds of
``Detector.score`` on the same single posts; and whether the tokens were attributed (an encoder without token embeddings
gives element shares only, which take less).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

import faim
from faim.data.post import as_posts
from faim.eval.bench_dumps import tweet_texts

FITTED_ON = 1000
"""Texts an encoder that learns from the training texts (n-grams) is fitted on first, the posts explained among them."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recipe", default="hate_text_frozen", help="a shipped text recipe or a recipe file")
    parser.add_argument("--posts", type=int, default=10, help="posts explained (after one warm-up post)")
    args = parser.parse_args()
    torch.manual_seed(0)
    detector = faim.build(args.recipe)
    texts, source = tweet_texts(max(FITTED_ON, args.posts + 1), seed=0)
    fitted_on = as_posts([{"id": f"f{i}", "text": text} for i, text in enumerate(texts)])
    detector.model.fit_encoders(fitted_on, detector.max_elements)
    posts = [{"id": f"t{i}", "text": text} for i, text in enumerate(texts[: args.posts + 1])]
    warm_up = detector.explain(posts[:1])[0]
    detector.score(posts[:1])
    explaining, scoring = [], []
    for post in posts[1:]:
        start = time.perf_counter()
        detector.explain([post])
        explaining.append(time.perf_counter() - start)
        start = time.perf_counter()
        detector.score([post])
        scoring.append(time.perf_counter() - start)
    median, score = statistics.median(explaining), statistics.median(scoring)
    print(f"{args.recipe}: {len(explaining)} posts from {source}, {torch.get_num_threads()} torch threads")
    print(f"  Detector.explain, one post: median {median:.2f} s, slowest {max(explaining):.2f} s (target: <= 2 s)")
    print(f"  Detector.score, one post:   median {score:.3f} s ({median / score:.0f}x less than explaining it)")
    tokens = any(reading.tokens for reading in warm_up.tasks[0].tokens)
    print(f"  token attributions: {'computed' if tokens else 'none'}" + "".join(f" ({note})" for note in warm_up.notes))
    figures = {"explain_median_s": median, "explain_max_s": max(explaining), "score_median_s": score}
    print(json.dumps(figures | {"tokens_attributed": tokens}))


if __name__ == "__main__":
    main()
