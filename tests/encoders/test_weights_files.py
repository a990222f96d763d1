"""Reading an image backbone's weights from a local file: a file holding anything but a state dict is refused
naming what it holds."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from faim.encoders.weights_files import read_state


@pytest.mark.parametrize(("held", "named"), [(3, "an int"), ([1.0], "a list")])
def test_a_weights_file_holding_no_state_dict_is_refused_naming_what_it_holds(
    held: object, named: str, tmp_path: Path
) -> None:
    torch.save(held, tmp_path / "weights.pt")
    with pytest.raises(ValueError, match=rf"^backbone: .*weights\.pt holds {named}, not a state dict$"):
        read_state(tmp_path / "weights.pt", "backbone")
