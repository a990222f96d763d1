"""How much a picture's crowd corrections weigh (``eval.crowd_corrections``), fitted where they carry over.

A share of posts calling a picture fake is evidence beyond what each post's text says, but how much depends on the
model it is added to and on whether it holds for groups of posts (events) the model never saw. So the weight is
fitted by cross-validation over groups of the training posts (the values of a ``Post.meta`` field, such as the
event), never on the posts it is measured on:

1. **held-out text evidence**: for each fold of groups, a logistic regression on the other folds' whole-post
   embeddings scores the fold's posts;
2. those logits are pooled by shared picture and calibrated as a pooled calibration is (a temperature and a shift,
   ``faim.calibration.scaling.fit_scaling``);
3. the weight ``w >= 0`` of the group's correction evidence (``faim.shared_images.correction_evidence``), added to
   the calibrated pooled logit, maximises the likelihood of the labels, each picture group counting as one
   observation (its posts share a pooled logit, their evidence and, mostly, their label: counted post by post, a
   picture shown a thousand times would weigh as a thousand independent findings). It is kept only where the
   likelihood-ratio test rejects ``w = 0`` at the given level: ``w`` is bounded at 0, so the statistic is referred
   to an equal mixture of chi-squared distributions with 0 and 1 degrees of freedom (Self and Liang, 1987).

The weight is in calibrated logits; ``Detector.calibrate_predictions`` turns it into the model's raw pooled logits
through the temperature of its own pooled calibration.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.stats import chi2

from faim.calibration.scaling import binary_nll, fit_scaling
from faim.shared_images import correction_evidence, pool_by_group

if TYPE_CHECKING:
    from sklearn.linear_model import LogisticRegression

FOLDS = 5
"""Folds of groups the held-out text evidence is computed over (fewer where there are fewer groups)."""

LEVEL = 0.05
"""Significance level at which training keeps a weight (a conventional level, not tuned)."""

MAX_WEIGHT = 20.0
"""Upper bound of the weight searched, in calibrated logits per unit of evidence (4.6 units: every post corrects)."""


def logistic_regression() -> LogisticRegression:
    """The regression ``held_out_logits`` fits on each fold: L2-penalised at scikit-learn's default strength."""
    from sklearn.linear_model import LogisticRegression  # heavy: loaded when first used

    return LogisticRegression(max_iter=2000)


def held_out_logits(features: np.ndarray, targets: np.ndarray, folds: Sequence[Hashable]) -> np.ndarray:
    """Per post, the logit of a logistic regression on ``features`` fitted on the other folds of groups (``FOLDS``
    folds, each group in one). Where the posts outside a fold hold one class only (every event but one showing
    fakes, say), the fold's posts get the logit of that class's smoothed share, ``(n + 1) / (n + 2)``: what those
    posts tell without any feature.

    Raises:
        ValueError: With fewer than two groups.
    """
    from sklearn.model_selection import GroupKFold  # heavy: loaded when first used

    names = np.unique(np.asarray(folds, dtype=object).astype(str), return_inverse=True)[1].ravel()
    count = int(names.max()) + 1 if len(names) else 0
    if count < 2:
        raise ValueError(f"cross-validation over groups needs at least two groups, got {count}")
    logits = np.zeros(len(targets))
    for train, held_out in GroupKFold(n_splits=min(FOLDS, count)).split(features, targets, names):
        if len(np.unique(targets[train])) < 2:
            share = (targets[train].sum() + 1) / (len(train) + 2)
            logits[held_out] = np.log(share / (1 - share))
            continue
        model = logistic_regression().fit(features[train], targets[train])
        logits[held_out] = model.decision_function(features[held_out])
    return logits


def fit_correction_weight(
    logits: np.ndarray, targets: np.ndarray, evidence: np.ndarray, level: float, groups: np.ndarray | None = None
) -> float:
    """The weight ``w`` in ``[0, MAX_WEIGHT]`` maximising the likelihood of 0/1 ``targets`` under
    ``sigmoid(logits + w * evidence)``, or 0 unless the likelihood-ratio test rejects ``w = 0`` at ``level``.
    ``groups``: per row, the group it belongs to; each group's rows then count as one observation in all (each row
    ``1 / its group's size``). ``None``: every row counts one."""
    y = np.asarray(targets, dtype=np.float64)
    counts = None
    if groups is not None:
        index = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
        counts = 1.0 / np.bincount(index)[index]

    def nll(weight: float) -> float:
        return binary_nll(logits + weight * evidence, y, 1.0, 0.0, counts)

    weight = minimize_scalar(nll, bounds=(0.0, MAX_WEIGHT), method="bounded").x
    statistic = 2 * (nll(0.0) - nll(weight))
    p_value = 0.5 * chi2.sf(statistic, df=1) if statistic > 0 else 1.0
    return float(weight) if p_value < level else 0.0


@dataclass(frozen=True)
class CorrectionFit:
    """A fitted weight of the crowd's corrections.

    Attributes:
        weight: Per unit of correction evidence, in calibrated pooled logits (0: the test found none).
        temperature: The temperature that calibrated the held-out pooled logits (``weight * temperature`` is the
            weight in those logits' own units).
    """

    weight: float
    temperature: float


def crowd_correction_weight(
    features: np.ndarray,
    targets: np.ndarray,
    folds: Sequence[Hashable],
    groups: np.ndarray,
    corrections: np.ndarray,
    has_picture: np.ndarray,
    level: float,
) -> CorrectionFit:
    """The weight of the crowd's corrections on calibrated pooled logits, fitted by cross-validation over ``folds``
    (see the module docstring).

    Args:
        features: Whole-post embeddings of the labelled training posts ``[N, d]``.
        targets: Their 0/1 labels ``[N]``.
        folds: Per post, the group it belongs to (a ``Post.meta`` value, such as its event).
        groups: Per post, its picture group (``faim.pooling.picture_groups``).
        corrections: Per post, whether it questions or corrects what it shares ``[N]`` bool.
        has_picture: Per post, whether it shows a picture ``[N]`` bool (a post without one has no evidence).
        level: Significance level of the test that keeps the weight.
    """
    y = np.asarray(targets, dtype=np.int64)
    pooled_logits = pool_by_group(held_out_logits(features, y, folds), groups)
    temperature, shift = fit_scaling(pooled_logits, y, logit_shift=True)
    calibrated = pooled_logits / temperature + shift
    evidence = correction_evidence(corrections, groups, has_picture)
    return CorrectionFit(fit_correction_weight(calibrated, y, evidence, level, groups), temperature)
