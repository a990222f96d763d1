"""End to end on generated posts whose label needs caption and picture together."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tiny_recipe

from faim.api import train_recipe as train


@pytest.mark.slow
def test_fused_model_beats_both_unimodal_ablations(demo_data: dict[str, Path], tmp_path: Path) -> None:
    recipe = tiny_recipe(
        demo_data, tmp_path / "run", max_epochs=12, patience=12, monitor="val/harmful/auroc", mode="max"
    )
    result = train(recipe)
    report = result.report["tasks"]["harmful"]
    fused = report["metrics"]["auroc"]
    without_text = report["ablations"]["without_text"]["auroc"]
    without_image = report["ablations"]["without_image"]["auroc"]
    assert fused > 0.9, report["metrics"]
    assert fused > without_text + 0.1
    assert fused > without_image + 0.1
    assert (result.model_dir / "faim.json").is_file()
    assert (tmp_path / "run" / "eval" / "metrics.md").is_file()
