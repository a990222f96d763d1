"""Evaluation of a detector, with and without pooling across posts that share a picture; ECE ranges; perturbed
reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import calibrated, pooling_detector

from faim.eval.calibration import ece_if_calibrated
from faim.eval.evaluate import Evaluated, evaluate, probabilities
from faim.eval.robustness import perturbed_reports
from faim.inference import predict
from faim.perturb import PERTURBATIONS
from faim.training.loaders import make_loader


def test_pooling_fits_a_calibration_of_its_own_and_reports_per_post_figures(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    assert detector.pooled is not None
    assert detector.pooled.temperatures["harmful"] != detector.temperatures["harmful"]
    report = evaluate(detector, posts, tmp_path / "eval", "shared pictures")["tasks"]["harmful"]
    assert set(report["ablations"]) == {"without_text", "without_image", "without_comments", "without_pooling"}
    assert report["ablations"]["without_pooling"]["threshold"] == pytest.approx(detector.thresholds["harmful"])
    assert report["metrics"]["threshold"] == pytest.approx(detector.pooled.thresholds["harmful"])
    assert report["metrics"]["auroc"] != report["ablations"]["without_pooling"]["auroc"]


def test_evaluation_reports_the_ece_range_of_a_calibrated_model(demo_data, tmp_path: Path) -> None:
    detector, posts = calibrated(demo_data, tmp_path, logit_shift=False)
    report = evaluate(detector, posts, tmp_path / "eval", "validation")["tasks"]["harmful"]
    for metrics in [report["metrics"], *report["ablations"].values()]:
        assert 0.0 <= metrics["ece_if_calibrated_low"] < metrics["ece_if_calibrated_high"] <= 1.0


def test_ece_ranges_of_a_pooled_evaluation_draw_posts_showing_one_picture_together(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    report = evaluate(detector, posts, tmp_path / "eval", "shared pictures")["tasks"]["harmful"]
    loader = make_loader(detector.model, detector.collator(with_targets=True), posts, 32, shuffle=False)
    per_post = predict(detector.model, loader, link_kind="image")
    main = Evaluated.pooled(detector, per_post, detector.pooled)
    pooled_prob = probabilities(main.calibration, main.predictions, detector.tasks[0])
    per_post_prob = probabilities(detector.calibration, per_post, detector.tasks[0])

    def reported(metrics: dict) -> tuple[float, float]:
        return metrics["ece_if_calibrated_low"], metrics["ece_if_calibrated_high"]

    assert reported(report["metrics"]) == pytest.approx(ece_if_calibrated(pooled_prob, main.groups))
    assert reported(report["metrics"]) != pytest.approx(ece_if_calibrated(pooled_prob))
    without = reported(report["ablations"]["without_pooling"])
    assert without == pytest.approx(ece_if_calibrated(per_post_prob, main.groups))


def test_perturbed_reports_cover_every_modality_read_and_skip_the_modality_ablations(demo_data, tmp_path: Path) -> None:
    detector, posts = pooling_detector(demo_data, tmp_path)
    reports = perturbed_reports(detector, posts, tmp_path / "eval", "shared pictures")
    assert list(reports) == list(PERTURBATIONS)  # the model reads text and pictures
    for name, report in reports.items():
        assert set(report["tasks"]["harmful"]["ablations"]) == {"without_pooling"}
        saved = json.loads((tmp_path / "eval" / "robustness" / name / "metrics.json").read_text(encoding="utf-8"))
        assert saved["tasks"]["harmful"]["metrics"] == pytest.approx(report["tasks"]["harmful"]["metrics"])
    clean = evaluate(detector, posts, tmp_path / "clean", "shared pictures")["tasks"]["harmful"]["metrics"]
    assert reports["text.leetspeak"]["tasks"]["harmful"]["metrics"]["auroc"] != clean["auroc"]
