"""Evaluation: metrics, thresholds, calibration, plots and reports — pure functions over numpy arrays."""

from faim.eval.calibration import (
    ReliabilityBins,
    apply_temperature,
    consistency_bars,
    ece_if_calibrated,
    expected_calibration_error,
    fit_platt,
    fit_scaling,
    fit_temperature,
    reliability_bins,
)
from faim.eval.metrics import binary_metrics, multiclass_metrics, multilabel_metrics
from faim.eval.plots import plot_binary, plot_multiclass
from faim.eval.report import Results, TaskResult, format_table, write_report
from faim.eval.slices import slice_metrics
from faim.eval.thresholds import (
    ThresholdSweep,
    choose_threshold,
    precision_at_recall,
    recall_at_precision,
    threshold_sweep,
)

__all__ = [
    "ReliabilityBins",
    "Results",
    "TaskResult",
    "ThresholdSweep",
    "apply_temperature",
    "binary_metrics",
    "choose_threshold",
    "consistency_bars",
    "ece_if_calibrated",
    "expected_calibration_error",
    "fit_platt",
    "fit_scaling",
    "fit_temperature",
    "format_table",
    "multiclass_metrics",
    "multilabel_metrics",
    "plot_binary",
    "plot_multiclass",
    "precision_at_recall",
    "recall_at_precision",
    "reliability_bins",
    "slice_metrics",
    "threshold_sweep",
    "write_report",
]
