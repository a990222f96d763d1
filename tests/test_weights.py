"""Where an encoder's weights come from: a local file or folder, given as a string or a ``Path``, or a hub id."""

from __future__ import annotations

from pathlib import Path

import pytest

from faim.weights import resolve_weights


def test_a_folder_given_as_a_path_or_its_string_resolves_to_it(tmp_path: Path) -> None:
    assert resolve_weights(tmp_path) == tmp_path and resolve_weights(str(tmp_path)) == tmp_path


def test_a_path_that_does_not_exist_is_named_and_not_taken_for_a_hub_id(tmp_path: Path) -> None:
    assert resolve_weights("org/model") == "org/model"
    with pytest.raises(FileNotFoundError, match=r"^weights: local path 'org/model' does not exist$"):
        resolve_weights(Path("org/model"))
