"""The Lightning task's validation logging."""

from __future__ import annotations

import csv
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from conftest import tiny_recipe

from faim.api import train_recipe as train
from faim.data.targets import TaskSpec
from faim.eval.metrics import binary_metrics, multiclass_metrics
from faim.training.module import SCORES_NOT_SYNCED, PostTask, validation_scores


def test_validation_scores_over_every_process_are_logged_as_they_are_not_reduced_across_processes_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each process computes them over the posts of all, so each holds the same figures: reducing them again is work
    for nothing, and a mean over three processes of one float32 figure need not be that figure."""
    task = TaskSpec("harmful", "binary", ("benign", "harmful"))
    post_task = PostTask(torch.nn.Linear(1, 1), [task])
    target, logits = torch.tensor([0.0, 1.0, 1.0, 0.0]), torch.tensor([-1.4, 2.2, -0.4, 0.4])
    post_task._outputs = {"harmful": [(target[:2], logits[:2]), (target[2:], logits[2:])]}
    logged: dict[str, tuple[Any, dict[str, Any]]] = {}
    monkeypatch.setattr(post_task, "log", lambda name, value, **options: logged.update({name: (value, options)}))
    post_task.on_validation_epoch_end()
    expected = validation_scores(task, target.numpy(), torch.sigmoid(logits).numpy())
    assert (
        logged.keys() == {f"val/harmful/{name}" for name in expected} == {"val/harmful/auroc", "val/harmful/macro_f1"}
    )
    for name, value in expected.items():
        figure, options = logged[f"val/harmful/{name}"]
        assert figure == pytest.approx(value) and not options.get("sync_dist", False)
    assert np.isfinite(expected["auroc"])


def test_validation_macro_f1_counts_every_class_as_the_evaluation_s_does_one_no_post_is_of_too() -> None:
    """A validation split without posts of a class (where AUROC is undefined and ``val/TASK/macro_f1`` is the figure to
    monitor) still has that class's F1 in the mean, at 0, as ``faim eval``'s macro-F1 of the same decisions."""
    topic = TaskSpec("topic", "multiclass", ("a", "b", "c"))
    target = np.array([0, 0, 1, 1, 0, 1])
    a, b = [0.7, 0.2, 0.1], [0.2, 0.7, 0.1]
    prob = np.array([a, a, b, [0.5, 0.4, 0.1], a, b])  # the fourth post, of b, decided to be a
    evaluated = multiclass_metrics(target, prob, topic.labels)["macro_f1"]
    assert validation_scores(topic, target, prob)["macro_f1"] == pytest.approx(evaluated)
    assert evaluated == pytest.approx((6 / 7 + 0.8 + 0) / 3)  # class c: no post of it, none decided to be
    harmful = TaskSpec("harmful", "binary", ("benign", "harmful"))
    target, prob = np.zeros(6), np.full(6, 0.2)
    evaluated = binary_metrics(target, prob, threshold=0.5)["macro_f1"]
    assert validation_scores(harmful, target, prob)["macro_f1"] == pytest.approx(evaluated) == 0.5


@pytest.mark.parametrize(
    ("task", "target", "prob"),
    [
        (TaskSpec("harmful", "binary", ("benign", "harmful")), np.zeros(4), np.full(4, 0.2)),
        (TaskSpec("topic", "multiclass", ("a", "b", "c")), np.array([0, 1, 0, 1]), np.full((4, 3), 1 / 3)),
        (TaskSpec("tags", "multilabel", ("x", "y")), np.array([[1.0, 0.0], [0.0, 0.0]]), np.full((2, 2), 0.5)),
    ],
)
def test_an_undefined_validation_auroc_is_nan_without_scikit_learn_s_warning(
    task: TaskSpec, target: np.ndarray, prob: np.ndarray
) -> None:
    """A class no validation post is of leaves the AUROC undefined: logged NaN, which training warns of once before
    it trains (``faim.training.run.warn_undefined_auroc``), not with scikit-learn's 'Only one class is present in
    y_true' each epoch, which a task of three classes two of which are present is not."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(validation_scores(task, target, prob)["auroc"])


def test_validation_auroc_of_a_multiclass_task_of_two_classes_is_the_evaluation_s() -> None:
    """A multiclass head may have two classes; its AUROC is defined wherever both are among the posts, and a
    ``train.monitor`` of it would end training after its first epoch were it logged NaN."""
    stance = TaskSpec("stance", "multiclass", ("against", "for"))
    target = np.array([0, 1, 1, 0, 1])
    prob = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4], [0.4, 0.6], [0.1, 0.9]])
    evaluated = multiclass_metrics(target, prob, stance.labels)["macro_auroc"]
    assert validation_scores(stance, target, prob)["auroc"] == pytest.approx(evaluated) == pytest.approx(5 / 6)
    topic = TaskSpec("topic", "multiclass", ("a", "b", "c"))
    target, prob = (
        np.array([0, 1, 2, 2, 1]),
        np.array([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]] + [[0.3] * 3] * 2),
    )
    evaluated = multiclass_metrics(target, prob / prob.sum(1, keepdims=True), topic.labels)["macro_auroc"]
    assert validation_scores(topic, target, prob / prob.sum(1, keepdims=True))["auroc"] == pytest.approx(evaluated)


@pytest.mark.parametrize(
    ("name", "silenced"), [("val/harmful/auroc", True), ("val/hate/macro_f1", True), ("val/loss", False)]
)
def test_lightning_s_advice_to_reduce_is_silenced_for_the_validation_scores_alone(name: str, silenced: bool) -> None:
    advice = (
        f"It is recommended to use `self.log({name!r}, ..., sync_dist=True)` when logging on epoch level in "
        "distributed setting to accumulate the metric across devices."
    )
    assert bool(re.match(SCORES_NOT_SYNCED, advice)) is silenced


def test_a_monitored_training_loss_is_the_epoch_s_not_its_last_batch_s(demo_data, tmp_path: Path) -> None:
    """Early stopping and the best checkpoint read ``train/loss`` once an epoch: it is the mean over the epoch's
    posts (logged as ``train/loss``, each batch's as ``train/loss_step``), not the loss of its last batch."""
    recipe = tiny_recipe(demo_data, tmp_path / "run", max_epochs=2, monitor="train/loss", cache_embeddings=False)
    train(recipe)
    with (tmp_path / "run" / "logs" / "version_0" / "metrics.csv").open(encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    steps = [
        [float(row["train/loss_step"]) for row in rows if row.get("train/loss_step") and row["epoch"] == epoch]
        for epoch in ("0", "1")
    ]
    epochs = [float(row["train/loss"]) for row in rows if row.get("train/loss")]
    sizes = [32] * 12 + [16]  # 400 training posts
    assert epochs == [pytest.approx(np.dot(losses, sizes) / 400, rel=1e-5) for losses in steps]
    state = torch.load(tmp_path / "run" / "checkpoints" / "version_0" / "last.ckpt", weights_only=False)
    kept = "ModelCheckpoint{'monitor': 'train/loss'"
    (best,) = [value["best_model_score"] for key, value in state["callbacks"].items() if key.startswith(kept)]
    assert float(best) == pytest.approx(min(epochs), rel=1e-5)


def test_validation_scores_are_of_the_probabilities_scoring_gives_whatever_link_function_a_head_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Scoring, pooling and calibration turn a task's logits into probabilities by its type (a binary task's sigmoid):
    the validation scores logged as training runs are of those too, so that a head with a link function of its own is
    not measured on one scale as it trains and scored on another."""
    from sklearn.metrics import roc_auc_score

    from faim import Detector, WholePostModel
    from faim.data.post import Post
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion import ConcatFusion
    from faim.tasks import BinaryHead

    class FlippedHead(BinaryHead):
        def probabilities(self, logits: torch.Tensor) -> torch.Tensor:
            return 1 - torch.sigmoid(logits)

    torch.manual_seed(0)
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), {"hate": FlippedHead(8)})
    tasks = [TaskSpec("hate", "binary", ("no", "yes"))]
    posts = [Post(id=str(i), text=f"post {i} " * (1 + i % 5), labels={"hate": i % 2}) for i in range(16)]
    detector = Detector(model, tasks)
    scored = roc_auc_score([i % 2 for i in range(16)], [row["hate"] for row in detector.score(posts)])
    task = PostTask(model, tasks)
    logged: dict[str, Any] = {}
    monkeypatch.setattr(task, "log", lambda name, value, **options: logged.update({name: value}))
    task.on_validation_epoch_start()
    with torch.no_grad():  # as Lightning validates, the model in eval mode
        model.eval()
        task.validation_step(detector.collator(with_targets=True)(posts), 0)
    task.on_validation_epoch_end()
    assert scored != pytest.approx(0.5)
    assert logged["val/hate/auroc"] == pytest.approx(scored)


def test_a_head_whose_loss_reads_unlabelled_targets_is_named_at_the_first_batch_holding_one() -> None:
    from faim import Detector, WholePostModel
    from faim.data.post import Post
    from faim.encoders.tiny_text import TinyTextEncoder
    from faim.fusion import ConcatFusion
    from faim.tasks import BinaryHead

    class EveryTargetHead(BinaryHead):
        def loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.binary_cross_entropy_with_logits(logits, target)  # NaN where unlabelled

    heads = {"hate": BinaryHead(8), "spam": EveryTargetHead(8)}
    model = WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), heads)
    tasks = [TaskSpec("hate", "binary", ("no", "yes")), TaskSpec("spam", "binary", ("no", "yes"))]
    collate = Detector(model, tasks).collator(with_targets=True)
    task = PostTask(model, tasks)
    labelled = collate([Post(id=str(i), text=f"post {i}", labels={"hate": 1, "spam": i % 2}) for i in range(2)])
    assert torch.isfinite(task.losses(labelled)[0])
    partly = collate(
        [Post(id="1", text="a", labels={"hate": 1}), Post(id="2", text="b", labels={"hate": 0, "spam": 1})]
    )
    message = (
        r"^head 'spam' \(EveryTargetHead\) gave a loss of nan on finite logits for a batch of 2 posts, 1 of them "
        r"unlabelled for it; a head's loss skips unlabelled targets \(NaN for a binary or multilabel task, -100 for "
        r"a multiclass one\), as faim.tasks.base.labelled_mean does$"
    )
    with pytest.raises(ValueError, match=message):
        task.losses(partly)

    class OverflowingHead(BinaryHead):
        def loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            return -torch.log(torch.sigmoid(logits - 1e4)).mean()  # the log of a sigmoid that underflows to 0

    heads = {"hate": BinaryHead(8), "spam": OverflowingHead(8)}
    task = PostTask(WholePostModel({"text": TinyTextEncoder(dim=8)}, ConcatFusion({"text": 8}), heads), tasks)
    message = (
        r"^head 'spam' \(OverflowingHead\) gave a loss of inf on finite logits for a batch of 2 posts, every one "
        r"labelled for it: a loss computed from probabilities overflows on large logits"
    )
    with pytest.raises(ValueError, match=message):
        task.losses(labelled)


def test_validation_scores_that_are_not_finite_say_that_training_diverged_and_what_to_lower(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A learning rate too high for the model carries NaN into every weight; the first validation after it names the
    task, the epoch and the learning rates, not a check of the scores deep in calibration."""
    task = TaskSpec("harmful", "binary", ("benign", "harmful"))
    post_task = PostTask(torch.nn.Linear(1, 1), [task], lr=1e6, encoder_lr=1e-5)
    target, logits = torch.tensor([0.0, 1.0, 1.0]), torch.tensor([float("nan"), 2.2, float("inf")])
    post_task._outputs = {"harmful": [(target, logits)]}
    monkeypatch.setattr(post_task, "log", lambda *args, **options: None)
    message = (
        r"^epoch 0: the model's scores for task 'harmful' are not finite \(nan or inf\) on 2 of the 3 validation "
        r"posts: training diverged; train anew with a lower train.lr \(now 1000000.0\) or train.encoder_lr \(now "
        r"1e-05\)$"
    )
    with pytest.raises(ValueError, match=message):
        post_task.on_validation_epoch_end()
