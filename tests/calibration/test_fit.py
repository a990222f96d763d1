"""Fitting a calibration on labelled logits: with ``eval.threshold_balance: sources``, the threshold of posts from
several sources is chosen with each source's posts of each class counting as much; a precision target the posts
cannot reach gives their most precise cut, with a warning naming the task."""

from __future__ import annotations

import warnings
from unittest import mock

import numpy as np
import pytest

from faim.calibration import prior
from faim.calibration.fit import Calibration, TargetUnreachableWarning, fit_calibration, source_class_weights
from faim.calibration.thresholds import choose_threshold, threshold_sweep
from faim.data.targets import TaskSpec
from faim.recipe.sections import EvalConfig

TASK = TaskSpec("hate", "binary", ("no", "yes"))


def fitted(config: EvalConfig, logits: np.ndarray, y: np.ndarray, sources: list[str] | None) -> Calibration:
    calibration = Calibration.identity([TASK])
    fit_calibration([TASK], {"hate": logits}, {"hate": y.astype(np.float32)}, config, calibration, sources)
    return calibration


def test_the_threshold_counts_each_source_and_class_alike_only_when_asked_and_several() -> None:
    rng = np.random.default_rng(0)
    y = np.concatenate([rng.random(900) < 0.45, rng.random(300) < 0.06]).astype(int)  # two shares of positives
    logits = rng.normal(1.5 * y - 0.5, 1.0)
    sources = ["0-tweeteval"] * 900 + ["1-davidson"] * 300
    plain = EvalConfig(threshold_objective="macro_f1", temperature=False)
    balanced = EvalConfig(threshold_objective="macro_f1", temperature=False, threshold_balance="sources")

    prob = 1 / (1 + np.exp(-logits))
    expected = choose_threshold(y, prob, "macro_f1", weights=source_class_weights(sources, y))
    assert fitted(balanced, logits, y, sources).thresholds["hate"] == expected
    unweighted = choose_threshold(y, prob, "macro_f1")
    assert expected != unweighted
    assert fitted(plain, logits, y, sources).thresholds["hate"] == unweighted
    assert fitted(balanced, logits, y, ["one"] * 1200).thresholds["hate"] == unweighted
    assert fitted(balanced, logits, y, None).thresholds["hate"] == unweighted


def test_labels_of_one_class_leave_a_binary_tasks_calibration_as_it_was() -> None:
    def start() -> Calibration:
        return Calibration({"hate": 0.7}, {"hate": 2.0}, {"hate": -1.5}, {"hate": 0.1})

    calibration, logits = start(), np.random.default_rng(0).normal(size=300)
    negatives = {"hate": np.zeros(300, np.float32)}
    fit_calibration([TASK], {"hate": logits}, negatives, EvalConfig(logit_shift=True), calibration)
    assert calibration == start()


def test_a_precision_no_cut_reaches_gives_the_most_precise_cut_and_a_warning_naming_the_task() -> None:
    rng = np.random.default_rng(1)
    y = np.append((rng.random(399) < 0.3).astype(int), 0)
    logits = np.append(rng.normal(0.8 * y[:-1], 1.0), 10.0)  # the top score a negative: no cut is 0.99 precise
    config = EvalConfig(threshold_objective="recall@precision", threshold_target=0.99, temperature=False)
    with pytest.warns(TargetUnreachableWarning, match=r"task 'hate': no threshold reaches precision 0.99 on these 400"):
        calibration = fitted(config, logits, y, None)
    sweep = threshold_sweep(y, 1 / (1 + np.exp(-logits)))
    chosen = np.flatnonzero(sweep.thresholds == calibration.thresholds["hate"])
    assert chosen.size == 1
    assert sweep.precision[chosen] == pytest.approx(sweep.precision.max())
    reachable = EvalConfig(threshold_objective="recall@precision", threshold_target=0.5, temperature=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fitted(reachable, logits, y, None)


def test_adapting_to_a_prior_moves_the_calibration_and_the_others_given_to_the_share_em_estimates() -> None:
    task = TaskSpec("hate", "binary", ("no", "yes"))
    rng = np.random.default_rng(0)
    # classes N(±1, 2): the logit is the log-likelihood ratio, calibrated under a prior of a half
    logits = np.concatenate([rng.normal(1.0, np.sqrt(2), 300), rng.normal(-1.0, np.sqrt(2), 700)])
    calibration = Calibration({"hate": 0.5}, {"hate": 1.0}, {"hate": 0.0}, {"hate": 0.5})
    pooled = Calibration({"hate": 0.4}, {"hate": 2.0}, {"hate": 0.25}, {"hate": 0.5})
    old, new, (low, high) = calibration.adapt_to_prior(task, logits, pooled)
    assert old == 0.5 and abs(new - 0.3) < 0.05 and low < new < high
    assert calibration.probabilities(task, logits).mean() == pytest.approx(new, abs=1e-6)  # EM's fixed point
    shift = np.log(new / (1 - new))  # from a prior of a half
    assert calibration.logit_shifts["hate"] == pytest.approx(shift) and pooled.logit_shifts["hate"] == pytest.approx(
        0.25 + shift
    )
    assert calibration.priors == pooled.priors == {"hate": new}
    with pytest.raises(KeyError):
        Calibration.identity([task]).adapt_to_prior(task, logits)


@pytest.mark.parametrize("logits", [np.linspace(-3.0, 3.0, 20), np.full(20, -4.0)])  # peaks inside, and at 0
def test_adapting_to_a_prior_tells_once_whether_the_likelihood_peaks_at_an_edge(
    logits: np.ndarray, monkeypatch: pytest.MonkeyPatch
) -> None:
    edge = mock.Mock(wraps=prior.likelihood_edge)
    monkeypatch.setattr(prior, "likelihood_edge", edge)
    calibration = Calibration({"hate": 0.5}, {"hate": 1.0}, {"hate": 0.0}, {"hate": 0.3})
    _, new, (low, high) = calibration.adapt_to_prior(TASK, logits)
    assert edge.call_count == 1 and low <= new <= high
