"""Calibration: temperature and Platt scaling of logits (``scaling``), decision thresholds (``thresholds``), checks
of label and probability arrays (``checks``), and a detector's per-task calibration fitted on labelled posts
(``fit``). Measuring calibration error is evaluation's (``faim.eval.calibration``)."""
