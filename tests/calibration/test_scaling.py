"""Temperature and Platt scaling on synthetic samples with known calibration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import overconfident_binary
from scipy.special import expit, softmax
from sklearn.metrics import roc_auc_score

from faim.calibration.scaling import apply_temperature, fit_platt, fit_scaling, fit_temperature, temperature_edge
from faim.eval import expected_calibration_error


def test_binary_temperature_reduces_ece_and_keeps_auroc() -> None:
    logits, y = overconfident_binary()
    temperature = fit_temperature(logits, y)
    assert temperature == pytest.approx(4.0, rel=0.15)
    before, after = expit(logits), apply_temperature(logits, temperature)
    assert expected_calibration_error(after, y) < 0.03 < expected_calibration_error(before, y)
    assert roc_auc_score(y, after) == pytest.approx(roc_auc_score(y, before), abs=1e-12)


def test_platt_undoes_a_prior_shift_that_a_temperature_cannot() -> None:
    # labels from sigmoid(z); the model saw a positive rate far higher (its logits are 3z + 2)
    logits, y = overconfident_binary(scale=1.0)
    shifted = 3.0 * logits + 2.0
    temperature, shift = fit_platt(shifted, y)
    assert temperature == pytest.approx(3.0, rel=0.15) and shift == pytest.approx(-2.0 / 3.0, abs=0.1)
    platt = apply_temperature(shifted, temperature, shift=shift)
    tempered = apply_temperature(shifted, fit_temperature(shifted, y))
    assert expected_calibration_error(platt, y) < 0.03 < expected_calibration_error(tempered, y)
    assert roc_auc_score(y, platt) == pytest.approx(roc_auc_score(y, shifted), abs=1e-12)


def test_platt_and_shift_are_binary_only() -> None:
    with pytest.raises(ValueError, match=r"binary scores \[N\] only"):
        fit_platt(np.zeros((4, 3)), np.array([0, 1, 2, 0]))
    with pytest.raises(ValueError, match="binary scores"):
        apply_temperature(np.zeros((4, 3)), 1.0, shift=0.5)


def test_scaling_shifts_binary_logits_of_both_classes_only_when_asked() -> None:
    logits, y = overconfident_binary(scale=1.0)
    shifted = 3.0 * logits + 2.0
    assert fit_scaling(shifted, y, logit_shift=True) == fit_platt(shifted, y)
    assert fit_scaling(shifted, y) == (fit_temperature(shifted, y), 0.0)
    one_class = np.ones_like(y)  # a shift fitted on positives alone would grow without bound
    assert fit_scaling(shifted, one_class, logit_shift=True) == (fit_temperature(shifted, one_class), 0.0)
    multiclass = np.random.default_rng(0).normal(size=(50, 3))
    labels = np.arange(50) % 3
    assert fit_scaling(multiclass, labels, logit_shift=True) == (fit_temperature(multiclass, labels), 0.0)
    assert fit_scaling(expit(shifted), y, logit_shift=True, from_probs=True) == pytest.approx(
        fit_platt(shifted, y), rel=1e-3
    )


def test_a_shift_level_keeps_a_shift_the_labels_show_and_drops_one_they_do_not() -> None:
    kept, dropped = 0, 0
    for seed in range(40):
        logits, y = overconfident_binary(n=200, seed=seed)  # labels from sigmoid(logits / 4): no shift to find
        dropped += fit_scaling(logits, y, logit_shift=True, shift_level=0.05)[1] == 0.0
        shifted = logits + 4.0  # the same labels, the model's share of positives far higher
        temperature, shift = fit_scaling(shifted, y, logit_shift=True, shift_level=0.05)
        kept += (temperature, shift) == fit_platt(shifted, y)
    assert kept == 40 and dropped >= 34  # a 5 % test keeps a shift that is not there on about 2 draws in 40
    logits, y = overconfident_binary(n=200)
    assert fit_scaling(logits, y, logit_shift=True, shift_level=0.05) == (fit_temperature(logits, y), 0.0)
    with pytest.raises(ValueError, match=r"shift_level must be a significance level in \(0, 1\), got 1.5"):
        fit_scaling(logits, y, logit_shift=True, shift_level=1.5)


def test_binary_temperature_from_probabilities() -> None:
    logits, y = overconfident_binary(seed=1)
    temperature = fit_temperature(expit(logits), y, from_probs=True)
    assert temperature == pytest.approx(fit_temperature(logits, y), rel=1e-3)
    calibrated = apply_temperature(expit(logits), temperature, from_probs=True)
    assert calibrated == pytest.approx(apply_temperature(logits, temperature), abs=1e-6)


def test_multiclass_temperature_reduces_ece_and_keeps_predictions() -> None:
    rng = np.random.default_rng(2)
    true_logits = rng.normal(0.0, 1.5, size=(4000, 4))
    y = np.array([rng.choice(4, p=row) for row in softmax(true_logits, axis=1)])
    logits = 3.0 * true_logits
    temperature = fit_temperature(logits, y)
    assert temperature == pytest.approx(3.0, rel=0.15)
    before, after = softmax(logits, axis=1), apply_temperature(logits, temperature)

    def ece(prob: np.ndarray) -> float:
        return expected_calibration_error(prob.max(axis=1), prob.argmax(axis=1) == y)

    assert ece(after) < ece(before) / 2
    assert (after.argmax(axis=1) == before.argmax(axis=1)).all()


def test_temperature_errors() -> None:
    with pytest.raises(ValueError, match="positive"):
        apply_temperature(np.zeros(3), 0.0)
    with pytest.raises(ValueError, match="bounds"):
        fit_temperature(np.zeros(3), np.array([0, 1, 0]), bounds=(2.0, 1.0))
    with pytest.raises(ValueError, match="class indices"):
        fit_temperature(np.zeros((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="finite"):
        fit_temperature(np.array([0.0, np.inf]), np.array([0, 1]))


def test_a_temperature_at_the_lower_edge_is_not_said_to_come_of_perfectly_separated_labels_alone() -> None:
    # a head that learnt little gives logits a few hundredths apart that still rank the posts: the fit wants a
    # temperature below the range's, and faim calibrate said the scores separated the labels perfectly
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    logits = -0.45 + 0.02 * (y + rng.normal(size=400))
    assert 0.6 < roc_auc_score(y, logits) < 0.95
    temperature, shift = fit_scaling(logits, y, logit_shift=True)
    assert temperature == pytest.approx(0.05)
    assert temperature_edge(temperature) == (
        "at the lower edge of the range 0.05–20 the fit searches: the model's scores separate these labels perfectly "
        "(too few to fit on), or lie so close together that this temperature spreads them too little (a head that "
        "learnt little)"
    )
