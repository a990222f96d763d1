"""Binary, multiclass, multilabel and slice metrics against hand-computed values and scikit-learn."""

from __future__ import annotations

import math
import unicodedata
from functools import partial

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, average_precision_score, f1_score, roc_auc_score

from faim.calibration.thresholds import threshold_sweep
from faim.eval import binary_metrics, multiclass_metrics, multilabel_metrics, slice_metrics
from faim.eval.metrics import auroc_interval

Y = np.array([0, 0, 1, 1, 0, 1, 0, 1])
P = np.array([0.1, 0.4, 0.35, 0.8, 0.7, 0.9, 0.2, 0.6])


def test_binary_hand_computed() -> None:
    m = binary_metrics(Y, P, threshold=0.5)
    # decisions at 0.5: [0,0,0,1,1,1,0,1] -> tp=3, fp=1, fn=1, tn=3
    assert m["precision"] == pytest.approx(0.75)
    assert m["recall"] == pytest.approx(0.75)
    assert m["f1"] == pytest.approx(0.75)
    assert m["accuracy"] == pytest.approx(0.75)
    assert m["macro_f1"] == pytest.approx(0.75)
    assert m["brier"] == pytest.approx(np.mean((P - Y) ** 2))
    assert (m["n"], m["positives"], m["threshold"]) == (8, 4, 0.5)
    # positives ranked above negatives in 2 + 4 + 4 + 3 = 13 of 16 pairs
    assert m["auroc"] == pytest.approx(13 / 16)
    # recall >= 0.9 needs every positive: cutting at the lowest one (0.35) also admits negatives 0.4 and 0.7
    assert m["precision@recall=0.90"] == pytest.approx(4 / 6)
    # precision >= 0.9: only the cuts at 0.8 (2/2) and 0.9 (1/1) -> best recall 2/4
    assert m["recall@precision=0.90"] == pytest.approx(0.5)


def test_binary_matches_sklearn() -> None:
    rng = np.random.default_rng(0)
    prob = rng.uniform(size=500)
    y = (rng.uniform(size=500) < prob).astype(int)
    m = binary_metrics(y, prob, threshold=0.42, fixed_recall=(0.5, 0.8), fixed_precision=(0.7,))
    pred = prob >= 0.42
    assert m["auroc"] == pytest.approx(roc_auc_score(y, prob))
    assert m["average_precision"] == pytest.approx(average_precision_score(y, prob))
    assert m["f1"] == pytest.approx(f1_score(y, pred))
    assert m["macro_f1"] == pytest.approx(f1_score(y, pred, average="macro"))
    assert m["accuracy"] == pytest.approx(accuracy_score(y, pred))
    assert {"precision@recall=0.50", "precision@recall=0.80", "recall@precision=0.70"} <= m.keys()


def test_perfectly_separable_gives_auroc_one() -> None:
    y = np.array([0, 0, 0, 1, 1])
    m = binary_metrics(y, np.array([0.1, 0.2, 0.3, 0.7, 0.9]), threshold=0.5)
    assert m["auroc"] == 1.0 and m["average_precision"] == 1.0
    assert m["f1"] == 1.0 and m["precision@recall=0.90"] == 1.0 and m["recall@precision=0.90"] == 1.0


@pytest.mark.parametrize("label", [0, 1])
def test_binary_single_class_gives_nan_without_crash(label: int) -> None:
    m = binary_metrics(np.full(5, label), np.linspace(0.1, 0.9, 5), threshold=0.5)
    assert math.isnan(m["auroc"]) and math.isnan(m["average_precision"])
    assert m["n"] == 5 and m["positives"] == 5 * label
    assert not math.isnan(m["ece"]) and not math.isnan(m["accuracy"])


@pytest.mark.parametrize(
    ("y", "threshold", "undefined", "zero"),
    [
        ([0, 0, 0, 0], 0.5, {"precision", "recall", "f1"}, set()),  # no positive, none flagged
        ([0, 0, 0, 0], 0.35, {"recall"}, {"precision", "f1"}),  # no positive, one flagged: every flag wrong
        ([1, 1, 0, 0], 0.5, {"precision"}, {"recall", "f1"}),  # positives, none flagged
    ],
    ids=["no_positive_none_flagged", "no_positive_one_flagged", "none_flagged"],
)
def test_binary_precision_recall_and_f1_are_nan_where_nothing_measures_them_and_macro_f1_stays_defined(
    y: list[int], threshold: float, undefined: set[str], zero: set[str]
) -> None:
    prob = np.array([0.1, 0.2, 0.3, 0.4])
    m = binary_metrics(np.array(y), prob, threshold=threshold)
    assert {name for name in ("precision", "recall", "f1") if math.isnan(m[name])} == undefined
    assert {name for name in ("precision", "recall", "f1") if m[name] == 0.0} == zero
    macro = f1_score(y, prob >= threshold, average="macro", labels=[0, 1], zero_division=0)
    assert m["macro_f1"] == pytest.approx(macro) and not math.isnan(m["macro_f1"])


def test_binary_rejects_bad_inputs() -> None:
    with pytest.raises(ValueError, match="empty"):
        binary_metrics(np.array([]), np.array([]), threshold=0.5)
    with pytest.raises(ValueError, match="0 and 1"):
        binary_metrics(np.array([0, 2]), np.array([0.1, 0.2]), threshold=0.5)
    with pytest.raises(ValueError, match="probabilities"):
        binary_metrics(np.array([0, 1]), np.array([0.1, np.nan]), threshold=0.5)
    with pytest.raises(ValueError, match="shapes"):
        binary_metrics(np.array([0, 1]), np.array([0.1]), threshold=0.5)


def test_multiclass_matches_sklearn() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(300, 3))
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = rng.integers(0, 3, size=300)
    labels = ["none", "offensive", "hate"]
    m = multiclass_metrics(y, prob, labels)
    pred = prob.argmax(axis=1)
    assert m["accuracy"] == pytest.approx(accuracy_score(y, pred))
    assert m["macro_f1"] == pytest.approx(f1_score(y, pred, average="macro"))
    assert m["macro_auroc"] == pytest.approx(roc_auc_score(y, prob, multi_class="ovr"))
    per_class = f1_score(y, pred, average=None)
    assert [m[f"f1/{label}"] for label in labels] == pytest.approx(per_class)
    assert m["n"] == 300 and 0.0 <= m["ece"] <= 1.0


def test_multiclass_missing_class_gives_nan_auroc() -> None:
    prob = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1]])
    m = multiclass_metrics(np.array([0, 1, 0]), prob, ["a", "b", "c"])
    assert math.isnan(m["macro_auroc"])
    assert m["accuracy"] == 1.0 and math.isnan(m["f1/c"])  # no post is of c nor decided to be: nothing measures it
    assert m["macro_f1"] == pytest.approx(2 / 3)  # it counts as 0 inside macro-F1, as scikit-learn's over every class
    assert m["macro_f1"] == pytest.approx(f1_score([0, 1, 0], [0, 1, 0], labels=[0, 1, 2], average="macro"))


def test_multilabel_label_no_labelled_post_is_of_nor_flagged_has_nan_f1_counted_0_in_macro_f1() -> None:
    y = np.array([[1, 0], [0, 0], [1, 0]])
    prob = np.array([[0.9, 0.1], [0.1, 0.2], [0.8, 0.3]])
    m = multilabel_metrics(y, prob, ["a", "b"], thresholds=[0.5, 0.5])
    assert m["f1/a"] == 1.0 and math.isnan(m["f1/b"])
    assert m["macro_f1"] == 0.5


def test_multiclass_rejects_wrong_width() -> None:
    with pytest.raises(ValueError, match="one column per label"):
        multiclass_metrics(np.array([0, 1]), np.full((2, 2), 0.5), ["a", "b", "c"])


def test_multilabel_ignores_unlabelled_rows() -> None:
    nan = np.nan
    y = np.array([[1, 0], [0, nan], [1, 1], [0, nan], [nan, 0]])
    prob = np.array([[0.9, 0.2], [0.1, 0.9], [0.8, 0.7], [0.3, 0.9], [0.5, 0.6]])
    m = multilabel_metrics(y, prob, ["toxic", "threat"], thresholds=[0.5, 0.5])
    assert m["n/toxic"] == 4 and m["n/threat"] == 3 and m["n"] == 5
    assert m["auroc/toxic"] == 1.0
    assert m["auroc/threat"] == pytest.approx(roc_auc_score([0, 1, 0], [0.2, 0.7, 0.6]))
    assert m["f1/threat"] == pytest.approx(f1_score([0, 1, 0], [0, 1, 1]))
    assert m["macro_auroc"] == pytest.approx((m["auroc/toxic"] + m["auroc/threat"]) / 2)


def test_multilabel_macro_skips_undefined_labels() -> None:
    y = np.array([[1, 1], [0, 1], [np.nan, 1]])
    m = multilabel_metrics(y, np.full((3, 2), 0.6), ["a", "b"], thresholds=[0.5, 0.5])
    assert math.isnan(m["auroc/b"])
    assert m["macro_auroc"] == m["auroc/a"] == 0.5


def test_multilabel_all_unlabelled_label() -> None:
    y = np.array([[1, np.nan], [0, np.nan]])
    m = multilabel_metrics(y, np.full((2, 2), 0.5), ["a", "b"], thresholds=[0.5, 0.5])
    assert m["n/b"] == 0 and math.isnan(m["f1/b"]) and math.isnan(m["auroc/b"])


def test_multilabel_needs_one_threshold_per_label() -> None:
    with pytest.raises(ValueError, match="one threshold per label"):
        multilabel_metrics(np.zeros((2, 2)), np.zeros((2, 2)), ["a", "b"], thresholds=[0.5])


def test_slice_metrics_min_size_and_single_class() -> None:
    y = np.array([0, 1, 0, 1, 1, 1, 0])
    prob = np.array([0.1, 0.9, 0.2, 0.8, 0.7, 0.6, 0.3])
    slices = np.array(["en", "en", "en", "en", "es", "es", "fr"])
    result = slice_metrics(y, prob, slices, partial(binary_metrics, threshold=0.5), min_size=2)
    assert list(result) == ["en", "es", "fr"]
    assert result["en"]["n"] == 4 and result["en"]["auroc"] == 1.0
    assert result["es"]["n"] == 2 and math.isnan(result["es"]["auroc"])
    assert result["fr"] == {"n": 1}


def test_slice_metrics_multiclass_and_object_slices() -> None:
    prob = np.array([[0.7, 0.3], [0.4, 0.6], [0.9, 0.1], [0.2, 0.8]])
    result = slice_metrics(
        np.array([0, 1, 0, 1]),
        prob,
        np.array([None, "a", float("nan"), "None"], dtype=object),
        partial(multiclass_metrics, labels=["x", "y"]),
        min_size=1,
    )
    assert {name: metrics["n"] for name, metrics in result.items()} == {"(missing)": 2, "None": 1, "a": 1}


def test_slice_metrics_rejects_length_mismatch() -> None:
    with pytest.raises(ValueError, match="one value per row"):
        slice_metrics(np.array([0, 1]), np.array([0.2, 0.8]), np.array(["a"]), partial(binary_metrics, threshold=0.5))


def test_operating_points_finer_than_two_decimals_are_named_as_given_and_none_is_lost() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(2000) < 0.3).astype(int)
    prob = np.clip(rng.random(2000) * 0.6 + 0.4 * y, 0, 1)
    m = binary_metrics(y, prob, 0.5, fixed_recall=(0.9, 0.995, 0.999, 1.0), fixed_precision=(0.9, 0.904))
    sweep = threshold_sweep(y, prob)
    named = {"0.90": 0.9, "0.995": 0.995, "0.999": 0.999, "1.00": 1.0}
    assert {key: m[f"precision@recall={key}"] for key in named} == {
        key: sweep.precision_at_recall(value) for key, value in named.items()
    }
    assert m["recall@precision=0.904"] == sweep.recall_at_precision(0.904) and "recall@precision=0.90" in m


def test_auroc_interval_is_scikit_learns_auroc_with_delongs_spread() -> None:
    rng = np.random.default_rng(0)
    y = (rng.random(400) < 0.3).astype(int)
    scores = rng.normal(size=400) + 0.8 * y
    auroc, low, high = auroc_interval(y, scores)
    assert auroc == pytest.approx(roc_auc_score(y, scores))
    # the half-width is 1.96 standard errors; the bootstrap's spread of the AUROC agrees with DeLong's within 15 %
    resampled = [roc_auc_score(y[i], scores[i]) for i in (rng.integers(0, 400, 400) for _ in range(1000))]
    assert (high - low) / 2 / 1.96 == pytest.approx(np.std(resampled), rel=0.15)
    assert low < auroc < high and auroc_interval(y, scores, level=0.5)[1] > low  # a narrower level, a narrower one
    ties = auroc_interval(np.array([0, 0, 1, 1]), np.array([0.5, 0.5, 0.5, 0.5]))
    assert ties[0] == pytest.approx(0.5)  # ties count half, as scikit-learn counts them


def test_auroc_interval_gives_no_width_where_delongs_variance_is_nil() -> None:
    # a complete parting of the classes, either way, and scores all tied leave no spread to read an interval from
    for scores, auroc in (([0.1, 0.2, 0.8, 0.9], 1.0), ([0.9, 0.8, 0.2, 0.1], 0.0), ([0.5] * 4, 0.5)):
        told = auroc_interval(np.array([0, 0, 1, 1]), np.array(scores))
        assert told[0] == auroc and np.isnan(told[1:]).all()


@pytest.mark.parametrize(
    ("y", "level", "message"),
    [([0, 0, 0, 1], 0.95, "two posts of each class"), ([0, 1, 0, 1], 1.0, "level"), ([0, 2, 0, 1], 0.95, "0/1")],
)
def test_auroc_interval_refuses_what_it_cannot_tell(y: list[int], level: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        auroc_interval(np.array(y), np.array([0.1, 0.2, 0.3, 0.4]), level)


def test_values_that_stand_for_nothing_are_one_slice_apart_from_the_text_none() -> None:
    values = np.array([np.float32("nan"), "", None, "None", "None", float("nan")], dtype=object)
    y, prob = np.array([0, 1, 0, 1, 0, 1]), np.array([0.2, 0.8, 0.4, 0.6, 0.3, 0.7])
    result = slice_metrics(y, prob, values, partial(binary_metrics, threshold=0.5), min_size=1)
    assert {name: metrics["n"] for name, metrics in result.items()} == {"(missing)": 4, "None": 2}


def test_a_value_reading_as_the_missing_slice_is_a_slice_of_its_own_shown_quoted() -> None:
    values = np.array(["(missing)", None, "(missing)", float("nan"), '"quoted"', ""], dtype=object)
    y, prob = np.array([0, 1, 0, 1, 0, 1]), np.array([0.2, 0.8, 0.4, 0.6, 0.3, 0.7])
    result = slice_metrics(y, prob, values, partial(binary_metrics, threshold=0.5), min_size=1)
    assert {name: metrics["n"] for name, metrics in result.items()} == {
        '"(missing)"': 2,
        '"\\"quoted\\""': 1,
        "(missing)": 3,
    }


def test_a_value_written_composed_or_decomposed_is_one_slice_shown_composed() -> None:
    composed = "Côte d'Ivoire"
    values = np.array([composed, unicodedata.normalize("NFD", composed)] * 2, dtype=object)
    y, prob = np.array([0, 1, 0, 1]), np.array([0.2, 0.8, 0.4, 0.6])
    result = slice_metrics(y, prob, values, partial(binary_metrics, threshold=0.5), min_size=1)
    assert {name: metrics["n"] for name, metrics in result.items()} == {composed: 4}


def test_a_value_written_with_spaces_around_it_is_one_slice_with_it_and_spaces_alone_are_missing() -> None:
    values = np.array(["sport", "sport ", " sport", "\u00a0sport\t", "  ", None], dtype=object)
    y, prob = np.array([0, 1, 0, 1, 0, 1]), np.array([0.2, 0.8, 0.4, 0.6, 0.3, 0.7])
    result = slice_metrics(y, prob, values, partial(binary_metrics, threshold=0.5), min_size=1)
    assert {name: metrics["n"] for name, metrics in result.items()} == {"sport": 4, "(missing)": 2}
