"""Recipe runs for the benchmark: train (or reuse an earlier run of the same resolved recipe), measure the scoring
throughput of the trained model through the batch-scoring engine, and evaluate it under evasion-style perturbations
and on other datasets of its task.

Every training run writes ``train_record.json`` next to the run (``<train.output_dir>``, see
``faim.training.run.write_record``): the resolved recipe, the sha256 of the saved weights and the training
wall time, so that a later ``--reuse`` can take a run it can prove is the same model without training again,
whether the benchmark or ``faim train`` trained it: the saved model is evaluated again (the figures come from the
evaluation code of now), and the training time is the recorded one.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from faim.api import evaluate_run, train_recipe
from faim.artifact import MANIFEST, read_manifest
from faim.data.post import Post
from faim.data.without import read_as_now
from faim.detector import Detector
from faim.eval.evaluate import evaluate
from faim.eval.robustness import perturbed_reports
from faim.recipe import Recipe, RecipeError
from faim.recipe.compare import changed_fields, describe_changes, plain
from faim.recipe.loader import read_yaml
from faim.scoring.engine import score_dump
from faim.scoring.runner import ScoreSummary
from faim.training.run import RECORD
from faim.wording import plural

WEIGHTS = "model.safetensors"
SCORING_RUNS = 2  # timed scoring runs per model and way of scoring; the fastest is reported


@dataclass
class RecipeRun:
    """A trained recipe: where its model is, its evaluation report and how long training took.

    Attributes:
        model_dir: The saved artifact.
        report: The evaluation report (``<output_dir>/eval/metrics.json``): ``faim train``'s, or of a reused run,
            the saved model's evaluated again.
        train_seconds: Training wall time (data loading, embedding unless cached, fitting, calibration, evaluation).
        trained_at: When training finished (ISO 8601, UTC).
        reused: Whether the run was taken from disk instead of trained now.
        posts_encoded: How many posts the frozen encoders encoded in that training, the rest read from the
            embedding cache (0: ``train_seconds`` holds no embedding); ``None`` where nothing is cached, or the run's
            record predates the count.
    """

    model_dir: Path
    report: dict[str, Any]
    train_seconds: float
    trained_at: str
    reused: bool
    posts_encoded: int | None


def reuse_problem(recipe: Recipe) -> str | None:
    """Why the run in ``recipe.train.output_dir`` cannot stand for this recipe, or ``None`` when it can.

    It can when the artifact's saved recipe equals the resolved recipe (its data as read now: ``read_as_now``), the
    run record names the same recipe and the very weights the artifact holds, and the evaluation report is of the
    validation split.
    """
    output_dir = Path(recipe.train.output_dir)
    model_dir, record_path = output_dir / "model", output_dir / RECORD
    report_path = output_dir / "eval" / "metrics.json"
    for path in (model_dir / MANIFEST, model_dir / "recipe.yaml", record_path, report_path):
        if not path.is_file():
            return f"no earlier benchmark run ({path} is missing)"
    try:
        saved = Recipe.recorded(read_yaml(model_dir / "recipe.yaml"), str(model_dir / "recipe.yaml"))
    except RecipeError as error:
        return f"the recipe saved in {model_dir} no longer validates ({error})"
    earlier = plain(saved)
    changed = changed_fields(earlier, plain(recipe))
    if set(changed) - {"data.left_out"} == {"data.read_lang"}:  # read so by an earlier faim: the same data, alike?
        now = plain(recipe)
        changed = changed_fields(earlier | {"data": read_as_now(earlier["data"], now["data"].get("left_out"))}, now)
    if changed:
        return f"the recipe changed since {model_dir} was trained ({describe_changes(changed)})"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    same_recipe = record_recipe(record) in (plain(recipe), earlier)  # the run's recipe, as written then
    if not same_recipe or record.get("weights_sha256") != weights_sha256(model_dir):
        return f"{record_path} does not describe the model in {model_dir} (written by another run?)"
    split = json.loads(report_path.read_text(encoding="utf-8")).get("split")
    if split != "validation":
        return f"{report_path} evaluates the {split!r} split, not validation"
    return None


def record_recipe(record: dict[str, Any]) -> dict[str, Any] | None:
    """The recipe of a run record resolved again, as the recipe of the model the run saved is (``Recipe.recorded``),
    so that an option added since, at its default (which keeps the behaviour of before), does not count as a change;
    ``None`` when it no longer validates."""
    try:
        return plain(Recipe.recorded(record.get("recipe") or {}))
    except RecipeError:
        return None


def weights_sha256(model_dir: Path) -> str:
    return read_manifest(model_dir)["files"][WEIGHTS]


NOT_ASKED = "not asked"
"""``train_or_reuse``'s ``problem`` where its caller has not asked ``reuse_problem``."""


def train_or_reuse(
    recipe: Recipe, reuse: bool, log: Callable[[str], None] = print, problem: str | None = NOT_ASKED
) -> RecipeRun:
    """Train ``recipe`` and record the run, or, with ``reuse``, take the recorded run when it is the same model and
    evaluate its saved model again; ``problem`` is what ``reuse_problem`` said of it where the caller asked already,
    so that it is not asked again (which may read every post of its data: ``read_as_now``).

    Raises:
        ValueError: When the recipe evaluates a split other than validation, or trains on several processes.
    """
    output_dir = Path(recipe.train.output_dir)
    if recipe.eval.split != "validation":
        raise ValueError(f"{recipe.source}: eval.split is {recipe.eval.split!r}; the benchmark reports validation")
    if reuse:
        problem = reuse_problem(recipe) if problem == NOT_ASKED else problem
        if problem is None:
            record = json.loads((output_dir / RECORD).read_text(encoding="utf-8"))
            log(f"  reusing {output_dir / 'model'} (trained {record['trained_at']}), evaluating it again")
            report = evaluate_run(recipe, output_dir / "model")
            return recorded_run(output_dir / "model", report, record, True)
        log(f"  training again: {problem}")
    log(f"  training into {output_dir}")
    result = train_recipe(recipe)
    if result is None:
        raise ValueError(f"{recipe.source}: multi-process training; benchmark it with train.devices=1")
    record = json.loads((output_dir / RECORD).read_text(encoding="utf-8"))
    return recorded_run(result.model_dir, result.report, record, False)


def recorded_run(model_dir: Path, report: dict[str, Any], record: dict[str, Any], reused: bool) -> RecipeRun:
    """The run a ``train_record.json`` (``faim.training.run.write_record``) describes."""
    return RecipeRun(
        model_dir, report, record["train_seconds"], record["trained_at"], reused, record.get("posts_encoded")
    )


def write_dump(posts: list[Post], path: Path) -> Path:
    """Write posts as a JSONL dump ``faim score`` reads: id, text, images (absolute paths, so they resolve wherever
    the dump is written), comments.

    Raises:
        ValueError: For a post whose images are bytes (a dump holds paths).
    """
    with open(path, "w", encoding="utf-8") as out:
        for post in posts:
            images = []
            for ref in post.images:
                if isinstance(ref, bytes):
                    raise ValueError(f"{post.origin or post.id}: images given as bytes cannot go into a JSONL dump")
                images.append(str((Path(ref) if post.image_root is None else post.image_root / ref).absolute()))
            row = {"id": post.id, "text": post.text, "images": images, "comments": post.comments}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def scoring_throughput(
    model_dir: Path, posts: list[Post], workers: int | None, pool_by_image: bool = False, repeats: int = SCORING_RUNS
) -> list[ScoreSummary]:
    """Score ``posts`` ``repeats`` times with ``faim score``'s engine (default speed-ups, worker start-up included;
    ``pool_by_image``: pooled by shared picture, the second pass included), each run from scratch into its own
    output, and return each run's summary: ``rows_per_second`` is its throughput in posts per second.

    Take the fastest, as ``timeit`` does: a slower run measures what else held the machine back, such as the first
    scoring right after a fine-tune in the same process, which has measured a third slower than the next one."""
    with tempfile.TemporaryDirectory(prefix="faim-benchmark-") as tmp:
        dump = write_dump(posts, Path(tmp) / "validation.jsonl")
        score = partial(score_dump, model_dir, dump, workers=workers, progress=False, pool_by_image=pool_by_image)
        return [score(out=Path(tmp) / f"scores-{run}") for run in range(repeats)]


def perturbed_evaluations(
    run: RecipeRun, posts: list[Post], data: str, log: Callable[[str], None] = print, folder: str = ""
) -> dict[str, dict[str, Any]]:
    """Perturbation name → evaluation report of the run's saved model on ``posts`` perturbed that way, for every
    perturbation of a modality the model reads (``faim.eval.robustness.perturbed_reports``), with its recipe's eval
    settings; the reports go to the run's ``eval/<folder>/robustness/<name>``."""
    detector = Detector.load(run.model_dir)
    config = detector.recipe.eval
    out = run.model_dir.parent / "eval" / folder
    return perturbed_reports(detector, posts, out, data, config, log=lambda line: log(f"  {line}"))


def shifted_evaluations(
    run: RecipeRun,
    shifted: dict[str, tuple[list[Post], str]],
    log: Callable[[str], None] = print,
    folder: str = "shift",
) -> dict[str, dict[str, Any]]:
    """Name → evaluation report of the run's saved model, as it is (the temperature and threshold chosen on
    validation), on that dataset's posts (``shifted``: name → ``(posts, description)``); the reports go to the
    run's ``eval/<folder>/<name>``."""
    detector = Detector.load(run.model_dir)
    config = detector.recipe.eval
    reports = {}
    for name, (posts, data) in shifted.items():
        log(f"  evaluating on {name} ({plural(len(posts), 'post')})")
        out = run.model_dir.parent / "eval" / folder / name
        reports[name] = evaluate(detector, posts, out, data, config, ablations=False)
    return reports
