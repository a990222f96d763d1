"""Contract tests run over every built-in fusion: shapes, masks, missing elements, gradients, determinism."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import torch
from torch import Tensor, nn

import faim.fusion  # noqa: F401  (registers the built-in fusions)
from faim.registry import FUSIONS

INPUT_DIMS = {"text": 6, "image": 5, "comments": 4}
COUNTS = {"text": 1, "image": 2, "comments": 3}
BATCH = 4

CONFIGS: list[tuple[str, dict[str, Any]]] = [
    ("concat", {}),
    ("concat", {"dim": 8, "dropout": 0.1}),
    ("gated", {"dim": 8, "dropout": 0.1}),
    ("attention", {"dim": 8, "num_heads": 2, "num_layers": 2}),
    ("attention", {"dim": 8, "num_heads": 2, "max_elements": 0}),
    ("interaction", {"dim": 4}),
    ("interaction", {"dim": 4, "mode": "align"}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kwargs.items()) or 'default'}" for name, kwargs in CONFIGS]


def build(name: str, kwargs: dict[str, Any], seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return FUSIONS[name](INPUT_DIMS, **kwargs)


def make_mask(index: int, count: int) -> Tensor:
    """Row 0: every element; row 1: none; row 2: the first one for every other kind; row 3: the last one."""
    mask = torch.zeros(BATCH, count, dtype=torch.bool)
    if count:
        mask[0] = True
        mask[2, 0] = index % 2 == 0
        mask[3, -1] = True
    return mask


def make_elements(counts: dict[str, int] = COUNTS, seed: int = 1) -> dict[str, tuple[Tensor, Tensor]]:
    generator = torch.Generator().manual_seed(seed)
    return {
        kind: (torch.randn(BATCH, counts[kind], dim, generator=generator), make_mask(index, counts[kind]))
        for index, (kind, dim) in enumerate(sorted(INPUT_DIMS.items()))
    }


def refill_masked(elements: dict[str, tuple[Tensor, Tensor]], value: float | None) -> dict[str, tuple[Tensor, Tensor]]:
    """Copy ``elements`` with masked positions set to ``value`` (None: large random values)."""
    out = {}
    for kind, (embeddings, mask) in elements.items():
        filler = 100 * torch.randn_like(embeddings) if value is None else torch.full_like(embeddings, value)
        out[kind] = (torch.where(mask.unsqueeze(-1), embeddings, filler), mask)
    return out


def test_all_fusions_registered() -> None:
    assert {"concat", "gated", "attention", "interaction"} <= set(FUSIONS)


@pytest.mark.parametrize("name", ["concat", "gated", "attention", "interaction"])
def test_constructor_contract(name: str) -> None:
    parameters = list(inspect.signature(FUSIONS[name]).parameters.values())
    assert parameters[0].name == "input_dims"
    for parameter in parameters[1:]:
        assert parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        assert parameter.default is not inspect.Parameter.empty
    assert FUSIONS[name].__doc__


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
def test_output_shape_and_finite(name: str, kwargs: dict[str, Any]) -> None:
    fusion = build(name, kwargs).eval()
    output = fusion(make_elements())
    assert output.shape == (BATCH, fusion.output_dim)
    assert torch.isfinite(output).all()


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("empty", [["comments"], ["image", "comments"], ["text", "image", "comments"]])
def test_zero_elements_of_a_kind(name: str, kwargs: dict[str, Any], empty: list[str]) -> None:
    fusion = build(name, kwargs)
    counts = {kind: 0 if kind in empty else count for kind, count in COUNTS.items()}
    output = fusion(make_elements(counts))
    assert output.shape == (BATCH, fusion.output_dim)
    assert torch.isfinite(output).all()


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
@pytest.mark.parametrize("value", [None, float("nan"), float("inf")])
def test_masked_values_do_not_matter(name: str, kwargs: dict[str, Any], value: float | None) -> None:
    fusion = build(name, kwargs).eval()
    elements = make_elements()
    with torch.no_grad():
        assert torch.equal(fusion(elements), fusion(refill_masked(elements, value)))


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
def test_extra_padding_does_not_matter(name: str, kwargs: dict[str, Any]) -> None:
    fusion = build(name, kwargs).eval()
    elements = make_elements()
    padded = {
        kind: (
            torch.cat([embeddings, torch.randn(BATCH, 2, embeddings.shape[-1])], 1),
            torch.cat([mask, torch.zeros(BATCH, 2, dtype=torch.bool)], 1),
        )
        for kind, (embeddings, mask) in elements.items()
    }
    with torch.no_grad():
        torch.testing.assert_close(fusion(elements), fusion(padded))


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
def test_gradients_reach_every_parameter(name: str, kwargs: dict[str, Any]) -> None:
    fusion = build(name, kwargs).train()
    output = fusion(refill_masked(make_elements(), float("nan")))
    (output * torch.randn_like(output)).sum().backward()
    for parameter_name, parameter in fusion.named_parameters():
        assert parameter.grad is not None, parameter_name
        assert torch.isfinite(parameter.grad).all(), parameter_name
        assert parameter.grad.abs().sum() > 0, parameter_name


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
def test_eval_mode_is_deterministic_and_rows_are_independent(name: str, kwargs: dict[str, Any]) -> None:
    fusion = build(name, kwargs).eval()
    elements = make_elements()
    with torch.no_grad():
        first = fusion(elements)
        assert torch.equal(first, fusion(elements))
        for row in range(BATCH):
            single = {
                kind: (embeddings[row : row + 1], mask[row : row + 1]) for kind, (embeddings, mask) in elements.items()
            }
            torch.testing.assert_close(fusion(single)[0], first[row])


@pytest.mark.parametrize(("name", "kwargs"), CONFIGS, ids=IDS)
def test_state_dict_round_trip(name: str, kwargs: dict[str, Any]) -> None:
    original, rebuilt = build(name, kwargs, seed=0).eval(), build(name, kwargs, seed=1).eval()
    rebuilt.load_state_dict(original.state_dict())
    elements = make_elements()
    with torch.no_grad():
        assert torch.equal(original(elements), rebuilt(elements))


def test_attention_fast_path_matches_autograd_path() -> None:
    fusion = build("attention", {"dim": 8, "num_heads": 2, "num_layers": 2}).eval()
    elements = make_elements()
    with torch.no_grad():
        fast = fusion(elements)
    torch.testing.assert_close(fast, fusion(elements).detach())


def test_attention_beyond_max_elements_shares_last_position() -> None:
    fusion = build("attention", {"dim": 8, "num_heads": 2, "max_elements": 2}).eval()
    output = fusion(make_elements({"text": 1, "image": 2, "comments": 5}))
    assert output.shape == (BATCH, 8)
    assert torch.isfinite(output).all()


def test_attention_rejects_bad_heads() -> None:
    with pytest.raises(ValueError, match="num_heads"):
        FUSIONS["attention"](INPUT_DIMS, dim=10, num_heads=4)


def test_concat_output_dim_is_sum_of_inputs() -> None:
    assert FUSIONS["concat"](INPUT_DIMS).output_dim == sum(INPUT_DIMS.values())


def test_empty_input_dims_rejected() -> None:
    with pytest.raises(ValueError, match="at least one element kind"):
        FUSIONS["gated"]({})
