"""Selection by transfer: each hate-speech recipe trained on some of the English hate datasets here and measured on
every post of another one it never saw, trained nor tuned on.

The datasets (``HATE``): TweetEval hate (HatEval: hate against immigrants and women, tweets), Davidson et al. 2017
(tweets; hate against any group, offensive language not hate), ETHOS (comments from social media platforms, hate
against any target), each read as hate / not hate. For a recipe, its ``model``, ``train`` and ``eval`` sections
are kept and its ``data`` replaced: trained on each dataset alone, and on every pair (leave one dataset out:
validated, early-stopped, calibrated and thresholded on the pair's validation posts), each dataset read for training
as the recipe reads it (a label view of its own), then measured as trained on every post of each dataset left out,
read as above. Each leave-one-out pair is also recalibrated on the held-out dataset's own
posts, as ``faim calibrate`` would: fitted on 200 of them (``DRAWS`` draws, measured on the rest), with the head
corrected on the same 200 first (``--head``), and moved to the share of positives EM estimates from them unlabelled.
The reference baselines (TF-IDF and frozen MiniLM with logistic regression) go through the same folds.

Each fold of a recipe is trained with ``SEEDS`` seeds (the recipe's own ``train.seed``, then the next ones), and a
row holds their mean and each seed's figures: on a dataset with few hateful posts one seed's threshold can move
macro-F1 by several points, more than the gaps the ranking reads. The recalibrations are measured on the model of
the recipe's own seed.

Only recipes whose encoders are all frozen are trained here (six folds, each with every seed; embeddings cached); a
fine-tuning recipe would take hours per fit on two cores and is left out, saying so.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from faim.api import build
from faim.assembly import build_source
from faim.data.post import Post, post_texts
from faim.data.targets import TaskSpec
from faim.detector import Detector
from faim.eval.benchmark_baselines import Embedder, run_baselines
from faim.eval.benchmark_datasets import View
from faim.eval.benchmark_runs import train_or_reuse
from faim.eval.evaluate import metric_function
from faim.eval.label_conflicts import LabelledTexts, conflict_summary
from faim.eval.recalibration import learning_curve, prior_adaptation
from faim.inference import Predictions, predict
from faim.recipe import Recipe
from faim.recipe.compare import plain
from faim.training.loaders import make_loader

Log = Callable[[str], None]

LABELLED_FOR_CALIBRATION = 200
"""Labelled posts of the held-out dataset the recalibration is fitted on."""
DRAWS = 20
MEASURED = ("macro_f1", "auroc", "ece", "accuracy")
SHOWN_CONFLICTS = 5
"""Terms each pair of datasets reads the opposite way that the results keep, those in the most posts."""
SEEDS = 3
"""Training seeds of each recipe fold (the recipe's own, then the next ones)."""


@dataclass(frozen=True)
class TransferDataset:
    """A dataset of the task, as every fold reads it.

    Attributes:
        name: Short name (``"TweetEval"``).
        data: Its ``data:`` section, the task named.
        description: What its posts are.
    """

    name: str
    data: dict[str, Any]
    description: str


ROOT = "../shared/data"
HATE = (
    TransferDataset(
        "TweetEval",
        {"type": "tweeteval", "root": f"{ROOT}/tweeteval_hate", "task": "hate"},
        "tweets; hate against immigrants and women (SemEval-2019 HatEval)",
    ),
    TransferDataset(
        "Davidson",
        {"type": "davidson", "root": f"{ROOT}/davidson2017", "task": "hate", "labels": "binary"},
        "tweets with hate-speech lexicon terms; hate against any group, offensive but not hateful counted not hate",
    ),
    TransferDataset(
        "ETHOS",
        {"type": "ethos", "root": f"{ROOT}/ethos", "task": "hate"},
        "comments from social media platforms; hate against any target, by at least half the annotators",
    ),
)


def member_types(data: dict[str, Any] | None) -> list[str]:
    """The source types a ``data:`` section reads (a ``concat`` source's members)."""
    if data is None:
        return []
    return [member["type"] for member in data["sources"]] if data["type"] == "concat" else [data["type"]]


def is_hate_recipe(recipe: Recipe) -> bool:
    """Whether a recipe trains on the hate datasets here (and nothing else) with one binary hate head."""
    types = member_types(recipe.data)
    heads = recipe.model["heads"]
    return bool(types) and set(types) <= {d.data["type"] for d in HATE} and list(heads) == ["hate"]


def trains_an_encoder(recipe: Recipe) -> bool:
    return any(not getattr(encoder, "frozen", False) for encoder in build(recipe).model.encoders.values())


def member_data(recipe: Recipe, dataset: TransferDataset) -> dict[str, Any]:
    """How ``recipe`` reads ``dataset`` for training: its own member of the dataset's type (a label view of its
    choosing, such as Davidson's ``hate_vs_neither``) where it has exactly one, else the dataset as every fold
    reads it."""
    data = recipe.data or {}
    members = data["sources"] if data.get("type") == "concat" else [data]
    same_type = [member for member in members if member.get("type") == dataset.data["type"]]
    return same_type[0] if len(same_type) == 1 else dataset.data


def fold_recipe(recipe: Recipe, train_on: tuple[TransferDataset, ...], runs: Path, seed_offset: int = 0) -> Recipe:
    """``recipe`` trained on ``train_on`` (validated on each of them; each read as the recipe reads it,
    ``member_data``), into ``runs/<recipe>/<datasets>``; balancing over datasets only where there are several.
    With ``seed_offset``, trained with the recipe's seed plus it, into ``runs/<recipe>/<datasets>-seed<seed>``."""
    types = [d.data["type"] for d in train_on]
    sources = [member_data(recipe, d) if types.count(d.data["type"]) == 1 else d.data for d in train_on]
    data = sources[0] if len(train_on) == 1 else {"type": "concat", "sources": sources, "evaluate_on": "all"}
    seed = recipe.train.seed + seed_offset
    folder = "+".join(d.name for d in train_on) + (f"-seed{seed}" if seed_offset else "")
    output = runs / Path(recipe.source).stem / folder
    mapping = recipe.to_dict() | {"data": data}
    mapping["train"] = mapping["train"] | {"output_dir": str(output), "seed": seed}
    if len(train_on) == 1:
        mapping["train"]["balance"] = None
    return Recipe.from_dict(mapping, recipe.source)


def same_training(recipes: Mapping[str, Recipe], datasets: tuple[TransferDataset, ...] = HATE) -> list[list[str]]:
    """The groups of two or more of ``recipes`` (name → recipe) whose every fold trains the same weights, in the
    order of ``recipes``: they differ in nothing a fold keeps of the data, model and training settings
    (``fold_training``), such as a recipe and the same recipe with extra training data, which each fold replaces.
    Their evaluation settings may still differ, and with them their calibration."""
    trained: dict[str, list[str]] = {}
    for name, recipe in recipes.items():
        key = json.dumps([fold_training(recipe, train_on) for train_on in folds(datasets)], sort_keys=True)
        trained.setdefault(key, []).append(name)
    return [names for names in trained.values() if len(names) > 1]


def fold_training(recipe: Recipe, train_on: tuple[TransferDataset, ...]) -> dict[str, Any]:
    """What decides the weights the fold of ``recipe`` trained on ``train_on`` learns: its data, model and training
    settings (``fold_recipe``), the folder it writes into aside."""
    fold = plain(fold_recipe(recipe, train_on, Path()))
    return {"data": fold["data"], "model": fold["model"], "train": fold["train"] | {"output_dir": None}}


def folds(datasets: tuple[TransferDataset, ...]) -> list[tuple[TransferDataset, ...]]:
    """Training sets: each dataset alone, then every set leaving exactly one out."""
    singles = [(d,) for d in datasets]
    return singles + [c for c in combinations(datasets, len(datasets) - 1) if len(datasets) > 2]


class EveryPost:
    """Every post of each dataset (all its splits), read once."""

    def __init__(self) -> None:
        self.read: dict[str, list[Post]] = {}

    def __call__(self, dataset: TransferDataset) -> list[Post]:
        if dataset.name not in self.read:
            source = build_source(dataset.data)
            self.read[dataset.name] = [post for split in source.splits() for post in source.posts(split)]
        return self.read[dataset.name]


def held_out_predictions(
    recipe: Recipe, model_dir: Path, posts: list[Post], desc: str, embeddings: bool = False
) -> tuple[Detector, TaskSpec, Predictions]:
    """The saved single-task model of ``recipe``, its task and its predictions of ``posts`` (with their whole-post
    embeddings where ``embeddings``), the embeddings of its frozen encoders read from the recipe's cache (every post
    of a dataset is encoded once per encoder)."""
    detector = Detector.load(model_dir)
    (task,) = detector.tasks
    cache_dir = recipe.train.cache_dir if recipe.train.cache_embeddings else None
    loader = make_loader(
        detector.model, detector.collator(with_targets=True), posts, 256, shuffle=False, cache_dir=cache_dir
    )
    return detector, task, predict(detector.model, loader, desc=desc, embeddings=embeddings)


def measure_recipe(
    recipe: Recipe, model_dir: Path, posts: list[Post], recalibrate: bool, seed: int = 0
) -> dict[str, Any]:
    """A trained fold's figures on held-out posts as trained; with ``recalibrate``, also after fitting its
    calibration on ``LABELLED_FOR_CALIBRATION`` of them, after correcting its head on the same draws first (as
    ``faim calibrate --head`` does), and after moving it to the EM prior (unlabelled)."""
    detector, task, predictions = held_out_predictions(
        recipe, model_dir, posts, "held-out posts", embeddings=recalibrate
    )
    target = predictions.targets[task.name]
    keep = task.labelled(target)
    y = target[keep].astype(np.int64)
    prob = detector.calibration.probabilities(task, predictions.logits[task.name][keep])
    metrics = metric_function(task, detector.calibration, recipe.eval)(y, prob)
    result: dict[str, Any] = {"as_trained": {name: float(metrics[name]) for name in MEASURED}, "n": int(keep.sum())}
    if recalibrate:
        curve = learning_curve(
            task, detector.calibration, predictions, recipe.eval, [LABELLED_FOR_CALIBRATION], DRAWS, seed
        )
        result["recalibrated"] = {key: value for key, value in curve[0].items()} if curve else None
        head = []
        if task.type == "binary":
            head = learning_curve(
                task, detector.calibration, predictions, recipe.eval, [LABELLED_FOR_CALIBRATION], DRAWS, seed, head=True
            )
        result["head_corrected"] = head[0] if head else None
        result["unlabelled"] = prior_adaptation(task, detector.calibration, predictions, recipe.eval)
    return result


def run_transfer(
    recipes: list[Recipe],
    reuse: bool,
    embedder: Embedder,
    log: Log,
    runs: Path = Path("runs/transfer"),
    datasets: tuple[TransferDataset, ...] = HATE,
    seeds: int = SEEDS,
) -> dict[str, Any]:
    """Every fold of every hate recipe (frozen encoders; each trained with ``seeds`` seeds) and of the baselines;
    the results the report renders.

    Returns:
        ``{"datasets": [...], "rows": [{"name", "kind", "train_on": [...], "held_out", "n", "as_trained": {...},
        "seeds": [{"seed", <as_trained of that seed>}] (recipes), "recalibrated": {...} | None, "head_corrected":
        {...} | None, "unlabelled": {...} | None}], "skipped": [{"recipe", "reason"}], "conflicts":
        dataset_conflicts(...)}``; a recipe row's ``as_trained`` is the mean over its seeds.

    Raises:
        ValueError: When ``seeds`` is below 1.
    """
    check_seeds(seeds)
    every = EveryPost()
    rows: list[dict[str, Any]] = []
    skipped = []
    chosen = []
    for recipe in recipes:
        name = Path(recipe.source).stem
        if trains_an_encoder(recipe):
            reason = f"fine-tunes an encoder: {len(folds(datasets)) * seeds} fits would take hours each on two cores"
            log(f"transfer: skipping {name}: {reason}")
            skipped.append({"recipe": name, "reason": reason})
        else:
            chosen.append(recipe)
    for dataset in datasets:
        every(dataset)  # a missing dataset fails before any training
    for recipe in chosen:
        name = Path(recipe.source).stem
        for train_on in folds(datasets):
            leave_one_out = len(train_on) == len(datasets) - 1
            held_out = [d for d in datasets if d not in train_on]
            by_seed: dict[str, list[tuple[int, dict[str, Any]]]] = {held.name: [] for held in held_out}
            for offset in range(seeds):
                fold = fold_recipe(recipe, train_on, runs, offset)
                log(f"transfer: {name} trained on {' + '.join(d.name for d in train_on)}, seed {fold.train.seed}")
                run = train_or_reuse(fold, reuse, log)
                for held in held_out:
                    measured = measure_recipe(fold, run.model_dir, every(held), leave_one_out and offset == 0)
                    by_seed[held.name].append((fold.train.seed, measured))
                    log(f"  on {held.name}: macro-F1 {measured['as_trained']['macro_f1']:.4f}")
            rows += [row(name, "recipe", train_on, held, over_seeds(by_seed[held.name])) for held in held_out]
    for train_on in folds(datasets):
        rows += baseline_rows(train_on, datasets, embedder, every, log)
    return {
        "datasets": [{"name": d.name, "description": d.description, "data": d.data} for d in datasets],
        "rows": rows,
        "skipped": skipped,
        "conflicts": dataset_conflicts(datasets, every),
    }


def check_seeds(seeds: int) -> None:
    """Refuse a count of training seeds below 1 (``ValueError``), before any fold is trained."""
    if seeds < 1:
        raise ValueError(f"seeds must be 1 or more, not {seeds}")


def dataset_conflicts(datasets: tuple[TransferDataset, ...], every: EveryPost) -> list[dict[str, Any]]:
    """For each pair of datasets, as every fold measures them, the terms they read the opposite way
    (``faim.eval.label_conflicts``): how many, the share of each dataset's posts holding one, and the first
    ``SHOWN_CONFLICTS`` with their posts, shares of hate and leans in each dataset."""
    texts = {
        d.name: LabelledTexts(d.name, post_texts(every(d)), [post.labels["hate"] for post in every(d)])
        for d in datasets
    }
    return [
        {"datasets": [first.name, second.name]}
        | conflict_summary(texts[first.name], texts[second.name], SHOWN_CONFLICTS)
        for first, second in combinations(datasets, 2)
    ]


def over_seeds(measured: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """One fold's figures on a held-out dataset from its ``(seed, measure_recipe result)`` pairs, the recipe's own
    seed first: the mean of each figure as trained, each seed's figures, and the first seed's recalibrations."""
    first = measured[0][1]
    mean = {name: float(np.mean([result["as_trained"][name] for _, result in measured])) for name in MEASURED}
    return first | {"as_trained": mean, "seeds": [{"seed": seed} | result["as_trained"] for seed, result in measured]}


def row(name: str, kind: str, train_on: tuple[TransferDataset, ...], held: TransferDataset, measured: dict) -> dict:
    return {"name": name, "kind": kind, "train_on": [d.name for d in train_on], "held_out": held.name} | measured


def baseline_rows(
    train_on: tuple[TransferDataset, ...],
    datasets: tuple[TransferDataset, ...],
    embedder: Embedder,
    every: EveryPost,
    log: Log,
) -> list[dict[str, Any]]:
    """The baselines fitted on a fold's training posts, thresholds on its validation posts, measured on each
    dataset it leaves out (as trained; baselines are not recalibrated)."""
    train, validation = [], []
    for dataset in train_on:
        source = build_source(dataset.data)
        train += source.posts("train")
        validation += source.posts("validation")
    held = [d for d in datasets if d not in train_on]
    view = View("transfer", json.dumps([d.data for d in train_on]), TaskSpec("hate", "binary", ("not-hate", "hate")),
                "macro_f1", 0.9)  # fmt: skip
    log(f"transfer: baselines trained on {' + '.join(d.name for d in train_on)}")
    results = run_baselines(view, train, validation, embedder, log, (), {d.name: every(d) for d in held})
    return [
        row(result.name, "baseline", train_on, dataset,
            {"as_trained": {name: float(result.shifted[dataset.name][name]) for name in MEASURED},
             "n": int(result.shifted[dataset.name]["n"])})
        for result in results for dataset in held
    ]  # fmt: skip
