"""A detector's calibration per task (temperature, logit shift, decision threshold), how it turns logits into
probabilities, and how it is fitted on labelled logits (a validation split)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.special import expit

from faim.calibration.prior import estimate_prior, prior_interval, prior_shift
from faim.calibration.scaling import apply_temperature, fit_scaling
from faim.calibration.thresholds import PrecisionUnreachable, choose_threshold
from faim.data.targets import TaskSpec
from faim.notices import FaimWarning, warn

if TYPE_CHECKING:  # the recipe package validates against every component; only its type is needed here
    from faim.recipe.sections import EvalConfig

CONSTRAINED = ("precision@recall", "recall@precision")
"""Threshold objectives that take a target (``eval.threshold_target``)."""


@dataclass
class Calibration:
    """What turns a task's logits into calibrated probabilities and decisions, per task name.

    Attributes:
        thresholds: Decision threshold of each binary task on the calibrated probability.
        temperatures: Logit temperature of each task.
        logit_shifts: Shift added to a binary task's tempered logit.
        priors: Share of positives among the posts a binary task was calibrated on: the class prior its
            probabilities are calibrated to (``faim.calibration.prior`` moves them to another one).
        correction_weights: A pooled calibration's only (``faim.pooling``): what each binary task's pooled logit
            gains per unit of its group's correction evidence (``faim.shared_images.correction_evidence``), in
            raw logits; a task without one gains nothing.
    """

    thresholds: dict[str, float] = field(default_factory=dict)
    temperatures: dict[str, float] = field(default_factory=dict)
    logit_shifts: dict[str, float] = field(default_factory=dict)
    priors: dict[str, float] = field(default_factory=dict)
    correction_weights: dict[str, float] = field(default_factory=dict)

    @classmethod
    def identity(cls, tasks: Iterable[TaskSpec]) -> Calibration:
        """Threshold 0.5, temperature 1 and no shift for every task."""
        tasks = list(tasks)
        return cls(
            {t.name: 0.5 for t in tasks if t.type == "binary"},
            {t.name: 1.0 for t in tasks},
            {t.name: 0.0 for t in tasks},
        )

    def copy(self) -> Calibration:
        """A calibration with the same values that fitting or moving it leaves this one as it is."""
        return Calibration(
            dict(self.thresholds),
            dict(self.temperatures),
            dict(self.logit_shifts),
            dict(self.priors),
            dict(self.correction_weights),
        )

    def probabilities(self, task: TaskSpec, logits: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of ``task`` from its raw logits: ``sigmoid(z / T + s)`` for a binary task
        (``[N]``), ``softmax(z / T)`` for a multiclass one (``[N, C]``), and each label's ``sigmoid(z)`` for a
        multilabel one (``[N, L]``, not calibrated)."""
        if task.type == "multilabel":
            return expit(np.asarray(logits, dtype=np.float64))
        return apply_temperature(logits, self.temperatures[task.name], shift=self.logit_shifts[task.name])

    def adapt_to_prior(
        self, task: TaskSpec, logits: np.ndarray, *others: Calibration
    ) -> tuple[float, float, tuple[float, float]]:
        """Move a binary ``task``'s calibration, in place, to the share of positives EM estimates among the posts
        whose raw ``logits`` are given, unlabelled, under this calibration (``faim.calibration.prior``): its logit
        shift moves by ``prior_shift`` and its recorded prior becomes the estimate, here and in ``others`` (a
        pooled calibration, moved by the same estimate). Returns ``(old prior, new prior, its 95% interval)``
        (``prior_interval``).

        Raises:
            KeyError: When this calibration records no prior for the task (never fitted on labelled posts).
        """
        old, probabilities = self.priors[task.name], self.probabilities(task, logits)
        new = self.move_to_prior(task, probabilities, *others)
        return old, new, prior_interval(probabilities, old, new)

    def move_to_prior(self, task: TaskSpec, probabilities: np.ndarray, *others: Calibration) -> float:
        """``adapt_to_prior``'s move, without its interval, of the posts whose ``probabilities`` under this
        calibration are given; returns the new prior.

        Raises:
            KeyError: As ``adapt_to_prior``.
        """
        old = self.priors[task.name]
        new = estimate_prior(probabilities, old)
        for calibration in (self, *others):
            calibration.logit_shifts[task.name] += prior_shift(old, new)
            calibration.priors[task.name] = new
        return new


def source_class_weights(sources: Sequence[Hashable], y: np.ndarray) -> np.ndarray:
    """Per post, the weight under which every pair of source and class present counts as much in all (mean 1)."""
    cells = list(zip(sources, y.tolist()))
    counts = Counter(cells)
    weights = np.array([1.0 / counts[cell] for cell in cells])
    return weights / weights.mean()


def fit_calibration(
    tasks: Iterable[TaskSpec],
    logits: Mapping[str, np.ndarray],
    targets: Mapping[str, np.ndarray],
    config: EvalConfig,
    calibration: Calibration,
    sources: Sequence[Hashable] | None = None,
) -> list[str]:
    """Fit, into ``calibration``, each task's temperature (and a binary task's logit shift with
    ``eval.logit_shift``, where ``eval.logit_shift_level`` finds one) and binary decision threshold
    (``eval.threshold_objective``) on labelled logits, and record a binary task's share of positives there (its
    prior).

    Args:
        tasks: The tasks to fit.
        logits: Task → raw logits of the posts.
        targets: Task → targets of the same posts, as the heads' losses take them (unlabelled posts are skipped).
        config: The recipe's ``eval:`` settings.
        calibration: Updated in place; a task without labels keeps what it has, and so does a binary task whose
            labelled posts hold one class only (no temperature, shift or threshold can be told from them).
        sources: The source each post comes from (``meta["source"]``), for ``eval.threshold_balance: sources``:
            when the labelled posts come from more than one, the threshold is chosen with each source's posts of
            each class counting as much in all (``source_class_weights``); otherwise every post counts one.

    Returns:
        The tasks whose labelled posts hold no threshold with the precision ``recall@precision`` asks for: their
        most precise cut is chosen (``chosen_threshold``).

    Warns:
        TargetUnreachableWarning: For each of those tasks, naming it.
    """
    unreachable = []
    for task in (task for task in tasks if task.name in targets):  # the others keep their calibration
        target, values = targets[task.name], logits[task.name]
        keep = task.labelled(target)
        target, values = target[keep], values[keep]
        if task.type == "binary" and len(np.unique(target)) < 2:
            continue
        kept_sources = None if sources is None else [s for s, k in zip(sources, keep) if k]
        if config.temperature and task.type != "multilabel" and len(target):
            calibration.temperatures[task.name], calibration.logit_shifts[task.name] = fit_scaling(
                values, target.astype(np.int64), logit_shift=config.logit_shift, shift_level=config.logit_shift_level
            )
        if task.type == "binary":
            calibration.priors[task.name] = float(target.mean())
            prob = calibration.probabilities(task, values)
            weights = None
            if config.threshold_balance == "sources" and kept_sources and len(set(kept_sources)) > 1:
                weights = source_class_weights(kept_sources, target.astype(np.int64))
            y = target.astype(np.int64)
            calibration.thresholds[task.name], reached = chosen_threshold(task, y, prob, config, weights)
            if not reached:
                unreachable.append(task.name)
    return unreachable


class TargetUnreachableWarning(FaimWarning):
    """A task's labelled posts hold no threshold with the precision its ``recall@precision`` objective asks for:
    the most precise cut was chosen instead."""


def chosen_threshold(
    task: TaskSpec, y: np.ndarray, prob: np.ndarray, config: EvalConfig, weights: np.ndarray | None = None
) -> tuple[float, bool]:
    """``task``'s threshold by ``config.threshold_objective`` and whether it meets the objective's target; where no
    cut reaches the precision ``recall@precision`` asks for, the most precise cut, with a
    ``TargetUnreachableWarning`` naming the task and both precisions (a fit is not lost to a sample that cannot
    show the target). ``weights``: what each post counts for, as ``choose_threshold`` takes them."""
    goal = config.threshold_target if config.threshold_objective in CONSTRAINED else None
    try:
        return choose_threshold(y, prob, config.threshold_objective, goal, weights), True
    except PrecisionUnreachable as unreachable:
        warn(
            f"task {task.name!r}: no threshold reaches precision {goal} on these {len(y)} labelled posts; the most "
            f"precise cut (precision {unreachable.best:.4f}) was chosen",
            TargetUnreachableWarning,
        )
        return choose_threshold(y, prob, config.threshold_objective, unreachable.best, weights), False
