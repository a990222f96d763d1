"""``faim recipe list``'s line for a component: the arguments a recipe sets and the first paragraph of the class's own
docstring."""

from __future__ import annotations

from torch import nn

from faim.cli.recipe_cmd import describe
from faim.fusion import ConcatFusion


def test_a_component_is_described_by_its_own_docstring_never_by_one_it_inherits() -> None:
    class Sum(nn.Module):
        def __init__(self, input_dims: dict[str, int], dim: int = 16) -> None:
            super().__init__()

    assert describe("fusion", Sum) == "(dim=16)"  # not nn.Module's "Base class for all neural network modules."
    assert describe("fusion", ConcatFusion) == "(dim=None, dropout=0.0)  " + ConcatFusion.__doc__.splitlines()[0]


def test_a_component_is_described_by_its_docstrings_first_paragraph_whole_on_one_line() -> None:
    class Wrapped(nn.Module):
        """A summary written over
        two lines.

        Details.
        """

        def __init__(self, input_dims: dict[str, int]) -> None:
            super().__init__()

    assert describe("fusion", Wrapped) == "()  A summary written over two lines."
