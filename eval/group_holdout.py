"""How well what a recipe's frozen encoders see carries over to groups no training post came from.

A recipe's validation split holds out some groups (VMU holds out six events), and its figures rest on those
alone: a few groups can flatter a model or sink it. This probe measures one and the same simple classifier, a
logistic regression on the recipe's frozen embeddings of its fused kinds (each kind's elements averaged, kinds
side by side), under two protocols over the recipe's labelled posts:

- **recipe split**: trained on the train split, measured on the validation split;
- **leave one group out**: for each value of a ``Post.meta`` field (default: the recipe's ``eval.slice``), trained
  on every other group's posts and measured on that group's; the figures are over all held-out predictions
  together, and per group.

With ``eval.pool_by_image``, held-out posts that show a near-duplicate picture (the recipe's cut) take their
mean logits, as evaluation pools them; with ``eval.crowd_corrections`` too, a binary task's pooled logit gains the
group's share of posts that question or correct the picture, weighted as training weighs it
(``faim.calibration.crowd``): fitted by cross-validation over the ``eval.crowd_corrections`` groups of the
posts the probe is fitted on, never on the posts measured. Decisions are the probe's arg-max (0.5 for a binary
task): a threshold chosen on the held-out posts would flatter both protocols. The gap between the two rows tells
how far the recipe split's figure is to be trusted for groups not seen yet; it is the probe's gap, not the trained
recipe's.

Calibration is measured the same two ways. ``ece`` is the expected calibration error after a temperature (and,
with the recipe's ``eval.logit_shift``, a shift) fitted on the very posts measured, as ``faim eval`` fits it on
validation. ``ece_transferred`` (leave one group out) calibrates each group's posts with the fit on every other
group's held-out posts: the error a calibration brings to a group it was not fitted on, such as a new event whose
share of positives differs. ``ece_em`` then moves that calibration to the share of positives EM estimates from the
group's own posts, unlabelled (Saerens et al., 2002), as ``faim calibrate --unlabelled`` would for a new event.

    python -m faim.eval.group_holdout recipes/misinfo_vmu_multimodal.yaml [--group-by event]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import logit
from tqdm.auto import tqdm

from faim.api import build
from faim.assembly import task_specs
from faim.calibration.crowd import LEVEL as CORRECTION_LEVEL
from faim.calibration.crowd import crowd_correction_weight
from faim.calibration.fit import Calibration
from faim.calibration.scaling import apply_temperature, fit_scaling
from faim.data.post import Post
from faim.data.targets import TaskSpec
from faim.data.without import grouped
from faim.detector import Detector
from faim.eval.benchmark_baselines import class_probabilities, fit_logistic_regression, labelled
from faim.eval.calibration import expected_calibration_error
from faim.eval.metrics import binary_metrics, multiclass_metrics
from faim.eval.slices import slice_key, slice_name
from faim.eval.tables import markdown_cell
from faim.fusion.pooling import masked_mean
from faim.inference import first_elements
from faim.preprocess.corrections import questions_or_corrects
from faim.recipe import Recipe, as_recipe
from faim.shared_images import correction_evidence, pool_by_group, shared_image_groups
from faim.training.loaders import make_loader

COLUMNS = ("accuracy", "macro_f1", "auroc")


@dataclass(frozen=True)
class ProbeInputs:
    """The labelled posts of a recipe as the probe reads them, train split first.

    Attributes:
        features: per post, each fused kind's mean element embedding side by side ``[N, d]`` (zeros for a kind the
            post lacks).
        targets: class index per post ``[N]``.
        groups: per post, the value of the grouping field ``[N]``, named as the slices and the trained hold-out name
            it (``slice_name``).
        in_train: whether the post is in the recipe's train split ``[N]`` (else in its validation split).
        pictures: per post, its first picture embedded ``[N, d_image]``, with ``has_picture [N]``; ``None`` unless
            the recipe pools by shared picture.
        has_picture: see ``pictures``.
        fused_kinds: the kinds whose embeddings are the features, in order.
        corrections: per post, whether it questions or corrects what it shares ``[N]``, with ``folds``, per post, its
            ``eval.crowd_corrections`` group; both ``None`` unless the recipe weighs the crowd's corrections.
        folds: see ``corrections``.
    """

    features: np.ndarray
    targets: np.ndarray
    groups: np.ndarray
    in_train: np.ndarray
    pictures: np.ndarray | None = None
    has_picture: np.ndarray | None = None
    fused_kinds: tuple[str, ...] = ()
    corrections: np.ndarray | None = None
    folds: np.ndarray | None = None


def probe_inputs(recipe: Recipe, task: TaskSpec, group_by: str, cache_dir: str) -> ProbeInputs:
    """Embed the recipe's labelled train and validation posts through the embedding cache.

    Raises:
        ValueError: When an encoder the probe reads trains in the recipe (its frozen embeddings are not what the
            recipe's head sees), or a labelled post has no ``meta[group_by]`` (grouped by ``lang``, a post without
            one is given the language it is written in, ``faim.data.language``, as evaluation gives it; or no value
            of the field ``eval.crowd_corrections`` names, where the recipe weighs the crowd's corrections), naming
            the post.
    """
    detector = build(recipe)
    model = detector.model
    link = detector.pooling_kind
    kinds = model.kinds_with(link)
    trained = [kind for kind in kinds if kind not in model.frozen_kinds]
    if trained:
        raise ValueError(
            f"{recipe.source}: the probe reads frozen embeddings, but the recipe trains the encoder of "
            f"{', '.join(trained)}"
        )
    source = recipe.data_source()
    split_posts = {split: source.posts(split) for split in ("train", "validation")}
    model.fit_encoders(split_posts["train"], recipe.train.max_elements)  # an n-gram encoder learns its vocabulary
    posts: list[Post] = []
    targets, in_train = [], []
    for split, candidates in split_posts.items():
        keep, y = labelled(candidates, task)
        posts += [candidates[i] for i in keep]
        targets.append(y)
        in_train.append(np.full(len(keep), split == "train"))
    # grouped by language, a post that gives none is given the one it is written in, as evaluation gives it
    groups = [slice_name(group_of(post, group_by)) for post in grouped(posts, group_by)]
    corrections, folds = None, None
    if recipe.eval.crowd_corrections and link is not None:
        corrections = np.array([questions_or_corrects(post) for post in posts])
        folds = np.array([str(group_of(post, recipe.eval.crowd_corrections)) for post in posts])
    features, pictures, has_picture = post_vectors(detector, posts, cache_dir, link)
    return ProbeInputs(
        features,
        np.concatenate(targets),
        np.array(groups),
        np.concatenate(in_train),
        pictures,
        has_picture,
        tuple(model.fused_kinds),
        corrections,
        folds,
    )


def group_of(post: Post, field_name: str) -> object:
    """The post's ``meta[field_name]``.

    Raises:
        ValueError: When the post has none, as ``faim eval``'s slices read it (``slice_key``: absent, null, NaN, an
            empty text, as an empty cell reads, or one of spaces alone), naming it.
    """
    if slice_key(post.meta.get(field_name)) is None:
        raise ValueError(f"{post.origin or post.id}: meta.{field_name} is missing; every post needs a group")
    return post.meta[field_name]


@torch.inference_mode()
def post_vectors(
    detector: Detector, posts: list[Post], cache_dir: str, link: str | None
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """``(features [N, d], pictures [N, d_image] or None, has_picture [N] or None)`` of ``posts``, through the
    embedding cache: each fused kind's masked mean element embedding, in float64, side by side (zeros for a kind the
    post lacks) and, with ``link``, each post's first element of that kind."""
    model = detector.model
    loader = make_loader(model, detector.collator(), posts, 256, False, cache_dir=cache_dir, label="labelled posts")
    features, pictures, present = [], [], []
    for batch in loader:
        elements = model.encode(batch, (), model.kinds_with(link))
        means = [masked_mean(vectors.double(), mask) for vectors, mask in (elements[k] for k in model.fused_kinds)]
        features.append(torch.cat(means, dim=-1))  # the regression's fit moves with float32 rounding
        if link is not None:
            vectors, first = first_elements(elements, link, batch.size)
            pictures.append(vectors)
            present.append(first)
    if link is None:
        return torch.cat(features).numpy(), None, None
    return torch.cat(features).numpy(), torch.cat(pictures).numpy(), torch.cat(present).numpy()


def held_out_probabilities(
    inputs: ProbeInputs, task: TaskSpec, train: np.ndarray, test: np.ndarray, min_cosine: float | None
) -> np.ndarray:
    """Class probabilities ``[n_test, C]`` of the probe fitted on the posts ``train`` (a mask), for the posts
    ``test``; pooled over the test posts that share a picture when ``min_cosine`` is set. Training posts of one
    class only (a group held out may take every post of the other) make a probe that predicts that class."""
    classes = np.unique(inputs.targets[train])
    if len(classes) == 1:
        prob = np.zeros((int(test.sum()), len(task.labels)))
        prob[:, classes[0]] = 1.0
    else:
        probe = fit_logistic_regression(inputs.features[train], inputs.targets[train])
        prob = class_probabilities(probe, inputs.features[test], task)
    if min_cosine is None or inputs.pictures is None or inputs.has_picture is None:
        return prob
    pictures = shared_image_groups(inputs.pictures[test], inputs.has_picture[test], min_cosine)
    mean_log = pool_by_group(np.log(np.clip(prob, 1e-12, 1.0)), pictures)  # a softmax of mean logits
    if inputs.corrections is not None and inputs.corrections[test].any() and task.type == "binary" and len(classes) > 1:
        weight = probe_correction_weight(inputs, train, min_cosine)
        mean_log[:, 1] += weight * correction_evidence(inputs.corrections[test], pictures, inputs.has_picture[test])
    pooled = np.exp(mean_log - mean_log.max(axis=1, keepdims=True))
    return pooled / pooled.sum(axis=1, keepdims=True)


def probe_correction_weight(inputs: ProbeInputs, train: np.ndarray, min_cosine: float) -> float:
    """The weight of the crowd's corrections on the probe's pooled logits, fitted on the posts ``train`` (a mask) by
    cross-validation over their ``eval.crowd_corrections`` groups (``crowd_correction_weight``) and turned from
    calibrated logits into the probe's own through the temperature that calibrated the held-out pooled logits; 0 where
    those posts come from one group only."""
    if len(np.unique(inputs.folds[train])) < 2:
        return 0.0
    pictures = shared_image_groups(inputs.pictures[train], inputs.has_picture[train], min_cosine)
    fit = crowd_correction_weight(
        inputs.features[train],
        inputs.targets[train],
        inputs.folds[train],
        pictures,
        inputs.corrections[train],
        inputs.has_picture[train],
        CORRECTION_LEVEL,
    )
    return fit.weight * fit.temperature


def calibrated(
    task: TaskSpec, fit_targets: np.ndarray, fit_prob: np.ndarray, prob: np.ndarray, logit_shift: bool
) -> np.ndarray:
    """Class probabilities ``prob`` ``[n, C]`` under the temperature (and binary shift, with ``logit_shift``) fitted
    on ``fit_prob`` ``[m, C]`` against ``fit_targets`` ``[m]`` as evaluation fits it (``fit_scaling``)."""
    if task.type == "binary":
        temperature, shift = fit_scaling(fit_prob[:, 1], fit_targets, logit_shift=logit_shift, from_probs=True)
        positive = apply_temperature(prob[:, 1], temperature, shift=shift, from_probs=True)
        return np.stack([1.0 - positive, positive], axis=1)
    temperature, _ = fit_scaling(fit_prob, fit_targets, from_probs=True)
    return apply_temperature(prob, temperature, from_probs=True)


def to_estimated_prior(task: TaskSpec, fit_targets: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """Binary probabilities ``prob`` ``[n, 2]``, calibrated on posts whose share of positives is that of
    ``fit_targets``, moved to the share EM estimates from ``prob`` itself, labels unread, by the move
    ``faim calibrate --unlabelled`` makes for a new event (``Calibration.move_to_prior``, here of the calibration
    that leaves the probabilities' log-odds as they are, without the interval nothing here reads); multiclass
    probabilities are returned unchanged."""
    if task.type != "binary" or len(np.unique(fit_targets)) < 2:
        return prob
    calibration = Calibration.identity([task])
    calibration.priors[task.name] = float(fit_targets.mean())
    logits = logit(np.clip(prob[:, 1], 1e-12, 1 - 1e-12))
    calibration.move_to_prior(task, calibration.probabilities(task, logits))
    positive = calibration.probabilities(task, logits)
    return np.stack([1.0 - positive, positive], axis=1)


def calibration_error(task: TaskSpec, y: np.ndarray, prob: np.ndarray, bins: int) -> float:
    """ECE of class probabilities ``[n, C]``: of the positive class for a binary task, else of the arg-max."""
    if task.type == "binary":
        return expected_calibration_error(prob[:, 1], y, bins)
    return expected_calibration_error(prob.max(axis=1), prob.argmax(axis=1) == y, bins)


def probe_metrics(task: TaskSpec, y: np.ndarray, prob: np.ndarray) -> dict[str, float]:
    """``accuracy`` of arg-max decisions, ``macro_f1`` and ``auroc`` (NaN when the posts hold one class: both
    would score a perfect one-class group 0.5 or not at all), and ``n``."""
    if task.type == "binary":
        found = binary_metrics(y, prob[:, 1], threshold=0.5)
    else:
        found = multiclass_metrics(y, prob, task.labels)
    if len(np.unique(y)) < 2:
        found = {"accuracy": found["accuracy"]}
    return {name: float(found.get(name, np.nan)) for name in COLUMNS} | {"n": len(y)}


@dataclass
class HoldoutResult:
    """The probe's figures (``probe_metrics``, with ``groups``: how many groups the posts come from, and the
    calibration errors of the module docstring): over the recipe split (``ece``), over every group held out in turn
    (``ece``, ``ece_transferred`` and ``ece_em``), and per held-out group (``ece_transferred``, ``ece_em``)."""

    recipe_split: dict[str, float]
    leave_one_out: dict[str, float]
    per_group: dict[str, dict[str, float]]


def group_holdout(
    inputs: ProbeInputs,
    task: TaskSpec,
    min_cosine: float | None,
    progress: Callable = tqdm,
    logit_shift: bool = False,
    bins: int = 15,
) -> HoldoutResult:
    """Fit and measure the probe under both protocols (see the module docstring); ``logit_shift`` and ``bins`` are the
    recipe's ``eval`` settings of the same names (``calibration_bins``).

    Raises:
        ValueError: With fewer than two groups, or a validation split without posts.
    """
    names = np.unique(inputs.groups)
    if len(names) < 2:
        raise ValueError(f"leaving one group out needs at least two groups, found {len(names)}")
    test = ~inputs.in_train
    if not test.any():
        raise ValueError("the recipe's validation split has no labelled post")
    y = inputs.targets
    split_prob = held_out_probabilities(inputs, task, inputs.in_train, test, min_cosine)
    split_ece = calibration_error(task, y[test], calibrated(task, y[test], split_prob, split_prob, logit_shift), bins)
    held_out = np.zeros((len(y), len(task.labels)))
    for name in progress(names, desc="leaving one group out", unit="group"):
        fold = inputs.groups == name
        held_out[fold] = held_out_probabilities(inputs, task, ~fold, fold, min_cosine)
    transferred = np.zeros_like(held_out)
    adapted = np.zeros_like(held_out)
    per_group = {}
    for name in names:
        fold = inputs.groups == name
        transferred[fold] = calibrated(task, y[~fold], held_out[~fold], held_out[fold], logit_shift)
        adapted[fold] = to_estimated_prior(task, y[~fold], transferred[fold])
        per_group[str(name)] = probe_metrics(task, y[fold], held_out[fold]) | {
            "ece_transferred": calibration_error(task, y[fold], transferred[fold], bins),
            "ece_em": calibration_error(task, y[fold], adapted[fold], bins),
        }
    return HoldoutResult(
        probe_metrics(task, y[test], split_prob) | {"groups": len(np.unique(inputs.groups[test])), "ece": split_ece},
        probe_metrics(task, y, held_out)
        | {
            "groups": len(names),
            "ece": calibration_error(task, y, calibrated(task, y, held_out, held_out, logit_shift), bins),
            "ece_transferred": calibration_error(task, y, transferred, bins),
            "ece_em": calibration_error(task, y, adapted, bins),
        },
        per_group,
    )


def probe_recipe(
    recipe: Recipe, task: TaskSpec, group_by: str, progress: Callable = tqdm
) -> tuple[tuple[str, ...], HoldoutResult]:
    """``(the kinds the probe reads, its figures)`` for ``recipe``'s ``task``, grouped by ``meta[group_by]``, with
    the recipe's embedding cache and picture pooling (see ``probe_inputs`` for the errors raised)."""
    inputs = probe_inputs(recipe, task, group_by, recipe.train.cache_dir)
    settings = recipe.eval
    result = group_holdout(
        inputs, task, settings.pool_by_image, progress, settings.logit_shift, settings.calibration_bins
    )
    return inputs.fused_kinds, result


def format_result(result: HoldoutResult, group_by: str) -> str:
    """Markdown tables: both protocols, then each held-out group, named as a table's cell shows it (``markdown_cell``:
    a ``|`` or a line break in a group's value keeps its row)."""
    both, each = (*COLUMNS, "ece", "ece_transferred", "ece_em"), (*COLUMNS, "ece_transferred", "ece_em")
    names = " | ".join(COLUMNS)
    elsewhere = f"ECE, calibrated on the other {group_by}s | ECE, then moved to the EM prior"
    header = f"| protocol | {group_by}s | n | {names} | ECE, calibrated on these posts | {elsewhere} |"
    rule = "|:---|---:|---:|" + "---:|" * len(both)
    rows = [("recipe split (validation)", result.recipe_split), (f"leave one {group_by} out", result.leave_one_out)]
    lines = [header, rule] + [f"| {name} | {m['groups']} | {m['n']} | {cells(m, both)} |" for name, m in rows]
    lines += ["", f"| held-out {group_by} | n | {names} | {elsewhere} |", "|:---|---:|" + "---:|" * len(each)]
    lines += [f"| {markdown_cell(name)} | {m['n']} | {cells(m, each)} |" for name, m in result.per_group.items()]
    return "\n".join(lines)


def cells(metrics: dict[str, float], names: Sequence[str]) -> str:
    """The figures ``names`` of ``metrics`` to four places; n/a where NaN or not measured."""
    values = [metrics.get(name, np.nan) for name in names]
    return " | ".join("n/a" if np.isnan(value) else f"{value:.4f}" for value in values)


def recipe_parser(module: str, description: str | None, verb: str) -> argparse.ArgumentParser:
    """The command line of ``python -m faim.eval.<module>``, a command that holds out groups of a recipe's posts:
    its recipe, ``--group-by`` and ``--task`` arguments, the description (a module docstring) kept as written."""
    parser = argparse.ArgumentParser(
        prog=f"python -m faim.eval.{module}",
        description=description,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("recipe", help="recipe file or shipped recipe name")
    parser.add_argument("--group-by", help="Post.meta field whose values are the groups (default: eval.slice)")
    parser.add_argument("--task", help=f"task to {verb} (default: the recipe's first)")
    return parser


def recipe_task_and_groups(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[Recipe, TaskSpec, str]:
    """The recipe, task and grouping field parsed from ``recipe_parser``'s arguments; a usage error (exit 2) for a
    recipe with no ``eval.slice`` and no ``--group-by``, or an unknown task."""
    recipe = as_recipe(args.recipe)
    group_by = args.group_by or recipe.eval.slice
    if not group_by:
        parser.error(f"{recipe.source} has no eval.slice; name the grouping field with --group-by")
    tasks = {task.name: task for task in task_specs(recipe.model)}
    if args.task and args.task not in tasks:
        parser.error(f"unknown task {args.task!r}; the recipe's tasks: {', '.join(tasks)}")
    return recipe, tasks[args.task] if args.task else next(iter(tasks.values())), group_by


def main(argv: Sequence[str] | None = None) -> int:
    parser = recipe_parser("group_holdout", __doc__, "probe")
    args = parser.parse_args(argv)
    recipe, task, group_by = recipe_task_and_groups(parser, args)
    if task.type not in ("binary", "multiclass"):
        parser.error(f"task {task.name!r} is {task.type}; the probe predicts one class per post")
    try:
        kinds, result = probe_recipe(recipe, task, group_by)
    except ValueError as error:  # a trained encoder, a post without a group, too few groups
        parser.error(str(error))
    pooled = f"; pooled by shared picture (cosine >= {recipe.eval.pool_by_image})" if recipe.eval.pool_by_image else ""
    if recipe.eval.pool_by_image and recipe.eval.crowd_corrections:
        pooled += f", with the crowd's corrections weighed across meta.{recipe.eval.crowd_corrections}"
    print(f"recipe: {recipe.source}  task: {task.name}  groups: meta.{group_by}{pooled}")
    print(f"probe: logistic regression on the frozen embeddings of {', '.join(kinds)}")
    print(format_result(result, group_by))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
