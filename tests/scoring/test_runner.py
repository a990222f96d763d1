"""Worker processes start with the allocator settings; settings the user made win."""

from __future__ import annotations

import os

import pytest

from faim.scoring.runner import WORKER_ENVIRONMENT, worker_environment


def test_worker_environment_is_set_inside_and_restored_after(monkeypatch: pytest.MonkeyPatch) -> None:
    first, second = list(WORKER_ENVIRONMENT)
    monkeypatch.delenv(first, raising=False)
    monkeypatch.setenv(second, "12345")
    with worker_environment():
        assert os.environ[first] == WORKER_ENVIRONMENT[first]
        assert os.environ[second] == "12345"
    assert first not in os.environ and os.environ[second] == "12345"
