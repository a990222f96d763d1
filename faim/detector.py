"""``Detector``: a model plus its tasks, calibration and preprocessing — what users score posts with.

A saved artifact holds the recipe (``faim.artifact``); a detector loaded from one, built from one (``faim.build``) or
trained from one keeps it and saves it again, and a model composed in code is written out as one when it is saved.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, MutableSequence, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from faim.artifact import Artifact, architecture_recipe, load_artifact, save_artifact
from faim.assembly import build_model, task_specs
from faim.calibration.crowd import crowd_correction_weight
from faim.calibration.fit import Calibration, fit_calibration
from faim.calibration.head_correction import FOLDS, fit_head_correction
from faim.components import check_tasks, lookup
from faim.data.batch import PostBatch
from faim.data.collate import PostCollator
from faim.data.elements import (
    GIVEN_POSTS,
    PostError,
    overfull,
    posts_to_read,
    readable_posts,
    warn_overfull,
)
from faim.data.post import MAP_LABELS, SOURCE, Post, Remedy, length_batches
from faim.data.preflight import refuse_unevaluable
from faim.data.targets import TaskSpec, refuse_flag_rows
from faim.data.unheld import warn_unread
from faim.decisions import decide, decision_probabilities, refuse_nonfinite, score_rows, task_spec
from faim.explain.attribute import Explanation, explain_post, unread_elements
from faim.inference import Predictions, predict
from faim.model import WholePostModel, check_full_precision, evaluating
from faim.pooling import picture_groups, pooled, pooled_probabilities
from faim.recipe import Recipe, as_recipe
from faim.recipe.sections import EvalConfig, TrainConfig
from faim.registry import a_type
from faim.scoring.output import PICTURE_GROUP
from faim.tasks.binary import BinaryHead

POOLING_KIND = "image"
"""The element kind posts are pooled by."""


class Detector:
    """A whole-post model ready to score posts.

    Args:
        model: The network.
        tasks: The task specs, one per head (one alone is refused: give ``[spec]``), named as it, of its
            ``task_type`` and with one label per class or label it gives (checked: ``check_tasks``), in a list or any
            iterable but a set (in no fixed order), read once into the list ``self.tasks``.
        calibration: The per-post calibration (thresholds, temperatures, logit shifts, priors), fitted on validation
            data (``calibrate``); a task it leaves out has threshold 0.5, temperature 1 and no shift.
        pooled: The calibration of logits pooled across posts that share a picture, fitted on validation data;
            ``None`` until calibrated, or when the detector does not pool. Scoring post by post uses the
            per-post calibration.
        max_elements: Images and comments taken per post.
        pool_by_image: The cosine at which two posts' first pictures count as one (``eval.pool_by_image``), for
            scoring posts together pooled by picture; ``None``: the detector scores posts one by one only.
        source: Where the model came from, for messages: an artifact directory, or ``"<python>"``.
        recipe: The recipe ``save`` writes when given none: the one a loaded detector was saved with, or a built or
            trained one's; ``None``: the architecture alone.

    ``Detector.load(directory)`` (``faim.load``) reads a saved one; ``save`` writes one.
    """

    def __init__(
        self,
        model: WholePostModel,
        tasks: Iterable[TaskSpec],
        calibration: Calibration | None = None,
        pooled: Calibration | None = None,
        max_elements: int = TrainConfig.max_elements,
        pool_by_image: float | None = None,
        source: str = "<python>",
        recipe: Recipe | None = None,
    ) -> None:
        if pool_by_image is not None and POOLING_KIND not in model.kinds:
            raise ValueError(f"pool_by_image needs a model that embeds pictures; it reads {', '.join(model.kinds)}")
        self.model = model
        self.tasks = check_tasks(model.heads, tasks)
        self.max_elements = max_elements
        identity, given = Calibration.identity(self.tasks), calibration or Calibration()
        self.calibration = Calibration(
            identity.thresholds | given.thresholds,
            identity.temperatures | given.temperatures,
            identity.logit_shifts | given.logit_shifts,
            dict(given.priors),
        )
        self.pooled = pooled
        self.pool_by_image = pool_by_image
        self.source = source
        self.recipe = recipe

    @classmethod
    def from_recipe(cls, recipe: Recipe) -> Detector:
        """An untrained detector of the model a resolved ``recipe`` describes, keeping the recipe (``save``
        writes it).

        Raises:
            RecipeError: Naming the recipe's file and the component's recipe path, for an argument its constructor
                refuses (``Recipe.building``).
        """
        with recipe.building():
            model = build_model(recipe.model)
        return cls(
            model,
            task_specs(recipe.model),
            max_elements=recipe.train.max_elements,
            pool_by_image=recipe.eval.pool_by_image,
            source=recipe.source,
            recipe=recipe,
        )

    @property
    def thresholds(self) -> dict[str, float]:
        """Decision threshold per binary task (the per-post calibration's)."""
        return self.calibration.thresholds

    @property
    def temperatures(self) -> dict[str, float]:
        """Logit temperature per task (the per-post calibration's)."""
        return self.calibration.temperatures

    @property
    def logit_shifts(self) -> dict[str, float]:
        """Logit shift per binary task (the per-post calibration's)."""
        return self.calibration.logit_shifts

    @property
    def pooling_kind(self) -> str | None:
        """The element kind posts are pooled by (``"image"`` with ``pool_by_image``), or ``None``."""
        return POOLING_KIND if self.pool_by_image is not None else None

    def collator(
        self,
        with_targets: bool = False,
        on_error: str = "raise",
        draft_images: bool = False,
        kinds: Iterable[str] | None = None,
    ) -> PostCollator:
        """A collator preprocessing posts for this model's encoders (see ``PostCollator``); ``kinds`` limits the
        element kinds it reads (default: every kind the model reads; scoring reads only the fused ones)."""
        read = self.model.kinds if kinds is None else list(kinds)
        preprocessors = {kind: self.model.encoder_for(kind).preprocessor() for kind in read}
        tasks = self.tasks if with_targets else ()
        return PostCollator(preprocessors, tasks, self.max_elements, on_error, draft_images)

    def probabilities(self, logits: Mapping[str, np.ndarray], calibration: Calibration | None = None) -> dict:
        """Task → calibrated probabilities from raw logits, under ``calibration`` (default: the per-post one)."""
        calibration = calibration or self.calibration
        return {task.name: calibration.probabilities(task, logits[task.name]) for task in self.tasks}

    def predict(
        self,
        posts: Iterable[Post | Mapping[str, Any]],
        batch_size: int = 64,
        link_kind: str | None = None,
        embeddings: bool = False,
    ) -> Predictions:
        """Run the model over posts (``faim.inference.predict``), collated ``batch_size`` at a time in this process,
        shortest text first (``length_batches``); the rows come back in input order.

        Raises:
            TypeError, ValueError: Where ``posts_to_read`` refuses the posts (one post given where a list is expected, a
                ``Post`` whose id was taken away after it was built).
            TypeError, ValueError: On a ``batch_size`` that is not a whole number, or below 1.
            PostError: On a post that cannot be read, or one holding nothing the model reads (of kind ``empty``:
                ``readable`` sets such posts aside), named by its origin, or where it has none by its index among
                ``posts`` (``posts_to_read``); before the model reads any post, on the first it would stop at but
                for a picture that does not decode (``PostCollator.check``: a text that is not text, metadata that
                is not numbers, a picture that is not there).
            ValueError: On a model put in half precision (``check_full_precision``), before it reads any post; on a
                ``link_kind`` the model does not read (``WholePostModel.kinds_with``).
        """
        return self.predict_named(
            posts_to_read(posts, self.model.kinds_with(link_kind)), batch_size, link_kind, embeddings
        )

    def predict_named(
        self, posts: list[Post], batch_size: int = 64, link_kind: str | None = None, embeddings: bool = False
    ) -> Predictions:
        """``predict`` of posts as ``posts_to_read`` gives them (each named as an error names it), warning of those
        holding more pictures or comments than the model reads of a post (``warn_overfull``: ``max_elements``).

        Raises:
            TypeError, ValueError, PostError: As ``predict``, but for the posts ``posts_to_read`` refuses.
        """
        kinds = self.model.kinds_with(link_kind)
        collate = self.collator(kinds=kinds)
        collate.check(posts)
        warn_unread(posts, kinds, self.model.meta_fields)
        fused = self.model.fused_kinds
        warn_overfull(*overfull(posts, fused, self.max_elements), self.max_elements, fused, GIVEN_POSTS)
        batches, positions = length_batches(posts, batch_size)
        collated = (collate(batch) for batch in batches)
        predictions = predict(
            self.model, collated, desc=None, link_kind=link_kind, embeddings=embeddings, source=self.source
        )
        return predictions.rows(positions)

    def score(
        self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64, pool_by_image: bool = False
    ) -> list[dict[str, Any]]:
        """Per-post probabilities: ``{"id", task: P(positive)}`` for binary tasks, ``{label: p}`` otherwise.

        Posts may be ``Post`` objects or plain dicts (``{"id", "text", "images", "comments"}``). With
        ``pool_by_image`` (a detector with ``pool_by_image``), the posts are scored together: each takes the mean
        logits of the given posts showing a near-duplicate of its first picture (with the weight of the share of them
        that question or correct it, where the pooled calibration has one), under the pooled calibration (as
        evaluation reports it), and its row gains ``picture_group``, the id its group's posts share; a post without
        a picture is pooled with none, and its ``picture_group`` is ``None`` (as ``faim score --pool-by-image``
        writes null).

        Raises:
            TypeError: On a ``pool_by_image`` that is not True or False (``check_pooling_switch``: a cosine).
            ValueError: With ``pool_by_image``, when the detector does not pool or has no pooled calibration yet, or
                has a task named ``picture_group`` (of a model saved before recipes refused one), whose scores the
                picture group would take the place of.
            TypeError, ValueError: Where the posts are refused, or on a ``batch_size`` below 1 (as ``predict``).
            PostError: On a post that cannot be read, or one holding nothing the model reads (as ``predict``).
            ValueError: On a post whose logits of some task are not finite, naming it as ``predict`` names a post
                and the tasks (``faim.decisions.refuse_nonfinite``).
        """
        check_pooling_switch(pool_by_image)
        if pool_by_image and any(task.name == PICTURE_GROUP for task in self.tasks):
            raise ValueError(
                f"{self.source}: a task named {PICTURE_GROUP!r} would take the place of each post's picture group in "
                "the rows scored pooled by picture; train the model again with the task renamed, or score its posts "
                "one by one"
            )
        if pool_by_image:
            self.check_pooling()
        link_kind = self.pooling_kind if pool_by_image else None
        named = posts_to_read(posts, self.model.kinds_with(link_kind))
        predictions = self.predict_named(named, batch_size, link_kind)
        refuse_nonfinite(named, self.tasks, predictions.logits)
        if not predictions.ids:
            return []
        if not pool_by_image:
            return score_rows(predictions.ids, self.tasks, self.probabilities(predictions.logits))
        groups = picture_groups(predictions, self.pool_by_image)
        crowd = predictions.corrections, predictions.link_present
        probs = pooled_probabilities(self.tasks, self.pooled, predictions.logits, groups, *crowd)
        rows = score_rows(predictions.ids, self.tasks, probs)
        has_picture = predictions.link_present
        return [
            row | {PICTURE_GROUP: int(group) if has else None} for row, group, has in zip(rows, groups, has_picture)
        ]

    def embed(self, posts: Iterable[Post | Mapping[str, Any]], batch_size: int = 64) -> np.ndarray:
        """Whole-post embeddings ``[N, D]`` (float32), in input order.

        Raises:
            PostError: On a post that cannot be read, or one holding nothing the model reads (as ``predict``).
        """
        return self.predict(posts, batch_size, embeddings=True).embeddings

    def readable(
        self, posts: Iterable[Post | Mapping[str, Any]], pool_by_image: bool = False
    ) -> tuple[list[Post], list[PostError]]:
        """The posts holding something the model reads whose elements it can read (pictures decoded, metadata
        numeric), and the errors of the others (``empty``: nothing it reads; ``row``: a dict that is no post), in the
        order given (``readable_posts``; a ``Post`` changed after it was built so that it is none raises
        ``ValueError``, as ``score`` does), as ``faim.runtime``'s ``readable``; with ``pool_by_image``, as
        ``score(posts, pool_by_image=True)`` reads them, the pictures linking posts too.

        Raises:
            TypeError: Where the posts are refused (one post given where a list is expected: ``posts_given``).
            TypeError: On a ``pool_by_image`` that is not True or False (``check_pooling_switch``: a cosine).
            ValueError: With ``pool_by_image``, where the detector does not pool (``check_pools``).
        """
        check_pooling_switch(pool_by_image)
        if pool_by_image:
            self.check_pools()
        kinds = self.model.kinds_with(self.pooling_kind if pool_by_image else None)
        return readable_posts(posts, kinds, self.collator(kinds=kinds).prepare)

    def explain(
        self,
        posts: Iterable[Post | Mapping[str, Any]],
        progress: bool = False,
        failed: MutableSequence[PostError] | None = None,
        warn: bool = True,
    ) -> list[Explanation]:
        """Why each post got its scores (``faim.explain.attribute``): each element's share of each task's logit,
        token attributions for the text and each comment, an occlusion heat map per picture; one post at a time
        (``progress``: with a progress bar), in eval mode, each of the model's modules left in the mode it was in.

        ``failed``: where given, a list (any ``MutableSequence``) each post whose scores are not finite gets its error
        (a ``PostError`` of kind ``scores``) appended to, in order, and is left out of the explanations returned, the
        others explained.

        ``warn``: warn, as ``score`` does (``warn_unread``), of each kind the model reads that none of the posts holds
        and of posts whose metadata holds none of the fields it reads: each would be explained without them; ``False``
        where the caller has warned of them already (``faim explain``, naming its file and columns).

        Raises:
            TypeError: On a ``failed`` that is no ``MutableSequence`` (a tuple), before any post is explained.
            TypeError, ValueError: Where ``posts_to_read`` refuses the posts (as ``predict``).
            PostError: On a post that cannot be read, or one holding nothing the model reads (as ``predict``); without
                ``failed``, of kind ``scores`` on the first post whose logits of some task are not finite, naming it
                as ``predict`` names a post and the tasks.
        """
        if failed is not None and not isinstance(failed, MutableSequence):
            kind = type(failed).__name__
            raise TypeError(f"failed: expected a list the errors are appended to, got {kind}: pass failed=[]")
        kinds = self.model.fused_kinds
        check_full_precision(self.model, self.source)
        items = posts_to_read(posts, kinds)
        collate = self.collator(kinds=kinds)
        collate.check(items)
        if warn:
            warn_unread(items, kinds, self.model.meta_fields)
        explained = []
        with evaluating(self.model):
            for post in tqdm(items, desc="explaining", unit="post", disable=not progress):
                notes = unread_elements(post, kinds, self.max_elements)
                try:
                    explained.append(
                        explain_post(self.model, collate([post]), self.tasks, self.probabilities, post, notes)
                    )
                except PostError as error:
                    if failed is None or error.kind != "scores":
                        raise
                    failed.append(error)
        return explained

    def decisions(self, task: str, probabilities: Any, pooled: bool = False) -> np.ndarray:
        """Thresholded decisions for a task: 0/1 for binary, argmax for multiclass, per-label 0.5 for multilabel.

        ``probabilities``: an array (``[N]`` or a column ``[N, 1]``, decided alike, for a binary task, ``[N, C]`` in
        the task's label order otherwise) or the values ``score`` rows give the task (``decision_probabilities``); a
        binary task's wider than one column, or a multiclass or multilabel task's of another width, is refused with a
        ``ValueError`` naming the task.

        ``pooled``: the probabilities come from ``score(..., pool_by_image=True)``; the pooled threshold applies.
        """
        spec = task_spec(self.tasks, task, self.source)
        threshold = None
        if spec.type == "binary":
            if pooled and self.pooled is None:
                raise ValueError(f"{self.source}: no pooled calibration (the detector does not pool by picture)")
            threshold = (self.pooled if pooled else self.calibration).thresholds[task]
        return decide(spec.type, decision_probabilities(spec, probabilities), threshold)

    def check_pooling(self) -> None:
        """Raise ``ValueError`` unless this detector can score posts pooled by picture (``check_pools``, and a
        pooled calibration)."""
        self.check_pools()
        if self.pooled is None:
            raise ValueError(f"{self.source}: no calibration of pooled scores yet; train or calibrate the model first")

    def check_pools(self) -> None:
        """Raise ``ValueError``, naming the detector's source, where it does not pool posts by picture (no
        ``pool_by_image``): posts read or scored pooled by picture would be read one by one."""
        if self.pooling_kind is None:
            raise ValueError(f"{self.source}: the recipe has no eval.pool_by_image; score its posts one by one")

    def refuse_unevaluable(self, posts: Sequence[Post], name: str, remedy: Remedy = MAP_LABELS) -> None:
        """Refuse ``posts`` (of ``name``) this detector's evaluation could not finish, before its model reads any
        (``faim.data.preflight.refuse_unevaluable`` over its tasks, the kinds its model reads and its
        ``max_elements``): none carries a label for any of its tasks (the error ending in ``remedy``), or one it
        would stop at part way.

        Raises:
            ValueError, PostError: As ``faim.data.preflight.refuse_unevaluable`` raises them.
        """
        tasks = [task.name for task in self.tasks]
        model = self.model
        refuse_flag_rows(self.tasks, posts, name)
        refuse_unevaluable(posts, tasks, model.kinds, self.max_elements, name, remedy, fused=model.fused_kinds)

    def calibrate(
        self, batches: Iterable[PostBatch], config: EvalConfig, correction_weights: Mapping[str, float] | None = None
    ) -> Predictions:
        """Fit the per-post calibration on labelled batches (a validation loader), in place, as ``config`` (the
        recipe's ``eval:`` section) says (``calibrate_predictions``); returns the predictions it was fitted on."""
        predictions = predict(self.model, batches, desc="calibrating", link_kind=self.pooling_kind, source=self.source)
        self.calibrate_predictions(predictions, config, correction_weights)
        return predictions

    def calibrate_predictions(
        self, predictions: Predictions, config: EvalConfig, correction_weights: Mapping[str, float] | None = None
    ) -> None:
        """Fit the per-post calibration on labelled predictions, in place (``faim.calibration.fit``); a pooling
        detector also fits the calibration of pooled logits (``pooled``; the predictions must hold the pictures).
        A task the predictions hold no labels for keeps both calibrations as they were.

        Raises:
            ValueError: When the predictions hold no labels at all (``Detector.predict``'s), saying how to make some.

        ``correction_weights``: task → weight of the crowd's corrections in calibrated logits
        (``correction_weights``). The pooled calibration is fitted without them first, each becomes raw pooled
        logits through that fit's temperature, and the pooled calibration is fitted again with them. ``None``
        keeps the pooled calibration's own weights, in raw logits (a refit on another platform's posts scales
        the crowd's evidence with the text's).
        """
        if not predictions.targets:
            raise ValueError(
                "these predictions hold no labels (Detector.predict reads none): calibrate with "
                "detector.calibrate(batches, config) over batches of detector.collator(with_targets=True)"
            )
        sources = [meta.get(SOURCE) for meta in predictions.meta] if predictions.meta else None
        fit_calibration(self.tasks, predictions.logits, predictions.targets, config, self.calibration, sources)
        if self.pooling_kind:
            groups = picture_groups(predictions, self.pool_by_image)
            self.pooled = self.pooled.copy() if self.pooled else Calibration.identity(self.tasks)
            if correction_weights is not None:
                self.pooled.correction_weights = {}
                self.fit_pooled(predictions, groups, config, sources)
                raw = {task: weight * self.pooled.temperatures[task] for task, weight in correction_weights.items()}
                self.pooled.correction_weights = raw
            self.fit_pooled(predictions, groups, config, sources)

    def fit_pooled(
        self, predictions: Predictions, groups: np.ndarray, config: EvalConfig, sources: list[Any] | None
    ) -> None:
        """Fit the pooled calibration, in place, on ``predictions`` pooled over ``groups`` with its own correction
        weights."""
        pooled_logits = pooled(predictions, groups, self.pooled.correction_weights).logits
        fit_calibration(self.tasks, pooled_logits, predictions.targets, config, self.pooled, sources)

    def correction_weights(self, predictions: Predictions, folds: Sequence[Hashable], level: float) -> dict[str, float]:
        """Each binary task's weight of the crowd's corrections, in calibrated pooled logits, fitted on its labelled
        posts among ``predictions`` by cross-validation over ``folds`` (``faim.calibration.crowd``): 0 where
        the test at ``level`` finds none, and where the labelled posts come from one group or hold one class.

        The held-out evidence is read from the whole-post embeddings: with frozen encoders and a fusion that learns
        nothing on top of them (``concat`` without ``dim``), those are the encoders' own; a fusion or an encoder
        that trains has seen every fold's labels, which flatters the held-out text evidence and makes the weight
        smaller than it should be.

        Args:
            predictions: Training posts predicted with whole-post embeddings, pictures (``link_kind``) and
                corrections.
            folds: Per post, the group it belongs to (its event, say).
            level: Significance level of the test that keeps a weight.

        Raises:
            ValueError: When the detector does not pool by picture, or the predictions lack what the fit reads.
        """
        if self.pooling_kind is None:
            raise ValueError(f"{self.source}: weighing the crowd's corrections needs eval.pool_by_image")
        if predictions.embeddings is None or predictions.corrections is None:
            raise ValueError("weighing the crowd's corrections needs predictions with embeddings and corrections")
        groups = picture_groups(predictions, self.pool_by_image)
        weights = {}
        for task in (t for t in self.tasks if t.type == "binary" and t.name in predictions.targets):
            keep = np.flatnonzero(task.labelled(predictions.targets[task.name]))
            y = predictions.targets[task.name][keep]
            if len({folds[i] for i in keep}) < 2 or len(np.unique(y)) < 2:
                weights[task.name] = 0.0  # no groups to cross-validate over, or no second class to tell apart
                continue
            weights[task.name] = crowd_correction_weight(
                predictions.embeddings[keep],
                y,
                [folds[i] for i in keep],
                groups[keep],
                predictions.corrections[keep],
                predictions.link_present[keep],
                level,
            ).weight
        return weights

    def adapt_to_prior(self, predictions: Predictions) -> dict[str, tuple[float, float, tuple[float, float]]]:
        """Move each binary task's calibration (the pooled one too) to the share of positives EM estimates among
        the predicted posts, unlabelled (``Calibration.adapt_to_prior``); returns task → ``(old prior, new prior, its
        95% interval)`` (``prior_interval``), the interval for the caller to say how far the estimate can be trusted.

        Raises:
            ValueError: For a binary task whose calibration records no prior (never calibrated on labelled posts).
        """
        moved = {}
        for task in (t for t in self.tasks if t.type == "binary"):
            if self.calibration.priors.get(task.name) is None:
                raise ValueError(
                    f"{self.source}: task {task.name!r} records no calibration prior; calibrate it on labelled posts "
                    "first (faim calibrate MODEL DATA without --unlabelled)"
                )
            pooled = (self.pooled,) if self.pooled else ()
            moved[task.name] = self.calibration.adapt_to_prior(task, predictions.logits[task.name], *pooled)
        return moved

    def check_correctable(self) -> None:
        """Raise ``ValueError`` where ``correct_heads`` cannot correct this detector (``check_heads_correctable``)."""
        heads = {name: type(head) for name, head in self.model.heads.items()}
        check_heads_correctable(self.source, self.tasks, heads, self.pooling_kind is not None)

    def correct_heads(self, predictions: Predictions, config: EvalConfig, seed: int = 0) -> list[str]:
        """Correct each binary head on its labelled posts among ``predictions`` (``faim.calibration.head_correction``),
        in place, then fit the calibration as ``calibrate_predictions`` does, a corrected task's on its cross-fitted
        corrected logits; returns the corrected tasks. A task whose labelled posts hold one class, or fewer posts than
        the correction's folds, is not corrected (its calibration is fitted as ``calibrate_predictions`` fits it).

        Raises:
            ValueError: When the predictions lack whole-post embeddings (``predict(embeddings=True)``), or as
                ``check_correctable``.
        """
        self.check_correctable()
        if predictions.embeddings is None:
            raise ValueError("a head correction needs predictions with whole-post embeddings")
        logits, corrected = dict(predictions.logits), []
        for task in (t for t in self.tasks if t.type == "binary" and t.name in predictions.targets):
            keep = task.labelled(predictions.targets[task.name])
            y = predictions.targets[task.name][keep]
            if len(np.unique(y)) < 2 or len(y) < FOLDS:
                continue
            correction, held_out = fit_head_correction(
                predictions.embeddings[keep], predictions.logits[task.name][keep], y, seed
            )
            self.model.heads[task.name].add_correction(correction.scale, correction.weight, correction.bias)
            logits[task.name] = np.full(len(keep), np.nan)
            logits[task.name][keep] = held_out
            corrected.append(task.name)
        self.calibrate_predictions(replace(predictions, logits=logits), config)
        return corrected

    def save(self, directory: str | Path, recipe: Recipe | dict[str, Any] | str | Path | None = None) -> Path:
        """Write the model as an artifact directory (``faim.artifact``), replaced atomically if it exists.

        Args:
            directory: Where to write it.
            recipe: The recipe it was trained from (a ``Recipe``, a mapping, a file or a shipped recipe name, as
                ``faim.build`` takes it), saved with it (evaluation and resumed runs read its data and eval
                settings), with ``correction: true`` on each head corrected since (``correct_heads``), so that
                loading builds the corrections before reading their weights. ``None``: the detector's ``recipe`` (the
                one it was loaded, built or trained with), or, where it has none, the architecture alone, written out
                as a recipe's ``model:`` section from the arguments its components were built with, which is how a
                model composed in code is saved.

        Raises:
            ValueError: Without a recipe, when a component cannot be written out (see
                ``faim.artifact.architecture_recipe``); for a recipe that is not one (``faim.recipe.as_recipe``); for
                one whose ``model:`` section builds another model than ``model`` (a head swapped since), naming the
                recipe's file and what differs, or holds an argument a component's constructor refuses (a
                ``RecipeError`` naming the file and the component, ``Recipe.building``), before anything is written
                (``faim.artifact.check_rebuilt``).
        """
        recipe = self.recipe if recipe is None else as_recipe(recipe)
        artifact = Artifact(
            self.model,
            self.tasks,
            self.calibration,
            self.pooled,
            self.max_elements,
            self.pool_by_image,
            with_corrected_heads(recipe, self.model) if recipe else architecture_recipe(self.model, self.tasks),
        )
        return save_artifact(artifact, directory)

    @classmethod
    def load(cls, directory: str | Path) -> Detector:
        """Load a saved model directory, keeping its recipe (``recipe``); every file's sha256 is checked and nothing
        is unpickled."""
        artifact = load_artifact(directory)
        return cls(
            artifact.model,
            artifact.tasks,
            artifact.calibration,
            artifact.pooled,
            artifact.max_elements,
            artifact.pool_by_image,
            str(directory),
            artifact.recipe,
        )


def check_pooling_switch(pool_by_image: Any) -> None:
    """Refuse a ``pool_by_image`` given to score or read posts (``Detector.score``, ``Detector.readable``,
    ``faim.score_dump``) that is not ``True`` or ``False`` (numpy's too), nor ``None`` (off, as a recipe's
    ``eval.pool_by_image`` has it): a number, as the cosine that setting is, would pool the posts at the cosine the
    model was trained with, the one given unread.

    Raises:
        TypeError: Naming ``pool_by_image``, the value and its type.
    """
    if pool_by_image is not None and not isinstance(pool_by_image, (bool, np.bool_)):
        raise TypeError(
            f"pool_by_image: expected True or False, got {pool_by_image!r} ({a_type(pool_by_image)}): posts are "
            "pooled at the cosine the model was trained with (its recipe's eval.pool_by_image), not at one given here"
        )


def check_heads_correctable(source: str, tasks: Sequence[TaskSpec], heads: Mapping[str, type], pooled: bool) -> None:
    """Raise ``ValueError`` where ``Detector.correct_heads`` cannot correct the model read from ``source``, of
    ``tasks``, whose heads are of the classes ``heads`` (by task name), pooling posts by picture where ``pooled``: it
    has no binary task (only binary heads are corrected), it pools posts by picture (its pooled calibration would need
    refitting on the corrected logits of posts pooled together, which is not done), or a binary task's head is not a
    ``BinaryHead`` (naming every such task and its head's class)."""
    if not any(task.type == "binary" for task in tasks):
        named = ", ".join(f"{task.name} ({task.type})" for task in tasks)
        raise ValueError(f"{source}: no binary task to correct the head of; its tasks: {named}")
    if pooled:
        raise ValueError(f"{source}: a model that pools posts by picture cannot have its heads corrected")
    others = [task.name for task in tasks if task.type == "binary" and not issubclass(heads[task.name], BinaryHead)]
    if others:
        named = ", ".join(f"task {name!r} has a {heads[name].__name__} head" for name in others)
        raise ValueError(f"{source}: {named}; only faim's binary head can hold a correction")


def check_recipe_correctable(recipe: Recipe, source: str) -> None:
    """``check_heads_correctable`` for the model saved at ``source`` with ``recipe``, read from the recipe alone (its
    heads' types and ``eval.pool_by_image``), before the model is loaded; a model composed in code and saved without a
    recipe pools by the manifest's setting alone, which ``Detector.check_correctable`` reads once it is loaded.

    Raises:
        KeyError: For a head type no registry holds (as building the model would).
    """
    heads = {name: lookup("head", spec["type"]) for name, spec in recipe.model["heads"].items()}
    check_heads_correctable(source, task_specs(recipe.model), heads, recipe.eval.pool_by_image is not None)


def with_corrected_heads(recipe: Recipe, model: WholePostModel) -> Recipe:
    """``recipe`` with ``correction: true`` on each of ``model``'s heads that holds a correction."""
    corrected = [name for name, head in model.heads.items() if getattr(head, "correction", None) is not None]
    if not corrected:
        return recipe
    mapping = recipe.to_dict()
    for name in corrected:
        mapping["model"]["heads"][name]["correction"] = True
    # read as the recipe was: an argument only a saved model may hold, which loading warned of, is not refused now
    return Recipe.recorded(mapping, recipe.source)


__all__ = ["Calibration", "Detector", "PostError"]
