"""The Python API's entry points: build a detector from a recipe, train one and evaluate it, load a saved one.

``faim.build``, ``faim.train`` and ``faim.load`` are these; ``faim train`` and the benchmark harness train
through ``train_recipe``, as ``faim.train`` does, so every run ends the same way: calibrated, saved, evaluated,
recorded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faim.data.post import post_texts, refuse_no_posts
from faim.data.sources import check_split
from faim.detector import Detector
from faim.eval.evaluate import evaluate_loader
from faim.recipe import Recipe, as_recipe
from faim.recipe.validate import resuming
from faim.training.run import (
    RESUME_CALL,
    eval_split_name,
    evaluated_posts,
    fit,
    recipe_loader,
    say_evaluation_stopped,
    write_record,
)


@dataclass
class TrainResult:
    """What a training run produced: the detector, where it was saved, its evaluation report and the checkpoint
    its weights come from."""

    detector: Detector
    model_dir: Path
    report: dict[str, Any]
    best_checkpoint: str


def build(recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None) -> Detector:
    """An untrained ``Detector`` from a recipe (file, shipped name, mapping or ``Recipe``), which keeps the resolved
    recipe and saves it with the model (``Detector.save``)."""
    return Detector.from_recipe(as_recipe(recipe, overrides))


def train(
    recipe: Recipe | dict[str, Any] | str | Path, overrides: list[str] | None = None, resume: bool = False
) -> Detector | None:
    """Train, calibrate, save and evaluate (``train_recipe``); returns the trained detector, or ``None`` in the
    non-zero ranks of a multi-process run."""
    result = train_recipe(recipe, overrides, resume)
    return result.detector if result else None


def train_recipe(
    recipe: Recipe | dict[str, Any] | str | Path,
    overrides: list[str] | None = None,
    resume: bool = False,
    *,
    resume_hint: str = RESUME_CALL,
) -> TrainResult | None:
    """Train, calibrate, save (to ``<train.output_dir>/model``) and evaluate (to ``<train.output_dir>/eval``) the
    model a recipe describes, then write ``<train.output_dir>/train_record.json``.

    Returns ``None`` in the non-zero ranks of a multi-process run. ``resume`` and ``resume_hint`` (what a run
    stopped by a signal says resumes it): see ``faim.training.run.fit``. Once the model is saved, an earlier run's
    ``train_record.json`` is removed, as it names the model replaced; Ctrl-C while the model is evaluated says that
    the model is saved, and that its report and record are not (``say_evaluation_stopped``).

    Raises:
        KeyboardInterrupt: On Ctrl-C while training or evaluating.
    """
    start = time.perf_counter()
    with resuming(resume):  # a train.mode refused as the recipe is read says to train anew
        resolved = as_recipe(recipe, overrides)
    with resolved.building():  # an error of the recipe names the file or the override that set its key
        run = fit(resolved, resume, resume_hint)
    if run is None:
        return None
    output_dir = resolved.train.run_folder
    try:
        report = evaluate_loader(
            run.detector,
            run.eval_loader,
            output_dir / "eval",
            run.eval_data,
            resolved.eval,
            texts=run.eval_texts,
            checked=True,
        )
    except KeyboardInterrupt:
        say_evaluation_stopped(run.model_dir, output_dir / "eval", resume_hint)
        raise
    seconds = time.perf_counter() - start
    write_record(run, output_dir, seconds)
    return TrainResult(run.detector, run.model_dir, report, run.best_checkpoint)


def load(path: str | Path) -> Detector:
    """Load a saved model directory; every file's sha256 is checked and nothing is unpickled."""
    return Detector.load(path)


def evaluate_run(recipe: Recipe | dict[str, Any] | str | Path, model_dir: str | Path) -> dict[str, Any]:
    """Evaluate the model a run of ``recipe`` saved in ``model_dir`` again, as ``train`` does at its end: on the
    recipe's eval split, with its saved calibration; rewrites ``<train.output_dir>/eval`` and returns the report.

    Raises:
        PostError: Before the model reads a post, naming the first whose text or a comment it reads is not text.
        ValueError: Before the model reads a post, when none carries a label for any of the saved model's tasks
            (which differ from the recipe's heads where the recipe was edited since), or some name a picture it reads
            that is not there (``evaluated_posts``, naming the split and ``eval.split``).
        RecipeError: Naming the recipe's file, for an argument of ``data:`` its source's constructor refuses
            (``Recipe.data_source``).
        FileNotFoundError: Before the model is loaded, naming the eval split and its file where that is not there
            (``check_split``).
        ValueError: Before the model is loaded, naming the eval split where it holds no post.
    """
    recipe = as_recipe(recipe)
    source = recipe.data_source()
    split = recipe.eval.split
    check_split(source, split)  # a file not there is named before the model is loaded
    name = eval_split_name(source, split)
    read = source.posts(split)
    refuse_no_posts(read, name)  # before the model is loaded, as reading the posts does not use it
    detector = Detector.load(model_dir)
    posts = evaluated_posts(recipe, read, name, detector)
    loader = recipe_loader(recipe, detector, posts, False, split)
    out = recipe.train.run_folder / "eval"
    texts = post_texts(posts)
    return evaluate_loader(detector, loader, out, source.describe(split), recipe.eval, texts=texts, checked=True)
