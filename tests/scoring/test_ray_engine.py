"""The Ray Data engine writes the same rows and scores as the embedded engine."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from faim.scoring import ScoringOptions, score_dump

pytest.importorskip("ray.data", reason="Ray Data is an optional extra (faim-sdk[ray])")


@pytest.mark.slow
def test_ray_engine_matches_embedded_engine(tiny_model_dir: Path, demo_data: dict[str, Path], tmp_path: Path) -> None:
    exact = ScoringOptions.exact()
    score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "here", workers=1, options=exact, progress=False)
    summary = score_dump(tiny_model_dir, demo_data["validation"], tmp_path / "ray", workers=1, options=exact,
                         engine="ray", progress=False)  # fmt: skip
    here = {r["id"]: r["harmful"] for r in pq.read_table(tmp_path / "here").to_pylist()}
    ray_rows = {r["id"]: r["harmful"] for r in pq.read_table(tmp_path / "ray").to_pylist()}
    assert summary.rows == len(here) == len(ray_rows) == 160
    assert max(abs(here[k] - ray_rows[k]) for k in here) < 1e-6
