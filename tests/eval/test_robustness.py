"""Robustness reports: the drop table, and perturbed posts run through ``evaluate``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch
from conftest import tiny_recipe

import faim
from faim.data.sources import read_posts
from faim.eval.evaluate import evaluate
from faim.eval.robustness import robustness_table
from faim.perturb import perturb_posts


def test_robustness_table_drops() -> None:
    base = {"auroc": 0.9, "macro_f1": 0.8, "n": 100}
    perturbed = {"text.leetspeak": {"auroc": 0.7, "macro_f1": 0.85}, "image.jpeg": {"auroc": 0.88}}
    table = robustness_table(base, perturbed)
    expected = {"auroc": 0.7, "auroc_drop": 0.2, "macro_f1": 0.85, "macro_f1_drop": -0.05}
    assert table["text.leetspeak"] == pytest.approx(expected)
    assert table["image.jpeg"]["auroc_drop"] == pytest.approx(0.02)
    assert math.isnan(table["image.jpeg"]["macro_f1"]) and math.isnan(table["image.jpeg"]["macro_f1_drop"])
    assert robustness_table(base, {"image.crop": {"n": 100}}, metrics=("n",)) == {"image.crop": {"n": 100, "n_drop": 0}}


@pytest.mark.slow
def test_perturbed_posts_run_through_evaluate(demo_data: dict[str, Path], tmp_path: Path) -> None:
    torch.manual_seed(0)
    detector = faim.build(tiny_recipe(demo_data, tmp_path / "run"))
    posts = list(read_posts(demo_data["validation"], columns={"labels": {"harmful": "label"}}))[:40]
    base = evaluate(detector, posts, tmp_path / "clean", "dev")["tasks"]["harmful"]["metrics"]
    perturbed = {
        name: evaluate(detector, perturb_posts(posts, name), tmp_path / name, "dev")["tasks"]["harmful"]["metrics"]
        for name in ("text.leetspeak", "image.jpeg")
    }
    table = robustness_table(base, perturbed)
    assert set(table) == {"text.leetspeak", "image.jpeg"}
    assert all(math.isfinite(value) for row in table.values() for value in row.values())
