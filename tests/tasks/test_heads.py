"""Tests of the built-in task heads: shapes, losses with missing labels, weighting, probabilities, errors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import Tensor

from faim.components import component_spec
from faim.registry import HEADS
from faim.tasks import BinaryHead, Head, MulticlassHead, MultilabelHead

NAN = float("nan")
DIM, BATCH = 6, 5


def embedding(seed: int = 0) -> Tensor:
    return torch.randn(BATCH, DIM, generator=torch.Generator().manual_seed(seed))


def test_registered_with_task_types() -> None:
    assert HEADS["binary"] is BinaryHead and BinaryHead.task_type == "binary"
    assert HEADS["multiclass"] is MulticlassHead and MulticlassHead.task_type == "multiclass"
    assert HEADS["multilabel"] is MultilabelHead and MultilabelHead.task_type == "multilabel"


@pytest.mark.parametrize("hidden_dim", [0, 4])
@pytest.mark.parametrize(
    ("head", "shape"),
    [
        (lambda h: BinaryHead(DIM, hidden_dim=h, dropout=0.1), (BATCH,)),
        (lambda h: MulticlassHead(DIM, 3, hidden_dim=h, dropout=0.1), (BATCH, 3)),
        (lambda h: MultilabelHead(DIM, 4, hidden_dim=h, dropout=0.1), (BATCH, 4)),
    ],
    ids=["binary", "multiclass", "multilabel"],
)
def test_logit_shapes(head: Callable[[int], Head], shape: tuple[int, ...], hidden_dim: int) -> None:
    module = head(hidden_dim)
    assert module(embedding()).shape == shape
    assert len(module.net) == (4 if hidden_dim else 2)


def test_binary_loss_ignores_missing_labels() -> None:
    head = BinaryHead(DIM, pos_weight=3.0)
    logits = torch.randn(BATCH)
    target = torch.tensor([1.0, NAN, 0.0, 1.0, NAN])
    labelled = ~target.isnan()
    expected = F.binary_cross_entropy_with_logits(logits[labelled], target[labelled], pos_weight=torch.tensor(3.0))
    torch.testing.assert_close(head.loss(logits, target), expected)
    assert head.loss(logits, target) != BinaryHead(DIM).loss(logits, target)


def test_multiclass_loss_ignores_missing_labels() -> None:
    weights = [0.5, 2.0, 1.0]
    head = MulticlassHead(DIM, 3, class_weights=weights, label_smoothing=0.1)
    logits = torch.randn(BATCH, 3)
    target = torch.tensor([2, -100, 0, 1, -100])
    labelled = target != -100
    expected = F.cross_entropy(logits[labelled], target[labelled], weight=torch.tensor(weights), label_smoothing=0.1)
    torch.testing.assert_close(head.loss(logits, target), expected)


def test_class_weights_change_the_loss() -> None:
    logits = torch.randn(BATCH, 3)
    target = torch.tensor([2, 1, 0, 1, -100])
    plain = MulticlassHead(DIM, 3).loss(logits, target)
    torch.testing.assert_close(plain, F.cross_entropy(logits, target))
    assert MulticlassHead(DIM, 3, class_weights=[1.0, 5.0, 0.2]).loss(logits, target) != plain


def test_multilabel_loss_ignores_missing_labels() -> None:
    pos_weight = [1.0, 2.0, 0.5]
    head = MultilabelHead(DIM, 3, pos_weight=pos_weight)
    logits = torch.randn(BATCH, 3)
    target = torch.tensor([[1, 0, NAN], [NAN, NAN, NAN], [0, 1, 1], [NAN, 1, 0], [1, 1, 1]])
    labelled = ~target.isnan()
    expected = F.binary_cross_entropy_with_logits(
        logits[labelled], target[labelled], pos_weight=torch.tensor(pos_weight).expand(BATCH, 3)[labelled]
    )
    torch.testing.assert_close(head.loss(logits, target), expected)


@pytest.mark.parametrize(
    ("head", "target"),
    [
        (BinaryHead(DIM), torch.full((BATCH,), NAN)),
        (MulticlassHead(DIM, 3, class_weights=[1.0, 2.0, 3.0]), torch.full((BATCH,), -100)),
        (MultilabelHead(DIM, 2), torch.full((BATCH, 2), NAN)),
    ],
    ids=["binary", "multiclass", "multilabel"],
)
def test_unlabelled_batch_gives_connected_zero(head: Head, target: Tensor) -> None:
    x = embedding().requires_grad_()
    loss = head.loss(head(x), target)
    assert loss.item() == 0.0 and loss.grad_fn is not None
    loss.backward()
    assert x.grad is not None and torch.equal(x.grad, torch.zeros_like(x))


@pytest.mark.parametrize(
    ("head", "target"),
    [
        (BinaryHead(DIM, hidden_dim=4), torch.tensor([1.0, NAN, 0.0, NAN, 1.0])),
        (MulticlassHead(DIM, 3, hidden_dim=4), torch.tensor([0, -100, 2, 1, -100])),
        (MultilabelHead(DIM, 2, hidden_dim=4), torch.tensor([[1, NAN], [NAN, NAN], [0, 1], [1, 1], [NAN, 0]])),
    ],
    ids=["binary", "multiclass", "multilabel"],
)
def test_gradients_are_finite_with_missing_labels(head: Head, target: Tensor) -> None:
    head.loss(head(embedding()), target).backward()
    for name, parameter in head.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name
        assert parameter.grad.abs().sum() > 0, name


def test_weights_are_not_in_the_state_dict() -> None:
    head = MulticlassHead(DIM, 2, class_weights=[1.0, 3.0])
    assert set(head.state_dict()) == {"net.1.weight", "net.1.bias"}


def test_bad_class_weights_length() -> None:
    with pytest.raises(ValueError, match=r"class_weights has 2 values but num_classes is 3"):
        MulticlassHead(DIM, 3, class_weights=[1.0, 2.0])


def test_bad_pos_weight_length() -> None:
    with pytest.raises(ValueError, match=r"pos_weight has 3 values but num_labels is 2"):
        MultilabelHead(DIM, 2, pos_weight=[1.0, 2.0, 3.0])


def test_loss_weights_given_as_a_tuple_or_a_numpy_array_weigh_as_a_list_does() -> None:
    # scikit-learn's compute_class_weight gives an array, which the check of weights once took for one value
    logits, target = torch.randn(BATCH, 3), torch.randint(0, 3, (BATCH,))
    listed = MulticlassHead(DIM, 3, class_weights=[1.0, 5.0, 0.2]).loss(logits, target)
    for weights in ((1.0, 5.0, 0.2), np.array([1.0, 5.0, 0.2])):
        assert torch.equal(MulticlassHead(DIM, 3, class_weights=weights).loss(logits, target), listed)
    labels = torch.randint(0, 2, (BATCH, 3)).float()
    listed = MultilabelHead(DIM, 3, pos_weight=[1.0, 2.0, 0.5]).loss(logits, labels)
    assert torch.equal(MultilabelHead(DIM, 3, pos_weight=np.array([1.0, 2.0, 0.5])).loss(logits, labels), listed)
    with pytest.raises(ValueError, match=r"class_weights .* got \[ 1. -1.  1.\]"):
        MulticlassHead(DIM, 3, class_weights=np.array([1.0, -1.0, 1.0]))


@pytest.mark.parametrize(
    ("build", "refusal"),
    [
        (lambda: MulticlassHead(DIM, 3, class_weights=[1.0, -1.0, 1.0]), r"class_weights .* got \[1.0, -1.0, 1.0\]"),
        (lambda: MulticlassHead(DIM, 2, class_weights=[float("nan"), 1.0]), r"class_weights .* got \[nan, 1.0\]"),
        (lambda: MulticlassHead(DIM, 2, class_weights=[0.0, 0.0]), r"class_weights .* one of them positive"),
        (lambda: BinaryHead(DIM, pos_weight=float("nan")), r"pos_weight must be positive and finite, got nan"),
        (lambda: BinaryHead(DIM, pos_weight=float("inf")), r"pos_weight must be positive and finite, got inf"),
        (lambda: MultilabelHead(DIM, 2, pos_weight=[1.0, float("nan")]), r"pos_weight .* got \[1.0, nan\]"),
    ],
)
def test_loss_weights_that_are_negative_or_not_finite_are_refused(build: Callable[[], Head], refusal: str) -> None:
    # a negative class weight trained a model to a loss of -inf without a word, a NaN one stopped training saying
    # the head's loss overflows on large logits
    with pytest.raises(ValueError, match=refusal):
        build()


@pytest.mark.parametrize(
    "build",
    [
        lambda: MulticlassHead(DIM, 1),
        lambda: MultilabelHead(DIM, 0),
        lambda: BinaryHead(DIM, pos_weight=0.0),
        lambda: BinaryHead(DIM, dropout=1.0),
        lambda: BinaryHead(DIM, hidden_dim=-1),
        lambda: MulticlassHead(DIM, 2, label_smoothing=1.5),
    ],
)
def test_invalid_arguments(build: Callable[[], Head]) -> None:
    with pytest.raises(ValueError):
        build()


@pytest.mark.parametrize("hidden_dim", [0, 4])
def test_a_binary_heads_correction_is_the_identity_until_set_then_composes(hidden_dim: int) -> None:
    torch.manual_seed(0)
    head = BinaryHead(DIM, hidden_dim=hidden_dim)
    built = BinaryHead(DIM, hidden_dim=hidden_dim, correction=True)
    built.load_state_dict(head.state_dict(), strict=False)
    e = embedding()
    before = head(e).detach()
    assert torch.allclose(built(e), before)  # built corrected: scale 1, weights 0
    head.add_correction(2.0, [0.1] * DIM, 0.5)
    once = head(e).detach()
    assert torch.allclose(once, 2.0 * before + 0.1 * e.sum(1) + 0.5, atol=1e-5)
    head.add_correction(-1.0, [1.0] + [0.0] * (DIM - 1), 0.0)  # a second correction acts on the first's logits
    assert torch.allclose(head(e), -once + e[:, 0], atol=1e-5)
    assert component_spec("head", head)["correction"] is True
    rebuilt = BinaryHead(DIM, hidden_dim=hidden_dim, correction=True)
    rebuilt.load_state_dict(head.state_dict())  # what loading a saved corrected model does
    assert torch.allclose(rebuilt(e), head(e))
    with pytest.raises(ValueError, match=f"reading {DIM} dimensions"):
        head.add_correction(1.0, [0.0] * (DIM + 1), 0.0)
