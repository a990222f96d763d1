"""The ``train:`` and ``eval:`` sections' defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import tiny_recipe

from faim.recipe import as_recipe
from faim.recipe.validate import check_monitor_mode
from faim.registry import rebuilding_saved


@pytest.mark.parametrize(
    ("monitor", "mode"),
    [("val/loss", "min"), ("train/loss", "min"), ("val/harmful/auroc", "max"), ("val/harmful/macro_f1", "max")],
)
@pytest.mark.parametrize("written", ["left out", "null"])
def test_a_mode_not_given_keeps_the_best_epoch_of_the_monitor(
    tmp_path: Path, monitor: str, mode: str, written: str
) -> None:
    """Monitoring AUROC without a mode is not refused for keeping its lowest epoch: it keeps the highest."""
    recipe = tiny_recipe({"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}, tmp_path, monitor=monitor)
    if written == "null":
        recipe["train"]["mode"] = None
    resolved = as_recipe(recipe)
    assert resolved.train.mode == mode and resolved.to_dict()["train"]["mode"] == mode
    check_monitor_mode("r.yaml", resolved.train)


def test_a_mode_given_is_kept_whatever_the_monitor(tmp_path: Path) -> None:
    """A saved model's recipe may hold one keeping the worst epoch: it is read as written (a new one is refused)."""
    data = {"train": tmp_path / "t.jsonl", "validation": tmp_path / "v.jsonl"}
    with rebuilding_saved("saved"):
        assert as_recipe(tiny_recipe(data, tmp_path, monitor="val/harmful/auroc", mode="min")).train.mode == "min"
