"""The Lightning task's validation logging."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pytest
import torch

from faim.data.targets import TaskSpec
from faim.training.module import SCORES_NOT_SYNCED, PostTask, validation_scores


def test_validation_scores_over_every_process_are_logged_as_they_are_not_reduced_across_processes_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each process computes them over the posts of all, so each holds the same figures: reducing them again is work
    for nothing, and a mean over three processes of one float32 figure need not be that figure."""
    task = TaskSpec("harmful", "binary", ("benign", "harmful"))
    post_task = PostTask(torch.nn.Linear(1, 1), [task])
    target, prob = torch.tensor([0.0, 1.0, 1.0, 0.0]), torch.tensor([0.2, 0.9, 0.4, 0.6])
    post_task._outputs = {"harmful": [(target[:2], prob[:2]), (target[2:], prob[2:])]}
    logged: dict[str, tuple[Any, dict[str, Any]]] = {}
    monkeypatch.setattr(post_task, "log", lambda name, value, **options: logged.update({name: (value, options)}))
    post_task.on_validation_epoch_end()
    expected = validation_scores(task, target.numpy(), prob.numpy())
    assert (
        logged.keys() == {f"val/harmful/{name}" for name in expected} == {"val/harmful/auroc", "val/harmful/macro_f1"}
    )
    for name, value in expected.items():
        figure, options = logged[f"val/harmful/{name}"]
        assert figure == pytest.approx(value) and not options.get("sync_dist", False)
    assert np.isfinite(expected["auroc"])


@pytest.mark.parametrize(
    ("name", "silenced"), [("val/harmful/auroc", True), ("val/hate/macro_f1", True), ("val/loss", False)]
)
def test_lightning_s_advice_to_reduce_is_silenced_for_the_validation_scores_alone(name: str, silenced: bool) -> None:
    advice = (
        f"It is recommended to use `self.log({name!r}, ..., sync_dist=True)` when logging on epoch level in "
        "distributed setting to accumulate the metric across devices."
    )
    assert bool(re.match(SCORES_NOT_SYNCED, advice)) is silenced
