"""Speed-up defaults follow the hardware; worker processes get the allocator settings, user settings win."""

from __future__ import annotations

import os

import pytest
import torch

from faim.scoring.engine import check_device, worker_environment
from faim.scoring.optimize import (
    WORKER_ENVIRONMENT,
    AutocastEncoder,
    ScoringOptions,
    bf16_is_fast,
    optimise_for_inference,
)


@pytest.mark.parametrize("native", [False, True])
def test_bf16_by_default_only_where_the_cpu_has_it(native: bool, tiny_model_dir, monkeypatch) -> None:
    import faim

    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: native)
    monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    assert bf16_is_fast("cpu") is native
    model = optimise_for_inference(faim.load(tiny_model_dir).model, ScoringOptions())
    text = model.encoders["text"]
    assert isinstance(text, AutocastEncoder) is native and (not native or text.bf16)
    assert model.encoders["image"].bf16 is native  # image encoders are wrapped for channels-last anyway


def test_worker_environment_is_set_inside_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = list(WORKER_ENVIRONMENT)
    monkeypatch.delenv(first, raising=False)
    monkeypatch.setenv(second, "12345")
    with worker_environment():
        assert os.environ[first] == WORKER_ENVIRONMENT[first]
        assert os.environ[second] == "12345"
    assert first not in os.environ and os.environ[second] == "12345"


def test_devices_are_checked_before_anything_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    check_device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="'cuda': no CUDA device"):
        check_device("cuda")
    with pytest.raises(ValueError, match="'meta': scoring runs on 'cpu' or 'cuda'"):
        check_device("meta")
    with pytest.raises(ValueError, match="'gpu0'"):
        check_device("gpu0")
