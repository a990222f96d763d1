"""``faim demo``: its arguments checked before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from faim.cli.main import main


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        (["--recipe", "no_such_recipe"], "faim demo: error: no_such_recipe: no such file, nor a shipped recipe"),
        (["--set", "train.max_epochs"], "faim demo: error: --set: train.max_epochs: expected KEY.PATH=VALUE"),
        (["--set", "train.max_epochs=0"], "train.max_epochs: expected at least 1, got 0"),
    ],
)
def test_a_recipe_or_override_it_cannot_train_is_refused_before_posts_are_generated(
    arguments: list[str], error: str, tmp_path: Path, capsys
) -> None:
    assert main(["demo", "--out", str(tmp_path / "demo"), *arguments]) == 2
    assert error in capsys.readouterr().err
    assert not (tmp_path / "demo").exists()
