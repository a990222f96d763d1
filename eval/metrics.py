"""Task metrics over numpy arrays: binary, multiclass and multilabel.

Every function returns a flat ``dict[str, float]`` ready for :mod:`faim.eval.report`; per-class and
per-label entries are keyed ``"<metric>/<label>"``. Undefined values are NaN, never an exception:
AUROC and average precision need both classes; precision, recall and F1 (a binary task's, and each class's or
label's) are NaN where their denominator is empty (no post flagged, no positive, neither), while inside a macro-F1 such
an F1 counts as 0 (scikit-learn's ``zero_division=0`` over every class), so that a macro-F1 is defined wherever a class
is present or flagged, and one decision moves it by little on posts of one class. Only empty
or malformed inputs raise ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import norm, rankdata

from faim.calibration.checks import as_binary_inputs, as_multiclass_inputs, as_multilabel_inputs
from faim.calibration.thresholds import threshold_sweep
from faim.eval.calibration import ece_if_calibrated, expected_calibration_error

NAN = float("nan")


def binary_metrics(
    y_true: np.ndarray,
    prob: np.ndarray,
    threshold: float,
    fixed_recall: Sequence[float] = (0.9,),
    fixed_precision: Sequence[float] = (0.9,),
    bins: int = 15,
) -> dict[str, float]:
    """Ranking, thresholded and calibration metrics of one binary task.

    Args:
        y_true: labels, 0/1 (or bool) ``[N]``.
        prob: positive-class probabilities ``[N]``.
        threshold: decision threshold (predict positive when ``prob >= threshold``), normally chosen on
            validation data with :func:`faim.calibration.thresholds.choose_threshold`.
        fixed_recall: recalls ``r`` for which ``"precision@recall=<r>"`` (best precision with recall
            >= r over all thresholds) is reported; keys use two decimals, or more where ``r`` has more
            (``operating_point``).
        fixed_precision: precisions for ``"recall@precision=<p>"`` likewise (0 when unreachable).
        bins: number of equal-width bins of the ECE.

    Returns:
        ``auroc``, ``average_precision`` (NaN unless both classes are present), ``accuracy``,
        ``macro_f1``, ``f1``, ``precision``, ``recall`` (at ``threshold``; precision NaN where no post is flagged,
        recall where none is positive, F1 where neither, as nothing measures them), the fixed operating points,
        ``ece`` (on the positive-class probability), ``brier``, ``n``, ``positives`` and ``threshold``.

    Raises:
        ValueError: on an empty sample, mismatched shapes, labels other than 0/1 or probabilities
            outside [0, 1].
    """
    from sklearn.metrics import average_precision_score, roc_auc_score  # heavy: loaded when first used

    y, p = as_binary_inputs(y_true, prob)
    n, positives = int(y.size), int(y.sum())
    both_classes = 0 < positives < n
    tp, fp, fn, tn = _confusion(y, p >= threshold)
    metrics: dict[str, float] = {
        "auroc": float(roc_auc_score(y, p)) if both_classes else NAN,
        "average_precision": float(average_precision_score(y, p)) if both_classes else NAN,
        "accuracy": (tp + tn) / n,
        "macro_f1": (_f1(tp, fp, fn) + _f1(tn, fn, fp)) / 2,
        "f1": _reported_f1(tp, fp, fn),
        "precision": tp / (tp + fp) if tp + fp else NAN,
        "recall": tp / positives if positives else NAN,
    }
    sweep = threshold_sweep(y, p)
    for r in fixed_recall:
        metrics[f"precision@recall={operating_point(r)}"] = sweep.precision_at_recall(r)
    for q in fixed_precision:
        metrics[f"recall@precision={operating_point(q)}"] = sweep.recall_at_precision(q)
    metrics["ece"] = expected_calibration_error(p, y, bins)
    metrics["brier"] = float(np.mean((p - y) ** 2))
    metrics.update(n=n, positives=positives, threshold=float(threshold))
    return metrics


def operating_point(share: float) -> str:
    """A fixed recall or precision as its metric's key names it: with two decimals (``0.90``), or with as many as it
    is given with where two would round it (``0.995``, which two would name ``0.99``; ``0.999`` and ``1.0`` would
    both be ``1.00``)."""
    return f"{share:.2f}" if round(share, 2) == share else repr(float(share))


def multiclass_metrics(y_true: np.ndarray, prob: np.ndarray, labels: Sequence[str], bins: int = 15) -> dict[str, float]:
    """Metrics of one single-label multiclass task; the prediction is the arg-max class.

    Args:
        y_true: class indices ``[N]`` into ``labels``.
        prob: class probabilities ``[N, C]``, column ``c`` for ``labels[c]``.
        labels: class names, used in the per-class keys.
        bins: number of equal-width bins of the ECE.

    Returns:
        ``accuracy``, ``macro_f1`` (over all C classes), ``macro_auroc`` (mean one-vs-rest AUROC; NaN
        unless every class has both positives and negatives, as scikit-learn's
        ``roc_auc_score(multi_class="ovr")``), ``ece`` (max-prob confidence vs. correctness), ``n`` and
        ``f1/<label>`` per class (NaN for a class no post is of nor decided to be).

    Raises:
        ValueError: on an empty sample, shapes other than ``[N]`` / ``[N, C]``, class indices outside
            ``[0, C)`` or probabilities outside [0, 1].
    """
    from sklearn.metrics import roc_auc_score  # heavy: loaded when first used

    y, p = as_multiclass_inputs(y_true, prob, labels)
    n, n_classes = y.size, len(labels)
    pred = p.argmax(axis=1)
    confusion = np.bincount(y * n_classes + pred, minlength=n_classes**2).reshape(n_classes, n_classes)
    tp = np.diag(confusion)
    fp, fn = confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp
    counts = [(int(a), int(b), int(c)) for a, b, c in zip(tp, fp, fn, strict=True)]
    f1 = [_f1(*count) for count in counts]
    support = confusion.sum(axis=1)
    computable = bool(np.all((support > 0) & (support < n)))
    aurocs = [roc_auc_score(y == c, p[:, c]) for c in range(n_classes)] if computable else [NAN]
    metrics: dict[str, float] = {
        "accuracy": float(tp.sum() / n),
        "macro_f1": float(np.mean(f1)),
        "macro_auroc": float(np.mean(aurocs)),
        "ece": expected_calibration_error(p.max(axis=1), pred == y, bins),
        "n": int(n),
    }
    metrics.update({f"f1/{label}": _reported_f1(*count) for label, count in zip(labels, counts, strict=True)})
    return metrics


def ece_range(prob: np.ndarray, groups: np.ndarray | None = None, bins: int = 15) -> dict[str, float]:
    """``ece_if_calibrated_low`` and ``ece_if_calibrated_high``: the central 95 % range of the ECE a calibrated model
    would show on these probabilities (``[N]`` binary, ``[N, C]`` multiclass; see
    :func:`faim.eval.calibration.ece_if_calibrated`, which ``groups`` is passed to)."""
    low, high = ece_if_calibrated(prob, groups, bins=bins)
    return {"ece_if_calibrated_low": low, "ece_if_calibrated_high": high}


def auroc_interval(y_true: np.ndarray, scores: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """AUROC and its ``level`` confidence interval, ``(auroc, low, high)``, from DeLong's variance (DeLong et al.,
    1988, in the mid-rank form of Sun & Xu, 2014): each positive's share of negatives scored below it and each
    negative's share of positives scored above it vary over posts, and so does their mean, the AUROC. The interval
    is normal, clipped to [0, 1]. Its bounds are NaN where that variance is nil, the scores parting the classes
    completely (an AUROC of 1 or 0) or tying them all: it then tells nothing of how sure the AUROC is, and an
    interval of no width would claim certainty.

    Args:
        y_true: labels, 0/1 (or bool) ``[N]``.
        scores: any scores ordered as the positive class's probability (logits or probabilities) ``[N]``.
        level: coverage of the interval, in (0, 1).

    Raises:
        ValueError: on labels other than 0/1, mismatched shapes, a single class, fewer than two posts of a class
            (no variance can be told from one) or a ``level`` outside (0, 1).
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    y, s = np.asarray(y_true), np.asarray(scores, dtype=np.float64)
    if y.shape != s.shape or y.ndim != 1:
        raise ValueError(f"y_true and scores must be [N] arrays of one length, got {y.shape} and {s.shape}")
    if not np.isin(y, (0, 1)).all():
        raise ValueError("y_true must hold 0/1 labels")
    positives, negatives = s[y == 1], s[y == 0]
    m, n = len(positives), len(negatives)
    if m < 2 or n < 2:
        raise ValueError(f"an AUROC interval needs two posts of each class at least, got {m} positive, {n} negative")
    overall = rankdata(np.concatenate([positives, negatives]))
    above = (overall[:m] - rankdata(positives)) / n  # per positive: the negatives scored below it (ties half)
    below = 1.0 - (overall[m:] - rankdata(negatives)) / m  # per negative: the positives scored above it
    auroc = float(above.mean())
    se = float(np.sqrt(above.var(ddof=1) / m + below.var(ddof=1) / n))
    if se == 0:
        return auroc, NAN, NAN
    half = norm.ppf(0.5 + level / 2) * se
    return auroc, float(max(0.0, auroc - half)), float(min(1.0, auroc + half))


def multilabel_metrics(
    y_true: np.ndarray, prob: np.ndarray, labels: Sequence[str], thresholds: Sequence[float]
) -> dict[str, float]:
    """Per-label AUROC, average precision and F1 of a multilabel task, and their macro averages.

    Each label is scored only on the rows where it is labelled. Macro AUROC and average precision skip labels
    where they are undefined (no labelled row, or one class among them), NaN if undefined for all; macro-F1
    counts a label with labelled rows but none positive or flagged as 0, as scikit-learn does, and skips only a
    label with no labelled row.

    Args:
        y_true: targets ``[N, L]`` of 0/1, NaN where a row is unlabelled for that label.
        prob: per-label probabilities ``[N, L]``.
        labels: label names, used in the per-label keys.
        thresholds: one decision threshold per label (positive when ``prob >= threshold``).

    Returns:
        ``macro_auroc``, ``macro_average_precision``, ``macro_f1``, ``n`` (rows), then per label
        ``auroc/<label>``, ``average_precision/<label>``, ``f1/<label>`` (NaN with no labelled row, or none
        positive or flagged) and
        ``n/<label>`` (labelled rows).

    Raises:
        ValueError: on an empty sample, shapes other than ``[N, L]``, targets other than 0/1/NaN,
            probabilities outside [0, 1] or ``len(thresholds) != L``.
    """
    from sklearn.metrics import average_precision_score, roc_auc_score  # heavy: loaded when first used

    y, p = as_multilabel_inputs(y_true, prob, labels)
    if len(thresholds) != len(labels):
        raise ValueError(f"expected one threshold per label ({len(labels)}), got {len(thresholds)}")
    per_label: dict[str, float] = {}
    columns: dict[str, list[float]] = {"auroc": [], "average_precision": [], "f1": []}
    for j, (label, threshold) in enumerate(zip(labels, thresholds, strict=True)):
        labelled = ~np.isnan(y[:, j])
        yj, pj = y[labelled, j].astype(np.int64), p[labelled, j]
        both_classes = 0 < yj.sum() < yj.size
        counts = _confusion(yj, pj >= threshold)[:3]
        values = {
            "auroc": float(roc_auc_score(yj, pj)) if both_classes else NAN,
            "average_precision": float(average_precision_score(yj, pj)) if both_classes else NAN,
            "f1": _f1(*counts) if yj.size else NAN,  # as macro-F1 counts it
        }
        for name, value in values.items():
            columns[name].append(value)
        per_label |= {f"auroc/{label}": values["auroc"], f"average_precision/{label}": values["average_precision"]}
        per_label[f"f1/{label}"] = _reported_f1(*counts)
        per_label[f"n/{label}"] = int(yj.size)
    metrics: dict[str, float] = {f"macro_{name}": _nanmean(values) for name, values in columns.items()}
    metrics["n"] = int(y.shape[0])
    metrics.update(per_label)
    return metrics


def _confusion(y: np.ndarray, decision: np.ndarray) -> tuple[int, int, int, int]:
    """Return ``(tp, fp, fn, tn)`` of 0/1 labels against boolean decisions."""
    truth = y.astype(bool)
    tp = int(np.sum(truth & decision))
    fp = int(np.sum(~truth & decision))
    fn = int(np.sum(truth & ~decision))
    return tp, fp, fn, int(y.size) - tp - fp - fn


def _f1(tp: int, fp: int, fn: int) -> float:
    """F1 from counts; 0 when there is no true and no predicted member."""
    denom = 2 * tp + fp + fn
    return 2 * tp / denom if denom else 0.0


def _reported_f1(tp: int, fp: int, fn: int) -> float:
    """F1 from counts as a figure of its own: NaN (undefined, nothing measures it) when there is no true and no
    predicted member, where ``_f1`` gives the 0 a macro-F1 counts."""
    return _f1(tp, fp, fn) if tp + fp + fn else NAN


def _nanmean(values: Sequence[float]) -> float:
    """Mean of the non-NaN values; NaN if there are none (without numpy's empty-slice warning)."""
    finite = [v for v in values if not np.isnan(v)]
    return float(np.mean(finite)) if finite else NAN
