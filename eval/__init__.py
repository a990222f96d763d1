"""Evaluation: metrics, calibration error, plots and reports — pure functions over numpy arrays — and the
evaluation of detectors (``faim.eval.evaluate``); the benchmark harness (``faim.eval.benchmark``) sits on top.

Fitting a calibration and choosing thresholds is the core's (``faim.calibration``).
"""

from faim.eval.calibration import (
    ReliabilityBins,
    consistency_bars,
    ece_if_calibrated,
    expected_calibration_error,
    reliability_bins,
)
from faim.eval.metrics import binary_metrics, multiclass_metrics, multilabel_metrics
from faim.eval.plots import plot_binary, plot_multiclass
from faim.eval.report import Results, TaskResult, format_table, write_report
from faim.eval.slices import slice_metrics

__all__ = [
    "ReliabilityBins",
    "Results",
    "TaskResult",
    "binary_metrics",
    "consistency_bars",
    "ece_if_calibrated",
    "expected_calibration_error",
    "format_table",
    "multiclass_metrics",
    "multilabel_metrics",
    "plot_binary",
    "plot_multiclass",
    "reliability_bins",
    "slice_metrics",
    "write_report",
]
