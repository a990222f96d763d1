"""The recipe trained without each group in turn and measured on it, on the generated demo data (two topics)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from faim.data.targets import TaskSpec
from faim.eval.trained_holdout import HeldOut, figures, main, trained_holdout
from faim.recipe import as_recipe
from tests.conftest import tiny_recipe

TASK = TaskSpec("harmful", "binary", ["benign", "harmful"])


def quiet(items, **_):
    return items


def one_epoch(demo_data: dict[str, Path], root: Path) -> dict:
    recipe = tiny_recipe(demo_data, root / "run", max_epochs=1)
    recipe["eval"]["ablations"] = False
    return recipe


def test_each_group_is_measured_by_a_model_that_never_saw_it(demo_data, tmp_path):
    torch.manual_seed(0)
    recipe = as_recipe(one_epoch(demo_data, tmp_path))
    logged: list[str] = []
    result = trained_holdout(recipe, TASK, "topic", tmp_path / "holdout", log=logged.append, progress=quiet)
    assert sorted(result.per_group) == ["group", "weather"]
    assert result.overall["n"] == 560 == sum(m["n"] for m in result.per_group.values())
    assert result.overall["groups"] == 2
    for name, measured in result.per_group.items():
        run = tmp_path / "holdout" / name
        data = yaml.safe_load((run / "model" / "recipe.yaml").read_text(encoding="utf-8"))["data"]
        assert data["type"] == "without" and data["field"] == "topic" and data["values"] == [name]
        assert data["source"] == recipe.data_section
        assert not (run / "checkpoints").exists()  # removed once the model is saved
        assert 0 <= measured["accuracy"] <= 1 and np.isfinite(measured["ece"])
    weighted = sum(m["accuracy"] * m["n"] for m in result.per_group.values()) / result.overall["n"]
    assert result.overall["accuracy"] == pytest.approx(weighted)
    assert any("without topic 'group'" in line for line in logged)
    trained_at = json.loads((tmp_path / "holdout/group/train_record.json").read_text())["trained_at"]
    again = trained_holdout(recipe, TASK, "topic", tmp_path / "holdout", reuse=True, log=logged.append, progress=quiet)
    assert any(line.strip().startswith("reusing") for line in logged)
    assert json.loads((tmp_path / "holdout/group/train_record.json").read_text())["trained_at"] == (trained_at)
    assert again.overall == pytest.approx(result.overall, nan_ok=True)


def test_figures_read_each_post_by_its_own_models_decision():
    # two groups scored by two models: the same probabilities, but different thresholds
    first = HeldOut(np.array([1, 0]), np.array([0.6, 0.4]), np.array([1, 0]))
    second = HeldOut(np.array([1, 0]), np.array([0.6, 0.4]), np.array([0, 0]))
    together = figures(TASK, [first, second], bins=10)
    assert together["accuracy"] == 0.75 and together["n"] == 4
    assert together["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 2)
    assert together["auroc"] == 1.0
    assert together["ece"] == pytest.approx(0.4)
    one_class = figures(TASK, [HeldOut(np.array([1, 1]), np.array([0.8, 0.8]), np.array([1, 1]))], 10)
    assert np.isnan(one_class["auroc"]) and one_class["accuracy"] == 1.0
    three = TaskSpec("stance", "multiclass", ["a", "b", "c"])
    prob = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.5, 0.1, 0.4]])
    multiclass = figures(three, [HeldOut(np.array([0, 1, 2]), prob, prob.argmax(axis=1))], bins=10)
    assert multiclass["accuracy"] == pytest.approx(2 / 3) and multiclass["auroc"] == 1.0
    assert multiclass["macro_f1"] == pytest.approx((2 / 3 + 1 + 0) / 3)


def test_leaving_out_the_only_validation_group_is_named(tmp_path):
    def write(name: str, topics: list[str]) -> str:
        rows = [{"id": f"{name}{i}", "text": f"post {i}", "label": i % 2, "topic": t} for i, t in enumerate(topics)]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return str(path)

    recipe = {
        "data": {
            "type": "jsonl",
            "train": write("train", ["a", "b"] * 4),
            "validation": write("val", ["c"] * 4),
            "columns": {"labels": {"harmful": "label"}, "meta": ["topic"]},
        },
        "model": {
            "encoders": {"text": {"type": "tiny_text", "dim": 8}},
            "fusion": {"type": "concat"},
            "heads": {"harmful": {"type": "binary", "labels": ["benign", "harmful"]}},
        },
        "train": {"max_epochs": 1, "output_dir": str(tmp_path / "run"), "cache_dir": str(tmp_path / "cache")},
    }
    with pytest.raises(ValueError, match="leaving out topic 'c' leaves <dict> no validation post"):
        trained_holdout(as_recipe(recipe), TASK, "topic", tmp_path / "holdout", log=lambda _: None, progress=quiet)
    assert not (tmp_path / "holdout").exists()  # refused before any training


def test_command_prints_every_group_and_names_a_missing_field(demo_data, tmp_path, write_recipe, capsys):
    torch.manual_seed(0)
    path = str(write_recipe(one_epoch(demo_data, tmp_path)))
    assert main([path]) == 0
    assert sorted(p.name for p in (tmp_path / "run" / "without").iterdir()) == ["group", "weather"]  # the default
    out = capsys.readouterr().out
    assert "trained without each meta.topic in turn" in out
    assert "| topics held out | n | accuracy | macro_f1 | auroc | ece |" in out and "| 2 | 560 |" in out
    assert "| group | " in out and "| weather | " in out
    with pytest.raises(SystemExit) as exit_info:
        main([path, "--group-by", "region"])
    assert exit_info.value.code == 2
    assert "meta.region is missing" in capsys.readouterr().err
