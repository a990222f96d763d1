"""Batch scoring of content dumps: streaming, parallel, resumable; embedded engine or Ray Data."""

from faim.scoring.engine import ScoreSummary, score_dump
from faim.scoring.optimize import SCORE_TOLERANCE, ScoringOptions

__all__ = ["SCORE_TOLERANCE", "ScoreSummary", "ScoringOptions", "score_dump"]
