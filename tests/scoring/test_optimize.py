"""Speed-up defaults follow the hardware; worker processes get the allocator settings, user settings win."""

from __future__ import annotations

import os

import pytest
import torch

from faim.scoring.engine import worker_environment
from faim.scoring.optimize import WORKER_ENVIRONMENT, ScoringOptions, bf16_is_fast


def test_bf16_default_follows_native_bf16_support(monkeypatch: pytest.MonkeyPatch) -> None:
    for native in (False, True):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda native=native: native)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
        assert bf16_is_fast() is native
        assert ScoringOptions().bf16 is native
    assert ScoringOptions.exact().bf16 is False


def test_worker_environment_is_set_inside_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = list(WORKER_ENVIRONMENT)
    monkeypatch.delenv(first, raising=False)
    monkeypatch.setenv(second, "12345")
    with worker_environment():
        assert os.environ[first] == WORKER_ENVIRONMENT[first]
        assert os.environ[second] == "12345"
    assert first not in os.environ and os.environ[second] == "12345"
