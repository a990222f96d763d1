"""Same posts, same scores: `faim score` (exact), `Detector.score` and the optimised path within tolerance."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

import faim
from faim.data.sources import read_posts
from faim.scoring.engine import score_dump
from faim.scoring.optimize import SCORE_TOLERANCE
from faim.scoring.options import ScoringOptions


def scores_by_id(out: Path) -> dict[str, float]:
    return {row["id"]: row["harmful"] for row in pq.read_table(out, columns=["id", "harmful"]).to_pylist()}


@pytest.fixture(scope="module")
def expected(tiny_model_dir: Path, demo_data: dict[str, Path]) -> dict[str, float]:
    detector = faim.load(tiny_model_dir)
    return {row["id"]: row["harmful"] for row in detector.score(read_posts(demo_data["validation"]))}


def test_exact_pool_scores_equal_detector_score(tiny_model_dir, demo_data, expected, tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = score_dump(
        tiny_model_dir, demo_data["validation"], out, workers=2, options=ScoringOptions.exact(), progress=False
    )
    assert summary.workers == 2  # a spawned worker and this process each scored shards
    got = scores_by_id(out)
    assert got.keys() == expected.keys()
    assert max(abs(got[k] - expected[k]) for k in got) < 1e-6


def test_optimised_scores_stay_within_tolerance(tiny_model_dir, demo_data, expected, tmp_path: Path) -> None:
    out = tmp_path / "out"
    score_dump(tiny_model_dir, demo_data["validation"], out, workers=1, progress=False)
    got = scores_by_id(out)
    worst = max(abs(got[k] - expected[k]) for k in got)
    assert 0 < worst < SCORE_TOLERANCE  # approximations change scores, but only a little


def test_embeddings_are_written_with_scores(tiny_model_dir, demo_data, tmp_path: Path) -> None:
    out = tmp_path / "out"
    score_dump(tiny_model_dir, demo_data["validation"], out, workers=1, embeddings=True, progress=False)
    table = pq.read_table(out)
    assert len(table.column("embedding")[0].as_py()) == 32 and "harmful.decision" in table.column_names


def test_a_stack_of_encoders_scores_under_bf16_within_tolerance(demo_data, tmp_path: Path) -> None:
    import torch

    from tests.conftest import tiny_recipe

    torch.manual_seed(0)
    recipe = tiny_recipe(demo_data, tmp_path / "run")
    recipe["model"]["encoders"]["text"] = [{"type": "tiny_text", "dim": 16}, {"type": "tiny_text", "dim": 8}]
    faim.build(recipe).save(str(tmp_path / "model"))
    detector = faim.load(tmp_path / "model")
    expected = {row["id"]: row["harmful"] for row in detector.score(read_posts(demo_data["validation"]))}
    out = tmp_path / "out"  # bf16 autocast wraps the stack, whose inputs are a list of its members' inputs
    summary = score_dump(
        tmp_path / "model", demo_data["validation"], out, workers=1, options=ScoringOptions(bf16=True), progress=False
    )
    assert sum(summary.errors.values()) == 0
    got = scores_by_id(out)
    assert got.keys() == expected.keys() and max(abs(got[k] - expected[k]) for k in got) < SCORE_TOLERANCE
