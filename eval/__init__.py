"""Evaluation: metrics, reports and plots."""
